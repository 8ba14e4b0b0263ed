"""Lexer throughput and full-check latency.

Usage: ``python bench/lint_speed.py [DIR] [--project DIR] [--repeat N]`` (default: the
sample place, checked against its own project).

Prints the lexer's throughput in MB/s over every ``.lua``/``.luau`` file of DIR, the full
check (lexer, parser, every rule, with the project index) in milliseconds per 1,000
lines, and the time to check one 1,000-line file built from those files.  Target: a
1,000-line file fully checked in <= 30 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from luaguard.engine import Engine
from luaguard.luau.lexer import tokenize

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir", nargs="?", default=str(ROOT / "samples" / "place"))
    ap.add_argument("--project", default=None, help="project root (default: DIR)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    files = sorted(p for p in Path(args.dir).rglob("*") if p.suffix in (".lua", ".luau"))
    texts = [(p, p.read_text(encoding="utf-8", errors="replace")) for p in files]
    nbytes = sum(len(t.encode("utf-8")) for _, t in texts)
    nlines = sum(t.count("\n") + 1 for _, t in texts)
    engine = Engine(Path(args.project or args.dir))
    engine.project  # index once, outside the timings
    engine.snapshot.names()

    lex_times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for _, t in texts:
            tokenize(t)
        lex_times.append(time.perf_counter() - t0)
    lex = min(lex_times)

    check_times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for p, t in texts:
            engine.lint_text(t, p)
        check_times.append(time.perf_counter() - t0)
    check = min(check_times)

    # One 1,000-line file: the files concatenated (each wrapped in do ... end so locals
    # stay scoped) and cut at a statement boundary near line 1,000.
    chunks, count = [], 0
    for _, t in texts:
        chunks.append("do\n" + t + "\nend\n")
        count += t.count("\n") + 3
        if count >= 1000:
            break
    big = "".join(chunks)
    target = texts[0][0]
    per_file = []
    for _ in range(max(args.repeat * 4, 20)):
        t0 = time.perf_counter()
        engine.lint_text(big, target)
        per_file.append(time.perf_counter() - t0)

    print(f"files: {len(texts)}, {nbytes / 1e3:.1f} kB, {nlines} lines")
    print(f"lexer: {nbytes / 1e6 / lex:.2f} MB/s")
    print(f"full check: {1000 * check / nlines * 1000:.1f} ms per 1,000 lines ({1000 * check:.1f} ms for all files)")
    print(
        f"one {big.count(chr(10)) + 1}-line file: median {1000 * statistics.median(per_file):.1f} ms, "
        f"min {1000 * min(per_file):.1f} ms (target <= 30 ms)"
    )
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
