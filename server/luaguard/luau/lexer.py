"""Luau lexer.

Splits source text into :class:`Token` objects.  Token boundaries follow the reference
lexer published with Luau (``Ast/src/Lexer.cpp`` of luau-lang/luau, read for behaviour):

* names are ASCII ``[A-Za-z_][A-Za-z0-9_]*``; reserved words become their own kind
  (``"function"``), contextual keywords (``continue``, ``type``, ``export``, ``typeof``,
  ``const``, ``read``, ``write``) stay ``name`` tokens for the parser to interpret;
* numbers are skipped as Lua's lexer does (digits, ``.``, ``_``, an exponent sign, then any
  alphanumerics) and validated here (``0x``/``0b`` prefixes, ``_`` separators, exponents);
* quoted strings with every escape (``\\z``, ``\\x``, ``\\u{...}``, ``\\ddd``, line
  continuations), long strings and comments ``[==[ ... ]==]``;
* interpolated strings `` `a {b} c` `` become ``interp_begin`` / ``interp_mid`` /
  ``interp_end`` (or ``interp_simple``) tokens around the expression tokens, with a brace
  stack so tables inside ``{...}`` nest;
* operators including ``//``, ``..``, ``...``, ``::``, ``->``, the compound assignments
  (``+=`` ... ``..=``, ``//=``), ``?``, ``&``, ``|`` and attributes ``@name`` / ``@[``.

Problems (unterminated strings or comments, malformed escapes or numbers, stray
characters) are returned as :class:`LexError` values; the lexer never raises on any
input.  Offsets are Python ``str`` indices; use :class:`luaguard.text.LineIndex` for LSP
positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Token kinds that are not the literal text of a keyword or operator.
NAME = "name"
NUMBER = "number"
STRING = "string"  # '...' or "..."
LONG_STRING = "long_string"  # [[...]] / [==[...]==]
INTERP_BEGIN = "interp_begin"  # `text{
INTERP_MID = "interp_mid"  # }text{
INTERP_END = "interp_end"  # }text`
INTERP_SIMPLE = "interp_simple"  # `text`
COMMENT = "comment"  # -- ...
BLOCK_COMMENT = "block_comment"  # --[[ ... ]]
ATTRIBUTE = "attribute"  # @native
ATTRIBUTE_OPEN = "@["
ERROR = "error"  # a broken token (unterminated string, bad character ...)
EOF = "<eof>"

#: Luau's reserved words (Lexer.cpp ``kReserved``).
KEYWORDS = frozenset(
    "and break do else elseif end false for function if in local nil not or repeat return then true until while".split()
)

#: Words that are keywords only in some positions.
CONTEXTUAL_KEYWORDS = frozenset({"continue", "type", "export", "typeof", "const", "read", "write"})

STRING_KINDS = frozenset({STRING, LONG_STRING, INTERP_SIMPLE})
COMMENT_KINDS = frozenset({COMMENT, BLOCK_COMMENT})


@dataclass(slots=True)
class Token:
    """One lexeme.

    ``kind`` is one of the module constants or, for reserved words and operators, the
    word or operator itself (``"function"``, ``"("``, ``"..="``).  ``text`` is the exact
    source slice ``[start, end)`` (Python ``str`` offsets).
    """

    kind: str
    text: str
    start: int
    end: int

    def describe(self) -> str:
        """How Luau's parser names this token in messages (``'end'``, ``<eof>``, ``identifier``)."""
        kind = self.kind
        if kind == EOF:
            return "<eof>"
        if kind == NAME:
            return f"'{self.text}'"
        if kind == NUMBER:
            return f"'{self.text}'"
        if kind in (STRING, LONG_STRING):
            return "string"
        if kind == INTERP_SIMPLE:
            return "interpolated string"
        if kind == INTERP_BEGIN:
            return "the beginning of an interpolated string"
        if kind == INTERP_MID:
            return "the middle of an interpolated string"
        if kind == INTERP_END:
            return "the end of an interpolated string"
        if kind == ATTRIBUTE:
            return f"'{self.text}'"
        if kind == ERROR:
            return "malformed token"
        return f"'{self.text}'"


