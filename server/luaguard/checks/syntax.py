"""``syntax_error``: what Luau's parser rejects, reported where and as Luau reports it.

The parser (:mod:`luaguard.luau.parser`) does the work; this check turns its errors into
findings.  Errors that restate a bracket or block problem already reported by the
structure check are dropped by the engine (see :func:`luaguard.engine.merge_syntax`).
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..rules.syntax.syntax_error import RULE as SYNTAX_ERROR
from .base import CheckContext

RULE = SYNTAX_ERROR.id


class SyntaxCheck:
    """Parser errors as findings."""

    rules = {RULE: SYNTAX_ERROR.severity}

    def check(self, ctx: CheckContext) -> list[Finding]:
        if ctx.ast is None:
            return []
        out = []
        for e in ctx.ast.errors:
            f = ctx.finding(RULE, Severity.ERROR, e.start, max(e.end, e.start), e.message)
            f.data["from_parser"] = True
            f.data["matching"] = "(to close '" in e.message
            out.append(f)
        return out
