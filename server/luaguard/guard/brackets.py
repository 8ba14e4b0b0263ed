"""Brackets and blocks for the guard: frame kinds and the open frames of a prompt.

The guard never lets a model write a closer without its opener.  What "its opener" is
follows the linter's structure analysis (:mod:`luaguard.luau.structure`, itself written from
Luau's grammar; a prompt's open frames come from that module's own frame machine): brackets
``( [ {`` and interpolation braces, and the blocks that ``end`` (``function``, ``if ...
then``, ``do``, ``while/for ... do``) or ``until`` (``repeat``) close, on one stack.  A
closer is allowed only when the innermost open frame is its opener: ``)`` while a
``function`` opened inside the parentheses is still open would leave that function
unclosed, and an ``end`` while a ``(`` opened inside the block is still open would make the
linter drop the ``(`` - its later ``)`` would then have no opener.

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
from ..luau.structure import Frame, FrameTracker
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


class _PromptFrames(FrameTracker):
    """The linter's frame machine, with each bracket's instance value in ``Frame.res``."""

    __slots__ = ()

    def new_frame(self, kind: str, tok: L.Token, prev: L.Token | None, prev2: L.Token | None,
                  awaiting_do: bool = False) -> Frame:
        after_value = prev is not None and prev.kind in _VALUE_END
        if kind == "(":
            if not after_value:
                return Frame(kind, tok, res=POISON, group=True)
            lookup = prev.kind == L.NAME and prev.text in _LOOKUP_NAMES and prev2 is not None and prev2.kind == ":"
            return Frame(kind, tok, res=POISON if lookup else NOVAL)
        if kind == "[":
            return Frame(kind, tok, res=POISON if after_value else NOVAL)
        if kind == "{":
            return Frame(kind, tok, res=0)
        return Frame(kind, tok, awaiting_do, res=NOVAL)


def prompt_frames(tokens: list[L.Token], n: int) -> tuple[tuple, int, bool]:
    """The open frames after the first ``n`` of a prompt's tokens (comments excluded), the
    current level's if-expression count, and whether the last ``then``/``else`` belonged
    to an if-expression, as the guard represents them.

    Runs the structure check's own frame machine
    (:class:`luaguard.luau.structure.FrameTracker`, recovery from mismatched closers
    included).  Values the guard cannot know are :data:`~.paths.POISON`: the result of a
    parenthesised expression, of a ``[...]`` index on a value, and of a lookup call
    (``WaitForChild(``) whose closing parenthesis the model may write.
    """
    machine = _PromptFrames()
    machine.run(tokens[:n])
    frames, ifx = _convert(machine.stack)
    return frames, ifx, machine.expr_next


_KIND = {"[": K_INDEX, "{": K_TABLE, "interp": K_INTERP, "repeat": K_REPEAT}


def _convert(stack: list[Frame]) -> tuple[tuple, int]:
    frames: list[tuple] = []
    ifx = 0
    for f in stack:
        if f.kind == "ifexpr":
            ifx += 1
            continue
        if f.awaiting_do:
            kind = K_LOOP
        elif f.kind == "(":
            kind = K_GROUP if f.group else K_CALL
        else:
            kind = _KIND.get(f.kind, K_BLOCK)
        res = f.res if kind in (K_CALL, K_GROUP, K_INDEX) else (0 if kind == K_TABLE else NOVAL)
        frames.append((kind, res, 0, ifx))
        ifx = 0
    return tuple(frames), ifx
