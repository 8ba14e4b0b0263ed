#!/usr/bin/env python3
"""Scale benchmark: generated Rojo projects of 1k, 10k and 50k script files.

Usage::

    python bench/scale.py [--sizes 1000,10000,50000] [--lsp-sizes 1000,10000] [--lint-sample 300]
                          [--edits 40] [--keep DIR]

For each size N it writes a Rojo place of N ``.luau`` files (gameplay-shaped modules of
30-120 lines in directories of about 40, ``init.luau`` folders, ``.meta.json`` files, a
``.model.json`` per directory group, requires between siblings and across services) plus
one 1,000-line module, then prints:

* **cold index**: best of 3 ``load_project`` runs (1 for 50k), peak Python memory
  (``tracemalloc``) and the process's RSS growth;
* **run-time names**: the first scan of every script for names created at run time (the
  cost of the first lint in a fresh engine);
* **incremental re-index** after one file changes: ``ProjectIndex.apply_file_changes`` for
  an edited, an added and a deleted script (median of 30), plus the run-time-name
  rescan of the edited file;
* **lint** p50/p99 per file over a random sample of the project's files
  (``Engine.lint_file``, patch mode, warm engine), and the 1,000-line file;
* **didChange -> publishDiagnostics** latency through ``luaguard serve`` over stdio for the
  1,000-line file (``--lsp-sizes``), with ``debounceMs`` 0 (initializationOptions) and with
  the default 150 ms debounce: time from writing the notification to reading the
  publication of that version.

Targets (issue 7): 10k-file project indexed in <= 1 s cold; incremental update <= 10 ms;
diagnostics for a 1,000-line file published <= 50 ms after the change.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))
sys.path.insert(0, str(HERE.parent / "tests"))

from luaguard.engine import Engine  # noqa: E402
from luaguard.project import load_api, load_project  # noqa: E402

FILES_PER_DIR = 40
SERVICES = ["Players", "ReplicatedStorage", "RunService", "TweenService", "UserInputService", "Workspace"]


def module_text(rng: random.Random, name: str, siblings: list[str], lines: int) -> str:
    """A gameplay-shaped ModuleScript of about ``lines`` lines."""
    out = ["--!strict", f"-- {name}: generated for the scale benchmark", ""]
    used = rng.sample(SERVICES, 3)
    for s in used:
        out.append(f'local {s} = game:GetService("{s}")')
    for sib in rng.sample(siblings, min(2, len(siblings))):
        out.append(f"local {sib} = require(script.Parent.{sib})")
    out.append('local Shared = game:GetService("ReplicatedStorage"):WaitForChild("Shared")')
    out += ["", f"local {name} = {{}}", f"{name}.__index = {name}", ""]
    i = 0
    while len(out) < lines - 3:
        i += 1
        kind = rng.randrange(4)
        if kind == 0:
            out += [f"function {name}.compute{i}(a: number, b: number): number",
                    "\tlocal total = 0",
                    "\tfor k = 1, a do",
                    "\t\ttotal += k * b",
                    "\tend",
                    "\treturn total",
                    "end", ""]
        elif kind == 1:
            out += [f"function {name}:handle{i}(player: Player, payload: {{ [string]: any }})",
                    "\tif typeof(payload) ~= \"table\" then",
                    "\t\treturn",
                    "\tend",
                    "\tlocal character = player.Character",
                    "\tif character and character:FindFirstChild(\"Humanoid\") then",
                    f"\t\tself.count{i} = (self.count{i} or 0) + 1",
                    "\tend",
                    "end", ""]
        elif kind == 2:
            out += [f"local CONFIG_{i} = {{",
                    f"\tname = \"{name}{i}\",",
                    f"\tcooldown = {rng.randint(1, 9)}.5,",
                    "\ttags = { \"a\", \"b\", \"c\" },",
                    "}", ""]
        else:
            out += [f"function {name}.tween{i}(part: BasePart, goal: Vector3)",
                    "\tlocal info = TweenInfo.new(0.25, Enum.EasingStyle.Quad)" if "TweenService" in used else "\tlocal info = nil",
                    "\tpart.Position = goal",
                    "\treturn info",
                    "end", ""]
    out += ["", f"return {name}", ""]
    return "\n".join(out)


def generate(root: Path, n_files: int, seed: int = 1) -> dict:
    """Write the project; returns facts about it (directories, the big file's path)."""
    rng = random.Random(seed)
    project = {
        "name": "Scale",
        "tree": {
            "$className": "DataModel",
            "ReplicatedStorage": {"Shared": {"$path": "src/shared"}},
            "ServerScriptService": {"Server": {"$path": "src/server"}},
            "StarterPlayer": {"StarterPlayerScripts": {"Client": {"$path": "src/client"}}},
            "Workspace": {"$properties": {"Gravity": 196.2}},
        },
    }
    (root / "default.project.json").write_text(json.dumps(project, indent=2))
    areas = [("shared", ""), ("server", ".server"), ("client", ".client")]
    written = 0
    d = 0
    dirs = []
    while written < n_files:
        area, suffix = areas[d % 3]
        folder = root / "src" / area / f"group{d // 30}" / f"Dir{d}"
        folder.mkdir(parents=True, exist_ok=True)
        dirs.append(folder)
        if d % 30 == 0:
            (folder.parent / f"Assets{d // 30}.model.json").write_text(json.dumps(
                {"ClassName": "Folder", "Children": [{"Name": f"Prop{k}", "ClassName": "Part"} for k in range(5)]}))
        count = min(FILES_PER_DIR, n_files - written)
        names = [f"Mod{d}_{i}" for i in range(count)]
        for i, name in enumerate(names):
            if i == 0 and d % 5 == 0:
                fname = "init.luau"
            else:
                fname = f"{name}{suffix if (i % 4 == 0 and suffix) else ''}.luau"
            if i == 1 and d % 7 == 0:
                (folder / f"{name}.meta.json").write_text('{"ignoreUnknownInstances": false}')
            siblings = [x for x in names if x != name][:6]
            (folder / fname).write_text(module_text(rng, name, siblings, rng.randint(30, 120)))
            written += 1
        d += 1
    big = root / "src" / "shared" / "Big.luau"
    big.write_text(module_text(rng, "Big", [], 1000))
    return {"dirs": len(dirs), "big": big}


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * (len(values) - 1)))))
    return values[k]


