"""Token-level structure analysis: brackets and ``end``/``until`` blocks.

This is deliberately simpler than the parser: it needs only tokens, runs in one pass,
and names the construct left open in the words Luau's parser uses
(``Expected ')' (to close '(' at line 3), got 'end'``).  Block rules follow the Luau
grammar (luau-lang.org/grammar): ``function``, ``if``/``then``, ``do``, ``while ... do``,
``for ... do`` close with ``end``; ``repeat`` closes with ``until``; an ``if`` in
expression position is an if-then-else *expression* and has no ``end``.

Like Luau's ``Parser::expectMatchEndAndConsume``, a block closed on another line whose
indentation differs from its opener's line is remembered as a misleading-indentation
suspect (Luau compares the opener token's column, which flags every inline callback
``Connect(function() ... end)``; comparing line indentation does not); when a block is
left open at the end of the file and a suspect exists after it, the report points at the
suspect, where an ``end`` was most likely forgotten.  An ``if`` block is named by its
``then`` (or ``else``) and a loop by its ``do``, as Luau names them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..text import LineIndex
from . import lexer as L

UNBALANCED_BRACKET = "unbalanced_bracket"
UNCLOSED_BLOCK = "unclosed_block"

_OPEN_BRACKETS = {"(": ")", "[": "]", "{": "}", L.INTERP_BEGIN: "}"}
_CLOSE_BRACKETS = {")": "(", "]": "[", "}": "{"}
_BLOCK_OPENERS = frozenset({"function", "do", "repeat"})

#: Tokens after which the next token starts an expression (so ``if`` there is an
#: if-then-else expression).  ``then``/``else`` are decided by their enclosing frame.
EXPRESSION_PRECEDERS = frozenset(
    {
        "=", "(", "[", "{", ",", "return", "in", "..", "+", "-", "*", "/", "//", "%", "^", "#",
        "not", "and", "or", "==", "~=", "<", "<=", ">", ">=", "+=", "-=", "*=", "/=", "//=",
        "%=", "^=", "..=", L.INTERP_BEGIN, L.INTERP_MID, "if", "elseif", "while", "until",
    }
)


def if_is_expression(prev: L.Token | None, expr_next: bool) -> bool:
    """Does an ``if`` after token ``prev`` start an if-then-else *expression* (no ``end``)?

    Luau's grammar: an expression, not a statement, follows the tokens of
    :data:`EXPRESSION_PRECEDERS`; after ``then``/``else`` it depends on whether they belong to
    an if-expression (``expr_next``, tracked by the caller)."""
    if prev is None:
        return False
    if prev.kind in ("then", "else"):
        return expr_next
    return prev.kind in EXPRESSION_PRECEDERS


@dataclass(frozen=True, slots=True)
class StructureProblem:
    """One structural problem.

    ``rule`` is :data:`UNBALANCED_BRACKET` or :data:`UNCLOSED_BLOCK`; ``start``/``end``
    are offsets of the token the report is attached to (the unclosed opener, or a stray
    closer); ``detected_at`` is the offset of the token where the problem became certain.
    """

    rule: str
    start: int
    end: int
    message: str
    detected_at: int


class _Frame:
    __slots__ = ("kind", "token", "awaiting_do")

    def __init__(self, kind: str, token: L.Token, awaiting_do: bool = False) -> None:
        self.kind = kind  # '(' '[' '{' 'interp' 'function' 'if' 'ifexpr' 'do' 'while' 'for' 'repeat'
        self.token = token
        self.awaiting_do = awaiting_do


_BRACKET_KINDS = frozenset({"(", "[", "{", "interp"})
_INTERESTING = frozenset(
    {"if", "then", "else", "function", "do", "repeat", "while", "for", "(", "[", "{", "}", ")", "]", "end",
     "until", L.INTERP_BEGIN, L.INTERP_MID, L.INTERP_END, L.EOF}
)


def _closer_word(frame: _Frame) -> str:
    kind = frame.kind
    if kind in ("(", "[", "{"):
        return _OPEN_BRACKETS[kind]
    if kind == "interp":
        return "}"
    if kind == "repeat":
        return "until"
    if kind == "ifexpr":
        return "else"
    if frame.awaiting_do:
        return "do"
    return "end"


def _opener_word(frame: _Frame) -> str:
    if frame.kind == "interp":
        return "{"
    if frame.kind == "ifexpr":
        return "if"
    return frame.token.text if frame.kind not in _BRACKET_KINDS else frame.kind


def analyze_structure(tokens: list[L.Token], lines: LineIndex) -> list[StructureProblem]:
    """Check brackets and blocks of a token list (comments excluded, ending in EOF).

    Returns problems in source order of detection.  Valid Luau produces none.
    """
    problems: list[StructureProblem] = []
    stack: list[_Frame] = []
    suspect: _Frame | None = None  # misleading-indentation suspect (see module docstring)
    prev: L.Token | None = None
    expr_next = False  # the previous then/else belonged to an if-expression

    def line_col(offset: int) -> tuple[int, int]:
        pos = lines.position(offset)
        return pos.line, pos.character

    def report_unclosed(frame: _Frame, got: L.Token) -> None:
        nonlocal suspect
        rule = UNBALANCED_BRACKET if frame.kind in _BRACKET_KINDS else UNCLOSED_BLOCK
        want = _closer_word(frame)
        opener = _opener_word(frame)
        open_line, open_col = line_col(frame.token.start)
        got_line, _ = line_col(got.start)
        where = f"column {open_col + 1}" if open_line == got_line else f"line {open_line + 1}"
        target = frame
        extra = ""
        if (
            rule == UNCLOSED_BLOCK
            and suspect is not None
            and suspect.token.start > frame.token.start
        ):
            s_line, _ = line_col(suspect.token.start)
            extra = f"; did you forget to close '{_suspect_word(suspect)}' at line {s_line + 1}?"
            target = suspect
            suspect = None
        problems.append(
            StructureProblem(
                rule,
                target.token.start,
                target.token.end,
                f"Expected '{want}' (to close '{opener}' at {where}), got {got.describe()}{extra}",
                got.start,
            )
        )

    def close(kinds: frozenset[str] | tuple[str, ...], tok: L.Token) -> bool:
        """Pop the innermost frame whose kind is in ``kinds``; report frames above it."""
        nonlocal suspect
        # if-expressions never need a closer: drop them silently (the parser reports
        # an incomplete one precisely).
        while stack and stack[-1].kind == "ifexpr":
            stack.pop()
        if stack and stack[-1].kind in kinds and not stack[-1].awaiting_do:
            frame = stack.pop()
            if frame.kind not in _BRACKET_KINDS:
                o_line = lines.line_of(frame.token.start)
                c_line = lines.line_of(tok.start)
                if (
                    o_line != c_line
                    and _indent(lines, o_line) != _indent(lines, c_line)
                    and (suspect is None or suspect.token.start < frame.token.start)
                ):
                    suspect = frame
            return True
        for depth in range(len(stack) - 1, -1, -1):
            frame = stack[depth]
            if frame.kind in kinds:
                report_unclosed(stack[-1], tok)
                del stack[depth:]
                return True
        return False

    interesting = _INTERESTING
    for tok in tokens:
        kind = tok.kind
        if kind not in interesting:
            if kind == L.NAME and tok.text == "class" and prev is not None and prev.kind == L.NAME and prev.text == "declare":
                stack.append(_Frame("class", tok))  # `declare class C ... end` (definition files)
            prev = tok
            continue
        if kind == "if":
            stack.append(_Frame("ifexpr" if if_is_expression(prev, expr_next) else "if", tok))
        elif kind == "then":
            expr_next = bool(stack) and stack[-1].kind == "ifexpr"
            if stack and stack[-1].kind == "if":
                stack[-1].token = tok  # Luau names the 'then' an 'end' closes
        elif kind == "else":
            if stack and stack[-1].kind == "ifexpr":
                stack.pop()
                expr_next = True
            else:
                expr_next = False
                if stack and stack[-1].kind == "if":
                    stack[-1].token = tok
        elif kind in _BLOCK_OPENERS:
            if kind == "function" and prev is not None and prev.kind == L.NAME and prev.text == "declare":
                pass  # `declare function f(): T` in a definition file has no body
            elif kind == "do" and stack and stack[-1].awaiting_do:
                stack[-1].awaiting_do = False
                stack[-1].token = tok  # Luau names the loop's 'do' 
            else:
                stack.append(_Frame(kind, tok))
        elif kind == "while" or kind == "for":
            stack.append(_Frame(kind, tok, awaiting_do=True))
        elif kind in ("(", "[", "{"):
            stack.append(_Frame(kind, tok))
        elif kind == L.INTERP_BEGIN:
            stack.append(_Frame("interp", tok))
        elif kind == "end":
            if not close(("function", "if", "do", "while", "for", "class"), tok):
                problems.append(StructureProblem(UNCLOSED_BLOCK, tok.start, tok.end, "Expected <eof>, got 'end'; there is no open block for this 'end' to close", tok.start))
        elif kind == "until":
            if not close(("repeat",), tok):
                problems.append(StructureProblem(UNCLOSED_BLOCK, tok.start, tok.end, "Expected <eof>, got 'until'; there is no open 'repeat' for this 'until' to close", tok.start))
        elif kind in _CLOSE_BRACKETS:
            opener = _CLOSE_BRACKETS[kind]
            if not close((opener,), tok):
                while stack and stack[-1].kind == "ifexpr":
                    stack.pop()
                if stack and stack[-1].kind in _BRACKET_KINDS:
                    # A wrong closer, as in `{ 1, 2 ])`: it stands for the closer of
                    # the innermost bracket (Luau reports it there too).
                    report_unclosed(stack[-1], tok)
                    stack.pop()
                else:
                    problems.append(StructureProblem(UNBALANCED_BRACKET, tok.start, tok.end, f"Unexpected '{kind}' with no matching '{opener}'", tok.start))
        elif kind == L.INTERP_MID:
            if close(("interp",), tok):
                stack.append(_Frame("interp", tok))
        elif kind == L.INTERP_END:
            close(("interp",), tok)
        elif kind == L.EOF:
            while stack and stack[-1].kind == "ifexpr":
                stack.pop()
            if stack:
                # Report the innermost open frame, as the parser would at <eof>.
                report_unclosed(stack[-1], tok)
            break
        prev = tok
    return problems


def _indent(lines: LineIndex, line: int) -> str:
    text = lines.line_text(line)
    return text[: len(text) - len(text.lstrip(" \t"))]


def _suspect_word(frame: _Frame) -> str:
    return frame.token.text
