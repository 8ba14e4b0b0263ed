"""Regular expressions as a byte-level DFA, so the guard reads the linter's own rules.

The linter's placeholder rules for comments (:data:`luaguard.checks.placeholders.COMMENT_RULES`)
are regular expressions the linter runs with :func:`re.search` over a comment's subject
(bytes).  :class:`SearchDFA` compiles the same expressions into one deterministic automaton
that reads the subject a byte at a time and says, at the earliest byte, that a match has
become certain: the guard then refuses that byte.  Nothing is restated by hand.

The subset of regular-expression syntax (Python's ``re``, bytes patterns) it compiles,
which the rules stay inside: literals and escapes (``\\.`` ``\\xHH`` ``\\n`` ...), ``.``
(any byte but a line feed), classes ``[...]`` with ranges, negation and ``\\w \\W \\s \\S
\\d \\D``, groups ``( )`` and ``(?: )``, alternation ``|``, the quantifiers ``* + ? {m}
{m,} {m,n}`` (greedy or lazy: the same for "is there a match"), and the zero-width ``^``
(start of the subject), ``\\Z`` (end of the subject) and ``\\b`` (a word boundary, ASCII word
bytes).  Anything else raises :class:`UnsupportedRegex` (a rule outside the subset is a
test failure, not a silent difference).  ``ignore_case`` is ASCII case-insensitivity, as
``re.IGNORECASE`` on a bytes pattern.

**Semantics.**  ``re.search(p, subject)`` finds a match if and only if some substring
matches (no back-references, no look-arounds), which is what a Thompson NFA tracks: the
compiled NFA is started at every position.  :meth:`SearchDFA.step` reads one byte,
:meth:`SearchDFA.end` the end of the subject; each returns :data:`BANNED` as soon as an
accepting NFA state is reachable - on the byte that completes the match, or on the byte
(or end) that satisfies a trailing ``\\b`` or ``\\Z``.  States are ``int``: the DFA state's
id shifted left by 2, bit 1 set when the last byte read was a word byte (``\\b`` reads it)
and bit 0 set before the first byte (``^`` reads it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

__all__ = ["BANNED", "SearchDFA", "UnsupportedRegex"]

BANNED = -1
_WORD = frozenset(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_SPACE = frozenset(b" \t\n\r\f\v")
_DIGIT = frozenset(b"0123456789")
_ALL = frozenset(range(256))
_ESCAPES = {ord("n"): 10, ord("t"): 9, ord("r"): 13, ord("f"): 12, ord("v"): 11, ord("a"): 7, ord("0"): 0}
_CATEGORY = {ord("w"): _WORD, ord("W"): _ALL - _WORD, ord("s"): _SPACE, ord("S"): _ALL - _SPACE,
             ord("d"): _DIGIT, ord("D"): _ALL - _DIGIT}
# assertion kinds on epsilon edges
A_NONE, A_START, A_END, A_BOUNDARY = 0, 1, 2, 3
_END = 256  # the "byte" that stands for the end of the subject


class UnsupportedRegex(ValueError):
    """A pattern uses syntax outside the subset this module compiles (see the module
    docstring); the message names the pattern and the offset."""


# -- parsing -------------------------------------------------------------------------------------
# nodes: ("set", frozenset) | ("cat", [nodes]) | ("alt", [nodes]) | ("rep", node, min, max|None)
#        | ("assert", kind) | ("empty",)


class _Parser:
    def __init__(self, pattern: bytes, ignore_case: bool) -> None:
        self.p = pattern
        self.i = 0
        self.ic = ignore_case

    def fail(self, what: str) -> UnsupportedRegex:
        return UnsupportedRegex(f"{what} at offset {self.i} of {self.p!r}")

    def peek(self) -> int | None:
        return self.p[self.i] if self.i < len(self.p) else None

    def parse(self):
        node = self.alt()
        if self.i != len(self.p):
            raise self.fail("unexpected ')'")
        return node

    def alt(self):
        branches = [self.cat()]
        while self.peek() == ord("|"):
            self.i += 1
            branches.append(self.cat())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def cat(self):
        items = []
        while True:
            c = self.peek()
            if c is None or c in (ord("|"), ord(")")):
                break
            items.append(self.quantified())
        if not items:
            return ("empty",)
        return items[0] if len(items) == 1 else ("cat", items)

    def quantified(self):
        atom = self.atom()
        while True:
            c = self.peek()
            if c == ord("*"):
                lo, hi = 0, None
                self.i += 1
            elif c == ord("+"):
                lo, hi = 1, None
                self.i += 1
            elif c == ord("?"):
                lo, hi = 0, 1
                self.i += 1
            elif c == ord("{") and self._is_counted():
                lo, hi = self._counted()
            else:
                return atom
            if atom[0] == "assert":
                raise self.fail("a quantified assertion")
            if self.peek() == ord("?"):
                self.i += 1  # lazy: the same language
            atom = ("rep", atom, lo, hi)

    def _is_counted(self) -> bool:
        j = self.p.find(b"}", self.i)
        body = self.p[self.i + 1:j] if j > 0 else b""
        return j > 0 and bool(body) and all(ch in b"0123456789," for ch in body) and body[:1] != b","

    def _counted(self) -> tuple[int, int | None]:
        j = self.p.index(b"}", self.i)
        body = self.p[self.i + 1:j].decode()
        self.i = j + 1
        if "," not in body:
            n = int(body)
            return n, n
        a, b = body.split(",", 1)
        return int(a), (int(b) if b else None)

    def atom(self):
        c = self.p[self.i]
        self.i += 1
        if c == ord("("):
            if self.p.startswith(b"?:", self.i):
                self.i += 2
            elif self.peek() == ord("?"):
                raise self.fail("a group extension other than (?:")
            node = self.alt()
            if self.peek() != ord(")"):
                raise self.fail("an unclosed group")
            self.i += 1
            return node
        if c == ord("["):
            return ("set", self._class())
        if c == ord("."):
            return ("set", _ALL - {10})
        if c == ord("^"):
            return ("assert", A_START)
        if c == ord("$"):
            raise self.fail("'$' (write \\Z: '$' also matches before a final line feed)")
        if c == ord("\\"):
            return self._escape(in_class=False)
        if c in b"*+?{":
            raise self.fail("a quantifier without an operand")
        return ("set", self._cased(frozenset((c,))))

    def _escape(self, in_class: bool):
        if self.i >= len(self.p):
            raise self.fail("a trailing backslash")
        c = self.p[self.i]
        self.i += 1
        if c in _CATEGORY:
            return ("set", _CATEGORY[c])
        if c == ord("x"):
            h = self.p[self.i:self.i + 2]
            self.i += 2
            return ("set", self._cased(frozenset((int(h, 16),))))
        if not in_class and c == ord("b"):
            return ("assert", A_BOUNDARY)
        if not in_class and c == ord("Z"):
            return ("assert", A_END)
        if c in _ESCAPES:
            return ("set", frozenset((_ESCAPES[c],)))
        if chr(c).isalnum():
            raise self.fail(f"the escape \\{chr(c)}")
        return ("set", self._cased(frozenset((c,))))

    def _class(self) -> frozenset[int]:
        negate = self.peek() == ord("^")
        if negate:
            self.i += 1
        out: set[int] = set()
        first = True
        while True:
            c = self.peek()
            if c is None:
                raise self.fail("an unclosed class")
            if c == ord("]") and not first:
                self.i += 1
                break
            first = False
            lo = self._class_item()
            if isinstance(lo, frozenset):
                out |= lo
                continue
            if self.peek() == ord("-") and self.i + 1 < len(self.p) and self.p[self.i + 1] != ord("]"):
                self.i += 1
                hi = self._class_item()
                if isinstance(hi, frozenset):
                    raise self.fail("a range ending in a category")
                out |= set(range(lo, hi + 1))
            else:
                out.add(lo)
        result = self._cased(frozenset(out))
        return _ALL - result if negate else result

    def _class_item(self):
        c = self.p[self.i]
        self.i += 1
        if c != ord("\\"):
            return c
        s = self._escape(in_class=True)[1]
        return next(iter(s)) if len(s) == 1 else s

    def _cased(self, s: frozenset[int]) -> frozenset[int]:
        if not self.ic:
            return s
        out = set(s)
        for b in s:
            if 65 <= b <= 90:
                out.add(b + 32)
            elif 97 <= b <= 122:
                out.add(b - 32)
        return frozenset(out)


# -- Thompson NFA ------------------------------------------------------------------------------
@dataclass
class _NFA:
    #: per state: byte-consuming edges [(byteset_id, target)], epsilon edges [(assert kind, target)]
    edges: list[list[tuple[int, int]]] = field(default_factory=list)
    eps: list[list[tuple[int, int]]] = field(default_factory=list)
    sets: list[frozenset[int]] = field(default_factory=list)
    set_ids: dict[frozenset[int], int] = field(default_factory=dict)

    def new(self) -> int:
        self.edges.append([])
        self.eps.append([])
        return len(self.edges) - 1

    def set_id(self, s: frozenset[int]) -> int:
        got = self.set_ids.get(s)
        if got is None:
            got = self.set_ids[s] = len(self.sets)
            self.sets.append(s)
        return got

    def build(self, node, start: int, end: int) -> None:
        kind = node[0]
        if kind == "set":
            self.edges[start].append((self.set_id(node[1]), end))
        elif kind == "empty":
            self.eps[start].append((A_NONE, end))
        elif kind == "assert":
            self.eps[start].append((node[1], end))
        elif kind == "cat":
            cur = start
            for i, item in enumerate(node[1]):
                nxt = end if i == len(node[1]) - 1 else self.new()
                self.build(item, cur, nxt)
                cur = nxt
        elif kind == "alt":
            for branch in node[1]:
                a, z = self.new(), self.new()
                self.eps[start].append((A_NONE, a))
                self.build(branch, a, z)
                self.eps[z].append((A_NONE, end))
        elif kind == "rep":
            _k, inner, lo, hi = node
            cur = start
            for _ in range(lo):
                nxt = self.new()
                self.build(inner, cur, nxt)
                cur = nxt
            if hi is None:
                loop = self.new()
                self.eps[cur].append((A_NONE, loop))
                body_end = self.new()
                self.build(inner, loop, body_end)
                self.eps[body_end].append((A_NONE, loop))
                self.eps[loop].append((A_NONE, end))
            else:
                for _ in range(hi - lo):
                    nxt = self.new()
                    self.eps[cur].append((A_NONE, end))
                    self.build(inner, cur, nxt)
                    cur = nxt
                self.eps[cur].append((A_NONE, end))
        else:  # pragma: no cover
            raise AssertionError(kind)


class SearchDFA:
    """The lazily built DFA of "some pattern of ``patterns`` matches somewhere" (see the
    module docstring).  ``patterns``: ``(pattern, ignore_case)`` pairs (bytes).  States are
    ints; :attr:`start` before the first byte.  Thread-safe (transitions are memoised under
    a lock; a racing duplicate computes the same value)."""

    def __init__(self, patterns: list[tuple[bytes, bool]], idle_after: bytes = b"") -> None:
        nfa = _NFA()
        self.start_nfa = nfa.new()
        self.accept = nfa.new()
        for pattern, ic in patterns:
            tree = _Parser(pattern, ic).parse()
            a, z = nfa.new(), nfa.new()
            nfa.eps[self.start_nfa].append((A_NONE, a))
            nfa.build(tree, a, z)
            nfa.eps[z].append((A_NONE, self.accept))
        self._nfa = nfa
        self._lock = threading.Lock()
        self._sets: list[frozenset[int]] = []
        self._ids: dict[frozenset[int], int] = {}
        self._memo: dict[int, int] = {}
        self._end_memo: dict[int, bool] = {}
        # byte classes: bytes on the same side of every edge set and of the word-byte test
        sig: dict[tuple, int] = {}
        self._byte_class = tuple(sig.setdefault(
            (b in _WORD, b == 10) + tuple(b in s for s in nfa.sets), b) for b in range(256))
        # the idle set, id 0: what is left after ``idle_after`` - once the patterns anchored
        # at the start have died and no match is in progress (see idle())
        st = (self._intern(frozenset()) << 2) | 1
        for b in idle_after:
            st = self._compute(st, b)
            if st == BANNED:
                raise ValueError(f"idle_after {idle_after!r} matches a pattern")
        idle = self._sets[st >> 2]
        self._sets, self._ids, self._memo = [], {}, {}
        self._intern(idle)
        self.start = (self._intern(frozenset()) << 2) | 1

    # -- states ------------------------------------------------------------------------------
    def _intern(self, s: frozenset[int]) -> int:
        got = self._ids.get(s)
        if got is None:
            got = self._ids[s] = len(self._sets)
            self._sets.append(s)
        return got

    def _closure(self, states: frozenset[int], at_start: bool, prev_word: bool, nxt: int) -> set[int]:
        """Epsilon closure of ``states`` plus the search's start, with assertions decided by
        the position (before the first byte?), the previous byte and the next one (``nxt``:
        a byte, or 256 for the end)."""
        eps = self._nfa.eps
        next_word = nxt != _END and nxt in _WORD
        out = set(states)
        out.add(self.start_nfa)
        todo = list(out)
        while todo:
            st = todo.pop()
            for kind, tgt in eps[st]:
                if tgt in out:
                    continue
                if kind == A_START and not at_start:
                    continue
                if kind == A_END and nxt != _END:
                    continue
                if kind == A_BOUNDARY and prev_word == next_word:
                    continue
                out.add(tgt)
                todo.append(tgt)
        return out

    def _no_lookahead_closure(self, states: set[int]) -> set[int]:
        """The states reachable without an assertion that needs the next byte."""
        eps = self._nfa.eps
        out = set(states)
        todo = list(out)
        while todo:
            st = todo.pop()
            for kind, tgt in eps[st]:
                if kind == A_NONE and tgt not in out:
                    out.add(tgt)
                    todo.append(tgt)
        return out

    def _compute(self, state: int, b: int) -> int:
        sid, prev_word, at_start = state >> 2, bool(state & 2), bool(state & 1)
        cur = self._closure(self._sets[sid], at_start, prev_word, b)
        if self.accept in cur:
            return BANNED  # a match needed this byte as its look-ahead (\b)
        edges, sets = self._nfa.edges, self._nfa.sets
        moved = set()
        for st in cur:
            for set_id, tgt in edges[st]:
                if b in sets[set_id]:
                    moved.add(tgt)
        if self.accept in self._no_lookahead_closure(moved):
            return BANNED  # this byte completes a match
        # keep only states with a byte edge or an assertion still to decide (a canonical set)
        keep = frozenset(st for st in self._no_lookahead_closure(moved)
                         if edges[st] or any(k != A_NONE for k, _t in self._nfa.eps[st]))
        return (self._intern(keep) << 2) | (2 if b in _WORD else 0)

    def step(self, state: int, b: int) -> int:
        """The state after byte ``b`` (0-255), or :data:`BANNED` when a match is certain."""
        key = (state << 8) | b
        got = self._memo.get(key)
        if got is None:
            with self._lock:
                got = self._compute(state, b)
                self._memo[key] = got
        return got

    def end(self, state: int) -> bool:
        """True when the subject may end in ``state`` (no match completes at its end)."""
        got = self._end_memo.get(state)
        if got is None:
            with self._lock:
                sid, prev_word, at_start = state >> 2, bool(state & 2), bool(state & 1)
                got = self.accept not in self._closure(self._sets[sid], at_start, prev_word, _END)
                self._end_memo[state] = got
        return got

    def scan(self, data: bytes, state: int | None = None) -> int:
        """Run ``data`` from ``state`` (default :attr:`start`); :data:`BANNED` if a match occurs."""
        st = self.start if state is None else state
        for b in data:
            st = self.step(st, b)
            if st == BANNED:
                return BANNED
        return st

    def matches(self, data: bytes) -> bool:
        """Does some pattern match somewhere in ``data`` (as ``re.search`` would)?"""
        st = self.scan(data)
        return st == BANNED or not self.end(st)

    @staticmethod
    def idle(state: int) -> bool:
        """Is ``state`` in the idle set (id 0: what ``idle_after`` leads to)?  From there a
        run of bytes that completes no match from there leads back to it."""
        return state >= 0 and state >> 2 == 0

    def byte_classes(self) -> tuple[int, ...]:
        """Bytes :meth:`step` cannot tell apart from any state: ``classes[b]`` is the lowest
        byte of ``b``'s class (a byte is read only through the edge sets and whether it is
        a word byte or a line feed)."""
        return self._byte_class
