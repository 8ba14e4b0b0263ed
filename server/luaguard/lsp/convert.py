"""Pure conversions between engine data and LSP types.

* :class:`PositionEncoder`: findings carry UTF-16 columns (the LSP default); a client
  may negotiate ``utf-8`` or ``utf-32`` (``general.positionEncodings``; Neovim 0.11 puts
  ``utf-8`` first), so positions are re-expressed in the negotiated unit.
* :func:`finding_to_diagnostic`: ruff-lsp's shape, the fix travels in ``Diagnostic.data``
  so a quick fix needs no re-lint.
* :func:`fix_from_data`: reads that data back from a ``codeAction`` request (any shape a
  client sends back is accepted; junk gives ``None``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from lsprotocol import types

from ..findings import Finding, Position, Range, Severity
from ..text import LineIndex

SOURCE = "luaguard"

#: At most this many diagnostics are published per document (the most severe first);
#: the last slot then says how many were left out.
MAX_DIAGNOSTICS = 1000

UTF8 = types.PositionEncodingKind.Utf8.value
UTF16 = types.PositionEncodingKind.Utf16.value
UTF32 = types.PositionEncodingKind.Utf32.value

_SURROGATE = re.compile("[\ud800-\udfff]")


def prepare_text(text: str) -> str:
    """Make buffer text safe to lint without moving any offset or UTF-16 column.

    A leading BOM becomes a space (the client counts it as one column, so positions
    stay right) and lone surrogates (possible in JSON strings) become U+FFFD.
    """
    if text.startswith("\ufeff"):
        text = " " + text[1:]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE.sub("\ufffd", text)
    return text


class PositionEncoder:
    """Converts UTF-16 :class:`~luaguard.findings.Position` values of ``text`` into LSP
    positions in ``encoding`` (``"utf-8" | "utf-16" | "utf-32"``; unknown values are
    treated as UTF-16), and measures lines in that unit.

    ``lines`` may be passed when a :class:`LineIndex` of ``text`` already exists.
    """

    def __init__(self, text: str, encoding: str | None = UTF16, lines: LineIndex | None = None) -> None:
        self.text = text
        self.encoding = str(getattr(encoding, "value", encoding) or UTF16)
        self._lines = lines

    @property
    def lines(self) -> LineIndex:
        """The :class:`LineIndex` of the text (built on first use)."""
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    def units(self, s: str) -> int:
        """Length of ``s`` in the client's unit."""
        if self.encoding == UTF8:
            return len(s.encode("utf-8", "surrogatepass"))
        if self.encoding == UTF32:
            return len(s)
        return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)

    def position(self, pos: Position) -> types.Position:
        """LSP position of the UTF-16 position ``pos``."""
        if self.encoding not in (UTF8, UTF32) or self.text.isascii():
            return types.Position(line=pos.line, character=pos.character)
        lines = self.lines
        if pos.line < 0 or pos.line >= lines.line_count:
            return types.Position(line=max(pos.line, 0), character=pos.character)
        start = lines.starts[pos.line]
        offset = lines.offset(pos)
        return types.Position(line=pos.line, character=self.units(self.text[start:offset]))

    def range(self, rng: Range) -> types.Range:
        """LSP range of the UTF-16 range ``rng``."""
        return types.Range(start=self.position(rng.start), end=self.position(rng.end))

    def line_end(self, line: int) -> types.Position:
        """Position of the end of ``line`` (before its line break)."""
        lines = self.lines
        line = min(max(line, 0), lines.line_count - 1)
        return types.Position(line=line, character=self.units(lines.line_text(line)))

    def offset(self, pos: types.Position) -> int:
        """Python string offset of an LSP position given in the client's unit
        (clamped to the line)."""
        lines = self.lines
        if pos.line >= lines.line_count:
            return len(self.text)
        if pos.line < 0:
            return 0
        start = lines.starts[pos.line]
        line_text = lines.line_text(pos.line)
        if self.encoding == UTF32 or line_text.isascii():
            return start + min(pos.character, len(line_text))
        units = 0
        for i, ch in enumerate(line_text):
            if units >= pos.character:
                return start + i
            units += self.units(ch)
        return start + len(line_text)


def lsp_severity(severity: Severity) -> types.DiagnosticSeverity:
    """The LSP severity (same integer values as :class:`~luaguard.findings.Severity`)."""
    return types.DiagnosticSeverity(int(severity))


