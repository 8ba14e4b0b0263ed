"""The keyed tries the guard's tables share (name tables, grounded ids, phrases).

Node 0 is the root; ``children[n]`` maps a symbol (a byte, or any hashable key) to the child
node; ``values[n]`` is the value stored where an entry ends (``None`` where none does).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable
from typing import TypeVar

V = TypeVar("V")


def build_trie(entries: Iterable[tuple[Iterable[Hashable], V]]) -> tuple[list[dict], list[V | None]]:
    """``(children, values)`` of the trie holding ``entries`` (key sequence, value) pairs.

    An entry whose key sequence was seen before overwrites its value; an empty key sequence
    stores its value at the root."""
    children: list[dict] = [{}]
    values: list[V | None] = [None]
    for key, value in entries:
        node = 0
        for sym in key:
            nxt = children[node].get(sym)
            if nxt is None:
                nxt = len(children)
                children[node][sym] = nxt
                children.append({})
                values.append(None)
            node = nxt
        values[node] = value
    return children, values


class LazyTrie:
    """A byte trie whose nodes are made when first looked at.

    Same reading interface as :func:`build_trie`'s result - ``children[n]`` (a dict byte ->
    node, node 0 the root) and ``values[n]`` (the value stored where a key ends, else
    ``None``) - but a node's children are computed on first access from the sorted keys
    below it.  Name tables hold every member of an instance's class (hundreds of names) while
    a decoding walk reads a few of their nodes, so building them eagerly cost milliseconds per
    table (measured: 1.9 ms of a 2.5 ms table build at the sample place).

    ``entries``: ``(key bytes, value)`` pairs; a key seen twice keeps its last value.
    Thread-safe: expanding a node is done under a lock, reading an expanded node is a dict
    look-up.
    """

    def __init__(self, entries: Iterable[tuple[bytes, V]]) -> None:
        d = dict(entries)
        self._keys = sorted(d)
        self._vals = [d[k] for k in self._keys]
        self._span: list[tuple[int, int, int]] = [(0, len(self._keys), 0)]  # lo, hi, depth
        self._lock = threading.Lock()
        self.children: dict[int, dict[int, int]] = _Nodes(self, self._expand)
        self.values: dict[int, V | None] = _Nodes(self, self._value)

    def __len__(self) -> int:
        """The number of keys."""
        return len(self._keys)

    def items(self) -> list[tuple[bytes, V]]:
        """Every ``(key, value)`` pair, in key order."""
        return list(zip(self._keys, self._vals))

    def count(self, node: int) -> int:
        """How many keys lie below ``node`` (the node must have been reached through
        ``children``)."""
        lo, hi, _depth = self._span[node]
        return hi - lo

    def subtree(self, node: int) -> tuple[tuple[bytes, V], ...]:
        """The ``(rest of key, value)`` pairs of the keys below ``node`` (in key order; the
        node must have been reached through ``children``)."""
        lo, hi, depth = self._span[node]
        keys, vals = self._keys, self._vals
        return tuple((keys[i][depth:], vals[i]) for i in range(lo, hi))

    def _value(self, node: int) -> V | None:
        lo, hi, depth = self._span[node]
        return self._vals[lo] if lo < hi and len(self._keys[lo]) == depth else None

    def _expand(self, node: int) -> dict[int, int]:
        with self._lock:
            got = dict.get(self.children, node)
            if got is not None:
                return got
            keys, span = self._keys, self._span
            lo, hi, depth = span[node]
            i = lo + 1 if lo < hi and len(keys[lo]) == depth else lo  # the key ending here sorts first
            kids: dict[int, int] = {}
            while i < hi:
                b = keys[i][depth]
                j = i + 1
                while j < hi and keys[j][depth] == b:
                    j += 1
                kids[b] = len(span)
                span.append((i, j, depth + 1))
                i = j
            dict.__setitem__(self.children, node, kids)  # stored under the lock: made once
            return kids


class _Nodes(dict):
    """Per node of a :class:`LazyTrie`: computes (and keeps) the entry of a node on first
    access; ``IndexError`` for a node the trie does not have."""

    __slots__ = ("_trie", "_make")

    def __init__(self, trie: LazyTrie, make) -> None:
        super().__init__()
        self._trie = trie
        self._make = make

    def __missing__(self, node: int):
        if not 0 <= node < len(self._trie._span):
            raise IndexError(node)
        got = self._make(node)
        dict.__setitem__(self, node, got)
        return got
