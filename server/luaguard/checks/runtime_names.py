"""Names that a project creates at run time, and where.

``workspace:WaitForChild("Arena")`` is fine when some script does ``arena.Name =
"Arena"`` and parents it there: the child is not in the project files but exists while
the game runs.  This module is the fast, text-level half of that knowledge, kept for
every script of the project (a regular expression over raw text, comments included - an
over-approximation that can only silence findings, never add them):

* the **name pool**: string literals *outside* path look-ups (``WaitForChild``/
  ``FindFirstChild``/``GetService`` arguments and ``["..."]`` indexes, which would
  otherwise let a hallucinated name vouch for itself).  Class names passed to
  ``Instance.new`` count too (a new instance is named after its class);
* whether a file **creates or moves instances** at all (``Instance.new``, ``:Clone()``,
  a ``Parent`` or ``Name`` assignment) - only such files are read again by
  :mod:`.runtime_world`, which parses them to learn *where* each name is created;
* the first ``Parent`` assignment of the file (the evidence quoted when a player's
  children are unknown), and ``require(<asset id>)`` loaders (code from outside the
  project that may create anything under the services);

A name of the pool is accepted as a child only where :mod:`.runtime_world` finds that
code may parent it (the *scoped* rule); the pool alone is accepted only under run-time
containers (a player, its GUI, a character), where code with an unknown parent may put it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

_STRING = re.compile(r""""([^"\\\r\n]{1,100})"|'([^'\\\r\n]{1,100})'""")
# A path look-up right before a string: its argument names a child, it creates nothing.
_LOOKUP_BEFORE = re.compile(
    r"(?:WaitForChild|FindFirstChild|FindFirstAncestor|GetService|FindFirstChildOfClass|FindFirstChildWhichIsA"
    r"|FindFirstAncestorOfClass|FindFirstAncestorWhichIsA|FindService)\s*\(\s*$|\[\s*$"
)
#: code that creates, clones, renames or moves an instance (Roblox's ``Instance.new``,
#: ``Instance:Clone``, the ``Parent`` and ``Name`` properties; ``Parent =`` also inside
#: the property tables that UI libraries and helpers take)
# (each pattern starts with a literal, which the regular expression engine finds fast; the
# word boundary before it is checked by hand)
_PARENT_SET = re.compile(r"Parent\s*=(?!=)")
_CREATES = (re.compile(r"Instance\.new\s*\("), re.compile(r"Clone\s*\("), re.compile(r"\.Name\s*=(?!=)"))
_NEW_WITH_PARENT = re.compile(r"Instance\.new\s*\(\s*[^()]*,")
_ASSET_REQUIRE = re.compile(r"require\s*\(\s*(\d{3,})\s*\)")


