"""Unified diffs applied in memory to project files, then linted.

Format (GNU diff / ``git diff``): ``--- old`` / ``+++ new`` file headers (``a/`` and
``b/`` prefixes are dropped when both sides carry them, a tab and timestamp after the
name are ignored, ``/dev/null`` marks an added or deleted file), ``@@ -l,s +l,s @@``
hunks of `` ``/``-``/``+`` lines, ``\\ No newline at end of file`` markers.  Hunks
without file headers apply to the file the caller names.

An **already applied** diff (``git diff | luaguard check --diff -`` in a working tree: the
files on disk are the diff's new side) is recognised per file (:func:`_already_applied`):
the new side's lines are what the file holds and undoing the hunks gives a text the diff
turns back into the file; the text before the change is then rebuilt by undoing them, and
the change is judged as for a diff that applies.  An added file is applied when the file
on disk is the hunk's text; a deleted one when it is gone and another file of the diff is
applied.  Where both directions fit (a hunk that only adds lines after its context), the
diff is taken as applied when its new side is on disk at exactly the lines its headers
name.  ``DiffReport.applied`` names those files.

Applying: each hunk's old lines (context and ``-``) must match the file at the line the
header gives, shifted by the offset of the hunks before it; if not, the nearest place
where they match exactly is used (as ``patch`` does with an offset), then the nearest
place where they match ignoring trailing whitespace.  A hunk that matches nowhere is a
``hunk_does_not_apply`` finding naming the hunk, its header, its line in the diff and the
first file line that differs; the other hunks still apply.  Nothing is written to disk.

Reporting: every file the diff adds or changes is linted as a whole (patch mode, against
a view of the index in which added files exist and deleted ones do not, so a new module
is a valid ``require`` target), and so is its text before the change; reported are the
findings the change **introduced** (:mod:`luaguard.introduced`: a finding of the new text
whose rule, message without line numbers and covered text the old text did not have as
often).  A finding that was already there is never reported, wherever the change moved
it; one the change causes elsewhere in the file (a removed declaration, an unclosed
block) is.  An added file has no old text: every finding counts.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import Finding, Position, Range, Severity
from ..text import decode_source
from . import model as M
from ..introduced import changed_lines
from .calls import lint_as, lint_change
from .overlay import DirMap, Overlay
from .paths import PathError, parse_path

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@dataclass(slots=True)
class Hunk:
    """One hunk: 1-based ``old_start``/``new_start`` as in the header; ``lines`` are
    ``(tag, text)`` with tag ``" "``, ``"-"`` or ``"+"``; ``diff_line`` is the 1-based line
    of the ``@@`` header in the diff; ``number`` counts hunks per file from 1."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    header: str
    diff_line: int
    number: int
    lines: list[tuple[str, str]] = field(default_factory=list)
    broken: str | None = None


@dataclass(slots=True)
class FilePatch:
    """The hunks for one file; ``old_path``/``new_path`` are ``None`` for ``/dev/null``."""

    old_path: str | None
    new_path: str | None
    diff_line: int
    hunks: list[Hunk] = field(default_factory=list)


@dataclass(slots=True)
class FileResult:
    """One file after the diff: ``status`` is ``"modified" | "added" | "deleted"``;
    ``findings`` are the reported ones (positions in ``text``, the new content)."""

    path: str
    status: str
    findings: list[Finding] = field(default_factory=list)
    text: str | None = None
    changed_lines: frozenset[int] = frozenset()


@dataclass(slots=True)
class DiffReport:
    """Everything a diff check found: ``problems`` are findings about the diff itself
    (hunks that do not apply, bad headers, unknown or outside paths)."""

    files: list[FileResult] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    #: files the diff was already applied to on disk (root-relative), judged as applied
    applied: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        """Diff problems first, then each file's findings."""
        out = list(self.problems)
        for f in self.files:
            out.extend(f.findings)
        return out


