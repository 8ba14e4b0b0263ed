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
from ..luau.structure import EXPRESSION_PRECEDERS, Frame, FrameTracker

#: a bracket or binding with no instance value; one whose value the guard cannot know
#: (indexing it is rejected) - the values :mod:`.paths` and :mod:`.automaton` use too
NOVAL = -2
POISON = -1

__all__ = [
    "BRACKETS",
    "K_BLOCK",
    "K_CALL",
    "K_CTX",
    "K_FUNC",
    "K_GROUP",
    "K_INDEX",
    "K_INTERP",
    "K_LOOP",
    "K_PARAMS",
    "K_REPEAT",
    "K_TABLE",
    "K_TANGLE",
    "K_TBRACE",
    "K_TBRACK",
    "K_TPAREN",
    "K_TYPE",
    "K_TYPEOF",
    "TYPE_KINDS",
    "prompt_frames",
]

K_CALL, K_GROUP, K_INDEX, K_TABLE, K_INTERP, K_BLOCK, K_REPEAT, K_LOOP = 1, 2, 3, 4, 5, 6, 7, 8
#: a function: its header, then its body (closed by ``end``); ``res`` 1 when it declares ``...``
K_FUNC = 9
#: a function's parameter list ``(``
K_PARAMS = 10
#: a type (after ``:`` in an annotation, ``::``, a type alias's ``=`` ...): ``res`` is the class
#: of the previous token code goes on with when the type ends
K_TYPE = 11
#: brackets inside a type: ``(``, ``<`` (``res`` 0: type arguments; else generic parameters,
#: ``res`` says where reading goes on after ``>``), ``{`` (a table type), ``[`` (its indexer)
K_TPAREN, K_TANGLE, K_TBRACE, K_TBRACK = 12, 13, 14, 15
#: ``typeof(`` in a type: an expression inside
K_TYPEOF = 16
#: a projection's stand-in for frames it drops (``res`` bit 1: inside a function that declares
#: ``...``; bit 2: inside a table type): never popped
K_CTX = 17
BRACKETS = frozenset({K_CALL, K_GROUP, K_INDEX, K_TABLE, K_INTERP, K_PARAMS, K_TPAREN, K_TANGLE, K_TBRACE, K_TBRACK,
                      K_TYPEOF})
#: frames of a type (the region between a type's start and its end)
TYPE_KINDS = frozenset({K_TYPE, K_TPAREN, K_TANGLE, K_TBRACE, K_TBRACK})

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
        if kind == "{":  # res 1: a call's table argument (see automaton)
            return Frame(kind, tok, res=1 if after_value and prev.kind != L.STRING else 0)
        if kind == "function":  # res bit 2: a function expression (see automaton.K_FUNC)
            return Frame(kind, tok, res=2 if prev is not None and prev.kind in EXPRESSION_PRECEDERS else 0)
        return Frame(kind, tok, awaiting_do, res=NOVAL)


def prompt_frames(tokens: list[L.Token], n: int, ifexprs=None,
                  vararg_functions=frozenset()) -> tuple[tuple, int, bool, tuple[int, ...]]:
    """The open frames after the first ``n`` of a prompt's tokens (comments excluded), the
    current level's if-expression count, whether the last ``then``/``else`` belonged to an
    if-expression, as the guard represents them, and each frame's opener token offset
    (``if`` for an if-statement's frame, ``while``/``for``, ``function`` ...).

    Runs the structure check's own frame machine
    (:class:`luaguard.luau.structure.FrameTracker`, recovery from mismatched closers
    included), with the parser's if-expressions (``ifexprs``) where a parse is at hand; a
    function's frame is :data:`K_FUNC`, its ``res`` 1 when its ``function`` token's offset is
    in ``vararg_functions`` (the parser's functions that declare ``...``).  Values the guard cannot know are :data:`~.paths.POISON`: the result of a
    parenthesised expression, of a ``[...]`` index on a value, and of a lookup call
    (``WaitForChild(``) whose closing parenthesis the model may write.
    """
    machine = _PromptFrames(ifexprs)
    machine.run(tokens[:n])
    frames, ifx = _convert(machine.stack, vararg_functions)
    openers = tuple(f.token.start for f in machine.stack if f.kind != "ifexpr")
    return frames, ifx, machine.expr_next, openers


_KIND = {"[": K_INDEX, "{": K_TABLE, "interp": K_INTERP, "repeat": K_REPEAT, "function": K_FUNC}


def _convert(stack: list[Frame], vararg_functions=frozenset()) -> tuple[tuple, int]:
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
        if kind == K_FUNC:
            res = (1 if f.token.start in vararg_functions else 0) | (f.res & 2)
        else:
            res = f.res if kind in (K_CALL, K_GROUP, K_INDEX, K_TABLE) else NOVAL
        frames.append((kind, res, 0, ifx))
        ifx = 0
    return tuple(frames), ifx