def _word_start(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def _first_parent_set(text: str) -> int:
    """Offset of the first ``Parent =`` (a property set, not ``==``), or -1."""
    for m in _PARENT_SET.finditer(text):
        if _word_start(text, m.start()):
            return m.start()
    return -1


def created_names(text: str) -> set[str]:
    """String-literal contents of ``text`` that are not arguments of path look-ups."""
    out: set[str] = set()
    before = _LOOKUP_BEFORE.search
    for m in _STRING.finditer(text):
        start = m.start()
        if before(text, max(0, start - 48), start) is None:
            out.add(m.group(1) if m.group(1) is not None else m.group(2))
    return out


@dataclass(slots=True)
class FileScan:
    """What the text-level scan learns about one script (see the module docstring).

    ``names``: the file's pool names; ``creates``: it creates, clones, renames or moves
    instances; ``parent_line``: 1-based line of its first ``Parent`` assignment (or
    ``Instance.new`` with a parent argument), 0 when none; ``assets``: ``(line, asset
    id)`` of each ``require(<number>)``."""

    names: set[str]
    creates: bool = False
    parent_line: int = 0
    assets: list[tuple[int, str]] = field(default_factory=list)


def scan_text(text: str) -> FileScan:
    """:class:`FileScan` of ``text``."""
    scan = FileScan(created_names(text))
    for m in _ASSET_REQUIRE.finditer(text):
        if _word_start(text, m.start()):
            scan.assets.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    parent_at = _first_parent_set(text)
    if parent_at < 0 and not any(p.search(text) for p in _CREATES):
        return scan
    scan.creates = True
    m = _NEW_WITH_PARENT.search(text)
    firsts = [at for at in (parent_at, m.start() if m is not None else -1) if at >= 0]
    if firsts:
        scan.parent_line = text.count("\n", 0, min(firsts)) + 1
    return scan


class RuntimeNames:
    """Per-project cache of :class:`FileScan` over every script file, and the entry point
    to the run-time world (:meth:`names`).

    ``files`` returns the script paths to scan (called lazily, on first use); ``read``
    reads one of them (missing or unreadable files count as empty); ``project`` returns
    the :class:`~luaguard.project.index.ProjectIndex` (``None``: names only, no scoping).
    Open editor buffers override disk through :meth:`set_text`.

    A count of the files naming each name is kept up to date as files and buffers
    change, so membership tests do not rebuild the union over the project after every
    keystroke (with 50,000 files that rebuild took ~25 ms).
    """

    def __init__(self, files: Callable[[], Iterable[Path]], read: Callable[[Path], str | None],
                 project: Callable[[], object] | None = None) -> None:
        self._files = files
        self._read = read
        self._project = project or (lambda: None)
        self._per_file: dict[Path, FileScan] | None = None
        self._overrides: dict[Path, FileScan] = {}
        self._override_texts: dict[Path, str] = {}
        self._union: frozenset[str] | None = None
        self._counts: Counter[str] | None = None
        self._world = None
        #: bumped whenever what any file says changes (caches keyed on it)
        self.version = 0

    # -- scanning ----------------------------------------------------------------------
    def _scan(self, text: str) -> FileScan:
        return scan_text(text)

    def _ensure(self) -> dict[Path, FileScan]:
        if self._per_file is None:
            per_file: dict[Path, FileScan] = {}
            for path in self._files():
                text = self._read(path)
                if text:
                    per_file[path] = self._scan(text)
            self._per_file = per_file
        return self._per_file

    def scans(self) -> dict[Path, FileScan]:
        """``{path: FileScan}`` over the project, open buffers replacing their files."""
        per_file = self._ensure()
        if not self._overrides:
            return per_file
        merged = dict(per_file)
        merged.update(self._overrides)
        return merged

    def text(self, path: Path) -> str | None:
        """The current text of ``path`` (an open buffer's, else the file's)."""
        got = self._override_texts.get(path)
        return got if got is not None else self._read(path)

    def _effective(self, path: Path) -> set[str]:
        if path in self._overrides:
            return self._overrides[path].names
        got = (self._per_file or {}).get(path)
        return got.names if got is not None else set()

    def _counter(self) -> Counter[str]:
        if self._counts is None:
            counts: Counter[str] = Counter()
            for scan in self.scans().values():
                counts.update(scan.names)
            self._counts = counts
        return self._counts

    def _change(self, path: Path, apply: Callable[[], None]) -> None:
        """Run ``apply`` (which changes what ``path`` says) and update the counts."""
        old = self._effective(path)
        apply()
        self.version += 1
        if self._world is not None:
            self._world.forget(path)
        new = self._effective(path)
        if old == new:
            return  # the same names: the union stands (the world it carries is updated in place)
        self._union = None
        counts = self._counts
        if counts is None:
            return
        for name in old - new:
            counts[name] -= 1
            if counts[name] <= 0:
                del counts[name]
        for name in new - old:
            counts[name] += 1

    # -- queries -------------------------------------------------------------------------
    def pool(self) -> Counter[str]:
        """Name -> number of files naming it (open buffers replacing their files)."""
        return self._counter()

    def names(self) -> "WorldNames":
        """The pool as a frozenset that also carries the run-time world
        (:class:`WorldNames`): pass it wherever run-time names are taken (the linter's
        resolver, the guard's path space) and they follow the same scoped rule."""
        if self._union is None:
            self._union = WorldNames(self._counter(), self.world())
        return self._union  # type: ignore[return-value]

    def view(self) -> "NamesView":
        """A live ``in``-only view of :meth:`names` (no copy of the union)."""
        return NamesView(self._counter(), frozenset(), self.world())

    def world(self):
        """The project's :class:`~luaguard.checks.runtime_world.RuntimeWorld` (built once,
        kept up to date as files change)."""
        if self._world is None:
            from .runtime_world import RuntimeWorld

            self._world = RuntimeWorld(self)
        return self._world

    def project(self):
        return self._project()

    # -- updates -------------------------------------------------------------------------
    def set_text(self, path: Path, text: str | None) -> None:
        """Use ``text`` for ``path`` (an open buffer); ``None`` drops the override."""
        if text is None:
            self._override_texts.pop(path, None)
            self._change(path, lambda: self._overrides.pop(path, None))
        else:
            scan = self._scan(text)
            self._override_texts[path] = text

            def apply() -> None:
                self._overrides[path] = scan

            self._change(path, apply)

    def file_changed(self, path: Path) -> None:
        """Re-read ``path`` from disk (created, changed or deleted)."""
        per_file = self._per_file
        if per_file is None:
            return
        text = self._read(path)

        def apply() -> None:
            if text:
                per_file[path] = self._scan(text)
            else:
                per_file.pop(path, None)

        self._change(path, apply)

    def invalidate(self) -> None:
        """Forget everything read from disk (after a full re-index)."""
        self._per_file = None
        self._union = None
        self._counts = None
        self._world = None
        self.version += 1


class NamesView:
    """Set-like membership over name counts, optionally with extra names (a file's own),
    carrying the run-time world (``world``, ``None`` for names only) and the file's own
    facts (``own``: a :class:`~luaguard.checks.runtime_world.OwnFacts` or ``None``).

    ``in`` answers "does some script name it" (the unscoped pool); :func:`scoped_verdict`
    answers the scoped question "may code create it *there*" (see :mod:`.runtime_world`)."""

    __slots__ = ("_counts", "_extra", "world", "own")

    def __init__(self, counts: Counter[str], extra: frozenset[str] | set[str] = frozenset(), world=None,
                 own=None) -> None:
        self._counts = counts
        self._extra = extra
        self.world = world
        self.own = own

    def __contains__(self, name: object) -> bool:
        return name in self._extra or name in self._counts

    def __iter__(self) -> Iterator[str]:
        yield from self._counts
        for name in self._extra:
            if name not in self._counts:
                yield name

    def __len__(self) -> int:
        return len(self._counts) + sum(1 for n in self._extra if n not in self._counts)

    def with_names(self, extra: set[str], own=None) -> "NamesView":
        """This view plus ``extra`` (and the file's own facts ``own``)."""
        return NamesView(self._counts, extra, self.world, own)


class WorldNames(frozenset):
    """The pool as a frozenset (``in``, iteration, set algebra as before) carrying the
    run-time world: ``world`` and ``own`` as in :class:`NamesView`.  Equal only to another
    :class:`WorldNames` of the same world, own facts and pool (a guard built before a file
    changed keeps its name tables until the pool changes, as it did with unscoped names);
    against a plain set, equal when the names are (caches keyed on run-time names also
    compare the type: scoped and unscoped names do not mix)."""

    def __new__(cls, names: Iterable[str], world=None, own=None):
        obj = super().__new__(cls, names)
        obj.world = world
        obj.own = own
        return obj

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WorldNames):
            return self.world is other.world and self.own is other.own and frozenset.__eq__(self, other)
        return frozenset.__eq__(self, other)  # against a plain set: its names, as before

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = frozenset.__hash__

    def with_own(self, own) -> "WorldNames":
        """These names plus the file's own facts ``own`` (its literal names included)."""
        extra = own.names if own is not None else frozenset()
        return WorldNames(frozenset.union(self, extra), self.world, own)

    def verdict(self, node, name: str):
        return scoped_verdict(self, node, name)


def scoped_verdict(names, node, name: str):
    """``names.verdict(node, name)`` for any run-time names object: the world's verdict
    when it carries one; for a plain set (callers that know no world), a name of the set
    is accepted everywhere (the unscoped rule)."""
    world = getattr(names, "world", None)
    if world is None:
        from .runtime_world import CREATED, Verdict

        return Verdict(CREATED, "a script names it") if name in names else None
    return world.verdict(node, name, getattr(names, "own", None))

