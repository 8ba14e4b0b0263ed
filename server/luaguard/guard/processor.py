"""The Hugging Face adapter: a ``transformers.LogitsProcessor`` that applies the guard.

::

    from luaguard.engine import Engine
    from luaguard.guard.matcher import Guard
    from luaguard.guard.processor import GuardLogitsProcessor

    # what the linter accepts in the file; path: relative to project_root (not to the
    # working directory) or absolute
    contract = Engine(project_root).guard_contract("src/server/Main.server.luau", file_text)
    guard = Guard.for_model(tokenizer, model.config.vocab_size, contract)
    proc = GuardLogitsProcessor(guard, [prompt_text], scripts=contract.scripts)
    out = model.generate(**tokenizer(prompt_text, return_tensors="pt"),
                         logits_processor=LogitsProcessorList([proc]),
                         do_sample=True, num_return_sequences=4, max_new_tokens=48)

It works for batches (one prompt per batch item; rows are matched to items as
``generate`` expands them: ``row // (num_beams * num_return_sequences)``), for beam
search (beams are reordered between steps, so each row's guard state is looked up by the
tokens it generated so far, not by its position) and for greedy and sampling decoding
(``generate`` runs custom processors before its temperature/top-k/top-p warpers, so the
warpers only ever see allowed tokens).  Each step masks the full vocabulary of every row
that has not finished with ``-inf``, the whole batch in one operation
(:func:`~.bitmask.apply_packed` with the guard's packed masks on the scores' device).

The processor is stateful (it remembers the prompt length and the guard states of the
previous step); use a new one per ``generate`` call.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import LogitsProcessor

from ..project.tree import Instance
from .bitmask import apply_packed
from .matcher import Cursor, Guard

__all__ = ["GuardLogitsProcessor"]


class GuardLogitsProcessor(LogitsProcessor):
    """Masks every row of each decoding step (see the module docstring).

    Args:
        guard: the shared :class:`~.matcher.Guard` of the model and project.
        prompts: one item per batch element: the prompt text (primed with
            :meth:`Guard.start`) or an already primed :class:`~.matcher.Cursor`.
        scripts: instances of the file being completed (``script`` resolves to them).

    ``rejected`` counts rows whose tokens the guard had not allowed (a processor placed
    after another one that changed the scores could cause it; the row is then left free
    to end with EOS only).
    """

    def __init__(self, guard: Guard, prompts: Sequence[str | Cursor], *, scripts: Sequence[Instance] = ()) -> None:
        if not prompts:
            raise ValueError("GuardLogitsProcessor needs at least one prompt")
        self.guard = guard
        self._roots = [p if isinstance(p, Cursor) else guard.start(p, scripts=scripts) for p in prompts]
        self._prompt_len: int | None = None
        self._prev: dict[tuple[int, tuple[int, ...]], Cursor | None] = {}
        self.rejected = 0

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        rows = input_ids.shape[0]
        if self._prompt_len is None:
            self._prompt_len = input_ids.shape[1]
        if rows % len(self._roots):
            raise ValueError(f"{rows} rows do not divide into {len(self._roots)} prompts")
        per = rows // len(self._roots)
        generated = input_ids[:, self._prompt_len:].tolist()
        current: dict[tuple[int, tuple[int, ...]], Cursor | None] = {}
        masked: list[int] = []
        cursors: list[Cursor | None] = []
        for r in range(rows):
            item = r // per
            ids = tuple(generated[r])
            key = (item, ids)
            if key in current:
                cur = current[key]
            else:
                cur = self._cursor(item, ids)
                current[key] = cur
            if cur is not None and cur.finished:
                continue
            masked.append(r)
            cursors.append(cur)  # (None: the EOS-only row)
        self._prev = current
        if masked:
            store = self.guard.packed(scores.device, scores.shape[-1])
            apply_packed(scores, [(store, masked, store.slots(cursors))])
        return scores

    def _cursor(self, item: int, ids: tuple[int, ...]) -> Cursor | None:
        if not ids:
            return self._roots[item]
        parent_key = (item, ids[:-1])
        if parent_key in self._prev:
            parent = self._prev[parent_key]
        else:  # not seen at the previous step (e.g. a processor created mid-generation)
            parent = self._cursor(item, ids[:-1])
        if parent is None:
            return None
        if parent.finished:
            return parent
        nxt = self.guard.advance(parent, ids[-1])
        if nxt is None:
            self.rejected += 1
        return nxt
