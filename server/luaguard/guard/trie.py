"""The plain keyed trie the guard's tables share (name tables, grounded ids, phrases).

Node 0 is the root; ``children[n]`` maps a symbol (a byte, or any hashable key) to the child
node; ``values[n]`` is the value stored where an entry ends (``None`` where none does).
"""

from __future__ import annotations

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
