"""vLLM with luaguard's logits processor: throughput guarded / unguarded, and the guard's own
time per row per step.  Run inside the serving venv (``tests/serving/run.sh`` makes it)::

    python bench/serving.py [--prompts 64] [--max-tokens 32]

1. One ``LLM`` (the shipped default model, CPU) with the processor loaded; for 1, 8 and 64
   concurrent requests (submitted together, so vLLM batches them), greedy, ``--max-tokens``
   new tokens each: generated tokens per second with every request guarded and with none
   (opt-out requests: the processor is loaded but has no rows), and their ratio.  Each figure
   is the best of ``--reps`` runs.
2. The guard's own cost: the processor driven in this process exactly as vLLM drives it
   (``update_state`` with the batch's added rows, then ``apply`` on a logits tensor each step,
   the rows' live output lists growing by the tokens vLLM generated in step 1) for 1, 8 and 64
   rows: microseconds per guarded row per step, cold (a new project index and guard: every
   mask computed) and warm (the same sequences again).  Target: warm <= 10 us per row per step
   at 64 rows.

``--guard-only [--device cuda]`` measures only part 2, with the logits on the device, the
sequences from transformers' guarded greedy decoding, and - where vLLM is not installed (a GPU
machine without network) - stand-in modules for the V1 interface types the processor imports.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "serving"))
PLACE = REPO / "samples" / "place"
MODEL = REPO / "server" / "luaguard" / "data" / "model"


def install_standins() -> None:
    """Where vLLM is not installed (``--guard-only`` on a machine without it): stand-in
    modules for the interface types the processor imports (tests/serving/vllm_standins.py)."""
    import vllm_standins

    sys.modules.update(vllm_standins.modules())


def hf_sequences(items, device: str, max_tokens: int) -> list[list[int]]:
    """Guarded greedy continuations from transformers with ``GuardLogitsProcessor`` (what
    vLLM would generate for the same requests: tests/serving/check_vllm.py checks they agree)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList

    from luaguard.guard.processor import GuardLogitsProcessor
    from luaguard.serving.config import ProjectRegistry

    tok = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModelForCausalLM.from_pretrained(MODEL).to(device).eval()
    proj = ProjectRegistry({"place": PLACE}).require("place")
    guard = proj.guard(tok, model.config.vocab_size)
    out = []
    for rel, prompt, ids in items:
        proc = GuardLogitsProcessor(guard, [prompt], scripts=proj.scripts(rel))
        with torch.no_grad():
            res = model.generate(torch.tensor([ids], device=device), attention_mask=torch.ones(1, len(ids), dtype=torch.long, device=device),
                                 logits_processor=LogitsProcessorList([proc]), do_sample=False, max_new_tokens=max_tokens,
                                 min_new_tokens=max_tokens, pad_token_id=tok.eos_token_id)
        out.append(res[0, len(ids):].tolist())
    return out


def guard_only(args) -> int:
    """``--guard-only``: the guard's own time with logits on ``--device`` (no vLLM engine)."""
    try:
        import vllm  # noqa: F401
    except ImportError:
        install_standins()
    import torch
    from transformers import AutoConfig, AutoTokenizer

    from check_vllm import prompts
    from luaguard.serving.vllm import LuaguardLogitsProcessor

    tok = AutoTokenizer.from_pretrained(MODEL)
    items = prompts(tok, args.prompts)
    vocab = AutoConfig.from_pretrained(MODEL).vocab_size
    dev = args.device
    name = torch.cuda.get_device_name(0) if dev.startswith("cuda") else "CPU"
    seqs = hf_sequences(items, dev, args.max_tokens)
    print(f"guard only, logits on {dev} ({name}), vLLM interface: {sys.modules['vllm'].__version__}; "
          f"{args.max_tokens} tokens per row")
    print(f"{'rows':>6} {'apply cold':>11} {'apply warm':>11} {'add cold':>9} {'add warm':>9}  (us per row per step; ms per added row)")
    from types import SimpleNamespace as NS

    from vllm import SamplingParams as SP

    for n in (1, 8, 64):
        batch = [items[i % len(items)] for i in range(n)]
        outs = [seqs[i % len(seqs)] for i in range(n)]
        cold = drive(batch, outs, vocab, dev)
        mc = NS(tokenizer=str(MODEL), tokenizer_revision=None, get_vocab_size=lambda: vocab)
        warm = []
        for _ in range(3):
            proc = LuaguardLogitsProcessor(NS(model_config=mc), torch.device(dev), False)
            warm.append(_run(proc, batch, outs, vocab, SP, dev))
        print(f"{n:>6} {cold[0]:>11.1f} {statistics.median(w[0] for w in warm):>11.1f} {cold[1]:>9.2f} "
              f"{statistics.median(w[1] for w in warm):>9.2f}")
    return 0


def drive(rows: list[tuple[str, str, list[int]]], outputs: list[list[int]], vocab: int,
          device: str = "cpu") -> tuple[float, float]:
    """(microseconds of ``apply`` per guarded row per step, milliseconds of ``update_state``
    per added row) of a fresh processor, with a new project index (a cold guard)."""
    import torch
    from vllm import SamplingParams
    from vllm.v1.sample.logits_processor import BatchUpdate

    from luaguard.serving.config import ProjectRegistry
    from luaguard.serving.vllm import LuaguardLogitsProcessor

    LuaguardLogitsProcessor._registry = ProjectRegistry({"place": PLACE})  # a new index: cold guard
    mc = SimpleNamespace(tokenizer=str(MODEL), tokenizer_revision=None, get_vocab_size=lambda: vocab)
    proc = LuaguardLogitsProcessor(SimpleNamespace(model_config=mc), torch.device(device), False)
    return _run(proc, rows, outputs, vocab, SamplingParams, device)


