"""Packed token masks: how a decoding step applies the guard's masks to a batch of logits.

A mask is packed as 32-bit words: bit ``t % 32`` of word ``t // 32`` is set when token ``t``
is allowed - the token bitmask layout of vLLM's structured outputs and XGrammar
(``apply_token_bitmask_inplace``): 4,748 words (19 KB) a mask at 151,936 ids, 7,760 (31 KB)
at 248,320.  Ids past the words are banned.

:class:`PackedMasks` keeps the packed masks of one guard at one logits width as rows of one
``int32`` tensor on the logits' device, one row per mask key (:meth:`~.matcher.Guard.mask_key`:
the automaton state and what the bound names change), so a step looks up a row index per
sequence - no mask is built, copied or moved for a state seen before - and
:func:`apply_packed` applies the rows of the whole batch in one operation: on CPU float32
logits one pass of ``_walk.c``'s ``apply_bits`` (words with every bit set are skipped, words
with none set filled whole), elsewhere one gather of the rows on the device, one unpacking of
the bits and one ``masked_fill_``.  New rows reach a CUDA device through a pinned host buffer
(an asynchronous copy, waited for before the buffer is written again); there is no per-step
(rows x vocabulary) matrix on the host.

Masks are exactly the guard's (:meth:`~.matcher.Guard.mask`: :meth:`pack` of
:meth:`~.vocab.TokenMask.banned_row`); tested against the boolean rows.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

try:
    from ._walk import apply_bits as _c_apply_bits
except ImportError:  # pragma: no cover - the compiled module is optional
    _c_apply_bits = None

__all__ = ["PackedMasks", "apply_packed", "n_words", "pack"]

_NEG_INF = float("-inf")
#: rows a store holds before it is emptied (all at once, between steps): 4,096 masks are
#: 78 MB at 151,936 ids, 127 MB at 248,320 (on the CPU, resident as rows are written)
DEFAULT_CAPACITY = 4096


def n_words(width: int) -> int:
    """32-bit words of a packed mask of ``width`` ids."""
    return (width + 31) // 32


def pack(banned: np.ndarray, width: int | None = None) -> np.ndarray:
    """The packed ``int32`` words (:func:`n_words` of ``width``, default the row's length)
    of a boolean row (True: banned); ids of ``width`` past the row are banned."""
    width = len(banned) if width is None else width
    out = np.zeros(n_words(width) * 4, dtype=np.uint8)
    bits = np.packbits(~banned[:width], bitorder="little")
    out[:len(bits)] = bits
    return out.view("<i4")


def _fast_cpu(logits) -> bool:
    import torch

    return (_c_apply_bits is not None and logits.device.type == "cpu" and logits.dtype == torch.float32
            and logits.dim() == 2 and logits.is_contiguous())


class PackedMasks:
    """The packed masks of ``guard`` for logits ``width`` ids wide on ``device`` (see the
    module docstring).  Made by :meth:`~.matcher.Guard.packed`; thread-safe.

    ``bits``: ``(capacity, n_words(width))`` ``int32`` tensor on the device; row 0 is the
    EOS-only mask (a sequence whose token the guard had not allowed may only end).  When a
    step needs more new rows than are free, every row but EOS's is dropped first (the masks
    themselves stay cached in the guard with their packed words: copying one back is cheap),
    and the tensor grows when one step alone needs more rows than it holds.  Rows are read
    only once written, so the tensor is made uninitialised: on the CPU its memory becomes
    resident row by row as new masks are stored (a zeroed one was 122 MB resident at 248,320
    ids from the start; the first write of a row now maps its pages, once per row).
    """

    def __init__(self, guard, device: Any, width: int, capacity: int = DEFAULT_CAPACITY) -> None:
        import torch

        self.guard = guard
        self.device = torch.device(device)
        self.width = int(width)
        self.words = n_words(self.width)
        self.capacity = max(2, int(capacity))
        self._lock = threading.Lock()
        self._cuda = self.device.type == "cuda"
        self.bits = torch.empty((self.capacity, self.words), dtype=torch.int32, device=self.device)
        self._host = self.bits.numpy() if self.device.type == "cpu" else None
        self._slot: dict[Hashable, int] = {}
        self._next = 1
        self._pinned = None  # (CUDA) staging buffer for new rows and its copy's event
        self._event = None
        eos = np.ones(self.width, dtype=bool)
        eos[[i for i in guard.table.eos_ids if 0 <= i < self.width]] = False
        self._write([(0, pack(eos))])
        #: rows packed so far, and how many times the store was emptied
        self.stats = {"packed": 1, "cleared": 0}

    def __len__(self) -> int:
        return len(self._slot)

    def slots(self, cursors: Sequence[Any]) -> list[int]:
        """The row of each cursor's mask (a :class:`~.matcher.Cursor`; ``None``: the EOS-only
        row), packing the masks not stored yet.  Cursors must not be finished."""
        guard = self.guard
        keys = [None if c is None else guard.mask_key(c) for c in cursors]
        with self._lock:
            slot = self._slot
            out = [0 if k is None else slot.get(k, -1) for k in keys]
            missing = {k: c for k, c, s in zip(keys, cursors, out) if s < 0}
            if not missing:
                return out
            if self._next + len(missing) > self.capacity:
                slot.clear()
                self._next = 1
                self.stats["cleared"] += 1
                missing = {k: c for k, c in zip(keys, cursors) if k is not None}
                if 1 + len(missing) > self.capacity:  # one step needs more rows than it holds
                    self._grow(2 * (1 + len(missing)))
            new = []
            for k, c in missing.items():
                s = slot[k] = self._next
                self._next += 1
                new.append((s, guard.mask(c).packed()))
            self.stats["packed"] += len(new)
            self._write(new)
            return [0 if k is None else slot[k] for k in keys]

    def _grow(self, capacity: int) -> None:
        import torch

        bits = torch.empty((capacity, self.words), dtype=torch.int32, device=self.device)
        bits[0] = self.bits[0]  # (the EOS-only row)
        self.bits, self.capacity = bits, capacity
        if self._host is not None:
            self._host = bits.numpy()

    def _write(self, rows: list[tuple[int, np.ndarray]]) -> None:
        if self._host is not None:
            for s, words in rows:
                _fit(self._host[s], words)
            return
        import torch

        k = len(rows)
        if self._pinned is None or len(self._pinned) < k:
            if self._event is not None:
                self._event.synchronize()
            n = max(k, 64)
            self._pinned = torch.empty((n, self.words), dtype=torch.int32, pin_memory=self._cuda)
            self._event = torch.cuda.Event() if self._cuda else None
        elif self._event is not None:
            self._event.synchronize()  # the previous copy out of the buffer is done
        host = self._pinned[:k]
        view = host.numpy()
        for i, (_s, words) in enumerate(rows):
            _fit(view[i], words)
        index = torch.tensor([s for s, _w in rows], dtype=torch.int64).to(self.device, non_blocking=True)
        self.bits.index_copy_(0, index, host.to(self.device, non_blocking=True))
        if self._event is not None:
            self._event.record()


def _fit(out: np.ndarray, words: np.ndarray) -> None:
    """``out`` (one row of a store) = ``words`` cut or padded with banned words."""
    k = min(len(out), len(words))
    out[:k] = words[:k]
    out[k:] = 0


def apply_packed(logits, groups: Sequence[tuple[PackedMasks, Sequence[int], Sequence[int]]]) -> None:
    """Set the banned scores of a batch to ``-inf`` in place: ``logits`` is ``(rows, width)``
    (the stores' width), ``groups`` holds ``(store, row indices, slots)`` (slots from
    :meth:`PackedMasks.slots`); rows not named are left as they are.  Banned means banned
    whatever the score was (``+inf`` and NaN included).  Raises ``IndexError`` for a row or
    slot out of range and ``ValueError`` for a store of another width."""
    groups = [g for g in groups if len(g[1])]
    if not groups:
        return
    n, width = logits.shape
    for store, rows, slots in groups:
        if store.width != width:
            raise ValueError(f"logits are {width} wide, the packed masks {store.width}")
        if len(rows) != len(slots):
            raise ValueError("rows and slots differ in length")
    if _fast_cpu(logits) and all(g[0]._host is not None for g in groups):
        view = logits.detach().numpy()
        for store, rows, slots in groups:
            _c_apply_bits(view, store._host, np.asarray(rows, dtype=np.int64), np.asarray(slots, dtype=np.int64))
        return
    import torch

    dev = logits.device
    words = groups[0][0].words
    picked = []
    all_rows: list[int] = []
    for store, rows, slots in groups:
        index = torch.as_tensor(np.asarray(slots, dtype=np.int64)).to(store.device, non_blocking=True)
        picked.append(store.bits.index_select(0, index).to(dev, non_blocking=True))
        all_rows.extend(rows)
    got = picked[0] if len(picked) == 1 else torch.cat(picked)
    if all_rows == list(range(n)):
        full = got
    else:
        if max(all_rows) >= n or min(all_rows) < 0:
            raise IndexError("apply_packed: a row out of range")
        full = torch.full((n, words), -1, dtype=torch.int32, device=dev)
        full.index_copy_(0, torch.as_tensor(all_rows, dtype=torch.int64).to(dev, non_blocking=True), got)
    _apply_words(logits, full)


def apply_mask_(row, mask) -> None:
    """:meth:`~.vocab.TokenMask.apply_`: one 1-D score row (any width: ids past the mask's
    size banned) with ``mask``'s packed words (made once per mask, and once per device)."""
    width = row.shape[-1]
    words = mask.packed()
    if _fast_cpu(row.unsqueeze(0)):
        _c_apply_bits(row.detach().numpy().reshape(1, width), words.reshape(1, -1), _ZERO, _ZERO)
        return
    got = mask._tensors.get(row.device)
    if got is None:
        import torch

        got = mask._tensors[row.device] = torch.from_numpy(words).to(row.device)
    _apply_words(row.unsqueeze(0), got.unsqueeze(0))


_ZERO = np.zeros(1, dtype=np.int64)
_SHIFTS: dict[Any, Any] = {}


def _apply_words(logits, words) -> None:
    """``logits`` (``(n, width)``) banned where the bits of ``words`` (``(n, W)`` int32 on
    the logits' device) are clear, or past them: one unpacking, one ``masked_fill_``."""
    import torch

    n, width = logits.shape
    shifts = _SHIFTS.get(logits.device)
    if shifts is None:
        shifts = _SHIFTS[logits.device] = torch.arange(32, dtype=torch.int32, device=logits.device)
    allowed = ((words.unsqueeze(-1) >> shifts) & 1).view(n, -1)
    have = allowed.shape[1]
    if have >= width:
        logits.masked_fill_(allowed[:, :width] == 0, _NEG_INF)
    else:
        logits[:, :have].masked_fill_(allowed == 0, _NEG_INF)
        logits[:, have:] = _NEG_INF
