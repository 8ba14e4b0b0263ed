"""The benches' own small labeller for the real-code corpus: where a file of a repository sits
in the DataModel and which names its project uses, read by this module (not by luaguard).

The measures of ``bench/real_code.py`` (typo mutants "in the DataModel"),
``bench/agent_inventions.py`` (server scripts, names nothing in the project has) and
``bench/fix_safety.py`` must give the same cases whatever luaguard's resolver or project
indexer does on the branch being measured, so they read the corpus with this small reader:

* **Rojo project files** (rojo.space, *Project format*; *Sync details*): every
  ``*.project.json`` of the repository (outside ``node_modules`` and Wally's ``_Index``)
  whose ``tree`` is a ``DataModel``.  A node's ``$path`` naming a folder maps the folder to
  the node; inside it ``init.server.lua(u)`` / ``init.client.lua(u)`` / ``init.lua(u)`` make
  the folder itself a ``Script`` / ``LocalScript`` / ``ModuleScript``, a sub-folder is a
  child of the folder's name, ``X.server.lua(u)`` a ``Script`` named ``X``,
  ``X.client.lua(u)`` a ``LocalScript``, any other ``X.lua(u)`` a ``ModuleScript``.  A
  ``$path`` naming a ``.lua(u)`` file maps that file to the node; one naming another
  ``*.project.json`` maps that project's tree at the node.  (``.meta.json``, ``.model.json``
  and place files are not read: they add no script.)
* a file is **in the DataModel** when at least one such project maps it (see
  :meth:`Labels.in_datamodel`); the typo-mutant figures "in the DataModel" use this;
* **names the project has**: every text file of the repository (Luau, JSON, TOML, XML
  models and places, Markdown), lower-cased, so an invented name can be checked to occur
  nowhere - nothing in the project creates, maps or reads it;
* **words**: the capitalised words of the project's Luau identifiers and strings
  (``CoinService`` -> ``Coin``, ``Service``), from which invented names are built.

Nothing here imports luaguard.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

#: file name suffix -> (script class); the longest matching suffix wins
SCRIPT_SUFFIXES = ((".server.luau", "Script"), (".server.lua", "Script"), (".client.luau", "LocalScript"),
                   (".client.lua", "LocalScript"), (".luau", "ModuleScript"), (".lua", "ModuleScript"))
INIT_NAMES = tuple(f"init{suffix}" for suffix, _ in SCRIPT_SUFFIXES)
SKIP_DIRS = {".git", "node_modules", "_Index"}
TEXT_SUFFIXES = (".lua", ".luau", ".json", ".toml", ".rbxmx", ".rbxlx", ".model.json", ".md", ".txt", ".yaml", ".yml")
MAX_TEXT_BYTES = 20_000_000

_GET_SERVICE = re.compile(r"""GetService\(\s*["'](\w+)["']\s*\)""")
_ALIAS = re.compile(r"""\blocal\s+([A-Za-z_]\w*)\s*=\s*game\s*:\s*GetService\(\s*["'](\w+)["']\s*\)""")
_WORD = re.compile(r"[A-Z][a-z]{2,}")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def script_name_class(filename: str) -> tuple[str, str] | None:
    """``(instance name, class)`` Rojo gives a script file, or ``None`` for other files."""
    for suffix, cls in SCRIPT_SUFFIXES:
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)], cls
    return None


@dataclass(frozen=True)
class Mapped:
    """One place a file has in a DataModel: the project file that maps it, the instance
    names from the service down (``("ServerScriptService", "Server", "Main")``), its class."""

    project: Path
    path: tuple[str, ...]
    class_name: str

    @property
    def service(self) -> str:
        return self.path[0] if self.path else ""


@dataclass
class Labels:
    """What this module reads from one repository (see the module docstring)."""

    root: Path
    files: dict[Path, list[Mapped]] = field(default_factory=lambda: defaultdict(list))
    #: instance path -> names of its children known from the project files and mapped folders
    children: dict[tuple[str, ...], set[str]] = field(default_factory=lambda: defaultdict(set))
    projects: list[Path] = field(default_factory=list)
    text_lower: str = ""
    words: Counter = field(default_factory=Counter)
    services: Counter = field(default_factory=Counter)
    #: (service, child) pairs the code reads with ``GetService("S"):WaitForChild("X")``,
    #: ``S:WaitForChild("X")`` / ``S.X`` (``S`` a local bound to ``GetService``) or ``game.S.X``
    code_children: Counter = field(default_factory=Counter)

    def in_datamodel(self, path: Path) -> bool:
        """Whether a Rojo project file of the repository maps ``path`` into a DataModel."""
        return bool(self.files.get(Path(os.path.abspath(path))))

    def mapped(self, path: Path) -> list[Mapped]:
        return self.files.get(Path(os.path.abspath(path)), [])

    def occurs(self, name: str) -> bool:
        """Whether ``name`` occurs anywhere in the repository's text (any case)."""
        return name.lower() in self.text_lower

    def known_children(self, parent: tuple[str, ...]) -> set[str]:
        """Children of ``parent`` the project files map or the code reads (one level; names
        that are members of some class in Roblox's API dump are left out of what the code
        reads: ``Players.LocalPlayer`` is no child)."""
        out = set(self.children.get(parent, ()))
        if len(parent) == 1:
            members = api_member_names()
            out.update(c for (s, c) in self.code_children if s == parent[0] and c not in members)
        return out


