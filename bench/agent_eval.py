"""luaguard as agents meet it: the hallucination benchmark's patch and tool-call cases sent
as Claude Code hook payloads and as MCP tool calls, against the CLI's answers; the whole-file
rewrite replay over the real-code corpus; the latency of the hook and of the MCP proxy.

For each case of ``bench/hallucination_eval.py`` (same builder, seed and project):

* a code case (a mutated or untouched script) becomes a Claude Code ``Write`` payload
  (the whole new text) and an ``Edit`` payload (the smallest block of lines that differs,
  grown until it is unique in the file); the reference is ``luaguard check --diff`` of the
  change (``validate_patch`` with the unified diff): both judge what the change introduced;
* a tool-call case becomes an ``mcp__studio__<tool>`` payload; the reference is
  ``luaguard validate``'s verdict for the call (invented and misspelt tool names are left
  out: an agent's MCP client refuses a tool its server does not list, and the hook passes
  tools it does not know).

Printed: per payload type, recall (denied among the cases with an injected hallucination),
false denials (denied among the clean cases), both for the hook and for its reference, and
the cases where they disagree (should be 0); then latency: the hook in process (a new
engine per payload, as each hook process builds one), the hook as a process
(``python -m luaguard hook``, start-up included) and ``validate_tool_call`` through the MCP
server warm (one engine, the SDK's in-process client).  Targets: p50 <= 300 ms per hook
process, <= 5 ms per MCP call warm.

**Rewrite replay** (``--corpus``, default on): every ``.lua``/``.luau`` file inside a Rojo
project of the real-code corpus (``bench/corpus/manifest.json``, or ``--manifest``: whatever
repositories it lists and the cache holds) is sent as a ``Write`` of the file: unchanged, and
with one harmless line appended (a comment) - target 0 denials; and three controls that
must all be denied: a ``TODO`` comment appended, a stray ``end`` appended, a misspelt child
of a closed (Rojo-synced) folder - the script's own parent through ``script.Parent``, else a
folder under the DataModel - inserted before the module's final ``return``.  The engine is built once per project (the hook builds one per payload: same
verdicts, the indexing time is the only difference).

**Proxy latency** (``--proxy-rounds``): the valid tool-call cases sent 8 at a time, straight to
a stand-in upstream (``bench/agent_upstream.py``) and through ``luaguard mcp-proxy`` started
as the agent starts it (a process on stdio, in front of another copy of the upstream); both
are open at once and each round sends the same batch to each, the order alternating, so a
change in the machine's load falls on both.  The proxy's added latency per call is the
difference of the percentiles; the proxy process's CPU time per call is printed beside it
(Linux; it depends far less on what else runs).  Target: p50 <= 5 ms added.

Run: ``python bench/agent_eval.py [--per-kind 40] [--processes 40] [--mcp-calls 300]
[--no-corpus] [--corpus-limit N] [--proxy-rounds 40] [--only corpus|proxy]``.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hallucination_eval import build_cases  # noqa: E402

from luaguard.agents.edits import unified_diff  # noqa: E402
from luaguard.agents.hook import HookOptions, run_hook  # noqa: E402
from luaguard.engine import Engine  # noqa: E402
from luaguard.toolcalls.api import validate_calls, validate_patch  # noqa: E402


def payload(tool: str, tool_input: dict, cwd: Path) -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": tool_input, "tool_use_id": "toolu_bench"}).encode()


def edit_of(old: str, new: str) -> tuple[str, str] | None:
    """(old_string, new_string): the differing block of lines, grown by a line of context
    on each side until old_string occurs once in ``old``; ``None`` if the texts are equal."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
    if not ops:
        return None
    i1, i2, j1, j2 = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
    while True:
        o, n = "".join(a[i1:i2]), "".join(b[j1:j2])
        if o and old.count(o) == 1:
            return o, n
        if i1 == 0 and i2 == len(a):
            return (o, n) if o else None
        if i1 > 0:
            i1, j1 = i1 - 1, j1 - 1
        if i2 < len(a):
            i2, j2 = i2 + 1, j2 + 1


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("project", nargs="?", default=str(HERE.parent / "samples" / "place"))
    ap.add_argument("--per-kind", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--processes", type=int, default=40, help="hook processes to time (start-up included)")
    ap.add_argument("--mcp-calls", type=int, default=300)
    ap.add_argument("--no-corpus", action="store_true", help="skip the whole-file rewrite replay over the corpus")
    ap.add_argument("--corpus-limit", type=int, default=0, help="at most this many files per repository (0: all)")
    ap.add_argument("--manifest", type=Path, default=None, help="the corpus manifest (default bench/corpus/manifest.json)")
    ap.add_argument("--cache", type=Path, default=None, help="the unpacked corpus (default: as bench/corpus/unpack.py)")
    ap.add_argument("--proxy-rounds", type=int, default=40, help="rounds of 8 concurrent calls for the proxy's latency")
    ap.add_argument("--only", choices=("corpus", "proxy"), help="run only this part")
    args = ap.parse_args(argv)
    if args.only == "corpus":
        rewrite_replay(args)
        return 0
    root = Path(args.project).resolve()
    engine = Engine(root)
    cases = build_cases(root, engine, random.Random(args.seed), args.per_kind)
    if args.only == "proxy":
        good = [c.call for c in cases if c.call is not None and c.kind not in ("tool_typo", "tool_invented")
                and isinstance(c.call.get("name"), str) and validate_calls(engine, [c.call])[0]["valid"]]
        proxy_latency(root, good, args.proxy_rounds)
        return 0
    opts = HookOptions(agent="claude", project=root, timeout=60)
    rows: dict[str, Counter] = {"Write": Counter(), "Edit": Counter(), "mcp": Counter()}
    disagree: list[str] = []
    hook_ms: list[float] = []
    samples: list[bytes] = []
    skipped = 0
    for case in cases:
        clean = case.kind.startswith("clean")
        todo = []
        if case.call is not None:
            tool = case.call.get("name") if isinstance(case.call, dict) else None
            if not isinstance(tool, str):
                continue
            if case.kind in ("tool_typo", "tool_invented"):
                skipped += 1  # an MCP client refuses a tool its server does not list; the hook passes it
                continue
            ref = not validate_calls(Engine(root), [case.call])[0]["valid"]
            todo.append(("mcp", payload(f"mcp__studio__{tool}", case.call.get("arguments") or {}, root), ref))
        elif case.text is not None and case.path is not None:
            disk = (root / case.path).read_text(encoding="utf-8")
            ref = disk != case.text and \
                not validate_patch(Engine(root), None, diff=unified_diff(case.path, disk, case.text))["valid"]
            todo.append(("Write", payload("Write", {"file_path": str(root / case.path), "content": case.text}, root), ref))
            e = edit_of(disk, case.text)
            if e is not None:
                ref_e = not validate_patch(Engine(root), None, diff=unified_diff(case.path, disk, case.text))["valid"]
                todo.append(("Edit", payload("Edit", {"file_path": str(root / case.path), "old_string": e[0],
                                                      "new_string": e[1], "replace_all": False}, root), ref_e))
        for typ, data, ref in todo:
            t0 = time.perf_counter()
            resp = run_hook(data, opts)
            hook_ms.append((time.perf_counter() - t0) * 1e3)
            denied = resp.exit_code == 2
            c = rows[typ]
            c["clean" if clean else "bad"] += 1
            c[("clean" if clean else "bad") + "_hook"] += denied
            c[("clean" if clean else "bad") + "_ref"] += ref
            if denied != ref:
                disagree.append(f"{typ} {case.kind} {case.path or ''}: hook {'deny' if denied else 'pass'}, "
                                f"reference {'error' if ref else 'clean'}")
            if len(samples) < args.processes and (len(samples) % 3 == 0 or typ == "Edit"):
                samples.append(data)
    print(f"{len(cases)} cases from {root} (per kind <= {args.per_kind}, seed {args.seed})\n")
    print(f"{'payload':<8}{'bad':>6}{'hook recall':>13}{'CLI recall':>12}{'clean':>7}{'hook false deny':>17}{'CLI false':>11}")
    for typ, c in rows.items():
        if not c["bad"] and not c["clean"]:
            continue
        r = lambda k, n: f"{100 * c[k] / n:.1f}%" if n else "-"  # noqa: E731
        print(f"{typ:<8}{c['bad']:>6}{r('bad_hook', c['bad']):>13}{r('bad_ref', c['bad']):>12}{c['clean']:>7}"
              f"{r('clean_hook', c['clean']):>17}{r('clean_ref', c['clean']):>11}")
    print(f"(tool_typo / tool_invented calls left out of the mcp row: {skipped}; a tool the upstream server does "
          f"not list is refused by the agent's MCP client, and the hook passes tools it does not know)")
    print(f"\ncases where the hook and the CLI disagree: {len(disagree)}")
    for d in disagree[:10]:
        print("  " + d)
    print(f"\nhook in process (new engine per payload): p50 {pct(hook_ms, .5):.1f} ms, p99 {pct(hook_ms, .99):.1f} ms "
          f"over {len(hook_ms)} payloads")
    proc_ms = []
    for data in samples:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "luaguard", "hook", "--project", str(root)], input=data,
                       capture_output=True, timeout=120)
        proc_ms.append((time.perf_counter() - t0) * 1e3)
    print(f"hook process (start-up included): p50 {pct(proc_ms, .5):.0f} ms, p99 {pct(proc_ms, .99):.0f} ms "
          f"over {len(proc_ms)} processes (target p50 <= 300 ms)")
    if not args.no_corpus:
        rewrite_replay(args)
    try:
        from mcp import Client

        from luaguard.agents.mcp_server import build_server
    except ImportError:
        print("MCP server: the mcp extra is not installed (pip install -e '.[mcp]'); skipped")
        return 0
    calls = [c.call for c in cases if c.call is not None][: args.mcp_calls]

    # proxied: the same tool-call cases through luaguard mcp-proxy in front of a stand-in upstream
    import tempfile

    from luaguard.agents.proxy import build_proxy
    from luaguard.toolcalls.schemas import BUILTIN_TOOLS

    tool_cases = [c for c in cases if c.call is not None and c.kind not in ("tool_typo", "tool_invented")
                  and isinstance(c.call.get("name"), str)]
    with tempfile.TemporaryDirectory() as tmp:
        ann = Path(tmp) / "builtin.json"
        ann.write_text(json.dumps({"tools": list(BUILTIN_TOOLS)}))
        proxy = build_proxy(Engine(root), [sys.executable, str(HERE / "agent_upstream.py")],
                            annotation_files=(str(ann),), timeout=60)

        async def proxied() -> tuple[Counter, list[float], int]:
            c = Counter()
            times = []
            wrong = 0
            async with Client(proxy) as cl:
                await cl.list_tools()
                for case in tool_cases:
                    ref = not validate_calls(Engine(root), [case.call])[0]["valid"]
                    t0 = time.perf_counter()
                    res = await cl.call_tool(case.call["name"], case.call.get("arguments") or {})
                    times.append((time.perf_counter() - t0) * 1e3)
                    denied = bool(res.is_error) and "not carried out" not in res.content[0].text
                    k = "clean" if case.kind.startswith("clean") else "bad"
                    c[k] += 1
                    c[k + "_proxy"] += denied
                    c[k + "_ref"] += ref
                    wrong += denied != ref
            return c, times, wrong

        pc, ptimes, pwrong = asyncio.run(proxied())
    print(f"\nproxied MCP calls (luaguard mcp-proxy, upstream listing the built-in tools without roles, "
          f"roles from an annotations file): {pc['bad']} bad, recall {100 * pc['bad_proxy'] / max(pc['bad'], 1):.1f}% "
          f"(CLI {100 * pc['bad_ref'] / max(pc['bad'], 1):.1f}%); {pc['clean']} clean, false rejections "
          f"{100 * pc['clean_proxy'] / max(pc['clean'], 1):.1f}% (CLI {100 * pc['clean_ref'] / max(pc['clean'], 1):.1f}%); "
          f"disagreements {pwrong}; per call p50 {pct(ptimes, .5):.2f} ms, p99 {pct(ptimes, .99):.2f} ms "
          f"(forwarded calls include the upstream's round trip)")

    async def warm() -> list[float]:
        out = []
        async with Client(build_server(Engine(root))) as cl:
            await cl.call_tool("validate_tool_call", {"call": calls[0]})
            for call in calls:
                t0 = time.perf_counter()
                await cl.call_tool("validate_tool_call", {"call": call})
                out.append((time.perf_counter() - t0) * 1e3)
        return out

    mcp_ms = asyncio.run(warm())
    print(f"MCP validate_tool_call, warm (in-process client): p50 {pct(mcp_ms, .5):.2f} ms, "
          f"p99 {pct(mcp_ms, .99):.2f} ms, mean {statistics.fmean(mcp_ms):.2f} ms over {len(mcp_ms)} calls "
          f"(target <= 5 ms)")
    if args.proxy_rounds > 0:
        good = [c.call for c in tool_cases if validate_calls(Engine(root), [c.call])[0]["valid"]]
        proxy_latency(root, good, args.proxy_rounds)
    return 0


