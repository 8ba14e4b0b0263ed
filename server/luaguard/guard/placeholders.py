"""Placeholder phrases the guard makes impossible inside comments and strings.

The phrase lists are written from the ``placeholder`` rule of the linter
(:mod:`luaguard.checks.placeholders`) so that guarded output never triggers it:

* in **comments**: every truncation marker the rule knows (``...``/``…``, "rest of the
  code", "your code goes here", "implement this", ``<placeholder>``, "existing code" at the
  start of a comment, "same as before", "code omitted", "omitted for brevity"), ``TODO`` and
  ``FIXME``, and ``luaguard`` (so a model cannot write its own ``luaguard: allow(...)``
  suppression);
* in **strings** (quoted, long and interpolated): ``TODO``, ``FIXME`` and the "rest of the
  code" / "your code here" / "implement this" families (an ellipsis stays legal in strings:
  ``"Loading..."``).

Matching is case-insensitive, treats any run of white space as one space, and requires a
word boundary before a phrase that starts with a letter (so ``mastodon`` does not contain
"todo"); there is no boundary requirement after the phrase, which makes the ban slightly
stricter than the linter (``TODOs`` is banned too).  The regular expressions of the linter
were expanded by hand into the finite phrase lists below; where the linter anchors a
pattern at the start of the comment ("existing code ..."), the phrase is anchored too.

:class:`PhraseMatcher` runs the phrases as an Aho-Corasick automaton (Aho & Corasick,
CACM 1975) over normalised symbols and exposes it as a byte-level DFA with integer states,
so the guard's automaton can carry one ``int`` per comment or string.
"""

from __future__ import annotations

from itertools import product

from .trie import build_trie

__all__ = ["BANNED", "COMMENT_PHRASES", "STRING_PHRASES", "PhraseMatcher", "comment_matcher", "string_matcher"]

BANNED = -1
_BOUNDARY = 256  # virtual symbol before a word that follows a non-word character
_START = 257  # virtual symbol at the start of a comment body
_WS = frozenset(b" \t\n\r\v\f")


def _alts(*groups: tuple[str, ...]) -> list[str]:
    return [" ".join(w for w in combo if w) for combo in product(*groups)]


_CODE_WORDS = ("code", "logic", "implementation")
_REST = _alts(
    ("rest of",), ("", "the", "your", "this"),
    ("code", "implementation", "script", "function", "file", "module", "logic", "class", "method",
     "body", "loop", "handler"),
)
_YOURS = (
    _alts(("your", "the", "my"), ("", "own"), _CODE_WORDS, ("", "goes"), ("here",))
    + _alts(_CODE_WORDS, ("goes here",))
    + _alts(("add", "insert", "put", "write"), ("", "your", "the", "more"), _CODE_WORDS, ("here",))
)
_IMPLEMENT = ["implement this", "implement me", "implement here", "implement the rest", "implement it here"]
_ANCHORED = _alts(
    ("existing", "previous", "original", "unchanged", "remaining", "other"),
    ("code", "logic", "functions", "methods", "implementation", "handlers"),
)

#: Phrases banned anywhere in a string literal.
STRING_PHRASES: tuple[str, ...] = tuple(["todo", "fixme"] + _REST + _YOURS + _IMPLEMENT)

#: Phrases banned in comments; a leading ``^`` anchors the phrase at the start of the body
#: (after optional white space and one ``(``).
COMMENT_PHRASES: tuple[str, ...] = tuple(
    list(STRING_PHRASES)
    + ["...", "\u2026", "placeholder", "luaguard"]
    + ["<placeholder", "<your", "<insert", "<todo", "< placeholder", "< your", "< insert", "< todo"]
    + _alts(("same as", "unchanged from"), ("before", "above", "original"))
    + _alts(("code",), ("continues", "omitted", "truncated"))
    + _alts(("omitted", "truncated"), ("for brevity",))
    + ["^" + p for p in _ANCHORED]
)


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


_COMMENT: PhraseMatcher | None = None
_STRING: PhraseMatcher | None = None


def comment_matcher() -> PhraseMatcher:
    """The shared matcher for comment bodies."""
    global _COMMENT
    if _COMMENT is None:
        _COMMENT = PhraseMatcher(COMMENT_PHRASES)
    return _COMMENT


def string_matcher() -> PhraseMatcher:
    """The shared matcher for string contents."""
    global _STRING
    if _STRING is None:
        _STRING = PhraseMatcher(STRING_PHRASES)
    return _STRING
