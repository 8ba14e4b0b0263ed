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

from collections.abc import Container
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


class Frame:
    """One open bracket or block of :class:`FrameTracker`.

    ``kind``: ``'('``, ``'['``, ``'{'``, ``'interp'`` (an interpolation's braces),
    ``'function'``, ``'if'``, ``'ifexpr'`` (an if-then-else expression: no ``end``), ``'do'``,
    ``'while'``, ``'for'``, ``'repeat'`` or ``'class'`` (``declare class`` or
    ``declare extern type`` in a definition file); ``token``: the token that names it (the
    opener, or the ``then``/``else``/``do`` Luau names the block by); ``awaiting_do``: a
    ``while``/``for`` whose ``do`` has not come; ``res``: free for the tracker's user (the
    guard keeps the instance value a bracket yields there, :mod:`luaguard.guard.brackets`);
    ``group``: a ``(`` that opens a parenthesised expression, not a call's arguments.
    """

    __slots__ = ("kind", "token", "awaiting_do", "res", "group")

    def __init__(self, kind: str, token: L.Token, awaiting_do: bool = False, res: int = 0, group: bool = False) -> None:
        self.kind = kind
        self.token = token
        self.awaiting_do = awaiting_do
        self.res = res
        self.group = group


_BRACKET_KINDS = frozenset({"(", "[", "{", "interp"})
_BLOCK_CLOSES = {"end": ("function", "if", "do", "while", "for", "class"), "until": ("repeat",)}
_INTERESTING = frozenset(
    {"if", "then", "else", "function", "do", "repeat", "while", "for", "(", "[", "{", "}", ")", "]", "end",
     "until", L.INTERP_BEGIN, L.INTERP_MID, L.INTERP_END}
)