# -- the whole-file rewrite replay over the corpus --------------------------------------------
HARMLESS = "-- reviewed\n"
CONTROLS = ("todo", "stray_end", "bad_path")


def _bad_path(project, rel: str, rng: random.Random) -> str | None:
    """A statement naming a misspelt child (a letter dropped; not a member of the class) of a
    closed folder the project syncs: a sibling of a ModuleScript through ``script.Parent``
    when its parent is closed (``local _probe = script.Parent.Utl``), else a child of a closed
    folder under the DataModel (``game.ReplicatedStorage.Shared.Utl``); ``None`` when there is
    none."""

    def misspelt(node) -> str | None:
        names = [c.name for c in node.all_children() if len(c.name) > 3 and c.name.isidentifier()]
        if not names:
            return None
        name = rng.choice(names)
        i = rng.randrange(1, len(name))
        bad = name[:i] + name[i + 1:]
        # not a child, and not a member of the class either (Parents -> Parent is a property)
        if not bad.isidentifier() or node.child(bad) is not None or project.api.member(node.class_name, bad) is not None:
            return None
        return bad

    mine = project.file_instances.get(rel) or []
    parent = mine[0].parent if mine else None
    # `script` is where the file is only for a ModuleScript: a Script or LocalScript kept in
    # a storage service is a template cloned elsewhere at run time
    if parent is not None and parent.open_reason is None and mine[0].class_name == "ModuleScript":
        bad = misspelt(parent)
        if bad:
            return f"local _probe = script.Parent.{bad}\n"
    if project.root.class_name != "DataModel":
        return None
    nodes = [n for n in project.root.descendants() if n.open_reason is None and n.dir_path is not None]
    rng.shuffle(nodes)
    for node in nodes[:20]:
        bad = misspelt(node)
        if bad:
            return f"local _probe = {node.path}.{bad}\n"
    return None


