"""The DataModel instance tree that a Rojo project (or a ``sourcemap.json``) describes.

An :class:`Instance` is one node.  A node is **open** when children may exist at run
time that the project files do not show (``$ignoreUnknownInstances``, a ``.rbxm``
model, a service the project never mentions, a ``$path`` missing from the checkout
such as Wally's ``Packages/``): the path check never reports a missing child under an
open node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator


@dataclass(eq=False, slots=True)
class Instance:
    """One node of the instance tree.

    ``children`` keeps insertion order; when several children share a name, the first
    one wins for lookups (as ``FindFirstChild`` does) and the rest stay in
    ``duplicates``.  ``file_paths`` are project-root-relative POSIX paths of the files
    that define the node (a script's source, a ``.meta.json``, a ``.model.json`` ...).
    ``open_reason`` says why the node is open (``None`` when closed).
    """

    name: str
    class_name: str
    parent: "Instance | None" = None
    children: dict[str, "Instance"] = field(default_factory=dict)
    duplicates: list["Instance"] = field(default_factory=list)
    open_reason: str | None = None
    file_paths: list[str] = field(default_factory=list)
    # Added by the project indexer (project/index.py):
    # ``dir_path``: project-root-relative POSIX path of the directory the node was made
    # from (a Folder, or a script made from a directory with an ``init`` file), else None.
    dir_path: str | None = None
    # ``class_guessed``: True when ``class_name`` is a guess (a ``.rbxm`` model's class).
    class_guessed: bool = False
    # ``run_context``: for ``Script`` nodes, ``"Legacy" | "Server" | "Client" | "Plugin"``
    # as Rojo sets it (``emitLegacyScripts``, ``.plugin.luau``, a ``RunContext`` in
    # ``$properties``/``.meta.json``); None for other classes.
    run_context: str | None = None
    # ``disabled``: a script whose ``Disabled`` property is true (or ``Enabled`` false) in
    # ``$properties`` or its ``.meta.json``: it does not run where it stands; such scripts
    # are templates that code clones and enables elsewhere.
    disabled: bool = False
    # ``origin``: for a node of a synthesized copy (the local player's ``PlayerGui`` mirror
    # of ``StarterGui``, a character's copy of ``StarterCharacterScripts``), the project
    # node it copies; ``None`` for the project's own nodes.
    origin: "Instance | None" = None
    # ``missing_path``: the project-root-relative ``$path`` the project file gives this node
    # when it is missing from the checkout (Wally's ``Packages`` before ``wally install``, a
    # build output); None otherwise.
    missing_path: str | None = None

    def __repr__(self) -> str:
        # Added by the project indexer: the generated repr printed the whole tree (parent
        # and children recursively); this one names the node only.
        extra = f", open={self.open_reason!r}" if self.open_reason else ""
        return f"Instance({self.path!r}, {self.class_name!r}{extra})"

    @property
    def is_open(self) -> bool:
        return self.open_reason is not None

    def add_child(self, child: "Instance") -> "Instance":
        """Attach ``child`` (setting its parent) and return it."""
        child.parent = self
        if child.name in self.children:
            self.duplicates.append(child)
        else:
            self.children[child.name] = child
        return child

    def child(self, name: str) -> "Instance | None":
        return self.children.get(name)

    def remove_child(self, child: "Instance") -> bool:
        """Detach ``child`` (clearing its parent); returns False when it is not a child.

        When the removed node was the lookup winner for its name, the first duplicate
        with that name takes its place.
        """
        if self.children.get(child.name) is child:
            del self.children[child.name]
            for i, dup in enumerate(self.duplicates):
                if dup.name == child.name:
                    self.children[child.name] = self.duplicates.pop(i)
                    break
        else:
            for i, dup in enumerate(self.duplicates):
                if dup is child:
                    del self.duplicates[i]
                    break
            else:
                return False
        child.parent = None
        return True

    def copy_tree(self) -> "Instance":
        """A deep copy of this node and its descendants (the copy has no parent); each
        copied node's ``origin`` is the project node it copies."""
        root = Instance(
            self.name, self.class_name, open_reason=self.open_reason,
            file_paths=list(self.file_paths), dir_path=self.dir_path,
            class_guessed=self.class_guessed, run_context=self.run_context,
            disabled=self.disabled, origin=self.origin or self,
        )
        stack = [(self, root)]
        while stack:
            src, dst = stack.pop()
            for ch in src.all_children():
                new = Instance(
                    ch.name, ch.class_name, open_reason=ch.open_reason,
                    file_paths=list(ch.file_paths), dir_path=ch.dir_path,
                    class_guessed=ch.class_guessed, run_context=ch.run_context,
                    disabled=ch.disabled, origin=ch.origin or ch,
                )
                dst.add_child(new)
                stack.append((ch, new))
        return root

    def ancestors(self) -> Iterator["Instance"]:
        """Parent, grandparent, ... up to the root."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def find_first_ancestor(self, name: str) -> "Instance | None":
        for node in self.ancestors():
            if node.name == name:
                return node
        return None

    def descendants(self) -> Iterator["Instance"]:
        """Every node below this one, depth first, in child order."""
        stack = list(reversed(self.all_children()))
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.all_children()))

    def all_children(self) -> list["Instance"]:
        """Children including duplicates (name collisions), in insertion order."""
        if not self.duplicates:
            return list(self.children.values())
        return list(self.children.values()) + self.duplicates

    def find_first_descendant(self, name: str) -> "Instance | None":
        """Breadth-first search, as ``FindFirstChild(name, true)`` does."""
        queue = self.all_children()
        i = 0
        while i < len(queue):
            node = queue[i]
            if node.name == name:
                return node
            queue.extend(node.all_children())
            i += 1
        return None

    def has_open_descendant(self) -> bool:
        return any(node.is_open for node in self.descendants())

    @property
    def path(self) -> str:
        """Dotted path from the root, e.g. ``game.ReplicatedStorage.Modules``.

        A DataModel root is written ``game``; names that are not identifiers are written
        ``["Name With Space"]``.
        """
        parts: list[str] = []
        node: Instance | None = self
        while node is not None:
            if node.parent is None and node.class_name == "DataModel":
                parts.append("game")
            else:
                parts.append(node.name)
            node = node.parent
        parts.reverse()
        out = parts[0]
        for part in parts[1:]:
            out += f".{part}" if is_identifier(part) else f'["{part}"]'
        return out


_KEYWORDS = frozenset(
    "and break do else elseif end false for function if in local nil not or repeat return then true until while".split()
)


def is_identifier(name: str) -> bool:
    """True when ``name`` can be written after a ``.`` in Luau (a Name that is no keyword)."""
    return name.isidentifier() and name.isascii() and name not in _KEYWORDS
