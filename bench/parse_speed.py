"""Luau front-end throughput, with tree-sitter-luau as a reference.

Usage: ``python bench/parse_speed.py [DIR ...] [--repeat N]`` (default: the sample place).

Prints, over every ``.lua``/``.luau`` file of the directories: luaguard's lexer, parser
and lexer+parser throughput in MB/s (best of N runs), and — when the optional packages
``tree-sitter`` and ``tree-sitter-luau`` are installed (``pip install tree-sitter
tree-sitter-luau``; a reference only, not a dependency) — tree-sitter's throughput on
the same files, the ratio, and how many files each reports errors in.  Target: >= 2 MB/s.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

from luaguard.luau.lexer import tokenize
from luaguard.luau.parser import parse

ROOT = Path(__file__).resolve().parent.parent


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        gc.enable()
    return min(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", default=[str(ROOT / "samples" / "place")])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    texts = []
    for d in args.dirs:
        for p in sorted(Path(d).rglob("*")):
            if p.suffix in (".lua", ".luau") and p.is_file():
                texts.append(p.read_bytes().decode("utf-8", errors="replace"))
    size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    lexed = [(t, tokenize(t)) for t in texts]

    lex = best_of(args.repeat, lambda: [tokenize(t) for t in texts])
    par = best_of(args.repeat, lambda: [parse(t, lx) for t, lx in lexed])
    both = best_of(args.repeat, lambda: [parse(t) for t in texts])
    ours_errors = sum(1 for t in texts if parse(t).errors)
    print(f"files: {len(texts)}, {size:.2f} MB")
    print(f"luaguard lexer:         {size / lex:6.2f} MB/s")
    print(f"luaguard parser:        {size / par:6.2f} MB/s (tokens given)")
    print(f"luaguard lexer+parser:  {size / both:6.2f} MB/s   files with syntax errors: {ours_errors}")
    try:
        import tree_sitter
        import tree_sitter_luau
    except ImportError:
        print("tree-sitter-luau: not installed (pip install tree-sitter tree-sitter-luau) — no reference ratio")
        return 0
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_luau.language()))
    blobs = [t.encode("utf-8") for t in texts]
    ts = best_of(args.repeat, lambda: [parser.parse(b) for b in blobs])
    ts_errors = sum(1 for b in blobs if parser.parse(b).root_node.has_error)
    print(f"tree-sitter-luau:       {size / ts:6.2f} MB/s   files with syntax errors: {ts_errors}")
    print(f"ratio luaguard/tree-sitter (lexer+parser): {ts / both:.3f}")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
