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
* the names it looks up with ``WaitForChild``/``FindFirstChild``; and, on demand
  (:class:`Reads`: searched per question, not kept per file), the **path steps** scripts
  read - ``(parent, child)`` of ``Remotes.Hit``, ``Remotes:WaitForChild("Hit")``,
  ``Remotes["Hit"]``, ``GetService("Players").X``, the parent as written (lower-case) or,
  for a local bound to a chain (``local remotes = RS:WaitForChild("Remotes")``), as the
  name that chain ends in.  Another script reading a name is evidence the name exists (a
  RemoteEvent made in Studio is read by every script that uses it); an agent's invented
  name is read nowhere else;
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

_STR = r"""["']([^"'\\\r\n]{1,100})["']"""
#: a name looked up by name (the argument of ``WaitForChild``/``FindFirstChild``)
_LOOKED_UP = re.compile(r"(?:WaitForChild|FindFirstChild)\s*\(\s*" + _STR)
#: a local bound to a chain, and the name the chain ends in (``.Name`` or a look-up's string)
_ALIAS = re.compile(r"^[ \t]*local\s+([A-Za-z_]\w*)\s*(?::[^=\n]{0,60})?=[^\n;]*?(?:\.\s*([A-Za-z_]\w*)|\(\s*"
                    + _STR + r"[^()\n]{0,40}\))[ \t]*(?:::[^\n]*)?$", re.M)
#: what stands before a step: an identifier, or a look-up's string and its closing parenthesis
_BEFORE_IDENT = re.compile(r"([A-Za-z_]\w*)\s*$")
#: Nevermore's ``bootstrapGame(<root>)`` and the name its argument ends in (``ServerScriptService.Game``,
#: ``SSS:WaitForChild("Game")``, or a local named in the same file)
_BOOTSTRAP = re.compile(r"""bootstrapGame\s*\(\s*([A-Za-z_][\w.]*(?:\s*:\s*(?:WaitForChild|FindFirstChild)\s*\(\s*["'][^"'\\\r\n]{1,100}["']\s*\))?)\s*\)""")
_BOOTSTRAP_LOOKUP = re.compile(r"""["']([^"'\\\r\n]{1,100})["']\s*\)$""")
_BEFORE_CALL = re.compile(r"""(?:WaitForChild|FindFirstChild|GetService|FindService)\s*\(\s*["']([^"'\\\r\n]{1,100})["'][^()\n]{0,40}\)\s*$""")


