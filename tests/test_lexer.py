"""The Luau lexer: every token kind of current Luau, positions, and errors as values."""

from __future__ import annotations

import pytest

from luaguard.luau import lexer as L
from luaguard.luau.lexer import check_number, tokenize
from luaguard.text import LineIndex


def kinds(src: str) -> list[str]:
    return [t.kind for t in tokenize(src).tokens][:-1]


def texts(src: str) -> list[str]:
    return [t.text for t in tokenize(src).tokens][:-1]


def test_keywords_names_and_contextual_keywords():
    src = "local function f() return nil end continue type export typeof const"
    assert kinds(src) == ["local", "function", "name", "(", ")", "return", "nil", "end",
                          "name", "name", "name", "name", "name"]


@pytest.mark.parametrize(
    "op",
    ["+", "-", "*", "/", "//", "%", "^", "#", "==", "~=", "<=", ">=", "<", ">", "=", "(", ")", "{", "}",
     "[", "]", ";", ":", ",", ".", "..", "...", "::", "->", "+=", "-=", "*=", "/=", "//=", "%=", "^=",
     "..=", "?", "&", "|"],
)
def test_every_operator_is_one_token(op):
    toks = tokenize(f"a {op} b").tokens
    assert [t.text for t in toks[:-1]] == ["a", op, "b"]


@pytest.mark.parametrize(
    "num", ["0", "123", "1.5", ".5", "1.", "1e10", "1E-3", "2.5e+7", "0x1F", "0XaB", "0b1010", "1_000_000",
            "0xFF_FF", "0b1111_0000", "1_0.5_0", "10i", "0x10i"],
)
def test_valid_numbers(num):
    res = tokenize(num)
    assert [t.kind for t in res.tokens[:-1]] == [L.NUMBER]
    assert res.tokens[0].text == num
    assert res.errors == []


@pytest.mark.parametrize("num", ["0x", "0b", "0b102", "1e", "1..2", "0xG", "1.2.3", "12abc"])
def test_malformed_numbers_are_errors_not_exceptions(num):
    res = tokenize(num)
    assert res.errors and res.errors[0].message.startswith("Malformed")
    assert check_number(num) is not None


@pytest.mark.parametrize(
    "src",
    [r'"a\nb"', r'"\x41"', r'"\u{1F600}"', r'"\65\066\255"', '"\\z\n   x"', "'\\''", r'"\""', '"a\\\nb"',
     r'"\q"', r'"\a\b\f\n\r\t\v\\"'],
)
def test_string_escapes_accepted(src):
    res = tokenize(src)
    assert [t.kind for t in res.tokens[:-1]] == [L.STRING], res.errors
    assert res.errors == []


@pytest.mark.parametrize("src", [r'"\x4"', r'"\xZZ"', r'"\u{}"', r'"\u{110000}"', r'"\u12"', r'"\256"'])
def test_malformed_escapes(src):
    res = tokenize(src)
    assert res.errors and "malformed escape" in res.errors[0].message


def test_long_strings_and_comments_with_levels():
    src = "x = [==[ a ]] ]=] ]==] -- c\n--[[ block\n comment ]] y --[=[ ]] ]=]"
    res = tokenize(src)
    assert [t.kind for t in res.tokens[:-1]] == ["name", "=", L.LONG_STRING, "name"]
    assert res.tokens[2].text == "[==[ a ]] ]=] ]==]"
    assert [c.kind for c in res.comments] == [L.COMMENT, L.BLOCK_COMMENT, L.BLOCK_COMMENT]
    assert res.errors == []


def test_interpolated_strings_with_nested_braces():
    src = "local s = `a {b + {c = 1}.c} and {`inner {d}`} done`"
    toks = tokenize(src).tokens
    ks = [t.kind for t in toks[:-1]]
    assert ks[:4] == ["local", "name", "=", L.INTERP_BEGIN]
    assert ks.count(L.INTERP_BEGIN) == 2 and ks.count(L.INTERP_END) == 2 and ks.count(L.INTERP_MID) == 1
    assert "{" in ks and "}" in ks  # the table braces stay plain braces
    assert toks[-2].kind == L.INTERP_END and toks[-2].text == "} done`"
    assert kinds("`plain`") == [L.INTERP_SIMPLE]
    assert kinds(r"`escaped \{ brace \u{41}`") == [L.INTERP_SIMPLE]


def test_attributes():
    assert kinds("@native function f() end") == [L.ATTRIBUTE, "function", "name", "(", ")", "end"]
    assert kinds("@[checked, deprecated]") == [L.ATTRIBUTE_OPEN, "name", ",", "name", "]"]


@pytest.mark.parametrize(
    "src, message",
    [
        ('print("abc', "Malformed string"),
        ("x = [[ never closed", "Malformed string"),
        ("--[[ never closed", "Unfinished long comment"),
        ("`abc", "Malformed interpolated string"),
        ("x = `a {{b}`", "Double braces"),
        ("local s = \u201chi\u201d", "Unexpected Unicode character"),
    ],
)
def test_unterminated_and_bad_input_are_errors(src, message):
    res = tokenize(src)
    assert any(message in e.message for e in res.errors), res.errors
    assert res.tokens[-1].kind == L.EOF


def test_confusable_quote_suggests_ascii():
    res = tokenize("x = \u201chello\u201d")
    assert "Did you mean '\"'?" in res.errors[0].message


def test_positions_are_utf16_columns():
    src = "local s = '😀' wait(1)\r\nprint(s)"
    toks = tokenize(src).tokens
    lines = LineIndex(src)
    wait = next(t for t in toks if t.text == "wait")
    assert src.index("wait") == 14
    assert lines.position(wait.start).character == 15  # the emoji is two UTF-16 units
    pr = next(t for t in toks if t.text == "print")
    assert lines.position(pr.start).line == 1 and lines.position(pr.start).character == 0


def test_random_garbage_never_raises():
    import random

    rng = random.Random(3)
    alphabet = "abc0123 \n\t\"'`[]{}()=-.:;\\@#$!~<>" + "\u00e9\u2018\x00"
    for _ in range(300):
        src = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 80)))
        res = tokenize(src)
        assert res.tokens[-1].kind == L.EOF
        for t in res.tokens:
            assert 0 <= t.start <= t.end <= len(src)
