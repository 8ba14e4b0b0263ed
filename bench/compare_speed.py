"""luaguard check against what Roblox developers run today, on pinned real inputs.

Usage::

    python bench/compare_speed.py [--runs 5] [--luau-lsp] [--only NAME,...] [--jobs N]
                                  [--save DIR] [--json FILE]

Whole processes, timed from start to exit, the median of ``--runs`` runs (the tools
alternate within each run, so a busy moment of a shared machine hits them alike).  Inputs
are folders of the unpacked real-code corpus (``bench/corpus/manifest.json``, unpacked by
``bench/corpus/unpack.py`` under ``~/.cache/luaguard/corpus``): three games' ``src``, an
AI-written game's ``src``, the Adonis admin system (a
framework that runs inside games, the largest: 458 files) and jsdotlua/react-lua's ``modules``, plus one tiny file (start-up
cost).  Each is run from its repository's root, so luaguard finds the project file as a
user's CI would.

Tools:

* ``luaguard check --format json DIR`` (this checkout's; ``--jobs N`` passed through when
  given, else luaguard's default);
* with ``--baseline DIR``: another version of luaguard (its ``server`` folder, put first on
  ``PYTHONPATH``), run with its own defaults in the same rounds - before and after a change
  under the same load;
* ``luau-compile --null DIR``: Luau's own parser and compiler, no output - the floor for
  reading the files at all;
* ``luau-analyze DIR``: Luau's type checker without Roblox's definitions;
* with ``--luau-lsp`` (a separate tier: it needs luau-lsp built from source, see
  ``../shared/notes/speed.md``): ``luau-lsp analyze --platform=roblox
  --definitions=@roblox=globalTypes.None.d.luau DIR``, what a Roblox developer's CI runs.

Prints per input the median seconds of each tool, luaguard's throughput (MB/s of
``.lua``/``.luau`` text), its peak resident memory (the largest process, from
``wait4``; workers are separate processes, each at most that size), and the ratios
luaguard / other tool (below 1: luaguard is faster).  ``--save DIR`` writes luaguard's
JSON output per input (to check that findings do not change between versions).
Binaries: ``LUAU_BUILD`` (default ``~/.cache/luaguard/luau-src/build``) and
``LUAU_LSP_SRC`` (default ``~/.cache/luaguard/luau-lsp-src``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("LUAGUARD_CACHE", Path.home() / ".cache" / "luaguard"))
CORPUS = CACHE / "corpus"
LUAU_BUILD = Path(os.environ.get("LUAU_BUILD", CACHE / "luau-src" / "build"))
LUAU_LSP_SRC = Path(os.environ.get("LUAU_LSP_SRC", CACHE / "luau-lsp-src"))

#: (name, corpus folder, folder checked inside it, kind) - pinned by the manifest's commits
INPUTS = [
    ("zombie-strike src", "Kampfkarren+zombie-strike", "src", "game"),
    ("robeats-cs src", "RoVSRG+robeats-cs", "src", "game"),
    ("witching-hour src", "TheNexusAvenger+Roblox-The-Witching-Hour-Remastered", "src", "game"),
    ("anime-roguelike src", "L-Ali-Baco+untitled-anime-roguelike", "src", "ai_written game"),
    ("Adonis (whole)", "Epix-Incorporated+Adonis", ".", "game_framework"),
    ("react-lua modules", "jsdotlua+react-lua", "modules", "library"),
]
TINY = "local Players = game:GetService(\"Players\")\nprint(Players.LocalPlayer.Name)\n"


def luaguard_command() -> list[str]:
    script = Path(sys.executable).parent / "luaguard"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-P", "-m", "luaguard.cli"]


def source_bytes(path: Path) -> tuple[int, int]:
    """(files, bytes) of the ``.lua``/``.luau`` files under ``path``."""
    if path.is_file():
        return 1, path.stat().st_size
    n = size = 0
    for p in path.rglob("*"):
        if p.suffix in (".lua", ".luau") and p.is_file():
            n += 1
            size += p.stat().st_size
    return n, size


def run_once(cmd: list[str], cwd: Path, out_path: Path | None = None, env: dict | None = None) -> tuple[float, int]:
    """Seconds from start to exit, and the peak RSS in KiB (``wait4``'s ``ru_maxrss``: the
    process, or the largest of its waited-for children)."""
    out = open(out_path, "wb") if out_path is not None else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, _status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = 0  # (reaped by wait4)
    finally:
        if out_path is not None:
            out.close()
    return elapsed, usage.ru_maxrss


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--luau-lsp", action="store_true", help="also time luau-lsp analyze with Roblox's definitions")
    ap.add_argument("--only", default=None, help="comma-separated input names (prefixes) to run")
    ap.add_argument("--jobs", default=None, help="pass --jobs N to luaguard check")
    ap.add_argument("--save", default=None, help="write luaguard's JSON output per input under this folder")
    ap.add_argument("--json", default=None, help="write the figures as JSON to this file")
    ap.add_argument("--baseline", default=None, metavar="DIR",
                    help="also time another luaguard: DIR is its 'server' folder (PYTHONPATH), e.g. a 'git archive' "
                         "of main; run in the same rounds, so before/after share the machine's load")
    args = ap.parse_args(argv)

    compile_bin = LUAU_BUILD / "luau-compile"
    analyze_bin = LUAU_BUILD / "luau-analyze"
    lsp_bin = LUAU_LSP_SRC / "build" / "luau-lsp"
    defs = LUAU_LSP_SRC / "scripts" / "globalTypes.None.d.luau"
    tools: dict[str, callable] = {}
    lg = luaguard_command() + ["check", "--format", "json"] + (["--jobs", args.jobs] if args.jobs else [])
    tools["luaguard"] = lambda sub: lg + [sub]
    envs: dict[str, dict] = {}
    if args.baseline:
        base = str(Path(args.baseline).resolve())
        tools["luaguard (baseline)"] = lambda sub: luaguard_command() + ["check", "--format", "json", sub]
        envs["luaguard (baseline)"] = dict(os.environ, PYTHONPATH=base)
    if compile_bin.exists():
        tools["luau-compile --null"] = lambda sub: [str(compile_bin), "--null", sub]
    else:
        print(f"(no {compile_bin}: luau-compile not timed)")
    if analyze_bin.exists():
        tools["luau-analyze"] = lambda sub: [str(analyze_bin), sub]
    else:
        print(f"(no {analyze_bin}: luau-analyze not timed)")
    if args.luau_lsp:
        if not lsp_bin.exists() or not defs.exists():
            print(f"--luau-lsp: {lsp_bin} or {defs} missing (build it: ../shared/notes/speed.md)", file=sys.stderr)
            return 2
        tools["luau-lsp analyze"] = lambda sub: [str(lsp_bin), "analyze", "--platform=roblox",
                                                 f"--definitions=@roblox={defs}", sub]

    tmp = Path(tempfile.mkdtemp(prefix="luaguard-compare-"))
    (tmp / "tiny.luau").write_text(TINY)
    inputs = []
    for name, repo, sub, kind in INPUTS:
        if args.only and not any(name.startswith(o.strip()) for o in args.only.split(",")):
            continue
        where = CORPUS / repo
        if not (where / sub).exists():
            print(f"(missing {where / sub}: unpack the corpus with bench/corpus/unpack.py)")
            continue
        inputs.append((name, where, sub, kind))
    if not args.only or any("tiny".startswith(o.strip()) for o in args.only.split(",")):
        inputs.append(("one tiny file", tmp, "tiny.luau", "start-up"))

    save = Path(args.save) if args.save else None
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; {args.runs} runs, median")
    results = []
    for name, where, sub, kind in inputs:
        files, size = source_bytes(where / sub)
        times: dict[str, list[float]] = {t: [] for t in tools}
        rss: dict[str, int] = {t: 0 for t in tools}
        for r in range(args.runs):
            for tool, make in tools.items():
                out = None
                if tool == "luaguard" and save is not None and r == 0:
                    out = save / (name.replace(" ", "_") + ".json")
                s, peak = run_once(make(sub), where, out, envs.get(tool))
                times[tool].append(s)
                rss[tool] = max(rss[tool], peak)
        med = {t: statistics.median(v) for t, v in times.items()}
        row = {"input": name, "kind": kind, "files": files, "bytes": size, "median_s": med,
               "runs_s": times, "peak_rss_mib": {t: v / 1024 for t, v in rss.items()}}
        results.append(row)
        lgs = med["luaguard"]
        ratios = "  ".join(f"luaguard/{t} {lgs / s:.2f}x" for t, s in med.items() if t != "luaguard" and s > 0)
        timings = "  ".join(f"{t} {s:.3f} s" for t, s in med.items())
        print(f"{name} ({kind}, {files} files, {size / 1e6:.2f} MB): {timings}")
        print(f"    luaguard {size / 1e6 / lgs:.2f} MB/s, peak RSS {rss['luaguard'] / 1024:.0f} MiB;  {ratios}")
        if "luaguard (baseline)" in med and "luau-lsp analyze" in med:
            print(f"    baseline/luau-lsp analyze {med['luaguard (baseline)'] / med['luau-lsp analyze']:.2f}x")
    load1 = os.getloadavg()
    print(f"load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    # the table
    cols = list(tools)
    both = "luaguard (baseline)" in cols and "luau-lsp analyze" in cols
    print()
    print("| input | files | MB | " + " | ".join(cols) + " | luaguard MB/s | luaguard peak MiB | "
          + " | ".join(f"luaguard / {c}" for c in cols if c != "luaguard")
          + (" | baseline / luau-lsp analyze" if both else "") + " |")
    print("|" + "---|" * (5 + len(cols) + len(cols) - 1 + both))
    for row in results:
        med = row["median_s"]
        lgs = med["luaguard"]
        print(f"| {row['input']} | {row['files']} | {row['bytes'] / 1e6:.2f} | "
              + " | ".join(f"{med[c]:.3f} s" for c in cols)
              + f" | {row['bytes'] / 1e6 / lgs:.2f} | {row['peak_rss_mib']['luaguard']:.0f} | "
              + " | ".join(f"{lgs / med[c]:.2f}x" for c in cols if c != "luaguard")
              + (f" | {med['luaguard (baseline)'] / med['luau-lsp analyze']:.2f}x" if both else "") + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"load_before": load0, "load_after": load1, "results": results},
                                              indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
