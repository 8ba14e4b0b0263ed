"""Guarded completion: generation with the guard, confidence, time budget and cancellation.

This is the API the CLI (``luaguard complete``) and the LSP completion features call::

    from luaguard.completion.generate import CompletionEngine, CompletionRequest

    engine = CompletionEngine(settings.completion)          # loads the model lazily
    result = engine.complete(
        CompletionRequest(text=document_text, offset=cursor_offset, path="src/x.luau"),
        lint_engine.guard_contract("src/x.luau", document_text),   # None: no project (degraded)
        cancelled=lambda: token.is_cancelled,               # polled before every step
    )
    result.text, result.withheld, result.mean_prob, result.min_prob, result.stop_reason

``complete`` is **blocking** and CPU/GPU bound: call it from a worker thread (for pygls:
``await asyncio.to_thread(engine.complete, ...)`` or the server's executor), never on the
event loop.  One engine may be shared by threads: generations are serialised by a lock
(one model, one forward pass at a time); the time budget counts from the call (after the
model is loaded, which happens once), so time spent waiting for the lock counts too.

Shape of the result (:class:`Completion`): ``text`` (what to insert at the offset; empty
when withheld), ``raw_text`` (what was generated, even when withheld), ``tokens``,
``mean_prob``/``min_prob`` (probability of each chosen token under the guarded
distribution at temperature 1), ``withheld`` (``mean_prob < min_confidence``; the
threshold applies to the mean), ``stop_reason`` (``"eos"``, ``"max_tokens"``,
``"time_budget"``, ``"cancelled"``, ``"dead_end"``), ``truncated_prompt``,
``degraded`` (a note when the project is missing: instance paths are then checked only
against the service list), ``elapsed_ms`` and ``mask_us`` (per-step mask timings).

Errors: :class:`~luaguard.completion.loading.ModelLoadError` for a missing or corrupt model
(raised by ``complete`` and by :meth:`CompletionEngine.load`); ``ValueError`` for an
offset outside the text.  A prompt longer than the model's context is truncated from the
left, never an error.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import CompletionSettings
from ..contract import GuardContract
from ..files import read_text
from ..guard.matcher import Guard, GuardOptions, Matcher, path_space, project_guard
from ..guard.table_cache import token_table
from .context import build_prompt, encode_text
from .fim import stop_ids
from .requests import Completion, CompletionRequest, parse_location

__all__ = ["Completion", "CompletionEngine", "CompletionRequest", "GenerationResult", "generate_ids", "parse_location"]


@dataclass
class GenerationResult:
    """Output of :func:`generate_ids`: generated ids (EOS excluded), the guarded
    probability of each chosen token (EOS included), why it stopped, per-step mask
    times in microseconds (guarded runs), the matcher (guarded runs) and the number of
    decoding steps run (forward passes, trimmed tokens included)."""

    ids: list[int]
    probs: list[float]
    stop_reason: str
    mask_us: list[float]
    matcher: Matcher | None
    steps: int = 0


def generate_ids(
    model: Any,
    input_ids: Sequence[int],
    *,
    max_new_tokens: int,
    eos_ids: Sequence[int],
    matcher: Matcher | None = None,
    temperature: float = 0.0,
    top_p: float = 1.0,
    seed: int = 0,
    deadline: float | None = None,
    cancelled: Callable[[], bool] | None = None,
    device: str = "cpu",
    phases: dict[str, float] | None = None,
    check_first: bool = True,
) -> GenerationResult:
    """Decode up to ``max_new_tokens`` tokens after ``input_ids`` with a KV cache.

    Tokens are chosen greedily when ``temperature <= 0``, else by temperature + nucleus
    sampling with a ``torch.Generator`` seeded by ``seed``.  With ``matcher`` every chosen
    token is one the guard allows, chosen exactly as from the logits masked over the full
    vocabulary (the highest allowed score; a sample of the masked, renormalised
    distribution), and consumed by the matcher.  ``deadline`` is a ``time.monotonic()``
    value; ``cancelled`` is polled before each step.  Probabilities are those of the masked
    distribution at temperature 1.  A guarded run cut short (token limit, deadline,
    cancellation) is trimmed back to the last point where every token is finished and
    checked (:meth:`~.matcher.Matcher.complete_ok`).

    **Check first** (``check_first``, the default; without nucleus sampling, ``top_p >=
    1``): each step first chooses from the unmasked logits and asks the guard whether the
    token may come (``consume``: one look-up for a token read before from the same state).
    Allowed, it is the token the masked logits give - for greedy decoding the masked argmax
    is the unmasked one whenever that is allowed; for sampling, a sample of the unmasked
    distribution that is allowed, else one of the masked distribution, is distributed
    exactly as a sample of the masked one (P(t) = p(t) + (1 - p(A)) p(t) / p(A) = p(t) /
    p(A) for t in the allowed set A).  Rejected, the step's mask is computed and applied and
    the token chosen from the masked logits, as without ``check_first`` - after a few more
    unmasked choices (:func:`_retry`, also exact).  The mask is still
    needed for the token's probability: the step's scores are kept and its mask found or
    computed, and applied, after the decoding loop, so that the work of a new mask (new
    automaton states in Python) does not run between two of the model's forward passes, where
    it costs both itself and the model several times what it costs in a row
    (``bench/README.md`` §6) - for rows wider than :data:`DEFER_ROWS_MAX` only where the mask
    is not cached (a cached one is applied at once).  Greedy results are identical either way;
    sampled ones follow the same distribution from a different random stream.
    ``check_first=False`` masks every step before choosing.  (The masks computed after the
    loop - at most one per step - may take a few milliseconds past ``deadline``.)

    ``phases`` (for benchmarks: ``bench/guard_breakdown.py``): a dict to which the seconds
    spent in each part of a step are added - ``prefill`` (the model's first pass, over
    the prompt), ``forward`` (its later passes, one token each), ``mask_new`` /
    ``mask_cached`` (the guard's mask, split by whether the mask engine computed a new
    mask), ``apply``, ``choose`` (softmax, argmax or sampling), ``consume``, ``deferred``
    (the masks and probabilities computed after the loop) - and the counts ``steps``,
    ``masks_new``, ``retried`` (check-first steps whose first choice was refused: up to
    :data:`RETRIES` more unmasked choices are tried), ``rescued``
    (of those, the ones a retry settled) and ``refused`` (check-first steps that had to mask
    in the loop).
    """
    import torch

    eos = {int(i) for i in eos_ids}
    gen = torch.Generator(device="cpu")
    gen.manual_seed(int(seed))
    ids: list[int] = []
    probs: list[float] = []
    mask_us: list[float] = []
    # check-first steps whose mask and probability come after the loop: (index in probs,
    # cursor before, scores, token)
    deferred: list[tuple[int, Any, Any, int]] = []
    first = check_first and matcher is not None and top_p >= 1.0
    if phases is not None and matcher is not None:
        for count in ("masks_new", "retried", "rescued", "refused"):
            phases.setdefault(count, 0)
    reason = "max_tokens"
    past = None
    cache_arg = _cache_argument(model)
    nxt = torch.tensor([list(input_ids)], dtype=torch.long, device=device)
    steps = 0
    with torch.inference_mode():
        for _step in range(max_new_tokens):
            if cancelled is not None and cancelled():
                reason = "cancelled"
                break
            if deadline is not None and time.monotonic() > deadline:
                reason = "time_budget"
                break
            if phases is not None:
                t_fwd = time.perf_counter()
            out = model(input_ids=nxt, use_cache=True, **{cache_arg: past})
            steps += 1
            past = getattr(out, cache_arg)
            logits = out.logits[0, -1].float()
            if phases is not None:
                _add(phases, "prefill" if steps == 1 else "forward", t_fwd)
                phases["steps"] = phases.get("steps", 0) + 1
            accepted = False
            if first:
                t0 = time.perf_counter()
                tok = _choose(logits, temperature, 1.0, gen)
                if phases is not None:
                    t0 = _add(phases, "choose", t0)
                t_mask = time.perf_counter()
                # (small rows: every accepted step is deferred, see DEFER_ROWS_MAX)
                m = None if logits.shape[-1] <= DEFER_ROWS_MAX else matcher.cached_mask()
                before = matcher.cursor if m is None else None
                t_mask = time.perf_counter() - t_mask
                if phases is not None:
                    t0 = _add(phases, "mask_cached", t0)
                accepted = matcher.consume(tok)
                if not accepted:
                    # refused: a few more unmasked choices before masking here (see _retry;
                    # tried whether or not the mask is cached, so that what is drawn never
                    # depends on the guard's caches)
                    tok = _retry(matcher, logits, temperature, gen)
                    accepted = tok >= 0
                    if phases is not None:
                        phases["retried"] += 1
                        phases["rescued"] += accepted
                if phases is not None:
                    t0 = _add(phases, "consume", t0)
                if not accepted:
                    if phases is not None:
                        phases["refused"] += 1
                elif m is None:
                    deferred.append((len(probs), before, logits.clone(), tok))
                    probs.append(math.nan)  # (filled after the loop)
                else:
                    t_apply = time.perf_counter()
                    m.apply_(logits)
                    mask_us.append((time.perf_counter() - t_apply + t_mask) * 1e6)
                    if phases is not None:
                        t_apply = _add(phases, "apply", t_apply)
                    probs.append(_prob(logits, tok))
                    if phases is not None:
                        _add(phases, "choose", t_apply)
            if not accepted:
                dead = False
                if matcher is not None:
                    t0 = time.perf_counter()
                    if phases is not None:
                        n_masks = matcher.guard.engine.stats["masks"]
                    if not first or m is None:  # (a check-first step may have the cached mask already)
                        m = matcher.mask()
                    if phases is not None:
                        new_mask = matcher.guard.engine.stats["masks"] != n_masks
                        phases["masks_new"] += new_mask
                        t_apply = _add(phases, "mask_new" if new_mask else "mask_cached", t0)
                    m.apply_(logits)
                    if phases is not None:
                        _add(phases, "apply", t_apply)
                    mask_us.append((time.perf_counter() - t0) * 1e6)
                    dead = m.dead_end
                if phases is not None:
                    t_choose = time.perf_counter()
                tok = _choose(logits, temperature, top_p, gen)
                probs.append(_prob(logits, tok))
                if phases is not None:
                    t_consume = _add(phases, "choose", t_choose)
                if dead and tok in eos:
                    # nothing but EOS was possible although the text may not stop here: stop
                    # without consuming it, and trim back below like any cut-short run
                    probs.pop()
                    reason = "dead_end"
                    break
                if matcher is not None and not matcher.consume(tok):
                    raise RuntimeError(f"the guard rejected token {tok} that its own mask allowed")  # pragma: no cover
                if phases is not None and matcher is not None:
                    _add(phases, "consume", t_consume)
            if tok in eos:
                reason = "eos"
                break
            ids.append(tok)
            nxt = torch.tensor([[tok]], dtype=torch.long, device=device)
        if matcher is not None and reason != "eos":
            # cut short: drop the unfinished tail (a half-written name or keyword is unchecked)
            back = 0
            while back < len(ids) and not matcher.complete_ok():
                matcher.rollback(1)
                back += 1
            if back:
                del ids[len(ids) - back:]
                del probs[len(probs) - back:]
        if deferred:
            guard = matcher.guard
            if phases is not None:
                t_def = time.perf_counter()
                n_masks = guard.engine.stats["masks"]
            for at, before, row, tok in deferred:
                if at >= len(probs):
                    break  # (trimmed)
                t0 = time.perf_counter()
                guard.mask(before).apply_(row)
                mask_us.append((time.perf_counter() - t0) * 1e6)
                probs[at] = _prob(row, tok)
            if phases is not None:
                _add(phases, "deferred", t_def)
                phases["masks_new"] += guard.engine.stats["masks"] - n_masks
    return GenerationResult(ids, probs, reason, mask_us, matcher, steps)


#: unmasked choices a check-first step tries after the first was refused, before it masks in
#: the decoding loop (where a new mask costs the model's next forward pass too)
RETRIES = 3
#: score rows up to this width (a small vocabulary, as the shipped model's 4,096) are kept for
#: every accepted check-first step, and its mask looked up and applied after the loop: a copy
#: of 16 KB costs the loop less than the look-up, the mask and the log-softmax (measured with
#: guard_breakdown, warm caches: 20-40 us a step inside the loop against 13-15 after it).
#: Wider rows are kept only for steps whose mask is not cached (a 152k row is 600 KB)
DEFER_ROWS_MAX = 16_384


def _retry(matcher: Any, logits, temperature: float, gen) -> int:
    """After the guard refused the unmasked choice of a step: up to
    :data:`RETRIES` more unmasked choices, each consumed if the guard allows it (the token is
    returned), else ``-1`` - the caller then masks the step.  Exact, as the masked choice:
    greedy tries the next-best tokens in order of score, and gives up (``-1``) where a tie
    makes the order ambiguous, so the first allowed one is the masked argmax; sampling draws
    again from the unmasked distribution (rejection sampling: an allowed draw within the
    tries, else a draw from the masked distribution, is distributed as p(t)/p(A)); its
    :data:`RETRIES` draws are made together, before any is checked."""
    import torch

    if temperature > 0:
        # the draws are independent, so they are made at once (one pass over the vocabulary)
        p = _sampling_probs(logits, temperature, 1.0)
        for tok in torch.multinomial(p, RETRIES, replacement=True, generator=gen).tolist():
            if matcher.consume(tok):
                return tok
        return -1
    k = min(RETRIES + 2, logits.shape[-1])
    values, order = torch.topk(logits, k)
    values, order = values.tolist(), order.tolist()
    for j in range(1, k - 1):
        v = values[j]
        # every token scoring more than v is in the list before j (all refused); a tie with
        # another token (listed or not) could put an allowed one with a lower id first
        if v == values[j - 1] or v == values[j + 1] or v != v:
            return -1
        if matcher.consume(order[j]):
            return order[j]
    return -1


def _prob(row, tok: int) -> float:
    """The probability of ``tok`` under score row ``row`` (a masked row: the guarded
    distribution) at temperature 1."""
    import torch

    return math.exp(float(torch.log_softmax(row, dim=-1)[tok]))


def _choose(logits, temperature: float, top_p: float, gen) -> int:
    """The token id chosen from one score row: its argmax when ``temperature <= 0``, else a
    sample of ``softmax(logits / temperature)`` cut to its nucleus ``top_p``."""
    import torch

    if temperature <= 0:
        return int(torch.argmax(logits))
    p = _sampling_probs(logits, temperature, top_p)
    # the first of two independent draws: torch makes a single draw by an exponential race
    # over the whole vocabulary (~80 us at 4,096 ids on this machine, torch 2.13), two or
    # more with replacement by inverse CDF (~5 us); the first of them is one draw of p
    return int(torch.multinomial(p, 2, replacement=True, generator=gen)[0])


def _sampling_probs(logits, temperature: float, top_p: float):
    """The distribution a sampled step draws from: ``softmax(logits / temperature)``, cut
    to its nucleus ``top_p`` (not renormalised: ``torch.multinomial`` takes weights)."""
    import torch

    p = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sp, si = torch.sort(p, descending=True)
        cum = torch.cumsum(sp, dim=-1)
        cut = cum - sp > top_p
        sp[cut] = 0.0
        p = torch.zeros_like(p).scatter_(0, si, sp)
    return p


def _cache_argument(model: Any) -> str:
    """The name of the key/value cache in ``model``'s forward pass and output: ``cache``
    (transformers 5.2x, where ``past_key_values`` is deprecated and warns) or
    ``past_key_values`` (older versions)."""
    import inspect

    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # pragma: no cover - a forward without a signature
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"


def _add(phases: dict[str, float], key: str, since: float) -> float:
    """Add the seconds since ``since`` to ``phases[key]``; return the current time."""
    now = time.perf_counter()
    phases[key] = phases.get(key, 0.0) + (now - since)
    return now


def _malloc_trim():
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_TRIM = _malloc_trim()


def _release_memory() -> None:
    """Give the memory a generation freed back to the system.

    The model's key/value cache has a different size for every prompt; glibc keeps the
    freed blocks, fragmented, so a long editor session grew by ~1.5 MB per completion.
    ``malloc_trim(0)`` returns them (measured: +40 MB over 200 completions instead of
    +300 MB).  A no-op where the C library is not glibc.
    """
    if _TRIM is not None:
        _TRIM(0)


class CompletionEngine:
    """Serves guarded completions from one model.

    ``settings``: :class:`~luaguard.config.CompletionSettings` (model, max tokens, time
    budget, minimum confidence, guard on/off); ``loaded``: an already loaded
    :class:`~luaguard.completion.loading.LoadedModel` (tests, benchmarks).  The model is loaded on
    first use.  Thread-safe (see the module docstring).
    """

    def __init__(self, settings: CompletionSettings | None = None, *, loaded: Any = None, device: str | None = None) -> None:
        self.settings = settings or CompletionSettings()
        self._loaded = loaded
        self._device = device
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        """The model as the settings name it (a folder or hub id), or ``"demonstration"`` for
        the shipped one."""
        return str(self.settings.model) if self.settings.model else "demonstration"

    @property
    def is_loaded(self) -> bool:
        """True once the model is in memory (no load is triggered)."""
        return self._loaded is not None

    def load(self, *, progress: bool = False):
        """Load the model now (``progress``: transformers' loading bar on stderr); raises
        :class:`~luaguard.completion.loading.ModelLoadError`."""
        if self._loaded is None:
            from .loading import load_model

            self._loaded = load_model(self.settings.model, device=self._device, progress=progress)
            if self._loaded.demonstration and self._loaded.device == "cpu":
                # a model this small runs fastest on one thread; two OpenMP threads on a shared
                # 2-core machine made `luaguard complete` 5x slower (577 ms against 2,924 ms for 16
                # tokens, measured; see also luaguard/data/model/README.md)
                import torch

                torch.set_num_threads(1)
        return self._loaded

    def warm(self, contract: GuardContract, texts: Sequence[str] | None = None, *, budget_s: float = 5.0) -> int:
        """Fill the mask cache of ``contract``'s guard (see :meth:`guard`) by reading
        ``texts`` (default: the project's script files) for at most ``budget_s`` seconds;
        returns the tokens read.  Meant for a background thread after start-up: the first
        completions are then as fast as later ones."""
        lm = self.load()
        g = self.guard(contract)
        project = contract.project
        if texts is None:
            texts = []
            root = getattr(project, "root_dir", None)
            for rel in sorted(getattr(project, "file_instances", {})):
                if rel.endswith((".lua", ".luau")) and root is not None:
                    try:
                        texts.append(read_text(root / rel, root=root))
                    except OSError:
                        continue
        seqs = (encode_text(lm.tokenizer, t) for t in texts)
        return g.warm(seqs, budget_s=budget_s)

    def guard(self, contract: GuardContract | None = None, *, options: GuardOptions | None = None,
              ids: Sequence[str] = ()) -> Guard:
        """The guard for this engine's model and ``contract`` (from
        :meth:`luaguard.engine.Engine.guard_contract`; ``None``: no project), made by
        :func:`~.matcher.project_guard` as every front end makes it."""
        lm = self.load()
        table = token_table(lm.tokenizer, _logits_width(lm), eos_ids=_eos_ids(lm))
        return project_guard(table, contract, options, ids)

    def complete(self, request: CompletionRequest, contract: GuardContract | None = None, *,
                 cancelled: Callable[[], bool] | None = None) -> Completion:
        """Generate a completion at ``request.offset`` (see the module docstring) with the
        guard of ``contract`` (the linting engine's
        :meth:`~luaguard.engine.Engine.guard_contract` of the file: the guard then accepts
        what the linter accepts; ``None``: no project)."""
        try:
            return self._complete(request, contract or GuardContract(), cancelled=cancelled)
        finally:
            _release_memory()

    def _complete(self, request: CompletionRequest, contract: GuardContract, *,
                  cancelled: Callable[[], bool] | None = None) -> Completion:
        s = self.settings
        max_tokens = int(request.max_tokens if request.max_tokens is not None else s.max_tokens)
        min_conf = request.min_confidence if request.min_confidence is not None else s.min_confidence
        use_guard = request.guard if request.guard is not None else s.guard
        if not 0 <= request.offset <= len(request.text):
            raise ValueError(f"offset {request.offset} is outside the text (length {len(request.text)})")
        lm = self.load()  # loading the model (first call only) does not count against the budget
        start = time.monotonic()
        timeout_ms = request.timeout_ms if request.timeout_ms is not None else s.timeout_ms
        deadline = start + timeout_ms / 1000.0 if timeout_ms and timeout_ms > 0 else None
        project = contract.project
        scripts = list(contract.scripts)
        degraded = None
        if project is None:
            degraded = "no project: instance paths are checked against the Roblox service list only"
        with self._lock:
            g = None
            matcher = None
            if use_guard:
                ids = ()
                if request.grounded_numbers:
                    from ..guard.numbers import collect_ids

                    ids = tuple(collect_ids(None, [request.text]))
                options = GuardOptions(grounded_numbers=request.grounded_numbers, stop=request.stop)
                g = self.guard(contract, options=options, ids=ids)
            prefix = request.text[: request.offset]
            space = analysis = None
            if project is not None:
                space = path_space(project, contract.runtime_names, services=contract.services)
                analysis = space.analyze(prefix, scripts)  # parsed once for the facts and the guard
            prompt = build_prompt(
                request.text, request.offset, tokenizer=lm.tokenizer, context_length=lm.context_length,
                max_new_tokens=max_tokens, project=project, scripts=scripts, analysis=analysis,
                space=space, fim=request.fim, path=_project_path(project, request.path),
            )
            if g is not None:
                same_space = analysis is not None and g.space is space
                matcher = g.matcher(prompt.guard_text, scripts=scripts, analysis=analysis if same_space else None,
                                    shift=len(prompt.header))
            eos = _eos_ids(lm)
            res = generate_ids(
                lm.model, prompt.input_ids, max_new_tokens=max_tokens, eos_ids=eos, matcher=matcher,
                temperature=request.temperature, top_p=request.top_p, seed=request.seed,
                deadline=deadline, cancelled=cancelled, device=lm.device,
            )
        if matcher is not None:
            raw = matcher.text
        else:
            raw = token_table(lm.tokenizer, _logits_width(lm), eos_ids=_eos_ids(lm)).text_of(res.ids)
        mean = sum(res.probs) / len(res.probs) if res.probs else 0.0
        low = min(res.probs) if res.probs else 0.0
        withheld = mean < min_conf or res.stop_reason == "cancelled"
        return Completion(
            text="" if withheld else raw, raw_text=raw, tokens=len(res.ids), mean_prob=mean, min_prob=low,
            withheld=withheld, stop_reason=res.stop_reason, guarded=matcher is not None,
            truncated_prompt=prompt.truncated, prompt_tokens=len(prompt.input_ids),
            elapsed_ms=(time.monotonic() - start) * 1000.0, degraded=degraded, facts=prompt.facts,
            mask_us=res.mask_us, backend="local", model=self.model_name, demonstration=bool(lm.demonstration),
            fim_family=prompt.family if prompt.fim else None,
        )


def _project_path(project: Any, path: str | None) -> str | None:
    """``path`` relative to the project root (POSIX), as the repository context names the
    file; the bare file name for a file outside the project; ``None`` without a path."""
    if not path:
        return None
    from pathlib import Path

    p = Path(path)
    root = getattr(project, "root_dir", None)
    if root is not None and p.is_absolute():
        try:
            return p.resolve().relative_to(Path(root).resolve()).as_posix()
        except (ValueError, OSError):
            return p.name
    return p.as_posix()


def _logits_width(lm: Any) -> int:
    emb = lm.model.get_output_embeddings() if hasattr(lm.model, "get_output_embeddings") else None
    if emb is not None and getattr(emb, "weight", None) is not None:
        return int(emb.weight.shape[0])
    return int(getattr(lm.model.config, "vocab_size", len(lm.tokenizer)))


def _eos_ids(lm: Any) -> list[int]:
    """The ids generation stops on: the generation config's and the tokenizer's EOS, and
    the stop tokens of the model's FIM family (:func:`~.fim.stop_ids`)."""
    out: list[int] = []
    gc = getattr(lm.model, "generation_config", None)
    src = getattr(gc, "eos_token_id", None)
    for i in (src if isinstance(src, (list, tuple)) else [src]):
        if i is not None and int(i) not in out:
            out.append(int(i))
    return stop_ids(lm.tokenizer, out)
