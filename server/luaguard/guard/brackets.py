"""Brackets and blocks for the guard: frame kinds and the open frames of a prompt.

The guard never lets a model write a closer without its opener.  What "its opener" is
follows the linter's structure analysis (:mod:`luaguard.luau.structure`, itself written from
Luau's grammar): brackets ``( [ {`` and interpolation braces, and the blocks that ``end``
(``function``, ``if ... then``, ``do``, ``while/for ... do``) or ``until`` (``repeat``)
close, on one stack.  A closer is allowed only when the innermost open frame is its opener:
``)`` while a ``function`` opened inside the parentheses is still open would leave that
function unclosed, and an ``end`` while a ``(`` opened inside the block is still open would
make the linter drop the ``(`` - its later ``)`` would then have no opener.

``while``/``for`` open a loop frame that their ``do`` turns into a block (nothing but ``do``
may close it).  ``if`` opens a block only as a statement; an ``if`` in expression position (after an
expression preceder, or after the ``then``/``else`` of an if-expression) is an
if-then-else expression with no ``end``.  The guard counts the open if-expressions of the
current level (``ifx``) instead of keeping frames for them, as the linter drops them
silently.

A frame is a tuple ``(kind, res, gen, ifx)``: ``kind`` one of the ``K_*`` constants, ``res``
the instance value the bracket yields when it closes (see :mod:`.automaton`), ``gen`` 1 for
frames the model opened, ``ifx`` the if-expression count of the level outside the frame.
"""

from __future__ import annotations

from ..luau import lexer as L
from ..luau.structure import if_is_expression
from .paths import NOVAL, POISON

__all__ = [
    "BRACKETS",
    "K_BLOCK",
    "K_CALL",
    "K_GROUP",
    "K_INDEX",
    "K_INTERP",
    "K_LOOP",
    "K_REPEAT",
    "K_TABLE",
    "prompt_frames",
]

K_CALL, K_GROUP, K_INDEX, K_TABLE, K_INTERP, K_BLOCK, K_REPEAT, K_LOOP = 1, 2, 3, 4, 5, 6, 7, 8
BRACKETS = frozenset({K_CALL, K_GROUP, K_INDEX, K_TABLE, K_INTERP})

_LOOKUP_NAMES = frozenset({"WaitForChild", "FindFirstChild", "GetService", "FindService", "FindFirstAncestor"})
_VALUE_END = frozenset({L.NAME, ")", "]", L.STRING, L.LONG_STRING, L.INTERP_SIMPLE, L.INTERP_END})
_BLOCK_CLOSERS = {"end": ("function", "if", "do", "while", "for", "class"), "until": ("repeat",)}


class _F:
    __slots__ = ("awaiting_do", "kind", "res")

    def __init__(self, kind: str, res: int = NOVAL, awaiting_do: bool = False) -> None:
        self.kind = kind
        self.res = res
        self.awaiting_do = awaiting_do


def _close(stack: list[_F], kinds: tuple[str, ...]) -> bool:
    """The structure analysis's recovery: drop if-expressions, pop the innermost frame of
    one of ``kinds`` and everything above it."""
    while stack and stack[-1].kind == "ifexpr":
        stack.pop()
    if stack and stack[-1].kind in kinds and not stack[-1].awaiting_do:
        stack.pop()
        return True
    for depth in range(len(stack) - 1, -1, -1):
        if stack[depth].kind in kinds:
            del stack[depth:]
            return True
    return False


def prompt_frames(tokens: list[L.Token], upto: int) -> tuple[tuple, int, bool]:
    """The open frames before offset ``upto`` of a prompt's tokens (comments excluded), the
    current level's if-expression count, and whether the last ``then``/``else`` belonged
    to an if-expression, as the guard represents them.

    Mirrors :func:`luaguard.luau.structure.analyze_structure` (including its recovery from
    mismatched closers).  Values the guard cannot know are :data:`~.paths.POISON`: the result
    of a parenthesised expression, of a ``[...]`` index on a value, and of a lookup call
    (``WaitForChild(``) whose closing parenthesis the model may write.
    """
    stack: list[_F] = []
    prev: L.Token | None = None
    prev2: L.Token | None = None
    expr_next = False
    for t in tokens:
        if t.start >= upto or t.kind == L.EOF:
            break
        k = t.kind
        if k == "if":
            stack.append(_F("ifexpr" if if_is_expression(prev, expr_next) else "if"))
        elif k == "then":
            expr_next = bool(stack) and stack[-1].kind == "ifexpr"
        elif k == "else":
            if stack and stack[-1].kind == "ifexpr":
                stack.pop()
                expr_next = True
            else:
                expr_next = False
        elif k in ("function", "repeat"):
            stack.append(_F(k))
        elif k == "do":
            if stack and stack[-1].awaiting_do:
                stack[-1].awaiting_do = False
            else:
                stack.append(_F("do"))
        elif k in ("while", "for"):
            stack.append(_F(k, awaiting_do=True))
        elif k == "(":
            if prev is not None and prev.kind in _VALUE_END:
                lookup = prev.kind == L.NAME and prev.text in _LOOKUP_NAMES and prev2 is not None and prev2.kind == ":"
                stack.append(_F("(", POISON if lookup else NOVAL))
            else:
                stack.append(_F("group", POISON))
        elif k == "[":
            stack.append(_F("[", POISON if prev is not None and prev.kind in _VALUE_END else NOVAL))
        elif k == "{":
            stack.append(_F("{", 0))
        elif k == L.INTERP_BEGIN:
            stack.append(_F("interp"))
        elif k in _BLOCK_CLOSERS:
            _close(stack, _BLOCK_CLOSERS[k])
        elif k in (")", "]", "}"):
            want = {")": ("(", "group"), "]": ("[",), "}": ("{",)}[k]
            if not _close(stack, want):
                while stack and stack[-1].kind == "ifexpr":
                    stack.pop()
                if stack and stack[-1].kind in ("(", "group", "[", "{", "interp"):
                    stack.pop()
        elif k == L.INTERP_MID:
            if _close(stack, ("interp",)):
                stack.append(_F("interp"))
        elif k == L.INTERP_END:
            _close(stack, ("interp",))
        prev2, prev = prev, t
    frames, ifx = _convert(stack)
    return frames, ifx, expr_next


_KIND = {"(": K_CALL, "group": K_GROUP, "[": K_INDEX, "{": K_TABLE, "interp": K_INTERP, "repeat": K_REPEAT}


def _convert(stack: list[_F]) -> tuple[tuple, int]:
    frames: list[tuple] = []
    ifx = 0
    for f in stack:
        if f.kind == "ifexpr":
            ifx += 1
            continue
        kind = K_LOOP if f.awaiting_do else _KIND.get(f.kind, K_BLOCK)
        res = f.res if kind in (K_CALL, K_GROUP, K_INDEX) else (0 if kind == K_TABLE else NOVAL)
        frames.append((kind, res, 0, ifx))
        ifx = 0
    return tuple(frames), ifx