_API: dict[str, frozenset] = {}
#: Roblox's API dump (``../shared/roblox/Full-API-Dump.json`` beside the repository)
API_DUMP = Path(__file__).resolve().parent.parent.parent / "shared" / "roblox" / "Full-API-Dump.json"


def _api() -> dict[str, frozenset]:
    if not _API:
        try:
            dump = json.loads(API_DUMP.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            dump = {"Classes": []}
        classes = dump.get("Classes") or []
        _API["members"] = frozenset(m.get("Name", "") for c in classes for m in c.get("Members") or ())
        _API["services"] = frozenset(c.get("Name", "") for c in classes if "Service" in (c.get("Tags") or ()))
        _API["classes"] = frozenset(c.get("Name", "") for c in classes)
    return _API


def api_member_names() -> frozenset:
    """Every member name of every class in Roblox's API dump (empty when the dump is absent)."""
    return _api()["members"]


def api_service_names() -> frozenset:
    """The service classes of Roblox's API dump (tagged ``Service``)."""
    return _api()["services"]


def api_class_names() -> frozenset:
    return _api()["classes"]


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_labels(root: Path) -> Labels:
    """Read one repository (see the module docstring)."""
    root = Path(os.path.abspath(root))
    labels = Labels(root)
    texts: list[str] = []
    luau: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if name.endswith(".project.json"):
                labels.projects.append(p)
            if name.endswith(TEXT_SUFFIXES):
                try:
                    if p.stat().st_size > MAX_TEXT_BYTES:
                        continue
                    text = p.read_bytes().decode("utf-8", "replace")
                except OSError:
                    continue
                texts.append(text)
                if name.endswith((".lua", ".luau")):
                    luau.append(text)
    labels.text_lower = "\n".join(texts).lower()
    for text in luau:
        for ident in _IDENT.findall(text):
            labels.words.update(_WORD.findall(ident))
        labels.services.update(_GET_SERVICE.findall(text))
        aliases = {m.group(1): m.group(2) for m in _ALIAS.finditer(text)}
        for m in re.finditer(r"""GetService\(\s*["'](\w+)["']\s*\)\s*:\s*(?:WaitForChild|FindFirstChild)\(\s*["'](\w+)["']""", text):
            labels.code_children[(m.group(1), m.group(2))] += 1
        for m in re.finditer(r"""\bgame\s*\.\s*(\w+)\s*\.\s*(\w+)""", text):
            labels.code_children[(m.group(1), m.group(2))] += 1
        for alias, service in aliases.items():
            for m in re.finditer(rf"""\b{re.escape(alias)}\s*(?::\s*(?:WaitForChild|FindFirstChild)\(\s*["'](\w+)["']|\.\s*([A-Za-z_]\w*))""", text):
                labels.code_children[(service, m.group(1) or m.group(2))] += 1
    for project in labels.projects:
        data = _read_json(project)
        tree = data.get("tree") if data else None
        if isinstance(tree, dict) and tree.get("$className") == "DataModel":
            _walk(labels, project, tree, (), project.parent, 0)
    return labels


def _record(labels: Labels, project: Path, file: Path, path: tuple[str, ...], cls: str) -> None:
    labels.files[Path(os.path.abspath(file))].append(Mapped(project, path, cls))
    if len(path) > 1:
        labels.children[path[:-1]].add(path[-1])


def _walk(labels: Labels, project: Path, node: dict, path: tuple[str, ...], base: Path, depth: int) -> None:
    if depth > 40:
        return
    target = node.get("$path")
    if isinstance(target, dict):  # {"optional": "path"}
        target = target.get("optional")
    if isinstance(target, str) and path:
        p = base / target
        if p.is_dir():
            _map_dir(labels, project, p, path, 0)
        elif p.is_file():
            if p.name.endswith(".project.json"):
                sub = _read_json(p)
                tree = sub.get("tree") if sub else None
                if isinstance(tree, dict):
                    _walk(labels, project, tree, path, p.parent, depth + 1)
            else:
                got = script_name_class(p.name)
                if got is not None:
                    _record(labels, project, p, path, got[1])
    for key, child in node.items():
        if key.startswith("$") or not isinstance(child, dict):
            continue
        labels.children[path].add(key)
        _walk(labels, project, child, path + (key,), base, depth + 1)


def _map_dir(labels: Labels, project: Path, d: Path, path: tuple[str, ...], depth: int) -> None:
    if depth > 40:
        return
    try:
        entries = sorted(os.scandir(d), key=lambda e: e.name)
    except OSError:
        return
    names = {e.name for e in entries}
    init = next((n for n in INIT_NAMES if n in names), None)
    if init is not None:
        _record(labels, project, d / init, path, script_name_class(init)[1])
    for e in entries:
        if e.name in SKIP_DIRS or e.name.startswith("."):
            continue
        if e.is_dir(follow_symlinks=False):
            labels.children[path].add(e.name)
            _map_dir(labels, project, Path(e.path), path + (e.name,), depth + 1)
        elif e.is_file(follow_symlinks=False) and e.name not in INIT_NAMES:
            got = script_name_class(e.name)
            if got is not None:
                _record(labels, project, Path(e.path), path + (got[0],), got[1])
            elif e.name.endswith((".model.json", ".rbxmx", ".rbxm", ".txt", ".csv", ".json")) and not e.name.endswith(
                    (".meta.json", ".project.json")):
                stem = e.name.split(".")[0]
                if stem:
                    labels.children[path].add(stem)
