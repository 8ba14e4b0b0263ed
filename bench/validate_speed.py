"""Tool-call validation speed against a generated Rojo project of ~10,000 instances.

    /tmp/venv/bin/python bench/validate_speed.py [--calls 600] [--seed 1] [--keep DIR]

Generates a place in a temporary directory (scripts under ``src/``, parts, remotes and
GUI declared in ``default.project.json``), indexes it, then validates a deterministic mix
of calls one at a time through :func:`luaguard.toolcalls.api.validate_calls` (each call
passed as JSON text, as the CLI and LSP receive it) and prints per-call latency
percentiles.  Calls carrying Luau content (``patch_script``/``create_script``) run the
whole linter on that content, so they are reported separately from the others.

Targets (issue 4): p50 <= 0.5 ms and p99 <= 5 ms per call.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from luaguard.engine import Engine  # noqa: E402
from luaguard.toolcalls import api  # noqa: E402

SCRIPT_DIRS = 24          # folders per side (server, shared)
SCRIPTS_PER_DIR = 40      # modules per folder
MODELS = 40               # Workspace.Map models
PARTS_PER_MODEL = 160
REMOTES = 360
GUIS, FRAMES_PER_GUI = 20, 60

MODULE = """local ReplicatedStorage = game:GetService("ReplicatedStorage")
local Signal = require(ReplicatedStorage.Shared.Util.Signal)

local M = {{}}
M.changed = Signal.new()

function M.value(x: number): number
\treturn x * {n}
end

