"""Plain data shared by the tool-call modules: problems, calls as read, results.

Flow: input text -> :mod:`.reader` -> :class:`Batch` of :class:`CallRecord` ->
:mod:`.calls` / :mod:`.plans` -> :class:`Problem` lists -> :mod:`.feedback` -> the
JSON-able result dicts of :mod:`.api`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..findings import Severity
from ..rules.roblox_api.unknown_class import RULE as _UNKNOWN_CLASS_RULE

# Codes of the issue (tool calls and plans); a class name is the linter's rule (luaguard.rules).
UNKNOWN_TOOL = "unknown_tool"
MISSING_FIELD = "missing_field"
INVALID_ARGUMENT = "invalid_argument"
UNKNOWN_PATH = "unknown_path"
PATH_OUTSIDE_PROJECT = "path_outside_project"
UNKNOWN_CLASS = _UNKNOWN_CLASS_RULE.id
UNKNOWN_PROPERTY = "unknown_property"
WRONG_PROPERTY_TYPE = "wrong_property_type"
LOW_CONFIDENCE = "low_confidence"
UNKNOWN_DEPENDENCY = "unknown_dependency"
SELF_DEPENDENCY = "self_dependency"
FORWARD_DEPENDENCY = "forward_dependency"
DEPENDENCY_CYCLE = "dependency_cycle"
# Codes of the reader: the input could not be read as a call at all.
INVALID_JSON = "invalid_json"
INVALID_CALL = "invalid_call"
# Codes of the diff applier.
HUNK_DOES_NOT_APPLY = "hunk_does_not_apply"
INVALID_DIFF = "invalid_diff"
# Warning-only code: a property Roblox marks deprecated.
DEPRECATED_PROPERTY = "deprecated_property"

TOOLCALL_CODES = (
    UNKNOWN_TOOL, MISSING_FIELD, INVALID_ARGUMENT, UNKNOWN_PATH, PATH_OUTSIDE_PROJECT,
    UNKNOWN_CLASS, UNKNOWN_PROPERTY, WRONG_PROPERTY_TYPE, LOW_CONFIDENCE,
    UNKNOWN_DEPENDENCY, SELF_DEPENDENCY, FORWARD_DEPENDENCY, DEPENDENCY_CYCLE,
    INVALID_JSON, INVALID_CALL,
)


@dataclass(slots=True)
class Problem:
    """One thing wrong with a call (or worth a warning).

    ``code`` is a snake_case id (the constants above, or a code-check rule id such as
    ``placeholder`` for findings in a call's Luau content); ``field`` names the argument
    (``"path"``, ``"value.x"``; ``None`` for the call as a whole); ``suggestions`` are
    ranked, best first; ``hint`` is extra context for the model (what exists there), used
    in the feedback text only; ``severity`` is :attr:`~luaguard.findings.Severity.ERROR`
    (the call is invalid) or :attr:`~luaguard.findings.Severity.WARNING` (the linter's
    severities); ``range`` is an LSP range (0-based lines, UTF-16 columns) inside the
    call's content, for content findings only; ``from_content`` marks those findings (the
    engine already counted them in its stats).
    """

    code: str
    message: str
    field: str | None = None
    suggestions: tuple[str, ...] = ()
    hint: str | None = None
    severity: Severity = Severity.ERROR
    range: dict | None = None
    from_content: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{"code", "message", "field", "suggestions", "range"}`` (``range`` may be null)."""
        return {
            "code": self.code,
            "message": self.message,
            "field": self.field,
            "suggestions": list(self.suggestions),
            "range": self.range,
        }


@dataclass(slots=True)
class CallRecord:
    """One tool call as read from the input.

    ``index`` counts calls over the whole input (0-based); ``line`` is the 1-based input
    line where the call's JSON value starts (``None`` for in-memory objects); ``name``
    and ``arguments`` are as given (any JSON type: the checks report wrong types);
    ``arguments`` is already decoded when the input carried it as a JSON string.
    ``call_id`` is the OpenAI/Anthropic tool-call id; ``step`` and ``depends_on`` are
    set for plan steps (``depends_on`` raw as given).  ``problems`` holds what the reader
    found (invalid JSON, unknown shapes); a record with a reader problem is not checked
    further.
    """

    index: int
    line: int | None = None
    name: Any = None
    arguments: Any = None
    confidence: Any = None
    call_id: Any = None
    step: Any = None
    depends_on: Any = None
    problems: list[Problem] = field(default_factory=list)


@dataclass(slots=True)
class Batch:
    """The calls of one top-level JSON value.

    ``kind`` is ``"single"`` (one call), ``"sequence"`` (an array or an OpenAI message's
    ``tool_calls``: simulated in order, as a harness runs them) or ``"plan"`` (steps with
    ids and ``depends_on``: dependency checks, then simulated in order).  Separate JSONL
    lines are separate batches and do not see each other's effects.
    """

    kind: str
    calls: list[CallRecord] = field(default_factory=list)
    line: int | None = None


@dataclass(slots=True)
class CallResult:
    """What :mod:`.api` returns for one call (see :meth:`to_json`)."""

    record: CallRecord
    tool: str | None
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    feedback: str = ""
    #: what the call does to the instance tree (:class:`~.calls.Effect`), when the
    #: context defers effects (an MCP proxy applies them once the upstream did the call)
    effects: list = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """``{"valid", "errors", "warnings", "feedback", "tool", "index", "line", "id", "step"}``."""
        rec = self.record
        return {
            "valid": self.valid,
            "errors": [p.to_json() for p in self.errors],
            "warnings": [p.to_json() for p in self.warnings],
            "feedback": self.feedback,
            "tool": self.tool,
            "index": rec.index,
            "line": rec.line,
            "id": rec.call_id if isinstance(rec.call_id, (str, int)) else None,
            "step": rec.step if isinstance(rec.step, (str, int)) else None,
        }
