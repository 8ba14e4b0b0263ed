"""Replay guard_eval's guarded token sequences through fresh guards: mask timings that
resist a noisy host, the p99 band taken apart, and a fingerprint of every mask.

``bench/guard_eval.py`` times each mask once, in one pass, on a shared VM whose speed
swings by up to 2x between runs - too coarse to tell a 10% change from the host's mood.
This script:

1. generates (or reads back, ``--seqs FILE``) the token sequences of guard_eval's guarded
   runs: the same 220 prompts, greedy and sampled, 32 new tokens, default model;
2. replays them ``--reps`` times, each time through a **new** guard (every cache of the
   mask engine cold, as in guard_eval's padded replay; the project's name tables are built
   once beforehand, as guard_eval's first pass builds them), at the model's own vocabulary or
   padded to ``--pad-size`` ids (0: not padded) with guard_eval's synthetic tokens, and
   prints p50/p99/mean of each step's **minimum over the repetitions** (a step slowed by the
   host in one repetition is not slowed in all) next to the figures of each repetition;
3. with ``--split``, times what the mask engine calls back into Python during each step
   (:class:`luaguard.guard.vocab._StateTables`: automaton steps, byte classes, projections,
   delegates) and prints their share of the p99 band's steps; the remainder is the compiled
   walk, the mask's assembly and applying it (the call-backs are timed through a wrapper,
   which adds ~0.3 us to each);
4. with ``--dump FILE`` writes a fingerprint of each step's mask (SHA-1 of whether it keeps
   allowed or banned ids, EOS, dead end, the count and the sorted ids) and with
   ``--compare FILE`` checks the masks against such a file step by step (exit 1 at the
   first difference): the acceptance check for any change that must not change a mask
   (a faster automaton, a new walk, a cache).  Fingerprints are taken in the first replay,
   outside the timed part (each mask then keeps its id array: that replay's later timings
   may differ slightly).

Run: ``python bench/guard_replay.py`` (152,064 ids, 3 repetitions), ``--pad-size 0`` for the
model's own 4,096, ``--split``, ``--dump masks.json`` then ``--compare masks.json`` after a
change (and ``LUAGUARD_PURE_PYTHON_WALK=1`` to compare the Python walk).  Generating the
sequences takes ~1.5 min on the development VM; ``--seqs FILE`` keeps them for the next run.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from guard_eval import SAMPLES, cut_prompts, pct, prepare_prompt, synthetic_tokens  # noqa: E402

#: the mask engine's call-backs into Python that --split times (see _StateTables)
CALLBACKS = ("trans_miss", "cmap", "trunc_miss", "gproj_miss", "deleg_miss")


def make_sequences(lm, guard, prepared: list[tuple], max_new_tokens: int, seed: int, temperature: float) -> list[dict]:
    """The guarded runs of guard_eval (greedy, then sampled, per prompt) as
    ``{"prompt": i, "temperature": t, "ids": [...]}`` records; ``prepared``: per prompt,
    what guard_eval's ``prepare_prompt`` gives (scripts, analysis, prompt)."""
    from luaguard.completion.generate import _eos_ids, generate_ids

    eos = _eos_ids(lm)
    out = []
    for i, (scripts, analysis, prompt) in enumerate(prepared):
        for temp in (0.0, temperature):
            m = guard.matcher(prompt.guard_text, scripts=scripts, analysis=analysis, shift=len(prompt.header))
            res = generate_ids(lm.model, prompt.input_ids, max_new_tokens=max_new_tokens, eos_ids=eos, matcher=m,
                               temperature=temp, seed=seed + i, device=lm.device)
            out.append({"prompt": i, "temperature": temp, "ids": [int(t) for t in res.ids]})
    return out


def fingerprint(mask) -> str:
    """SHA-1 of what a mask allows: kept side, EOS, dead end, count and sorted ids."""
    import numpy as np

    ids = np.sort(mask.ids).astype("<i8", copy=False)
    head = f"{int(mask.allow)}:{int(mask.eos)}:{int(mask.dead_end)}:{mask.n_allowed}:".encode()
    return hashlib.sha1(head + ids.tobytes()).hexdigest()