class FrameTracker:
    """Luau's brackets and blocks, one token at a time: the frame machine both the structure
    check (:func:`analyze_structure`) and the guard's prompt analysis
    (:func:`luaguard.guard.brackets.prompt_frames`) run, so the guard allows exactly the
    closers the linter accepts.

    ``ifexprs``: the offsets of the ``if`` tokens the parser read as if-expressions
    (:attr:`luaguard.luau.ast.Chunk.if_expressions`), where a parse of the same text is at
    hand: the decision is then the parser's.  Without it (text no parser has read as a
    whole, such as a guard's generation) it is taken from the previous token
    (:func:`if_is_expression`).

    Run it over the tokens of a file in order (comments excluded) with :meth:`run`;
    ``stack`` holds the open :class:`Frame` objects, innermost last; ``expr_next`` says
    whether the last ``then``/``else`` belonged to an if-expression.
    Rules (Luau's grammar, luau-lang.org/grammar): ``function``, ``if ... then``, ``do``,
    ``while/for ... do`` close with ``end``, ``repeat`` with ``until``; an ``if`` in
    expression position opens an if-expression, which nothing closes (closers drop it
    silently).  Recovery, as Luau's parser does it: a closer whose opener is not the
    innermost frame closes the innermost frame of its kind and drops the frames above it;
    a wrong bracket closer (``{ 1 ])``) stands for the innermost bracket's.

    Subclasses observe the machine through the hooks (no-ops here): :meth:`unclosed`,
    :meth:`stray`, :meth:`block_closed`, and shape frames through :meth:`new_frame`.
    """

    __slots__ = ("stack", "prev", "prev2", "expr_next", "ifexprs")

    def __init__(self, ifexprs: Container[int] | None = None) -> None:
        self.stack: list[Frame] = []
        self.prev: L.Token | None = None
        self.prev2: L.Token | None = None
        self.expr_next = False
        self.ifexprs = ifexprs

    # -- hooks -------------------------------------------------------------------------------
    def new_frame(self, kind: str, tok: L.Token, prev: L.Token | None, prev2: L.Token | None,
                  awaiting_do: bool = False) -> Frame:
        """The frame ``tok`` opens; ``prev``/``prev2``: the two tokens before it."""
        return Frame(kind, tok, awaiting_do)

    def unclosed(self, frame: Frame, tok: L.Token) -> None:
        """``frame`` (the innermost) is left open: closer ``tok`` closes a frame below it."""

    def stray(self, tok: L.Token, opener: str) -> None:
        """Closer ``tok`` has no open ``opener`` to close (``opener``: ``'block'`` for ``end``)."""

    def block_closed(self, frame: Frame, tok: L.Token) -> None:
        """Block ``frame`` was the innermost frame and ``tok`` closed it."""

    # -- the machine -------------------------------------------------------------------------
    def drop_ifexprs(self) -> None:
        """Pop the innermost open if-expressions: nothing closes them, so a closer (or the
        end of the text) drops them silently (the parser reports an incomplete one)."""
        stack = self.stack
        while stack and stack[-1].kind == "ifexpr":
            stack.pop()

    def close(self, kinds: tuple[str, ...], tok: L.Token) -> bool:
        """Pop the innermost frame whose kind is in ``kinds`` (dropping the frames above it,
        after :meth:`unclosed` for the innermost); ``False`` when there is none."""
        self.drop_ifexprs()
        stack = self.stack
        if stack and stack[-1].kind in kinds and not stack[-1].awaiting_do:
            frame = stack.pop()
            if frame.kind not in _BRACKET_KINDS:
                self.block_closed(frame, tok)
            return True
        for depth in range(len(stack) - 1, -1, -1):
            if stack[depth].kind in kinds:
                self.unclosed(stack[-1], tok)
                del stack[depth:]
                return True
        return False

    def run(self, tokens: list[L.Token]) -> L.Token | None:
        """Advance over ``tokens`` up to the EOF token (returned; ``None`` without one)."""
        stack = self.stack
        prev, prev2 = self.prev, self.prev2
        interesting = _INTERESTING
        stop: L.Token | None = None
        for tok in tokens:
            kind = tok.kind
            if kind not in interesting:
                if kind == L.EOF:
                    stop = tok
                    break
                if kind == L.NAME and prev is not None and prev.kind == L.NAME and _opens_class(tok.text, prev.text, prev2):
                    stack.append(self.new_frame("class", tok, prev, prev2))
                prev2, prev = prev, tok
                continue
            if kind == "if":
                ifexprs = self.ifexprs
                expr = tok.start in ifexprs if ifexprs is not None else if_is_expression(prev, self.expr_next)
                stack.append(self.new_frame("ifexpr" if expr else "if", tok, prev, prev2))
            elif kind == "then":
                self.expr_next = bool(stack) and stack[-1].kind == "ifexpr"
                if stack and stack[-1].kind == "if":
                    stack[-1].token = tok  # Luau names the 'then' an 'end' closes
            elif kind == "else":
                if stack and stack[-1].kind == "ifexpr":
                    stack.pop()
                    self.expr_next = True
                else:
                    self.expr_next = False
                    if stack and stack[-1].kind == "if":
                        stack[-1].token = tok
            elif kind in _BLOCK_OPENERS:
                if kind == "function" and ((prev is not None and prev.kind == L.NAME and prev.text == "declare")
                                           or (stack and stack[-1].kind == "class")):
                    pass  # `declare function f(): T` and a declared class's methods have no body
                elif kind == "do" and stack and stack[-1].awaiting_do:
                    stack[-1].awaiting_do = False
                    stack[-1].token = tok  # Luau names the loop by its 'do'
                else:
                    stack.append(self.new_frame(kind, tok, prev, prev2))
            elif kind == "while" or kind == "for":
                stack.append(self.new_frame(kind, tok, prev, prev2, True))
            elif kind in ("(", "[", "{"):
                stack.append(self.new_frame(kind, tok, prev, prev2))
            elif kind == L.INTERP_BEGIN:
                stack.append(self.new_frame("interp", tok, prev, prev2))
            elif kind in _BLOCK_CLOSES:
                if not self.close(_BLOCK_CLOSES[kind], tok):
                    self.stray(tok, "block" if kind == "end" else "repeat")
            elif kind in _CLOSE_BRACKETS:
                opener = _CLOSE_BRACKETS[kind]
                if not self.close((opener,), tok):  # (close dropped the if-expressions)
                    if stack and stack[-1].kind in _BRACKET_KINDS:
                        # A wrong closer, as in `{ 1, 2 ])`: it stands for the closer of
                        # the innermost bracket (Luau reports it there too).
                        self.unclosed(stack[-1], tok)
                        stack.pop()
                    else:
                        self.stray(tok, opener)
            elif kind == L.INTERP_MID:
                if self.close(("interp",), tok):
                    stack.append(self.new_frame("interp", tok, prev, prev2))
            elif kind == L.INTERP_END:
                self.close(("interp",), tok)
            prev2, prev = prev, tok
        self.prev, self.prev2 = prev, prev2
        return stop


