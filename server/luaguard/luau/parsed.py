"""Each text lexed and parsed once per run.

:func:`parsed` returns the tokens, line index and tree of a text, computed once:

* the last text parsed is remembered, so the projects that judge one file
  (:class:`~luaguard.projects.ProjectSet`), its checks and its own run-time facts read one
  parse;
* in a batch run (``luaguard check``: :func:`keep_parses`), a parse made for the run-time
  facts of *another* file (:mod:`luaguard.analysis.world` reads the scripts that create
  instances) is kept, up to a budget of characters, until that file is linted itself -
  then it is handed over and dropped.

Tokens and trees are never modified after parsing (their classes have slots and no check
writes them), so sharing a parse changes no result.
"""

from __future__ import annotations

from ..text import LineIndex
from .lexer import tokenize

__all__ = ["keep_parses", "parsed"]

_LAST: tuple | None = None  # (text, declarations, lex, lines, ast)
_KEPT: dict[str, tuple] = {}  # text -> (lex, lines, ast), definition-file grammar off
_kept_chars = 0
_budget = 0


def keep_parses(budget_chars: int) -> None:
    """Keep the parses :func:`parsed` makes with ``keep`` for a later lint of the same
    text, up to ``budget_chars`` characters of source in all (0: keep none, the default;
    the language server keeps none - its files are linted when opened, if ever)."""
    global _budget, _kept_chars
    _budget = max(0, budget_chars)
    if _budget == 0:
        _KEPT.clear()
        _kept_chars = 0


def parsed(text: str, declarations: bool = False, *, keep: bool = False) -> tuple:
    """``(tokens, line index, tree)`` of ``text``: :func:`~luaguard.luau.lexer.tokenize`,
    :class:`~luaguard.text.LineIndex` and :func:`~luaguard.luau.parser.parse`
    (``declarations``: a definition file's grammar).  ``keep``: the text is not the one
    being linted (another file's run-time facts) - the parse does not replace the last
    one, and is kept for the lint of that file when :func:`keep_parses` allows."""
    global _LAST, _kept_chars
    last = _LAST
    if last is not None and last[1] == declarations and last[0] == text:
        return last[2], last[3], last[4]
    got = None
    if not declarations and _KEPT:
        got = _KEPT.get(text)
        if got is not None and not keep:
            del _KEPT[text]
            _kept_chars -= len(text)
    if got is None:
        from .parser import parse

        lex = tokenize(text)
        lines = LineIndex(text)
        got = (lex, lines, parse(text, lex, declarations=declarations, lines=lines))
        if keep and not declarations and _kept_chars + len(text) <= _budget:
            _KEPT[text] = got
            _kept_chars += len(text)
    if not keep:
        _LAST = (text, declarations, *got)
    return got