class _Split:
    """Times the mask engine's call-backs (class-level wrappers, outermost call only)."""

    def __init__(self) -> None:
        from luaguard.guard import vocab

        self.acc = dict.fromkeys(CALLBACKS, 0.0)
        self.depth = 0
        for name in CALLBACKS:
            setattr(vocab._StateTables, name, self._wrap(getattr(vocab._StateTables, name), name))

    def _wrap(self, fn, name):
        split = self

        def timed(tables, *args):
            if split.depth:
                return fn(tables, *args)
            split.depth = 1
            t0 = time.perf_counter()
            try:
                return fn(tables, *args)
            finally:
                split.acc[name] += time.perf_counter() - t0
                split.depth = 0

        return timed

    def take(self) -> dict[str, float]:
        got = dict(self.acc)
        for k in self.acc:
            self.acc[k] = 0.0
        return got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pad-size", type=int, default=152064, help="pad the vocabulary to this many ids (0: do not)")
    ap.add_argument("--reps", type=int, default=3, help="replays, each through a new guard")
    ap.add_argument("--seqs", metavar="FILE", help="read the token sequences from FILE, or write them there")
    ap.add_argument("--split", action="store_true", help="time the engine's call-backs into Python")
    ap.add_argument("--dump", metavar="FILE", help="write each step's mask fingerprint (first replay)")
    ap.add_argument("--compare", metavar="FILE", help="check each step's mask against a --dump file")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    args = ap.parse_args(argv)
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    if args.pad_size < 0:
        ap.error("--pad-size must be 0 (no padding) or more than the model's vocabulary")

    import numpy as np
    import torch
    from luaguard.guard.automaton import Automaton
    from luaguard.completion.generate import _eos_ids, _logits_width
    from luaguard.guard.matcher import Guard, GuardOptions, guard_for, path_space
    from luaguard.completion.loading import load_model
    from luaguard.guard.table_cache import token_table
    from luaguard.guard.token_bytes import pad_table
    from luaguard.lsp.heap import settle_heap
    from luaguard.project.index import load_project

    torch.set_num_threads(1)
    split = _Split() if args.split else None
    lm = load_model(None, device="cpu")
    project = load_project(SAMPLES)
    table = token_table(lm.tokenizer, _logits_width(lm), eos_ids=_eos_ids(lm))
    if args.pad_size and args.pad_size <= table.size:
        print(f"--pad-size {args.pad_size}: the model's vocabulary already has {table.size} ids")
        return 2
    guard = guard_for(table, project, GuardOptions())
    prompts = cut_prompts(120, 100, args.seed)
    prepared = [prepare_prompt(lm, project, guard.space, rel, text, off, args.max_new_tokens)
                for rel, text, off, _kind in prompts]
    seq_path = Path(args.seqs) if args.seqs else None
    made_with = {"seed": args.seed, "temperature": args.temperature, "max_new_tokens": args.max_new_tokens}
    if seq_path is not None and seq_path.exists():
        try:
            saved = json.loads(seq_path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            print(f"{seq_path}: not a sequences file of this script ({exc}): delete it or pass another --seqs file")
            return 2
        if not isinstance(saved, dict) or saved.get("made_with") != made_with:
            print(f"{seq_path}: sequences made with other settings ({saved.get('made_with') if isinstance(saved, dict) else '?'}"
                  f", not {made_with}): delete it or pass another --seqs file")
            return 2
        seqs = saved["sequences"]
        print(f"sequences: {len(seqs)} read from {seq_path}")
    else:
        t0 = time.perf_counter()
        seqs = make_sequences(lm, guard, prepared, args.max_new_tokens, args.seed, args.temperature)
        print(f"sequences: {len(seqs)} generated in {time.perf_counter() - t0:.0f}s")
        if seq_path is not None:
            seq_path.write_text(json.dumps({"made_with": made_with, "sequences": seqs}))
    work = []
    for seq in seqs:
        if 0 <= seq["prompt"] < len(prepared):
            scripts, analysis, prompt = prepared[seq["prompt"]]
            work.append((prompt.guard_text, scripts, analysis, len(prompt.header), seq["ids"]))
    # the project's name tables, built as guard_eval's first pass builds them
    for text_, scripts, analysis, shift, ids in work:
        m = guard.matcher(text_, scripts=scripts, analysis=analysis, shift=shift)
        for tok in ids:
            m.mask()
            m.consume(tok)
    if args.pad_size:
        table = pad_table(table, args.pad_size, synthetic_tokens(table, args.pad_size - table.size, "words", args.seed))
    space = path_space(project)
    row = torch.zeros(table.size)
    per_rep: list[list[float]] = []
    split_steps: list[dict[str, float]] = []
    prints: list[str] = []
    print(f"vocabulary {table.size}, {sum(len(w[-1]) for w in work)} steps a replay, {args.reps} replays")
    for rep in range(args.reps):
        g = Guard(Automaton(space), table)
        settle_heap()
        times: list[float] = []
        m = mk = None
        t_rep = time.perf_counter()
        for text_, scripts, analysis, shift, ids in work:
            m = g.matcher(text_, scripts=scripts, analysis=analysis, shift=shift)
            for tok in ids:
                if split is not None:
                    split.take()  # (only what this step's mask calls back counts)
                t0 = time.perf_counter()
                mk = m.mask()
                mk.apply_(row)
                times.append((time.perf_counter() - t0) * 1e6)
                if split is not None:
                    got = split.take()
                    if rep == 0:
                        split_steps.append(got)
                if rep == 0 and (args.dump or args.compare):
                    prints.append(fingerprint(mk))
                m.consume(tok)
        per_rep.append(times)
        print(f"  replay {rep + 1}: {time.perf_counter() - t_rep:.2f}s, p50 {pct(times, 0.5):.1f} us, "
              f"p99 {pct(times, 0.99):.1f} us, mean {statistics.fmean(times):.1f} us, "
              f"masks computed {g.engine.stats['masks']}", flush=True)
        del g, m, mk
        gc.collect()
    best = np.min(np.array(per_rep), axis=0).tolist()
    print(f"per step, minimum over {args.reps} replays: p50 {pct(best, 0.5):.1f} us, p99 {pct(best, 0.99):.1f} us, "
          f"mean {statistics.fmean(best):.1f} us")
    if split is not None:
        first = per_rep[0]
        order = sorted(range(len(first)), key=first.__getitem__, reverse=True)[: max(1, len(first) // 100)]
        total = statistics.fmean(first[i] for i in order)
        print(f"p99 band of the first replay ({len(order)} steps, mean {total:.0f} us): time in call-backs into Python")
        for name in CALLBACKS:
            v = statistics.fmean(1e6 * split_steps[i][name] for i in order)
            print(f"  {name:<12}{v:>9.1f} us  {100 * v / total:5.1f}%")
        rest = total - sum(statistics.fmean(1e6 * split_steps[i][n] for i in order) for n in CALLBACKS)
        print(f"  {'the rest':<12}{rest:>9.1f} us  {100 * rest / total:5.1f}%  (compiled walk, assembly, apply)")
    if args.dump:
        Path(args.dump).write_text(json.dumps({"vocab": table.size, "masks": prints}))
        print(f"mask fingerprints written to {args.dump}")
    if args.compare:
        ref = json.loads(Path(args.compare).read_text())
        if ref.get("vocab") != table.size or len(ref.get("masks", ())) != len(prints):
            print(f"{args.compare}: made for another vocabulary or other sequences "
                  f"({ref.get('vocab')} ids, {len(ref.get('masks', ()))} steps)")
            return 1
        for i, (a, b) in enumerate(zip(ref["masks"], prints)):
            if a != b:
                print(f"mask of step {i} differs from {args.compare}")
                return 1
        print(f"all {len(prints)} masks identical to {args.compare}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
