"""``unbalanced_bracket`` and ``unclosed_block``: brackets and blocks that do not close.

The analysis lives in :mod:`luaguard.luau.structure`; this module turns it into findings.
Lexical errors (unterminated strings and comments, malformed numbers or escapes) are
reported here too, as ``syntax_error``, because they break the token stream the other
checks read.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..luau.structure import UNBALANCED_BRACKET, UNCLOSED_BLOCK, analyze_structure
from .base import CheckContext

SYNTAX_ERROR = "syntax_error"


class StructureCheck:
    """Brackets ``() [] {}``, interpolation braces and ``end``/``until`` blocks."""

    rules = {UNBALANCED_BRACKET: Severity.ERROR, UNCLOSED_BLOCK: Severity.ERROR}

    def check(self, ctx: CheckContext) -> list[Finding]:
        out = []
        for p in analyze_structure(ctx.lex.tokens, ctx.lines):
            f = ctx.finding(p.rule, Severity.ERROR, p.start, p.end, p.message)
            f.data["span"] = (min(p.start, p.detected_at), max(p.end, p.detected_at))
            out.append(f)
        return out


class LexicalCheck:
    """Tokens the lexer could not read: unterminated strings/comments, bad numbers."""

    rules = {SYNTAX_ERROR: Severity.ERROR}

    def check(self, ctx: CheckContext) -> list[Finding]:
        out = []
        for e in ctx.lex.errors:
            # An unterminated long comment or string runs to the end of the file: mark
            # only its first line.
            # (The line ends before its break, whichever of \n, \r\n or \r it is.)
            line = ctx.lines.line_of(e.start)
            line_end = ctx.lines.starts[line] + len(ctx.lines.line_text(line))
            end = min(e.end, line_end)
            out.append(ctx.finding(SYNTAX_ERROR, Severity.ERROR, e.start, max(end, e.start + 1), e.message))
        return out