def _problem(rule: str, message: str, path: str | None, line: int = 0) -> Finding:
    pos = Position(max(line, 0), 0)
    return Finding(rule, Severity.ERROR, Range(pos, pos), message, file=path)


def _header_path(raw: str) -> str | None:
    name = raw.split("\t", 1)[0].rstrip()
    if name.startswith('"') and name.endswith('"') and len(name) >= 2:
        name = name[1:-1]
    if name == "/dev/null":
        return None
    return name


def parse_unified_diff(text: str, default_path: str | None = None) -> tuple[list[FilePatch], list[Finding]]:
    """Parse ``text``; returns the file patches and ``invalid_diff`` findings (file
    ``None``, line = the diff's 0-based line).  Never raises."""
    lines = text.splitlines()
    patches: list[FilePatch] = []
    problems: list[Finding] = []
    current: FilePatch | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
            old, new = _header_path(line[4:]), _header_path(lines[i + 1][4:])
            if (old is None or old.startswith("a/")) and (new is None or new.startswith("b/")) and (old or new):
                old = old[2:] if old else None
                new = new[2:] if new else None
            current = FilePatch(old, new, i + 1)
            patches.append(current)
            i += 2
            continue
        if line.startswith("@@"):
            m = _HUNK.match(line)
            if m is None:
                problems.append(_problem(M.INVALID_DIFF, f"Diff line {i + 1}: malformed hunk header {line[:60]!r} "
                                                         f"(expected '@@ -start,count +start,count @@').", None, i))
                i += 1
                continue
            if current is None:
                if default_path is None:
                    problems.append(_problem(M.INVALID_DIFF, f"Diff line {i + 1}: a hunk comes before any '---'/'+++' "
                                                             f"file header, and no target file was given.", None, i))
                    i += 1
                    continue
                current = FilePatch(default_path, default_path, i + 1)
                patches.append(current)
            old_len = int(m.group(2)) if m.group(2) is not None else 1
            new_len = int(m.group(4)) if m.group(4) is not None else 1
            header = line[: line.index("@@", 2) + 2]
            hunk = Hunk(int(m.group(1)), old_len, int(m.group(3)), new_len, header, i + 1, len(current.hunks) + 1)
            old_rem, new_rem = old_len, new_len
            j = i + 1
            while j < n and (old_rem > 0 or new_rem > 0):
                body = lines[j]
                if body.startswith("\\"):
                    j += 1
                    continue
                tag = body[:1] if body else " "
                if tag == " ":
                    old_rem -= 1
                    new_rem -= 1
                elif tag == "-":
                    if body.startswith("--- ") and j + 1 < n and lines[j + 1].startswith("+++ ") and old_rem <= 0:
                        break
                    old_rem -= 1
                elif tag == "+":
                    new_rem -= 1
                else:
                    break
                hunk.lines.append((tag, body[1:]))
                j += 1
            while j < n and lines[j].startswith("\\"):
                j += 1
            if old_rem != 0 or new_rem != 0:
                hunk.broken = (f"its header {hunk.header} announces {old_len} old and {new_len} new lines, but the body "
                               f"has {old_len - old_rem} and {new_len - new_rem}")
            current.hunks.append(hunk)
            i = j
            continue
        i += 1
    if not patches and not problems:
        problems.append(_problem(M.INVALID_DIFF, "The diff has no hunks ('@@ -start,count +start,count @@' lines).", None, 0))
    return patches, problems


def _find(seq: list[str], lines: list[str], expected: int, lo: int, *, loose: bool) -> int | None:
    """Nearest ``p >= lo`` to ``expected`` where ``lines[p:p+len(seq)]`` equals ``seq``."""
    m = len(seq)
    hi = len(lines) - m
    if m == 0:
        return min(max(expected, lo), len(lines))
    if hi < lo:
        return None
    if loose:
        key = [s.rstrip() for s in seq]
        norm = lambda p: [s.rstrip() for s in lines[p:p + m]]  # noqa: E731
    else:
        key = seq
        norm = lambda p: lines[p:p + m]  # noqa: E731
    first = key[0]
    cands = [p for p in range(lo, hi + 1) if (lines[p].rstrip() if loose else lines[p]) == first]
    cands.sort(key=lambda p: (abs(p - expected), p))
    for p in cands:
        if norm(p) == key:
            return p
    return None


