"""Placeholders the guard makes impossible: the linter's own rules, compiled.

The guard refuses a byte that would make the linter's ``placeholder`` rule fire
(:mod:`luaguard.checks.placeholders`): its comment rules are regular expressions over a
comment's subject - a context byte (a line comment, one after code on its line, one that
continues a comment paragraph, one inside a table type, a block comment) and the body - and
:func:`comment_matcher` / :func:`block_matcher` compile exactly those expressions into a
byte-level DFA (:class:`~.regexdfa.SearchDFA`) that the automaton steps through the
comment; the byte that makes a match certain, or the end of a comment that matches as a
whole (``-- same as before`` refused at its line break), is refused.  String contents are
never placeholders for the linter, so :func:`string_matcher` refuses nothing.

States are ints: ``state >> 2 == 0`` is the matcher's idle state (in a line comment, once
no rule anchored at the comment's start can match and no phrase is under way; in a block
comment, after its first line), where the mask walk may take a run of bytes that completes
no phrase without stepping it (:meth:`~.automaton.Automaton.free_kind`).

:class:`PhraseMatcher` (an Aho-Corasick automaton over phrases) remains for the triggers of
grounded asset ids (:mod:`.numbers`).
"""

from __future__ import annotations

from itertools import product

from ..elisions import COMMENT_RULES, CTX_BLOCK, CTX_LINE, CTX_RUN, CTX_TRAIL, CTX_TYPE, CTX_TYPE_BLOCK
from .regexdfa import BANNED, SearchDFA
from .trie import build_trie

__all__ = ["BANNED", "CommentMatcher", "NoRules", "PhraseMatcher", "block_matcher", "comment_matcher",
           "string_matcher"]

_BOUNDARY = 256  # virtual symbol before a word that follows a non-word character
_START = 257  # virtual symbol at the start of a text
_WS = frozenset(b" \t\n\r\v\f")


def _alts(*groups: tuple[str, ...]) -> list[str]:
    return [" ".join(w for w in combo if w) for combo in product(*groups)]


class CommentMatcher(SearchDFA):
    """The linter's comment rules (every kind: the guard holds generated text to patch
    mode, where TODO/FIXME are errors too) as a :class:`~.regexdfa.SearchDFA`.
    :meth:`ctx_start` is the state after a comment's context byte; :meth:`end` whether the
    comment may end in a state."""

    def __init__(self, idle_after: bytes) -> None:
        super().__init__([(r.pattern, r.ignore_case) for r in COMMENT_RULES], idle_after)
        self._ctx = {ctx: self.step(self.start, ctx)
                     for ctx in (CTX_LINE, CTX_RUN, CTX_TRAIL, CTX_TYPE, CTX_BLOCK, CTX_TYPE_BLOCK)}

    def ctx_start(self, ctx: int) -> int:
        """The state in which a comment's first body byte is read (``ctx``: a ``CTX_*`` byte)."""
        return self._ctx[ctx]


class NoRules:
    """A matcher that refuses nothing (string contents): one state, ``0``."""

    start = 0

    @staticmethod
    def step(state: int, b: int) -> int:
        return 0

    @staticmethod
    def end(state: int) -> bool:
        return True

    @staticmethod
    def scan(data: bytes, state: int | None = None) -> int:
        return 0

    @staticmethod
    def byte_classes() -> tuple[int, ...]:
        return (0,) * 256


def _is_word(b: int) -> bool:
    return (48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122) or b == 95


def _normalise(phrase: str) -> list[list[int]]:
    """Symbol sequences for one phrase (several when anchored: optional space and '(')."""
    anchored = phrase.startswith("^")
    body = phrase[1:] if anchored else phrase
    syms: list[int] = []
    prev_word = False
    for b in body.encode("utf-8"):
        if b in _WS:
            syms.append(32)
            prev_word = False
            continue
        if _is_word(b):
            if not prev_word:
                syms.append(_BOUNDARY)
            syms.append(b | 0x20 if 65 <= b <= 90 else b)
            prev_word = True
        else:
            syms.append(b)
            prev_word = False
    if not anchored:
        return [syms]
    heads = [[_START], [_START, 32], [_START, 40], [_START, 32, 40], [_START, 40, 32], [_START, 32, 40, 32]]
    return [h + syms for h in heads]


