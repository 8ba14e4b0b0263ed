"""Evaluate guarded decoding on prompts cut from the sample place.

Prompts are cut at **path sites** (right after ``game.``, ``workspace.``, ``script.``,
``.Parent.``, ``:GetService("``, ``:WaitForChild("``, ``:FindFirstChild("``, ``["`` and after
locals bound to instance chains) and at **statement starts** (the first token of a line) of
``samples/place/src``.  For each prompt the model completes the text four times: without and
with the guard, greedy and sampled (same seed for the two sampled runs).  The same decoding
loop (:func:`luaguard.completion.generate.generate_ids`) and prompt (facts header + prefix,
:func:`luaguard.completion.context.build_prompt`) are used with and without the guard.

Printed figures:

* per configuration: the share of completions with an invalid instance path
  (``unknown_instance``/``unknown_service`` findings of luaguard's linter that the prompt
  alone does not have), a placeholder, a stray closer (a ``)``/``]``/``}``/``end``/``until``
  without its opener), and - for information - brackets the completion left open;
* per-step mask time (computing the mask and applying it to the logits) p50/p99, and the
  guard's whole per-step cost (mask + consuming the chosen token), for the model's own
  vocabulary (the decoding loop checks the model's choice first and computes a mask not yet
  cached after the loop, or at once when it refuses the choice: each mask is timed where it
  is computed; ``--mask-every-step`` masks every step before choosing, as before);
* end-to-end time guarded/plain (same prompts, same seeds, measured interleaved), total,
  per decoding step and per kept token - for the first pass (the guard's caches start cold)
  and for a timing-only second pass over the same prompts (caches warm);
* the same mask timings with the vocabulary padded to 152,064 ids (Qwen2.5-Coder's size)
  with synthetic tokens made of real ones (:func:`synthetic_tokens`): the guarded runs' token
  sequences are replayed through a guard built on the padded table, applying each mask to a
  152k logits row.

The heap is settled after loading, as the language server does once a completion has loaded
the model (:func:`luaguard.lsp.heap.settle_heap`: long-lived objects frozen, so full
collections do not traverse the model's and torch's objects); ``--no-settle`` leaves it.

Run: ``python bench/guard_eval.py`` (default model, 220 prompts, 32 new tokens), ``--quick``
for a small run, ``--model DIR`` for another local model, ``--json FILE`` to save figures.

``--model-config NAME [--device cuda]`` is a timing-only run at a production shape: a model of
that shape (:data:`MODEL_SHAPES`: Qwen2.5-Coder 0.5B, 1.5B, 3B and 7B, and ``tiny-151k`` for a quick
check) with random weights on the device (bf16 on CUDA, fp32 on CPU), Qwen2.5's real
tokenizer (tests/real_tokenizers.py) and ``GuardLogitsProcessor`` with the sample place's guard
(``Guard.for_model`` of the engine's contract); ``transformers``' greedy ``generate`` of
``--max-new-tokens`` tokens from prompts cut from the sample place (their last
``--prompt-tokens``, 360), at batch 1 and 8: milliseconds per decoding step (the prompt's
prefill left out: a generation of N tokens less one of 1) unguarded, guarded on the first pass
(the guard's caches cold) and again (warm), and guarded/plain.  Random weights: the figures are the guard's cost
per step against a real forward pass, not completion quality.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from model_speed import ARCHS  # noqa: E402  (the Qwen2.5-Coder shapes)
SAMPLES = ROOT / "samples" / "place"

_PATH_SITE = re.compile(r'(?:\bgame\.|\bworkspace\.|\bscript\.|\.Parent\.|:GetService\("|:WaitForChild\("|:FindFirstChild\("|\[")')


def cut_prompts(n_path: int, n_stmt: int, seed: int) -> list[tuple[str, str, int, str]]:
    """(relative path, text, offset, kind) prompts from the sample place."""
    from luaguard.guard.matcher import path_space
    from luaguard.project.index import load_project

    project = load_project(SAMPLES)
    space = path_space(project)
    path_sites: list[tuple[str, str, int, str]] = []
    stmt_sites: list[tuple[str, str, int, str]] = []
    for f in sorted((SAMPLES / "src").rglob("*.luau")):
        rel = f.relative_to(SAMPLES).as_posix()
        text = f.read_text(encoding="utf-8")
        for m in _PATH_SITE.finditer(text):
            path_sites.append((rel, text, m.end(), "path"))
        # every local the file binds to an instance, in any scope (the last declaration of a
        # name wins), so that the prompt set does not depend on where the cut falls
        flat: dict[str, int] = {}
        for fact in space.analyze(text, project.instances_for_file(rel)).locals:
            flat[fact.name] = fact.value
        bound = [name for name, v in flat.items()
                 if v >= 0 and name not in ("game", "workspace", "Workspace", "script")]
        for name in bound:
            for m in re.finditer(rf"\b{re.escape(name)}(?:\.|:WaitForChild\(\"|:FindFirstChild\(\")", text):
                if m.start() > 0 and text[m.start() - 1] in ".:":
                    continue
                if text.rfind("local", 0, m.start()) == text.rfind("\n", 0, m.start()) + 1:
                    pass
                path_sites.append((rel, text, m.end(), "path"))
        pos = 0
        for line in text.splitlines(keepends=True):
            stripped = line.lstrip(" \t")
            indent = len(line) - len(stripped)
            if stripped[:1].isalpha() and not stripped.startswith(("end", "else", "elseif", "until", "then")):
                stmt_sites.append((rel, text, pos + indent, "statement"))
            pos += len(line)
    rng = random.Random(seed)
    uniq_path = list({(r, o): (r, t, o, k) for r, t, o, k in path_sites}.values())
    rng.shuffle(uniq_path)
    rng.shuffle(stmt_sites)
    return uniq_path[:n_path] + [s for s in stmt_sites if s[2] > 200][:n_stmt]


def prepare_prompt(lm, project, space, rel: str, text: str, off: int, max_new_tokens: int) -> tuple:
    """``(scripts, analysis, prompt)`` for the cut at offset ``off`` of file ``rel``, as
    :class:`~luaguard.completion.generate.CompletionEngine` makes them: the prefix is parsed once,
    for the prompt's facts (guarded or not) and for the guard's bindings."""
    from luaguard.completion.context import build_prompt

    scripts = project.instances_for_file(rel)
    analysis = space.analyze(text[:off], scripts)
    prompt = build_prompt(text, off, tokenizer=lm.tokenizer, context_length=lm.context_length,
                          max_new_tokens=max_new_tokens, project=project, scripts=scripts,
                          analysis=analysis, space=space, fim=False)
    return scripts, analysis, prompt


def add_loop_option(ap: argparse.ArgumentParser) -> None:
    """``--mask-every-step``: run :func:`~luaguard.completion.generate.generate_ids` with
    ``check_first=False`` (shared with ``guard_breakdown.py``)."""
    ap.add_argument("--mask-every-step", action="store_true",
                    help="mask every step before choosing (generate_ids(check_first=False)) instead of checking the "
                         "unmasked choice first")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


#: model shapes for ``--model-config`` (the architecture of the public Qwen2.5-Coder configs;
#: weights are random)
MODEL_SHAPES = {
    **ARCHS,  # 0.5B, 1.5B, 3B (bench/model_speed.py)
    "qwen2.5-coder-7b": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                             num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False),
    "tiny-151k": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, vocab_size=151936, tie_word_embeddings=True),
}


def model_config_timing(args) -> int:
    """``--model-config``: guarded/plain per step at a production shape (see the module docstring)."""
    import torch
    from real_tokenizers import real_tokenizer
    from transformers import AutoModelForCausalLM, LogitsProcessorList, Qwen2Config

    from luaguard.engine import Engine
    from luaguard.guard.matcher import Guard
    from luaguard.guard.processor import GuardLogitsProcessor

    if args.model_config not in MODEL_SHAPES:
        raise SystemExit(f"--model-config: one of {', '.join(MODEL_SHAPES)}")
    dev = args.device
    cuda = dev.startswith("cuda")
    dtype = torch.bfloat16 if cuda else torch.float32
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    tok = real_tokenizer("qwen2.5")
    cfg = Qwen2Config(**MODEL_SHAPES[args.model_config], max_position_embeddings=4096, rope_theta=1e6,
                      bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id)
    t0 = time.perf_counter()
    with torch.device(dev):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype).eval()
    name = torch.cuda.get_device_name(0) if cuda else "CPU"
    print(f"{args.model_config}: {sum(p.numel() for p in model.parameters()):,} parameters (random), {dtype} on {dev} "
          f"({name}), made in {time.perf_counter() - t0:.1f}s; tokenizer qwen2.5; {args.max_new_tokens} new tokens")
    engine = Engine(SAMPLES)
    t0 = time.perf_counter()
    guard = Guard.for_model(tok, cfg.vocab_size, engine.guard_contract())
    print(f"guard ready in {time.perf_counter() - t0:.1f}s (token tables from the disk cache when present)")
    items = []
    n_prompt = args.prompt_tokens
    for rel, text, off, _kind in cut_prompts(8, 8, args.seed):
        ids = tok(text[:off], add_special_tokens=False)["input_ids"][-n_prompt:]
        if len(ids) == n_prompt:
            items.append((rel, ids))

    own = [0.0, 0]  # the processor's own seconds and calls, over the guarded generations of N tokens

    class Timed(GuardLogitsProcessor):
        def __call__(self, input_ids, scores):
            t = time.perf_counter()
            out = super().__call__(input_ids, scores)
            if cuda:
                torch.cuda.synchronize()
            own[0] += time.perf_counter() - t
            own[1] += 1
            return out

    def generate(batch, guarded: bool, n: int) -> float:
        ids = torch.tensor([i for _r, i in batch], device=dev)
        procs = None
        if guarded:
            roots = [guard.start(tok.decode(i), scripts=engine.guard_contract(r).scripts) for r, i in batch]
            procs = LogitsProcessorList([(Timed if n > 1 else GuardLogitsProcessor)(guard, roots)])
        if cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        with torch.no_grad():
            model.generate(ids, attention_mask=torch.ones_like(ids), logits_processor=procs, do_sample=False,
                           max_new_tokens=n, min_new_tokens=n, pad_token_id=tok.eos_token_id)
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - t

    def run(batch, guarded: bool) -> float:
        """Milliseconds per decoding step: a generation of N tokens less one of 1 (the prompt's
        prefill and the first step), over N - 1."""
        n = args.max_new_tokens
        return 1e3 * (generate(batch, guarded, n) - generate(batch, guarded, 1)) / (n - 1)

    print(f"{'batch':>5} {'plain ms/step':>14} {'guarded cold':>13} {'guarded warm':>13} {'warm/plain':>11} "
          f"{'guard ms/step':>14} {'1 + guard/plain':>16}")
    for b in (1, 8):
        groups = [items[i:i + b] for i in range(0, len(items) - b + 1, b)][:args.groups] or [items[:b]]
        run(groups[0], False)  # (warm-up: kernels, allocator)
        plain, cold, warm = [], [], []
        for g in groups:
            cold.append(run(g, True))
            own[:] = [0.0, 0]
            for _ in range(args.reps):
                plain.append(run(g, False))
                warm.append(run(g, True))
        p, c, w = statistics.median(plain), statistics.median(cold), statistics.median(warm)
        g_ms = 1e3 * own[0] / max(own[1], 1)
        print(f"{b:>5} {p:>14.2f} {c:>13.2f} {w:>13.2f} {w / p:>11.3f} {g_ms:>14.3f} {1 + g_ms / p:>16.4f}")
    print("(guard ms/step: GuardLogitsProcessor's own time per step, warm; on a shared host the end-to-end ratio "
          "is noisy and 1 + guard/plain is the steadier estimate. Target: guarded/plain <= 1.03 at batch 1 and 8 "
          "on a GPU)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model folder (default: the shipped model)")
    ap.add_argument("--model-config", help=f"timing only, a random model of this shape ({', '.join(MODEL_SHAPES)})")
    ap.add_argument("--device", default="cpu", help="--model-config: where the model runs (cuda: a GPU)")
    ap.add_argument("--groups", type=int, default=3, help="--model-config: prompt groups per batch size")
    ap.add_argument("--reps", type=int, default=2, help="--model-config: plain/guarded repetitions per group")
    ap.add_argument("--prompt-tokens", type=int, default=360, help="--model-config: prompt length in tokens")
    ap.add_argument("--path-prompts", type=int, default=120)
    ap.add_argument("--statement-prompts", type=int, default=100)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--pad-size", type=int, default=152064)
    ap.add_argument("--no-pad", action="store_true", help="skip the padded-vocabulary timings")
    add_loop_option(ap)
    ap.add_argument("--pad-style", choices=("words", "pairs"), default="words", help="how synthetic tokens are made")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1: steadier timings)")
    ap.add_argument("--no-second-pass", dest="second_pass", action="store_false",
                    help="skip the timing-only second pass with warm caches")
    ap.add_argument("--warm", type=float, default=0.0, metavar="SECONDS",
                    help="before generating, warm the mask cache on the project's own files for this long")
    ap.add_argument("--no-settle", dest="settle", action="store_false",
                    help="leave the collector as it is (the server settles the heap once a completion has "
                         "loaded the model: luaguard.lsp.heap.settle_heap; by default so does this benchmark)")
    ap.add_argument("--quick", action="store_true", help="20 + 20 prompts, 16 new tokens")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    if args.model_config:
        if args.max_new_tokens == 32 and args.quick:
            args.max_new_tokens = 16
        return model_config_timing(args)
    if args.quick:
        args.path_prompts, args.statement_prompts, args.max_new_tokens = 20, 20, 16

    import numpy as np
    import torch
    from guard_support import new_violations
    from luaguard.engine import Engine
    from luaguard.completion.context import encode_text
    from luaguard.completion.generate import _eos_ids, _logits_width, generate_ids
    from luaguard.guard.matcher import GuardOptions, guard_for
    from luaguard.completion.loading import load_model
    from luaguard.guard.table_cache import token_table
    from luaguard.guard.token_bytes import pad_table
    from luaguard.project.index import load_project

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    lm = load_model(args.model, device="cpu")
    print(f"model: {lm.path} ({sum(p.numel() for p in lm.model.parameters()):,} parameters, "
          f"context {lm.context_length}), loaded in {time.perf_counter() - t0:.1f}s")
    project = load_project(SAMPLES)
    lint = Engine(SAMPLES)
    eos = _eos_ids(lm)
    table = token_table(lm.tokenizer, _logits_width(lm), eos_ids=eos)
    t0 = time.perf_counter()
    guard = guard_for(table, project, GuardOptions())
    space = guard.space
    print(f"guard: vocabulary {table.size} ({table.kind}), trie {guard.engine.trie}, built in {time.perf_counter() - t0:.2f}s")
    if args.warm > 0:
        from luaguard.completion.generate import CompletionEngine

        t0 = time.perf_counter()
        n = CompletionEngine(loaded=lm).warm(project, budget_s=args.warm)
        print(f"warm-up: {n} tokens of the project's own files read in {time.perf_counter() - t0:.1f}s "
              f"({guard.engine.stats['masks']} masks computed)")
    if args.settle:
        from luaguard.lsp.heap import settle_heap

        print(f"heap settled as the server does after loading the model: {settle_heap():.2f}s")
    prompts = cut_prompts(args.path_prompts, args.statement_prompts, args.seed)
    print(f"prompts: {len(prompts)} ({sum(k == 'path' for *_x, k in prompts)} path sites, "
          f"{sum(k == 'statement' for *_x, k in prompts)} statement starts), {args.max_new_tokens} new tokens each")

    configs = [("plain", "greedy"), ("guarded", "greedy"), ("plain", "sampling"), ("guarded", "sampling")]
    results: dict[tuple[str, str], dict] = {c: {"n": 0, "paths": 0, "placeholders": 0, "closers": 0, "open": 0,
                                                "tokens": 0, "steps": 0, "time": 0.0, "eos": 0, "prime": 0.0}
                                            for c in configs}
    mask_us: list[float] = []
    step_us: list[float] = []
    replay: list[tuple[str, list[int], list[object]]] = []
    prepared: list[tuple] = []  # per prompt: (scripts, analysis, prompt), reused by the second pass
    t_start = time.perf_counter()
    for i, (rel, text, off, _kind) in enumerate(prompts):
        scripts, analysis, prompt = prepare_prompt(lm, project, space, rel, text, off, args.max_new_tokens)
        for guarded_name, mode in configs:
            guarded = guarded_name == "guarded"
            temp = 0.0 if mode == "greedy" else args.temperature
            t1 = time.perf_counter()
            matcher = guard.matcher(prompt.guard_text, scripts=scripts, analysis=analysis,
                                    shift=len(prompt.header)) if guarded else None
            t_primed = time.perf_counter()
            res = generate_ids(lm.model, prompt.input_ids, max_new_tokens=args.max_new_tokens, eos_ids=eos,
                               matcher=matcher, temperature=temp, seed=args.seed + i, device=lm.device,
                               check_first=not args.mask_every_step)
            dt = time.perf_counter() - t1
            completion = matcher.text if matcher is not None else table.text_of(res.ids)
            r = results[(guarded_name, mode)]
            r["n"] += 1
            r["tokens"] += len(res.ids)
            r["steps"] += res.steps
            r["time"] += dt
            r["prime"] += t_primed - t1
            r["eos"] += res.stop_reason == "eos"
            v = new_violations(lint, text[:off], completion, rel)
            for k in ("paths", "placeholders", "closers"):
                r[k] += bool(v[k])
            if _left_open(text[:off], completion):
                r["open"] += 1
            if guarded:
                mask_us.extend(res.mask_us)
                replay.append((prompt.guard_text, res.ids, scripts, analysis, len(prompt.header)))
        prepared.append((scripts, analysis, prompt))
        if (i + 1) % 20 == 0:
            print(f"  {i + 1}/{len(prompts)} prompts, {time.perf_counter() - t_start:.0f}s", flush=True)

    # second pass, timing only: the same prompts and seeds again with the caches warm
    warm_t = {c: [0.0, 0] for c in configs}
    if args.second_pass:
        for i, (scripts, analysis, prompt) in enumerate(prepared):
            for guarded_name, mode in configs:
                t1 = time.perf_counter()
                matcher = guard.matcher(prompt.guard_text, scripts=scripts, analysis=analysis,
                                        shift=len(prompt.header)) if guarded_name == "guarded" else None
                res = generate_ids(lm.model, prompt.input_ids, max_new_tokens=args.max_new_tokens, eos_ids=eos,
                                   matcher=matcher, temperature=0.0 if mode == "greedy" else args.temperature,
                                   seed=args.seed + i, device=lm.device, check_first=not args.mask_every_step)
                warm_t[(guarded_name, mode)][0] += time.perf_counter() - t1
                warm_t[(guarded_name, mode)][1] += res.steps

    # the guard's whole per-step cost (mask + apply + consume), replayed on the same sequences
    row = torch.zeros(table.size)
    for text_, ids, scripts, an, shift in replay:
        m = guard.matcher(text_, scripts=scripts, analysis=an, shift=shift)
        for tok in ids:
            t1 = time.perf_counter()
            m.mask().apply_(row)
            m.consume(tok)
            step_us.append((time.perf_counter() - t1) * 1e6)

    out: dict = {"model": str(lm.path), "vocab": table.size, "prompts": len(prompts),
                 "max_new_tokens": args.max_new_tokens, "configs": {}}
    print()
    print(f"{'config':<22}{'n':>5}{'invalid path':>14}{'placeholder':>13}{'stray closer':>14}{'left open':>11}"
          f"{'tokens':>8}{'eos':>6}{'ms/token':>10}")
    for c in configs:
        r = results[c]
        n = r["n"]
        name = f"{c[0]} {c[1]}"
        ms_tok = 1000 * r["time"] / max(r["tokens"], 1)
        print(f"{name:<22}{n:>5}{100 * r['paths'] / n:>13.1f}%{100 * r['placeholders'] / n:>12.1f}%"
              f"{100 * r['closers'] / n:>13.1f}%{100 * r['open'] / n:>10.1f}%{r['tokens'] / n:>8.1f}"
              f"{100 * r['eos'] / n:>5.0f}%{ms_tok:>10.2f}")
        out["configs"][name] = {**{k: r[k] for k in ("n", "paths", "placeholders", "closers", "open", "tokens", "eos")},
                                "time_s": round(r["time"], 3)}
    st = guard.engine.stats
    print()
    print(f"mask time per step (mask + apply, vocab {table.size}): p50 {pct(mask_us, 0.5):.1f} us, "
          f"p99 {pct(mask_us, 0.99):.1f} us, mean {statistics.fmean(mask_us):.1f} us over {len(mask_us)} steps")
    print(f"guard cost per step (mask + apply + consume, replayed): p50 {pct(step_us, 0.5):.1f} us, "
          f"p99 {pct(step_us, 0.99):.1f} us, mean {statistics.fmean(step_us):.1f} us")
    print(f"mask cache: {st['mask_hits']} hits, {st['masks']} computed ({100 * st['masks'] / max(1, st['masks'] + st['mask_hits']):.1f}%)")
    for mode in ("greedy", "sampling"):
        g, p = results[("guarded", mode)], results[("plain", mode)]
        ratio = g["time"] / p["time"]
        per_step = (g["time"] / max(g["steps"], 1)) / (p["time"] / max(p["steps"], 1))
        per_tok = (g["time"] / max(g["tokens"], 1)) / (p["time"] / max(p["tokens"], 1))
        print(f"end-to-end time guarded/plain ({mode}): {ratio:.3f} total, {per_step:.3f} per decoding step "
              f"({1000 * g['time'] / g['steps']:.2f} vs {1000 * p['time'] / p['steps']:.2f} ms; priming "
              f"{1000 * g['prime'] / g['n']:.2f} ms per generation), {per_tok:.3f} per kept token")
        out[f"ratio_{mode}"] = round(ratio, 4)
        out[f"ratio_per_step_{mode}"] = round(per_step, 4)
        out[f"ratio_per_token_{mode}"] = round(per_tok, 4)
    if args.second_pass:
        for mode in ("greedy", "sampling"):
            (tg, sg), (tp, sp) = warm_t[("guarded", mode)], warm_t[("plain", mode)]
            print(f"second pass, warm caches ({mode}): guarded/plain {tg / tp:.3f} total, "
                  f"{(tg / sg) / (tp / sp):.3f} per decoding step ({1000 * tg / sg:.2f} vs {1000 * tp / sp:.2f} ms)")
            out[f"warm_ratio_{mode}"] = round(tg / tp, 4)
            out[f"warm_ratio_per_step_{mode}"] = round((tg / sg) / (tp / sp), 4)
    out.update(mask_p50_us=round(pct(mask_us, 0.5), 2), mask_p99_us=round(pct(mask_us, 0.99), 2),
               step_p50_us=round(pct(step_us, 0.5), 2), step_p99_us=round(pct(step_us, 0.99), 2))

    if not args.no_pad:
        extra = synthetic_tokens(table, args.pad_size - table.size, args.pad_style, args.seed)
        t1 = time.perf_counter()
        big = pad_table(table, args.pad_size, extra)
        gbig = guard_for(big, project, GuardOptions())
        build = time.perf_counter() - t1
        if args.warm > 0:
            t1 = time.perf_counter()
            seqs = [encode_text(lm.tokenizer, p.read_text()) for p in sorted((SAMPLES / "src").rglob("*.luau"))]
            n = gbig.warm(seqs, budget_s=args.warm * 4)
            print(f"padded guard warm-up: {n} tokens in {time.perf_counter() - t1:.1f}s")
            gbig.engine.stats.update(masks=0, mask_hits=0)
        if args.settle:
            settle_heap()  # (the server's guard of a 152k model would be built before its settle too)
        big_row = torch.zeros(big.size)
        big_us: list[float] = []
        sizes: list[int] = []
        for text_, ids, scripts, an, shift in replay:
            m = gbig.matcher(text_, scripts=scripts, analysis=an, shift=shift)
            for tok in ids:
                t1 = time.perf_counter()
                mk = m.mask()
                mk.apply_(big_row)
                big_us.append((time.perf_counter() - t1) * 1e6)
                sizes.append(mk.n_allowed if mk.allow else mk.size - mk.n_allowed)  # (not mk.ids: built on demand)
                m.consume(tok)
        sb = gbig.engine.stats
        print()
        print(f"padded vocabulary {big.size} ({big.synthetic} synthetic '{args.pad_style}' tokens; trie {gbig.engine.trie}, "
              f"guard built in {build:.1f}s):")
        print(f"  mask time per step (mask + apply): p50 {pct(big_us, 0.5):.1f} us, p99 {pct(big_us, 0.99):.1f} us, "
              f"mean {statistics.fmean(big_us):.1f} us over {len(big_us)} steps")
        print(f"  ids per mask (the smaller of allowed and banned): median {int(np.median(sizes))}, max {max(sizes)}; "
              f"masks computed {sb['masks']} ({100 * sb['masks'] / max(1, sb['masks'] + sb['mask_hits']):.1f}% of steps)")
        warm = big_us[len(big_us) // 2:]
        print(f"  second half of the replay (warmer cache): p50 {pct(warm, 0.5):.1f} us, p99 {pct(warm, 0.99):.1f} us")
        out.update(pad_size=big.size, pad_mask_p50_us=round(pct(big_us, 0.5), 2), pad_mask_p99_us=round(pct(big_us, 0.99), 2),
                   pad_masks_computed=sb["masks"], pad_steps=len(big_us))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


def synthetic_tokens(table, n: int, style: str, seed: int) -> list[bytes]:
    """``n`` distinct synthetic tokens made of real ones.

    ``words`` (default) imitates what a 152k code vocabulary adds over a small one, as
    byte-level BPE with a GPT-2/Qwen-style pre-tokenizer builds it: longer words with or
    without a leading space (45% / 35%), punctuation followed by a word such as ``.Parent``
    (8%), runs of punctuation (7%) and of white space (5%).  ``pairs`` joins two random
    real tokens (crossing lexeme boundaries freely: a much harsher vocabulary than real ones).
    """
    rng = random.Random(seed)
    real = [b for b in table.token_bytes if b]
    words = [b for b in real if re.fullmatch(rb"[A-Za-z_][A-Za-z0-9_]*", b)]
    swords = [b for b in real if re.fullmatch(rb" [A-Za-z_][A-Za-z0-9_]*", b)]
    punct = [b for b in real if re.fullmatch(rb"[^A-Za-z0-9_\s]+", b)]
    space = [b for b in real if re.fullmatch(rb"\s+", b)]
    have = set(real)
    out: dict[bytes, None] = {}
    while len(out) < n:
        if style == "pairs":
            t = rng.choice(real) + rng.choice(real)
        else:
            r = rng.random()
            if r < 0.45:
                t = rng.choice(words) + rng.choice(words).lower()
            elif r < 0.80:
                t = rng.choice(swords) + rng.choice(words).lower()
            elif r < 0.88:
                t = bytes([rng.choice(b".:(\"[#")]) + rng.choice(words)
            elif r < 0.95:
                t = rng.choice(punct) + rng.choice(punct)
            else:
                t = rng.choice(space) + rng.choice(space)
        if t not in have:
            out[t] = None
    return list(out)


def _left_open(prompt: str, completion: str) -> bool:
    """Did the completion open a bracket it did not close?"""
    from luaguard.luau.lexer import tokenize

    def depth(text: str) -> int:
        d = 0
        for t in tokenize(text).tokens:
            if t.kind in ("(", "[", "{"):
                d += 1
            elif t.kind in (")", "]", "}"):
                d -= 1
        return d

    return depth(prompt + completion) > depth(prompt)


if __name__ == "__main__":
    sys.exit(main())