def apply_hunks(old_text: str, fp: FilePatch, shown: str) -> tuple[str, set[int], list[int], list[Finding]]:
    """Apply ``fp``'s hunks to ``old_text``.

    Returns ``(new_text, changed new lines (0-based), old->new line map (-1 = removed),
    hunk_does_not_apply findings)``.
    """
    crlf = "\r\n" in old_text
    old_lines = old_text.splitlines()
    trailing = old_text.endswith(("\n", "\r")) or not old_text
    out: list[str] = []
    changed: set[int] = set()
    line_map = [-1] * len(old_lines)
    problems: list[Finding] = []
    pos = 0
    offset = 0
    for h in fp.hunks:
        if h.broken:
            problems.append(_problem(M.HUNK_DOES_NOT_APPLY, f"Hunk {h.number} of {shown} ({h.header}, diff line {h.diff_line}) "
                                                            f"is malformed: {h.broken}.", shown, max(h.old_start - 1, 0)))
            continue
        seq = [t for tag, t in h.lines if tag != "+"]
        base = (h.old_start - 1 if h.old_len > 0 else h.old_start)
        expected = base + offset
        at = _find(seq, old_lines, expected, pos, loose=False)
        if at is None:
            at = _find(seq, old_lines, expected, pos, loose=True)
        if at is None:
            message, line = _mismatch(h, seq, old_lines, expected, shown)
            problems.append(_problem(M.HUNK_DOES_NOT_APPLY, message, shown, min(max(line, 0), max(len(old_lines) - 1, 0))))
            continue
        for k in range(pos, at):
            line_map[k] = len(out)
            out.append(old_lines[k])
        k = at
        for tag, t in h.lines:
            if tag == " ":
                line_map[k] = len(out)
                out.append(old_lines[k])
                k += 1
            elif tag == "-":
                changed.add(len(out))
                k += 1
            else:
                changed.add(len(out))
                out.append(t)
        pos = k
        offset = at - base
    for k in range(pos, len(old_lines)):
        line_map[k] = len(out)
        out.append(old_lines[k])
    sep = "\r\n" if crlf else "\n"
    new_text = sep.join(out) + (sep if out and trailing else "")
    last = max(len(out) - 1, 0)
    return new_text, {min(c, last) for c in changed}, line_map, problems


def _mismatch(h: Hunk, seq: list[str], lines: list[str], expected: int, shown: str) -> tuple[str, int]:
    """The message for a hunk that matches nowhere, and the 0-based file line it names."""
    head = f"Hunk {h.number} of {shown} ({h.header}, diff line {h.diff_line}) does not apply"
    if expected >= len(lines):
        return (f"{head}: it starts at line {expected + 1}, but the file has only {len(lines)} lines. "
                f"Read the file again and regenerate the diff.", len(lines) - 1)
    for k, want in enumerate(seq):
        idx = expected + k
        have = lines[idx] if 0 <= idx < len(lines) else None
        if have is None:
            return (f"{head}: line {idx + 1} is past the end of the file ({len(lines)} lines). Read the file again "
                    f"and regenerate the diff.", len(lines) - 1)
        if have.rstrip() != want.rstrip():
            return (f"{head}: line {idx + 1} of the file is {_short(have)} but the hunk expects {_short(want)}, "
                    f"and its lines match nowhere else. Read the file again and regenerate the diff.", idx)
    return f"{head}: its lines do not match the file. Read the file again and regenerate the diff.", expected


def _short(s: str) -> str:
    s = s.strip()
    return repr(s if len(s) <= 60 else s[:57] + "...")