@dataclass(frozen=True, slots=True)
class LexError:
    """A lexical problem at ``[start, end)`` (Python offsets), with a Luau-style message."""

    start: int
    end: int
    message: str


@dataclass(slots=True)
class LexResult:
    """Output of :func:`tokenize`.

    ``tokens`` excludes comments and always ends with one ``EOF`` token; ``comments``
    holds comment tokens in source order; ``errors`` the lexical problems.
    """

    tokens: list[Token]
    comments: list[Token]
    errors: list[LexError]


# Whitespace is not matched: ``finditer`` skips it in C.  Every other character is
# matched by some alternative (the last one catches stray characters).
_MASTER = re.compile(
    r"(?:"
    + r"([A-Za-z_][A-Za-z0-9_]*)"  # 1 name
    + r"|((?:[0-9]|\.[0-9])[0-9._]*(?:[eE][+-]?)?[A-Za-z0-9_]*)"  # 2 number
    + r"|(\.\.\.|\.\.=|\.\.|//=|//|::|->|==|~=|<=|>=|\+=|-=|\*=|/=|%=|\^=|-(?!-)|[+*/%^#=<>();:,.?&|~\]])"  # 3 operator
    + r"|(--\[=*\[)"  # 4 long comment start
    + r"|(--[^\r\n]*)"  # 5 comment
    + r"|(\[=*\[)"  # 6 long string start
    + r"|(\[=+)"  # 7 malformed long bracket
    + r"|(\[)"  # 8 '['
    + r"|([\"'])"  # 9 quoted string start
    + r"|(\{)"  # 10
    + r"|(\})"  # 11
    + r"|(`)"  # 12 interpolated string start
    + r"|(@\[|@[A-Za-z_][A-Za-z0-9_]*|@)"  # 13 attribute
    + r"|([^\x00-\x7f]+)"  # 14 non-ASCII run
    + r"|([^ \t\r\n\v\f])"  # 15 any other character
    + r")"
)