def _word_start(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def _first_parent_set(text: str) -> int:
    """Offset of the first ``Parent =`` (a property set, not ``==``), or -1."""
    for m in _PARENT_SET.finditer(text):
        if _word_start(text, m.start()):
            return m.start()
    return -1


_LAST_CREATED: tuple[str, frozenset[str]] | None = None


def created_names(text: str) -> set[str]:
    """String-literal contents of ``text`` that are not arguments of path look-ups (a new
    set; the last text's answer is remembered: an editor buffer is scanned for every
    project that judges it, and again for the lint)."""
    global _LAST_CREATED
    last = _LAST_CREATED
    if last is not None and last[0] == text:
        return set(last[1])
    out = _created_names(text)
    _LAST_CREATED = (text, frozenset(out))
    return out


def _created_names(text: str) -> set[str]:
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

    ``names``: the file's pool names; ``looked_up``: the names it looks up with
    ``WaitForChild``/``FindFirstChild``; ``creates``: it creates, clones, renames or moves instances;
    ``parent_line``: 1-based line of its first ``Parent`` assignment (or ``Instance.new``
    with a parent argument), 0 when none; ``assets``: ``(line, asset id)`` of each
    ``require(<number>)``."""

    names: set[str]
    looked_up: set[str] = field(default_factory=set)
    creates: bool = False
    parent_line: int = 0
    assets: list[tuple[int, str]] = field(default_factory=list)


def scan_text(text: str) -> FileScan:
    """:class:`FileScan` of ``text``."""
    scan = FileScan(created_names(text), set(_LOOKED_UP.findall(text)))
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
    the files naming each pool name and looking up each name are kept as files change (with
    50,000 files a rebuild per keystroke took ~25 ms).  ``on_change(path)`` is called after
    what ``path`` says changed.  :attr:`reads` answers questions about path steps.
    """

    #: texts kept in memory for :class:`Reads`, up to this many characters in all (beyond,
    #: they are read again when needed)
    TEXT_BUDGET = 64_000_000

    def __init__(self, files: Callable[[], Iterable[Path]], read: Callable[[Path], str | None],
                 on_change: Callable[[Path], None] | None = None) -> None:
        self._files = files
        self._read = read
        self._on_change = on_change
        self._per_file: dict[Path, FileScan] | None = None
        self._overrides: dict[Path, FileScan] = {}
        self._override_texts: dict[Path, str] = {}
        self._counts: tuple[Counter, Counter] | None = None
        self._texts: dict[Path, str] = {}
        self._text_chars = 0
        #: bumped whenever what any file says changes (caches keyed on it)
        self.version = 0
        self.reads = Reads(self)
        self._bootstrapped: tuple[int, dict[str, Path]] | None = None

    # -- scanning ----------------------------------------------------------------------
    def _ensure(self) -> dict[Path, FileScan]:
        if self._per_file is None:
            per_file: dict[Path, FileScan] = {}
            for path in self._files():
                text = self._read(path)
                if text:
                    per_file[path] = scan_text(text)
                    self._keep(path, text)
            self._per_file = per_file
        return self._per_file

    def _keep(self, path: Path, text: str) -> None:
        old = self._texts.pop(path, None)
        if old is not None:
            self._text_chars -= len(old)
        if self._text_chars + len(text) <= self.TEXT_BUDGET:
            self._texts[path] = text
            self._text_chars += len(text)

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
        if got is None:
            got = self._texts.get(path)
        return got if got is not None else self._read(path)

    def _counters(self) -> tuple[Counter, Counter]:
        if self._counts is None:
            pool: Counter[str] = Counter()
            looked: Counter[str] = Counter()
            for scan in self.scans().values():
                pool.update(scan.names)
                looked.update(scan.looked_up)
            self._counts = (pool, looked)
        return self._counts

    def _change(self, path: Path, apply: Callable[[], None]) -> None:
        """Run ``apply`` (which changes what ``path`` says) and update the counts."""
        old = self.scan(path) if self._per_file is not None else _EMPTY
        apply()
        self.version += 1
        self.reads.changed(path)
        if self._on_change is not None:
            self._on_change(path)
        counts = self._counts
        if counts is None:
            return
        new = self.scan(path)
        for counter, a, b in zip(counts, (old.names, old.looked_up), (new.names, new.looked_up)):
            if a == b:
                continue
            for key in a - b:
                counter[key] -= 1
                if counter[key] <= 0:
                    del counter[key]
            for key in b - a:
                counter[key] += 1

    # -- queries -------------------------------------------------------------------------
    def pool(self) -> Counter[str]:
        """Name -> number of files naming it (open buffers replacing their files)."""
        return self._counters()[0]

    def lookup_counts(self) -> Counter[str]:
        """Name -> number of files looking it up with ``WaitForChild``/``FindFirstChild``."""
        return self._counters()[1]

    def bootstrapped(self) -> dict[str, Path]:
        """Names of the roots the project's scripts pass to Nevermore's ``bootstrapGame``
        (``bootstrapGame(ServerScriptService.Game)`` -> ``Game``; a local bound in the same
        file to such a chain is followed) -> the first file that does; remembered until a
        file changes.  ``script``/``Parent`` (a client bootstrapping its replica) name no root."""
        memo = self._bootstrapped
        if memo is not None and memo[0] == self.version:
            return memo[1]
        out: dict[str, Path] = {}
        for path in sorted(self.scans()):
            text = self.text(path)
            if not text or "bootstrapGame" not in text:
                continue
            for m in _BOOTSTRAP.finditer(text):
                arg = m.group(1)
                looked = _BOOTSTRAP_LOOKUP.search(arg)
                if looked is not None:
                    name = looked.group(1)
                else:
                    parts = arg.split(".")
                    name = parts[-1]
                    if len(parts) == 1:  # a local: the chain it is bound to
                        name = self._alias_name(text, name) or ""
                if name and name not in ("script", "Parent", "game"):
                    out.setdefault(name, path)
        self._bootstrapped = (self.version, out)
        return out

    @staticmethod
    def _alias_name(text: str, local: str) -> str | None:
        for m in _ALIAS.finditer(text):
            if m.group(1) == local:
                return m.group(2) or m.group(3)
        return None

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
                self._keep(path, text)
            else:
                per_file.pop(path, None)
                self._keep(path, "")

        self._change(path, apply)

    def adopt(self, other: "ProjectScans") -> None:
        """Start from what ``other`` (the previous snapshot's scans of the same project)
        read: its file scans, texts, open buffers and counts (copied: ``other`` stays as it
        was)."""
        if other._per_file is not None:
            self._per_file = dict(other._per_file)
            self._texts = dict(other._texts)
            self._text_chars = other._text_chars
        self._overrides = dict(other._overrides)
        self._override_texts = dict(other._override_texts)
        if other._counts is not None and other._per_file is not None:
            self._counts = tuple(Counter(c) for c in other._counts)  # type: ignore[assignment]


class Reads:
    """Where the project's scripts read a name as a path step (see the module docstring),
    searched in their texts when asked (a literal search for the name, then the text
    before each occurrence) and remembered until a file changes.  Results are the files
    that read it, so the linted file can be left out.

    What each file contributes to an answer is kept per file: when one file changes (an
    editor buffer, at every keystroke), only that file is searched again and the answers
    are merged anew in the project's file order - the same answers as a search of every
    file, without reading the others again."""

    def __init__(self, scans: ProjectScans) -> None:
        self._scans = scans
        self._version = -1
        self._memo: dict[tuple, dict] = {}
        #: ``{key: (search, {path: contribution})}``: each file's findings for a question
        self._parts: dict[tuple, tuple] = {}
        self._aliases: dict[Path, dict[str, str]] = {}
        self._changed: set[Path] = set()
        self._pending = 0

    def changed(self, path: Path) -> None:
        """``path`` now says something else (called by :class:`ProjectScans` after each
        change, which bumps its version by one)."""
        self._changed.add(path)
        self._pending += 1

    def _sync(self) -> None:
        scans = self._scans
        if self._version == scans.version:
            return
        changed = self._changed
        if self._version >= 0 and self._version + self._pending == scans.version:
            # only these files changed since the answers were computed: search them again
            texts = {p: scans.text(p) if p in scans.scans() else None for p in changed}
            for p in changed:
                self._aliases.pop(p, None)
            for search, per_file in self._parts.values():
                for p in changed:
                    per_file.pop(p, None)
                    text = texts[p]
                    if text:
                        got = search(p, text)
                        if got:
                            per_file[p] = got
        else:
            self._parts = {}
            self._aliases = {}
        self._memo = {}
        self._changed = set()
        self._pending = 0
        self._version = scans.version

    def _texts(self):
        scans = self._scans
        for path in scans.scans():
            text = scans.text(path)
            if text:
                yield path, text

    def _answer(self, key: tuple, search) -> dict[str, set[Path]]:
        """The merged answer to ``key``: ``search(path, text)`` gives one file's findings
        (names, in the order found), computed once per file and version of it."""
        self._sync()
        got = self._memo.get(key)
        if got is not None:
            return got
        parts = self._parts.get(key)
        if parts is None:
            per_file: dict[Path, list[str]] = {}
            for path, text in self._texts():
                found = search(path, text)
                if found:
                    per_file[path] = found
            parts = self._parts[key] = (search, per_file)
        per_file = parts[1]
        got = {}
        if per_file:
            for path in self._scans.scans():  # (the project's file order, as a search of every file)
                found = per_file.get(path)
                if found:
                    for name in found:
                        got.setdefault(name, set()).add(path)
        self._memo[key] = got
        return got

    def _alias_map(self, path: Path, text: str) -> dict[str, str]:
        got = self._aliases.get(path)
        if got is None:
            got = {}
            for var, dotted, called in _ALIAS.findall(text):
                target = (dotted or called).lower()
                if target != var.lower():
                    got[var.lower()] = target
            self._aliases[path] = got
        return got

    def _parent(self, path: Path, text: str, at: int) -> set[str]:
        """The parent names (lower-case) a step at ``at`` is read under: the identifier or
        look-up string before it, and what a local of that name is bound to."""
        window = text[max(0, at - 160):at]
        m = _BEFORE_IDENT.search(window)
        if m is not None:
            name = m.group(1).lower()
            alias = self._alias_map(path, text).get(name)
            return {name, alias} if alias else {name}
        m = _BEFORE_CALL.search(window)
        return {m.group(1).lower()} if m is not None else set()

    def under(self, name: str) -> dict[str, set[Path]]:
        """``{parent: files}`` of the steps that read ``name`` (``.name``, ``["name"]``,
        ``:WaitForChild("name")``/``:FindFirstChild("name")``)."""
        key = ("under", name)
        self._sync()
        got = self._memo.get(key)
        if got is not None:
            return got
        parts = self._parts.get(key)
        if parts is not None:
            return self._answer(key, parts[0])
        q = re.escape(name)
        step = re.compile(rf"""\.\s*{q}(?![A-Za-z0-9_])|[:.]\s*(?:WaitForChild|FindFirstChild)\s*\(\s*(["']){q}\1"""
                          rf"""|\[\s*(["']){q}\2\s*\]""")

        def search(path: Path, text: str) -> list[str]:
            if name not in text:
                return []
            out: dict[str, None] = {}
            for m in step.finditer(text):
                for parent in self._parent(path, text, m.start()):
                    out[parent] = None
            return list(out)

        return self._answer(key, search)

    def children(self, parent: str) -> dict[str, set[Path]]:
        """``{child: files}`` of the steps read under an instance called ``parent``
        (lower-case), or under a local bound to a chain ending in that name."""
        key = ("children", parent)
        self._sync()
        got = self._memo.get(key)
        if got is not None:
            return got

        def search(path: Path, text: str) -> list[str]:
            low = text.lower()
            if parent not in low:
                return []
            names = {parent} | {v for v, t in self._alias_map(path, text).items() if t == parent}
            pattern = re.compile(
                r"(?<![A-Za-z0-9_])(?i:" + "|".join(re.escape(n) for n in sorted(names)) + r")(?![A-Za-z0-9_])"
                r"""\s*(?:\.\s*([A-Za-z_]\w*)|[:.]\s*(?:WaitForChild|FindFirstChild)\s*\(\s*["']([^"'\\\r\n]{1,100})["']"""
                r"""|\[\s*["']([^"'\\\r\n]{1,100})["']\s*\])""")
            out: dict[str, None] = {}
            for m in pattern.finditer(text):
                out[m.group(1) or m.group(2) or m.group(3)] = None
            return list(out)

        return self._answer(key, search)


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
