"""Where the guard's end-to-end cost goes, step by step, inside the decoding loop.

``bench/guard_eval.py`` gives the end-to-end ratio guarded/plain; this script splits it.
For the same prompts (cut from the sample place as guard_eval cuts them) it runs the plain
and the guarded decoding loop interleaved (:func:`luaguard.completion.generate.generate_ids`
with its ``phases`` accumulator) and prints, per decoding step in microseconds:

* ``prefill`` and ``forward`` - the model's first pass (over the prompt) and its later
  passes (compare plain and guarded: the guard's work between two passes evicts part of
  what the model had in the CPU caches);
* ``mask_new`` / ``mask_cached`` - the guard's mask, computed anew by the mask engine or
  found in its caches (with the share of steps that computed one);
* ``apply``, ``choose`` (softmax, argmax or sampling), ``consume``;
* ``priming`` - reading the prompt into the guard, spread over the generation's steps.

Then a second pass over the same prompts (caches warm), and - with ``--floor`` - a third
configuration whose "guard" applies one fixed mask and reads nothing: the cost of masking
at all, the floor under any guard written in Python.

Timing every phase adds a few ``perf_counter`` calls per step to both configurations.
Figures move by ±10% between runs on a shared VM; compare configurations within one run.

Run: ``python bench/guard_breakdown.py`` (greedy, 220 prompts, 32 new tokens), ``--mode
sampling``, ``--prompts 60`` for a shorter run, ``--floor``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from guard_eval import add_loop_option  # noqa: E402 - (bench/ is on the path from here)

PHASES = ("prefill", "forward", "mask_new", "mask_cached", "apply", "choose", "consume", "deferred", "priming")


class _FixedMask:
    """A stand-in matcher for ``--floor``: the same mask every step, nothing read."""

    def __init__(self, guard, mask) -> None:
        self.guard = self  # (generate_ids asks the guard for a step's mask after the loop)
        self.engine = guard.engine  # (its counters, for the phases)
        self._mask = mask
        self.cursor = None

    def mask(self, cursor=None):
        return self._mask

    def cached_mask(self):
        return self._mask

    def consume(self, token_id: int) -> bool:
        return True

    def complete_ok(self) -> bool:
        return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model folder (default: the shipped model)")
    ap.add_argument("--mode", choices=("greedy", "sampling"), default="greedy")
    ap.add_argument("--prompts", type=int, default=220, help="prompts (path sites and statement starts, as guard_eval)")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--floor", action="store_true", help="also run a fixed-mask stand-in for the guard")
    add_loop_option(ap)
    args = ap.parse_args(argv)

    import torch
    from guard_eval import SAMPLES, cut_prompts, prepare_prompt
    from luaguard.completion.generate import _eos_ids, _logits_width, generate_ids
    from luaguard.guard.matcher import GuardOptions, guard_for
    from luaguard.completion.loading import load_model
    from luaguard.guard.table_cache import token_table
    from luaguard.lsp.heap import settle_heap
    from luaguard.project.index import load_project

    torch.set_num_threads(1)
    lm = load_model(args.model, device="cpu")
    project = load_project(SAMPLES)
    eos = _eos_ids(lm)
    table = token_table(lm.tokenizer, _logits_width(lm), eos_ids=eos)
    guard = guard_for(table, project, GuardOptions())
    space = guard.space
    settle_heap()
    n_path = min(args.prompts, args.prompts * 120 // 220)
    prompts = cut_prompts(n_path, args.prompts - n_path, args.seed)
    prepared = [prepare_prompt(lm, project, space, rel, text, off, args.max_new_tokens)
                for rel, text, off, _kind in prompts]
    fixed = guard.matcher("local x = 1\n").mask()
    configs = ["plain", "guarded"] + (["floor"] if args.floor else [])
    temp = 0.0 if args.mode == "greedy" else args.temperature
    print(f"{len(prepared)} prompts, {args.max_new_tokens} new tokens, {args.mode}; vocabulary {table.size}")
    gc.collect()
    for pass_name in ("first pass (guard caches cold)", "second pass (the same prompts: caches warm)"):
        acc = {c: {} for c in configs}
        total = dict.fromkeys(configs, 0.0)
        for i, (scripts, analysis, prompt) in enumerate(prepared):
            for c in configs:
                t0 = time.perf_counter()
                matcher = None
                if c == "guarded":
                    matcher = guard.matcher(prompt.guard_text, scripts=scripts, analysis=analysis,
                                            shift=len(prompt.header))
                elif c == "floor":
                    matcher = _FixedMask(guard, fixed)
                acc[c]["priming"] = acc[c].get("priming", 0.0) + time.perf_counter() - t0
                generate_ids(lm.model, prompt.input_ids, max_new_tokens=args.max_new_tokens, eos_ids=eos,
                             matcher=matcher, temperature=temp, seed=args.seed + i, device=lm.device,
                             phases=acc[c], check_first=not args.mask_every_step)
                total[c] += time.perf_counter() - t0
        print()
        print(pass_name)
        plain = acc["plain"]
        per_plain = total["plain"] / plain["steps"]
        print(f"{'us per step':<14}" + "".join(f"{p:>12}" for p in PHASES) + f"{'total':>10}{'ratio/step':>12}"
              f"{'ratio':>8}{'new masks':>11}{'refused':>10}")
        for c in configs:
            a = acc[c]
            n = a["steps"]
            cells = "".join(f"{1e6 * a.get(p, 0.0) / n:>12.1f}" for p in PHASES)
            per = total[c] / n
            new = (f"{100 * a.get('masks_new', 0) / n:>10.1f}%{100 * a.get('refused', 0) / n:>10.1f}%" if c == "guarded"
                   else f"{'':>21}")
            print(f"{c:<14}{cells}{1e6 * per:>10.1f}{per / per_plain:>12.3f}{total[c] / total['plain']:>8.3f}{new}")
        g = acc["guarded"]
        extra = {p: 1e6 * (g.get(p, 0.0) / g["steps"] - plain.get(p, 0.0) / plain["steps"]) for p in PHASES}
        print("guarded - plain, us per step: " + ", ".join(f"{p} {v:+.1f}" for p, v in extra.items() if abs(v) >= 0.05)
              + f"; steps {g['steps']} vs {plain['steps']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
