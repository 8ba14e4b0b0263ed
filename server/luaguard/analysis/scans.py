"""What every script of a project says, read as text: the fast half of the run-time world.

``workspace:WaitForChild("Arena")`` is fine when some script does ``arena.Name =
"Arena"`` and parents it there: the child is not in the project files but exists while
the game runs.  This module keeps, for every script of the project, what a regular
expression over its raw text finds (comments included - an over-approximation that can
only silence findings, never add them):

* the **name pool**: string literals *outside* path look-ups (``WaitForChild``/
  ``FindFirstChild``/``GetService`` arguments and ``["..."]`` indexes, which would
  otherwise let a hallucinated name vouch for itself).  Class names passed to
  ``Instance.new`` count too (a new instance is named after its class);
* the **path steps** the script reads: ``(parent, child)`` pairs of the chains it writes
  (``Remotes.Hit``, ``Remotes:WaitForChild("Hit")``, ``game:GetService("Players")``),
  the parent written lower-case and, for a local bound once to a chain
  (``local remotes = RS:WaitForChild("Remotes")``), as the name that chain ends in; and
  the names it looks up with ``WaitForChild``/``FindFirstChild``.  Another script reading
  a name is evidence the name exists (a RemoteEvent made in Studio is read by every script
  that uses it); an agent's invented name is read nowhere else;
* whether a file **creates or moves instances** at all (``Instance.new``, ``:Clone()``,
  a ``Parent`` or ``Name`` assignment) - only such files are read again by
  :mod:`.world`, which parses them to learn *where* each name is created;
* the first ``Parent`` assignment of the file (the evidence quoted when a player's
  children are unknown), and ``require(<asset id>)`` loaders (code from outside the
  project that may create anything under the services).

:class:`ProjectScans` keeps the scans of one project up to date as files and editor
buffers change, with counts of the files naming each name (so a membership test does not
rebuild a union over the project after every keystroke).
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

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_STR = r"""(?:"[^"\\\r\n]{1,100}"|'[^'\\\r\n]{1,100}')"""
#: one step of a path chain: ``.Name``, ``["Name"]``, ``:WaitForChild("Name"...)`` /
#: ``:FindFirstChild("Name"...)`` / ``:GetService("Name")``
_STEP = (rf"""\s*(?:\.\s*(?:{_IDENT})|\[\s*{_STR}\s*\]"""
         rf"""|[:.]\s*(?:WaitForChild|FindFirstChild|GetService|FindService)\s*\(\s*{_STR}[^()\n]{{0,40}}\))""")
_CHAIN = re.compile(rf"(?<![A-Za-z0-9_.:]){_IDENT}(?:{_STEP})+")
_STEP_PARTS = re.compile(
    rf"""\.\s*({_IDENT})|\[\s*("[^"\\\r\n]{{1,100}}"|'[^'\\\r\n]{{1,100}}')\s*\]"""
    rf"""|[:.]\s*(WaitForChild|FindFirstChild|GetService|FindService)\s*\(\s*("[^"\\\r\n]{{1,100}}"|'[^'\\\r\n]{{1,100}}')""")
_LOCAL_BEFORE = re.compile(rf"local\s+({_IDENT})\s*(?::[^=\n]{{0,60}})?=\s*$")


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


def read_steps(text: str) -> tuple[set[tuple[str, str]], set[str]]:
    """``(steps, looked_up)`` of ``text``: the ``(parent, child)`` pairs of its path
    chains (``parent`` lower-case; a local bound to a chain also stands for the name the
    chain ends in) and the names passed to ``WaitForChild``/``FindFirstChild``."""
    chains: list[tuple[int, list[str]]] = []
    looked_up: set[str] = set()
    aliases: dict[str, str] = {}
    for m in _CHAIN.finditer(text):
        chain = m.group(0)
        names = [re.match(_IDENT, chain).group(0)]  # type: ignore[union-attr]
        for s in _STEP_PARTS.finditer(chain, len(names[0])):
            if s.group(1) is not None:
                names.append(s.group(1))
            elif s.group(2) is not None:
                names.append(s.group(2)[1:-1])
            else:
                name = s.group(4)[1:-1]
                names.append(name)
                if s.group(3) in ("WaitForChild", "FindFirstChild"):
                    looked_up.add(name)
        if len(names) < 2:
            continue
        chains.append((m.start(), names))
        line_start = text.rfind("\n", 0, m.start()) + 1
        local = _LOCAL_BEFORE.search(text, line_start, m.start())
        if local is not None:
            aliases[local.group(1).lower()] = names[-1].lower()
    steps: set[tuple[str, str]] = set()
    for _at, names in chains:
        for a, b in zip(names, names[1:]):
            parent = a.lower()
            steps.add((parent, b))
            alias = aliases.get(parent)
            if alias is not None and alias != parent:
                steps.add((alias, b))
    return steps, looked_up


