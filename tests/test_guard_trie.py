"""The guard's keyed tries: the lazy trie reads exactly like the eager one; the vocabulary trie
holds each node's values as their definitions give them."""

from __future__ import annotations

import random
import sys
import threading

import numpy as np
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


# -- the vocabulary trie (luaguard.guard.vocab.VocabTrie) -------------------------------------

_PARTS = (b"TODO", b"TODO:", b" todo:", b"FIXME ", b"your code here", b"code goes here", b"...", b"etc", b"rest of the code",
          b"implement this", b"<placeholder>", b" ", b"\n", b"\r", b"\t", b"--", b"]]", b"end", b"until", b")", b"]", b"}",
          b"\"", b"'", b"`", b"local", b"x", b"_", b"game.", b":Get", b"[", b"(", b"{", b"d", b"l", b"a1", b"\xff", b"=")


def _token_values(data: bytes, cm, bm):
    """Per position ``j`` of one token (``0 .. len``), from their definitions: the frames the
    bytes from ``j`` on can close, their text-ending bytes, the free runs they belong to."""
    import luaguard.guard.vocab as V
    from luaguard.guard.automaton import F_ALL, F_BCMT, F_LCMT
    from luaguard.guard.elision_matchers import BANNED

    def phrase_from(m, j: int) -> bool:  # a phrase completes reading from j (idle; before: non-word, or word)
        for word in {False, j > 0 and V._IDENT[data[j - 1]]}:
            st = 2 if word else 0
            for b in data[j:]:
                st = m.step(st, b)
                if st == BANNED:
                    return True
                if st >> 2 == 0:
                    break
        return False

    n = len(data)
    pops, ends, kind = [0] * (n + 1), [0] * (n + 1), [F_ALL] * (n + 1)
    for j in range(n - 1, -1, -1):
        b = data[j]
        pot = (b in V._CLOSE) + (not V._IDENT[b] and (j == 0 or data[j - 1] in V._KW_LAST))
        pops[j] = pops[j + 1] + pot
        ends[j] = ends[j + 1] | V._END_BIT.get(b, 0)
        kind[j] = (kind[j + 1] & V._byte_kind(b) & ~(F_LCMT if phrase_from(cm, j) else 0)
                   & ~(F_BCMT if phrase_from(bm, j) else 0))
    return pops, ends, kind


@pytest.mark.parametrize("seed", range(3))
def test_vocabulary_trie_holds_each_nodes_values_by_their_definition(seed):
    """The trie built with numpy over all the vocabulary's bytes (``_trie_arrays``) against
    each node's values computed token by token from their definitions: the rank order, the
    nodes (one per distinct prefix per layer, in (token, depth) order), ``lo``/``hi``/``own``,
    ``maxpops``/``ends``/``plain``, the children grouped by key in first-child order, the
    per-layer values (tokens holding placeholder phrases, closers, keyword ends, quotes)."""
    import luaguard.guard.vocab as V
    from luaguard.guard.elision_matchers import block_matcher, comment_matcher
    from luaguard.guard.token_bytes import TokenTable

    rng = random.Random(seed)
    toks = [b"".join(rng.choice(_PARTS) for _ in range(rng.randint(1, 4)))[:rng.randint(1, 24)] for _ in range(400)]
    toks += [None] * 5 + toks[:3]  # ids without bytes, tokens spelt twice
    rng.shuffle(toks)
    trie = V.VocabTrie(TokenTable(size=len(toks) + 2, token_bytes=toks + [None, None], eos_ids=frozenset(), kind="t"))
    cm, bm = comment_matcher(), block_matcher()

    def layer(b: bytes) -> int:
        closes = sum(x in V._CLOSE or (j > 0 and not V._IDENT[x] and b[j - 1] in V._KW_LAST) for j, x in enumerate(b))
        return min(closes, 2) * 2 + any(x in V._OBS for x in b) + (0 if V._IDENT[b[0]] else V._L_OTHER_FIRST)

    ranked = sorted((layer(b), b, i) for i, b in enumerate(toks) if b)
    assert trie.perm.tolist() == [i for _l, _b, i in ranked] + [i for i, b in enumerate(toks + [None, None]) if not b]
    values = [_token_values(b, cm, bm) for _l, b, _i in ranked]
    nodes: dict[tuple[int, bytes], int] = {(lay, b""): lay for lay in trie.roots}
    for lay, b, _i in ranked:  # (numbered in (token, depth) order after the roots)
        for d in range(1, len(b) + 1):
            nodes.setdefault((lay, b[:d]), len(nodes))
    assert trie.nodes == len(nodes)
    for (lay, prefix), node in nodes.items():
        d = len(prefix)
        below = [r for r, (ly, b, _i) in enumerate(ranked) if ly == lay and b.startswith(prefix)]
        assert (trie.lo[node], trie.hi[node]) == (below[0], below[-1] + 1) == (below[0], below[0] + len(below))
        assert trie.own[node] == sum(ranked[r][1] == prefix for r in below)
        assert trie.maxpops[node] == max(values[r][0][d] for r in below)
        assert trie.ends[node] == np.bitwise_or.reduce([values[r][1][d] for r in below])
        assert trie.proj[node] == min(trie.maxpops[node], 62) * 32 + trie.ends[node]
        if d:
            assert trie.plain[node] == np.bitwise_and.reduce([values[r][2][d] for r in below])
        kids = sorted({(ranked[r][1][d], nodes[(lay, ranked[r][1][:d + 1])]) for r in below if len(ranked[r][1]) > d})
        assert trie.children[node] == tuple(kids)
        groups: dict[int, list] = {}
        for byte, child in kids:
            under = [r for r in below if ranked[r][1][:d + 1] == prefix + bytes((byte,))]
            need = max(values[r][0][d] for r in under)
            gends = np.bitwise_or.reduce([values[r][1][d] for r in under])
            drop = (0 if byte in V._VAL_BYTES else 1) | (0 if byte in V._FLAG_BYTES else 2)
            key = (min(need, 62) << 7) | (drop << 5) | int(gends) | (V._G_BAD if byte in V._BAD else 0)
            groups.setdefault(key, []).append((byte, child))
        assert trie.groups[node] == tuple((k, tuple(v)) for k, v in groups.items())
    for lay in trie.roots:
        firsts = [values[r][0][0] - (not V._IDENT[b[0]]) for r, (ly, b, _i) in enumerate(ranked) if ly == lay]
        assert trie.inner[lay] == max(firsts, default=0)
        assert trie.first[lay] == any(not V._IDENT[b[0]] for ly, b, _i in ranked if ly == lay)
    assert any(not trie.plain[n] & V.F_LCMT for n in range(trie.nodes))  # (placeholder phrases were met)


def test_vocabulary_trie_of_a_table_without_token_bytes():
    """Only ids without bytes (special tokens): the layer roots, empty, and every id ranked
    after them in id order."""
    import luaguard.guard.vocab as V
    from luaguard.guard.token_bytes import TokenTable

    trie = V.VocabTrie(TokenTable(size=4, token_bytes=[None] * 4, eos_ids=frozenset([1]), kind="t"))
    assert trie.nodes == len(V.LAYERS) and trie.n_real == 0 and trie.perm.tolist() == [0, 1, 2, 3]
    assert trie.spans == ((0, 0),) * len(V.LAYERS) and trie.children == [()] * len(V.LAYERS)