_DQ_BODY = re.compile(r'(?:[^"\\\r\n]+|\\z[ \t\r\n\v\f]*|\\\r\n?|\\[\s\S])*')
_SQ_BODY = re.compile(r"(?:[^'\\\r\n]+|\\z[ \t\r\n\v\f]*|\\\r\n?|\\[\s\S])*")
# Interpolated string section: stops at '`', '{', a line break or the end.
_INTERP_BODY = re.compile(r"(?:[^`\\{\r\n]+|\\u\{|\\z[ \t\r\n\v\f]*|\\\r\n?|\\[\s\S])*")
_ESCAPE = re.compile(r"\\(?:z[ \t\r\n\v\f]*|\r\n?|\n|x([\s\S]{0,2})|u(\{[^}\r\n]*\}?|[\s\S]?)|([0-9]{1,3})|([\s\S]?))")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_HEX = re.compile(r"[0-9A-Fa-f]+")
_NUMBER = re.compile(r"0[xX][0-9A-Fa-f]+|0[bB][01]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INT_NUMBER = re.compile(r"(?:0[xX][0-9A-Fa-f]+|0[bB][01]+|[0-9]+)i")

# Characters that look like ASCII punctuation (a subset of Luau's confusables table,
# written from Unicode's own confusables data).
_CONFUSABLES = {
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2032": "'", "\u2033": '"',
    "\u00a0": " ", "\u2013": "-", "\u2014": "-", "\u2212": "-", "\uff08": "(", "\uff09": ")",
    "\uff0c": ",", "\uff1a": ":", "\uff1b": ";", "\uff1d": "=", "\u037e": ";", "\u00d7": "*",
}


def check_number(text: str) -> str | None:
    """Return a Luau-style message for an invalid number literal, else ``None``.

    Follows Luau's ``Parser::parseNumber``: ``_`` separators are dropped first; then a
    decimal (with optional fraction and exponent), ``0x`` hexadecimal or ``0b`` binary
    number; a trailing ``i`` makes an integer literal (decimal, hex or binary digits).
    """
    s = text.replace("_", "") if "_" in text else text
    if s.endswith("i"):
        return None if _INT_NUMBER.fullmatch(s) else "Malformed integer"
    return None if _NUMBER.fullmatch(s) else "Malformed number"


def check_escapes(body: str, offset: int, errors: list[LexError], *, interpolated: bool = False) -> None:
    """Validate the escapes of a quoted or interpolated string body starting at ``offset``.

    Rules from Luau's ``Parser::fixupQuotedString``: ``\\x`` takes exactly two hex digits,
    ``\\u{...}`` a hex code point up to 10FFFF, ``\\ddd`` at most 255, plus the simple
    escapes, line continuations and ``\\z``.  Appends one :class:`LexError` for the first
    malformed escape.
    """
    if "\\" not in body:
        return
    for m in _ESCAPE.finditer(body):
        hex2, uni, dec = m.group(1), m.group(2), m.group(3)
        if hex2 is not None:
            bad = _HEX2.fullmatch(hex2) is None
        elif uni is not None:
            digits = uni[1:-1] if len(uni) >= 3 and uni[0] == "{" and uni[-1] == "}" else ""
            bad = not digits or len(digits) > 16 or _HEX.fullmatch(digits) is None or int(digits, 16) > 0x10FFFF
        elif dec is not None:
            bad = int(dec) > 255
        else:
            # Any other escaped character stands for itself (Luau's ``unescape``); only a
            # backslash at the very end of the body is malformed.
            bad = m.group(4) == ""
        if bad:
            what = "Interpolated string literal" if interpolated else "String literal"
            errors.append(LexError(offset + m.start(), offset + m.end(), f"{what} contains malformed escape sequence"))
            return


def tokenize(text: str) -> LexResult:
    """Split ``text`` into tokens, comments and lexical errors.  Never raises.

    Runs in O(len(text)).  See the module docstring for the token set.
    """
    tokens: list[Token] = []
    comments: list[Token] = []
    errors: list[LexError] = []
    append = tokens.append
    keywords = KEYWORDS
    finditer = _MASTER.finditer
    n = len(text)
    pos = 0
    # Luau's brace stack, tracked only inside interpolated strings:
    # True = the '{' opened an interpolation, False = a plain '{' nested inside one.
    braces: list[bool] = []

    while pos < n:
        resume = -1
        for m in finditer(text, pos):
            g = m.lastindex
            if g == 1:
                word = m.group()
                start, end = m.span()
                append(Token(word if word in keywords else NAME, word, start, end))
            elif g == 3:
                op = m.group()
                start, end = m.span()
                append(Token(op, op, start, end))
            elif g == 2:
                num = m.group()
                start, end = m.span()
                append(Token(NUMBER, num, start, end))
                problem = check_number(num)
                if problem is not None:
                    errors.append(LexError(start, end, problem))
            elif g == 5:
                comments.append(Token(COMMENT, m.group(5), m.start(5), m.end()))
            elif g == 9:
                start = m.start(9)
                _quoted_string(text, start, m.group(9), tokens, errors)
                resume = tokens[-1].end
                break
            elif g == 10:
                if braces:
                    braces.append(False)
                append(Token("{", "{", m.start(10), m.end()))
            elif g == 11:
                start = m.start(11)
                if braces and braces.pop():
                    resume = _interp_section(text, start, m.end(), True, tokens, errors, braces)
                    break
                append(Token("}", "}", start, m.end()))
            elif g == 8:
                append(Token("[", "[", m.start(8), m.end()))
            elif g == 4 or g == 6:
                resume = _long_bracket(text, m.start(g), m.group(g), g == 4, tokens, comments, errors)
                break
            elif g == 12:
                resume = _interp_section(text, m.start(12), m.end(), False, tokens, errors, braces)
                break
            elif g == 13:
                att = m.group(13)
                start = m.start(13)
                if att == "@[":
                    append(Token(ATTRIBUTE_OPEN, att, start, m.end()))
                else:
                    append(Token(ATTRIBUTE, att, start, m.end()))
                    if att == "@":
                        errors.append(LexError(start, m.end(), "Attribute name is missing"))
            elif g == 7:
                start = m.start(7)
                errors.append(LexError(start, m.end(), "Malformed string; did you forget to finish it?"))
                append(Token(ERROR, m.group(7), start, m.end()))
            elif g == 14:
                start = m.start(14)
                ch = text[start]
                hint = _CONFUSABLES.get(ch)
                msg = f"Unexpected Unicode character: U+{ord(ch):x}" + (f". Did you mean '{hint}'?" if hint else "")
                errors.append(LexError(start, start + 1, msg))
                append(Token(ERROR, ch, start, start + 1))
                resume = start + 1
                break
            elif g == 15:
                start = m.start(15)
                ch = m.group(15)
                if ch == "\x00":
                    errors.append(LexError(start, start + 1, "Unexpected NUL character"))
                    append(Token(ERROR, ch, start, start + 1))
                else:  # a stray ASCII character such as '$', '!' or a backslash
                    append(Token(ch, ch, start, start + 1))
        if resume < 0:
            break
        pos = resume
    append(Token(EOF, "", n, n))
    return LexResult(tokens, comments, errors)


def _quoted_string(text: str, start: int, quote: str, tokens: list[Token], errors: list[LexError]) -> None:
    body = (_DQ_BODY if quote == '"' else _SQ_BODY).match(text, start + 1)
    bend = body.end()
    if bend < len(text) and text[bend] == quote:
        check_escapes(text[start + 1 : bend], start + 1, errors)
        tokens.append(Token(STRING, text[start : bend + 1], start, bend + 1))
    else:
        errors.append(LexError(start, bend, "Malformed string; did you forget to finish it?"))
        tokens.append(Token(ERROR, text[start:bend], start, bend))


def _long_bracket(
    text: str, start: int, opener: str, is_comment: bool,
    tokens: list[Token], comments: list[Token], errors: list[LexError],
) -> int:
    closer = "]" + "=" * opener.count("=") + "]"
    close_at = text.find(closer, start + len(opener))
    if close_at < 0:
        end = len(text)
        bracket = opener.lstrip("-")
        if is_comment:
            errors.append(LexError(start, end, f"Unfinished long comment; expected '{closer}' to close '{bracket}'"))
            comments.append(Token(BLOCK_COMMENT, text[start:end], start, end))
        else:
            errors.append(LexError(start, end, f"Malformed string; did you forget to finish it? (expected '{closer}' to close '{bracket}')"))
            tokens.append(Token(ERROR, text[start:end], start, end))
        return end
    end = close_at + len(closer)
    if is_comment:
        comments.append(Token(BLOCK_COMMENT, text[start:end], start, end))
    else:
        tokens.append(Token(LONG_STRING, text[start:end], start, end))
    return end


def _interp_section(
    text: str, begin: int, body_start: int, mid: bool,
    tokens: list[Token], errors: list[LexError], braces: list[bool],
) -> int:
    """Read an interpolated-string section that starts after '`' (or '}'); return its end."""
    end = _INTERP_BODY.match(text, body_start).end()
    body = text[body_start:end]
    ch = text[end] if end < len(text) else ""
    if ch == "`":
        kind = INTERP_END if mid else INTERP_SIMPLE
        end += 1
    elif ch == "{":
        braces.append(True)
        kind = INTERP_MID if mid else INTERP_BEGIN
        if text.startswith("{{", end):
            errors.append(LexError(end, end + 2, "Double braces are not permitted within interpolated strings; did you mean '\\{'?"))
            end += 2
        else:
            end += 1
    else:
        errors.append(LexError(begin, end, "Malformed interpolated string; did you forget to add a '`'?"))
        kind = ERROR
    check_escapes(body, body_start, errors, interpolated=True)
    tokens.append(Token(kind, text[begin:end], begin, end))
    return end