@dataclass(slots=True)
class FileScan:
    """What the text-level scan learns about one script (see the module docstring).

    ``names``: the file's pool names; ``steps``/``looked_up``: what it reads
    (:func:`read_steps`); ``creates``: it creates, clones, renames or moves instances;
    ``parent_line``: 1-based line of its first ``Parent`` assignment (or ``Instance.new``
    with a parent argument), 0 when none; ``assets``: ``(line, asset id)`` of each
    ``require(<number>)``."""

    names: set[str]
    steps: set[tuple[str, str]] = field(default_factory=set)
    looked_up: set[str] = field(default_factory=set)
    creates: bool = False
    parent_line: int = 0
    assets: list[tuple[int, str]] = field(default_factory=list)


def scan_text(text: str) -> FileScan:
    """:class:`FileScan` of ``text``."""
    steps, looked_up = read_steps(text)
    scan = FileScan(created_names(text), steps, looked_up)
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


_EMPTY = FileScan(set())


class ProjectScans:
    """The :class:`FileScan` of every script of one project, kept up to date.

    ``files`` returns the script paths to scan (called lazily, on first use); ``read``
    reads one of them (missing or unreadable files count as empty).  Open editor buffers
    override disk through :meth:`set_text`; :meth:`file_changed` re-reads a file.  Counts of
    the files naming each pool name, reading each step and looking up each name are kept
    as files change (with 50,000 files a rebuild per keystroke took ~25 ms).
    ``on_change(path)`` is called after what ``path`` says changed.
    """

    def __init__(self, files: Callable[[], Iterable[Path]], read: Callable[[Path], str | None],
                 on_change: Callable[[Path], None] | None = None) -> None:
        self._files = files
        self._read = read
        self._on_change = on_change
        self._per_file: dict[Path, FileScan] | None = None
        self._overrides: dict[Path, FileScan] = {}
        self._override_texts: dict[Path, str] = {}
        self._counts: tuple[Counter, Counter, Counter] | None = None
        #: the steps by parent (``{parent: Counter(child)}``) and by child (files reading
        #: the child under any parent), kept with the counts
        self._by_parent: dict[str, Counter] | None = None
        self._by_child: Counter | None = None
        #: bumped whenever what any file says changes (caches keyed on it)
        self.version = 0

    # -- scanning ----------------------------------------------------------------------
    def _ensure(self) -> dict[Path, FileScan]:
        if self._per_file is None:
            per_file: dict[Path, FileScan] = {}
            for path in self._files():
                text = self._read(path)
                if text:
                    per_file[path] = scan_text(text)
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

    def scan(self, path: Path | None) -> FileScan:
        """The current scan of ``path`` (an empty one for a file the project has not)."""
        if path is None:
            return _EMPTY
        got = self._overrides.get(path)
        if got is None:
            got = self._ensure().get(path)
        return got if got is not None else _EMPTY

    def text(self, path: Path) -> str | None:
        """The current text of ``path`` (an open buffer's, else the file's)."""
        got = self._override_texts.get(path)
        return got if got is not None else self._read(path)

    def _counters(self) -> tuple[Counter, Counter, Counter]:
        if self._counts is None:
            pool: Counter[str] = Counter()
            steps: Counter[tuple[str, str]] = Counter()
            looked: Counter[str] = Counter()
            for scan in self.scans().values():
                pool.update(scan.names)
                steps.update(scan.steps)
                looked.update(scan.looked_up)
            self._counts = (pool, steps, looked)
        return self._counts

    def _step_indexes(self) -> tuple[dict[str, Counter], Counter]:
        if self._by_parent is None or self._by_child is None:
            by_parent: dict[str, Counter] = {}
            by_child: Counter[str] = Counter()
            for (parent, child), n in self.step_counts().items():
                by_parent.setdefault(parent, Counter())[child] += n
                by_child[child] += n
            self._by_parent, self._by_child = by_parent, by_child
        return self._by_parent, self._by_child

    def _change(self, path: Path, apply: Callable[[], None]) -> None:
        """Run ``apply`` (which changes what ``path`` says) and update the counts."""
        old = self.scan(path) if self._per_file is not None else _EMPTY
        apply()
        self.version += 1
        if self._on_change is not None:
            self._on_change(path)
        counts = self._counts
        if counts is None:
            return
        new = self.scan(path)
        for counter, a, b in zip(counts, (old.names, old.steps, old.looked_up), (new.names, new.steps, new.looked_up)):
            if a == b:
                continue
            for key in a - b:
                counter[key] -= 1
                if counter[key] <= 0:
                    del counter[key]
            for key in b - a:
                counter[key] += 1
        if old.steps != new.steps and self._by_parent is not None and self._by_child is not None:
            for sign, keys in ((-1, old.steps - new.steps), (1, new.steps - old.steps)):
                for parent, child in keys:
                    for counter, key in ((self._by_parent.setdefault(parent, Counter()), child), (self._by_child, child)):
                        counter[key] += sign
                        if counter[key] <= 0:
                            del counter[key]

    # -- queries -------------------------------------------------------------------------
    def pool(self) -> Counter[str]:
        """Name -> number of files naming it (open buffers replacing their files)."""
        return self._counters()[0]

    def step_counts(self) -> Counter[tuple[str, str]]:
        """``(parent, child)`` -> number of files reading that step (:func:`read_steps`)."""
        return self._counters()[1]

    def read_under(self, parent: str) -> Counter[str]:
        """Child -> number of (file, step) reads of it under an instance called ``parent``
        (lower-case), over the project."""
        return self._step_indexes()[0].get(parent) or Counter()

    def read_anywhere(self) -> Counter[str]:
        """Child -> number of (file, step) reads of it under any parent."""
        return self._step_indexes()[1]

    def lookup_counts(self) -> Counter[str]:
        """Name -> number of files looking it up with ``WaitForChild``/``FindFirstChild``."""
        return self._counters()[2]

    # -- updates -------------------------------------------------------------------------
    def set_text(self, path: Path, text: str | None) -> None:
        """Use ``text`` for ``path`` (an open buffer); ``None`` drops the override."""
        if text is None:
            self._override_texts.pop(path, None)
            self._change(path, lambda: self._overrides.pop(path, None))
        else:
            scan = scan_text(text)
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
                per_file[path] = scan_text(text)
            else:
                per_file.pop(path, None)

        self._change(path, apply)

    def adopt(self, other: "ProjectScans") -> None:
        """Start from what ``other`` (the previous snapshot's scans of the same project)
        read: its file scans, open buffers and counts (copied: ``other`` stays as it was)."""
        if other._per_file is not None:
            self._per_file = dict(other._per_file)
        self._overrides = dict(other._overrides)
        self._override_texts = dict(other._override_texts)
        if other._counts is not None and other._per_file is not None:
            self._counts = tuple(Counter(c) for c in other._counts)  # type: ignore[assignment]
            if other._by_parent is not None and other._by_child is not None:
                self._by_parent = {k: Counter(v) for k, v in other._by_parent.items()}
                self._by_child = Counter(other._by_child)


class NamesView:
    """Set-like membership over name counts, with extra names (a file's own): ``in``
    answers "does some script name it" (the unscoped pool)."""

    __slots__ = ("_counts", "_extra")

    def __init__(self, counts: Counter[str], extra: frozenset[str] | set[str] = frozenset()) -> None:
        self._counts = counts
        self._extra = extra

    def __contains__(self, name: object) -> bool:
        return name in self._extra or name in self._counts

    def __iter__(self) -> Iterator[str]:
        yield from self._counts
        for name in self._extra:
            if name not in self._counts:
                yield name

    def __len__(self) -> int:
        return len(self._counts) + sum(1 for n in self._extra if n not in self._counts)
