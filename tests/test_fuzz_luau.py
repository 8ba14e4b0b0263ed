"""Fuzzing the Luau front end (bounded, in CI): the lexer and the parser, and every check
behind them through ``Engine.lint_text``.

Each target runs :data:`fuzz_helpers.EXAMPLES` inputs (5,000 by default) mixing Luau
fragment soup, mutated sample scripts and random text.  Properties: nothing raises, no
input takes longer than the bound, tokens tile the text in order, and every finding's range
(and fix range) lies inside the document.  ``bench/fuzz_long.py`` runs the same targets
longer and randomized.
"""

from __future__ import annotations

import pytest
from fuzz_helpers import SAMPLE_PLACE, assert_findings_inside, decode_luau, run_fuzz

from luaguard.engine import Engine
from luaguard.luau import lexer as L
from luaguard.luau.ast import walk
from luaguard.luau.parser import parse
from luaguard.text import LineIndex

pytestmark = pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")

ENGINE = Engine(SAMPLE_PLACE)
# A file of the project, so `script` resolves and the project checks run.
TARGET = (SAMPLE_PLACE / "src" / "server" / "Services" / "CombatService.luau").resolve()


def check_lexer(text: str) -> None:
    lex = L.tokenize(text)
    assert lex.tokens and lex.tokens[-1].kind == L.EOF
    assert lex.tokens[-1].start == lex.tokens[-1].end == len(text)
    prev_end = 0
    for tok in sorted([*lex.tokens, *lex.comments], key=lambda t: t.start):
        assert prev_end <= tok.start <= tok.end <= len(text), f"token {tok.kind} at {tok.start}..{tok.end} overlaps or leaves the text"
        assert text[tok.start:tok.end] == tok.text, f"token {tok.kind} text differs from its span"
        prev_end = tok.end
    lines = LineIndex(text)
    for e in lex.errors:
        assert 0 <= e.start <= e.end <= len(text) and e.message
        lines.range(e.start, e.end)


def check_parser(text: str) -> None:
    lex = L.tokenize(text)
    chunk = parse(text, lex)
    for e in chunk.errors:
        assert 0 <= e.start <= e.end <= len(text), f"parse error {e.message!r} at {e.start}..{e.end} outside the text"
        assert e.message
    for node in walk(chunk.body):
        assert 0 <= node.start <= node.end <= len(text), f"{type(node).__name__} at {node.start}..{node.end} outside the text"
    assert_findings_inside(text, ENGINE.lint_text(text, TARGET, mode="patch"))


def test_fuzz_lexer() -> None:
    run_fuzz(decode_luau, check_lexer, name="lexer")


def test_fuzz_parser_and_checks() -> None:
    run_fuzz(decode_luau, check_parser, name="parser+checks")


def test_fuzz_checks_see_a_failing_invariant() -> None:
    """The range invariant really rejects a range past the end of its line."""
    from luaguard.findings import Finding, Position, Range, Severity

    bad = Finding("x", Severity.ERROR, Range(Position(0, 0), Position(0, 9)), "m", start=0, end=1)
    try:
        assert_findings_inside("abc", [bad])
    except AssertionError:
        return
    raise AssertionError("a range past the line end was accepted")


# -- regressions found by the fuzzers and the LSP stress test --------------------------
REGRESSIONS = [
    # `()` as a table field's type at the end of the input: the parser set `attributes` on
    # the TypeReference it returns for "'()' without '->'" (AttributeError).
    "type T = {\n\tclock: ()",
    "type T = { f: () }",
    # An unfinished long comment/string is marked on its first line only; with CRLF line
    # breaks the mark ended between '\r' and '\n' (one column past the line), with lone
    # CR breaks it ran on to a later line.
    "local x = 1\r\n--[[ open\r\nmore\r\n",
    "local x\r--[[ a\rb",
    "x = [==[abc\r\ndef",
]


def test_fuzz_regressions_stay_fixed() -> None:
    for text in REGRESSIONS:
        check_lexer(text)
        check_parser(text)
    assert any("->" in e.message for e in parse(REGRESSIONS[0]).errors)
    crlf = ENGINE.lint_text(REGRESSIONS[2], TARGET)
    long_comment = [f for f in crlf if "long comment" in f.message]
    assert long_comment and long_comment[0].range.end.line == 1 and long_comment[0].range.end.character == len("--[[ open")
