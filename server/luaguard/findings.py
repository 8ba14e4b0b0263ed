"""Plain data that every check produces and every front end consumes.

Data flows one way: text -> tokens -> AST -> :class:`Finding` -> LSP ``Diagnostic`` /
JSON / text.  Positions follow the Language Server Protocol: ``line`` is 0-based and
``character`` counts UTF-16 code units from the start of the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class Severity(IntEnum):
    """Finding severity; the integer values equal LSP ``DiagnosticSeverity``."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        """Lower-case name used in text and JSON output (``"error"`` ...)."""
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> "Severity":
        """Parse ``"error"|"warning"|"information"|"info"|"hint"`` (case-insensitive).

        Raises ``ValueError`` naming the accepted values for anything else.
        """
        key = value.strip().lower()
        if key == "info":
            key = "information"
        for member in cls:
            if member.label == key:
                return member
        raise ValueError(
            f"unknown severity {value!r}; expected one of error, warning, information, hint"
        )


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A 0-based line and a UTF-16 column, as LSP ``Position``."""

    line: int
    character: int

    def to_json(self) -> dict:
        return {"line": self.line, "character": self.character}


@dataclass(frozen=True, slots=True)
class Range:
    """Half-open range ``[start, end)`` of :class:`Position`, as LSP ``Range``."""

    start: Position
    end: Position

    def to_json(self) -> dict:
        return {"start": self.start.to_json(), "end": self.end.to_json()}

    def contains_line(self, line: int) -> bool:
        return self.start.line <= line <= self.end.line


@dataclass(frozen=True, slots=True)
class Fix:
    """One text edit that resolves a finding: replace ``range`` with ``new_text``.

    ``safe`` (ruff's *fix applicability*): the check that made the fix is certain the edit
    keeps the code's intent - the one clearly best "did you mean" of a name that does not
    exist (an instance path under a closed node, a service, a class, a member or enum item of
    a value of certain class).  ``luaguard check --fix`` applies only safe fixes,
    ``--unsafe-fixes`` the others too (a near miss under an open node, a global that may be
    meant as a new local, a deprecated API whose replacement behaves differently); the
    language server marks safe fixes ``isPreferred``.  The check decides, never a front end.
    """

    range: Range
    new_text: str
    title: str = ""
    safe: bool = False

    def to_json(self) -> dict:
        return {"range": self.range.to_json(), "new_text": self.new_text, "safe": self.safe}


@dataclass(slots=True)
class Finding:
    """One problem found by a check.

    ``rule`` is a snake_case rule id (``unknown_instance``); ``suggestions`` are ranked,
    best first; ``fix`` is set only when one candidate is clearly best.  ``file`` is the
    path (as given by the caller) the finding belongs to, or ``None`` for in-memory text.
    ``start``/``end`` are the character offsets into the checked text (Python ``str``
    indices) that ``range`` was computed from; they let callers map findings back to
    text without recomputing UTF-16 columns.
    """

    rule: str
    severity: Severity
    range: Range
    message: str
    suggestions: tuple[str, ...] = ()
    fix: Fix | None = None
    file: str | None = None
    start: int = 0
    end: int = 0
    data: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """The CLI's ``--format json`` shape for this finding."""
        return {
            "file": self.file,
            "range": self.range.to_json(),
            "severity": self.severity.label,
            "code": self.rule,
            "message": self.message,
            "suggestions": list(self.suggestions),
            "fix": self.fix.to_json() if self.fix else None,
        }


def format_text(f: Finding) -> str:
    """``path:line:col: severity[rule] message`` (1-based line and column), then the
    suggestions and fix indented below, as ruff and selene print (``luaguard check`` and the
    MCP server's ``check_luau`` text); a fix only ``--unsafe-fixes`` applies says ``(unsafe)``."""
    line = f"{f.file or '-'}:{f.range.start.line + 1}:{f.range.start.character + 1}: {f.severity.label}[{f.rule}] {f.message}"
    extra = []
    if len(f.suggestions) > 1 or (f.suggestions and f.fix is None):
        extra.append("    suggestions: " + ", ".join(f.suggestions[:5]))
    if f.fix is not None:
        extra.append(f"    fix{'' if f.fix.safe else ' (unsafe)'}: {f.fix.title or 'replace with ' + repr(f.fix.new_text)}")
    return "\n".join([line, *extra])