# ------------------------------------------------------------------------------------------
def _resolve_file(engine, raw: str, problems: list[Finding]) -> str | None:
    """Root-relative path of a diff/patch target, or ``None`` after adding a problem."""
    root = os.fspath(engine.root) if engine.root is not None else None
    project = engine.project
    services = project.api.services if project is not None else frozenset()
    try:
        ref = parse_path(raw, root, services)
    except PathError as exc:
        problems.append(_problem(exc.code, str(exc), raw))
        return None
    if ref.form == "instance":
        node, rest = project.resolve_partial(ref.text) if project is not None else (None, [])
        rel = project.file_for_instance(node) if node is not None and not rest else None
        if rel is None:
            problems.append(_problem(M.UNKNOWN_PATH, f"'{raw}' names no script file of the project.", raw))
        return rel
    return ref.text


def _read(engine, rel: str) -> str | None:
    if engine.root is None:
        return None
    from ..files import read_bytes

    try:
        data = read_bytes(Path(engine.root) / rel, root=engine.root)
    except (OSError, ValueError):
        return None
    return decode_source(data).text


@dataclass(frozen=True, slots=True)
class TextChange:
    """One file's change given as texts (an agent's ``Write``/``Edit`` applied in memory):
    ``old_path``/``new_path`` as the agent named them (root-relative, absolute inside the
    root, or an instance path; ``None`` for a file that did not exist / is deleted);
    ``old_text`` ``None`` means "read it from disk"."""

    old_path: str | None
    new_path: str | None
    new_text: str | None
    old_text: str | None = None


def check_diff(engine, diff_text: str, default_path: str | None = None, dirmap: DirMap | None = None) -> DiffReport:
    """Apply ``diff_text`` in memory to the project of ``engine`` and lint the result
    (see the module docstring).  ``default_path`` (root-relative, absolute inside the
    root, or an instance path) is the target of hunks without file headers.  Counts only
    reported findings into ``engine.stats``.  Never raises on any diff."""
    report = DiffReport()
    default_rel = None
    if default_path is not None:
        default_rel = _resolve_file(engine, default_path, report.problems)
        if default_rel is None:
            return report
    patches, probs = parse_unified_diff(diff_text, default_rel)
    report.problems.extend(probs)
    todo: list[_Pending] = []
    applied = {id(fp): _already_applied(engine, fp) for fp in patches if fp.new_path is not None}
    any_applied = any(v is not None for v in applied.values())
    for fp in patches:
        done = applied.get(id(fp))
        if done is None and fp.new_path is None and any_applied and fp.old_path is not None:
            done = _deleted_already(engine, fp)
        if done is not None:
            report.applied.append(done.new_rel or done.old_rel or "")
            todo.append(done)
            continue
        old_raw, new_raw = fp.old_path, fp.new_path
        if old_raw is None and new_raw is None:
            report.problems.append(_problem(M.INVALID_DIFF, f"Diff line {fp.diff_line}: both sides are /dev/null.", None,
                                            fp.diff_line - 1))
            continue
        sides = _sides(engine, old_raw, new_raw, report)
        if sides is None:
            continue
        old_rel, new_rel, old_text = sides
        shown = new_rel or old_rel
        new_text, changed, _line_map, hunk_probs = apply_hunks(old_text if old_text is not None else "", fp, shown)
        report.problems.extend(hunk_probs)
        todo.append(_Pending(old_rel, new_rel, old_text, new_text if new_rel is not None else None, changed))
    _judge(engine, todo, report, dirmap)
    return report


def _reversed(fp: FilePatch) -> FilePatch:
    """``fp`` undone: old and new sides swapped."""
    swap = {"-": "+", "+": "-", " ": " "}
    out = FilePatch(fp.new_path, fp.old_path, fp.diff_line)
    for h in fp.hunks:
        out.hunks.append(Hunk(h.new_start, h.new_len, h.old_start, h.old_len, h.header, h.diff_line, h.number,
                              [(swap[tag], t) for tag, t in h.lines], h.broken))
    return out


