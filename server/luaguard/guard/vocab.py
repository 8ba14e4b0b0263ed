"""Full-vocabulary token masks: a byte trie of the vocabulary walked through the automaton.

A mask says, for every token id of the model, whether the token may come next.  It is
computed for the whole vocabulary (a hard guarantee: a banned token gets ``-inf`` whatever
its rank), never for a top-k list.

**Vocabulary trie.**  The tokens of a :class:`~.token_bytes.TokenTable` are sorted by their
bytes (their *rank*); each trie node then covers a contiguous rank range.  Per node the trie
also records what the rest of any token below it can do: how many open frames it can close
(``maxpops``), which bytes that end a string or comment it contains (``ends``), and which
"free runs" it consists of (``plain``: identifier bytes only; no byte that ends a name
string; per kind of string or comment, no byte that ends it and no placeholder phrase).

**Walk.**  ``accepted(node, state)`` - the rank intervals of the tokens below ``node`` that
the automaton accepts from ``state`` - is computed by stepping the automaton over the
node's children, one transition per byte class (:meth:`~.automaton.Automaton.classes`), and
memoised.  States are *projected* first (:meth:`~.automaton.Automaton.project`): what the
bytes below cannot see is dropped (frames they cannot reach, the context of a string they
cannot end, declaration bookkeeping ...).  Children are grouped by what of the state they can
depend on, and each group is memoised on its own projection, so a state that differs from a
known one only in, say, its bracket stack reuses every group that no closer reaches.  A
subtree that is a free run for the state (an identifier that any name may continue, a
comment with no phrase pending ...) is accepted whole without being visited.  The walk runs
compiled (``_walk.c``, built by ``setup.py``; the same memo keys in hash tables of its own,
results as packed int64 pairs) where the module is installed, else in Python
(:meth:`MaskEngine._walk`): same results; the automaton's steps and projections stay in
Python either way.

**Masks** (:class:`TokenMask`) are cached per projected state and hold whichever of the
allowed and the banned id sets is smaller, as numpy arrays.  The arrays are per token layer
and shared by every mask that uses the same layer state, so a new mask at a large
vocabulary mostly reuses arrays instead of allocating its own (see
:meth:`MaskEngine._build`).  A step applies a mask's packed words (:meth:`TokenMask.packed`,
:mod:`.bitmask`: one bit per id, made with the mask); no ``decode``/``encode`` happens in a
step.  A small vocabulary (up to :data:`DENSE_BUILD_MAX` ids) builds each new mask straight
from a boolean row and one id array (:meth:`MaskEngine._build_dense`).
"""

from __future__ import annotations

import os
import sys
import threading
from itertools import chain
from typing import Any

import numpy as np

from .automaton import (
    _CLASS,
    C_BAD,
    END_BT,
    END_DQ,
    END_NL,
    END_RB,
    END_SQ,
    F_ALL,
    F_BCMT,
    F_DQ,
    F_IDENT,
    F_INTERP,
    F_LCMT,
    F_LSTR,
    F_NSTR,
    F_SQ,
    F_BLANK,
    PC_DELEG,
    Automaton,
    projection_args,
    projection_is_identity,
)
from .bitmask import pack
from .elision_matchers import BANNED, block_matcher, comment_matcher
from .token_bytes import TokenTable

try:  # the compiled walk (setup.py builds it; optional)
    from ._walk import Walker as _CWalker
    from ._walk import allow_row as _c_allow_row
    from ._walk import gather as _c_gather
    from ._walk import rank_total as _c_rank_total
    from ._walk import side_runs as _c_side_runs
except ImportError:  # pragma: no cover - depends on the install
    _CWalker = _c_gather = _c_side_runs = _c_allow_row = _c_rank_total = None


#: set (non-empty) to use the Python walk even where the compiled one is installed
PURE_PYTHON_ENV = "LUAGUARD_PURE_PYTHON_WALK"

__all__ = ["MaskEngine", "TokenMask", "VocabTrie", "vocab_trie"]

_CLOSE = frozenset(b")]}")
_KW_LAST = frozenset(b"dl")  # last letters of `end` and `until`
_IDENT = [(48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122) or b == 95 for b in range(256)]
_END_BIT = {0x22: END_DQ, 0x27: END_SQ, 0x60: END_BT, 0x5D: END_RB, 0x0A: END_NL, 0x0D: END_NL}
_WS = b" \t\x0b\x0c\r\n"
_VAL_BYTES = frozenset(b".:[(\"')-" + _WS)  # first bytes after which the value read so far matters
_FLAG_BYTES = frozenset(b".{}-" + _WS)  # ... after which the flags matter (`-`: a comment's context)
_NSTR_STOP = frozenset(b"\"'\\\x7f" + bytes(range(32)))  # bytes a free name string does not simply take


def _byte_kind(b: int) -> int:
    """The F_* runs byte ``b`` may belong to (see Automaton.free_kind)."""
    k = F_ALL
    if b not in _WS:
        k &= ~F_BLANK
    if not _IDENT[b]:
        k &= ~F_IDENT
    if b in _NSTR_STOP:
        k &= ~F_NSTR
    if b in (0x0A, 0x0D):
        k &= ~(F_LCMT | F_DQ | F_SQ | F_INTERP)
    if b == 0x5D:
        k &= ~(F_BCMT | F_LSTR)
    if b == 0x22:
        k &= ~F_DQ
    if b == 0x27:
        k &= ~F_SQ
    if b in (0x60, 0x7B):
        k &= ~F_INTERP
    return k


#: bytes whose acceptance (or that of the bytes after them) can depend on the value of the
#: expression read so far, or on the white-space flags: ``.``/``:``/``[``/``(``/quotes index
#: or call the value, ``{``/``}`` right after an interpolation's ``{``.  Other bytes only
#: carry values along (``)`` makes the value of a parenthesised chain the current one).
_OBS = frozenset(b".:[(\"'{}")
#: bytes that are never code (non-ASCII, control characters other than white space): one
#: byte class wherever the automaton has byte classes
_BAD = frozenset(b for b in range(256) if _CLASS[b] == C_BAD)
_BAD_BYTES = bytes(sorted(_BAD))  # (for the compiled walk)
_G_BAD = 1 << 13  # group key bit: the group's bytes are all in _BAD
#: token layers, by whether the first byte is an identifier byte (layers 0-5) or not (6-11:
#: such a token ends an identifier or name being read, see MaskEngine._layer_sids), how many
#: frames a token can close by itself (0, 1, 2 or more: one per closer and per
#: non-identifier byte after ``d``/``l`` that may complete ``end``/``until``) and whether it
#: holds an ``_OBS`` byte (odd layers)
LAYERS = tuple(f"{first}, closes {pops}{', observing' if obs else ''}"
               for first in ("identifier first", "other first") for pops in ("0", "1", "2+") for obs in (0, 1))
_L_OBS, _L_OTHER_FIRST = 1, 6


