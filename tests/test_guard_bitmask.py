"""Packed token masks (luaguard.guard.bitmask): a batch step's masks, gathered from the
guard's per-device store and applied in one operation, ban exactly what the guard's
boolean mask rows ban - at the shipped model's vocabulary and at a real 151,936-wide one,
through the compiled CPU pass and through torch's unpacking (the path of GPU logits),
with the store emptied when full, rows wider than the vocabulary, unguarded rows and the
EOS-only row of a rejected sequence."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from guard_support import SAMPLES
from real_tokenizers import WIDTHS, available, real_tokenizer

import luaguard.guard.bitmask as B
from luaguard.engine import Engine
from luaguard.guard.matcher import project_guard
from luaguard.completion.loading import _load_tokenizer, default_model_path
from luaguard.guard.table_cache import token_table

FILE = "src/server/Services/LeaderstatsService.luau"


def _cursors(guard, tok, n: int) -> list:
    """``n`` cursors met reading the sample file token by token (the real states of a step)."""
    contract = Engine(SAMPLES).guard_contract(SAMPLES / FILE)
    text = (SAMPLES / FILE).read_text(encoding="utf-8")
    cur = guard.start("", scripts=contract.scripts)
    out = []
    for t in tok.encode(text, add_special_tokens=False)[:n]:
        out.append(cur)
        cur = guard.advance(cur, t)
        assert cur is not None
    return out


def _guard(tok, width):
    return project_guard(token_table(tok, width), Engine(SAMPLES).guard_contract(SAMPLES / FILE))


def _check_batch(guard, cursors, width: int, *, dtype=torch.float32, capacity: int | None = None) -> None:
    """One step over the cursors plus an unguarded row and an EOS-only row: every row equals
    its mask's boolean row (ids past the table banned), the unguarded row is untouched."""
    store = B.PackedMasks(guard, "cpu", width, capacity or B.DEFAULT_CAPACITY)
    rows = list(cursors) + [None]  # the last guarded row: rejected, EOS only
    n = len(rows) + 1  # and one unguarded row
    scores = torch.randn(n, width, generator=torch.Generator().manual_seed(1)).to(dtype)
    scores[:, ::97] = float("inf")
    logits = scores.clone()
    order = list(range(1, n))  # row 0 unguarded
    B.apply_packed(logits, [(store, order, store.slots(rows))])
    assert torch.equal(logits[0], scores[0])
    eos = sorted(guard.table.eos_ids)
    got, before = logits.float().numpy(), scores.float().numpy()
    for r, cur in zip(order, rows):
        if cur is None:
            want = np.ones(width, dtype=bool)
            want[eos] = False
        else:
            want = guard.mask(cur).banned_row(width)
        assert np.array_equal(np.isneginf(got[r]), want), r
        assert np.array_equal(got[r][~want], before[r][~want])


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "torch"])
def test_packed_batch_equals_the_boolean_rows(compiled, monkeypatch) -> None:
    if not compiled:
        monkeypatch.setattr(B, "_c_apply_bits", None)
    elif B._c_apply_bits is None:
        pytest.skip("the compiled module is not built")
    tok = _load_tokenizer(default_model_path())
    width = len(tok) + 37  # a model padding its vocabulary
    guard = _guard(tok, width)
    cursors = _cursors(guard, tok, 60)
    _check_batch(guard, cursors, width)
    _check_batch(guard, cursors[::-1], width, capacity=9)  # one step needs more rows: it grows
    assert len({guard.mask_key(c) for c in cursors}) > 9
    _check_batch(guard, cursors[:8], width, dtype=torch.float16)  # (the torch path: not float32)


def test_packed_batch_at_a_real_vocabulary() -> None:
    """Qwen2.5's 151,643-token BPE at its model's 151,936 logits: exact through both paths."""
    why = available("qwen2.5")
    if why:
        pytest.skip(why)
    tok = real_tokenizer("qwen2.5")
    guard = _guard(tok, WIDTHS["qwen2.5"])
    cursors = _cursors(guard, tok, 12)
    _check_batch(guard, cursors, WIDTHS["qwen2.5"])
    old = B._c_apply_bits
    try:
        B._c_apply_bits = None
        _check_batch(guard, cursors[:4], WIDTHS["qwen2.5"])
    finally:
        B._c_apply_bits = old


def test_new_rows_go_through_the_staging_buffer() -> None:
    """A store off the CPU writes new rows through a staging buffer and ``index_copy_`` (the
    CUDA path, pinned there): exercised here with the host view turned off."""
    tok = _load_tokenizer(default_model_path())
    guard = _guard(tok, len(tok))
    store = B.PackedMasks(guard, "cpu", len(tok), 4)
    direct = B.PackedMasks(guard, "cpu", len(tok), 4)
    store._host = None  # as on a device: no host view of the rows
    cursors = _cursors(guard, tok, 30)
    for part in (cursors[:5], cursors[5:12], cursors[12:30]):
        a, b = store.slots(part), direct.slots(part)
        assert torch.equal(store.bits[a], direct.bits[b])
    assert store.stats["cleared"] >= 1 and len(store._pinned) >= 1


def test_apply_packed_refuses_mismatches() -> None:
    tok = _load_tokenizer(default_model_path())
    guard = _guard(tok, len(tok))
    store = B.PackedMasks(guard, "cpu", len(tok))
    with pytest.raises(ValueError, match="wide"):
        B.apply_packed(torch.zeros(1, len(tok) + 1), [(store, [0], [0])])
    with pytest.raises(ValueError, match="length"):
        B.apply_packed(torch.zeros(2, len(tok)), [(store, [0, 1], [0])])
    with pytest.raises(IndexError):
        B.apply_packed(torch.zeros(1, len(tok)), [(store, [3], [0])])
    B.apply_packed(torch.zeros(1, len(tok)), [(store, [], [])])  # nothing to do