def fix_to_data(finding: Finding, encoder: PositionEncoder) -> dict | None:
    """``{"range", "newText", "title", "safe"}`` of the finding's fix in client units, or
    None.  ``safe`` is the check's :attr:`~luaguard.findings.Fix.safe` - what ``luaguard
    check --fix`` applies without ``--unsafe-fixes``."""
    fix = finding.fix
    if fix is None:
        return None
    rng = encoder.range(fix.range)
    return {
        "range": _range_json(rng),
        "newText": fix.new_text,
        "title": fix.title or f"Replace with '{fix.new_text}'",
        "safe": fix.safe,
    }


def finding_to_diagnostic(finding: Finding, encoder: PositionEncoder, version: int | None = None) -> types.Diagnostic:
    """The LSP diagnostic for ``finding``.

    ``code`` is the rule id, ``source`` ``"luaguard"``; ``data`` is
    ``{"rule", "suggestions": [...], "fix": {range, newText, title, safe} | None, "version"}``
    (``version``: the document version the diagnostic was computed for).
    """
    return types.Diagnostic(
        range=encoder.range(finding.range),
        message=finding.message,
        severity=lsp_severity(finding.severity),
        code=finding.rule,
        source=SOURCE,
        data={
            "rule": finding.rule,
            "suggestions": list(finding.suggestions),
            "fix": fix_to_data(finding, encoder),
            "version": version,
        },
    )


def findings_to_diagnostics(findings: Iterable[Finding], encoder: PositionEncoder, version: int | None = None,
                            limit: int = MAX_DIAGNOSTICS) -> list[types.Diagnostic]:
    """Diagnostics for ``findings`` in position order.

    Over ``limit``, the most severe findings are kept (``limit - 1`` of them) and one
    information diagnostic at the top of the file says how many were left out.
    """
    findings = list(findings)
    extra: list[types.Diagnostic] = []
    if len(findings) > limit:
        keep = sorted(findings, key=lambda f: (int(f.severity), f.range.start.line, f.range.start.character))[: limit - 1]
        dropped = len(findings) - len(keep)
        findings = sorted(keep, key=lambda f: (f.range.start.line, f.range.start.character, f.rule))
        zero = types.Position(line=0, character=0)
        extra.append(
            types.Diagnostic(
                range=types.Range(start=zero, end=zero),
                message=f"{dropped} more luaguard problems in this file are not shown (limit {limit}); run `luaguard check` for all of them",
                severity=types.DiagnosticSeverity.Information,
                code="too_many_problems",
                source=SOURCE,
                data={"rule": "too_many_problems", "suggestions": [], "fix": None, "version": version},
            )
        )
    return [finding_to_diagnostic(f, encoder, version) for f in findings] + extra


def _range_json(rng: types.Range) -> dict:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def _position_from(data: Any) -> types.Position | None:
    if not isinstance(data, dict):
        return None
    line, character = data.get("line"), data.get("character")
    if not isinstance(line, int) or not isinstance(character, int) or isinstance(line, bool) or isinstance(character, bool):
        return None
    if line < 0 or character < 0:
        return None
    return types.Position(line=line, character=character)


def range_from_json(data: Any) -> types.Range | None:
    """An LSP range from its JSON shape, or None when malformed."""
    if not isinstance(data, dict):
        return None
    start, end = _position_from(data.get("start")), _position_from(data.get("end"))
    if start is None or end is None:
        return None
    return types.Range(start=start, end=end)


def diagnostic_data(diagnostic: types.Diagnostic) -> dict:
    """``diagnostic.data`` as a dict (``{}`` when absent or not an object)."""
    data = diagnostic.data
    return data if isinstance(data, dict) else {}


def fix_is_safe(data: Any) -> bool:
    """Whether the fix in diagnostic data is marked safe (``False`` for anything else)."""
    fix = data.get("fix") if isinstance(data, dict) else None
    return isinstance(fix, dict) and fix.get("safe") is True


def fix_from_data(data: Any) -> tuple[types.Range, str, str] | None:
    """``(range, new_text, title)`` of the fix in diagnostic data, or None."""
    if not isinstance(data, dict):
        return None
    fix = data.get("fix")
    if not isinstance(fix, dict):
        return None
    rng = range_from_json(fix.get("range"))
    new_text = fix.get("newText")
    if rng is None or not isinstance(new_text, str):
        return None
    title = fix.get("title")
    if not isinstance(title, str) or not title:
        title = f"Replace with '{new_text}'"
    return rng, new_text, title


def rule_of(diagnostic: types.Diagnostic) -> str | None:
    """The rule id of a luaguard diagnostic (``code``, else ``data.rule``)."""
    if isinstance(diagnostic.code, str) and diagnostic.code:
        return diagnostic.code
    rule = diagnostic_data(diagnostic).get("rule")
    return rule if isinstance(rule, str) and rule else None