def _before_return(text: str, line: str) -> str:
    """``line`` inserted before the module's final top-level ``return`` (or appended)."""
    lines = text.splitlines(keepends=True)
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("return") and (len(lines[i]) == 6 or not lines[i][6].isalnum()):
            return "".join(lines[:i]) + line + "".join(lines[i:])
    return text + ("" if not text or text.endswith("\n") else "\n") + line


def rewrite_replay(args) -> None:
    """See the module docstring (**Rewrite replay**)."""
    import tempfile

    sys.path.insert(0, str(HERE / "corpus"))
    import luaguard.engine as E
    from unpack import default_cache, load_manifest, slug

    from luaguard.workspace import find_project_root

    cache = args.cache or default_cache()
    entries = load_manifest(args.manifest) if args.manifest else load_manifest()
    engines: dict[Path, object] = {}
    real_open = E.open_engine

    def cached_open(root, **kw):
        root = Path(root)
        if root not in engines:
            engines[root] = real_open(root, **kw)
        return engines[root]

    E.open_engine = cached_open
    rng = random.Random(args.seed)
    rows = Counter()
    misses: list[str] = []
    per_repo: dict[str, Counter] = {}
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as stash:
            opts = HookOptions(agent="claude", timeout=120, stash_dir=Path(stash))
            for entry in entries:
                base = cache / slug(entry["repo"])
                if not base.is_dir():
                    print(f"  (not in the cache: {entry['repo']})")
                    continue
                files = []
                roots: dict[Path, Path | None] = {}
                for dirpath, dirnames, filenames in os.walk(base):
                    dirnames[:] = sorted(d for d in dirnames if d != ".git")
                    for name in sorted(filenames):
                        if name.endswith((".lua", ".luau")):
                            d = Path(dirpath)
                            if d not in roots:
                                roots[d] = find_project_root(d)
                            root = roots[d]
                            if root is not None and str(root).startswith(str(base)):
                                files.append((root, d / name))
                if args.corpus_limit:
                    files = files[:args.corpus_limit]
                c = per_repo.setdefault(entry["repo"], Counter())
                for root, path in files:
                    text = path.read_bytes().decode("utf-8", errors="replace")
                    try:
                        project = cached_open(root).project
                    except E.ProjectUnreadable:
                        c["unreadable"] += 1
                        continue
                    rel = path.relative_to(root).as_posix()
                    probe = _bad_path(project, rel, rng) if project is not None else None
                    variants = [("unchanged", text), ("appended", text + ("" if text.endswith("\n") or not text else "\n")
                                                       + HARMLESS),
                                ("todo", text + ("\n" if text and not text.endswith("\n") else "") + "-- TODO: finish this\n"),
                                ("stray_end", text + ("\n" if text and not text.endswith("\n") else "") + "end\n")]
                    if probe is not None:
                        variants.append(("bad_path", _before_return(text, probe)))
                    c["files"] += 1
                    for kind, content in variants:
                        resp = run_hook(payload("Write", {"file_path": str(path), "content": content}, root), opts)
                        denied = resp.exit_code == 2
                        rows[kind] += 1
                        rows[kind + "_denied"] += denied
                        c[kind] += 1
                        c[kind + "_denied"] += denied
                        should = kind in CONTROLS
                        if denied != should and len(misses) < 25:
                            why = resp.stderr.strip().splitlines()[0][:300] if resp.stderr.strip() else "(passed)"
                            misses.append(f"{kind} {path.relative_to(cache)}: {why}")
    finally:
        E.open_engine = real_open
    took = time.perf_counter() - t0
    print(f"\nwhole-file rewrite replay over the corpus ({len(per_repo)} repositories, {rows['unchanged']} files "
          f"inside Rojo projects, {len(engines)} projects, {took:.0f} s):")
    print(f"{'payload':<12}{'sent':>7}{'denied':>8}   target")
    for kind, target in (("unchanged", "0"), ("appended", "0"), ("todo", "all"), ("stray_end", "all"),
                         ("bad_path", "all")):
        print(f"{kind:<12}{rows[kind]:>7}{rows[kind + '_denied']:>8}   {target}")
    print(f"false denials {rows['unchanged_denied'] + rows['appended_denied']} of {rows['unchanged'] + rows['appended']}; "
          f"controls missed {sum(rows[k] - rows[k + '_denied'] for k in CONTROLS)} of {sum(rows[k] for k in CONTROLS)}")
    bad_repos = [r for r, c in per_repo.items() if c["unchanged_denied"] or c["appended_denied"]
                 or any(c[k] != c[k + "_denied"] for k in CONTROLS)]
    for r in bad_repos:
        c = per_repo[r]
        print(f"  {r}: " + ", ".join(f"{k} {c[k + '_denied']}/{c[k]}" for k in ("unchanged", "appended", *CONTROLS)))
    for m in misses:
        print("  miss: " + m)


