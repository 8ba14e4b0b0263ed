"""A copy-on-write view of a :class:`~luaguard.project.index.ProjectIndex`.

Plans and diffs create and delete instances and script files; later steps (and the code
checks of their content) must see those changes while the real index stays untouched
(the LSP keeps one index for the whole session).  :class:`Overlay` clones only the nodes
on the way from the root to a changed node: a clone's ``children`` dict is a copy that
still holds the real, unchanged children (their ``parent`` still points at the real
parent, so a ``.Parent`` walk from them sees the real tree: conservative, never a false
"does not exist").  ``view`` is a :class:`ProjectIndex` sharing everything with the base
except ``root``/``datamodel`` (clones once changed), ``file_instances`` (a ``ChainMap``
of the overlay's files over the real map) and its own lazy services / local player.

File placement follows Rojo's default sync rules (``foo.server.luau`` -> ``Script``
``foo``, ``foo.client.luau`` -> ``LocalScript``, ``foo.luau`` -> ``ModuleScript``,
``init.*`` makes the directory the script; see Rojo's ``snapshot_from_vfs``): a new file
joins the instance made from its directory (the node whose ``dir_path`` is that
directory), and missing directories below a synced one become ``Folder`` nodes.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections import ChainMap
from typing import Iterator

from ..project.rojo import default_rule
from ..project.tree import Instance

_MIDDLEWARE_CLASS = {
    "module": "ModuleScript", "server": "Script", "client": "LocalScript", "plugin": "Script",
    "legacyServer": "Script", "legacyClient": "LocalScript", "runContextServer": "Script",
    "runContextClient": "Script",
}
#: File suffix Rojo maps to each script class (default sync rules, legacy scripts).
CLASS_SUFFIX = {"ModuleScript": ".luau", "Script": ".server.luau", "LocalScript": ".client.luau"}


def script_file_rule(filename: str) -> tuple[str, str] | None:
    """``(class name, instance name)`` of a Luau file under Rojo's default rules, or ``None``
    when ``filename`` is not a script (``.json``, ``.txt`` ...)."""
    found = default_rule(filename)
    if found is None:
        return None
    cls = _MIDDLEWARE_CLASS.get(found[0])
    return (cls, found[1]) if cls else None


class DirMap:
    """Directory (root-relative POSIX path) -> the instance made from it, for one index.

    Built by one walk of the tree on first use; re-walked when the index's tree was
    replaced, its file count changed, or a node found is no longer attached (the LSP
    updates the index in place).  A directory that is simply not mapped costs no walk."""

    def __init__(self) -> None:
        self._map: dict[str, Instance] = {}
        self._key: tuple | None = None

    def _build(self, index) -> None:
        m: dict[str, Instance] = {}
        for node in (index.root, *index.root.descendants()):
            if node.dir_path is not None and node.dir_path not in m:
                m[node.dir_path] = node
        self._map = m
        self._key = (id(index.root), len(index.file_instances))

    def get(self, index, rel_dir: str) -> Instance | None:
        if self._key != (id(index.root), len(index.file_instances)):
            self._build(index)
        node = self._map.get(rel_dir)
        if node is not None and not _attached(node, index.root):
            self._build(index)
            node = self._map.get(rel_dir)
        return node

    def items(self, index) -> list[tuple[str, Instance]]:
        if self._key != (id(index.root), len(index.file_instances)):
            self._build(index)
        return sorted(self._map.items())


def _attached(node: Instance, root: Instance) -> bool:
    cur: Instance | None = node
    while cur is not None:
        if cur is root:
            return True
        cur = cur.parent
    return False


class Overlay:
    """Created/deleted instances and files over a base index (see the module docstring).

    ``base`` is never mutated.  ``changed`` is False until the first create/delete.
    """

    def __init__(self, base, dirmap: DirMap | None = None) -> None:
        self.base = base
        self.dirmap = dirmap or DirMap()
        self.files: dict[str, list[Instance]] = {}
        self.view = dataclasses.replace(
            base, file_instances=ChainMap(self.files, base.file_instances),
            _lazy_services={}, _local_player=None)
        self.changed = False
        self._clones: dict[int, tuple[Instance, Instance]] = {}   # id(real) -> (real, clone)
        self._origin: dict[int, Instance] = {}                    # id(clone) -> real
        self._owned: set[int] = set()
        self._keep: list[Instance] = []                            # keeps owned ids alive
        self._deleted: set[int] = set()
        self._dirs: dict[str, Instance] = {}
        #: id(node) -> the script source this overlay last gave it (an MCP proxy session
        #: remembers what it forwarded, so the next edit is judged against it)
        self.sources: dict[int, str] = {}

    # -- lookups -----------------------------------------------------------------------
    def current(self, node: Instance) -> Instance:
        """The overlay's version of ``node`` (its clone, if it was cloned)."""
        hit = self._clones.get(id(node))
        return hit[1] if hit is not None and hit[0] is node else node

    def is_live(self, node: Instance) -> bool:
        """False when ``node`` or an ancestor was deleted in this overlay."""
        if not self._deleted:
            return True
        cur: Instance | None = node
        while cur is not None:
            if id(cur) in self._deleted:
                return False
            cur = cur.parent
        return True

    def resolve_partial(self, dotted: str) -> tuple[Instance | None, list[str]]:
        return self.view.resolve_partial(dotted)

    def instances_for_file(self, rel: str) -> list[Instance]:
        """Live instances the file ``rel`` defines (overlay files first)."""
        found = self.view.file_instances.get(rel, ())
        return [self.current(n) for n in found if self.is_live(n)]

    def file_paths(self) -> Iterator[str]:
        """Every file path the view maps (deleted files excluded)."""
        for rel in self.view.file_instances:
            if self.view.file_instances.get(rel):
                yield rel

    def dir_instance(self, rel_dir: str) -> Instance | None:
        """The live instance made from directory ``rel_dir`` (``""`` = the root), or ``None``."""
        node = self._dirs.get(rel_dir)
        if node is None:
            node = self.dirmap.get(self.base, rel_dir)
            if node is not None:
                node = self.current(node)
        return node if node is not None and self.is_live(node) else None

    def synced_dirs(self) -> list[tuple[str, Instance]]:
        """``(directory, instance)`` pairs of the base index (for messages)."""
        return self.dirmap.items(self.base)

    def _source_key(self, node: Instance) -> int:
        real = self._origin.get(id(node))
        return id(real if real is not None else node)

    def source_of(self, node: Instance) -> str | None:
        """The source this overlay last gave the script ``node`` (``None``: none)."""
        return self.sources.get(self._source_key(node))

    def set_source(self, node: Instance, text: str | None) -> None:
        """Remember ``text`` as ``node``'s source (``None`` forgets it)."""
        key = self._source_key(node)
        if text is None:
            self.sources.pop(key, None)
        else:
            self.sources[key] = text
            self._keep.append(node)

    # -- changes -----------------------------------------------------------------------
    def _is_owned(self, node: Instance) -> bool:
        if id(node) in self._owned:
            return True
        view = self.view
        if view._lazy_services.get(node.name) is node:
            return True
        lp = view._local_player
        if lp is not None:
            cur: Instance | None = node
            while cur is not None:
                if cur is lp:
                    return True
                cur = cur.parent
        return False

    def writable(self, node: Instance) -> Instance:
        """A node of the view that may be changed, standing for ``node``: ``node`` itself
        when the overlay owns it, else its clone (cloning ancestors as needed)."""
        chain: list[Instance] = []
        cur: Instance | None = node
        while cur is not None and not self._is_owned(cur):
            hit = self._clones.get(id(cur))
            if hit is not None and hit[0] is cur:
                break
            chain.append(cur)
            cur = cur.parent
        top = None if cur is None else (cur if self._is_owned(cur) else self._clones[id(cur)][1])
        for real in reversed(chain):
            clone = Instance(real.name, real.class_name, open_reason=real.open_reason,
                             file_paths=list(real.file_paths), dir_path=real.dir_path,
                             class_guessed=real.class_guessed, run_context=real.run_context)
            clone.children = dict(real.children)
            clone.duplicates = list(real.duplicates)
            self._clones[id(real)] = (real, clone)
            self._origin[id(clone)] = real
            self._own(clone)
            if top is None:
                if real is self.view.root:
                    self.view.root = clone
                if real is self.view.datamodel:
                    self.view.datamodel = clone
            else:
                clone.parent = top
                if top.children.get(real.name) is real:
                    top.children[real.name] = clone
                else:
                    top.duplicates = [clone if d is real else d for d in top.duplicates]
            top = clone
        assert top is not None
        return top

    def _own(self, node: Instance) -> None:
        self._owned.add(id(node))
        self._keep.append(node)

    def create(self, parent: Instance, name: str, class_name: str, *, file: str | None = None,
               dir_path: str | None = None) -> Instance:
        """Add a new child of ``parent`` to the view and return it."""
        wp = self.writable(parent)
        node = Instance(name, class_name, dir_path=dir_path)
        if file is not None:
            node.file_paths.append(file)
            self.files[file] = [node]
        if dir_path is not None:
            self._dirs[dir_path] = node
        wp.add_child(node)
        self._own(node)
        self.changed = True
        return node

    def delete(self, node: Instance) -> None:
        """Remove ``node`` (and so its subtree) from the view; its files stop mapping."""
        node = self._detach(node)
        self._deleted.add(id(node))
        real = self._origin.get(id(node))
        if real is not None:
            self._deleted.add(id(real))
        self._keep.append(node)
        for n in (node, *node.descendants()):
            for fp in n.file_paths:
                self.files[fp] = []
        self.changed = True

    def _detach(self, node: Instance) -> Instance:
        """Take the live ``node`` out of its parent's children in the view (no deletion
        mark); returns the node as the view holds it."""
        node = self.current(node)
        parent = node.parent
        if parent is not None:
            wp = self.writable(parent)
            if wp.children.get(node.name) is node:
                del wp.children[node.name]
                for i, dup in enumerate(wp.duplicates):
                    if dup.name == node.name:
                        wp.children[node.name] = wp.duplicates.pop(i)
                        break
            else:
                wp.duplicates = [d for d in wp.duplicates if d is not node]
        return node

    def rename(self, node: Instance, new_name: str) -> Instance:
        """Give ``node`` the name ``new_name`` in the view (Roblox ``Instance.Name``); its
        subtree follows.  Returns the renamed node."""
        w = self.writable(node)
        parent = w.parent
        self._detach(w)
        w.name = new_name
        if parent is not None:
            self.writable(parent).add_child(w)
        self.changed = True
        return w

    def move(self, node: Instance, new_parent: Instance) -> Instance:
        """Re-parent ``node`` under ``new_parent`` in the view (Roblox ``Instance.Parent``).
        Moved descendants keep their real ``parent`` links (a ``.Parent`` walk from them sees
        the old place: conservative); lookups from the root find them at the new place."""
        w = self.writable(node)
        self._detach(w)
        self.writable(new_parent).add_child(w)
        self.changed = True
        return w

    def copy(self, node: Instance, new_parent: Instance, *, limit: int = 10_000) -> Instance:
        """Add a copy of ``node``'s subtree (names and classes, no files) under
        ``new_parent`` (Roblox ``Instance:Clone()`` then ``.Parent =``); at most ``limit``
        nodes are copied."""
        src = self.current(node)
        top = self.create(new_parent, src.name, src.class_name)
        top.class_guessed = src.class_guessed
        budget = [limit - 1]

        def walk(a: Instance, b: Instance) -> None:
            for child in a.all_children():
                if budget[0] <= 0 or not self.is_live(child):
                    return
                budget[0] -= 1
                c = Instance(child.name, child.class_name, class_guessed=child.class_guessed)
                b.add_child(c)
                self._own(c)
                walk(child, c)

        walk(src, top)
        return top

    def place_file(self, rel: str) -> tuple[Instance | None, str | None]:
        """Create the instance for a new script file ``rel`` (Rojo's default rules).

        Returns ``(instance, None)`` or ``(None, reason)`` when the file is not a script
        or no synced directory holds it.  An existing instance of the same name is
        reported by the caller before calling this.
        """
        name = posixpath.basename(rel)
        rule = script_file_rule(name)
        if rule is None:
            return None, f"'{name}' is not a Luau script file name (use .luau, .server.luau or .client.luau)"
        cls, inst_name = rule
        directory = posixpath.dirname(rel)
        if name.startswith("init."):
            node = self.dir_instance(directory)
            if node is None:
                return None, f"directory '{directory or '.'}' is not synced into the game by the project"
            w = self.writable(node)
            w.class_name = cls
            w.file_paths.append(rel)
            self.files[rel] = [w]
            self.changed = True
            return w, None
        parent, missing = self._nearest_dir(directory)
        if parent is None:
            return None, "it is not inside a directory the project syncs into the game"
        for d in missing:
            parent = self.create(parent, posixpath.basename(d), "Folder", dir_path=d)
        return self.create(parent, inst_name, cls, file=rel), None

    def _nearest_dir(self, directory: str) -> tuple[Instance | None, list[str]]:
        missing: list[str] = []
        cur = directory
        while True:
            node = self.dir_instance(cur)
            if node is not None:
                return node, list(reversed(missing))
            if not cur:
                return None, []
            missing.append(cur)
            cur = posixpath.dirname(cur)
