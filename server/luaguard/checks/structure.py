"""``unbalanced_bracket`` and ``unclosed_block``: brackets and blocks that do not close.

The analysis lives in :mod:`luaguard.luau.structure`; this module turns it into findings.
The parser is the one source of truth for syntax: a structure problem is reported only
where the parser (or the lexer) also found an error inside the problem's span - from the
unclosed opener, or the stray closer, to where the problem became certain - and the
analysis reads which ``if`` is an if-expression from the parser.  The structure analysis
improves the message and position (Luau's "to close 'function' at line 3" at the opener,
not at the end of the file); it never adds an error the parser does not have.

Lexical errors (unterminated strings and comments, malformed numbers or escapes) are
reported here too, as ``syntax_error``, because they break the token stream the other
checks read.
"""

from __future__ import annotations

import bisect

from ..findings import Finding, Severity
from ..luau.structure import UNBALANCED_BRACKET, UNCLOSED_BLOCK, analyze_structure
from ..rules.syntax.syntax_error import RULE as SYNTAX_ERROR_RULE
from ..rules.syntax.unbalanced_bracket import RULE as UNBALANCED_BRACKET_RULE
from ..rules.syntax.unclosed_block import RULE as UNCLOSED_BLOCK_RULE
from .base import CheckContext

SYNTAX_ERROR = SYNTAX_ERROR_RULE.id


class StructureCheck:
    """Brackets ``() [] {}``, interpolation braces and ``end``/``until`` blocks."""

    rules = {UNBALANCED_BRACKET: UNBALANCED_BRACKET_RULE.severity, UNCLOSED_BLOCK: UNCLOSED_BLOCK_RULE.severity}

    def check(self, ctx: CheckContext) -> list[Finding]:
        ast = ctx.ast
        errors = sorted([e.start for e in ctx.lex.errors] + ([e.start for e in ast.errors] if ast is not None else []))
        if not errors:
            return []  # the parser accepts the text: no structure finding can be right
        ifexprs = ast.if_expressions if ast is not None else None
        out = []
        for p in _analysis(ctx.lex.tokens, ctx.lines, ifexprs):
            lo, hi = min(p.start, p.detected_at), max(p.end, p.detected_at)
            i = bisect.bisect_left(errors, lo)
            if i == len(errors) or errors[i] > hi:
                continue  # no parser error inside: the analysis would invent one
            f = ctx.finding(p.rule, Severity.ERROR, p.start, p.end, p.message)
            f.data["span"] = (lo, hi)
            out.append(f)
        return out


_LAST: tuple | None = None  # (tokens, lines, ifexprs, problems) of the last analysis


def _analysis(tokens, lines, ifexprs) -> list:
    """:func:`~luaguard.luau.structure.analyze_structure`, computed once for the same
    tokens (one text judged by several projects shares its parse:
    :func:`luaguard.luau.parsed.parsed`)."""
    global _LAST
    last = _LAST
    if last is not None and last[0] is tokens and last[1] is lines and last[2] is ifexprs:
        return last[3]
    problems = analyze_structure(tokens, lines, ifexprs)
    _LAST = (tokens, lines, ifexprs, problems)
    return problems


class LexicalCheck:
    """Tokens the lexer could not read: unterminated strings/comments, bad numbers."""

    rules = {SYNTAX_ERROR: SYNTAX_ERROR_RULE.severity}

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