class PhraseMatcher:
    """A byte-level DFA that rejects the byte completing any of ``phrases``.

    States are ``int`` (``start`` at the beginning of a comment body or string content);
    :meth:`step` returns the next state or :data:`BANNED`.  Transitions are computed on
    first use and memoised; the matcher is thread-safe for reads after construction
    (memo writes are idempotent).
    """

    def __init__(self, phrases: tuple[str, ...]) -> None:
        self.phrases = phrases
        goto, ends = build_trie((syms, True) for phrase in phrases for syms in _normalise(phrase))
        out: list[bool] = [end is not None for end in ends]
        fail = [0] * len(goto)
        order: list[int] = []
        queue = list(goto[0].values())
        while queue:
            nq: list[int] = []
            for node in queue:
                order.append(node)
                for s, child in goto[node].items():
                    f = fail[node]
                    while f and s not in goto[f]:
                        f = fail[f]
                    cand = goto[f].get(s, 0) if node else 0
                    fail[child] = cand if cand != child else 0
                    out[child] = out[child] or out[fail[child]]
                    nq.append(child)
            queue = nq
        self._goto = goto
        self._fail = fail
        self._out = out
        self._memo: dict[int, int] = {}
        self._classes: tuple[int, ...] | None = None
        start_node = self._sym(0, _START)
        self.start = start_node << 2

    def _sym(self, node: int, s: int) -> int:
        goto = self._goto
        while True:
            nxt = goto[node].get(s)
            if nxt is not None:
                return nxt
            if node == 0:
                return 0
            node = self._fail[node]

    def step(self, state: int, b: int) -> int:
        """Advance ``state`` by byte ``b``; :data:`BANNED` when a phrase is completed."""
        key = (state << 8) | b
        nxt = self._memo.get(key)
        if nxt is None:
            nxt = self._compute(state, b)
            self._memo[key] = nxt
        return nxt

    def byte_classes(self) -> tuple[int, ...]:
        """Bytes that :meth:`step` cannot tell apart from any state: ``classes[b]`` is the
        lowest byte of ``b``'s class.  A step reads a byte as white space (all alike), as a
        word byte (its lower case) or as itself, and a symbol on no edge of the phrases' trie
        falls back to the root from every node: so the white-space bytes are one class, and
        so are the word bytes and the other bytes that no phrase holds."""
        if self._classes is None:
            alphabet = {sym for edges in self._goto for sym in edges}
            reps: dict[tuple, int] = {}
            out = []
            for b in range(256):
                if b in _WS:
                    tag: tuple = ("space",)
                elif _is_word(b):
                    sym = b | 0x20 if 65 <= b <= 90 else b
                    tag = ("word", sym if sym in alphabet else -1)
                else:
                    tag = ("other", b if b in alphabet else -1)
                out.append(reps.setdefault(tag, b))
            self._classes = tuple(out)
        return self._classes

    def _compute(self, state: int, b: int) -> int:
        node, prev_word, prev_space = state >> 2, state & 2, state & 1
        out = self._out
        if b in _WS:
            if prev_space:
                return state
            node = self._sym(node, 32)
            return BANNED if out[node] else (node << 2) | 1
        if _is_word(b):
            if not prev_word:
                node = self._sym(node, _BOUNDARY)
                if out[node]:
                    return BANNED
            node = self._sym(node, b | 0x20 if 65 <= b <= 90 else b)
            return BANNED if out[node] else (node << 2) | 2
        node = self._sym(node, b)
        return BANNED if out[node] else node << 2

    def scan(self, data: bytes, state: int | None = None) -> int:
        """Run ``data`` from ``state`` (default :attr:`start`); :data:`BANNED` if a phrase occurs."""
        st = self.start if state is None else state
        for b in data:
            st = self.step(st, b)
            if st == BANNED:
                return BANNED
        return st


_COMMENT: CommentMatcher | None = None
_BLOCK: CommentMatcher | None = None
_STRING = NoRules()


def comment_matcher() -> CommentMatcher:
    """The shared matcher of line comments (idle once a plain word was read)."""
    global _COMMENT
    if _COMMENT is None:
        _COMMENT = CommentMatcher(b"\x01 zqx zqx ")
    return _COMMENT


def block_matcher() -> CommentMatcher:
    """The shared matcher of block comment bodies (idle after their first line)."""
    global _BLOCK
    if _BLOCK is None:
        _BLOCK = CommentMatcher(b"\x03 zqx\nzqx\n")
    return _BLOCK


def string_matcher() -> NoRules:
    """The matcher of string contents: the linter reads no placeholder in a string."""
    return _STRING