# -- the proxy's added latency ----------------------------------------------------------------
def _proxy_cpu_s() -> dict[int, float]:
    """CPU seconds (user + system) of each ``luaguard mcp-proxy`` process this one started,
    by pid, from ``/proc`` (empty where there is none)."""
    out: dict[int, float] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return out
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"mcp-proxy" in cmd and int(stat[1]) == os.getpid():  # stat[1]: the parent's pid
            out[pid] = (int(stat[11]) + int(stat[12])) / tick
    return out


def proxy_latency(root: Path, calls: list[dict], rounds: int, width: int = 8) -> None:
    """See the module docstring (**Proxy latency**)."""
    import tempfile

    from mcp import Client, StdioServerParameters

    from luaguard.toolcalls.schemas import BUILTIN_TOOLS

    if not calls:
        print("proxy latency: no valid tool-call cases")
        return
    upstream = [sys.executable, str(HERE / "agent_upstream.py")]

    rejected: list[str] = []

    async def measure(direct_params, proxy_params) -> tuple[list[float], list[float], float | None]:
        """Both clients open at once; each round sends the same batch to each, in turn
        (which goes first alternates), so both see the same machine."""
        times: tuple[list[float], list[float]] = ([], [])
        cpu = None
        async with Client(direct_params) as direct, Client(proxy_params) as proxied:
            clients = (direct, proxied)
            for cl in clients:
                await cl.list_tools()

            async def one(which: int, call) -> None:
                t0 = time.perf_counter()
                res = await clients[which].call_tool(call["name"], call.get("arguments") or {})
                if r >= 2:  # after the warm-up rounds
                    times[which].append((time.perf_counter() - t0) * 1e3)
                if which == 1 and res.is_error and "not carried out" not in res.content[0].text:
                    rejected.append(call["name"])

            for r in range(rounds + 2):
                if r == 2:
                    cpu = _proxy_cpu_s()
                batch = [calls[(r * width + i) % len(calls)] for i in range(width)]
                for which in ((0, 1) if r % 2 else (1, 0)):
                    await asyncio.gather(*(one(which, c) for c in batch))
            after = _proxy_cpu_s()
            spent = [after[p] - cpu[p] for p in after if cpu and p in cpu]
        return times[0], times[1], (spent[0] if len(spent) == 1 else None)

    with tempfile.TemporaryDirectory() as tmp:
        ann = Path(tmp) / "builtin.json"
        ann.write_text(json.dumps({"tools": list(BUILTIN_TOOLS)}))
        env = dict(os.environ)
        direct, proxied, cpu_s = asyncio.run(measure(
            StdioServerParameters(command=upstream[0], args=upstream[1:], env=env),
            StdioServerParameters(command=sys.executable, env=env,
                                  args=["-m", "luaguard", "mcp-proxy", "--project", str(root), "--annotations", str(ann),
                                        "--", *upstream])))
    d50, d99, p50, p99 = pct(direct, .5), pct(direct, .99), pct(proxied, .5), pct(proxied, .99)
    cpu = f"; the proxy's CPU {1e3 * cpu_s / len(proxied):.2f} ms per call" if cpu_s is not None and proxied else ""
    print(f"\nmcp-proxy added latency, {width} concurrent calls x {rounds} rounds ({len(proxied)} calls, valid "
          f"tool-call cases, upstream answers 'ok'; direct and proxied batches alternate): direct p50 {d50:.2f} ms / "
          f"p99 {d99:.2f} ms; through the proxy p50 {p50:.2f} ms / p99 {p99:.2f} ms; added p50 {p50 - d50:.2f} ms, "
          f"p99 {p99 - d99:.2f} ms (target p50 <= 5 ms){cpu}; calls the proxy rejected: {len(rejected)} (should be 0)")


if __name__ == "__main__":
    raise SystemExit(main())