def rss_kib() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def bench_index(root: Path, n: int, facts: dict, lint_sample: int, rng: random.Random) -> dict:
    api = load_api()
    repeat = 1 if n >= 50_000 else 3
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        index = load_project(root, api=api)
        times.append(time.perf_counter() - t0)
    del index
    rss0 = rss_kib()
    tracemalloc.start()
    index = load_project(root, api=api)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = rss_kib()
    instances = sum(1 for _ in index.root.descendants()) + 1
    scripts = sum(1 for rel in index.file_instances if rel.endswith(".luau"))

    engine = Engine(root, project=index)
    t0 = time.perf_counter()
    engine.snapshot.names()
    names_s = time.perf_counter() - t0

    # Incremental: edit, add, delete one script.
    rels = sorted(r for r in index.file_instances if r.endswith(".luau") and not r.endswith("init.luau"))
    target = rng.choice(rels)
    new_rel = str(Path(target).parent / "BrandNew.luau")
    edit, add, delete, rescan = [], [], [], []
    for k in range(30):
        (root / target).write_text((root / target).read_text() + f"\n-- edit {k}\n")
        t0 = time.perf_counter()
        index.apply_file_changes([target])
        edit.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        snapshot = engine.snapshot.after_changes([root / target])  # what the engine makes after a change on disk
        _ = "Arena" in snapshot.pool()  # what the next lint consults
        rescan.append(time.perf_counter() - t0)
        (root / new_rel).write_text("return {}\n")
        t0 = time.perf_counter()
        index.apply_file_changes([new_rel])
        add.append(time.perf_counter() - t0)
        assert index.instances_for_file(new_rel), "the new file was not indexed"
        (root / new_rel).unlink()
        t0 = time.perf_counter()
        index.apply_file_changes([], [new_rel])
        delete.append(time.perf_counter() - t0)
        assert not index.instances_for_file(new_rel), "the deleted file is still indexed"

    # Lint per file (warm engine).
    sample = rng.sample(rels, min(lint_sample, len(rels)))
    engine.lint_file(root / sample[0])
    lint = []
    for rel in sample:
        t0 = time.perf_counter()
        engine.lint_file(root / rel)
        lint.append(time.perf_counter() - t0)
    big_rel = facts["big"].relative_to(root).as_posix()
    big = []
    for _ in range(10):
        t0 = time.perf_counter()
        found = engine.lint_file(root / big_rel)
        big.append(time.perf_counter() - t0)
    errors = [f for f in found if f.severity == 1]
    return {
        "files": n, "scripts": scripts, "instances": instances, "cold_s": min(times), "peak_mib": peak / 2**20,
        "rss_growth_mib": (rss1 - rss0) / 1024, "names_s": names_s,
        "edit_ms": statistics.median(edit) * 1000, "add_ms": statistics.median(add) * 1000,
        "delete_ms": statistics.median(delete) * 1000, "rescan_ms": statistics.median(rescan) * 1000,
        "lint_p50_ms": pct(lint, 50) * 1000, "lint_p99_ms": pct(lint, 99) * 1000,
        "big_lint_ms": statistics.median(big) * 1000, "big_errors": len(errors),
    }


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "luaguard"
    if script.exists():
        return [str(script), "serve"]
    return [sys.executable, "-P", "-m", "luaguard.cli", "serve"]