def _new_side_at_header(fp: FilePatch, lines: list[str]) -> bool:
    """Whether every hunk's new side (context and ``+`` lines) is in ``lines`` at exactly the
    line its header names."""
    for h in fp.hunks:
        seq = [t for tag, t in h.lines if tag != "-"]
        at = h.new_start - 1 if h.new_len > 0 else h.new_start
        if lines[at:at + len(seq)] != seq:
            return False
    return True


def _already_applied(engine, fp: FilePatch) -> "_Pending | None":
    """The change of ``fp`` (an added or changed file) when the file on disk already holds
    its new side (see the module docstring), else ``None``.  Never raises."""
    if not fp.hunks or any(h.broken for h in fp.hunks):
        return None
    scratch: list[Finding] = []
    old_rel = _resolve_file(engine, fp.old_path, scratch) if fp.old_path is not None else None
    new_rel = old_rel if fp.new_path == fp.old_path else _resolve_file(engine, fp.new_path, scratch)
    if scratch or new_rel is None:
        return None
    disk = _read(engine, new_rel)
    if disk is None:
        return None
    lines = disk.splitlines()
    if old_rel is None:  # an added file: the file is the hunks' text
        if lines == [t for h in fp.hunks for tag, t in h.lines if tag != "-"]:
            return _Pending(None, new_rel, None, disk, None)
        return None
    if old_rel != new_rel and _read(engine, old_rel) is not None:
        return None  # a rename whose old file is still there is not applied
    forward_ok = old_rel == new_rel and not apply_hunks(disk, fp, new_rel)[3]
    old_text, _changed, _map, problems = apply_hunks(disk, _reversed(fp), new_rel)
    if problems:
        return None
    again, changed, _map, problems = apply_hunks(old_text, fp, new_rel)
    if problems or again.splitlines() != lines:
        return None
    if forward_ok and not _new_side_at_header(fp, lines):
        return None
    return _Pending(old_rel, new_rel, old_text, disk, changed)


def _deleted_already(engine, fp: FilePatch) -> "_Pending | None":
    """A deletion whose file is already gone (in a diff other files of which are applied)."""
    scratch: list[Finding] = []
    old_rel = _resolve_file(engine, fp.old_path, scratch)
    if scratch or old_rel is None or _read(engine, old_rel) is not None:
        return None
    return _Pending(old_rel, None, None, None, None)


def check_changes(engine, changes: list[TextChange], dirmap: DirMap | None = None) -> DiffReport:
    """Like :func:`check_diff` for changes given as whole texts (what an agent's file tools
    produce): each file is judged on what the change introduces; a file that did not
    exist is judged whole.  Never raises."""
    report = DiffReport()
    todo: list[_Pending] = []
    for ch in changes:
        if ch.old_path is None and ch.new_path is None:
            continue
        sides = _sides(engine, ch.old_path, ch.new_path, report, given_old=ch.old_text, diff=False)
        if sides is None:
            continue
        old_rel, new_rel, old_text = sides
        todo.append(_Pending(old_rel, new_rel, old_text, ch.new_text if new_rel is not None else None, None))
    _judge(engine, todo, report, dirmap)
    return report


@dataclass(slots=True)
class _Pending:
    old_rel: str | None
    new_rel: str | None
    old_text: str | None      # None: the file did not exist
    new_text: str | None      # None: the file is deleted
    changed: set[int] | None  # changed lines of new_text when a diff says so


