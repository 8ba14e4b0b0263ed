"""The project index: the instance tree of a Rojo project plus the file <-> instance maps.

:func:`load_project` finds the project description (a ``*.project.json`` or a
``sourcemap.json``), builds the tree (:mod:`.rojo` / :mod:`.sourcemap`) and returns a
:class:`ProjectIndex`.  The LSP keeps the index alive and calls
:meth:`ProjectIndex.apply_file_changes` as files change; only the affected directory
entries are re-snapshotted (a change to a project file rebuilds everything).

Run-time instances the project files do not show are modelled as follows (see also the
open-node rules in :mod:`.rojo`):

* Services the project does not mention exist at run time: :meth:`ProjectIndex.service`
  returns a lazily created **open** node for them (not added to ``datamodel.children``).
* The engine creates ``Workspace.Terrain`` and ``Workspace.Camera`` and
  ``StarterPlayer.StarterPlayerScripts``/``StarterCharacterScripts``: these are added
  (open, reason :data:`OPEN_ENGINE`) when the project's service node lacks them.
* :meth:`ProjectIndex.local_player` synthesizes the client's ``Player`` with
  ``PlayerGui``/``PlayerScripts``/``Backpack`` mirroring ``StarterGui``/
  ``StarterPlayer.StarterPlayerScripts``/``StarterPack`` (copied subtrees; a mirror is
  open when its source is) and the engine's default player scripts (``PlayerModule``...).
* Library projects (root not a ``DataModel``) get a synthesized open ``DataModel``; the
  library root's parent is unknown (``root.parent is None``).
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .api import RobloxApi, load_api
from .rojo import (
    OPEN_ENGINE,
    OPEN_UNSERVED_SERVICE,
    IndexProblem,
    ProjectFileError,
    RojoBuilder,
    _DEFAULT_PROJECT_NAMES,
    _INIT_FILE_NAMES,
    default_rule,
)
from .sourcemap import SCRIPTS_ONLY_REASON, read_sourcemap
from .tree import Instance, is_identifier

__all__ = [
    "IndexProblem",
    "ProjectFileError",
    "ProjectIndex",
    "load_project",
    "format_tree",
    "to_json",
    "SCRIPTS_ONLY_REASON",
]

NO_PROJECT_REASON = "no project file: the instance tree is unknown"
LIBRARY_DATAMODEL_REASON = "library project: the place this library is used in is unknown"

# Engine-created children of services: (service class, child name, child class).
_ENGINE_CHILDREN: tuple[tuple[str, str, str], ...] = (
    ("Workspace", "Terrain", "Terrain"),
    ("Workspace", "Camera", "Camera"),
    ("StarterPlayer", "StarterPlayerScripts", "StarterPlayerScripts"),
    ("StarterPlayer", "StarterCharacterScripts", "StarterCharacterScripts"),
)
# Scripts the engine puts into every PlayerScripts unless the game overrides them.
_DEFAULT_PLAYER_SCRIPTS: tuple[tuple[str, str], ...] = (
    ("PlayerModule", "ModuleScript"),
    ("PlayerScriptsLoader", "LocalScript"),
    ("RbxCharacterSounds", "LocalScript"),
)
_DIR_SPECIAL = _INIT_FILE_NAMES | frozenset(_DEFAULT_PROJECT_NAMES) | {"init.meta.json", "init.meta.jsonc"}


def _add_engine_children(node: Instance) -> None:
    for svc, child, cls in _ENGINE_CHILDREN:
        if node.class_name == svc and node.child(child) is None:
            node.add_child(Instance(child, cls, open_reason=OPEN_ENGINE))


@dataclass
class ProjectIndex:
    """The indexed project.

    ``root_dir`` is absolute; ``project_file`` the project/sourcemap file used (``None``
    when none was found); ``kind`` is ``"rojo" | "sourcemap" | "none"``; ``root`` the tree's
    root (the ``DataModel`` for places, the library's root instance otherwise);
    ``datamodel`` the ``DataModel`` (``root`` for places, a synthesized open one otherwise);
    ``file_instances`` maps root-relative POSIX file paths to the instances they define
    (scripts, ``.meta.json``/``.model.json``/project files ...; one file can define several
    instances when the same ``$path`` is used twice); ``problems`` lists what went wrong;
    ``scripts_only`` is True for a sourcemap made without ``--include-non-scripts``.
    """

    root_dir: Path
    project_file: Path | None
    kind: str
    root: Instance
    datamodel: Instance
    file_instances: dict[str, list[Instance]]
    problems: list[IndexProblem]
    api: RobloxApi
    scripts_only: bool = False
    _builder: RojoBuilder | None = field(default=None, repr=False)
    _lazy_services: dict[str, Instance] = field(default_factory=dict, repr=False)
    _local_player: Instance | None = field(default=None, repr=False)
    _mapped_dirs: frozenset[str] | None = field(default=None, repr=False)
    #: bumped each time the index changes (files applied, rebuilt): what is derived from
    #: the index is valid for one generation (see :mod:`luaguard.analysis.snapshot`)
    generation: int = 0
    #: the snapshot of this index alone (:func:`luaguard.analysis.snapshot.snapshot_of`)
    _snapshot: Any = field(default=None, repr=False)

    # --- files ------------------------------------------------------------------------------------
    def _rel(self, path: str | Path) -> str:
        text = os.fspath(path).replace("\\", "/")
        root = os.fspath(self.root_dir).replace("\\", "/").rstrip("/")
        if text.startswith("/") or re.match(r"^[A-Za-z]:/", text):
            norm = posixpath.normpath(text)
            if norm == root:
                return ""
            if norm.startswith(root + "/"):
                return norm[len(root) + 1:]
            real_root = os.path.realpath(root)
            if norm.startswith(real_root + "/"):
                return norm[len(real_root) + 1:]
            real = os.path.realpath(norm)
            if real.startswith(real_root + "/"):
                return real[len(real_root) + 1:]
            return norm
        rel = posixpath.normpath(text)
        return "" if rel == "." else rel

    def instances_for_file(self, path: str | Path) -> list[Instance]:
        """Instances defined by the file at ``path`` (absolute or root-relative, ``/`` or ``\\``)."""
        return list(self.file_instances.get(self._rel(path), ()))

    def outside_datamodel(self, path: str | Path) -> bool:
        """Is the file at ``path`` (absolute or root-relative) inside the project's root
        but outside its instance tree (not mapped, not in a synced directory: see
        :meth:`maps_path`), where the linter reports Roblox API findings as warnings and the
        guard leaves service names free?  False without a project file or sourcemap and for
        paths outside the root."""
        if self.kind == "none":
            return False
        rel = self._rel(path)
        if rel.startswith("/") or re.match(r"^[A-Za-z]:/", rel) or rel.startswith("../") or rel == "..":
            return False
        return not self.instances_for_file(rel) and not self.maps_path(rel)

    def maps_path(self, path: str | Path) -> bool:
        """Does the project put the file at ``path`` into its instance tree - a file it
        maps now, or a file (existing or not) inside a directory synced into the tree
        (Rojo's ``$path`` directories and their subdirectories)?  For a sourcemap, a file
        beside a file it lists.  False for files outside the project's tree (test runners,
        build or Lune scripts, vendored copies the project does not sync)."""
        rel = self._rel(path)
        if rel in self.file_instances:
            return True
        b = self._builder
        level = posixpath.dirname(rel)
        if b is not None:
            while True:
                if level in b.holders:
                    return True
                if not level or level == posixpath.dirname(level):
                    return False
                level = posixpath.dirname(level)
        dirs = self._mapped_dirs
        if dirs is None:
            dirs = self._mapped_dirs = frozenset(posixpath.dirname(f) for f in self.file_instances)
        return level in dirs

    def file_for_instance(self, inst: Instance) -> str | None:
        """The root-relative path of the file that defines ``inst`` (a script's source, a
        ``.model.json`` ...; the project file for a project root), or ``None``."""
        fallback = None
        for fp in inst.file_paths:
            if fp.endswith((".meta.json", ".meta.jsonc", ".project.json", ".project.jsonc")):
                fallback = fallback or fp
                continue
            return fp
        return fallback

    # --- services and players ----------------------------------------------------------------------
    def service(self, name: str) -> Instance | None:
        """The service ``name``: the project's node, or a lazily created open node for a
        real service the project does not mention; ``None`` when ``name`` is not a service."""
        if not self.api.is_service(name):
            return None
        dm = self.datamodel
        node = dm.child(name)
        if node is not None:
            return node
        for ch in dm.all_children():
            if ch.class_name == name:
                return ch
        node = self._lazy_services.get(name)
        if node is None:
            node = Instance(name, name, open_reason=OPEN_UNSERVED_SERVICE)
            node.parent = dm
            _add_engine_children(node)
            self._lazy_services[name] = node
        return node

    def local_player(self) -> Instance:
        """The client's ``Player``, built on first use and after changes: closed in a place
        project (:mod:`luaguard.analysis.world` decides what its scripts add at run
        time), open when the ``DataModel`` is (a library, no project file).

        Children: ``PlayerGui`` (copy of ``StarterGui``'s children), ``PlayerScripts``
        (copy of ``StarterPlayer.StarterPlayerScripts`` plus the engine's default player
        scripts), ``Backpack`` (copy of ``StarterPack``), ``StarterGear`` (open).  Each
        mirror is open when its source is.  ``parent`` is the ``Players`` service (the
        player is not added to its children).
        """
        if self._local_player is not None:
            return self._local_player
        players = self.service("Players")
        player = Instance("LocalPlayer", "Player")
        player.parent = players
        if self.kind == "none" or self.root is not self.datamodel:
            # no place project: the game's scripts, which add children to players, are unknown
            player.open_reason = f"the game's scripts are not known here ({self.datamodel.open_reason})"

        def mirror(name: str, cls: str, source: Instance | None, what: str) -> Instance:
            node = Instance(name, cls)
            if source is None:
                node.open_reason = f"mirrors {what}, which is unknown"
                return node
            for ch in source.all_children():
                node.add_child(ch.copy_tree())
            if source.open_reason:
                node.open_reason = f"mirrors {what}, which is open ({source.open_reason})"
            return node

        player.add_child(mirror("PlayerGui", "PlayerGui", self.service("StarterGui"), "StarterGui"))
        sp = self.service("StarterPlayer")
        sps = sp.child("StarterPlayerScripts") if sp is not None else None
        ps = mirror("PlayerScripts", "PlayerScripts", sps, "StarterPlayer.StarterPlayerScripts")
        for name, cls in _DEFAULT_PLAYER_SCRIPTS:
            if ps.child(name) is None:
                ps.add_child(Instance(name, cls, open_reason=OPEN_ENGINE))
        player.add_child(ps)
        player.add_child(mirror("Backpack", "Backpack", self.service("StarterPack"), "StarterPack"))
        player.add_child(Instance("StarterGear", "StarterGear",
                                  open_reason="gear the player owns is added at run time"))
        self._local_player = player
        return player

    # --- paths ---------------------------------------------------------------------------------------
    def resolve_partial(self, dotted: str) -> tuple[Instance | None, list[str]]:
        """Resolve as much of ``dotted`` as exists: ``(deepest node, remaining names)``.

        Accepts ``game.A.B``, ``A.B`` (a service or the library root first), ``workspace.X``,
        ``game["Name With Space"]``, ``game:GetService("Players")`` and
        ``:WaitForChild("X")``/``:FindFirstChild("X")`` steps; ``Players.LocalPlayer``
        resolves to :meth:`local_player`.  ``(None, names)`` when the first name is unknown
        or the text cannot be parsed (then ``names`` is empty).
        """
        parts = _parse_dotted(dotted)
        if not parts:
            return None, []
        first, rest = parts[0], parts[1:]
        if first == "game":
            node: Instance | None = self.datamodel
        elif first in ("workspace", "Workspace"):
            node = self.service("Workspace")
        elif self.api.is_service(first):
            node = self.service(first)
        elif self.root is not self.datamodel and first == self.root.name:
            node = self.root
        else:
            return None, parts
        assert node is not None
        for i, name in enumerate(rest):
            nxt: Instance | None
            if node is self.datamodel:
                nxt = node.child(name) or self.service(name)
            elif name == "LocalPlayer" and node.class_name == "Players":
                nxt = self.local_player()
            else:
                nxt = node.child(name)
            if nxt is None:
                return node, rest[i:]
            node = nxt
        return node, []

    def resolve_path(self, dotted: str) -> Instance | None:
        """The instance at ``dotted`` (see :meth:`resolve_partial` for the syntax) or ``None``."""
        node, rest = self.resolve_partial(dotted)
        return node if not rest else None

    # --- incremental updates ------------------------------------------------------------------------
    def apply_file_changes(self, changed: Iterable[str | Path], deleted: Iterable[str | Path] = ()) -> None:
        """Update the index after files were created/modified (``changed``) or removed.

        Only affected directory entries are re-snapshotted; a change to any project file
        that was read (or to a missing ``$path`` target appearing) rebuilds the whole
        tree, as does a change to the sourcemap for sourcemap indexes.  Changing a
        script's text does not change the tree and costs nothing.  When a rebuild fails
        because the project file became malformed, the previous tree is kept and the
        error is added to ``problems``.
        """
        rels = [r for r in (self._rel(p) for p in [*changed, *deleted])
                if r and not r.startswith(("/", "../")) and r != ".." and not re.match(r"^[A-Za-z]:/", r)]
        if not rels:
            return
        self.generation += 1
        self._local_player = None
        self._mapped_dirs = None
        if self.kind == "none":
            if any("/" not in r and (r.endswith((".project.json", ".project.jsonc")) or r == "sourcemap.json")
                   for r in rels):
                self._rebuild()
            return
        if self.kind == "sourcemap":
            pf = self._rel(self.project_file) if self.project_file else None
            if pf in rels:
                self._rebuild()
            return
        b = self._builder
        assert b is not None
        for r in rels:
            if r in b.project_files or any(r == m or r.startswith(m + "/") or m.startswith(r + "/")
                                           for m in b.watch_missing):
                self._rebuild()
                return
        touched = set(rels)
        self.problems[:] = [p for p in self.problems if p.file not in touched]
        try:
            for r in rels:
                self._touch(b, r)
        except _NeedRebuild:
            self._rebuild()

    def _touch(self, b: RojoBuilder, rel: str) -> None:
        name = posixpath.basename(rel)
        parent = posixpath.dirname(rel)
        if parent and parent not in b.holders and parent not in b.sites:
            # the directory is new (or not part of the tree): attach the whole new chain
            self._touch_entry(b, rel, force=False)
            return
        if name in _DIR_SPECIAL:
            self._touch_entry(b, parent, force=True)
            return
        if name.endswith((".meta.json", ".meta.jsonc")):
            base = name[: -len(".meta.json")] if name.endswith(".meta.json") else name[: -len(".meta.jsonc")]
            try:
                siblings = os.listdir(b.abs(parent))
            except OSError:
                siblings = []
            for sib in siblings:
                found = default_rule(sib)
                if found is not None and found[1] == base:
                    self._touch_entry(b, posixpath.join(parent, sib) if parent else sib, force=True)
            return
        self._touch_entry(b, rel, force=False)

    def _touch_entry(self, b: RojoBuilder, rel: str, force: bool) -> None:
        sites = b.sites.get(rel)
        abs_path = b.abs(rel)
        if sites:
            exists = os.path.lexists(abs_path)
            is_dir = os.path.isdir(abs_path)
            for site in list(sites):
                needs = force or not exists or is_dir != site.is_dir or (
                    not is_dir and b.is_content_dependent(rel, site.ctx))
                if not needs:
                    continue
                if site.kind == "path":
                    raise _NeedRebuild
                self._drop_problems_under(rel)
                b.resnapshot_child(site)
            return
        if not os.path.lexists(abs_path):
            return
        # not in the tree yet: attach it under the nearest directory that is
        child = rel
        level = posixpath.dirname(rel)
        while True:
            holders = b.holders.get(level)
            if holders:
                if child in b.sites:
                    self._touch_entry(b, child, force=True)
                else:
                    for holder, ctx in list(holders):
                        b.add_entry(child, holder, ctx)
                return
            if child != rel and child in b.sites:
                self._touch_entry(b, child, force=True)
                return
            if not level:
                return
            child = level
            parent_level = posixpath.dirname(level)
            if parent_level == level:
                return
            level = parent_level

    def _drop_problems_under(self, rel: str) -> None:
        prefix = rel + "/"
        self.problems[:] = [p for p in self.problems if not (p.file == rel or p.file.startswith(prefix))]

    def _rebuild(self) -> None:
        try:
            fresh = load_project(
                self.root_dir,
                project_file=self._explicit_project,
                sourcemap_file=self._explicit_sourcemap,
                api=self.api,
            )
        except ProjectFileError as exc:
            self.problems.append(IndexProblem(exc.file, exc.line, exc.column,
                                              f"{exc.message} (keeping the previous index)", "error"))
            return
        for name in ("project_file", "kind", "root", "datamodel", "file_instances", "problems",
                     "scripts_only", "_builder"):
            setattr(self, name, getattr(fresh, name))
        self.generation += 1
        self._lazy_services = {}
        self._local_player = None
        self._mapped_dirs = None

    # explicit discovery choices, remembered for rebuilds
    _explicit_project: str | None = field(default=None, repr=False)
    _explicit_sourcemap: str | None = field(default=None, repr=False)


class _NeedRebuild(Exception):
    pass


_DOTTED_TOKEN = re.compile(
    r"""\s*(?:
        (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | \[\s*(?P<q>["'])(?P<str>(?:\\.|(?!(?P=q)).)*)(?P=q)\s*\]
      | :\s*(?P<meth>GetService|WaitForChild|FindFirstChild)\s*\(\s*(?P<q2>["'])(?P<arg>(?:\\.|(?!(?P=q2)).)*)(?P=q2)[^)]*\)
      | (?P<dot>\.)
    )""",
    re.X,
)


def _parse_dotted(text: str) -> list[str]:
    parts: list[str] = []
    pos = 0
    expect_name = True
    text = text.strip()
    while pos < len(text):
        m = _DOTTED_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            return []
        pos = m.end()
        if m.group("dot"):
            if expect_name:
                return []
            expect_name = True
        elif m.group("name") is not None:
            if not expect_name:
                return []
            parts.append(m.group("name"))
            expect_name = False
        elif m.group("q"):
            if expect_name or not parts:
                return []
            parts.append(_unescape(m.group("str")))
        elif m.group("meth"):
            if expect_name or not parts:
                return []
            parts.append(_unescape(m.group("arg")))
    if expect_name:
        return []
    return parts


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


# --------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------


def _discover(root: str, problems: list[IndexProblem]) -> tuple[str | None, str]:
    for name in _DEFAULT_PROJECT_NAMES:
        if os.path.isfile(os.path.join(root, name)):
            return name, "rojo"
    try:
        names = sorted(os.listdir(root))
    except OSError as exc:
        raise ProjectFileError(root, None, None, f"cannot list the project root: {exc.strerror}") from None
    projects = [n for n in names if n.endswith((".project.json", ".project.jsonc"))
                and os.path.isfile(os.path.join(root, n))]
    if len(projects) == 1:
        return projects[0], "rojo"
    if len(projects) > 1:
        problems.append(IndexProblem(
            ".", None, None,
            f"several project files ({', '.join(projects)}) and no default.project.json; "
            "choose one explicitly", "warning"))
    if os.path.isfile(os.path.join(root, "sourcemap.json")):
        return "sourcemap.json", "sourcemap"
    return None, "none"


def _root_relative(root: str, path: str, what: str) -> str:
    p = path.replace("\\", "/")
    if os.path.isabs(p):
        ap = os.path.normpath(p)
        if ap.startswith(root.rstrip("/") + "/"):
            return ap[len(root.rstrip("/")) + 1:]
        rr = os.path.realpath(root)
        rp = os.path.realpath(ap)
        if rp.startswith(rr + "/"):
            return rp[len(rr) + 1:]
        raise ProjectFileError(path, None, None, f"the {what} must be inside the project root {root}")
    rel = posixpath.normpath(p)
    if rel == ".." or rel.startswith("../"):
        raise ProjectFileError(path, None, None, f"the {what} must be inside the project root {root}")
    return rel


def load_project(root_dir: Path | str, *, project_file: str | None = None, sourcemap_file: str | None = None,
                 api: RobloxApi | None = None) -> ProjectIndex:
    """Index the project under ``root_dir``.

    Discovery: ``project_file`` if given, else ``sourcemap_file``, else
    ``default.project.json(c)``, else the only ``*.project.json(c)`` in the root, else
    ``sourcemap.json``, else kind ``"none"`` (an empty open ``DataModel``).  Explicit paths
    may be absolute or root-relative and must lie inside the root.

    Raises :class:`ProjectFileError` when the chosen file is missing, is malformed JSON
    (with its line/column) or has the wrong shape (naming the JSON pointer, e.g.
    ``/tree/ReplicatedStorage/$path``).  Problems in files the project points at
    (nested projects, meta files, models, missing or refused paths) do not raise: they
    are listed in ``problems`` and the affected nodes are open.  ``api`` defaults to
    :func:`load_api`.
    """
    api = api or load_api()
    root = os.path.abspath(os.fspath(root_dir))
    if not os.path.isdir(root):
        raise ProjectFileError(root, None, None, "project root is not a directory")
    problems: list[IndexProblem] = []
    if project_file is not None:
        rel, kind = _root_relative(root, project_file, "project file"), "rojo"
        if not os.path.isfile(os.path.join(root, rel)):
            raise ProjectFileError(rel, None, None, "project file not found")
    elif sourcemap_file is not None:
        rel, kind = _root_relative(root, sourcemap_file, "sourcemap"), "sourcemap"
        if not os.path.isfile(os.path.join(root, rel)):
            raise ProjectFileError(rel, None, None, "sourcemap file not found")
    else:
        found, kind = _discover(root, problems)
        rel = found or ""

    builder: RojoBuilder | None = None
    scripts_only = False
    if kind == "rojo":
        builder = RojoBuilder(root, rel, api)
        tree_root = builder.build()
        file_instances = builder.file_instances
        problems = problems + builder.problems
        builder.problems = problems
    elif kind == "sourcemap":
        result = read_sourcemap(root, rel)
        tree_root = result.root
        file_instances = result.file_instances
        problems.extend(result.problems)
        scripts_only = result.scripts_only
    else:
        tree_root = Instance("game", "DataModel", open_reason=NO_PROJECT_REASON)
        file_instances = {}

    if tree_root.class_name == "DataModel":
        datamodel = tree_root
        for svc in list(datamodel.all_children()):
            _add_engine_children(svc)
    else:
        datamodel = Instance("game", "DataModel", open_reason=LIBRARY_DATAMODEL_REASON)

    index = ProjectIndex(
        root_dir=Path(root),
        project_file=Path(root, rel) if rel else None,
        kind=kind,
        root=tree_root,
        datamodel=datamodel,
        file_instances=file_instances,
        problems=problems,
        api=api,
        scripts_only=scripts_only,
        _builder=builder,
    )
    index._explicit_project = project_file
    index._explicit_sourcemap = sourcemap_file
    return index


def empty_project(api: RobloxApi | None = None) -> ProjectIndex:
    """The index for Luau text that belongs to no project (a loose file): kind ``"none"``,
    an empty open ``DataModel`` - services, classes and members are still known, so
    ``game:GetService("Playerz")`` is still a mistake, but no child is certain."""
    api = api or load_api()
    tree_root = Instance("game", "DataModel", open_reason=NO_PROJECT_REASON)
    index = ProjectIndex(root_dir=Path.cwd(), project_file=None, kind="none", root=tree_root, datamodel=tree_root,
                         file_instances={}, problems=[], api=api)
    index._explicit_project = None
    index._explicit_sourcemap = None
    return index


# --------------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------------


def _display_name(node: Instance) -> str:
    return node.name if is_identifier(node.name) or node.name else '""'


def format_tree(index: ProjectIndex) -> str:
    """Text for ``luaguard index``: one line per instance, indented two spaces a level::

        game (DataModel) [default.project.json] (open: ...)
          ReplicatedStorage (ReplicatedStorage) src/shared/
            Util (ModuleScript) [src/shared/Util.luau]

    Directories end in ``/``, files are in brackets, open nodes end ``(open: reason)``,
    name collisions are marked ``(duplicate name)``.  Problems follow the tree.
    """
    lines: list[str] = []
    if index.project_file is not None:
        lines.append(f"# {index.kind}: {index._rel(index.project_file)}")
    else:
        lines.append("# no project file found")
    stack: list[tuple[Instance, int, bool]] = [(index.root, 0, False)]
    while stack:
        node, depth, dup = stack.pop()
        parts = ["  " * depth + f"{_display_name(node)} ({node.class_name})"]
        if node.dir_path is not None:
            parts.append((node.dir_path or ".") + "/")
        if node.file_paths:
            parts.append("[" + ", ".join(node.file_paths) + "]")
        if dup:
            parts.append("(duplicate name)")
        if node.open_reason:
            parts.append(f"(open: {node.open_reason})")
        lines.append(" ".join(parts))
        dups = set(map(id, node.duplicates))
        for ch in reversed(node.all_children()):
            stack.append((ch, depth + 1, id(ch) in dups))
    if index.root is not index.datamodel:
        lines.append(f"# DataModel: synthesized (open: {index.datamodel.open_reason})")
    if index.problems:
        lines.append("# problems:")
        for p in index.problems:
            lines.append(f"#   {p}")
    return "\n".join(lines) + "\n"


def to_json(index: ProjectIndex) -> dict[str, Any]:
    """``luaguard index --format json``: a sourcemap-shaped tree.

    Each node is ``{"name", "className", "filePaths"?, "open"?: reason, "children"?}``;
    the root also carries ``"problems"`` (list of ``{file, line, column, message,
    severity}``) when there are any.
    """

    def node_dict(node: Instance) -> dict[str, Any]:
        d: dict[str, Any] = {"name": node.name, "className": node.class_name}
        if node.file_paths:
            d["filePaths"] = list(node.file_paths)
        if node.open_reason:
            d["open"] = node.open_reason
        return d

    top = node_dict(index.root)
    stack = [(index.root, top)]
    while stack:
        node, d = stack.pop()
        kids = node.all_children()
        if kids:
            out = [node_dict(ch) for ch in kids]
            d["children"] = out
            stack.extend(zip(kids, out))
    if index.problems:
        top["problems"] = [
            {"file": p.file, "line": p.line, "column": p.column, "message": p.message, "severity": p.severity}
            for p in index.problems
        ]
    return top