def _run(proc, rows, outputs, vocab, SamplingParams, device: str = "cpu") -> tuple[float, float]:
    import torch
    from vllm.v1.sample.logits_processor import BatchUpdate

    live: list[list[int]] = [[] for _ in rows]
    added = [(i, SamplingParams(extra_args={"luaguard": True, "luaguard_project": "place", "luaguard_file": r,
                                            "luaguard_prompt": p}), ids, live[i])
             for i, (r, p, ids) in enumerate(rows)]
    t_add = time.perf_counter()
    proc.update_state(BatchUpdate(batch_size=len(rows), removed=[], added=added, moved=[]))
    t_add = time.perf_counter() - t_add
    logits = torch.zeros(len(rows), vocab, device=device)
    cuda = device.startswith("cuda")
    total = 0.0
    row_steps = 0
    for step in range(max(len(o) for o in outputs)):
        t0 = time.perf_counter()
        proc.apply(logits)
        if cuda:
            torch.cuda.synchronize()
        total += time.perf_counter() - t0
        row_steps += sum(1 for o in outputs if step < len(o))
        for i, o in enumerate(outputs):
            if step < len(o):
                live[i].append(o[step])
    return 1e6 * total / max(row_steps, 1), 1e3 * t_add / len(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--guard-only", action="store_true",
                    help="only the guard's own time, no vLLM engine (stand-in interface types where vLLM is missing)")
    ap.add_argument("--device", default="cpu", help="where the logits live for --guard-only (cuda: a GPU)")
    args = ap.parse_args()
    if args.guard_only:
        return guard_only(args)
    os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "0")
    from transformers import AutoTokenizer
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    from check_vllm import prompts
    from luaguard.serving.config import ProjectRegistry
    from luaguard.serving.vllm import LuaguardLogitsProcessor

    os.environ.setdefault("LUAGUARD_PROJECTS", f"place={PLACE}")
    tok = AutoTokenizer.from_pretrained(MODEL)
    items = prompts(tok, args.prompts)
    llm = LLM(model=str(MODEL), logits_processors=[LuaguardLogitsProcessor], gpu_memory_utilization=0.3,
              max_model_len=512, seed=0, enforce_eager=True)

    def params(guarded: bool, r: str, p: str):
        extra = {"luaguard": True, "luaguard_project": "place", "luaguard_file": r, "luaguard_prompt": p} if guarded else None
        return SamplingParams(temperature=0.0, max_tokens=args.max_tokens, ignore_eos=True, extra_args=extra)

    llm.generate([TokensPrompt(prompt_token_ids=items[0][2])], [params(True, items[0][0], items[0][1])])  # warm-up
    print(f"vLLM {__import__('vllm').__version__} (CPU), default model, {args.max_tokens} new tokens per request, "
          f"greedy, best of {args.reps}")
    print(f"{'concurrent':>10} {'unguarded tok/s':>16} {'guarded tok/s':>14} {'guarded/unguarded':>18}")
    outputs: dict[int, list[list[int]]] = {}
    for n in (1, 8, 64):
        batch = [items[i % len(items)] for i in range(n)]
        reqs = [TokensPrompt(prompt_token_ids=ids) for _r, _p, ids in batch]
        rates = {}
        for guarded in (False, True):
            best = float("inf")
            for _ in range(args.reps):
                t0 = time.perf_counter()
                outs = llm.generate(reqs, [params(guarded, r, p) for r, p, _ids in batch], use_tqdm=False)
                best = min(best, time.perf_counter() - t0)
            toks = sum(len(o.outputs[0].token_ids) for o in outs)
            rates[guarded] = toks / best
            if guarded:
                outputs[n] = [list(o.outputs[0].token_ids) for o in outs]
        print(f"{n:>10} {rates[False]:>16.0f} {rates[True]:>14.0f} {rates[True] / rates[False]:>18.3f}")
    vocab = llm.llm_engine.model_config.get_vocab_size() if hasattr(llm, "llm_engine") else tok.vocab_size
    del llm
    print("\nguard's own time in this process: apply, us per guarded row per step; update_state (priming "
          "the row's prompt), ms per added row")
    print(f"{'rows':>6} {'apply cold':>11} {'apply warm':>11} {'add cold':>9} {'add warm':>9}")
    for n in (1, 8, 64):
        batch = [items[i % len(items)] for i in range(n)]
        cold = drive(batch, outputs[n], vocab)
        # warm: the same processor class and project (guard and mask caches filled)
        from types import SimpleNamespace as NS

        import torch
        from vllm import SamplingParams as SP

        mc = NS(tokenizer=str(MODEL), tokenizer_revision=None, get_vocab_size=lambda: vocab)
        warm_runs = []
        for _ in range(3):
            proc = LuaguardLogitsProcessor(NS(model_config=mc), torch.device("cpu"), False)
            warm_runs.append(_run(proc, batch, outputs[n], vocab, SP))
        warm = statistics.median(w[0] for w in warm_runs)
        add_warm = statistics.median(w[1] for w in warm_runs)
        print(f"{n:>6} {cold[0]:>11.1f} {warm:>11.1f} {cold[1]:>9.2f} {add_warm:>9.2f}")
    print("(target: warm <= 10 us per row per step at 64 rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