def _sides(engine, old_raw: str | None, new_raw: str | None, report: DiffReport,
           given_old: str | None = None, diff: bool = True) -> tuple[str | None, str | None, str | None] | None:
    """``(old_rel, new_rel, old_text)`` of one file change, or ``None`` after a problem.
    ``diff``: a diff that adds an existing file is a problem (a caller giving texts knows
    better: the file may be on disk already, written by the change)."""
    project = engine.project
    old_rel = _resolve_file(engine, old_raw, report.problems) if old_raw is not None else None
    if new_raw is not None and new_raw == old_raw:
        new_rel = old_rel
    else:
        new_rel = _resolve_file(engine, new_raw, report.problems) if new_raw is not None else None
    if (old_raw is not None and old_rel is None) or (new_raw is not None and new_rel is None):
        return None
    if old_rel is None:  # added file
        existing = _read(engine, new_rel) if new_rel and diff else None
        if existing is not None:
            report.problems.append(_problem(M.INVALID_DIFF, f"The diff creates {new_rel}, which already exists.", new_rel))
            return None
        return None, new_rel, None
    old_text = given_old if given_old is not None else _read(engine, old_rel)
    if old_text is None:
        known = project is not None and old_rel in project.file_instances
        why = "cannot be read" if known else "does not exist in the project"
        report.problems.append(_problem(M.UNKNOWN_PATH, f"The diff changes {old_rel}, which {why}.", old_rel))
        return None
    return old_rel, new_rel, old_text


def _judge(engine, todo: list[_Pending], report: DiffReport, dirmap: DirMap | None) -> None:
    """Place added/renamed files in an overlay, drop deleted ones, then lint every changed
    Luau file and keep what the change introduced (:func:`~.calls.lint_change`)."""
    project = engine.project
    overlay = Overlay(project, dirmap) if project is not None else None
    lint: list[tuple[_Pending, str]] = []
    for p in todo:
        if p.new_text is None or p.new_rel is None:
            report.files.append(FileResult(p.old_rel or "", "deleted"))
            if overlay is not None and p.old_rel is not None:
                for node in overlay.instances_for_file(p.old_rel):
                    overlay.delete(node)
            continue
        status = "added" if p.old_rel is None else "modified"
        if overlay is not None and p.old_rel is not None and p.old_rel != p.new_rel:  # rename
            for node in overlay.instances_for_file(p.old_rel):
                overlay.delete(node)
            status = "added"
        if overlay is not None and status == "added" and not overlay.instances_for_file(p.new_rel):
            overlay.place_file(p.new_rel)
        lint.append((p, status))
    for p, status in lint:
        rel, new_text = p.new_rel, p.new_text
        changed = p.changed if p.changed is not None else changed_lines(p.old_text or "", new_text)
        if not rel.endswith((".luau", ".lua")):
            report.files.append(FileResult(rel, status, [], new_text, frozenset(changed)))
            continue
        nodes = overlay.instances_for_file(rel) if overlay is not None else []
        node = nodes[0] if nodes else None
        # a renamed file is judged against its old text too: the move itself adds nothing
        kept = lint_change(engine, p.old_text, new_text, node, rel, rel, overlay, changed=set(changed))
        report.files.append(FileResult(rel, status, kept, new_text, frozenset(changed)))
    for pr in report.problems:
        engine.stats[pr.rule] += 1


def check_content(engine, path: str, content: str, dirmap: DirMap | None = None) -> DiffReport:
    """Lint ``content`` as the full new text of ``path`` (patch mode); a path the project
    does not map yet is placed in a view of the index first (Rojo's rules), so ``script``
    resolves for new files too.  Every finding is reported."""
    report = DiffReport()
    rel = _resolve_file(engine, path, report.problems)
    if rel is None:
        return report
    project = engine.project
    overlay = Overlay(project, dirmap) if project is not None else None
    status = "modified"
    if overlay is not None and not overlay.instances_for_file(rel):
        overlay.place_file(rel)
        status = "added"
    nodes = overlay.instances_for_file(rel) if overlay is not None else []
    findings = lint_as(engine, content, nodes[0] if nodes else None, rel, rel, overlay)
    lines = frozenset(range(content.count("\n") + 1))
    report.files.append(FileResult(rel, status, findings, content, lines))
    for p in report.problems:
        engine.stats[p.rule] += 1
    return report
