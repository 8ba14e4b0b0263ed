#!/usr/bin/env python3
"""The long fuzzing run: the CI fuzz targets (``tests/test_fuzz_*.py``) with many more
inputs and a fresh random seed.

Usage::

    python bench/fuzz_long.py [--examples 100000] [--targets luau,project,toolcalls] [--seed-random | --derandomize]

Runs ``pytest`` on the chosen ``tests/test_fuzz_<target>.py`` files with
``LUAGUARD_FUZZ_EXAMPLES`` (inputs per fuzz target) and ``LUAGUARD_FUZZ_RANDOM=1`` (a new
seed every run, unlike CI), prints each target's input count and slowest input, and exits
with pytest's status.  A failure prints the shrunk input and a ``@reproduce_failure`` line
to replay it.  Targets: lexer and parser+checks (``luau``), Rojo project files and
sourcemaps (``project``), tool calls and diffs (``toolcalls``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=100_000, help="inputs per fuzz target (default 100,000)")
    ap.add_argument("--targets", default="luau,project,toolcalls")
    ap.add_argument("--derandomize", action="store_true", help="use CI's fixed inputs instead of a random seed")
    ap.add_argument("--max-seconds", type=float, default=2.0, help="bound on one input's time (default 2 s)")
    args = ap.parse_args(argv)
    files = [str(ROOT / "tests" / f"test_fuzz_{t.strip()}.py") for t in args.targets.split(",") if t.strip()]
    env = dict(os.environ, LUAGUARD_FUZZ_EXAMPLES=str(args.examples), LUAGUARD_FUZZ_MAX_SECONDS=str(args.max_seconds),
               LUAGUARD_FUZZ_RANDOM="0" if args.derandomize else "1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *files]
    print("$ LUAGUARD_FUZZ_EXAMPLES=%d LUAGUARD_FUZZ_RANDOM=%s %s" % (args.examples, env["LUAGUARD_FUZZ_RANDOM"], " ".join(cmd)))
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    summary = [line for line in proc.stdout.splitlines() if re.search(r": \d+ inputs, slowest", line)]
    for line in summary:
        print(line)
    tail = [line for line in proc.stdout.splitlines() if re.search(r"\b(passed|failed|error)\b", line)]
    print(tail[-1] if tail else "(no pytest summary)")
    print(f"wall time {elapsed:.0f} s")
    if proc.returncode != 0:
        print(proc.stdout[-8000:])
        print(proc.stderr[-4000:], file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
