"""Applying the fixes that findings carry: ``luaguard check --fix`` (and ``--fix --diff``).

A check attaches a :class:`~luaguard.findings.Fix` to a finding when one replacement is
clearly best, and marks it safe or unsafe (:attr:`~luaguard.findings.Fix.safe`, ruff's
*applicability*).  This module only applies them; it decides nothing about Luau:

* only safe fixes, unless ``unsafe`` (``--unsafe-fixes``); suppression comments are never
  written (a suppression is a person's decision; the language server offers it as an action),
  only corrected or removed where they name no rule or silence nothing (``unknown_suppression``,
  ``unused_suppression``: :mod:`luaguard.suppressions`);
* never in a text Luau's grammar rejects (a fix computed on a tree the parser had to repair
  may land in the wrong place): the text is returned unchanged with ``skipped`` set;
* edits of one pass never overlap (the first by position wins; the rest wait for the next pass);
* the text is linted again after each pass, because a fix can reveal another
  (``ReplicatedStorage.Sharde.Modulez``: ``Modulez`` is checked only once ``Shared``
  resolves), up to :data:`MAX_PASSES` passes; a pass that would leave a text the parser
  rejects, or bring back a text already seen (two fixes undoing each other), is dropped and
  the loop stops.

Positions: a fix's range is in LSP units (0-based lines, UTF-16 columns) of the text the
finding was computed on; :class:`~luaguard.text.LineIndex` turns it into string offsets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .findings import Finding
from .text import LineIndex

if TYPE_CHECKING:
    from .engine import Engine

#: At most this many lint-and-fix passes per text.
MAX_PASSES = 10

SKIP_SYNTAX = "the file has a syntax error (fix it first: luaguard never edits code the parser rejects)"


def fixable(findings: Iterable[Finding], *, unsafe: bool = False) -> list[Finding]:
    """The findings whose fix may be applied: safe ones, or every one with ``unsafe``."""
    return [f for f in findings if f.fix is not None and (f.fix.safe or unsafe)]


def apply_fixes(text: str, findings: Iterable[Finding], *, unsafe: bool = False) -> tuple[str, list[Finding]]:
    """Apply the fixes of ``findings`` (computed on ``text``) that do not overlap.

    Returns the new text and the findings whose fix was applied (a fix identical to one
    already applied counts as applied too).  Never raises; a fix whose range lies outside
    the text is clamped by :meth:`LineIndex.offset`.
    """
    lines = LineIndex(text)
    edits: list[tuple[int, int, str, Finding]] = []
    for f in fixable(findings, unsafe=unsafe):
        start, end = lines.offset(f.fix.range.start), lines.offset(f.fix.range.end)
        if end < start:
            continue
        edits.append((start, end, f.fix.new_text, f))
    edits.sort(key=lambda e: (e[0], e[1]))
    applied: list[Finding] = []
    parts: list[str] = []
    done: set[tuple[int, int, str]] = set()
    last = 0
    for start, end, new, f in edits:
        if (start, end, new) in done:
            applied.append(f)
            continue
        if start < last or (start == last and done and start == end):
            continue  # overlaps an edit of this pass: the next pass sees it again
        if text[start:end] == new:
            continue
        parts.append(text[last:start])
        parts.append(new)
        last = end
        done.add((start, end, new))
        applied.append(f)
    if not done:
        return text, []
    parts.append(text[last:])
    return "".join(parts), applied


@dataclass
class FixResult:
    """What :func:`fix_text` did.

    ``text``: the fixed text (the input when nothing applied); ``fixed``: the findings whose
    fixes were applied, pass by pass (positions in the text of their pass); ``findings``: the
    findings of ``text``; ``skipped``: why the text was left alone (:data:`SKIP_SYNTAX`), or
    ``None``; ``passes``: lint passes run; ``note``: why the loop stopped early (a fix that
    would break the syntax, fixes undoing each other, the pass bound).
    """

    text: str
    fixed: list[Finding] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None
    passes: int = 0
    note: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.fixed)


def fix_text(engine: "Engine", text: str, path: str | Path | None = None, *, unsafe: bool = False,
             mode: str | None = None, max_passes: int = MAX_PASSES, count: bool = True) -> FixResult:
    """Lint ``text`` as ``path`` with ``engine``, apply the fixes, and repeat until no fix
    applies (see the module docstring).  ``count``: add the final findings to the engine's
    stats.  Never raises on any text."""
    analysis = engine.analyse(text, path, mode=mode, count=False)
    result = FixResult(text, passes=1)
    if not analysis.parses:
        result.skipped = SKIP_SYNTAX
        result.findings = analysis.findings
    else:
        seen = {text}
        current = analysis
        while True:
            new_text, applied = apply_fixes(result.text, current.findings, unsafe=unsafe)
            if not applied:
                break
            if result.passes >= max_passes:
                result.note = f"stopped after {max_passes} passes; run --fix again"
                break
            if new_text in seen:
                result.note = "fixes undo each other; left as they are"
                break
            after = engine.analyse(new_text, path, mode=mode, count=False)
            result.passes += 1
            if not after.parses:
                result.note = "a fix would break the syntax; not applied"
                break
            seen.add(new_text)
            result.fixed.extend(applied)
            result.text, current = new_text, after
        result.findings = current.findings
    if count:
        for f in result.findings:
            engine.stats[f.rule] += 1
    return result
