"""Frameworks and package managers as evidence: children no project file shows but a tool
the game uses links in, and the paths of Luau's string requires.

* **Wally** (wally.run; the manifest format of UpliftGames/wally): ``wally install`` fills
  ``Packages/`` with one link module per alias of the game's ``wally.toml``
  ``[dependencies]`` (``ServerPackages/`` for ``[server-dependencies]``, ``DevPackages/``
  for ``[dev-dependencies]``), the real code under ``_Index/``.  Before the install (a
  fresh clone, a CI runner, an agent's sandbox) the project's ``$path`` to the folder is
  missing: the aliases are known from ``wally.toml`` all the same, and nothing else will
  be there.  A package Wally installed also sees its own dependencies as siblings
  (``script.Parent.Signal`` in ``_Index``).
* **Nevermore** (Quenty/NevermoreEngine, ``src/loader``): modules begin with ``local
  require = require(script.Parent.loader).load(script)``; at run time the loader's
  ``LoaderLinkCreator`` walks the root the game bootstraps and parents a ``loader`` link
  module into every Folder whose children include a ModuleScript (the root included).
  A project uses it when its ``package.json`` depends on ``@quenty/loader``, the loader
  package (``LoaderUtils``) is part of its tree, a script finds ``LoaderUtils`` to bootstrap
  the game (``FindFirstChild("LoaderUtils", true)``), or a git submodule brings in
  NevermoreEngine.
* **Luau string requires** (luau-lang/luau ``Require/src/RequireNavigator.cpp``; the
  "require by string" RFCs): ``require("./x")`` and ``require("../x")`` navigate from the
  requiring module's parent, ``require("@self/x")`` from the module itself,
  ``require("@alias/x")`` from the path an alias names in the nearest ``.luaurc`` up the
  directory chain (alias names are case-insensitive; a path in ``.luaurc`` is relative to
  its directory).  A component names a child instance - on disk, ``x.luau``, ``x.lua``,
  ``x/init.luau``, ``x/init.lua`` or a directory ``x``.  A project that writes requires for
  darklua's *path* require mode (darklua.com, "Path Require Mode": ``convert_require`` with
  ``current`` ``path`` in its ``darklua.json``) means ``./`` from the requiring *file's*
  directory (an ``init.lua``'s own folder) and takes its aliases from the rule's
  ``sources``.

Files are read only inside the project root (the repository is untrusted input); an
unreadable or malformed file adds nothing.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import tomllib
from pathlib import Path

from ..project.tree import Instance

#: Wally's package folders and the ``wally.toml`` section each is filled from
WALLY_REALMS = {"Packages": "dependencies", "ServerPackages": "server-dependencies", "DevPackages": "dev-dependencies"}
_WALLY_SECTIONS = tuple(WALLY_REALMS.values())
#: what Nevermore's legacy loader (``LoaderUtils.toWallyFormat``) parents into each service
_NEVERMORE_LEGACY = {"ReplicatedStorage": ("Packages", "SharedPackages"), "ServerScriptService": ("Packages",)}
#: a submodule's ``path = ...`` line in ``.gitmodules`` (git's config syntax)
_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.M)
#: Nevermore's link module name (``LoaderLinkCreator`` names links after the loader instance)
NEVERMORE_LINK = "loader"
NEVERMORE_WHY = ("Nevermore's loader links a 'loader' module into every Folder of modules it bootstraps at run time "
                 "(LoaderLinkCreator)")
#: files Rojo turns into modules (the module is named without the suffix)
_MODULE_SUFFIXES = (".luau", ".lua", ".json", ".jsonc", ".toml", ".yaml", ".yml")
_INIT_FILES = ("init.luau", "init.lua")
_LINE_COMMENT = re.compile(r"//[^\n]*")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def require_path(text: str) -> tuple[str, list[tuple[str, int]]] | None:
    """``(head, components)`` of a Luau string require path, or ``None`` when ``text`` is no
    such path (no ``./``, ``../`` or ``@`` prefix: a framework's module name, as
    Nevermore's ``require("Maid")``).  ``head`` is ``"."`` (``./``, ``../``: from the
    module's parent) or ``"@alias"`` (lower-case); ``components`` are ``(name, offset in
    text)``, ``".."`` for a parent, empty names and ``.`` dropped."""
    if text.startswith("./") or text.startswith("../"):
        head, rest_at = ".", 0
    elif text.startswith("@"):
        cut = text.find("/")
        alias = text[1:cut] if cut >= 0 else text[1:]
        if not alias:
            return None
        head, rest_at = "@" + alias.lower(), (cut + 1 if cut >= 0 else len(text))
    else:
        return None
    out: list[tuple[str, int]] = []
    at = rest_at
    for part in text[rest_at:].split("/"):
        if part and part != ".":
            out.append((part, at))
        at += len(part) + 1
    return head, out


class Frameworks:
    """What the frameworks and package managers of one project link in (see the module
    docstring), read once per snapshot.  ``project`` is the
    :class:`~luaguard.project.index.ProjectIndex`."""

    def __init__(self, project, looked_up=None, bootstrapped=None) -> None:
        self.project = project
        #: returns the names the project's scripts look up by name (``{name: files}``)
        self._looked_up = looked_up or (lambda: {})
        #: returns the roots scripts pass to Nevermore's ``bootstrapGame`` (``{name: file}``)
        self._bootstrapped = bootstrapped or (lambda: {})
        self._root = Path(project.root_dir) if project is not None and project.kind != "none" else None
        self._siblings: dict[int, tuple[Instance, frozenset[str]]] = {}
        self._tomls: dict[str, dict | None] = {}
        self._nevermore: tuple[str | None] | None = None
        self._luaurc = None  # a luaguard.project.luaurc.LuaurcReader, made on first use
        self._mode: tuple[str, dict[str, str]] | None = None
        self._ignores: dict[str, list[str]] = {}
        self._submodules: list[str] | None = None

    # -- reading files inside the root --------------------------------------------------------
    def _inside(self, rel: str) -> Path | None:
        if self._root is None:
            return None
        rel = posixpath.normpath(rel) if rel else "."
        if rel.startswith("../") or rel == ".." or rel.startswith("/"):
            return None
        return self._root / rel

    def _read(self, rel: str) -> str | None:
        path = self._inside(rel)
        if path is None:
            return None
        from ..files import read_text, regular_file

        try:  # (bounded, never through a link out of the root: luaguard.files)
            if not regular_file(path):
                return None
            return read_text(path, root=self._root, limit=1_000_000, errors="strict")
        except (OSError, ValueError):
            return None

    def _wally_toml(self, rel_dir: str) -> dict | None:
        if rel_dir not in self._tomls:
            text = self._read(posixpath.join(rel_dir, "wally.toml") if rel_dir else "wally.toml")
            data = None
            if text is not None:
                try:
                    data = tomllib.loads(text)
                except ValueError:
                    data = None
            self._tomls[rel_dir] = data if isinstance(data, dict) else None
        return self._tomls[rel_dir]

    @staticmethod
    def _aliases(data: dict | None, sections) -> frozenset[str]:
        out: set[str] = set()
        for section in sections:
            deps = data.get(section) if data else None
            if isinstance(deps, dict):
                out.update(k for k in deps if isinstance(k, str))
        return frozenset(out)

    # -- Wally ----------------------------------------------------------------------------------
    def wally_siblings(self, node: Instance) -> frozenset[str]:
        """Names that exist under ``node`` at run time because a Wally package among its
        children depends on them (Wally installs a package's dependencies beside it: the
        keys of its ``wally.toml``'s dependency sections), so a package's own code reaches
        them as ``script.Parent.Signal``."""
        got = self._siblings.get(id(node))
        if got is not None and got[0] is node:
            return got[1]
        names: set[str] = set()
        for child in node.all_children():
            if child.dir_path is not None:
                names.update(self._aliases(self._wally_toml(child.dir_path), _WALLY_SECTIONS))
        result = frozenset(names)
        self._siblings[id(node)] = (node, result)
        return result

    def wally_packages(self, node: Instance) -> tuple[frozenset[str], str] | None:
        """``(names, why)`` when ``node`` is a Wally package folder the project maps to a
        directory missing from the checkout (before ``wally install``) beside a
        ``wally.toml``: the aliases of its section and ``_Index`` - all it will hold.
        ``None`` otherwise."""
        missing = node.missing_path
        if missing is None:
            return None
        folder, base = posixpath.split(missing)
        section = WALLY_REALMS.get(base)
        if section is None:
            return None
        data = self._wally_toml(folder)
        if data is None:
            return None
        where = posixpath.join(folder, "wally.toml") if folder else "wally.toml"
        return (self._aliases(data, (section,)) | {"_Index"},
                f"{where} [{section}]: `wally install` links exactly these into {missing}")

    # -- Nevermore -----------------------------------------------------------------------------
    def nevermore(self) -> str | None:
        """Why the project uses Nevermore's loader (``None``: it does not)."""
        if self._nevermore is None:
            self._nevermore = (self._find_nevermore(),)
        return self._nevermore[0]

    def _find_nevermore(self) -> str | None:
        project = self.project
        if self._root is None:
            return None
        text = self._read("package.json")
        if text is not None:
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if isinstance(data, dict):
                if data.get("name") == "@quenty/loader":
                    return "package.json is @quenty/loader"
                for key in ("dependencies", "devDependencies", "peerDependencies"):
                    deps = data.get(key)
                    if isinstance(deps, dict) and "@quenty/loader" in deps:
                        return f"package.json {key} has @quenty/loader"
        for node in project.root.descendants():
            if node.name == "LoaderUtils" and node.class_name == "ModuleScript":
                return f"the loader package is at {node.parent.path if node.parent else node.path}"
        if self._looked_up().get("LoaderUtils", 0) > 0:
            return "a script finds LoaderUtils to bootstrap the game"
        modules = self._read(".gitmodules")
        if modules is not None and "nevermoreengine" in modules.lower():
            return ".gitmodules brings in NevermoreEngine"
        return None

    def nevermore_link(self, node: Instance) -> bool:
        """Does Nevermore's loader link a ``loader`` module into ``node`` at run time (a
        Folder, or the package root, whose children include a ModuleScript)?"""
        if node.class_name != "Folder" and node is not self.project.root:
            return False
        if not any(c.class_name == "ModuleScript" and c.name != NEVERMORE_LINK for c in node.all_children()):
            return False
        return self.nevermore() is not None

    def nevermore_replica(self, node: Instance, name: str) -> str | None:
        """Why ``name`` exists under ``node`` as what Nevermore's ``bootstrapGame(root)``
        parents there on the server (``None``: it does not).  The loader of today parents a
        Folder named after the root (a copy of its client and shared modules with their
        ``loader`` links) into ReplicatedStorage - in Studio it moves the root itself there
        (Quenty/NevermoreEngine ``src/loader/src/init.lua``: ``Loader.bootstrapGame``,
        ``_setupClientReplication``); the legacy loader (``LoaderUtils.toWallyFormat``)
        parents Folders named ``Packages`` and ``SharedPackages`` into ReplicatedStorage and
        ``Packages`` into ServerScriptService.  Which loader a game has is not known from
        its files (the loader is installed by npm), so each is possible."""
        if node.parent is not self.project.datamodel or node.class_name not in _NEVERMORE_LEGACY:
            return None
        bootstrapped = self._bootstrapped()
        if not bootstrapped or self.nevermore() is None:
            return None
        if name in _NEVERMORE_LEGACY[node.class_name]:
            where = next(iter(bootstrapped.values()))
            made = f"the legacy loader's {name!r} Folder"
        elif node.class_name == "ReplicatedStorage" and name in bootstrapped:
            where = bootstrapped[name]
            made = f"the game's client replica {name!r}"
        else:
            return None
        rel = where.relative_to(self._root).as_posix() if self._root is not None and where.is_relative_to(self._root) \
            else where.name
        return f"Nevermore's bootstrapGame in {rel} parents {made} into {node.class_name} at run time"

    def nevermore_replicas(self, node: Instance) -> list[str]:
        """The names :meth:`nevermore_replica` vouches for under ``node``."""
        names = sorted(set(self._bootstrapped()) | set(_NEVERMORE_LEGACY.get(node.class_name, ())))
        return [n for n in names if self.nevermore_replica(node, n) is not None]

    # -- Luau string requires -------------------------------------------------------------------
    def luaurc_aliases(self, rel_dir: str) -> dict[str, tuple[str, str]]:
        """Aliases seen from the root-relative directory ``rel_dir``: ``{alias (lower-case):
        (root-relative target, the .luaurc that defines it)}``, nearer ``.luaurc`` files
        winning (:mod:`luaguard.project.luaurc`, the one reader of ``.luaurc``; an alias that
        leads outside the root is left out: not judged)."""
        if self._luaurc is None:
            from ..project.luaurc import LuaurcReader

            self._luaurc = LuaurcReader(self._root)
        return self._luaurc.for_dir(rel_dir).aliases

    def file_child(self, rel: str, name: str) -> str | None:
        """The root-relative path a require component ``name`` reaches from the directory
        (or module) ``rel`` on disk: ``name`` as a directory, or ``name.luau``/``name.lua``
        (``None``: nothing there, or outside the root)."""
        target = posixpath.join(rel, name) if rel else name
        path = self._inside(target)
        if path is None:
            return None
        try:
            if path.is_dir():
                return target
            for suffix in _MODULE_SUFFIXES:
                if path.with_name(path.name + suffix).is_file():
                    return target
        except (OSError, ValueError):
            return None
        return None

    def file_named(self, rel: str, name: str) -> bool:
        """Is there a file ``name`` (as written, with its suffix) in the directory ``rel``?"""
        path = self._inside(posixpath.join(rel, name) if rel else name)
        try:
            return path is not None and path.is_file()
        except (OSError, ValueError):
            return False

    def require_mode(self) -> tuple[str, dict[str, str]]:
        """``("luau", {})``, or ``("path", {alias (lower-case, no "@"): root-relative
        path})`` when the project's darklua configuration converts path-mode requires."""
        if self._mode is None:
            self._mode = ("luau", {})
            for name in ("darklua.json", ".darklua.json", "darklua.json5", ".darklua.json5"):
                text = self._read(name)
                if text is None:
                    continue
                try:
                    data = json.loads(_TRAILING_COMMA.sub(r"\1", _LINE_COMMENT.sub("", text)))
                except ValueError:
                    continue
                rules = data.get("process") if isinstance(data, dict) else None
                for rule in rules if isinstance(rules, list) else ():
                    current = rule.get("current") if isinstance(rule, dict) and rule.get("rule") == "convert_require" else None
                    mode = current if isinstance(current, str) else current.get("name") if isinstance(current, dict) else None
                    if mode == "path":
                        sources = current.get("sources") if isinstance(current, dict) else None
                        aliases = {k.lower().lstrip("@"): posixpath.normpath(v) for k, v in (sources or {}).items()
                                   if isinstance(k, str) and isinstance(v, str) and not v.startswith("/")}
                        self._mode = ("path", aliases)
                break
        return self._mode

    def ignored_by_git(self, rel: str) -> str | None:
        """The ``.gitignore`` (root-relative) that ignores the root-relative path ``rel`` -
        what a build or an install writes there is not in the checkout - or ``None``.  Read:
        each ``.gitignore`` from the root down to ``rel``'s directory; a pattern with a
        ``/`` (not only at its end) is anchored to its file's directory, one without matches
        a name at any depth; ``!`` negations are not read (the lenient side)."""
        from wcmatch import glob as wglob

        parts = rel.split("/")
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            where = f"{base}/.gitignore" if base else ".gitignore"
            for pattern in self._gitignore(where):
                anchored = "/" in pattern.rstrip("/")
                pat = pattern.strip("/")
                below = parts[depth:]
                for end in range(1, len(below) + 1):  # rel or one of its folders
                    candidate = "/".join(below[:end])
                    if anchored:
                        hit = wglob.globmatch(candidate, pat, flags=wglob.GLOBSTAR | wglob.DOTGLOB)
                    else:
                        hit = wglob.globmatch(below[end - 1], pat, flags=wglob.DOTGLOB)
                    if hit:
                        return where
        return None

    def empty_submodule(self, rel_dir: str) -> str | None:
        """A git submodule (``.gitmodules`` at the root) directly in the root-relative
        directory ``rel_dir`` that is not checked out (its folder empty or missing), or
        ``None``.  What Rojo makes of it is unknown until ``git submodule update``: a package
        with its own project file is synced under that project's name (``msgpack-luau``
        becomes ``msgpack``), so any name beside it may be what it holds."""
        if self._submodules is None:
            text = self._read(".gitmodules") or ""
            self._submodules = [m.group(1).strip().strip("/") for m in _SUBMODULE_PATH.finditer(text)]
        base = posixpath.normpath(rel_dir) if rel_dir else "."
        for sub in self._submodules:
            if posixpath.dirname(sub) != ("" if base == "." else base):
                continue
            path = self._inside(sub)
            try:
                if path is None or not path.is_dir() or not any(path.iterdir()):
                    return sub
            except (OSError, ValueError):
                return sub
        return None

    def _gitignore(self, where: str) -> list[str]:
        got = self._ignores.get(where)
        if got is None:
            text = self._read(where) or ""
            got = [line.strip() for line in text.splitlines()
                   if line.strip() and not line.lstrip().startswith(("#", "!"))]
            self._ignores[where] = got
        return got

    def is_dir(self, rel: str) -> bool:
        """Is the root-relative ``rel`` a directory inside the root?"""
        path = self._inside(rel)
        try:
            return path is not None and path.is_dir()
        except (OSError, ValueError):
            return False

    def dir_entries(self, rel: str) -> list[str]:
        """Module names on disk in the directory ``rel`` (for suggestions)."""
        path = self._inside(rel)
        if path is None:
            return []
        try:
            names = os.listdir(path)
        except (OSError, ValueError):
            return []
        out = []
        for n in names:
            if n in _INIT_FILES or n.startswith("."):
                continue
            for suffix in _MODULE_SUFFIXES:
                if n.endswith(suffix):
                    n = n[: -len(suffix)]
                    break
            out.append(n)
        return sorted(set(out))
