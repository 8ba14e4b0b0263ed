"""The guard's keyed tries: the lazy trie reads exactly like the eager one."""

from __future__ import annotations

import random
import sys
import threading

import pytest

from luaguard.guard.trie import LazyTrie, build_trie


def _entries(trie_children, trie_values) -> dict[bytes, object]:
    """Every key -> value stored in a trie, found by walking it from the root."""
    out: dict[bytes, object] = {}
    stack = [(0, b"")]
    while stack:
        node, prefix = stack.pop()
        if trie_values[node] is not None:
            out[prefix] = trie_values[node]
        for b, child in trie_children[node].items():
            stack.append((child, prefix + bytes((b,))))
    return out


def _random_keys(rng: random.Random, n: int) -> list[tuple[bytes, int]]:
    alphabet = b"abAB_9\"."
    keys = []
    for i in range(n):
        k = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
        keys.append((k, i))
    return keys


@pytest.mark.parametrize("seed", range(20))
def test_lazy_trie_holds_the_same_entries_as_the_eager_one(seed):
    rng = random.Random(seed)
    entries = _random_keys(rng, rng.randint(0, 80))
    entries += [(k, -1) for k, _v in entries[:3]]  # a key seen twice keeps its last value
    children, values = build_trie(entries)
    lazy = LazyTrie(entries)
    assert _entries(lazy.children, lazy.values) == _entries(children, values) == dict(entries)
    assert len(lazy) == len(dict(entries))


def test_lazy_trie_walk_by_bytes_and_prefix_values():
    t = LazyTrie([(b"Remotes", 1), (b"Remote", 2), (b"Shared", 3)])
    node = 0
    for b in b"Remote":
        node = t.children[node][b]
    assert t.values[node] == 2
    node = t.children[node][ord("s")]
    assert t.values[node] == 1 and t.children[node] == {}
    assert ord("X") not in t.children[0]
    assert t.values[0] is None


def test_lazy_trie_empty_and_unknown_node():
    t = LazyTrie([])
    assert t.children[0] == {} and t.values[0] is None
    with pytest.raises(IndexError):
        t.children[5]


def test_lazy_trie_expands_each_node_once_under_threads():
    names = [(f"C{i:04d}".encode(), i) for i in range(2000)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for _round in range(10):
            t = LazyTrie(names)
            gate = threading.Barrier(4)
            results: list[dict[bytes, object]] = []

            def read():
                gate.wait()
                results.append(_entries(t.children, t.values))

            threads = [threading.Thread(target=read) for _ in range(4)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            assert len(results) == 4 and all(r == dict(names) for r in results)
            # no node was made twice: every node but the root is some node's child exactly once
            made = len(t._span)
            assert 1 + sum(len(t.children[n]) for n in range(made)) == made
    finally:
        sys.setswitchinterval(old)