def _opens_class(text: str, prev_text: str, prev2: L.Token | None) -> bool:
    """Does name ``text`` after name ``prev_text`` open a declared class of a definition file?
    Luau's ``Parser::parseDeclaration``: ``declare class C [extends B] ... end`` and
    ``declare extern type C [extends B] with ... end``; inside, ``function m(self): T``
    declares a method and has no body."""
    if text == "class":
        return prev_text == "declare"
    return text == "type" and prev_text == "extern" and prev2 is not None and prev2.kind == L.NAME and prev2.text == "declare"


def _closer_word(frame: Frame) -> str:
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


def _opener_word(frame: Frame) -> str:
    if frame.kind == "interp":
        return "{"
    if frame.kind == "ifexpr":
        return "if"
    return frame.token.text if frame.kind not in _BRACKET_KINDS else frame.kind


class _Analysis(FrameTracker):
    """The frame machine reporting :class:`StructureProblem` objects, with the
    misleading-indentation suspect of the module docstring."""

    __slots__ = ("lines", "problems", "suspect")

    def __init__(self, lines: LineIndex, ifexprs: Container[int] | None = None) -> None:
        super().__init__(ifexprs)
        self.lines = lines
        self.problems: list[StructureProblem] = []
        self.suspect: Frame | None = None

    def _line_col(self, offset: int) -> tuple[int, int]:
        pos = self.lines.position(offset)
        return pos.line, pos.character

    def unclosed(self, frame: Frame, tok: L.Token) -> None:
        rule = UNBALANCED_BRACKET if frame.kind in _BRACKET_KINDS else UNCLOSED_BLOCK
        open_line, open_col = self._line_col(frame.token.start)
        got_line, _ = self._line_col(tok.start)
        where = f"column {open_col + 1}" if open_line == got_line else f"line {open_line + 1}"
        target = frame
        extra = ""
        suspect = self.suspect
        if rule == UNCLOSED_BLOCK and suspect is not None and suspect.token.start > frame.token.start:
            s_line, _ = self._line_col(suspect.token.start)
            extra = f"; did you forget to close '{suspect.token.text}' at line {s_line + 1}?"
            target = suspect
            self.suspect = None
        self.problems.append(StructureProblem(
            rule, target.token.start, target.token.end,
            f"Expected '{_closer_word(frame)}' (to close '{_opener_word(frame)}' at {where}), got {tok.describe()}{extra}",
            tok.start))

    def stray(self, tok: L.Token, opener: str) -> None:
        if opener == "block":
            msg, rule = "Expected <eof>, got 'end'; there is no open block for this 'end' to close", UNCLOSED_BLOCK
        elif opener == "repeat":
            msg, rule = "Expected <eof>, got 'until'; there is no open 'repeat' for this 'until' to close", UNCLOSED_BLOCK
        else:
            msg, rule = f"Unexpected '{tok.kind}' with no matching '{opener}'", UNBALANCED_BRACKET
        self.problems.append(StructureProblem(rule, tok.start, tok.end, msg, tok.start))

    def block_closed(self, frame: Frame, tok: L.Token) -> None:
        lines = self.lines
        o_line = lines.line_of(frame.token.start)
        c_line = lines.line_of(tok.start)
        suspect = self.suspect
        if (o_line != c_line and _indent(lines, o_line) != _indent(lines, c_line)
                and (suspect is None or suspect.token.start < frame.token.start)):
            self.suspect = frame


def analyze_structure(tokens: list[L.Token], lines: LineIndex,
                      ifexprs: Container[int] | None = None) -> list[StructureProblem]:
    """Check brackets and blocks of a token list (comments excluded, ending in EOF).

    ``ifexprs``: the parser's if-expressions (see :class:`FrameTracker`).  Returns problems
    in source order of detection.  Valid Luau produces none when ``ifexprs`` comes from a
    parse of the same tokens; callers report a problem only where the parser also found an
    error (:class:`luaguard.checks.structure.StructureCheck`).
    """
    machine = _Analysis(lines, ifexprs)
    eof = machine.run(tokens)
    stack = machine.stack
    if eof is not None:
        machine.drop_ifexprs()
        if stack:
            # Report the innermost open frame, as the parser would at <eof>.
            machine.unclosed(stack[-1], eof)
    return machine.problems


def _indent(lines: LineIndex, line: int) -> str:
    text = lines.line_text(line)
    return text[: len(text) - len(text.lstrip(" \t"))]
