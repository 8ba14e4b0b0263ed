"""The guard's byte-level automaton over Luau text.

:class:`Automaton` reads the text a model writes one byte at a time and rejects the first
byte that would make it (1) name an instance that does not exist where a path is being
written, (2) write a placeholder, (3) close a bracket or block that is not open (or close
the wrong one), or (4) - opt-in - write an asset id that appears nowhere in the project or
prompt.  It follows the token boundaries of :mod:`luaguard.luau.lexer` (itself written from
``Ast/src/Lexer.cpp`` of luau-lang/luau) exactly where it matters - strings with their
escapes, long brackets ``[==[ ]==]``, comments, interpolated strings with their brace
stack, numbers - so that what the guard treats as code is what the linter treats as code.

**State.** A state is a plain tuple (hashable, immutable)::

    (mode, payload, prev, flags, val, stack, decl, num, ifx, events)

* ``mode``/``payload``: where the lexer is (between tokens, inside an identifier, a
  number, a string, a comment, a name being matched against a name table ...);
* ``prev``: the class of the previous significant token (``P_*``) and ``flags``
  (``F_NL``: a line break or a comment since it, or no token yet - a line comment starting
  without it follows code on its line, the linter's ``CTX_TRAIL``; ``F_IOPEN``: right after
  an interpolation ``{``);
* ``val``: the instance value of the expression just read (see :mod:`.paths`), meaningful
  while a postfix operator (``.``, ``:``, ``[``) may still follow;
* ``stack``: open brackets and blocks (:mod:`.brackets`); ``ifx``: open if-expressions of
  the current level;
* ``decl``/``events``: bookkeeping of ``local`` declarations, so the caller can bind names
  the model declares (``local remotes = RS:WaitForChild("Remotes")``); they never change
  which bytes are accepted (:meth:`Automaton.project` drops them);
* ``num``: the grounded-number context (after ``...Id =``).

**Value rules** follow :class:`luaguard.analysis.resolve.Resolver` (the linter): a chain
starts at a variable bound to instances (the caller attaches the value of the identifier at
each token boundary; inside a token it is :data:`ATTACH_MAYBE`, an unknown value: the
caller re-reads the tokens in which a bound name ends, see :meth:`.matcher.Guard.mask`); ``.Name``/``["Name"]`` use the ``KIND_DOT``/``KIND_BRACKET``
tables, ``:WaitForChild("Name")``/``:FindFirstChild`` ``KIND_LOOKUP``,
``:GetService``/``:FindService`` ``KIND_SERVICE``, ``:FindFirstAncestor``
``KIND_ANCESTOR``; parenthesised chains ``(x).Y`` and ``(x :: T).Y`` keep the value.
Where the guard cannot know the value the linter will compute (a comment between a value
and ``.``, a bracket the prompt opened and the model closes, conflicting bindings), the
value is :data:`~.paths.POISON` and indexing it is rejected.

**Placeholders**: :mod:`.elision_matchers` phrases in comments and strings; ``...`` only where
the linter's ``placeholder`` rule accepts it as a vararg (after an expression preceder on
the same line, or as a type pack ``T...``).

**Closers**: ``)``, ``]``, ``}``, ``end`` and ``until`` only when the innermost open frame is
their opener (:mod:`.brackets` mirrors the linter's structure analysis, so a closer never
makes it drop or miss a frame).

Other bytes that make Luau invalid are rejected where that is cheap and certain (non-ASCII
or control bytes in code, raw line breaks in quoted strings, malformed numbers, ``{{`` in
interpolations, ``[=`` without ``[``, a keyword after ``.``).

``step(state, byte, how)`` returns the next state or ``None``; ``how`` has bit
:data:`LENIENT` (used to read a prompt: every rejection becomes the linter's recovery, e.g.
a name that does not exist makes the chain unknown) and bit :data:`GEN` (frames opened now
belong to the model).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable

from .brackets import (
    BRACKETS,
    K_BLOCK,
    K_CALL,
    K_CTX,
    K_FUNC,
    K_GROUP,
    K_INDEX,
    K_INTERP,
    K_LOOP,
    K_PARAMS,
    K_REPEAT,
    K_TABLE,
    K_TANGLE,
    K_TBRACE,
    K_TBRACK,
    K_TPAREN,
    K_TYPE,
    K_TYPEOF,
    TYPE_KINDS,
)
from .numbers import ID_TRIGGERS, IdSet
from .paths import DESC, KIND_BRACKET, KIND_DOT, KIND_METHOD, NOVAL, POISON, PathSpace
from ..elisions import CTX_BLOCK, CTX_LINE, CTX_RUN, CTX_TRAIL, CTX_TYPE, CTX_TYPE_BLOCK
from .elision_matchers import BANNED, PhraseMatcher, block_matcher, comment_matcher, string_matcher

__all__ = ["ATTACH_MAYBE", "GEN", "KEYWORDS", "LENIENT", "Automaton", "initial_state"]

# -- state layout -----------------------------------------------------------------------------
MODE, PAY, PREV, FLAGS, VAL, STACK, DECL, NUM, IFX, EV = range(10)

(M_CODE, M_IDENT, M_NUM, M_DASH, M_DOT1, M_DOT2, M_COLON, M_LBRACK, M_LBRACK_EQ, M_STR, M_LSTR,
 M_CSTART, M_CLB, M_LCMT, M_BCMT, M_INTERP, M_NAME, M_LPAREN, M_LARG, M_NSTR, M_AFTER, M_IARG,
 M_DIGITS, M_TILDE, M_EQ, M_TYPE, M_ATTR) = range(27)

(P_NONE, P_PRE, P_NAME, P_CALLABLE, P_VAL, P_OTHER, P_LOCAL, P_FUNCTION, P_THEN_EXPR,
 P_THEN_STMT, P_STRING) = range(11)
# previous-token classes of the parts of Luau that are not expressions (Luau's grammar,
# Ast/src/Parser.cpp: parseFunctionBody, parseBindingList, parseTypeAlias, parseFor): in a
# function header a name (P_FNAME), after its `.`/`:` (P_FDOT), after its generic parameters
# (P_FGEN); in a parameter list after `(` (P_PARAM0) or `,` (P_PARAM), after a parameter's
# name (P_PNAME), `...` (P_PDOTS) or type (P_PTYPED); after the list's `)` (P_PEND); a type
# alias's name (P_TALIAS) and generic parameters (P_TALIASG); a `for` loop's variables
# (P_FOR after `for` or `,`, P_FORNAME after a name).  The C steps leave these to Python.
(P_FNAME, P_FDOT, P_FGEN, P_PARAM0, P_PARAM, P_PNAME, P_PDOTS, P_PTYPED, P_PEND, P_TALIAS, P_TALIASG,
 P_FOR, P_FORNAME) = range(11, 24)
#: in a comment's state (its previous-token slot), ``TYPE_PREV + phase``: the comment is inside
#: a type, reading goes back to the type at that phase when it ends
TYPE_PREV = 64
LITERAL = -5  # string payload `res` of a string literal (not a call argument)
TYPE_STR = -6  # string payload `res` of a string singleton type ("on" in `mode: "on" | "off"`)
F_NL, F_IOPEN = 2, 4
#: a line comment ended the previous line (the next ``--`` continues a comment paragraph:
#: the linter's ``CTX_RUN``); and that comment ended at a ``\r`` whose ``\n`` is still to come
F_CMT, F_CR = 8, 16
#: after `...` that is a placeholder unless something follows on its line (not `,` or `;`)
F_DOTS = 32
#: after the name `type` / `export` where a statement starts (a type alias may follow)
F_TYPEKW, F_EXPORTKW = 64, 128
#: flags read by bytes of any kind, which the mask walk keeps (see project); it may drop the
#: others where the next byte cannot read them
F_KEPT = F_DOTS | F_TYPEKW | F_EXPORTKW

G_FRESH, G_CHAIN, G_IMPURE = -10, -11, -12

# declaration bookkeeping: (phase, n_names, idx, depth, chain, confused)
D_EXPECT_NAME, D_AFTER_NAME, D_TYPE, D_VALUES = range(4)

# grounded-number context
N_NONE, N_IDNAME, N_IDVALUE = 0, 1, 2

# number lexeme phases and value states
PH1, PHE, PHT = 0, 1, 2
S_Z, S_D, S_F0, S_F, S_E, S_ES, S_ED, S_HX, S_H, S_BX, S_B, S_I = range(12)
N_NUM_STATES = 12
_NUM_ACCEPT = frozenset({S_Z, S_D, S_F0, S_F, S_ED, S_H, S_B, S_I})

#: after a lookup's name string: a call's `(`...`)` argument, an index's, or a call with a
#: string argument and no parentheses (`x:WaitForChild "Name"`)
A_CALL, A_INDEX, A_STRCALL = 0, 1, 2
# bytes that can end a string or comment (for :meth:`Automaton.project`)
END_DQ, END_SQ, END_BT, END_RB, END_NL = 1, 2, 4, 8, 16
ENDS_ALL = 31
_TEXT_MODES = frozenset({M_STR, M_LSTR, M_LCMT, M_BCMT, M_INTERP})
# runs of bytes a state accepts whole (see Automaton.free_kind)
F_IDENT, F_NSTR, F_LCMT, F_BCMT, F_DQ, F_SQ, F_LSTR, F_INTERP, F_BLANK = 1, 2, 4, 8, 16, 32, 64, 128, 256
F_ALL = 511
ATTACH_MAYBE = -3  # identifier text unknown to the automaton: its value is unknown (NOVAL)
# identifier payload bits; an identifier of a type keeps its phase in bits 8 and up
I_JUXT, I_EXPRPOS, I_AFTER_STRING = 1, 2, 4
I_TYPE, I_FHEAD, I_PARAM, I_FORVAR, I_ALIAS, I_AFTER_EXPORT = 8, 16, 32, 64, 128, 256
I_CONTEXT = I_TYPE | I_FHEAD | I_PARAM | I_FORVAR | I_ALIAS
I_PHASE_SHIFT = 10

# type phases (the payload of M_TYPE, bits 0-4; bits 5-6: a pending `.` (1), `..` (2) or `-` (3))
# (TP_NTYPEOF: `typeof` where a parameter or field name may stand: a name, or `typeof(...)`)
(TP_EXPECT, TP_NAME, TP_DOT, TP_DONE, TP_PDONE, TP_FIELD, TP_FNAME, TP_FRW, TP_KEYCOLON, TP_GPARAM, TP_GAFTER,
 TP_GPACK, TP_PLIST, TP_PNAME, TP_TARG0, TP_TYPEOF, TP_NTYPEOF) = range(17)
#: phases in which a type is complete (a byte that cannot continue it ends it)
_TP_COMPLETE = frozenset({TP_NAME, TP_DONE, TP_PDONE, TP_FNAME, TP_FRW, TP_PNAME, TP_NTYPEOF})
#: phases in which a type starts (`{`, `(`, a name, a string ...)
_TP_START = frozenset({TP_EXPECT, TP_TARG0, TP_PLIST, TP_FIELD})
# K_TANGLE's res: type arguments, or generic parameters of a function, a type alias or a
# function type (where reading goes on after `>`)
GA_ARGS, GA_FUNC, GA_ALIAS, GA_FNTYPE = 0, 1, 2, 3

LENIENT = 1
GEN = 2

KEYWORDS = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"]
#: names with a meaning in some places (Luau's contextual keywords the guard reads): they are
#: in the keyword trie, never in :data:`KEYWORDS`' answers (``_KW_AT``)
CONTEXTUAL = ["type", "export", "typeof", "read", "write"]
_KW_CLASS = {
    "and": P_PRE, "or": P_PRE, "not": P_PRE, "return": P_PRE, "in": P_PRE, "if": P_PRE, "elseif": P_PRE,
    "while": P_PRE, "until": P_PRE, "true": P_VAL, "false": P_VAL, "nil": P_VAL, "local": P_LOCAL,
    "function": P_FUNCTION,
}
_KW_CONTINUES_DECL = frozenset({"and", "or", "not", "function", "true", "false", "nil"})

# keyword trie: positions are indices into _KW_PREFIXES
_KW_PREFIXES: list[str] = [""]
_KW_INDEX: dict[str, int] = {"": 0}
for _kw in KEYWORDS + CONTEXTUAL:
    for _i in range(1, len(_kw) + 1):
        _p = _kw[:_i]
        if _p not in _KW_INDEX:
            _KW_INDEX[_p] = len(_KW_PREFIXES)
            _KW_PREFIXES.append(_p)
_KW_NEXT: dict[tuple[int, int], int] = {}
for _p, _i in _KW_INDEX.items():
    for _c in range(256):
        _q = _p + chr(_c)
        if _q in _KW_INDEX:
            _KW_NEXT[(_i, _c)] = _KW_INDEX[_q]
#: per keyword-trie position, the bytes that continue some keyword from there
_KW_FOLLOW: dict[int, frozenset[int]] = {}
for (_k, _c) in _KW_NEXT:
    _KW_FOLLOW[_k] = _KW_FOLLOW.get(_k, frozenset()) | {_c}
_KW_AT: dict[int, str] = {_KW_INDEX[k]: k for k in KEYWORDS}
_CTXW_AT: dict[int, str] = {_KW_INDEX[k]: k for k in CONTEXTUAL}
#: frames of brackets, inside which no name may follow a string literal directly
_BRACKET_KINDS = frozenset({K_CALL, K_GROUP, K_INDEX, K_TABLE})
#: keywords that may follow an expression inside brackets
_KW_AFTER_EXPR = frozenset({"and", "or", "then", "else", "elseif"})
_IN_BRACKETS = ((K_CALL, 0, 0, 0),)
_ID_REJECT = -2  # see Automaton._id_byte
#: punctuation that starts an operand (quotes, `(`, `{`, backtick)
_OPERAND_PUNCT = frozenset(b"\"'({`")
#: keyword-trie nodes on the way to one of :data:`_KW_AFTER_EXPR`
_KW_AFTER_EXPR_NODES = frozenset(_KW_INDEX[w[:i]] for w in _KW_AFTER_EXPR for i in range(1, len(w) + 1))

# byte classes in code
C_BAD, C_WS, C_NL, C_IDSTART, C_DIGIT, C_OTHER = range(6)
_CLASS = [C_BAD] * 256
for _b in b" \t\x0b\x0c":
    _CLASS[_b] = C_WS
for _b in b"\r\n":
    _CLASS[_b] = C_NL
for _b in range(256):
    if chr(_b).isascii() and (chr(_b).isalpha() or _b == 0x5F):
        _CLASS[_b] = C_IDSTART
    elif 0x30 <= _b <= 0x39:
        _CLASS[_b] = C_DIGIT
for _b in b"\"'`()[]{}.:-~=+*/%^#<>,;&|?":
    _CLASS[_b] = C_OTHER
_IDCHAR = [c in (C_IDSTART, C_DIGIT) for c in _CLASS]
_WSB = frozenset(b" \t\x0b\x0c\r\n")
_IDBYTES = tuple(b for b in range(256) if _IDCHAR[b])
_IDSTART_BYTES = tuple(b for b in range(256) if _CLASS[b] == C_IDSTART)
_NOT_NAME_START = tuple(b for b in range(256) if _CLASS[b] != C_IDSTART and b not in _WSB)
_HEX = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")
_PRE_OPS = frozenset(b"+*/%^#<>=,")
_TYPE_OPS = frozenset(b"&|?")
_CLOSER_KINDS = {0x29: (K_CALL, K_GROUP, K_TYPEOF, K_PARAMS), 0x5D: (K_INDEX,), 0x7D: (K_TABLE, K_INTERP)}


_MISSING = object()
_FALLTHROUGH = object()  # Automaton._code_context: plain code rules apply
#: previous-token classes after which `:` starts a type, and the class code goes on with after it
_ANNOTATED = {P_PNAME: P_PTYPED, P_PDOTS: P_PTYPED, P_PEND: P_OTHER, P_FORNAME: P_FORNAME}


#: Automaton.name_end's answers besides a value (``NE_*`` in ``_walk.c``)
NE_PYTHON = -(1 << 40)
NE_REJECT = NE_PYTHON + 1
NE_DEFAULT = NE_PYTHON + 2


def _text_end(s: tuple) -> int:
    """The ``END_*`` bit of the byte that can end the string or comment ``s`` is in (``s``
    in one of :data:`_TEXT_MODES`): its quote, the backtick, a line break, or ``]`` for long
    strings and comments."""
    mode = s[MODE]
    if mode == M_STR:
        return END_DQ if s[PAY][0] == 0x22 else END_SQ
    if mode == M_INTERP:
        return END_BT
    if mode == M_LCMT:
        return END_NL
    return END_RB


def projection_args(pclass: int, keep: int, ends: int, drop: int = 0) -> tuple[int, int, int]:
    """``(keep, ends, drop)`` for :meth:`Automaton.project` without what cannot matter for a
    state of projection class ``pclass`` (:meth:`Automaton.projection_class`): no more
    frames than are open, only the ``END_*`` bit that can end its string or comment, the
    ``drop`` bits only where the state has a value / white-space flags in code.  For every
    state ``s``, ``project(s, *projection_args(projection_class(s), keep, ends, drop))``
    equals ``project(s, keep, ends, drop)`` (tested), so the mask walk keys projections by
    these arguments and keys that differ only in what cannot matter share one projection.
    The compiled walk does the same (``norm_args`` in ``_walk.c``)."""
    n = pclass & 63
    if keep > n:
        keep = n
    if not pclass & (1 << 11):
        drop &= ~1
    if not pclass & (1 << 12):
        drop &= ~2
    return keep, ends & ((pclass >> 6) & 31), drop


#: :meth:`Automaton.projection_class` bit: the state is its own projection (see there)
PC_CLEAN = 1 << 13
#: :meth:`Automaton.projection_class` bit: :meth:`Automaton.delegate` may give a state
PC_DELEG = 1 << 14
_DELEGATING = frozenset({M_DOT1, M_DOT2, M_COLON, M_DASH})


def projection_is_identity(pclass: int, keep: int, ends: int, drop: int) -> bool:
    """Is ``project(s, keep, ends, drop)`` the state ``s`` itself, known from ``s``'s
    projection class ``pclass`` alone, for arguments already normalised by
    :func:`projection_args`?  (Conservative: ``False`` says nothing.)  The compiled walk
    makes the same test (``is_identity`` in ``_walk.c``) before looking a projection up."""
    return bool(pclass & PC_CLEAN) and keep >= (pclass & 63) and not drop and (not (pclass >> 6) & 31 or ends != 0)


def initial_state(prev: int = P_NONE, stack: tuple = (), *, val: int = NOVAL, flags: int = 0, ifx: int = 0) -> tuple:
    """A state between tokens in code, after a token of class ``prev`` with ``stack`` open."""
    return (M_CODE, 0, prev, flags, val, stack, None, N_NONE, ifx, ())


def _after(prev: int) -> bool:
    return prev == P_NAME or prev == P_CALLABLE or prev == P_VAL or prev == P_STRING


@functools.cache
def _c_tables() -> dict:
    """The compiled walk's tables that depend on no automaton (see
    :meth:`Automaton.compiled_code_steps`), built once: the byte and keyword tables, the
    number lexeme's steps.  (The constants the C code shares with this module are written
    into it at build time: :mod:`.walk_layout`.)"""
    kw_first = tuple(_KW_NEXT.get((0, b), -1) for b in range(256))
    n_kw = len(_KW_PREFIXES)
    return {
        "klass": bytes(_CLASS),
        "kw_first": kw_first,
        "after_string_ok": bytes(int(k in _KW_AFTER_EXPR_NODES) for k in kw_first),
        "kw_next": tuple(_KW_NEXT.get((k, b), -1) for k in range(n_kw) for b in range(256)),
        "idchar": bytes(int(c) for c in _IDCHAR),
        "kw_word": bytes(int(k in _KW_AT) for k in range(n_kw)),
        "num_next": tuple(-9 if nx is _NUM_END else (nx[0] << 8) | (nx[1] + 1)
                          for nx in (_number_next(ph, sem, b) for ph in range(3) for sem in range(N_NUM_STATES)
                                     for b in range(256))),
        "num_accept": bytes(int(sem in _NUM_ACCEPT) for sem in range(N_NUM_STATES)),
    }


class Automaton:
    """The byte automaton for one project (:class:`~.paths.PathSpace`) and options.

    ``ids``: the grounded asset ids (:class:`~.numbers.IdSet`), ``None`` to leave numbers
    free; ``stop``: ``"balanced"`` (generation may stop only when the brackets it opened
    are closed and no string, comment or name is unfinished) or ``"line"`` (also right after
    a line break); ``paths``: False leaves instance paths free (bindings are then empty);
    ``share_names``: a position inside a name is kept as the canonical one of all positions
    with the same names below (:meth:`~.paths.PathSpace.canon`) and without the value a
    non-method name is read on, so that tables of instances with shared names (the class
    members) share their states and the mask walk's memo; which bytes are accepted is the
    same either way (``False`` is the reference the tests compare with).
    Thread-safe: it holds no mutable state besides memo tables of the phrase matchers.
    """

    def __init__(self, space: PathSpace, *, ids: IdSet | None = None, stop: str = "balanced",
                 paths: bool = True, share_names: bool = True) -> None:
        if stop not in ("balanced", "line"):
            raise ValueError(f"stop must be 'balanced' or 'line', got {stop!r}")
        self.space = space
        self.paths = paths
        self.share_names = share_names
        self.ids = ids
        self.stop = stop
        self.cm = comment_matcher()
        self.bm = block_matcher()
        self.sm = string_matcher()
        self.tm = PhraseMatcher(ID_TRIGGERS) if ids is not None else None
        self._tstart = self.tm.start if self.tm is not None else -2
        self._line_cstart = self.cm.ctx_start(CTX_LINE)
        self._run_cstart = self.cm.ctx_start(CTX_RUN)
        self._trail_cstart = self.cm.ctx_start(CTX_TRAIL)
        self._type_cstart = self.cm.ctx_start(CTX_TYPE)
        self._class_cache: dict[tuple, bytes] = {}
        self._word_templates: dict[tuple, bytes] = {}
        self._step_memo: dict[tuple, tuple | None] = {}
        # classes between tokens in code: letters that start no keyword are alike, digits 1-9
        # are alike, white space and line breaks are alike, rejected bytes are alike, and the
        # one-byte operators whose step reads nothing of the byte are alike (`+*/%^#<>`: an
        # operator after which an operand is expected; `&|?`: type operators - see _code and
        # _operator, where only `=`, `,` and `;` change the declaration being read)
        classes = list(range(256))
        for b in range(256):
            c = _CLASS[b]
            if b in _PRE_OPS and b != 0x3D and b != 0x2C:
                classes[b] = 0x2B
            elif b in _TYPE_OPS:
                classes[b] = 0x26
            elif c == C_IDSTART and _KW_NEXT.get((0, b), -1) < 0 and not (ids is not None and b == 0x49):
                classes[b] = 0x5F
            elif c == C_DIGIT and b != 0x30:
                classes[b] = 0x31
            elif c == C_WS:
                classes[b] = 0x20
            elif c == C_NL:
                classes[b] = b  # (`\n` and `\r` differ after a comment line: see F_CR)
            elif c == C_BAD and b != 0x40:  # (`@` starts an attribute)
                classes[b] = 0x00
        self._code_classes = bytes(classes)

    def compiled_code_steps(self) -> dict | None:
        """What the compiled mask walk (``cstep`` in ``_walk.c``) needs to step states itself
        - in code, in a name after ``.``/``:``, in a lookup's or index's argument and name
        string and after its closing quote, after ``[`` and ``[=``, in line comments and
        comment starts, in quoted and interpolated strings, in numbers - as this
        automaton does for the walk's steps (``how`` 0): the options it
        reads (the string matcher's start state; the asset-id
        trigger's start, -2 when not tracked), the byte classes in code (``klass``, bytes of
        256), per byte the keyword-trie node an identifier starting with it is at
        (``kw_first``) and whether that node leads to a keyword allowed after a string
        literal in brackets (``after_string_ok``); for names,
        the keyword trie's next positions (``kw_next``, 256 per position), its positions
        where a keyword ends (``kw_word``), the identifier bytes (``idchar``) and the name
        tables' answers (:meth:`name_child`, :meth:`name_end`, and :meth:`arg_table` for the
        name strings of lookups and indexes); for comments and strings the
        placeholder matchers' steps and the comment matcher's start; for numbers the lexeme's
        steps as a table (``num_next``: per phase, value state and byte, ``(phase << 8) |
        (value state + 1)`` or -9 where the byte ends the number) and the value states a
        number may end in (``num_accept``).  ``None`` when grounded
        asset ids are tracked (their number contexts and ``Id`` tails stay in Python)."""
        if self.ids is not None:
            return None
        return {
            "sm_start": self.sm.start,
            "tstart": self._tstart,
            "name_child": self.name_child,
            "name_end": self.name_end,
            "arg_table": self.arg_table,
            "cm_step": self.cm.step,
            "cm_end": self.cm.end,
            "sm_step": self.sm.step,
            "cm_start": self._line_cstart,
            "cm_run": self._run_cstart,
            "cm_trail": self._trail_cstart,
            "bm_start": self.bm.ctx_start(CTX_BLOCK),
            **_c_tables(),
        }

    def name_end(self, table: int, pos: int) -> int:
        """For the compiled walk's name steps: what ends a name at position ``pos`` (>= 0)
        of name table ``table`` (as :meth:`_name` does, not lenient, for a byte that is no
        identifier byte), packed in an int: :data:`NE_PYTHON` for a lookup method's name
        (its ``(`` is read in Python), :data:`NE_REJECT` when no name of the closed table
        ends there, :data:`NE_DEFAULT` when the value read is the name's default
        (:data:`~.paths.POISON` on a poisoned value, else :data:`~.paths.NOVAL`), else the
        value the name has."""
        t = self.space.get_table(table)
        r = t.result[pos]
        if t.kind == KIND_METHOD:
            return NE_DEFAULT if r is None else NE_PYTHON
        if r is not None:
            return r
        return NE_DEFAULT if t.free else NE_REJECT

    def arg_table(self, base: int, kind: int) -> int:
        """For :meth:`_name_arg` and the compiled walk's argument steps (``name_arg`` in
        ``_walk.c``), where a quote starts a name string: the name table a lookup's or an index's
        name string on value ``base`` of kind ``kind`` is matched against, packed as
        ``(table << 1) | free``, or -1 when that table is empty (the string is rejected)."""
        table = self.space.table(base, kind)
        t = self.space.get_table(table)
        if t.empty:
            return -1
        return (table << 1) | (1 if t.free else 0)

    def name_child(self, table: int, pos: int, b: int) -> int:
        """For the compiled walk's name steps (``name_step`` in ``_walk.c``: a name's bytes as
        :meth:`_name` reads them, not lenient): identifier byte ``b`` at position ``pos`` of
        name table ``table``, packed in an int - ``-1`` when the name leaves the table and the
        table is closed (rejected), ``-2`` when it leaves a free table (any name follows),
        else the child's position as the state keeps it (:meth:`_position`: ``(t, n)``) as
        ``(t << 34) | (n << 2) | (drop << 1) | free`` (``free``: the table is free, which
        decides the next state's :meth:`free_kind`; ``drop``: a name's first byte drops the
        value it is read on, as :meth:`_name` does with ``share_names`` outside the method
        table).  ``ValueError`` for a node past 32 bits."""
        t = self.space.get_table(table)
        node = t.children[pos].get(b)
        if node is None:
            return -2 if t.free else -1
        ct, cn = self._position(table, node)
        if not 0 <= cn < (1 << 32) or ct < 0:
            raise ValueError(f"name table position ({ct}, {cn}) out of the packing's range")
        drop = self.share_names and t.kind != KIND_METHOD
        return (ct << 34) | (cn << 2) | (2 if drop else 0) | (1 if t.free else 0)

    # ------------------------------------------------------------------------------ queries
    def eos_ok(self, s: tuple) -> bool:
        """May the text end in state ``s``?  (No bracket the model opened is still open and
        nothing is left unfinished; with ``stop="line"`` also right after a line break.)"""
        if self.stop == "line" and s[MODE] == M_CODE and s[FLAGS] & F_NL:
            return True
        for f in s[STACK]:
            if f[2] and f[0] in BRACKETS:
                return False
        return self.complete_ok(s)

    def complete_ok(self, s: tuple) -> bool:
        """Is every token of the text finished and checked in state ``s``?  (Brackets may be
        open.)  A generation cut short (token limit, time budget) is trimmed back to such a
        point, so a half-written name or keyword is never left unchecked."""
        mode = s[MODE]
        if mode == M_CODE:
            return not s[FLAGS] & F_DOTS  # (a `...` that would stand alone)
        if mode == M_LCMT or mode == M_CSTART:
            return self.cm.end(s[PAY])  # (a comment that is a placeholder as a whole)
        if mode == M_CLB:
            return self.cm.end(s[PAY][1])
        if mode == M_TYPE:
            return s[PAY] >> 5 == 0
        if mode == M_IDENT:
            done = self.cached_step(s, 0x0A)  # the identifier must be allowed where it stands
            return done is not None
        if mode == M_NUM:
            return s[PAY][1] in _NUM_ACCEPT
        if mode == M_DIGITS:
            return self.ids is not None and self.ids.terminal[s[PAY]]
        if mode == M_NAME:
            return self.cached_step(s, 0x0A) is not None and s[PAY][2] == 1
        return False

    @staticmethod
    def projection_class(s: tuple) -> int:
        """What of :meth:`project`'s arguments can matter for ``s``, packed in an int: bits
        0-5 the number of open frames ``n`` (at most 63; every ``keep >= n`` gives the same
        result), bits 6-10 the one ``END_*`` bit that can end the string or comment ``s`` is
        in (0 in code: ``ends`` is not read), bit 11 set when ``drop`` bit 1 can change
        ``s`` (a value in code), bit 12 when ``drop`` bit 2 can (white-space flags in code),
        bit 13 (:data:`PC_CLEAN`) when ``s`` is already projected - at most 62 frames, no
        declaration bookkeeping, no events, no frame the model opened and no table frame
        with a result, so that ``project(s, keep, ends, drop) is s`` whenever ``keep`` is at
        least its frames, ``drop`` (normalised) is 0 and, in a string or comment, ``ends``
        holds the byte that ends it (:func:`projection_is_identity`; tested) - and bit 14
        (:data:`PC_DELEG`) when :meth:`delegate` may give a state for ``s`` (right after
        ``.``, ``..``, ``:`` or ``-``).  The mask walk normalises its projection keys with it
        (:func:`projection_args`), so that keys differing only in what cannot matter share
        one projection, skips the projections it knows to be the state itself, and asks
        delegating states for their delegate."""
        mode = s[MODE]
        stack = s[STACK]
        out = min(len(stack), 63)
        if s[DECL] is None and not s[EV] and len(stack) < 63:
            for f in stack:
                if f[2]:
                    break
            else:
                out |= PC_CLEAN
        if mode in _DELEGATING:
            out |= PC_DELEG
        if mode >= M_STR and mode in _TEXT_MODES:
            out |= _text_end(s) << 6
        elif mode == M_CODE:
            if s[VAL] != NOVAL:
                out |= 1 << 11
            if s[FLAGS] & ~F_KEPT:
                out |= 1 << 12
        return out

    def project(self, s: tuple, keep: int, ends: int = ENDS_ALL, drop: int = 0) -> tuple:
        """``s`` without what cannot change which bytes are accepted next: declaration
        bookkeeping, events, which frames the model opened, all but the top ``keep`` frames (a
        token that can close at most ``keep`` frames never sees the others) and - inside a
        string or comment that the coming bytes cannot end (``ends``: which of the ``END_*``
        bytes they contain) - everything outside it.  ``drop`` (bit 1: the value, bit 2: the
        white-space flags) clears what the next byte cannot use between tokens in code.  The
        key masks are cached under.

        ``drop`` bit 4 clears the values an identifier or a name carries and bit 8 the values
        the kept frames carry: both matter only to bytes that index or call the value
        (``.``, ``:``, ``[``, ``(``, quotes) read after it, so a caller passes them when the
        coming bytes contain none of those."""
        mode = s[MODE]
        if mode >= M_STR and mode in _TEXT_MODES:
            if not ends & _text_end(s):
                pay = s[PAY]
                if mode == M_STR:
                    pay = pay[:5] + (LITERAL,)
                elif mode == M_LSTR:
                    pay = pay[:3] + (1,)
                return (mode, pay, P_NONE, 0, NOVAL, (), None, N_NONE, 0, ())
        stack = s[STACK]
        if keep < len(stack):
            keep = _keep_types(stack, keep)
        if keep <= 0 or not stack:
            st: tuple = ()
        elif drop & 8:
            st = tuple((k, 0 if k in _VALUE_KINDS else r, 0, x) for k, r, _g, x in stack[-keep:])
        else:
            st = tuple((k, r, 0, x) for k, r, _g, x in stack[-keep:])
        if len(stack) > len(st):
            dropped = stack[: len(stack) - len(st)]
            ctx = _context_bits(dropped, st)
            if dropped[-1][0] in _BRACKET_KINDS:
                # below the frames a token can close it still sees whether it is inside brackets
                # (a name may not follow a string there): one stand-in frame that it never pops
                st = _IN_BRACKETS + st
            if ctx:
                # and whether it is in a function that declares `...` or in a table type
                st = ((K_CTX, ctx, 0, 0),) + st
        val, flags, pay = s[VAL], s[FLAGS], s[PAY]
        if drop:
            if mode == M_CODE:
                if drop & 1:
                    val = NOVAL
                if drop & 2:
                    flags &= F_KEPT
            elif drop & 4:
                if mode == M_IDENT:
                    if pay[1] != NOVAL:
                        pay = (pay[0], NOVAL, pay[2], pay[3])
                elif mode == M_NAME:
                    base = POISON if pay[3] == POISON else NOVAL
                    if pay[3] != base:
                        pay = pay[:3] + (base,) + pay[4:]
        if st == stack and s[DECL] is None and not s[EV] and val == s[VAL] and flags == s[FLAGS] and pay is s[PAY]:
            return s
        return (mode, pay, s[PREV], flags, val, st, None, s[NUM], s[IFX], ())

    @staticmethod
    def in_word(s: tuple) -> bool:
        """Is ``s`` inside an identifier or a started name (after ``.``/``:``), which any
        non-identifier byte ends (see :meth:`word_end`)?"""
        mode = s[MODE]
        return mode == M_IDENT or (mode == M_NAME and s[PAY][2] == 1)

    def ident_fixed(self, s: tuple) -> bool:
        """Is ``s`` inside an identifier that every identifier byte leaves as it is
        (``step(s, b, how) == s`` for each ``b`` with ``_IDCHAR[b]``, any ``how``)?  True
        once the identifier has left the keyword trie, its value is not attached
        (:data:`ATTACH_MAYBE`), it does not follow a string literal in brackets (where only
        a keyword operator may come) and asset ids are not tracked (their ``Id`` tail reads
        the letters).  Lets a reader skip the rest of a run of identifier bytes (tested
        byte by byte)."""
        if s[MODE] != M_IDENT or self.ids is not None:
            return False
        kw, attach, bits, _tail = s[PAY]
        return kw < 0 and attach == ATTACH_MAYBE and not bits & I_AFTER_STRING

    def word_end(self, s: tuple) -> tuple | None:
        """For ``s`` inside a word (:meth:`in_word`): the state ``e`` with
        ``step(e, b) == step(s, b)`` for every non-identifier byte ``b`` (the word ended before
        ``b``: a state between tokens in code, or after a method name), ``None`` when the word
        cannot end here (an unknown name in a closed table, a keyword in the wrong place).
        Computed as the step over a space, which in code changes nothing."""
        return self.step(s, 0x20)

    def delegate(self, s: tuple) -> tuple[tuple, bytes] | None:
        """For a state right after ``.``, ``..``, ``:`` or ``-`` (a token that the next byte
        may still extend): ``(d, special)`` such that ``step(s, b) == step(d, b)`` for every
        byte ``b`` not in ``special`` (the bytes that extend the token: ``..``, ``...``,
        ``..=``, ``::``, ``--``, ``->``, ``-=``), for the mask walk's steps (``how`` without
        :data:`LENIENT`); ``None`` where there is no such state or ``s`` is in another mode.
        ``d`` is the state the pending token's step continues from (see :meth:`_dot1`,
        :meth:`_dot2`, :meth:`_colon`, :meth:`_dash`, which it mirrors): code after the
        ``..`` or ``-`` operator, code after a ``:`` that is no method call, or the name that
        follows ``.``/``:`` on a name or call.  States that differ in what ``d`` drops (the
        previous token, the value, white space) share ``d``, so the mask walk computes the
        transitions they have in common once (tested byte by byte)."""
        mode = s[MODE]
        if s[PREV] >= P_FNAME:
            return None  # (headers and parameter lists: no shared continuation)
        if mode == M_DOT2:
            return self._binary_operator(s, 0), b".="
        if mode == M_DASH:
            return self._binary_operator(s, 0x2D), b"->="
        prev = s[PREV]
        if mode == M_DOT1:
            d = self._dot_name(s, 0) if prev == P_NAME or prev == P_CALLABLE else None
            return None if d is None else (d, b".")
        if mode == M_COLON and prev != P_STRING and prev != P_VAL:
            return self._after_colon(s), b":"
        return None

    @staticmethod
    def pending_pops(s: tuple) -> int:
        """Frames the first byte of the next token can close because of ``s`` itself: 1 when
        ``s`` is inside a complete ``end``/``until`` that a non-identifier byte finishes."""
        if s[MODE] == M_IDENT:
            word = _KW_AT.get(s[PAY][0])
            if word == "end" or word == "until":
                return 1
        return 0

    def free_kind(self, s: tuple) -> int:
        """Which runs of bytes ``s`` accepts whole, as one ``F_*`` bit (0: none): ``F_IDENT``
        when any identifier bytes just continue it (inside an identifier, or a name after
        ``.``/``:`` that any name may follow), ``F_NSTR`` inside a name string any name may
        fill, and - inside a comment or string whose placeholder matcher has nothing pending -
        the bit of that kind of text (runs without a byte that ends it and without a
        placeholder phrase are then accepted whole).  The vocabulary trie marks which
        subtrees consist of such runs, so the mask walk can skip them."""
        mode = s[MODE]
        if mode == M_CODE or mode == M_LPAREN or mode == M_LARG or mode == M_AFTER or mode == M_IARG:
            return F_BLANK
        if mode == M_TYPE:
            return F_BLANK if s[PAY] >> 5 == 0 else 0
        if mode == M_ATTR:
            return 0
        if mode == M_IDENT:
            return 0 if s[PAY][2] & I_AFTER_STRING else F_IDENT
        if mode == M_NAME:
            table, _pos, started, _base, _kw, _tail = s[PAY]
            if started != 1:
                return F_BLANK
            if table < 0 or self.space.get_table(table).free:
                return F_IDENT
            return 0
        if mode == M_NSTR:
            table = s[PAY][0]
            return F_NSTR if table < 0 or self.space.get_table(table).free else 0
        if mode == M_LCMT:
            return F_LCMT if s[PAY] >> 2 == 0 else 0
        if mode == M_BCMT:
            return F_BCMT if s[PAY][1] < 0 and s[PAY][2] >> 2 == 0 else 0
        if mode == M_LSTR:
            return F_LSTR if s[PAY][1] < 0 and s[PAY][2] >> 2 == 0 else 0
        if mode == M_STR:
            quote, esc, ac, trig, idn, _res = s[PAY]
            if esc or trig != -2 or idn >= 0 or ac >> 2:
                return 0
            return F_DQ if quote == 0x22 else F_SQ
        if mode == M_INTERP:
            esc, ac, trig, idn = s[PAY]
            return F_INTERP if not esc and trig == -2 and idn < 0 and ac >> 2 == 0 else 0
        return 0

    def classes(self, s: tuple) -> bytes | None:
        """Byte classes of state ``s``, 256 bytes: ``classes[b]`` is a representative byte that
        ``b`` leads to the same next state as, or ``None`` (every byte is its own class).  (Bytes
        rather than a tuple of ints: the compiled walk reads them directly, and the cyclic
        collector never traverses them.)  Used by the mask
        walk to compute one transition per class; exact for the modes it covers (code, an
        identifier, a name after ``.``/``:``, the states right after ``.``/``:``/``..``/``[``,
        ``-``, ``~`` and a lookup's closing quote, number literals, lookup and index arguments
        and name strings, the text of strings, interpolated strings and line comments
        outside escapes and asset ids, for the walk's non-lenient steps)."""
        mode = s[MODE]
        if mode >= M_TYPE or s[PREV] >= P_FNAME or s[PREV] == P_FUNCTION:
            return None  # (types, headers and parameter lists: every byte on its own)
        if mode == M_CODE:
            if s[NUM] == N_IDVALUE or (s[STACK] and s[STACK][-1][0] == K_PARAMS):
                return None
            return self._code_classes
        if mode == M_IDENT:
            kw = s[PAY][0]
            if s[PAY][2] & I_CONTEXT or kw in _CTXW_AT or _KW_AT.get(kw) in ("function", "for"):
                return None  # (the word leads into a header, a type alias, a loop's names)
            key = (M_IDENT, kw)
        elif mode == M_NAME:
            table, pos, started, _base, kw, _tail = s[PAY]
            key = (M_NAME, table if pos >= 0 or started != 1 else -1, pos, started, kw)
        elif mode == M_DOT1 or mode == M_COLON:
            if (mode == M_COLON and s[DECL] is not None and s[DECL][0] == D_AFTER_NAME
                    and len(s[STACK]) == s[DECL][3]):
                return None  # `local x:` - a type follows
            key = self._after_index_key(s)
        elif mode == M_DOT2:
            if s[STACK] and s[STACK][-1][0] == K_PARAMS:
                return None
            key = (M_DOT2,)
        elif mode == M_NSTR:
            table, pos, quote, _after = s[PAY]
            key = (M_NSTR, table, pos, quote)
        elif mode == M_LARG or mode == M_IARG:
            key = (M_LARG,)
        elif mode == M_LPAREN:
            key = (M_LPAREN,)
        elif mode == M_LBRACK:
            prev, val = s[PREV], s[VAL]
            if prev == P_NAME or prev == P_CALLABLE:
                key = (M_LBRACK, "arg" if val >= 0 else "code")
            else:
                key = (M_LBRACK, "reject" if prev == P_VAL or prev == P_STRING else "code")
        elif mode == M_NUM:
            key = (M_NUM,) + s[PAY]
        elif mode == M_STR:
            quote, esc, _ac, trig, idn, _res = s[PAY]
            if esc or idn >= 0:
                return None
            key = (M_STR, quote, trig != -2)
        elif mode == M_INTERP:
            esc, _ac, trig, idn = s[PAY]
            if esc or idn >= 0:
                return None
            key = (M_INTERP, trig != -2)
        elif mode in (M_LCMT, M_CLB, M_CSTART, M_DASH, M_TILDE, M_AFTER):
            key = (mode,)
        else:
            return None
        return self._classes_for(key)

    def _classes_for(self, key: tuple) -> bytes:
        """The byte classes of class key ``key`` (cached)."""
        got = self._class_cache.get(key)
        if got is None:
            kind = key[0]
            if kind == M_NAME or kind == M_IDENT:
                got = self._word_classes(key)
            elif kind == M_NSTR:
                got = self._nstr_classes(key)
            if got is None:
                got = self._build_classes(key)
            self._class_cache[key] = got
        return got

    def _word_classes(self, key: tuple) -> bytes | None:
        """:meth:`_build_classes` for an identifier or a name key, from a template per kind
        of key and representative (the mask walk builds thousands of these: one per
        position of every name table it enters); ``None`` when the template does not apply
        (every identifier byte is special)."""
        if key[0] == M_IDENT:
            kw = key[1]
            special = _KW_FOLLOW.get(kw, frozenset()) if kw >= 0 else frozenset()
            started = 1
        else:
            _m, table, pos, started, kw = key
            special = frozenset()
            if table >= 0 and (pos >= 0 or started != 1):
                special = frozenset(self.space.get_table(table).children[pos if started == 1 else 0])
            probe = kw if started == 1 else 0
            if probe >= 0:
                special = special | _KW_FOLLOW.get(probe, frozenset())
        if self.ids is not None:
            special = special | {0x49, 0x64}
        eligible = _IDBYTES if started == 1 else _IDSTART_BYTES
        rep = next((b for b in eligible if b not in special), -1)
        if rep < 0:
            return None
        tkey = (key[0] == M_NAME, started, rep)
        base = self._word_templates.get(tkey)
        if base is None:
            out = list(self._code_classes)
            if key[0] == M_NAME and started != 1:
                for b in _WSB:
                    out[b] = 0x20
                if started == 0:
                    for b in _NOT_NAME_START:
                        out[b] = 0x01
            for b in eligible:
                out[b] = rep
            base = self._word_templates[tkey] = bytes(out)
        if not special:
            return base
        out = bytearray(base)
        for b in special:
            if _IDCHAR[b] and (started == 1 or _CLASS[b] == C_IDSTART):
                out[b] = b
        return bytes(out)

    def _nstr_classes(self, key: tuple) -> bytes | None:
        """:meth:`_build_classes` for a name-string key, from a template per quote and
        representative (see :meth:`_word_classes`)."""
        _m, table, pos, quote = key
        kids = self.space.get_table(table).children[pos] if table >= 0 else {}
        rep = next((b for b in range(0x20, 0x7F) if b != quote and b != 0x5C and b not in kids), -1)
        if rep < 0:
            return None
        tkey = (M_NSTR, quote, rep)
        base = self._word_templates.get(tkey)
        if base is None:
            base = self._word_templates[tkey] = bytes(
                quote if b == quote else (0 if b == 0x5C or b < 0x20 or b == 0x7F else rep) for b in range(256))
        if not kids:
            return base
        out = bytearray(base)
        for b in kids:
            if b != quote and b != 0x5C and b >= 0x20 and b != 0x7F:
                out[b] = b
        return bytes(out)

    def _after_index_key(self, s: tuple) -> tuple:
        """The byte-class key of a state right after ``.`` or ``:`` (see :meth:`_dot1` and
        :meth:`_colon`, which it mirrors for the walk's non-lenient steps): the byte that
        doubles the punctuation is its own class; after a name or a call the rest behave as
        in the name that would start there (``("name", table, started)``); after a literal
        (``:``) or where nothing may be indexed every other byte is rejected alike
        (``("reject",)``); after ``.`` elsewhere digits start a number (``("number",)``);
        after ``:`` elsewhere the colon was an operator and code follows (``("code",)``)."""
        mode, prev, val = s[MODE], s[PREV], s[VAL]
        sep = 0x2E if mode == M_DOT1 else 0x3A
        named = prev == P_NAME or prev == P_CALLABLE
        if mode == M_DOT1:
            if not named:
                return (mode, sep, "number")
            if val == POISON:
                return (mode, sep, "reject")
            if val >= 0:
                table = self.space.table(val, KIND_DOT)
                if self.space.get_table(table).empty:
                    return (mode, sep, "reject")
                return (mode, sep, "name", table, 0)
            return (mode, sep, "name", -1, 0)
        if prev == P_STRING or prev == P_VAL:
            return (mode, sep, "reject")
        if named:
            return (mode, sep, "name", self.space.method_table if val >= 0 else -1, 2)
        return (mode, sep, "code")

    def _build_classes(self, key: tuple) -> bytes:
        kind = key[0]
        if kind == M_STR or kind == M_INTERP:
            # string text (see _string, _interp): bytes the placeholder matcher (and, where
            # asset ids are tracked, their trigger's matcher) cannot tell apart alike, from any
            # matcher state (PhraseMatcher.byte_classes); the bytes that end the text, escape
            # or open an interpolation each on their own
            out = self.sm.byte_classes()
            if key[-1]:
                tmc = self.tm.byte_classes()
                out = _classes_by_tag(lambda b: (out[b], tmc[b]))
            if kind == M_STR:
                return _isolate(list(out), key[1], 0x5C, 10, 13)
            return _isolate(list(out), 0x60, 0x7B, 0x5C, 10, 13)
        if kind == M_LCMT or kind == M_CSTART or kind == M_CLB:
            # a line comment's text (see step), and right after `--` / `--[` and `=`s, where
            # `[` and `=` may go on to a long comment: by the comment matcher's classes
            return _isolate(list(self.cm.byte_classes()), 10, 13, 0x5B, 0x3D)
        if kind == M_DASH:
            # after `-` (see _dash): `-`, `>` and `=` make other tokens; anything else
            # follows the minus operator as code
            return _isolate(list(self._code_classes), 0x2D, 0x3E, 0x3D)
        if kind == M_TILDE:
            # after `~`: only `=` (the walk's steps are not lenient)
            return bytes(0x3D if b == 0x3D else 0x01 for b in range(256))
        if kind == M_AFTER:
            # after a lookup's closing quote (see _after_arg): white space alike; `)`, `,`,
            # `]` may end the call or index; anything else follows the string as code
            out = list(self._code_classes)
            for b in _WSB:
                out[b] = 0x20
            return _isolate(out, 0x29, 0x2C, 0x5D)
        if key[0] == M_DOT2:
            # `..` then `.` (varargs) or `=` (`..=`) is read here; any other byte follows the
            # concatenation operator as code (see _dot2)
            out = list(self._code_classes)
            return _isolate(out, 0x2E, 0x3D)
        if key[0] == M_LARG:
            # a lookup's or an index's first argument byte (see _name_arg): white space alike,
            # quotes and the rejected `[`/backquote each on their own (code classes keep
            # punctuation apart), anything else starts an expression as in code
            out = list(self._code_classes)
            for b in _WSB:
                out[b] = 0x20
            return bytes(out)
        if key[0] == M_LPAREN:
            # after a lookup method's name: white space alike, `(` and the quotes (a string call)
            # each on its own, anything else rejected
            return bytes(0x20 if b in _WSB else (b if b in (0x28, 0x22, 0x27) else 0x01) for b in range(256))
        if key[0] == M_LBRACK:
            # `[` then `[` (long string) or `=` (long string level) is read here; else an
            # index's argument on an instance, an expression in code, or (after a literal)
            # rejected (see _lbrack)
            what = key[1]
            if what == "arg":
                out = list(self._classes_for((M_LARG,)))
            elif what == "code":
                out = list(self._code_classes)
            else:
                out = [0x01] * 256
            return _isolate(out, 0x5B, 0x3D)
        if key[0] == M_NSTR:
            # inside a name string (see _name_string): its closing quote; bytes that end it
            # badly; the table's next bytes each on its own; any other byte alike (off the
            # table, or anything when there is no table)
            _m, table, pos, quote = key
            kids = self.space.get_table(table).children[pos] if table >= 0 else {}

            def tag(b: int) -> tuple:
                if b == quote:
                    return ("quote",)
                if b == 0x5C or b < 0x20 or b == 0x7F:
                    return ("bad",)
                return ("child", b) if b in kids else ("other",)

            return _classes_by_tag(tag)
        if key[0] == M_NUM:
            # bytes that continue the number alike where they lead to the same lexeme state;
            # bytes that end it as in code (see _number)
            _m, ph, sem = key
            code = self._code_classes

            def tag(b: int) -> tuple:
                nxt = _number_next(ph, sem, b)
                return ("end", code[b]) if nxt is _NUM_END else nxt

            return _classes_by_tag(tag)
        if key[0] == M_DOT1 or key[0] == M_COLON:
            sep, what = key[1], key[2]
            if what == "name":
                out = list(self._classes_for((M_NAME, key[3], 0, key[4], 0)))
            elif what == "code":
                out = list(self._code_classes)
            else:  # "reject": one class; "number": digits alike, the rest rejected alike
                out = [0x01] * 256
                if what == "number":
                    for b in range(0x30, 0x3A):
                        out[b] = 0x30
            # the doubled punctuation (`..`, `::`) is read by this state itself
            return _isolate(out, sep)
        ids_on = self.ids is not None
        out = list(self._code_classes)  # bytes that end the token behave as in code
        rep_id = -1
        if key[0] == M_IDENT:
            kw = key[1]
            special = set()
            if kw >= 0:
                special = set(_KW_FOLLOW.get(kw, ()))
        else:
            _m, table, pos, started, kw = key
            special = set()
            if table >= 0:
                t = self.space.get_table(table)
                special |= set(t.children[pos if started == 1 else 0]) if (pos >= 0 or started != 1) else set()
            probe = kw if started == 1 else 0
            if probe >= 0:
                special |= _KW_FOLLOW.get(probe, frozenset())
            if started != 1:
                ws_rep = 0x20
                for b in _WSB:
                    out[b] = ws_rep
                if started == 0:  # after `.` only a name may follow
                    for b in _NOT_NAME_START:
                        out[b] = 0x01
        if ids_on:
            special |= {0x49, 0x64}
        for b in _IDBYTES:
            if not (key[0] == M_NAME and key[3] != 1 and _CLASS[b] != C_IDSTART):
                if b in special:
                    out[b] = b
                else:
                    if rep_id < 0:
                        rep_id = b
                    out[b] = rep_id
        return bytes(out)

    # ------------------------------------------------------------------------------ the step
    def cached_step(self, s: tuple, b: int, how: int = 0) -> tuple | None:
        """:meth:`step`, memoised (bounded: the memo is cleared past 100,000 entries).  For
        reading generated tokens, where the same states recur from sequence to sequence."""
        key = (s, b, how)
        memo = self._step_memo
        got = memo.get(key, _MISSING)
        if got is _MISSING:
            got = self.step(s, b, how)
            if len(memo) > 100_000:
                memo.clear()
            memo[key] = got
        return got

    def step(self, s: tuple, b: int, how: int = 0) -> tuple | None:
        """The state after byte ``b`` (0-255), or ``None`` when ``b`` is rejected."""
        mode = s[MODE]
        if mode == M_CODE:
            return self._code(s[PREV], s[FLAGS], s[VAL], s[STACK], s[DECL], s[NUM], s[IFX], s[EV], b, how)
        if mode == M_IDENT:
            return self._ident(s, b, how)
        if mode == M_NAME:
            return self._name(s, b, how)
        if mode == M_STR:
            return self._string(s, b, how)
        if mode == M_LCMT:
            return self._line_comment(s, s[PAY], b, how)
        if mode == M_NUM:
            return self._number(s, b, how)
        if mode == M_DOT1:
            return self._dot1(s, b, how)
        if mode == M_DOT2:
            return self._dot2(s, b, how)
        if mode == M_COLON:
            return self._colon(s, b, how)
        if mode == M_DASH:
            return self._dash(s, b, how)
        if mode == M_LBRACK:
            return self._lbrack(s, b, how)
        if mode == M_LBRACK_EQ:
            if b == 0x3D:
                if s[PAY] >= 32 and not how & LENIENT:
                    return None
                return (M_LBRACK_EQ, s[PAY] + 1) + s[2:]
            if b == 0x5B:
                return self._long_string_start(s, s[PAY], how)
            if not how & LENIENT:
                return None
            return self._code(P_OTHER, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)
        if mode == M_LSTR or mode == M_BCMT:
            return self._long(s, b, how)
        if mode == M_INTERP:
            return self._interp(s, b, how)
        if mode == M_CSTART:  # right after `--`: the payload is the matcher's start for the comment's context
            if b == 0x5B:
                return (M_CLB, (0, self._cm_step(s[PAY], b, how))) + s[2:]
            return self._line_comment(s, s[PAY], b, how)
        if mode == M_CLB:
            n, ac = s[PAY]
            if b == 0x3D and n < 32:
                return (M_CLB, (n + 1, self._cm_step(ac, b, how))) + s[2:]
            if b == 0x5B:
                ctx = CTX_TYPE_BLOCK if _in_type_table(s[STACK]) else CTX_BLOCK
                return (M_BCMT, (n, -1, self.bm.ctx_start(ctx))) + s[2:]
            return self._line_comment(s, ac, b, how)
        if mode == M_LPAREN:
            kind, base = s[PAY]
            if b in _WSB:
                return s
            if b == 0x28:
                stack = s[STACK] + ((K_CALL, NOVAL, 1 if how & GEN else 0, s[IFX]),)
                return (M_LARG, (kind, base), P_PRE, 0, NOVAL, stack, s[DECL], N_NONE, 0, s[EV])
            if b == 0x22 or b == 0x27:  # `x:WaitForChild "Name"`: a call with one string argument
                return self._name_arg(s, b, how, base, kind, A_STRCALL)
            if not how & LENIENT:
                return None
            return self._code(P_NAME, 0, POISON, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)
        if mode == M_LARG:
            return self._lookup_arg(s, b, how)
        if mode == M_NSTR:
            return self._name_string(s, b, how)
        if mode == M_AFTER:
            return self._after_arg(s, b, how)
        if mode == M_IARG:
            return self._name_arg(s, b, how, s[PAY], KIND_BRACKET, A_INDEX)
        if mode == M_DIGITS:
            return self._digits(s, b, how)
        if mode == M_TILDE:
            if b == 0x3D:
                return self._operator(s[PREV], s[VAL], s[STACK], s[DECL], s[IFX], s[EV], P_PRE, 0)
            if not how & LENIENT:
                return None
            return self._code(P_OTHER, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)
        if mode == M_TYPE:
            return self._type(s, b, how)
        if mode == M_ATTR:
            return self._attr(s, b, how)
        if mode == M_EQ:
            if b == 0x3D:
                return self._operator(s[PREV], s[VAL], s[STACK], s[DECL], s[IFX], s[EV], P_PRE, 0)
            st = self._operator(s[PREV], s[VAL], s[STACK], s[DECL], s[IFX], s[EV], P_PRE, 0x3D)
            return self._code(P_PRE, 0, NOVAL, st[STACK], st[DECL], N_IDVALUE, st[IFX], st[EV], b, how)
        raise AssertionError(f"unknown mode {mode}")  # pragma: no cover

    # ------------------------------------------------------------------------------ code
    def _code(self, prev, flags, val, stack, decl, num, ifx, ev, b, how):
        """Byte ``b`` at a token boundary in code."""
        if flags & F_IOPEN:
            if (b == 0x7B or b == 0x7D) and not how & LENIENT:
                return None
            flags &= ~F_IOPEN
        cls = _CLASS[b]
        if flags & F_DOTS:
            # after a `...` that must not stand alone: something other than `,`/`;` must
            # follow on its line (the linter's placeholder rule)
            if cls == C_NL or b == 0x2C or b == 0x3B:
                if not how & LENIENT:
                    return None
                flags &= ~F_DOTS
            elif cls != C_WS and b != 0x2D:
                flags &= ~F_DOTS
        if cls == C_WS or cls == C_NL:
            if cls == C_NL:
                if decl is not None and decl[0] == D_TYPE and len(stack) == decl[3]:
                    decl = None
                if b == 10 and flags & (F_CMT | F_CR):
                    # the \n of the comment's own \r\n, or a blank line: no paragraph then
                    flags = flags & ~F_CR if flags & F_CR else flags & ~F_CMT
                flags |= F_NL
            return (M_CODE, 0, prev, flags, val, stack, decl, num, ifx, ev)
        if prev >= P_FNAME or prev == P_FUNCTION or b == 0x40 or (stack and stack[-1][0] == K_PARAMS):
            got = self._code_context(prev, flags, val, stack, decl, num, ifx, ev, b, how)
            if got is not _FALLTHROUGH:
                return got
            if prev >= P_FNAME:
                prev = P_NAME if prev in (P_FNAME, P_TALIAS, P_TALIASG, P_FORNAME) else P_OTHER
        after = _after(prev)
        callable_ = prev == P_NAME or prev == P_CALLABLE
        gen = 1 if how & GEN else 0
        # inside brackets, after a literal only an operator may follow (Luau never calls,
        # indexes or juxtaposes one: `f("a" 1)`, `f(1 (x))`, `f("a" b)`), or a keyword operator
        # (`and`, `or`, `then`, `else`, `elseif`: checked as the name is read)
        literal_in_brackets = (prev == P_STRING or prev == P_VAL) and bool(stack) and stack[-1][0] in _BRACKET_KINDS
        if literal_in_brackets and (cls == C_DIGIT or b in _OPERAND_PUNCT) and not how & LENIENT:
            return None
        if cls == C_IDSTART:
            if after:
                stack, decl, ev = self._chain_end(prev, val, stack, decl, ev, False)
            else:
                stack, decl, ev = self._chain_start(stack, decl, ev)
            bits = (I_JUXT if after else 0) | (I_EXPRPOS if prev == P_PRE or prev == P_THEN_EXPR else 0)
            if flags & F_TYPEKW:
                bits |= I_ALIAS  # `type Name`: a type alias's name
            elif flags & F_EXPORTKW:
                bits |= I_AFTER_EXPORT
            kw = _KW_NEXT.get((0, b), -1)
            if literal_in_brackets and prev == P_STRING:
                if kw not in _KW_AFTER_EXPR_NODES and not how & LENIENT:
                    return None
                bits |= I_AFTER_STRING
            tail = (1 if b == 0x49 else 0) if self.ids is not None else 0
            return (M_IDENT, (kw, ATTACH_MAYBE, bits, tail), P_NONE, 0, NOVAL, stack, decl,
                    N_NONE, ifx, ev)
        if cls == C_DIGIT:
            stack, decl, ev = self._operand(after, prev, val, stack, decl, ev)
            if num == N_IDVALUE and self.ids is not None:
                node = self.ids.children[0].get(b)
                if node is not None:
                    return (M_DIGITS, node, P_NONE, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
                if not how & LENIENT:
                    return None
            return (M_NUM, (PH1, S_Z if b == 0x30 else S_D), P_NONE, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
        if cls == C_BAD:
            if not how & LENIENT:
                return None
            return (M_CODE, 0, prev, flags & ~F_KEPT, val, stack, decl, num, ifx, ev)
        # punctuation
        if b == 0x2E:  # .
            return (M_DOT1, 0, prev, flags, val, stack, decl, num, ifx, ev)
        if b == 0x22 or b == 0x27:  # " '
            if not callable_:
                stack, decl, ev = self._operand(after, prev, val, stack, decl, ev)
            res = NOVAL if callable_ else LITERAL  # a call's result: unknown to the linter
            return (M_STR, (b, 0, self.sm.start, self._tstart, -1, res), P_NONE, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
        if b == 0x28:  # (
            if callable_:
                # the linter's resolver knows no result of a call but a lookup's (read by
                # _lookup_arg, not here): the result is no instance the guard must check
                frame = (K_CALL, NOVAL, gen, ifx)
            else:
                stack, decl, ev = self._operand(after, prev, val, stack, decl, ev)
                frame = (K_GROUP, G_FRESH, gen, ifx)
            return (M_CODE, 0, P_PRE, 0, NOVAL, stack + (frame,), decl, N_NONE, 0, ev)
        if b == 0x29 or b == 0x5D or b == 0x7D:  # ) ] }
            return self._close(prev, val, stack, decl, ifx, ev, b, how)
        if b == 0x5B:  # [
            if callable_ and val == POISON and not how & LENIENT:
                return None
            return (M_LBRACK, 0, prev, flags, val, stack, decl, num, ifx, ev)
        if b == 0x7B:  # {
            if not callable_:
                stack, decl, ev = self._operand(after, prev, val, stack, decl, ev)
            # res 1: a call's table argument (`f{...}`), whose `}` ends a call (`f{...}.x`)
            return (M_CODE, 0, P_PRE, 0, NOVAL, stack + ((K_TABLE, 1 if callable_ else 0, gen, ifx),), decl, N_NONE,
                    0, ev)
        if b == 0x3A:  # :
            return (M_COLON, 0, prev, flags, val, stack, decl, num, ifx, ev)
        if b == 0x2D:  # -
            return (M_DASH, 0, prev, flags, val, stack, decl, num, ifx, ev)
        if b == 0x60:  # `
            stack, decl, ev = self._operand(after, prev, val, stack, decl, ev)
            return (M_INTERP, (0, self.sm.start, self._tstart, -1), P_NONE, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
        if b == 0x7E:  # ~
            return (M_TILDE, 0, prev, flags, val, stack, decl, num, ifx, ev)
        if b == 0x3D and num == N_IDNAME and self.ids is not None:
            return (M_EQ, 0, prev, flags, val, stack, decl, num, ifx, ev)
        if b in _PRE_OPS:
            return self._operator(prev, val, stack, decl, ifx, ev, P_PRE, b)
        if b == 0x3B:  # ;
            return self._operator(prev, val, stack, decl, ifx, ev, P_OTHER, b)
        if b in _TYPE_OPS:
            return self._operator(prev, val, stack, decl, ifx, ev, P_OTHER, b)
        raise AssertionError(f"unclassified byte {b}")  # pragma: no cover

    @staticmethod
    def _word(b: int, bits: int, stack: tuple, decl, ifx: int, ev: tuple) -> tuple:
        """An identifier starting with byte ``b`` (``bits``: its context)."""
        return (M_IDENT, (_KW_NEXT.get((0, b), -1), ATTACH_MAYBE, bits, 0), P_NONE, 0, NOVAL, stack, decl, N_NONE, ifx,
                ev)

    def _code_context(self, prev, flags, val, stack, decl, num, ifx, ev, b, how):
        """Byte ``b`` (no white space) where code is not an expression: a function's header
        and parameter list, a type alias before its ``=``, a ``for`` loop's variables, an
        attribute (Luau's grammar: ``funcbody ::= ['<' GenericTypeList '>'] '(' [parlist]
        ')' [':' ReturnType] block 'end'``, ``parlist ::= bindinglist [',' '...' [':'
        (GenericTypePack | Type)]] | '...' [...]``, ``'type' NAME ['<' GenericTypeListWithDefaults
        '>'] '=' Type``, ``'for' binding ...``).  :data:`_FALLTHROUGH` where plain code
        rules apply."""
        lenient = how & LENIENT
        gen = 1 if how & GEN else 0
        cls = _CLASS[b]
        if b == 0x40:  # `@native`, `@[checked]`: an attribute (the parser checks what follows)
            return (M_ATTR, 0, prev, 0, NOVAL, stack, decl, num, ifx, ev)
        if b == 0x2D:  # a comment may stand anywhere (`-` as an operator: code decides after)
            return (M_DASH, 0, prev, flags, val, stack, decl, num, ifx, ev)
        top = stack[-1][0] if stack else 0
        if top == K_PARAMS:
            if prev == P_PARAM0 or prev == P_PARAM:
                if cls == C_IDSTART:
                    return self._word(b, I_PARAM, stack, decl, ifx, ev)
                if b == 0x2E:  # `...`
                    return (M_DOT1, 0, prev, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
                if b == 0x29 and prev == P_PARAM0:
                    return self._close_params(stack, decl, ev)
            elif prev == P_PNAME or prev == P_PDOTS:
                if b == 0x3A:
                    return (M_COLON, 0, prev, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
                if b == 0x2C and prev == P_PNAME:
                    return (M_CODE, 0, P_PARAM, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
                if b == 0x29:
                    return self._close_params(stack, decl, ev)
            elif prev == P_PTYPED:
                if b == 0x2C:
                    return (M_CODE, 0, P_PARAM, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
                if b == 0x29:
                    return self._close_params(stack, decl, ev)
            return _FALLTHROUGH if lenient else None
        if prev == P_FUNCTION or prev == P_FNAME or prev == P_FDOT or prev == P_FGEN:
            if cls == C_IDSTART and (prev == P_FUNCTION or prev == P_FDOT):
                return self._word(b, I_FHEAD, stack, decl, ifx, ev)
            if b == 0x28 and prev != P_FDOT:
                stack = stack + ((K_PARAMS, NOVAL, gen, ifx),)
                return (M_CODE, 0, P_PARAM0, 0, NOVAL, stack, decl, N_NONE, 0, ev)
            if b == 0x3C and (prev == P_FUNCTION or prev == P_FNAME):
                return (M_TYPE, TP_GPARAM, P_NONE, 0, NOVAL, stack + ((K_TANGLE, GA_FUNC, gen, ifx),), decl, N_NONE, 0, ev)
            if prev == P_FNAME and (b == 0x2E or b == 0x3A):
                return (M_DOT1 if b == 0x2E else M_COLON, 0, P_FNAME, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
            return _FALLTHROUGH if lenient else None
        if prev == P_PEND:
            if b == 0x3A:  # a return type
                return (M_COLON, 0, P_PEND, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
            return _FALLTHROUGH  # the body
        if prev == P_TALIAS or prev == P_TALIASG:
            if b == 0x3C and prev == P_TALIAS:
                return (M_TYPE, TP_GPARAM, P_NONE, 0, NOVAL, stack + ((K_TANGLE, GA_ALIAS, gen, ifx),), decl, N_NONE, 0,
                        ev)
            if b == 0x3D:
                return self._type_start(stack, decl, ifx, ev, P_OTHER, gen)
            return _FALLTHROUGH if lenient else None
        if prev == P_FOR:
            if cls == C_IDSTART:
                return self._word(b, I_FORVAR, stack, decl, ifx, ev)
            return _FALLTHROUGH if lenient else None
        if prev == P_FORNAME:
            if b == 0x3A:
                return (M_COLON, 0, P_FORNAME, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
            if b == 0x2C:
                return (M_CODE, 0, P_FOR, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
            return _FALLTHROUGH
        return _FALLTHROUGH

    @staticmethod
    def _close_params(stack: tuple, decl, ev) -> tuple:
        """The ``)`` of a parameter list: its return type or its body follows."""
        return (M_CODE, 0, P_PEND, 0, NOVAL, stack[:-1], decl, N_NONE, stack[-1][3], ev)

    @staticmethod
    def _type_start(stack: tuple, decl, ifx: int, ev: tuple, resume: int, gen: int) -> tuple:
        """The state before a type (after ``:``, ``::``, a type alias's ``=``): a
        :data:`K_TYPE` frame remembers the previous-token class code goes on with."""
        return (M_TYPE, TP_EXPECT, P_NONE, 0, NOVAL, stack + ((K_TYPE, resume, gen, ifx),), decl, N_NONE, 0, ev)

    def _operand(self, after, prev, val, stack, decl, ev):
        """An operand other than an identifier starts: a juxtaposed operand starts a new
        statement (the declaration being read ends), otherwise the chain starts."""
        if after:
            stack, decl, ev = self._chain_end(prev, val, stack, decl, ev, False)
            return stack, None, ev
        return self._chain_start(stack, decl, ev)

    @staticmethod
    def _chain_start(stack, decl, ev):
        if stack:
            top = stack[-1]
            if top[0] == K_GROUP and top[1] == G_FRESH:
                stack = stack[:-1] + ((K_GROUP, G_CHAIN, top[2], top[3]),)
        if decl is not None and decl[0] == D_VALUES and decl[4] == 0 and len(stack) == decl[3]:
            decl = (D_VALUES, decl[1], decl[2], decl[3], 1, decl[5])
        return stack, decl, ev

    @staticmethod
    def _chain_end(prev, val, stack, decl, ev, typed):
        """The expression just read ends (a token that does not continue it follows)."""
        if stack:
            top = stack[-1]
            if top[0] == K_GROUP and top[1] == G_CHAIN:
                res = G_IMPURE
                if typed and (prev == P_NAME or prev == P_CALLABLE) and val != NOVAL:
                    res = val
                stack = stack[:-1] + ((K_GROUP, res, top[2], top[3]),)
        if decl is not None and decl[0] == D_VALUES and decl[4] == 1 and len(stack) == decl[3]:
            v = val if (prev == P_NAME or prev == P_CALLABLE) else NOVAL
            if v != NOVAL:
                ev = ev + (("bind", decl[2], v, decl[5]),)
            decl = (D_VALUES, decl[1], decl[2], decl[3], 2, decl[5])
        return stack, decl, ev

    def _operator(self, prev, val, stack, decl, ifx, ev, cls, b):
        """An operator token (``b`` its first byte, 0 for a two-byte operator already read)."""
        if _after(prev):
            stack, decl, ev = self._chain_end(prev, val, stack, decl, ev, False)
        if decl is not None and len(stack) == decl[3]:
            ph = decl[0]
            if b == 0x3D:  # =
                if ph == D_AFTER_NAME or ph == D_TYPE:
                    decl = (D_VALUES, decl[1], 0, decl[3], 0, decl[5])
            elif b == 0x2C:  # ,
                if ph == D_VALUES:
                    decl = (D_VALUES, decl[1], decl[2] + 1, decl[3], 0, decl[5])
                elif ph == D_AFTER_NAME:
                    decl = (D_EXPECT_NAME, decl[1], 0, decl[3], 0, decl[5])
                elif ph == D_TYPE:
                    decl = (D_EXPECT_NAME, decl[1], 0, decl[3], 0, 1)
            elif b == 0x3B or ph == D_EXPECT_NAME or ph == D_AFTER_NAME:  # ;
                decl = None
        return (M_CODE, 0, cls, 0, NOVAL, stack, decl, N_NONE, ifx, ev)

    def _close(self, prev, val, stack, decl, ifx, ev, b, how):
        """``)``, ``]`` or ``}``: the innermost open frame must be its opener."""
        want = _CLOSER_KINDS[b]
        if not stack or stack[-1][0] not in want:
            if not how & LENIENT:
                return None
            # the linter's recovery: close the innermost matching frame, else the top bracket
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] in want:
                    stack = stack[: depth + 1]
                    break
            else:
                if not stack or stack[-1][0] not in BRACKETS:
                    return (M_CODE, 0, P_CALLABLE if b != 0x7D else P_VAL, 0, NOVAL, stack, decl, N_NONE, ifx, ev)
        top = stack[-1]
        kind = top[0]
        rest = stack[:-1]
        if kind == K_TYPEOF:  # the expression of `typeof(...)` ends: its type is complete
            return (M_TYPE, TP_DONE, P_NONE, 0, NOVAL, rest, decl, N_NONE, 0, ev)
        if kind == K_PARAMS:
            return self._close_params(stack, decl, ev)
        callable_ = prev == P_NAME or prev == P_CALLABLE
        if kind == K_GROUP:
            st = top[1]
            if st == G_CHAIN:
                res = val if callable_ else NOVAL
            elif st >= POISON:
                res = st
            else:
                res = NOVAL
        elif kind == K_CALL or kind == K_INDEX:
            res = top[1]
        else:
            res = NOVAL
        if decl is not None and len(stack) <= decl[3]:
            if len(stack) == decl[3] and _after(prev):
                _st, decl, ev = self._chain_end(prev, val, stack, decl, ev, False)
            decl = None
        if kind == K_GROUP or kind == K_CALL or kind == K_INDEX:
            return (M_CODE, 0, P_CALLABLE, 0, res, rest, decl, N_NONE, top[3], ev)
        if kind == K_INTERP:
            return (M_INTERP, (0, self.sm.start, self._tstart, -1), P_NONE, 0, NOVAL, rest, decl, N_NONE, top[3], ev)
        return (M_CODE, 0, P_CALLABLE if kind == K_TABLE and top[1] else P_VAL, 0, NOVAL, rest, decl, N_NONE, top[3], ev)

    # ------------------------------------------------------------------------------ identifiers
    def _ident(self, s, b, how):
        kw, attach, bits, tail = s[PAY]
        if _IDCHAR[b]:
            nkw = _KW_NEXT.get((kw, b), -1) if kw >= 0 else -1
            if bits & I_AFTER_STRING and nkw not in _KW_AFTER_EXPR_NODES and not how & LENIENT:
                return None  # not a keyword that may follow the string
            if self.ids is not None:
                tail = 1 if b == 0x49 else (2 if (b == 0x64 and tail == 1) else 0)
            return (M_IDENT, (nkw, ATTACH_MAYBE, bits, tail)) + s[2:]
        # the identifier ends
        stack, decl, ifx, ev = s[STACK], s[DECL], s[IFX], s[EV]
        word = _KW_AT.get(kw)
        if bits & I_AFTER_STRING and word not in _KW_AFTER_EXPR and not how & LENIENT:
            return None
        if bits & I_TYPE:
            return self._type_word(s, word, _CTXW_AT.get(kw), bits >> I_PHASE_SHIFT, b, how)
        if bits & (I_FHEAD | I_PARAM | I_FORVAR) and word is None:
            if bits & I_FHEAD:
                prev = P_FNAME
            else:
                # a parameter (in scope in the function's body: the frame under the list's)
                # or a loop variable (in the loop's frame): it hides an outer name
                prev, depth = (P_PNAME, len(stack) - 1) if bits & I_PARAM else (P_FORNAME, len(stack))
                ev = ev + (("param", depth),)
            return self._code(prev, 0, NOVAL, stack, decl, N_NONE, ifx, ev, b, how)
        if bits & (I_FHEAD | I_PARAM | I_FORVAR) and not how & LENIENT:
            return None  # a keyword where a name must stand
        if bits & I_ALIAS and word is None:
            return self._code(P_TALIAS, 0, NOVAL, stack, decl, N_NONE, ifx, ev, b, how)
        num = N_NONE
        val = NOVAL
        gen = 1 if how & GEN else 0
        kflags = 0
        if word is not None:
            prev = _KW_CLASS.get(word, P_OTHER)
            if word == "end" or word == "until":
                if stack and (stack[-1][0] in (K_BLOCK, K_FUNC) if word == "end" else stack[-1][0] == K_REPEAT):
                    if stack[-1][0] == K_FUNC and stack[-1][1] & 2:
                        prev = P_VAL  # the end of a function expression: a value
                    ifx = stack[-1][3]
                    stack = stack[:-1]
                elif not how & LENIENT:
                    return None
                else:  # the linter's recovery: pop down to the innermost block of that kind
                    want = (K_BLOCK, K_LOOP, K_FUNC) if word == "end" else (K_REPEAT,)
                    for depth in range(len(stack) - 1, -1, -1):
                        if stack[depth][0] in want:
                            ifx = stack[depth][3]
                            stack = stack[:depth]
                            break
                decl = None
            elif word == "do" and stack and stack[-1][0] == K_LOOP:
                top = stack[-1]  # the loop's body starts: the frame is now closed by `end`
                stack = stack[:-1] + ((K_BLOCK, NOVAL, top[2], top[3]),)
                decl = None
            elif word in ("function", "do", "repeat", "while", "for") or (word == "if" and not bits & I_EXPRPOS):
                kind = (K_REPEAT if word == "repeat" else K_LOOP if word in ("while", "for")
                        else K_FUNC if word == "function" else K_BLOCK)
                # a function's res: bit 2 for a function expression (its `end` ends a value)
                res = (2 if bits & I_EXPRPOS else 0) if kind == K_FUNC else NOVAL
                stack = stack + ((kind, res, gen, ifx),)
                ifx = 0
                if word != "function":
                    decl = None
                if word == "for":
                    prev = P_FOR
            elif word == "if":
                ifx += 1
            elif word == "then":
                prev = P_THEN_EXPR if ifx else P_THEN_STMT
            elif word == "else":
                if ifx:
                    ifx -= 1
                    prev = P_THEN_EXPR
                else:
                    prev = P_THEN_STMT
            if word == "local":
                decl = (D_EXPECT_NAME, 0, 0, len(stack), 0, 0)
                ev = ev + (("start",),)
            elif decl is not None:
                juxtaposed = bits & I_JUXT and word not in ("and", "or")  # a new statement
                local_function = word == "function" and decl[0] == D_EXPECT_NAME
                if juxtaposed or local_function or word not in _KW_CONTINUES_DECL:
                    decl = None
        else:
            prev = P_NAME
            # inside a token the identifier's value is not attached: unknown here (NOVAL);
            # Guard.mask re-reads the tokens where a bound name ends inside the token
            val = NOVAL if attach == ATTACH_MAYBE else attach
            declaring = decl is not None and decl[0] == D_EXPECT_NAME and len(stack) == decl[3] and not bits & I_JUXT
            ctxw = _CTXW_AT.get(kw)
            if ctxw is not None and not declaring:
                # `type X = ...` / `export type X = ...` where a statement starts (Luau reads
                # `type` followed by a name as an alias there)
                if ctxw == "type" and (bits & I_AFTER_EXPORT or not bits & (I_EXPRPOS | I_AFTER_STRING)):
                    kflags = F_TYPEKW
                elif ctxw == "export" and not bits & (I_EXPRPOS | I_AFTER_STRING):
                    kflags = F_EXPORTKW
            if decl is not None:
                if bits & I_JUXT:
                    decl = None
                elif decl[0] == D_EXPECT_NAME and len(stack) == decl[3]:
                    decl = (D_AFTER_NAME, decl[1] + 1, 0, decl[3], 0, decl[5])
                    ev = ev + (("name", decl[3]),)
            if tail == 2:
                num = N_IDNAME
        return self._code(prev, kflags, val, stack, decl, num, ifx, ev, b, how)

    # ------------------------------------------------------------------------------ names
    def _position(self, table: int, node: int) -> tuple[int, int]:
        """The position ``node`` of name table ``table`` as kept in a state: the canonical
        one with ``share_names`` (:meth:`~.paths.PathSpace.canon`), else itself."""
        return self.space.canon(table, node) if self.share_names else (table, node)

    def _name(self, s, b, how):
        """A name after ``.`` or ``:``: matched against a name table (``table >= 0``) or free
        (``-1``); ``kw`` follows the keyword trie (a keyword cannot be a field name); ``tail``
        tracks a trailing ``Id`` for grounded numbers."""
        table, pos, started, base, kw, tail = s[PAY]
        lenient = how & LENIENT
        if not started or started == 2:
            if b in _WSB:
                return s
            if _CLASS[b] != C_IDSTART:
                if started == 2 or lenient:  # `x: {`, `(a: number)`: a type annotation, not a method
                    return self._code(P_OTHER, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)
                return None
            if base == POISON and started == 2 and not lenient:
                return None  # a method of a value the guard cannot know
            nkw = _KW_NEXT.get((0, b), -1)
            ntail = (1 if b == 0x49 else 0) if self.ids is not None else 0
            if table < 0:
                return (M_NAME, (-1, -1, 1, POISON if base == POISON else NOVAL, nkw, ntail)) + s[2:]
            t = self.space.get_table(table)
            node = t.children[0].get(b)
            if node is None:
                if t.free or lenient:  # off the table: any name, whose value is unknown
                    return (M_NAME, (-1, -1, 1, POISON if base == POISON else NOVAL, nkw, ntail)) + s[2:]
                return None
            table, node = self._position(table, node)
            if self.share_names and t.kind != KIND_METHOD and base >= 0:
                # only a method name reads the value it is called on (at its end): in any
                # other table the value matters no more (see below), and dropping it lets
                # the names of every value with equal names be one state
                base = NOVAL
            return (M_NAME, (table, node, 1, base, nkw, ntail)) + s[2:]
        if _IDCHAR[b]:
            nkw = _KW_NEXT.get((kw, b), -1) if kw >= 0 else -1
            ntail = (1 if b == 0x49 else (2 if (b == 0x64 and tail == 1) else 0)) if self.ids is not None else 0
            if table < 0 or pos < 0:
                if nkw == kw and ntail == tail:
                    return s
                return (M_NAME, (table, pos, 1, base, nkw, ntail)) + s[2:]
            t = self.space.get_table(table)
            node = t.children[pos].get(b)
            if node is None:
                if t.free or lenient:
                    return (M_NAME, (-1, -1, 1, POISON if base == POISON else NOVAL, nkw, ntail)) + s[2:]
                return None
            table, node = self._position(table, node)
            return (M_NAME, (table, node, 1, base, nkw, ntail)) + s[2:]
        # the name ends
        if kw >= 0 and kw in _KW_AT and not lenient:
            return None  # `x.end`: a keyword is not a name
        res = POISON if base == POISON else NOVAL
        if table >= 0:
            t = self.space.get_table(table)
            r = t.result[pos] if pos >= 0 else None
            if t.kind == KIND_METHOD:
                if r is not None:
                    return self.step((M_LPAREN, (r, base), P_NONE, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV]),
                                     b, how)
            elif r is not None:
                res = r
            elif not t.free and not lenient:
                return None
        return self._code(P_NAME, 0, res, s[STACK], s[DECL], N_IDNAME if tail == 2 else N_NONE, s[IFX], s[EV], b, how)

    def _lookup_arg(self, s, b, how):
        kind, base = s[PAY]
        return self._name_arg(s, b, how, base, kind, A_CALL)

    def _name_arg(self, s, b, how, base, kind, after):
        """The first byte of a lookup's argument (``:WaitForChild(``, ``after`` = ``A_CALL``)
        or of an index (``x[``, ``A_INDEX``) on value ``base``: a quote starts a name string
        matched against the ``kind`` name table; a long string is rejected (the name could
        not be checked); anything else is an expression - an interpolated string too, which
        the linter does not take for a name (``FindFirstChild(`Slot{i}`)``)."""
        if b in _WSB:
            return s
        if b == 0x22 or b == 0x27:
            tf = self.arg_table(base, kind)
            if tf < 0 and not how & LENIENT:
                return None
            table = tf >> 1 if tf >= 0 else -1
            return (M_NSTR, (table, 0, b, after), P_NONE, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV])
        if b == 0x5B and not how & LENIENT:
            return None
        return self._code(P_PRE, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)

    def _name_string(self, s, b, how):
        table, pos, quote, after = s[PAY]
        lenient = how & LENIENT
        if b == quote:
            res = NOVAL
            if table >= 0:
                t = self.space.get_table(table)
                r = t.result[pos] if pos >= 0 else None
                if r is not None:
                    res = r
                elif not t.free and not lenient:
                    return None
            if res == DESC and after == A_STRCALL:
                # `x:FindFirstChild "Name"` has no second argument: a child only
                if not lenient:
                    return None
                res = NOVAL
            return (M_AFTER, (res, after), P_NONE, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV])
        if b == 0x5C or b < 0x20 or b == 0x7F:
            if not lenient:
                return None
            # an ordinary string from here on
            return self._string((M_STR, (quote, 0, self.sm.start, self._tstart, -1, LITERAL)) + s[2:], b, how)
        if table < 0:
            return s
        t = self.space.get_table(table)
        node = t.children[pos].get(b)
        if node is None:
            if t.free or lenient:  # off the table: any name, whose value is unknown
                return (M_NSTR, (-1, -1, quote, after)) + s[2:]
            return None
        table, node = self._position(table, node)
        return (M_NSTR, (table, node, quote, after)) + s[2:]

    def _after_arg(self, s, b, how):
        res, after = s[PAY]
        stack = s[STACK]
        if after == A_STRCALL:  # the call ended with its string: code after a call's value
            return self._code(P_CALLABLE, 0, res, stack, s[DECL], N_NONE, s[IFX], s[EV], b, how)
        if b in _WSB:
            return s
        if after == A_CALL:
            if b == 0x29 and stack and stack[-1][0] == K_CALL:
                if res == DESC:
                    # a name `FindFirstChild` finds only as a descendant, without `, true`
                    if not how & LENIENT:
                        return None
                    res = NOVAL
                return (M_CODE, 0, P_CALLABLE, 0, res, stack[:-1], s[DECL], N_NONE, stack[-1][3], s[EV])
            if b == 0x2C and stack and stack[-1][0] == K_CALL:
                top = stack[-1]
                # (after a descendant's name the search's value is unknown to the guard)
                stack = stack[:-1] + ((K_CALL, NOVAL if res == DESC else res, top[2], top[3]),)
        elif b == 0x5D and stack and stack[-1][0] == K_INDEX:
            return (M_CODE, 0, P_CALLABLE, 0, res, stack[:-1], s[DECL], N_NONE, stack[-1][3], s[EV])
        return self._code(P_STRING, 0, NOVAL, stack, s[DECL], N_NONE, s[IFX], s[EV], b, how)

    # ------------------------------------------------------------------------------ pending tokens
    def _dot1(self, s, b, how):
        prev, val = s[PREV], s[VAL]
        lenient = how & LENIENT
        if prev == P_FNAME:  # `function a.b`: the header's next name
            if _CLASS[b] == C_IDSTART:
                return self._word(b, I_FHEAD, s[STACK], s[DECL], s[IFX], s[EV])
            if b in _WSB:
                return (M_CODE, 0, P_FDOT, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV])
            return None
        if b == 0x2E:
            return (M_DOT2,) + s[1:]
        if prev == P_PARAM0 or prev == P_PARAM:
            return None  # only `...` in a parameter list
        after = _after(prev)
        if 0x30 <= b <= 0x39:
            if after and not lenient:
                return None
            stack, decl, ev = self._operand(after, prev, val, s[STACK], s[DECL], s[EV])
            return (M_NUM, (PH1, S_F), P_NONE, 0, NOVAL, stack, decl, N_NONE, s[IFX], ev)
        if prev == P_NAME or prev == P_CALLABLE:
            name = self._dot_name(s, lenient)
            return None if name is None else self.step(name, b, how)
        if not lenient:
            return None
        return self._code(P_OTHER, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)

    def _dot_name(self, s, lenient):
        """The state before the name that follows ``.`` on a name or call (``s`` right after
        the ``.``), or ``None`` where no name may follow (a value the guard cannot know, or
        an instance without children or members) - when reading a prompt (``lenient``) the
        name is then read as unknown.  Shared by :meth:`_dot1` and :meth:`delegate`."""
        val = s[VAL]
        if val == POISON:
            if not lenient:
                return None
            # reading a prompt: the chain stays unknown to the guard
            pay = (-1, 0, 0, POISON, 0, 0)
        elif val >= 0:
            table = self.space.table(val, KIND_DOT)
            if self.space.get_table(table).empty:
                if not lenient:
                    return None
                table = -1
            pay = (table, 0, 0, val, 0, 0)
        else:
            pay = (-1, 0, 0, NOVAL, 0, 0)
        return (M_NAME, pay, P_NONE, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV])

    def _dot2(self, s, b, how):
        prev, flags = s[PREV], s[FLAGS]
        stack = s[STACK]
        if prev == P_PARAM0 or prev == P_PARAM:  # a vararg parameter: the function declares `...`
            if b != 0x2E:
                return None
            return (M_CODE, 0, P_PDOTS, 0, NOVAL, _mark_vararg(stack), s[DECL], N_NONE, s[IFX], s[EV])
        if b == 0x2E:
            # `...` in code: where an expression may start; alone on its line (a placeholder, the
            # linter's rule) unless the function declares `...`: then something other than `,`
            # or `;` must follow on the line (F_DOTS)
            if prev == P_PRE or prev == P_THEN_EXPR:
                pending = bool(flags & F_NL) and not _vararg_function(stack)
            elif how & LENIENT:
                pending = False
            else:
                return None  # (after anything else `...` is not Luau)
            decl, ev = s[DECL], s[EV]
            stack, decl, ev = self._chain_start(stack, decl, ev)
            return (M_CODE, 0, P_VAL, F_DOTS if pending else 0, NOVAL, stack, decl, N_NONE, s[IFX], ev)
        if b == 0x3D:  # ..=
            return self._operator(prev, s[VAL], s[STACK], s[DECL], s[IFX], s[EV], P_PRE, 0)
        return self.step(self._binary_operator(s, 0), b, how)

    def _binary_operator(self, s, b):
        """The state in code after the pending ``..`` (``b`` 0) or ``-`` (``b`` ``-``) of ``s``
        turned out to be the operator itself (the next byte does not extend it).  Shared by
        :meth:`_dot2`, :meth:`_dash` and :meth:`delegate`."""
        return self._operator(s[PREV], s[VAL], s[STACK], s[DECL], s[IFX], s[EV], P_PRE, b)

    def _colon(self, s, b, how):
        prev, val = s[PREV], s[VAL]
        stack, decl, ev = s[STACK], s[DECL], s[EV]
        lenient = how & LENIENT
        if b == 0x3A:  # ::
            if prev >= P_FNAME and not lenient:
                return None
            if not _after(prev) and not lenient:
                return None  # a type assertion needs the expression it asserts (`f(a, :: T)`)
            stack, decl, ev = self._chain_end(prev, val, stack, decl, ev, True)
            return self._type_start(stack, decl, s[IFX], ev, P_VAL, 1 if how & GEN else 0)
        if (prev == P_STRING or prev == P_VAL) and not lenient:
            return None  # `"x":len()` / `5:f()`: only a name or a call result has methods
        return self.step(self._after_colon(s), b, how)

    def _after_colon(self, s):
        """The state a single ``:`` of ``s`` leads to (the next byte does not make ``::``):
        after a name or call, before a method name (``x:Name(``) or, when no name follows,
        a type annotation (``x: {``); elsewhere code after the ``:``.  A declaration being
        read after its name (``local x:``) expects its type from here.  Shared by
        :meth:`_colon` and :meth:`delegate`."""
        prev, val, stack, decl = s[PREV], s[VAL], s[STACK], s[DECL]
        resume = _ANNOTATED.get(prev)
        if resume is not None:  # a parameter's, a loop variable's or a return type
            return self._type_start(stack, decl, s[IFX], s[EV], resume, 0)
        if prev == P_FNAME:  # `function A:m`: the method's name
            return (M_CODE, 0, P_FDOT, 0, NOVAL, stack, decl, N_NONE, s[IFX], s[EV])
        if decl is not None and decl[0] == D_AFTER_NAME and len(stack) == decl[3]:
            # `local x: T`: the name's type
            decl = (D_TYPE, decl[1], 0, decl[3], 0, decl[5])
            return self._type_start(stack, decl, s[IFX], s[EV], P_NAME, 0)
        if prev == P_NAME or prev == P_CALLABLE:
            pay = (self.space.method_table, 0, 2, val, 0, 0) if val >= 0 else (-1, 0, 2, val, 0, 0)
            return (M_NAME, pay, P_NONE, 0, NOVAL, stack, decl, N_NONE, s[IFX], s[EV])
        return (M_CODE, 0, P_OTHER, 0, NOVAL, stack, decl, N_NONE, s[IFX], s[EV])

    def _dash(self, s, b, how):
        prev, val = s[PREV], s[VAL]
        if b == 0x2D:  # -- a comment: the value before it goes on after it (`x -- c\n.y` is x.y)
            if s[FLAGS] & F_DOTS and not how & LENIENT:
                return None  # `...` then a comment: nothing follows the `...` on its line
            return (M_CSTART, self._comment_start(s[FLAGS], s[STACK]), prev, s[FLAGS], val, s[STACK], s[DECL], s[NUM],
                    s[IFX], s[EV])
        if b == 0x3E:  # ->
            return self._operator(prev, val, s[STACK], s[DECL], s[IFX], s[EV], P_OTHER, 0)
        if b == 0x3D:  # -=
            return self._operator(prev, val, s[STACK], s[DECL], s[IFX], s[EV], P_PRE, 0)
        return self.step(self._binary_operator(s, 0x2D), b, how)

    @staticmethod
    def _end_comment(s, b: int, line: bool):
        """Code after a comment: a line comment ends at its line break ``b`` (``F_CMT``: a
        ``--`` on the next line continues its paragraph; ``F_CR``: the break was a ``\r``,
        its ``\n`` may follow), a block comment at its closer."""
        flags = s[FLAGS] | F_NL
        if line:
            flags = (flags | F_CMT | F_CR) if b == 13 else ((flags | F_CMT) & ~F_CR)
        else:
            flags &= ~(F_CMT | F_CR)
        prev = s[PREV]
        if prev >= TYPE_PREV:  # a comment inside a type
            return (M_TYPE, prev - TYPE_PREV, P_NONE, flags & (F_CMT | F_CR | F_NL), NOVAL, s[STACK], s[DECL], N_NONE, 0,
                    s[EV])
        return (M_CODE, 0, prev, flags, s[VAL], s[STACK], s[DECL], s[NUM], s[IFX], s[EV])

    def _comment_start(self, flags: int, stack: tuple) -> int:
        """The line-comment matcher's state for a comment starting with these ``flags`` and
        ``stack`` (the linter's context byte: in a table type, after code on its line, after
        a comment line, or plain)."""
        if _in_type_table(stack):
            return self._type_cstart
        if not flags & F_NL:
            return self._trail_cstart
        return self._run_cstart if flags & F_CMT else self._line_cstart

    def _lbrack(self, s, b, how):
        prev, val = s[PREV], s[VAL]
        if b == 0x5B:
            return self._long_string_start(s, 0, how)
        if b == 0x3D:
            return (M_LBRACK_EQ, 1) + s[2:]
        stack, decl, ev = s[STACK], s[DECL], s[EV]
        gen = 1 if how & GEN else 0
        if prev == P_NAME or prev == P_CALLABLE:
            stack = stack + ((K_INDEX, POISON if val == POISON else NOVAL, gen, s[IFX]),)
            if val >= 0:
                return self.step((M_IARG, val, P_NONE, 0, NOVAL, stack, decl, N_NONE, 0, ev), b, how)
            return self._code(P_PRE, 0, NOVAL, stack, decl, N_NONE, 0, ev, b, how)
        if prev == P_VAL or prev == P_STRING:
            if not how & LENIENT:
                return None  # `"a"[1]`, `5[1]`: a literal cannot be indexed
            stack, decl, ev = self._chain_end(prev, val, stack, decl, ev, False)
        return self._code(P_PRE, 0, NOVAL, stack + ((K_INDEX, NOVAL, gen, s[IFX]),), decl, N_NONE, 0, ev, b, how)

    def _long_string_start(self, s, level, how):
        prev, val = s[PREV], s[VAL]
        stack, decl, ev = s[STACK], s[DECL], s[EV]
        call = prev == P_NAME or prev == P_CALLABLE
        if not call:
            stack, decl, ev = self._operand(_after(prev), prev, val, stack, decl, ev)
        return (M_LSTR, (level, -1, self.sm.start, 0 if call else 1), P_NONE, 0, NOVAL, stack, decl, N_NONE, s[IFX], ev)

    # ------------------------------------------------------------------------------ types
    # Luau's type grammar (luau-lang.org/grammar; Ast/src/Parser.cpp parseType,
    # parseSimpleType, parseTableType, parseFunctionType, parseGenericTypeList): a type is
    # read with its own brackets on the stack above a K_TYPE frame, which says how code goes
    # on once a byte cannot continue the type.  No instance path is checked in a type (the
    # linter checks none), except inside `typeof(...)`, which is code.

    @staticmethod
    def _tstate(s, phase: int, stack: tuple | None = None) -> tuple:
        return (M_TYPE, phase, P_NONE, s[FLAGS] & (F_CMT | F_CR), NOVAL, s[STACK] if stack is None else stack, s[DECL],
                N_NONE, 0, s[EV])

    def _type(self, s, b, how):
        """Byte ``b`` in a type (mode M_TYPE; the payload's phase says what may come)."""
        pay = s[PAY]
        phase, pend = pay & 31, pay >> 5
        stack = s[STACK]
        lenient = how & LENIENT
        gen = 1 if how & GEN else 0
        cls = _CLASS[b]
        if pend == 3:  # after `-`
            if b == 0x2D:  # a comment inside the type; reading comes back to this phase
                flags = s[FLAGS]
                return (M_CSTART, self._comment_start(flags, stack), TYPE_PREV + phase, flags, NOVAL, stack, s[DECL],
                        N_NONE, 0, s[EV])
            if b == 0x3E and phase == TP_PDONE:  # `(A) -> B`
                return self._tstate(s, TP_EXPECT)
            if phase in _TP_COMPLETE and stack and stack[-1][0] == K_TYPE:
                # the type ended before the `-`, an operator of the code around it (`x :: number - 1`)
                code = self._type_end(self._tstate(s, phase), 0x2D, how)
                return None if code is None else self.step(code, b, how)
            return self._escape_type(s, b, how) if lenient else None
        if pend == 2 and b != 0x2E and phase in _TP_COMPLETE and stack and stack[-1][0] == K_TYPE:
            # `x :: T .. y`: the type ended before a concatenation of the code around it
            code = self._type_end(self._tstate(s, phase), 0x2E, how)
            code = None if code is None else self.step(code, 0x2E, how)
            return None if code is None else self.step(code, b, how)
        if pend:  # after `.` (1) or `..` (2)
            if b == 0x2E:
                if pend == 1:
                    return (M_TYPE, phase | (2 << 5)) + s[2:]
                if phase == TP_NAME:
                    return self._tstate(s, TP_DONE)  # `T...`: a generic type pack
                if phase == TP_GAFTER:
                    return self._tstate(s, TP_GPACK)
                if phase in _TP_START and phase != TP_FIELD:
                    return self._tstate(s, TP_EXPECT)  # `...T`: a variadic pack
            elif pend == 1 and phase == TP_NAME:  # `M.T`: a type from a module
                if cls == C_IDSTART:
                    return self._word(b, I_TYPE | (TP_DOT << I_PHASE_SHIFT), stack, s[DECL], 0, s[EV])
                if b in _WSB:
                    return self._tstate(s, TP_DOT)
            return self._escape_type(s, b, how) if lenient else None
        if cls == C_WS or cls == C_NL:
            flags = s[FLAGS]
            if cls == C_NL:
                if b == 10 and flags & (F_CMT | F_CR):
                    flags = flags & ~F_CR if flags & F_CR else flags & ~F_CMT
                flags |= F_NL
            return (M_TYPE, pay, P_NONE, flags) + s[4:]
        if b == 0x2D:
            return (M_TYPE, phase | (3 << 5), P_NONE, s[FLAGS]) + s[4:]
        if phase == TP_DOT or phase == TP_GPARAM:
            if cls == C_IDSTART:
                return self._word(b, I_TYPE | (phase << I_PHASE_SHIFT), stack, s[DECL], 0, s[EV])
        elif phase == TP_TYPEOF:
            if b == 0x28:
                return (M_CODE, 0, P_PRE, 0, NOVAL, stack + ((K_TYPEOF, NOVAL, gen, 0),), s[DECL], N_NONE, 0, s[EV])
        elif phase == TP_KEYCOLON:
            if b == 0x3A:
                return self._tstate(s, TP_EXPECT)
        elif phase == TP_GAFTER or phase == TP_GPACK:
            if b == 0x2E and phase == TP_GAFTER:
                return (M_TYPE, phase | (1 << 5)) + s[2:]
            if b == 0x2C:
                return self._tstate(s, TP_GPARAM)
            if b == 0x3D and stack[-1][1] == GA_ALIAS:  # a default: `type T<A = number> = ...`
                return self._tstate(s, TP_EXPECT)
            if b == 0x3E:
                return self._close_angle(s)
        elif phase in _TP_START:
            if cls == C_IDSTART:
                return self._word(b, I_TYPE | (phase << I_PHASE_SHIFT), stack, s[DECL], 0, s[EV])
            if b == 0x7B:
                return self._tstate(s, TP_FIELD, stack + ((K_TBRACE, NOVAL, gen, 0),))
            if b == 0x28:
                return self._tstate(s, TP_PLIST, stack + ((K_TPAREN, NOVAL, gen, 0),))
            if b == 0x3C and phase != TP_FIELD:  # `<T>(T) -> T`: a generic function type
                return self._tstate(s, TP_GPARAM, stack + ((K_TANGLE, GA_FNTYPE, gen, 0),))
            if b == 0x22 or b == 0x27:  # a string singleton type
                return (M_STR, (b, 0, self.sm.start, self._tstart, -1, TYPE_STR), P_NONE, 0, NOVAL, stack, s[DECL],
                        N_NONE, 0, s[EV])
            if b == 0x2E and phase != TP_FIELD:
                return (M_TYPE, phase | (1 << 5)) + s[2:]
            if (b == 0x7C or b == 0x26) and phase != TP_FIELD:  # a leading `|` / `&`
                return self._tstate(s, TP_EXPECT)
            if phase == TP_FIELD:
                if b == 0x5B:
                    return self._tstate(s, TP_EXPECT, stack + ((K_TBRACK, NOVAL, gen, 0),))
                if b == 0x7D:
                    return self._tstate(s, TP_DONE, stack[:-1])
            elif phase == TP_PLIST and b == 0x29:
                return self._tstate(s, TP_PDONE, stack[:-1])
            elif phase == TP_TARG0 and b == 0x3E:
                return self._tstate(s, TP_DONE, stack[:-1])
        else:  # a complete type
            if phase == TP_FNAME or phase == TP_PNAME or phase == TP_NTYPEOF:
                if b == 0x3A:  # a property's / a named parameter's type
                    return self._tstate(s, TP_EXPECT)
                if b == 0x28 and phase == TP_NTYPEOF:
                    return (M_CODE, 0, P_PRE, 0, NOVAL, stack + ((K_TYPEOF, NOVAL, gen, 0),), s[DECL], N_NONE, 0,
                            s[EV])
                phase = TP_NAME  # the name was a type
            elif phase == TP_FRW:  # `read`/`write`: an access modifier before a field, or a name
                if cls == C_IDSTART:
                    return self._word(b, I_TYPE | (TP_FIELD << I_PHASE_SHIFT), stack, s[DECL], 0, s[EV])
                if b == 0x3A:
                    return self._tstate(s, TP_EXPECT)
                if b == 0x5B:
                    return self._tstate(s, TP_EXPECT, stack + ((K_TBRACK, NOVAL, gen, 0),))
                phase = TP_NAME
            if phase == TP_NAME:
                if b == 0x2E:
                    return (M_TYPE, TP_NAME | (1 << 5)) + s[2:]
                if b == 0x3C:
                    return self._tstate(s, TP_TARG0, stack + ((K_TANGLE, GA_ARGS, gen, 0),))
            if b == 0x7C or b == 0x26:
                return self._tstate(s, TP_EXPECT)
            if b == 0x3F:
                return self._tstate(s, TP_DONE)
            got = self._type_end(s, b, how)
            if got is not None:
                return got
        return self._escape_type(s, b, how) if lenient else None

    def _type_word(self, s, word: str | None, ctxw: str | None, phase: int, b: int, how: int):
        """A name in a type ends (``word``: the keyword it is, ``ctxw``: the contextual
        keyword), before byte ``b``."""
        if word is not None:
            if word in ("nil", "true", "false") and phase in _TP_START:
                nxt = TP_DONE
            elif how & LENIENT:
                return self._escape_type(s, b, how)
            else:
                return None
        elif phase == TP_DOT:
            nxt = TP_NAME
        elif phase == TP_GPARAM:
            nxt = TP_GAFTER
        elif ctxw == "typeof" and (phase == TP_FIELD or phase == TP_PLIST):
            nxt = TP_NTYPEOF  # `(typeof(x), ...)`, `{typeof(x)}`, or a parameter/field named so
        elif phase == TP_FIELD:
            nxt = TP_FRW if ctxw in ("read", "write") else TP_FNAME
        elif phase == TP_PLIST:
            nxt = TP_PNAME
        elif ctxw == "typeof":
            nxt = TP_TYPEOF
        else:
            nxt = TP_NAME
        return self._type((M_TYPE, nxt, P_NONE, 0, NOVAL, s[STACK], s[DECL], N_NONE, 0, s[EV]), b, how)

    def _type_end(self, s, b: int, how: int):
        """Byte ``b`` after a complete type: the innermost type bracket's separator or closer,
        or - at the type's own level - the type ends and code reads ``b``; ``None`` when
        ``b`` fits neither."""
        stack = s[STACK]
        if not stack:
            return None
        top = stack[-1]
        k = top[0]
        if k == K_TYPE:
            return self._code(top[1], s[FLAGS] & (F_CMT | F_CR), NOVAL, stack[:-1], s[DECL], N_NONE, top[3], s[EV], b,
                              how)
        if k == K_TPAREN:
            if b == 0x2C:
                return self._tstate(s, TP_PLIST)
            if b == 0x29:
                return self._tstate(s, TP_PDONE, stack[:-1])
        elif k == K_TANGLE:
            if b == 0x2C:
                return self._tstate(s, TP_TARG0 if top[1] == GA_ARGS else TP_GPARAM)
            if b == 0x3E:
                return self._close_angle(s)
        elif k == K_TBRACE:
            if b == 0x2C or b == 0x3B:
                return self._tstate(s, TP_FIELD)
            if b == 0x7D:
                return self._tstate(s, TP_DONE, stack[:-1])
        elif k == K_TBRACK:
            if b == 0x5D:
                return self._tstate(s, TP_KEYCOLON, stack[:-1])
        return None

    def _close_angle(self, s) -> tuple:
        """``>`` closes type arguments (a type is complete) or generic parameters (a
        function's parameter list, a type alias's ``=`` or a function type's ``(`` comes)."""
        stack = s[STACK]
        top = stack[-1]
        rest = stack[:-1]
        mode = top[1]
        if mode == GA_ARGS:
            return self._tstate(s, TP_DONE, rest)
        if mode == GA_FNTYPE:
            return self._tstate(s, TP_EXPECT, rest)
        prev = P_FGEN if mode == GA_FUNC else P_TALIASG
        return (M_CODE, 0, prev, 0, NOVAL, rest, s[DECL], N_NONE, top[3], s[EV])

    def _escape_type(self, s, b: int, how: int):
        """Reading a prompt, a byte no type takes: leave the type (every type frame down to
        its K_TYPE frame) and read ``b`` as code there."""
        stack = s[STACK]
        for depth in range(len(stack) - 1, -1, -1):
            k = stack[depth][0]
            if k == K_TYPE:
                top = stack[depth]
                return self._code(top[1], 0, NOVAL, stack[:depth], s[DECL], N_NONE, top[3], s[EV], b, how)
            if k == K_TANGLE and stack[depth][1] in (GA_FUNC, GA_ALIAS):
                return self._code(P_OTHER, 0, NOVAL, stack[:depth], s[DECL], N_NONE, stack[depth][3], s[EV], b, how)
            if k not in TYPE_KINDS:
                break
        return self._code(P_OTHER, 0, NOVAL, stack, s[DECL], N_NONE, 0, s[EV], b, how)

    def _attr(self, s, b, how):
        """An attribute (``@native``, ``@[checked, native]``; payload 0 after ``@``, 1 in its
        name, ``1 + depth`` inside ``@[...]``), then code goes on after the token before it."""
        pay = s[PAY]
        if pay == 0:
            if _CLASS[b] == C_IDSTART:
                return (M_ATTR, 1) + s[2:]
            if b == 0x5B:
                return (M_ATTR, 2) + s[2:]
        elif pay == 1:
            if _IDCHAR[b]:
                return s
            return self._code(s[PREV], 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)
        else:
            if b == 0x5B:
                return (M_ATTR, pay + 1) + s[2:]
            if b == 0x5D:
                if pay == 2:
                    return (M_CODE, 0, s[PREV], 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV])
                return (M_ATTR, pay - 1) + s[2:]
            return s
        if how & LENIENT:
            return self._code(s[PREV], 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)
        return None

    # ------------------------------------------------------------------------------ literals
    def _number(self, s, b, how):
        ph, sem = s[PAY]
        nxt = _number_next(ph, sem, b)
        if nxt is _NUM_END:
            return self._number_end(s, sem, b, how)
        nph, nsem = nxt
        if nsem < 0:
            if not how & LENIENT:
                return None
            nsem = S_D
        return (M_NUM, (nph, nsem)) + s[2:]

    def _number_end(self, s, sem, b, how):
        if sem not in _NUM_ACCEPT and not how & LENIENT:
            return None
        return self._code(P_VAL, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)

    def _digits(self, s, b, how):
        ids = self.ids
        node = s[PAY]
        if 0x30 <= b <= 0x39:
            nxt = ids.children[node].get(b)
            if nxt is None:
                if not how & LENIENT:
                    return None
                return (M_NUM, (PH1, S_D)) + s[2:]
            return (M_DIGITS, nxt) + s[2:]
        if (_IDCHAR[b] or b == 0x2E or not ids.terminal[node]) and not how & LENIENT:
            return None
        if _IDCHAR[b] or b == 0x2E:
            return self._number((M_NUM, (PH1, S_D)) + s[2:], b, how)
        return self._code(P_VAL, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)

    def _id_byte(self, idn: int, b: int, lenient: int) -> int:
        """Byte ``b`` while the digits of an asset id are read in a string (node ``idn`` of
        the grounded-id trie): the next node when ``b`` extends a grounded id, ``-1`` when the
        id is over (or, reading a prompt, abandoned) and ``b`` is plain text again, and
        :data:`_ID_REJECT` when the id is not grounded."""
        if 0x30 <= b <= 0x39:
            nxt = self.ids.children[idn].get(b)
            if nxt is not None:
                return nxt
            return -1 if lenient else _ID_REJECT
        if idn > 0 and not self.ids.terminal[idn] and not lenient:
            return _ID_REJECT
        return -1

    def _text_byte(self, ac: int, trig: int, idn: int, b: int, lenient: int) -> tuple[int, int, int] | None:
        """Byte ``b`` of string text: the placeholder matcher's next state ``ac`` (``None``
        when ``b`` completes a placeholder), the asset-id trigger's state ``trig`` (``-2``:
        not tracked) and ``idn`` (``0`` when a trigger such as ``rbxassetid://`` was just
        completed: the id's digits follow)."""
        nac = self.sm.step(ac, b)
        if nac == BANNED:
            if not lenient:
                return None
            nac = self.sm.start
        if trig != -2:
            trig = self.tm.step(trig, b)
            if trig == BANNED:
                trig, idn = self.tm.start, 0
        return nac, trig, idn

    def _string(self, s, b, how):
        quote, esc, ac, trig, idn, res = s[PAY]
        lenient = how & LENIENT
        if esc:
            if esc == 1:
                nesc = 2 if b == 0x7A else (4 if b == 0x0D else 0)
                return (M_STR, (quote, nesc, self.sm.start, trig, -1, res)) + s[2:]
            if esc == 2 and b in _WSB:
                return s
            if esc == 4 and b == 0x0A:
                return (M_STR, (quote, 0, ac, trig, idn, res)) + s[2:]
            esc = 0
        if idn >= 0:
            idn = self._id_byte(idn, b, lenient)
            if idn >= 0:
                return (M_STR, (quote, 0, ac, trig, idn, res)) + s[2:]
            if idn == _ID_REJECT:
                return None
        if b == quote:
            if res == LITERAL:
                return (M_CODE, 0, P_STRING, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV])
            if res == TYPE_STR:
                return (M_TYPE, TP_DONE, P_NONE, 0, NOVAL, s[STACK], s[DECL], N_NONE, 0, s[EV])
            return (M_CODE, 0, P_CALLABLE, 0, res, s[STACK], s[DECL], N_NONE, s[IFX], s[EV])
        if b == 0x5C:
            return (M_STR, (quote, 1, ac, trig, -1, res)) + s[2:]
        if b == 10 or b == 13:
            if not lenient:
                return None
            return self._code(P_STRING, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)
        text = self._text_byte(ac, trig, idn, b, lenient)
        if text is None:
            return None
        nac, trig, idn = text
        return (M_STR, (quote, 0, nac, trig, idn, res)) + s[2:]

    def _interp(self, s, b, how):
        esc, ac, trig, idn = s[PAY]
        lenient = how & LENIENT
        if esc:
            if esc == 1:
                nesc = 2 if b == 0x7A else (4 if b == 0x0D else (3 if b == 0x75 else 0))
                return (M_INTERP, (nesc, self.sm.start, trig, -1)) + s[2:]
            if esc == 2 and b in _WSB:
                return s
            if (esc == 4 and b == 0x0A) or (esc == 3 and b == 0x7B):
                return (M_INTERP, (0, ac, trig, idn)) + s[2:]
            esc = 0
        if idn >= 0:
            idn = self._id_byte(idn, b, lenient)
            if idn >= 0:
                return (M_INTERP, (0, ac, trig, idn)) + s[2:]
            if idn == _ID_REJECT:
                return None
        if b == 0x60:
            return (M_CODE, 0, P_STRING, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV])
        if b == 0x7B:
            stack = s[STACK] + ((K_INTERP, NOVAL, 1 if how & GEN else 0, s[IFX]),)
            return (M_CODE, 0, P_PRE, F_IOPEN, NOVAL, stack, s[DECL], N_NONE, 0, s[EV])
        if b == 0x5C:
            return (M_INTERP, (1, ac, trig, -1)) + s[2:]
        if b == 10 or b == 13:
            if not lenient:
                return None
            return self._code(P_STRING, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX], s[EV], b, how)
        text = self._text_byte(ac, trig, idn, b, lenient)
        if text is None:
            return None
        nac, trig, idn = text
        return (M_INTERP, (0, nac, trig, idn)) + s[2:]

    def _long(self, s, b, how):
        """Long strings ``[==[ ... ]==]`` and long comments: find the first closer.  ``k``
        (payload item 1): ``-1``, or the ``=`` signs read after a ``]`` that may start the
        closer; those bytes reach the matcher only once they turn out to be text (the rules
        read the body without its closer)."""
        pay = s[PAY]
        level, k, ac = pay[0], pay[1], pay[2]
        mode = s[MODE]
        m = self.sm if mode == M_LSTR else self.bm
        if b == 0x3D and 0 <= k < level:
            return (mode, (level, k + 1, ac) + pay[3:]) + s[2:]
        if b == 0x5D and k == level:  # the closer
            if mode == M_LSTR:
                return (M_CODE, 0, P_STRING if pay[3] else P_CALLABLE, 0, NOVAL, s[STACK], s[DECL], N_NONE, s[IFX],
                        s[EV])
            if not m.end(ac) and not how & LENIENT:
                return None  # the whole comment is a placeholder
            return self._end_comment(s, b, False)
        if k >= 0:  # the held `]` and `=`s are text after all
            for held in b"]" + b"=" * k:
                ac = self._text_step(m, ac, held, how)
                if ac is None:
                    return None
        if b == 0x5D:
            return (mode, (level, 0, ac) + pay[3:]) + s[2:]
        ac = self._text_step(m, ac, b, how)
        if ac is None:
            return None
        return (mode, (level, -1, ac) + pay[3:]) + s[2:]

    @staticmethod
    def _text_step(m, ac: int, b: int, how: int) -> int | None:
        """Matcher ``m``'s step on text byte ``b``; ``None`` where a placeholder completes
        (reading a prompt: the matcher goes on from its idle state)."""
        nac = m.step(ac, b)
        if nac == BANNED:
            if not how & LENIENT:
                return None
            nac = 0
        return nac

    def _cm_step(self, ac: int, b: int, how: int) -> int:
        """The line-comment matcher's step where a ban is read on, as ``[`` and ``=`` after
        ``--`` are (they cannot complete a rule: the next byte decides)."""
        nac = self.cm.step(ac, b)
        return 0 if nac == BANNED else nac

    def _line_comment(self, s, ac: int, b: int, how: int):
        """Byte ``b`` of a line comment's body read in matcher state ``ac``: a line break
        ends the comment (refused when the comment as a whole is a placeholder)."""
        if b == 10 or b == 13:
            if not self.cm.end(ac) and not how & LENIENT:
                return None
            return self._end_comment(s, b, True)
        ac = self._text_step(self.cm, ac, b, how)
        if ac is None:
            return None
        return (M_LCMT, ac) + s[2:]


#: frames whose ``res`` is an instance value (dropped by :meth:`Automaton.project`'s ``drop`` bit 8)
_VALUE_KINDS = frozenset({K_CALL, K_GROUP, K_INDEX})


def _keep_types(stack: tuple, keep: int) -> int:
    """``keep`` frames, plus every frame of a type region among them or below them (a type's
    end pops its K_TYPE frame without a closer byte, so a token inside a type may see the
    frames under it), and at least a parameter list on top (its contents read it) - also
    the one a type region's end uncovers (`(a: T` then `(`: the list rejects it)."""
    if stack[-1][0] == K_PARAMS and keep < 1:
        keep = 1
    for depth, f in enumerate(stack):
        if f[0] == K_TYPE or (f[0] == K_TANGLE and f[1] in (GA_FUNC, GA_ALIAS)):
            below = 1 if depth > 0 and stack[depth - 1][0] == K_PARAMS else 0
            return max(keep, len(stack) - depth + max(keep, below))
    return keep


def _context_bits(dropped: tuple, kept: tuple) -> int:
    """The K_CTX stand-in's bits for frames a projection drops: 1 when the innermost function
    is among them and declares ``...`` (and no function is kept), 2 when a table type is."""
    bits = 0
    if not any(f[0] == K_FUNC or f[0] == K_CTX for f in kept) and _vararg_function(dropped):
        bits |= 1
    if _in_type_table(dropped):
        bits |= 2
    return bits


def _in_type_table(stack: tuple) -> bool:
    """Is a table type's ``{`` among the open frames (or a projection's stand-in for one)?"""
    for f in stack:
        k = f[0]
        if k == K_TBRACE or (k == K_CTX and f[1] & 2):
            return True
    return False


def _vararg_function(stack: tuple) -> bool:
    """Does the innermost open function declare ``...`` (the main chunk does not count)?"""
    for depth in range(len(stack) - 1, -1, -1):
        f = stack[depth]
        if f[0] == K_FUNC:
            return bool(f[1] & 1)
        if f[0] == K_CTX:
            return bool(f[1] & 1)
    return False


def _mark_vararg(stack: tuple) -> tuple:
    """``stack`` (a parameter list on top) with the function below marked as declaring ``...``."""
    if len(stack) >= 2 and stack[-2][0] == K_FUNC:
        f = stack[-2]
        return stack[:-2] + ((K_FUNC, f[1] | 1, f[2], f[3]), stack[-1])
    return stack


def _isolate(out: list[int], *seps: int) -> bytes:
    """Byte classes ``out`` with each of ``seps`` in a class of its own (bytes it represented
    get another representative from among themselves), as 256 bytes."""
    for sep in seps:
        others = [b for b in range(256) if out[b] == sep and b != sep]
        for b in others:
            out[b] = others[0]
        out[sep] = sep
    return bytes(out)


def _classes_by_tag(tag: Callable[[int], Hashable]) -> bytes:
    """Byte classes grouping the bytes with equal ``tag(b)``, each class represented by its
    lowest byte, as 256 bytes."""
    reps: dict[Hashable, int] = {}
    return bytes(reps.setdefault(tag(b), b) for b in range(256))


_NUM_END = (-9, -9)  # _number_next: the byte is not part of the number


def _number_next(ph: int, sem: int, b: int) -> tuple[int, int]:
    """One byte of a number lexeme in phase ``ph`` with value state ``sem``: the next
    ``(phase, value state)`` (value state ``-1``: not a valid number any more), or
    :data:`_NUM_END` when ``b`` ends the number (Luau's number grammar: decimal with ``_``
    separators, fraction, exponent, ``0x``/``0b``)."""
    if ph == PH1:
        if 0x30 <= b <= 0x39:
            return PH1, _num_digit(sem, b)
        if b == 0x5F:
            return PH1, sem
        if b == 0x2E:
            return PH1, (S_F0 if sem in (S_Z, S_D) else -1)
        if b == 0x65 or b == 0x45:
            return PHE, (S_E if sem in (S_Z, S_D, S_F0, S_F) else -1)
        if b == 0x69 and (sem == S_Z or sem == S_D):  # `1i`: an integer literal
            return PHT, S_I
        if _CLASS[b] == C_IDSTART:
            if sem == S_Z and b in (0x78, 0x58):
                return PHT, S_HX
            if sem == S_Z and b in (0x62, 0x42):
                return PHT, S_BX
            return PHT, -1
        return _NUM_END
    if ph == PHE:
        if b == 0x2B or b == 0x2D:
            return PHT, S_ES
        if _IDCHAR[b]:
            return PHT, _num_tail(sem, b)
        return _NUM_END
    if _IDCHAR[b]:
        return PHT, _num_tail(sem, b)
    return _NUM_END


def _num_digit(sem: int, b: int) -> int:
    if sem in (S_Z, S_D):
        return S_D
    if sem in (S_F0, S_F):
        return S_F
    if sem in (S_E, S_ES, S_ED):
        return S_ED
    if sem in (S_HX, S_H):
        return S_H
    if sem in (S_BX, S_B):
        return S_B if b in (0x30, 0x31) else -1
    return -1


def _num_tail(sem: int, b: int) -> int:
    if b == 0x5F:
        return sem
    if sem in (S_HX, S_H) and b in _HEX:
        return S_H
    if sem in (S_E, S_ES, S_ED) and b in _DIGITS:
        return S_ED
    if sem in (S_BX, S_B) and b in (0x30, 0x31):
        return S_B
    if (sem == S_H or sem == S_B) and b == 0x69:  # `0xFFi`, `0b1i`
        return S_I
    return -1
