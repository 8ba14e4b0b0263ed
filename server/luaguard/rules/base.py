"""What a rule is, as plain data: :class:`Rule` and :class:`FixSafety`.

A rule id is one module of :mod:`luaguard.rules` (ruff's and selene's shape: one rule, one
file): the module's docstring is the rule's documentation page (what it finds, why, an
example, how to fix it, how to suppress it) and its ``RULE`` is a :class:`Rule` holding the
facts every front end reads (default severity, fix safety, whether it assumes Roblox's
API, what it supersedes).  The checks (:mod:`luaguard.checks`) find the problems; the rule
says what they are called and how sure a fix is.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..findings import Severity


class FixSafety(str, Enum):
    """How a rule's quick fix may be applied (ruff's *fix applicability*).

    ``safe``: every fix the rule offers is applied by ``luaguard check --fix``;
    ``unsafe``: only with ``--unsafe-fixes``; ``sometimes``: safe where the finding is
    certain (the check decides per finding, and says so in the rule's docs), unsafe
    elsewhere; ``none``: the rule offers no fix."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    SOMETIMES = "sometimes"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule id and what every front end needs to know about it.

    ``id``: snake_case, the rule module's name; ``severity``: the default severity
    (``severity_text`` says it in words where the mode changes it, for the docs and the
    README's table); ``fix``: :class:`FixSafety`; ``roblox_api``: the rule assumes the file
    runs in Roblox - the engine lowers its errors to warnings in files the project does not
    map into its DataModel (:attr:`luaguard.checks.base.CheckContext.in_datamodel`);
    ``supersedes``: rule ids whose finding at the same mistake this rule's finding replaces
    (:func:`luaguard.engine.merge_syntax`); ``file_rule``: reported by the engine about a
    file as a whole, not by a check; ``short``: one plain line (SARIF's
    ``shortDescription``); ``help``: what to do about it, plain text (SARIF's ``help``);
    ``summary``: the README table's "what" cell (Markdown); ``docs``: the rule module's
    docstring, the documentation page (Markdown)."""

    id: str
    severity: Severity
    fix: FixSafety
    short: str
    help: str
    summary: str
    docs: str
    severity_text: str = ""
    roblox_api: bool = False
    supersedes: tuple[str, ...] = ()
    file_rule: bool = False

    @property
    def default_text(self) -> str:
        """The default severity in words (``"error"``, ``"warning in patch mode, hint in editor mode"``)."""
        return self.severity_text or self.severity.label