def _expand(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The ranks of the half-open intervals ``[a[i], z[i])``, concatenated (vectorised)."""
    lengths = z - a
    total = int(lengths.sum())
    if total <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(a - (np.cumsum(lengths) - lengths), lengths) + np.arange(total, dtype=np.int64)


def _lut(values, dtype=bool) -> np.ndarray:
    """A 256-entry look-up array over byte values."""
    return np.array([values(b) for b in range(256)], dtype=dtype)


# per byte value, for the trie build (numpy look-ups over every byte of the vocabulary)
_IS_IDENT = _lut(lambda b: _IDENT[b])
_IS_CLOSE = _lut(lambda b: b in _CLOSE)
_IS_KW_LAST = _lut(lambda b: b in _KW_LAST)
_IS_OBS = _lut(lambda b: b in _OBS)
_END_BITS = _lut(lambda b: _END_BIT.get(b, 0), np.int64)
_KINDS = _lut(_byte_kind, np.int64)
#: a child's group key bits from its byte: whether the value / the flags may be dropped, _G_BAD
_BYTE_KEY = _lut(lambda b: (((0 if b in _VAL_BYTES else 1) | (0 if b in _FLAG_BYTES else 2)) << 5)
                 | (_G_BAD if b in _BAD else 0), np.int64)


def _joined(toks: list[bytes]) -> tuple[np.ndarray, ...]:
    """``(data, start, lens, tok, pos, before)``: the bytes of ``toks`` in one uint8 array,
    where each token starts in it and its length, and per byte its token, its place in the
    token and the byte before it (0 for a token's first byte)."""
    lens = np.fromiter(map(len, toks), dtype=np.int64, count=len(toks))
    start = np.cumsum(lens) - lens
    tok = np.repeat(np.arange(len(toks)), lens)
    data = np.frombuffer(b"".join(toks), dtype=np.uint8)
    pos = np.arange(len(tok)) - start[tok]
    before = np.where(pos > 0, np.roll(data, 1), 0)
    return data, start, lens, tok, pos, before


def _phrase_starts(m, data: np.ndarray, pos: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Per byte ``p`` of the joined tokens: does a phrase of placeholder matcher ``m`` complete
    within the token when read from ``p`` on, from the matcher's idle state, the byte before
    ``p`` taken as a non-word byte (and also as a word byte where it is one)?  ``pos``: each
    byte's place in its token, ``last``: its token's last byte.  All starts are stepped at
    once, each distinct (state, byte) pair through ``m.step``; a start stops where the
    matcher is idle again (reading on is then starting at the next byte)."""
    after_word = np.flatnonzero(pos > 0)
    after_word = after_word[_IS_IDENT[data[after_word - 1]]]
    origin = np.concatenate((np.arange(len(data)), after_word))
    state = np.concatenate((np.zeros(len(data), dtype=np.int64), np.full(len(after_word), 2, dtype=np.int64)))
    at = origin.copy()
    hit = np.zeros(len(data), dtype=bool)
    while len(at):
        key = (state << 8) | data[at]
        keys = np.flatnonzero(np.bincount(key))
        step = np.zeros(int(keys[-1]) + 1, dtype=np.int64)
        step[keys] = [m.step(k >> 8, k & 255) for k in keys.tolist()]
        state = step[key]
        hit[origin[state == BANNED]] = True
        go = (state != BANNED) & (state >> 2 != 0) & (at < last[at])
        origin, state, at = origin[go], state[go], at[go] + 1
    return hit


def _trie_arrays(token_bytes: list[bytes | None], size: int) -> dict[str, np.ndarray]:
    """The arrays of the :class:`VocabTrie` of ``token_bytes`` at logits width ``size`` (the
    layout of :meth:`VocabTrie.to_arrays`), computed over every byte of the vocabulary at
    once with numpy (0.4-1.2 s at 129k-248k ids, where a loop over the tokens took 3-8 s).

    Tokens are sorted by layer, bytes and id.  Token ``r`` of that order adds one node per
    byte past its longest common prefix with token ``r - 1`` of its layer (nodes numbered in
    (token, depth) order after the layer roots).  Each byte of each token is one (token,
    depth) pair; ordered by (depth, rank), the pairs of one node are one run starting at the
    pair that made the node, so each per-node value is one ``reduceat`` over the runs."""
    ids = [i for i, b in enumerate(token_bytes) if b]
    toks = [token_bytes[i] for i in ids]
    data, start, _lens, tok, pos, before = _joined(toks)
    # layer: first byte an identifier byte or not; frames the token closes (a closer, or a
    # non-identifier byte after d/l); an _OBS byte or not
    closes = _IS_CLOSE[data] | ((pos > 0) & ~_IS_IDENT[data] & _IS_KW_LAST[before])
    layer = (np.minimum(np.bincount(tok, closes, len(toks)), 2).astype(np.int64) * 2
             + (np.bincount(tok, _IS_OBS[data], len(toks)) > 0) + np.where(_IS_IDENT[data[start]], 0, _L_OTHER_FIRST))
    keys = [bytes((lay,)) + b for lay, b in zip(layer.tolist(), toks)]
    order = sorted(range(len(toks)), key=keys.__getitem__)  # (stable: equal bytes in id order)
    perm = np.array([ids[k] for k in order] + [i for i, b in enumerate(token_bytes) if not b], dtype=np.int64)
    toks = [toks[k] for k in order]
    layer = layer[order]
    n, n_roots = len(toks), len(LAYERS)
    data, start, lens, tok, pos, before = _joined(toks)
    last = (start + lens - 1)[tok]  # per byte: its token's last byte
    at_first, at_last = pos == 0, np.flatnonzero(pos == (lens - 1)[tok])
    # per byte, over the rest of its token from it: the frames it can close (one per closer
    # and per non-identifier byte first or after d/l), its text-ending bytes, the free runs
    # it belongs to (no line/block comment run from where a placeholder phrase may start)
    pops = _IS_CLOSE[data] + (~_IS_IDENT[data] & (at_first | _IS_KW_LAST[before])).astype(np.int64)
    ends = _END_BITS[data]
    kind = _KINDS[data]
    kind[_phrase_starts(comment_matcher(), data, pos, last)] &= ~F_LCMT
    kind[_phrase_starts(block_matcher(), data, pos, last)] &= ~F_BCMT
    by_depth = np.argsort(pos, kind="stable")  # (depth, rank) order
    depth_at = np.searchsorted(pos[by_depth], np.arange(int(lens.max(initial=0)) + 1))
    for d in range(len(depth_at) - 2, -1, -1):  # from each token's end
        p = by_depth[depth_at[d]:depth_at[d + 1]]
        p = p[p < last[p]]
        pops[p] += pops[p + 1]
        ends[p] |= ends[p + 1]
        kind[p] &= kind[p + 1]

    def after(values: np.ndarray, at_end: int) -> np.ndarray:  # the value at the next byte
        out = np.roll(values, -1)
        out[at_last] = at_end
        return out

    # nodes: a token's bytes past its longest common prefix with the token before in its layer
    prev = np.maximum(tok - 1, 0)
    same = (pos < lens[prev]) & (data[np.minimum(start[prev] + pos, len(data) - 1)] == data)
    lcp = np.minimum(np.minimum.reduceat(np.where(same, lens.max(initial=0), pos), start), lens)
    lcp[np.flatnonzero(np.diff(layer, prepend=-1))] = 0  # (a layer's first token)
    new = pos >= lcp[tok]
    node_id = np.cumsum(new) + (n_roots - 1)  # (where new: the node the pair made)
    n_nodes = n_roots + int(new.sum())
    runs = np.flatnonzero(new[by_depth])
    run_node = node_id[by_depth][runs]
    node = np.empty(len(data), dtype=np.int64)  # per byte: its node
    node[by_depth] = node_id[by_depth][np.maximum.accumulate(np.where(new[by_depth], np.arange(len(data)), 0))]
    lay_lo = np.searchsorted(layer, np.arange(n_roots))
    lay_hi = np.searchsorted(layer, np.arange(n_roots), side="right")
    layers = list(zip(lay_lo.tolist(), lay_hi.tolist()))
    first_pops, first_ends, other_first = pops[start], ends[start], ~_IS_IDENT[data[start]]

    def per_node(reduce, values: np.ndarray, roots) -> np.ndarray:
        out = np.zeros(n_nodes, dtype=np.int64)
        out[:n_roots] = roots
        if len(runs):
            out[run_node] = reduce.reduceat(values[by_depth], runs)
        return out

    maxpops = per_node(np.maximum, after(pops, 0), [first_pops[a:z].max(initial=0) for a, z in layers])
    ends_of = per_node(np.bitwise_or, after(ends, 0), [np.bitwise_or.reduce(first_ends[a:z]) for a, z in layers])
    need = per_node(np.maximum, pops, 0)  # (as maxpops and ends, the node's own byte included)
    gends = per_node(np.bitwise_or, ends, 0)
    # children (in byte order: the order they were made in) grouped per parent by what of
    # its state they can depend on, the groups in the order of their first child
    made = node_id[new]
    parent = np.where(at_first, layer[tok], np.roll(node, 1))[new]
    byte = data[new]
    by_parent = np.argsort(parent, kind="stable")
    gid = ((parent << 14) | (np.minimum(need[made], 62) << 7) | gends[made] | _BYTE_KEY[byte])[by_parent]
    _u, first_at, inv = np.unique(gid, return_index=True, return_inverse=True)
    group_of = first_at[inv]  # per child (in parent order): where its group's first child is
    seq = np.lexsort((np.arange(len(gid)), group_of))
    kids = by_parent[seq]
    g_start = np.flatnonzero(np.diff(group_of[seq], prepend=-1))
    n_groups = np.bincount(parent[kids[g_start]], minlength=n_nodes)
    g_stop = np.cumsum(n_groups)
    nodes = np.column_stack((
        per_node(np.minimum, tok, lay_lo), per_node(np.maximum, tok + 1, lay_hi),
        np.bincount(node[at_last], minlength=n_nodes), np.minimum(maxpops, 62) * 32 + ends_of,
        per_node(np.bitwise_and, after(kind, F_ALL), F_ALL), np.bincount(parent, minlength=n_nodes) > 0,
        g_stop - n_groups, g_stop))
    groups = np.column_stack((gid[seq][g_start] & 0x3FFF, g_start, np.append(g_start, len(kids))[1:], 0 * g_start))
    return {
        "perm": perm,
        "nodes": nodes.astype(np.int32),
        "groups": groups.astype(np.int32),
        "kids": np.column_stack((byte[kids], made[kids])).astype(np.int32).ravel(),
        "maxpops": maxpops.astype(np.int32),
        "ends": ends_of.astype(np.int32),
        "layers": np.array([[(first_pops[a:z] - other_first[a:z]).max(initial=0) for a, z in layers],
                            [other_first[a:z].any() for a, z in layers], (lay_hi - lay_lo).tolist()], dtype=np.int64),
        "scalars": np.array([size, n, maxpops[:n_roots].max(), np.bitwise_or.reduce(ends_of[:n_roots])], dtype=np.int64),
    }


class VocabTrie:
    """The byte trie of one token table (see the module docstring).

    ``perm[r]`` is the token id of rank ``r``: ranks ``[0, n_real)`` are tokens with bytes
    in layer then byte order, ranks ``[n_real, size)`` the ids without bytes (special
    tokens, unused ids).  Node 0-11 are the layers' roots (:data:`LAYERS`).  Per node, in
    :attr:`records` (the compiled walk's int32 records: per node ``(lo, hi, own, proj,
    plain, has children, first group, end group)``, per child group ``(key, first child,
    end child, 0)`` in node order, per child ``(byte, node)`` in group order): ``lo``/``hi``
    (the ranks below it), ``own`` (tokens whose bytes end exactly there, ranks ``lo ..
    lo+own``), ``proj`` (``min(maxpops, 62) * 32 + ends``: ``maxpops`` an upper bound of the
    open frames the rest of any token below can close - one per ``)``, ``]``, ``}`` and one
    per point where an ``end``/``until`` keyword may be completed: a non-identifier byte
    after ``d``/``l``, or first in the token; ``ends`` which bytes that can end a string or
    comment - ``"``, ``'``, backquote, ``]``, line breaks - occur in the rest of some token
    below), ``plain`` (the free runs every token below continues, see
    :meth:`~.automaton.Automaton.free_kind`) and the children grouped by what of the
    parent's state they can depend on (see :class:`MaskEngine`).  The Python walk reads
    the same as per-node lists (``lo``, ``hi``, ``own``, ``proj``, ``plain``, ``maxpops``,
    ``ends``, ``children``, ``groups``), made from the records on first use.
    """

    def __init__(self, table: TokenTable) -> None:
        self._load(_trie_arrays(table.token_bytes, table.size))

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> VocabTrie:
        """The trie of :meth:`to_arrays`' arrays (:mod:`.table_cache` stores them)."""
        trie = cls.__new__(cls)
        trie._load(arrays)
        return trie

    def _load(self, arrays: dict[str, np.ndarray]) -> None:
        size, n_real, maxpops_all, ends_all = (int(x) for x in arrays["scalars"])
        layers = arrays["layers"]
        self.records = tuple(np.ascontiguousarray(arrays[k], dtype=np.int32).tobytes() for k in ("nodes", "groups", "kids"))
        # (the records' arrays as views of the records: no second copy)
        nodes, groups, kids = (np.frombuffer(r, dtype=np.int32) for r in self.records)
        self._arrays = dict(arrays, nodes=nodes.reshape(-1, 8), groups=groups.reshape(-1, 4), kids=kids)
        self.size, self.n_real, self.perm = size, n_real, arrays["perm"]
        self.roots = tuple(range(layers.shape[1]))
        self.inner, self.first = layers[0].tolist(), [bool(x) for x in layers[1]]
        self.layer_sizes = tuple(layers[2].tolist())
        #: per root: its first rank and end rank, and the text-ending bytes of its tokens
        self.spans = tuple(map(tuple, self._arrays["nodes"][: len(self.roots), :2].tolist()))
        self.layer_ends = tuple(arrays["ends"][: len(self.roots)].tolist())
        #: over all layers: the frames any token can close / the text-ending bytes it holds
        self.maxpops_all, self.ends_all = maxpops_all, ends_all
        self.nodes = len(self._arrays["nodes"])

    def most_groups(self) -> int:
        """The most child groups of one node."""
        nodes = self._arrays["nodes"]
        return int((nodes[:, 7] - nodes[:, 6]).max()) if len(nodes) else 0

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The trie as plain arrays: :attr:`records`' arrays (``nodes``, ``groups``,
        ``kids``), the rank order ``perm``, the per-node ``maxpops`` and ``ends``, the
        per-layer ``layers`` (``inner``, ``first``, sizes) and ``scalars`` (``size``,
        ``n_real``, ``maxpops_all``, ``ends_all``)."""
        return dict(self._arrays)

    def __getattr__(self, name: str):
        """(The per-node lists of the Python walk, made from the arrays once.)"""
        arrays = self.__dict__.get("_arrays")
        if arrays is None or name not in _FROM_ARRAYS:
            raise AttributeError(name)
        nodes = arrays["nodes"]
        if name in ("lo", "hi", "own", "proj", "plain"):
            value = nodes[:, ("lo", "hi", "own", "proj", "plain").index(name)].tolist()
        elif name in ("maxpops", "ends"):
            value = arrays[name].tolist()
        else:
            g, k = arrays["groups"].tolist(), arrays["kids"].tolist()
            grouped = [tuple((key, tuple((k[2 * j], k[2 * j + 1]) for j in range(a, z))) for key, a, z, _ in g[g0:g1])
                       for g0, g1 in nodes[:, 6:8].tolist()]
            self.__dict__["groups"] = grouped
            self.__dict__["children"] = [tuple(sorted(p for _key, kids_ in gs for p in kids_)) for gs in grouped]
            return self.__dict__[name]
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return (f"VocabTrie({self.n_real} tokens, {self.nodes} nodes, maxpops {self.maxpops_all}, "
                f"layers {'/'.join(map(str, self.layer_sizes))})")


def vocab_trie(table: TokenTable) -> VocabTrie:
    """The table's trie, built once per table (and, for a table the disk cache keyed,
    stored there with it: :mod:`.table_cache`)."""
    return table.derived("vocab_trie", _new_trie)


_FROM_ARRAYS = frozenset({"lo", "hi", "own", "proj", "plain", "maxpops", "ends", "groups", "children"})


def _new_trie(table: TokenTable) -> VocabTrie:
    return VocabTrie(table)


#: vocabularies up to this size build a new mask straight as a boolean row
#: (MaskEngine._build_dense) instead of from per-layer id arrays shared between masks
#: (MaskEngine._build: what saves memory and page faults at a large vocabulary)
DENSE_BUILD_MAX = 16_384
#: id arrays shorter than this are copied into one array per mask; longer ones (a layer's
#: allowed or banned ids) are shared by every mask that uses them
SHARE_MIN = 2048


class TokenMask:
    """Which token ids may come next.

    ``allow``: the mask is kept as its allowed ids (else as its banned ids); ``ids``: those
    ids as one array (built on first use: see below); ``size``: the vocabulary size;
    ``eos``: EOS is among the allowed; ``n_allowed``: how many ids are allowed;
    ``dead_end``: nothing but EOS could be allowed although the text may not stop there (the
    guard then lets the model stop).

    **Storage.**  A mask is held as a few id arrays, most of them shared with other masks
    (one per token layer and state: see :meth:`MaskEngine.mask`), so that a new mask at a
    large vocabulary allocates little: ``keep`` (disjoint arrays of allowed ids) and, for a
    mask kept as banned ids, ``ban`` (arrays of ids set to ``-inf``, which may include ids of
    ``keep``: those are restored afterwards).  ``TokenMask(allow, ids, ...)`` builds a mask
    from one array as before (a small vocabulary's masks: one array and their boolean
    row, :meth:`MaskEngine._build_dense`).
    """

    __slots__ = ("allow", "size", "n_allowed", "eos", "dead_end", "keep", "ban", "_ids", "_tensors", "_set",
                 "_dense", "_packed")

    def __init__(self, allow: bool, ids: np.ndarray | None, size: int, n_allowed: int, eos: bool,
                 dead_end: bool = False, *, keep: tuple[np.ndarray, ...] = (),
                 ban: tuple[np.ndarray, ...] = ()) -> None:
        self.allow = allow
        self.size = size
        self.n_allowed = n_allowed
        self.eos = eos
        self.dead_end = dead_end
        if ids is not None:
            keep, ban = ((ids,), ()) if allow else ((), (ids,))
        self.keep = keep
        self.ban = ban
        self._ids = ids
        self._tensors: dict[Any, Any] = {}  # device -> the packed words there (bitmask.apply_mask_)
        self._set: frozenset[int] | None = None
        self._dense: np.ndarray | None = None
        self._packed: np.ndarray | None = None

    def __repr__(self) -> str:
        return (f"TokenMask(allow={self.allow}, n_allowed={self.n_allowed}, size={self.size}, eos={self.eos}, "
                f"dead_end={self.dead_end}, parts={len(self.keep)}+{len(self.ban)})")

    @property
    def ids(self) -> np.ndarray:
        """The allowed ids (``allow``) or the banned ids, as one int64 array (cached; not
        used in a step)."""
        if self._ids is None:
            if self.allow:
                got = _cat(self.keep)
            else:
                got = _cat(self.ban)
                if self.keep:
                    got = np.setdiff1d(got, _cat(self.keep), assume_unique=True)
            self._ids = got
        return self._ids

    def tensor(self, device: Any = "cpu"):
        """The ids as one torch ``int64`` tensor on ``device`` (for tools and engines that
        take one index tensor; a step uses :meth:`apply_`)."""
        import torch

        return torch.from_numpy(self.ids).to(device)

    def banned_row(self, width: int | None = None) -> np.ndarray:
        """The mask as a boolean row of ``width`` (default ``size``) elements, True where
        the id is banned (ids past ``size`` too; for tests and tools: a step applies
        :meth:`packed`).  The row for ``width == size`` is cached."""
        if width is None or width == self.size:
            if self._dense is None:
                self._dense = self._banned_row(self.size)
            return self._dense
        return self._banned_row(width)

    def _banned_row(self, width: int) -> np.ndarray:
        banned = np.full(width, self.allow, dtype=bool)
        if self.allow:
            for a in self.keep:
                banned[a[a < width]] = False
        else:
            for a in self.ban:
                banned[a[a < width]] = True
            for a in self.keep:
                banned[a[a < width]] = False
        banned[self.size:] = True
        return banned

    def banning(self, ids: np.ndarray) -> TokenMask:
        """A new mask: this one with ``ids`` (int64, unique, all allowed here) banned too.
        Shares the arrays it does not change."""
        keep = tuple(a if not np.isin(a, ids, assume_unique=True).any() else np.setdiff1d(a, ids, assume_unique=True)
                     for a in self.keep)
        ban = self.ban if self.allow else self.ban + (ids,)
        out = TokenMask(self.allow, None, self.size, self.n_allowed - len(ids), self.eos, self.dead_end,
                        keep=keep, ban=ban)
        return out

    def allows(self, token_id: int) -> bool:
        """Whether ``token_id`` is allowed (for tests and tools; not used in a step)."""
        if self._set is None:
            self._set = frozenset(int(i) for i in self.ids)
        return (token_id in self._set) == self.allow if 0 <= token_id < self.size else False

    def packed(self) -> np.ndarray:
        """The mask as packed ``int32`` words (:mod:`.bitmask`: bit ``t % 32`` of word
        ``t // 32`` set when token ``t`` is allowed; ``n_words(size)`` words), made once."""
        if self._packed is None:
            self._packed = pack(self._dense if self._dense is not None else self._banned_row(self.size))
        return self._packed

    def apply_(self, row) -> None:
        """Set the scores of banned ids of one 1-D score row (a torch tensor) to ``-inf``.

        The row may be wider than the mask (a model padding its vocabulary): ids past
        ``size`` are banned too.  Every banned score becomes ``-inf`` whatever it was
        (``+inf`` and NaN included).  Applies :meth:`packed` (:func:`.bitmask.apply_mask_`:
        one compiled pass over a CPU float32 row, else one ``masked_fill_``)."""
        from .bitmask import apply_mask_

        apply_mask_(row, self)


def _layer_ids_c(trie: VocabTrie, root: int, iv: np.ndarray, banned: bool) -> tuple[tuple[np.ndarray, ...], int]:
    """:meth:`MaskEngine._side`'s arrays for layer ``root`` from its accepted rank intervals
    ``iv`` (``(n, 2)`` int64), made by ``_walk.c``'s ``side_runs`` and ``gather`` (no numpy
    temporaries), and how many ids were copied; the same as :func:`_layer_ids_numpy`."""
    perm = trie.perm
    longs, shorts, n_short = _c_side_runs(iv, *trie.spans[root], banned, SHARE_MIN)
    got = tuple(perm[x:y] for x, y in longs)
    if n_short:
        rest = np.empty(n_short, dtype=np.int64)
        _c_gather(perm, shorts, rest)
        got += (rest,)
    return got, n_short


def _layer_ids_numpy(trie: VocabTrie, root: int, iv: np.ndarray, banned: bool) -> tuple[tuple[np.ndarray, ...], int]:
    """:func:`_layer_ids_c` with numpy (the pure-Python walk's engines)."""
    a, z = iv[:, 0], iv[:, 1]
    if banned:
        lo, hi = trie.spans[root]
        ca = np.concatenate((np.full(1, lo, dtype=np.int64), z))
        cz = np.concatenate((a, np.full(1, hi, dtype=np.int64)))
        gaps = cz > ca
        a, z = ca[gaps], cz[gaps]
    perm = trie.perm
    long = (z - a) >= SHARE_MIN
    views = [perm[int(x):int(y)] for x, y in zip(a[long], z[long])]
    if views:
        a, z = a[~long], z[~long]
    rest = perm[_expand(a, z)] if len(a) else None
    if rest is None or not len(rest):
        return tuple(views), 0
    return tuple(views) + (rest,), len(rest)


def _rank_total(iv: np.ndarray) -> int:
    """The ranks an ``(n, 2)`` int64 array of ``[first, end)`` intervals covers."""
    if _c_rank_total is not None and iv.flags.c_contiguous:
        return _c_rank_total(iv)
    return int((iv[:, 1] - iv[:, 0]).sum()) if len(iv) else 0


def _cat(arrays: tuple[np.ndarray, ...] | list[np.ndarray]) -> np.ndarray:
    if not arrays:
        return np.zeros(0, dtype=np.int64)
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _merge_small(arrays: list[np.ndarray], arena: IdArena | None = None) -> tuple[tuple[np.ndarray, ...], int]:
    """``arrays`` without empty ones, those under :data:`SHARE_MIN` ids copied into one (in
    ``arena`` when it has room); also the number of ids newly stored."""
    small = [a for a in arrays if 0 < len(a) < SHARE_MIN]
    out = [a for a in arrays if len(a) >= SHARE_MIN]
    fresh = 0
    if len(small) == 1:
        out.append(small[0])
    elif small:
        merged = arena.take(small) if arena is not None else None
        if merged is None:
            merged = np.concatenate(small)
        fresh = len(merged)
        out.append(merged)
    return tuple(out), fresh


ARENA_MIN_VOCAB = DENSE_BUILD_MAX + 1  # vocabularies from this size give their engine an IdArena
# slots of the compiled walk's tables when it is made: 16 per token between these bounds
# (_walk.c: each of its seven tables gets this many or half as many; 16 bytes a slot, written
# then): ~5 MB at 4,096 tokens, ~20 MB from 16,384
WALK_PRESIZE_LARGE = 1 << 18
WALK_PRESIZE_SMALL = 1 << 11


class IdArena:
    """Pre-faulted storage for the masks' own (merged) id arrays at a large vocabulary.

    ``IdArena(n)`` holds one int64 array of ``n`` ids whose memory is written once when the
    arena is made, so that its pages are mapped then and not inside a decoding step;
    :meth:`take` copies arrays into the next free ids and returns that slice (a view),
    :meth:`reset` makes the whole arena free again.  Why: the masks' merged arrays are most
    of the memory a new mask allocates at a 152k vocabulary (6.6M of 8.7M ids over
    guard_eval's replay), and on this project's development VM mapping fresh memory costs
    about 2.7 ms per MB (measured: 32 MB written anew in 86 ms) - the kernel zeroing pages
    was ~15% of the replay's mask time, most of it under ``np.concatenate``.

    Every merged array of the engine's masks is dropped at once (:meth:`MaskEngine._evict_masks`,
    :meth:`MaskEngine._reset`); the engine then switches to a second arena (see
    :meth:`MaskEngine._switch_arena`), because a caller usually still holds a mask of the
    current one.  :meth:`reset` frees an arena's ids only when no view of it is alive."""

    __slots__ = ("buf", "pos", "_refs")

    def __init__(self, n: int, *, prefault: bool = True) -> None:
        self.buf = np.empty(max(0, n), dtype=np.int64)
        if prefault:
            self.buf.fill(0)
        self.pos = 0
        # the buffer's reference count with no view alive, read the way reset reads it (what
        # getrefcount's own argument adds differs between Python versions)
        self._refs = sys.getrefcount(self.buf)

    def take(self, arrays: list[np.ndarray]) -> np.ndarray | None:
        """The concatenation of ``arrays`` stored in the arena (a view), or ``None`` when
        it has no room for it."""
        n = sum(len(a) for a in arrays)
        end = self.pos + n
        if end > len(self.buf):
            return None
        out = self.buf[self.pos:end]
        np.concatenate(arrays, out=out)
        self.pos = end
        return out

    def reset(self) -> bool:
        """Free every id for reuse when no view of the arena is alive (True), else leave it
        as it is (False)."""
        if sys.getrefcount(self.buf) > self._refs:
            return False
        self.pos = 0
        return True


class _StateTables:
    """The mask walk's automaton states and the tables keyed by their ids, with what computes
    a missing entry (see :class:`MaskEngine`; the compiled walk calls these methods).

    ``states[sid]`` is the interned state ``sid``, ``ids`` the reverse, ``free[sid]`` its
    :meth:`~.automaton.Automaton.free_kind`; ``trans`` maps ``(sid << 8) | byte class`` to the
    next state's id (-1: rejected), ``gproj`` ``(sid << 14) | group key`` and ``trunc``
    ``(sid << 12) | projection key`` to the projected state's id, ``cmaps`` a state id to its
    byte classes, ``bad`` to whether it rejects every non-code byte.  With ``store=False``
    (an engine whose walk is compiled: the walker keeps those in tables of its own) ``trans``,
    ``trunc`` and ``gproj`` stay empty.  Both walks skip the projections a state's
    projection class says are the state itself, and take the transitions of a state right
    after ``.``, ``..``, ``:`` or ``-`` from its delegate (:meth:`deleg_miss`,
    :meth:`trans_of`).  It holds no reference to its engine."""

    __slots__ = ("automaton", "stats", "store", "ids", "states", "free", "pclass", "trans", "trunc", "gproj", "cmaps",
                 "bad", "bad_cls", "deleg")

    def __init__(self, automaton: Automaton, stats: dict[str, int], store: bool = True) -> None:
        self.automaton = automaton
        self.stats = stats
        #: whether the *_miss methods store transitions and projections in the dicts below
        #: (the Python walk reads them; the compiled walk keeps its own tables)
        self.store = store
        self.ids: dict[tuple, int] = {}
        self.states: list[tuple] = []
        self.free: list[int] = []
        self.pclass: list[int] = []  # per state id: Automaton.projection_class
        self.trans: dict[int, int] = {}
        self.trunc: dict[int, int] = {}
        self.gproj: dict[int, int] = {}
        self.cmaps: dict[int, bytes | None] = {}
        self.bad: dict[int, int] = {}
        self.bad_cls: dict[int, tuple[tuple[int, ...], bool]] = {}
        self.deleg: dict[int, int] = {}  # state id -> deleg_miss (the Python walk's)

    def intern(self, state: tuple) -> int:
        """The id of ``state`` (a new one for a state not seen before).  One dictionary
        operation either way: CPython does not cache a tuple's hash, and hashing a state
        (its stack's frames nested inside) is most of what a look-up costs."""
        n = len(self.states)
        sid = self.ids.setdefault(state, n)
        if sid == n:
            self.states.append(state)
            self.free.append(self.automaton.free_kind(state))
            self.pclass.append(self.automaton.projection_class(state))
        return sid

    def gproj_miss(self, sid: int, gk: int) -> int:
        """State ``sid`` projected for the child group with key ``gk`` (stored)."""
        state = self.states[sid]
        got = self.automaton.project(state, (gk >> 7) & 63, gk & 31, (gk >> 5) & 3)
        gsid = sid if got is state else self.intern(got)  # (nothing to drop: no hashing)
        if self.store:
            self.gproj[(sid << 14) | gk] = gsid
        return gsid

    def trans_miss(self, sid: int, cls: int) -> int:
        """The state after byte (class representative) ``cls`` from ``sid``, -1 when
        rejected (stored)."""
        self.stats["steps"] += 1
        ns = self.automaton.step(self.states[sid], cls)
        nsid = -1 if ns is None else self.intern(ns)
        if self.store:
            self.trans[(sid << 8) | cls] = nsid
        return nsid

    def trans_of(self, sid: int, cls: int) -> int:
        """The Python walk's transition on a miss of ``trans``: from the delegate when the
        state has one and ``cls`` does not extend its pending token (as ``trans_of`` in
        ``_walk.c``), else :meth:`trans_miss`; stored either way."""
        if self.pclass[sid] & PC_DELEG:
            dv = self.deleg.get(sid)
            if dv is None:
                dv = self.deleg[sid] = self.deleg_miss(sid)
            special = cls != 0 and cls in (dv & 255, (dv >> 8) & 255, (dv >> 16) & 255)
            if dv >= 0 and not special:
                dsid = dv >> 24
                dmap = self.cmap(dsid)
                dcls = dmap[cls] if dmap is not None else cls
                nsid = self.trans.get((dsid << 8) | dcls)
                if nsid is None:
                    nsid = self.trans_of(dsid, dcls)
                if self.store:
                    self.trans[(sid << 8) | cls] = nsid
                return nsid
        return self.trans_miss(sid, cls)

    def deleg_miss(self, sid: int) -> int:
        """State ``sid``'s :meth:`~.automaton.Automaton.delegate`, packed for both walks: -1
        when it has none, else the delegate's id shifted left by 24 bits with the special
        bytes (at most three, none of them 0) in the low 24.  A walk takes a transition of
        ``sid`` on a byte class whose representative is not special from the delegate (on
        the delegate's own class of that byte): exact, because the representative leads
        where the class's bytes lead, and the delegate leads there too.  ``ValueError`` for
        a delegate with more than three special bytes (the packing's limit)."""
        got = self.automaton.delegate(self.states[sid])
        if got is None:
            return -1
        d, special = got
        if len(special) > 3 or 0 in special:
            raise ValueError(f"a delegate's special bytes must be at most three non-zero bytes, got {special!r}")
        packed = 0
        for i, b in enumerate(special):
            packed |= b << (8 * i)
        return (self.intern(d) << 24) | packed

    def trunc_miss(self, nsid: int, pk: int) -> int:
        """State ``nsid`` projected for a child with projection key ``pk`` (stored)."""
        state = self.states[nsid]
        got = self.automaton.project(state, pk >> 5, pk & 31)
        csid = nsid if got is state else self.intern(got)
        if self.store:
            self.trunc[(nsid << 12) | pk] = csid
        return csid

    def cmap(self, sid: int) -> bytes | None:
        """The byte classes of state ``sid`` (:meth:`~.automaton.Automaton.classes`: 256
        bytes, or ``None``; stored)."""
        cmap = self.cmaps.get(sid, 0)
        if cmap == 0:
            cmap = self.cmaps[sid] = self.automaton.classes(self.states[sid])
        return cmap

    def bad_rejected(self, sid: int) -> int:
        """1 when state ``sid`` rejects every byte of :data:`_BAD` (they are one class of its
        byte classes and that class is rejected), else 0; cached."""
        got = self.bad.get(sid)
        if got is None:
            cmap = self.cmap(sid)
            got = 0
            if cmap is not None and self._bad_one_class(cmap):
                rep = cmap[0x80]  # (the walk's own transition, as bad_of in _walk.c)
                nsid = self.trans.get((sid << 8) | rep)
                if nsid is None:
                    nsid = self.trans_of(sid, rep)
                got = 1 if nsid < 0 else 0
            self.bad[sid] = got
        return got

    def _bad_one_class(self, cmap: bytes) -> bool:
        """Are the bytes of :data:`_BAD` one class of ``cmap``?  Cached per class map (the
        automaton shares one map object between many states): by ``id``, the entry holding
        the map itself so that the ``id`` cannot be reused while it is cached."""
        got = self.bad_cls.get(id(cmap))
        if got is None or got[0] is not cmap:
            rep = cmap[0x80]
            got = self.bad_cls[id(cmap)] = (cmap, all(cmap[b] == rep for b in _BAD))
        return got[1]


class MaskEngine:
    """Computes and caches :class:`TokenMask` objects for one automaton and token table.

    Thread-safe (one lock around the walk and the caches).  Memory is bounded twice over:
    past ``max_memo`` walk-memo entries every cache is cleared; past ``max_mask_ids`` stored
    ids (the layers' id arrays and the masks' own small arrays) the oldest layer arrays are
    dropped (down to half the budget) with every mask and every index that points at masks,
    and the walk's memo stays, so a dropped mask is rebuilt from it cheaply.  From
    :data:`ARENA_MIN_VOCAB` ids on, the masks' merged id arrays live in two pre-faulted
    :class:`IdArena` s of ``max_mask_ids // 2`` ids each (48 MB each by default; the second
    made the first time the budget runs out), and the compiled walk's tables are sized when
    it is made (:data:`WALK_PRESIZE_LARGE`: ~20 MB), so that a decoding step maps little
    fresh memory.
    """

    def __init__(self, automaton: Automaton, table: TokenTable, *, max_memo: int = 600_000,
                 max_mask_ids: int = 12_000_000, compiled: bool = True, compiled_steps: bool = True) -> None:
        self.automaton = automaton
        #: with the compiled walk: it steps the automaton's most frequent states itself
        #: (``cstep`` in ``_walk.c``, Automaton.compiled_code_steps; the same states result)
        self.compiled_steps = compiled_steps
        self.table = table
        self.trie = vocab_trie(table)
        self.max_memo = max_memo
        self.max_mask_ids = max_mask_ids
        self._lock = threading.RLock()
        eos = sorted(i for i in table.eos_ids if 0 <= i < table.size)
        self._eos = np.array(eos, dtype=np.int64)
        tail = self.trie.perm[self.trie.n_real:]
        self._nobyte_all = tail
        self._nobyte_no_eos = tail[~np.isin(tail, self._eos)] if len(eos) else tail
        self.stats = {"walks": 0, "memo_hits": 0, "steps": 0, "masks": 0, "mask_hits": 0, "layer_hits": 0}
        self._gspan = self.trie.most_groups() + 1
        #: the walk runs compiled (``_walk.c``) unless ``compiled=False``, the module is not
        #: built, or :data:`PURE_PYTHON_ENV` is set; both walks give the same results
        self.compiled = _CWalker is not None and compiled and not os.environ.get(PURE_PYTHON_ENV)
        #: where the masks' merged id arrays go at a large vocabulary (half the id budget,
        #: pre-faulted now: 48 MB by default; see IdArena), and the arena used before the
        #: last time every mask was dropped (made then: see _switch_arena)
        self._arena = IdArena(max_mask_ids // 2) if table.size >= ARENA_MIN_VOCAB else None
        self._spare_arena: IdArena | None = None
        self._reset()

    def _reset(self) -> None:
        # the state tables and what computes their entries live in one object that holds no
        # reference to the engine, so the compiled walk can call its bound methods without a
        # reference cycle (a weak proxy of the engine instead cost 3-7% of the 152k replay)
        self._tables = _StateTables(self.automaton, self.stats, store=not self.compiled)
        self._memo: dict[int, tuple] = {}
        self._gmemo: dict[int, tuple] = {}
        self._masks: dict[tuple[int, bool], TokenMask] = {}
        self._lsids: dict[int, tuple[int, ...]] = {}
        self._combos: dict[tuple[tuple[int, ...], bool], TokenMask] = {}
        self._larrays: dict[int, np.ndarray] = {}
        # per layer and state: [n allowed, allowed ids, banned ids within the layer, ids
        # copied] (built on demand; see _piece and _build)
        self._pieces: dict[int, list] = {}
        self._merged_ids = 0  # ids held by the masks' own (merged) arrays
        self._by_state: dict[tuple, TokenMask] = {}  # by full state: no projection on a hit
        self._mask_ids = 0
        self._switch_arena()
        self._cwalk = self._new_cwalker() if self.compiled else None

    def _new_cwalker(self):
        """The compiled walk over this engine's current tables (see ``_walk.c``).  Its
        callbacks are methods of the state tables, not of the engine: an engine's bound
        methods would make a reference cycle, and a dropped engine's tables (hundreds of MB
        at a large vocabulary) would then wait for a full garbage collection."""
        t = self._tables
        nodes, groups, kids = self.trie.records
        presize = min(WALK_PRESIZE_LARGE, max(WALK_PRESIZE_SMALL, 16 * self.table.size))
        steps = self.automaton.compiled_code_steps() if self.compiled_steps else None
        if steps is not None:
            steps.update(states=t.states, ids=t.ids)
        return _CWalker(
            free=t.free, pclass=t.pclass, trans_miss=t.trans_miss, deleg_miss=t.deleg_miss, trunc_miss=t.trunc_miss,
            gproj_miss=t.gproj_miss, cmap_miss=t.cmap, bad_bytes=_BAD_BYTES, nodes=nodes, groups=groups, kids=kids,
            span=self._gspan, presize=presize, auto=steps)

    def memo_entries(self) -> int:
        """Results the walk has memoised (per node and per child group) plus the layers'
        interval arrays: what ``max_memo`` bounds."""
        cw = self._cwalk
        walk = cw.entries() if cw is not None else len(self._memo) + len(self._gmemo)
        return walk + len(self._larrays)

    def _evict_masks(self) -> None:
        """Drop the oldest layer id arrays until at most half of ``max_mask_ids`` ids are
        stored, and every mask (masks are rebuilt from the layer arrays that stay); the
        walk's memo and transition tables stay.  Measured at a 152k vocabulary (guard_eval's
        replay, 12,650 steps, the budget running out twice, when masks were single arrays):
        clearing every cache instead put the p99 at 4.1 ms; dropping masks only, 3.0 ms;
        with no budget at all, 2.4 ms."""
        pieces = self._pieces
        for key in list(pieces):  # oldest first
            if self._mask_ids <= self.max_mask_ids // 2:
                break
            info = pieces.pop(key)
            self._mask_ids -= info[3]
        self._combos.clear()
        self._masks.clear()
        self._by_state.clear()
        self._mask_ids -= self._merged_ids
        self._merged_ids = 0
        self._switch_arena()

    def _switch_arena(self) -> None:
        """After every mask was dropped: store new masks' merged ids in the spare arena (the
        one used before the previous drop, freed now) and keep the current one as the spare,
        since the caller usually still holds a mask of it (the mask just computed, the
        previous step's).  The spare is made the first time (pre-faulted: a one-off ~0.1 s
        at the default budget on the development VM) and again whenever a mask of it is
        still held then (two drops later).  An arena at most half used stays in use (its
        free half is room enough): at 248k ids the walk memo's budget, not the ids', drops
        every mask, after a few hundred masks that filled a tenth of an arena, and a spare
        made then was 48 MB more resident memory for nothing."""
        cur = self._arena
        if cur is None or cur.pos <= len(cur.buf) // 2:
            return
        spare = self._spare_arena
        if spare is None or not spare.reset():
            spare = IdArena(len(cur.buf))
        self._arena, self._spare_arena = spare, cur

    # -- public ----------------------------------------------------------------------------
    def mask_after(self, state: tuple) -> TokenMask:
        """The mask for the next token after the full automaton state ``state`` (EOS allowed
        where :meth:`~.automaton.Automaton.eos_ok`); a state seen before is one dictionary
        look-up, without projecting it."""
        got = self._by_state.get(state)
        if got is not None:
            self.stats["mask_hits"] += 1
            return got
        got = self.mask(state, self.automaton.eos_ok(state))
        with self._lock:
            if len(self._by_state) > 100_000:
                self._by_state.clear()
            self._by_state[state] = got
        return got

    def cached_after(self, state: tuple) -> TokenMask | None:
        """:meth:`mask_after` when the mask of the full state ``state`` is at hand (a state
        seen before), else ``None``: computes nothing."""
        got = self._by_state.get(state)
        if got is not None:
            self.stats["mask_hits"] += 1
        return got

    def mask(self, state: tuple, eos: bool) -> TokenMask:
        """The mask for the next token after boundary state ``state`` (``eos``: may the text
        stop here, from :meth:`~.automaton.Automaton.eos_ok` of the full state)."""
        trie = self.trie
        key_state = self.automaton.project(state, trie.maxpops_all, trie.ends_all)
        with self._lock:
            sid = self._tables.intern(key_state)
            key = (sid, eos)
            m = self._masks.get(key)
            if m is not None:
                self.stats["mask_hits"] += 1
                return m
            if self.memo_entries() > self.max_memo:
                self._reset()
                sid = self._tables.intern(key_state)
                key = (sid, eos)
            layers = self._layer_sids(sid)
            ck = (layers, eos)
            m = self._combos.get(ck)
            if m is None:
                self.stats["masks"] += 1
                limit = sys.getrecursionlimit()
                if limit < 4000:
                    sys.setrecursionlimit(4000)
                size = self.table.size
                m = self._build_dense(layers, eos) if size <= DENSE_BUILD_MAX else self._build(layers, eos)
                # the packed words a step applies (TokenMask.apply_, bitmask.PackedMasks), made
                # here so that no step builds them and their bytes count in the budget (an id
                # of the budget is 8 bytes: size / 64 ids)
                m.packed()
                self._merged_ids += size // 64 + 1
                self._mask_ids += size // 64 + 1
                self._combos[ck] = m
                if self._mask_ids > self.max_mask_ids:
                    self._evict_masks()
            else:
                self.stats["layer_hits"] += 1
            self._masks[key] = m
            return m

    # -- internals ---------------------------------------------------------------------------
    def _layer_sids(self, sid: int) -> tuple[int, ...]:
        """Per token layer, the state ``sid`` projected to what that layer's tokens can see
        (``-1`` for an empty layer): a layer whose tokens close no frame by themselves keeps
        no frame (one when the state is a complete ``end``/``until`` that the token's first
        byte may finish), a layer without :data:`_OBS` bytes drops the values and flags."""
        got = self._lsids.get(sid)
        if got is None:
            trie = self.trie
            au = self.automaton
            intern = self._tables.intern
            state = self._tables.states[sid]
            pend = au.pending_pops(state)
            ended: tuple | None = state
            if au.in_word(state):
                ended = au.word_end(state)
            out = []
            seen: dict[tuple, int] = {}  # layers often project alike: once per argument set
            for root in trie.roots:
                if not trie.layer_sizes[root]:
                    out.append(-1)
                    continue
                st, keep = state, trie.inner[root]
                if root >= _L_OTHER_FIRST and ended is not state:
                    if ended is None:  # the word cannot end here: no token of the layer fits
                        out.append(-1)
                        continue
                    st = ended
                elif trie.first[root]:
                    keep += pend
                args = (st is state, keep, trie.layer_ends[root], 0 if root & _L_OBS else 15)
                lsid = seen.get(args)
                if lsid is None:
                    lsid = seen[args] = intern(au.project(st, keep, args[2], args[3]))
                out.append(lsid)
            got = self._lsids[sid] = tuple(out)
        return got

    def _layer_array(self, root: int, sid: int) -> np.ndarray:
        """The accepted rank intervals of layer ``root`` from (projected) state ``sid`` as an
        ``(n, 2)`` int64 array, cached with the walk's memo (a layer's result recurs far
        more often than a whole mask, and a mask dropped from the budget is rebuilt from
        these)."""
        key = (root << 32) | sid
        got = self._larrays.get(key)
        if got is None:
            cw = self._cwalk
            if cw is not None:
                got = np.frombuffer(cw.walk(root, sid), dtype=np.int64).reshape(-1, 2)
                walks, hits = cw.counts()
                self.stats["walks"] += walks
                self.stats["memo_hits"] += hits
                self.stats["steps"] += cw.csteps()
            else:
                iv = self._walk(root, sid)
                got = np.fromiter(chain.from_iterable(iv), dtype=np.int64, count=2 * len(iv)).reshape(-1, 2)
            self._larrays[key] = got
        return got

    def _walk(self, node: int, sid: int) -> tuple[tuple[int, int], ...]:
        """Accepted rank intervals below ``node`` from (projected) state ``sid``.

        The children of a node are grouped by what of the state they can depend on (how many
        frames their tokens can close, which bytes that end a string they contain, whether the
        value and white-space flags matter for their first byte); each group is walked from
        the state projected for it and memoised on that projection, so a state that differs
        from a known one only in what a group cannot see reuses the group's result."""
        key = (node << 32) | sid
        memo = self._memo
        got = memo.get(key)
        if got is not None:
            self.stats["memo_hits"] += 1
            return got
        self.stats["walks"] += 1
        trie = self.trie
        gmemo = self._gmemo
        parts: list[tuple[tuple[int, int], ...]] = []
        n_own = trie.own[node]
        if n_own:  # (a root, one per layer, owns no token: every token has bytes)
            a = trie.lo[node]
            parts.append(((a, a + n_own),))
        t = self._tables
        gproj = t.gproj
        span = self._gspan
        pc = t.pclass[sid]
        bad = -1
        for gi, (gk, kids) in enumerate(trie.groups[node]):
            if gk & _G_BAD:
                if bad < 0:
                    bad = t.bad_rejected(sid)
                if bad:
                    continue
            # the group's projection key without what cannot matter for this state
            need, ends, drop = projection_args(pc, (gk >> 7) & 63, gk & 31, (gk >> 5) & 3)
            if projection_is_identity(pc, need, ends, drop):
                gsid = sid
            else:
                pk = (need << 7) | (drop << 5) | ends
                gsid = gproj.get((sid << 14) | pk)
                if gsid is None:
                    gsid = t.gproj_miss(sid, pk)
            mk = (gsid * trie.nodes + node) * span + gi
            r = gmemo.get(mk)
            if r is None:
                r = self._group(kids, gsid)
                gmemo[mk] = r
            if r:
                parts.append(r)
        if not parts:
            res: tuple[tuple[int, int], ...] = ()
        elif len(parts) == 1:
            res = parts[0]
        else:
            # the groups' intervals interleave: sort them (adjacent ones stay apart, which
            # no reader minds: intervals are only required sorted and disjoint)
            out = list(chain.from_iterable(parts))
            out.sort()
            res = tuple(out)
        memo[key] = res
        return res

    def _group(self, kids: tuple[tuple[int, int], ...], sid: int) -> tuple[tuple[int, int], ...]:
        trie = self.trie
        children, lo, own, proj, hi, plain = trie.children, trie.lo, trie.own, trie.proj, trie.hi, trie.plain
        t = self._tables
        trans, trunc, free, pclass = t.trans, t.trunc, t.free, t.pclass
        cmap = t.cmap(sid)
        out: list[tuple[int, int]] = []
        for byte, child in kids:
            cls = cmap[byte] if cmap is not None else byte
            nsid = trans.get((sid << 8) | cls)
            if nsid is None:
                nsid = t.trans_of(sid, cls)
            if nsid < 0:
                continue
            if children[child]:
                fast = free[nsid]
                if fast and plain[child] & fast:
                    # a free identifier / name string that every byte below just continues
                    a = lo[child]
                    if out and out[-1][1] == a:
                        out[-1] = (out[-1][0], hi[child])
                    else:
                        out.append((a, hi[child]))
                    continue
                pk = proj[child]
                npc = pclass[nsid]
                keep, ends, _drop = projection_args(npc, pk >> 5, pk & 31)
                if projection_is_identity(npc, keep, ends, 0):
                    csid = nsid
                else:
                    pk = (keep << 5) | ends
                    csid = trunc.get((nsid << 12) | pk)
                    if csid is None:
                        csid = t.trunc_miss(nsid, pk)
                sub = self._walk(child, csid)
                if sub:
                    # sub is sorted and disjoint: join its first interval to ours where they touch
                    a, z = sub[0]
                    if out and out[-1][1] == a:
                        out[-1] = (out[-1][0], z)
                        out.extend(sub[1:])
                    else:
                        out.extend(sub)
                continue
            a = lo[child]
            if out and out[-1][1] == a:
                out[-1] = (out[-1][0], a + own[child])
            else:
                out.append((a, a + own[child]))
        return tuple(out)

    def _piece(self, root: int, lsid: int) -> list:
        """``[n, allowed, banned, copied]`` for layer ``root`` from (projected) state ``lsid``:
        how many of its tokens are accepted and, once asked for (:meth:`_side`), their ids and
        the ids of the layer's other tokens (tuples of arrays), and how many ids those hold
        in arrays of their own (not views of the rank order)."""
        key = (root << 32) | lsid
        got = self._pieces.get(key)
        if got is None:
            iv = self._layer_array(root, lsid)
            got = self._pieces[key] = [_rank_total(iv), None, None, 0]
        return got

    def _side(self, root: int, lsid: int, info: list, banned: bool) -> tuple[np.ndarray, ...]:
        """The allowed (or, with ``banned``, the banned) ids of a layer's ``info`` as a few
        arrays (built once; what is copied counts against the id budget).  A run of at
        least :data:`SHARE_MIN` consecutive ranks is a slice of the rank order (a view: no
        copy, nothing to fault in); the other ranks are gathered into one array.  (A layer
        allowed whole, e.g. every identifier token inside a free name, made one fresh array
        of 75k ids at a 152k vocabulary: 1.8 ms, mostly first-touch page faults.)"""
        got = info[2 if banned else 1]
        if got is None:
            layer_ids = _layer_ids_c if self.compiled else _layer_ids_numpy
            got, copied = layer_ids(self.trie, root, self._layer_array(root, lsid), banned)
            info[2 if banned else 1] = got
            info[3] += copied
            self._mask_ids += copied
        return got

    def _build_dense(self, layers: tuple[int, ...], eos: bool) -> TokenMask:
        """:meth:`_build` for a vocabulary of at most :data:`DENSE_BUILD_MAX` ids: the mask made
        straight from the layers' accepted rank intervals as a boolean row (``_walk.c``'s
        ``allow_row``, numpy without the compiled module), packed, and its id array (the allowed or the banned ids, whichever are fewer, as
        :meth:`_build` keeps them) taken from that row.  The same mask as :meth:`_build`
        gives (tested), without the per-layer id arrays that let large vocabularies share
        memory between masks: at 4,096 ids those cost a new mask more than its walk's
        Python steps (measured in the decoding loop, guard_breakdown's sampling: 63 us of
        assembly a mask).  The ids count against the id budget here, the packed words in
        :meth:`mask`."""
        trie = self.trie
        size = self.table.size
        ivs = [self._layer_array(root, lsid) for root, lsid in zip(trie.roots, layers)
               if lsid >= 0 and trie.layer_sizes[root]]
        row = np.empty(size, dtype=bool)
        if self.compiled:
            allowed, n_allowed = _c_allow_row(trie.perm, ivs, row, self._eos, eos)
        else:
            row.fill(True)
            allowed = 0
            if ivs:
                iv = np.concatenate(ivs)
                ranks = _expand(iv[:, 0], iv[:, 1])
                row[trie.perm[ranks]] = False
                allowed = len(ranks)
            if eos or not allowed:
                row[self._eos] = False
            n_allowed = size - int(np.count_nonzero(row))
        dead = allowed == 0 and not eos  # (only EOS is left: see TokenMask.dead_end)
        eos = eos or dead
        allow = n_allowed <= size // 2
        ids = np.flatnonzero(~row if allow else row).astype(np.int64, copy=False)
        m = TokenMask(allow, ids, size, n_allowed, eos, dead)
        m._packed = pack(row)
        self._merged_ids += len(ids)
        self._mask_ids += len(ids)
        return m

    def _build(self, layers: tuple[int, ...], eos: bool) -> TokenMask:
        """The :class:`TokenMask` of the layers' states ``layers`` (one per root, ``-1``: none
        of the layer's tokens fits).

        Per layer the accepted tokens are counted from the walk's rank intervals; the mask is
        kept as allowed ids when at most half the vocabulary is allowed, else as banned ids,
        where a large layer that allows at most half its tokens is banned whole (its ids are
        a slice of the rank order) and its allowed ids restored.  The id arrays of a layer
        state are built once and shared by every mask that uses them; only arrays under
        :data:`SHARE_MIN` ids are copied into the mask's own.  (At a 152k vocabulary, one
        fresh array per mask allocated 348 MB over guard_eval's replay, and the first touch
        of that memory - about 17 us a page on this VM - made most of the slowest steps.)"""
        trie = self.trie
        size = self.table.size
        used = []
        allowed = 0
        for root, lsid in zip(trie.roots, layers):
            n_layer = trie.layer_sizes[root]
            if not n_layer:
                continue
            info = self._piece(root, lsid) if lsid >= 0 else None
            n = info[0] if info is not None else 0
            allowed += n
            used.append((root, lsid, info, n, n_layer))
        dead = False
        if allowed == 0 and not eos:
            eos, dead = True, True
        n_eos = len(self._eos) if eos else 0
        if allowed + n_eos <= size // 2:
            parts = [arr for root, lsid, info, n, _nl in used if n for arr in self._side(root, lsid, info, False)]
            if n_eos:
                parts.append(self._eos)
            keep, fresh = _merge_small(parts, self._arena)
            self._merged_ids += fresh
            self._mask_ids += fresh
            return TokenMask(True, None, size, allowed + n_eos, eos, dead, keep=keep)
        bans: list[np.ndarray] = []
        keeps: list[np.ndarray] = []
        n_banned = 0
        perm = trie.perm
        for root, lsid, info, n, n_layer in used:
            if n == n_layer:
                continue
            n_banned += n_layer - n
            if n == 0:
                bans.append(perm[slice(*trie.spans[root])])
            elif 2 * n <= n_layer and n_layer >= SHARE_MIN:
                bans.append(perm[slice(*trie.spans[root])])
                keeps.extend(self._side(root, lsid, info, False))
            else:
                bans.extend(self._side(root, lsid, info, True))
        tail = self._nobyte_no_eos if eos else self._nobyte_all
        bans.append(tail)
        n_banned += len(tail)
        ban, fresh = _merge_small(bans, self._arena)
        keep, fresh2 = _merge_small(keeps, self._arena)
        self._merged_ids += fresh + fresh2
        self._mask_ids += fresh + fresh2
        return TokenMask(False, None, size, size - n_banned, eos, dead, keep=keep, ban=ban)