def bench_lsp(root: Path, facts: dict, edits: int, log_dir: Path) -> dict:
    from raw_lsp import RawLspClient

    out = {}
    big = facts["big"]
    uri = big.as_uri()
    text = big.read_text()
    for label, init, settings in (("debounce 0 ms", {"debounceMs": 0}, {"debounceMs": 0}), ("debounce 150 ms (default)", None, {})):
        with RawLspClient(root, log_dir / f"server-{label.split()[1]}.log", command=server_command(),
                          settings=settings) as client:
            t0 = time.perf_counter()
            client.initialize(root, init, timeout=300)
            init_s = time.perf_counter() - t0
            sent = client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "luau",
                                                                           "version": 1, "text": text}})
            first = client.wait_for(lambda: client.publications(uri), 300, "the first diagnostics")
            first_s = first[0].at - sent
            lat = []
            lines = text.split("\n")
            for v in range(2, edits + 2):
                line = (v * 37) % (len(lines) - 5) + 3
                change = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                          "text": "-- x\n" if v % 2 == 0 else ""}
                if v % 2 == 1:  # undo the previous insertion
                    prev = ((v - 1) * 37) % (len(lines) - 5) + 3
                    change = {"range": {"start": {"line": prev, "character": 0}, "end": {"line": prev + 1, "character": 0}},
                              "text": ""}
                sent = client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                                                "contentChanges": [change]})
                pub = client.wait_for(lambda: [p for p in client.publications(uri)
                                               if p.message["params"].get("version") == v], 60, f"version {v}")
                lat.append(pub[0].at - sent)
                time.sleep(0.02)
            rss = client.rss_kib()
            client.shutdown()
        out[label] = {"init_s": init_s, "first_publish_s": first_s, "p50_ms": pct(lat, 50) * 1000,
                      "p95_ms": pct(lat, 95) * 1000, "max_ms": max(lat) * 1000, "rss_mib": (rss or 0) / 1024,
                      "edits": len(lat)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--lsp-sizes", default="1000,10000")
    ap.add_argument("--lint-sample", type=int, default=300)
    ap.add_argument("--edits", type=int, default=40)
    ap.add_argument("--keep", default=None, help="generate under this directory and keep it")
    args = ap.parse_args(argv)
    rng = random.Random(3)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    lsp_sizes = {int(x) for x in args.lsp_sizes.split(",") if x}
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix=f"luaguard-scale-{n}-"))
        root = base / f"scale{n}"
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        try:
            t0 = time.perf_counter()
            facts = generate(root, n)
            gen_s = time.perf_counter() - t0
            r = bench_index(root, n, facts, args.lint_sample, rng)
            r["gen_s"] = gen_s
            print(f"\n== {n} files ({r['instances']} instances, {r['scripts']} scripts; generated in {gen_s:.1f} s)")
            print(f"cold index         {r['cold_s'] * 1000:9.1f} ms   peak Python memory {r['peak_mib']:.1f} MiB, "
                  f"RSS +{r['rss_growth_mib']:.1f} MiB")
            print(f"run-time names     {r['names_s'] * 1000:9.1f} ms   (first scan of every script)")
            print(f"incremental        edit {r['edit_ms']:.3f} ms, add {r['add_ms']:.3f} ms, delete {r['delete_ms']:.3f} ms, "
                  f"name rescan {r['rescan_ms']:.3f} ms (medians)")
            print(f"lint per file      p50 {r['lint_p50_ms']:.2f} ms, p99 {r['lint_p99_ms']:.2f} ms "
                  f"({args.lint_sample} files); 1,000-line file {r['big_lint_ms']:.1f} ms ({r['big_errors']} errors)")
            if n in lsp_sizes:
                lsp = bench_lsp(root, facts, args.edits, base)
                r["lsp"] = lsp
                for label, m in lsp.items():
                    print(f"LSP {label:<26} initialize+index {m['init_s']:.2f} s, first publish {m['first_publish_s'] * 1000:.0f} ms, "
                          f"didChange->publish p50 {m['p50_ms']:.1f} ms, p95 {m['p95_ms']:.1f} ms, max {m['max_ms']:.1f} ms "
                          f"({m['edits']} edits), server RSS {m['rss_mib']:.0f} MiB")
            rows.append(r)
        finally:
            if not args.keep:
                shutil.rmtree(base, ignore_errors=True)
    print(f"\nprocess max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "scale.json").write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