return M
"""


def generate(root: Path) -> None:
    """Write the project under ``root``."""
    src = root / "src"
    (src / "shared" / "Util").mkdir(parents=True)
    (src / "shared" / "Util" / "Signal.luau").write_text("local Signal = {}\nfunction Signal.new() return {} end\nreturn Signal\n")
    for side in ("server", "shared"):
        for d in range(SCRIPT_DIRS):
            folder = src / side / f"Pack{d:02d}"
            folder.mkdir(parents=True)
            for s in range(SCRIPTS_PER_DIR):
                (folder / f"Module{s:02d}.luau").write_text(MODULE.format(n=s + 1))
    (src / "server" / "Main.server.luau").write_text("print('server')\n")
    parts = {f"Part{p:03d}": {"$className": "Part", "$properties": {"Anchored": True, "Size": [4, 1, 4]}}
             for p in range(PARTS_PER_MODEL)}
    tree = {
        "$className": "DataModel",
        "ReplicatedStorage": {"$className": "ReplicatedStorage", "Shared": {"$path": "src/shared"},
                              "Remotes": {"$className": "Folder",
                                          **{f"Remote{r:03d}": {"$className": "RemoteEvent"} for r in range(REMOTES)}}},
        "ServerScriptService": {"$className": "ServerScriptService", "Server": {"$path": "src/server"}},
        "Workspace": {"$className": "Workspace", "Map": {"$className": "Folder",
                      **{f"Model{m:02d}": {"$className": "Model", **parts} for m in range(MODELS)}}},
        "StarterGui": {"$className": "StarterGui", **{
            f"Gui{g:02d}": {"$className": "ScreenGui", **{f"Frame{f:02d}": {"$className": "Frame"}
                                                          for f in range(FRAMES_PER_GUI)}} for g in range(GUIS)}},
    }
    (root / "default.project.json").write_text(json.dumps({"name": "Bench", "tree": tree}))


def make_calls(n: int, rng: random.Random) -> list[tuple[str, dict]]:
    """``(kind, call)`` pairs; kind ``content`` for calls that carry Luau source."""

    def c(tool: str, **args) -> dict:
        return {"name": tool, "arguments": args}

    def script() -> tuple[str, str]:
        side = rng.choice(["server", "shared"])
        svc = "ServerScriptService.Server" if side == "server" else "ReplicatedStorage.Shared"
        d, s = rng.randrange(SCRIPT_DIRS), rng.randrange(SCRIPTS_PER_DIR)
        return f"{svc}.Pack{d:02d}.Module{s:02d}", f"src/{side}/Pack{d:02d}/Module{s:02d}.luau"

    def part() -> str:
        return f"Workspace.Map.Model{rng.randrange(MODELS):02d}.Part{rng.randrange(PARTS_PER_MODEL):03d}"

    makers = [
        ("read_ok", lambda: c("read_script", path=script()[0])),
        ("read_file_ok", lambda: c("read_script", path=script()[1])),
        ("read_typo", lambda: c("read_script", path=script()[0][:-1] + "x")),
        ("read_file_typo", lambda: c("read_script", path=script()[1].replace("Module", "Modul"))),
        ("prop_ok", lambda: c("modify_property", instancePath=part(), property="Size", value=[2, 2, 2])),
        ("prop_enum", lambda: c("modify_property", instancePath=part(), property="Material", value="Enum.Material.Neon")),
        ("prop_bad_name", lambda: c("modify_property", instancePath=part(), property="Colour", value=[1, 0, 0])),
        ("prop_bad_type", lambda: c("modify_property", instancePath=part(), property="Anchored", value="yes")),
        ("prop_missing_inst", lambda: c("modify_property", instancePath=part() + "x", property="Size", value=[1, 1, 1])),
        ("create_ok", lambda: c("create_instance", className="Part", parent=f"Workspace.Map.Model{rng.randrange(MODELS):02d}",
                                name="NewPart")),
        ("create_bad_class", lambda: c("create_instance", className="Prat", parent="Workspace.Map", name="X")),
        ("create_collision", lambda: c("create_instance", className="Folder", parent="Workspace.Map",
                                       name=f"Model{rng.randrange(MODELS):02d}")),
        ("unknown_tool", lambda: c(rng.choice(["list_files", "read_file", "set_property", "read_scrpt"]), path="x")),
        ("missing_field", lambda: c("create_instance", className="Folder")),
        ("outside", lambda: c("read_script", path="../../etc/passwd")),
        ("low_confidence", lambda: {**c("read_script", path=script()[0]), "confidence": 0.3}),
        ("content", lambda: c("patch_script", path=script()[1], content=MODULE.format(n=rng.randrange(100)))),
        ("content_bad", lambda: c("patch_script", path=script()[0],
                                  content=MODULE.format(n=1).replace("Util.Signal", "Util.Signl") + "-- TODO\n")),
    ]
    out = []
    for i in range(n):
        kind, make = makers[i % len(makers)]
        out.append(("content" if kind.startswith("content") else kind, make()))
    rng.shuffle(out)
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", metavar="DIR", help="generate the project in DIR and keep it")
    args = ap.parse_args()

    tmp = None
    if args.keep:
        root = Path(args.keep)
        root.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory()
        root = Path(tmp.name)
    generate(root)
    t0 = time.perf_counter()
    engine = Engine(root)
    engine.reload_project(strict=True)
    index_ms = (time.perf_counter() - t0) * 1000
    project = engine.project
    instances = 1 + sum(1 for _ in project.root.descendants())
    print(f"project: {instances:,} instances, {len(project.file_instances):,} files; index built in {index_ms:.0f} ms")

    calls = make_calls(args.calls, random.Random(args.seed))
    texts = [(kind, json.dumps(call)) for kind, call in calls]
    t0 = time.perf_counter()
    api.validate_calls(engine, texts[0][1])
    print(f"first call (cold caches: API data, name and directory maps): {(time.perf_counter() - t0) * 1000:.1f} ms")
    for _, text in texts[:20]:  # warm-up
        api.validate_calls(engine, text)

    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    invalid = Counter()
    for kind, text in texts:
        c0 = time.thread_time()
        t0 = time.perf_counter()
        result = api.validate_calls(engine, text)
        wall.setdefault(kind, []).append((time.perf_counter() - t0) * 1000)
        cpu.setdefault(kind, []).append((time.thread_time() - c0) * 1000)
        if not result[0]["valid"]:
            invalid[kind] += 1

    def groups(times: dict[str, list[float]]) -> list[tuple[str, list[float]]]:
        plain = [t for k, ts in times.items() if k != "content" for t in ts]
        content = times.get("content", [])
        return [("calls without content", plain), ("calls with content (linted)", content), ("all calls", plain + content)]

    n_plain = len(groups(wall)[0][1])
    print(f"\n{args.calls} calls ({n_plain} without content, {args.calls - n_plain} with content), "
          f"{sum(invalid.values())} invalid; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for title, times in (("wall-clock time", wall), ("CPU time of the thread (excludes time other processes took)", cpu)):
        print(f"\n{title}:")
        print(f"  {'group':<28}{'n':>5}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'mean ms':>10}")
        for name, ts in groups(times):
            if ts:
                print(f"  {name:<28}{len(ts):>5}{pct(ts, 50):>10.3f}{pct(ts, 99):>10.3f}{max(ts):>10.3f}"
                      f"{statistics.fmean(ts):>10.3f}")
    print("\nby kind, wall p50 / p99 ms (CPU p99):")
    for kind in sorted(wall):
        print(f"  {kind:<20}{len(wall[kind]):>4}  {pct(wall[kind], 50):7.3f} / {pct(wall[kind], 99):7.3f}"
              f"  ({pct(cpu[kind], 99):.3f})")
    plain = groups(wall)[0][1]
    ok50 = pct(plain, 50) <= 0.5
    ok99 = pct(plain, 99) <= 5.0
    print(f"\ntargets (wall clock, calls without content): p50 <= 0.5 ms {'met' if ok50 else 'MISSED'}, "
          f"p99 <= 5 ms {'met' if ok99 else 'MISSED'}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
