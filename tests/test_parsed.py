"""luaguard.luau.parsed: each text lexed and parsed once per run."""

from __future__ import annotations

import pytest

from luaguard.luau import parsed as P
from luaguard.luau.parser import parse


@pytest.fixture(autouse=True)
def fresh():
    P.keep_parses(0)
    P._LAST = None
    yield
    P.keep_parses(0)
    P._LAST = None


def test_the_same_text_is_parsed_once():
    text = "local a = game.Workspace.Part\nreturn a\n"
    first = P.parsed(text)
    again = P.parsed(text)
    assert all(x is y for x, y in zip(first, again))
    other = P.parsed(text + "\n")
    assert other[2] is not first[2]
    # the grammar is part of the key
    assert P.parsed(text + "\n", declarations=True)[2] is not other[2]


def test_a_parse_equals_the_parsers_own():
    text = "local t = {1, 2, [3] = f(x)}\nfunction t:m(y) return y end\n"
    _, _, ast = P.parsed(text)
    assert repr(ast.body) == repr(parse(text).body)


def test_a_kept_parse_is_handed_to_the_lint_once_within_the_budget():
    a, b = "return 1\n", "return 2\n"
    P.parsed(a)
    P.keep_parses(100)
    kept = P.parsed(b, keep=True)
    assert P.parsed(a)[2] is P._LAST[4]  # (another file's parse does not replace the last one)
    assert P.parsed(b)[2] is kept[2]  # handed over ...
    P._LAST = None
    assert P.parsed(b)[2] is not kept[2]  # ... and dropped
    P.keep_parses(5)
    big = P.parsed("return 12345\n", keep=True)
    assert P._KEPT == {} and P.parsed("return 12345\n")[2] is not big[2]


def test_nothing_is_kept_by_default():
    P.parsed("return 3\n", keep=True)
    assert P._KEPT == {}
