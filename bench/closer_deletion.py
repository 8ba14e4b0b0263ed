"""Delete one random closer (``)`` ``}`` ``]`` ``end`` ``until``) from each Luau file and
count how often the structure check flags the result.

Usage: ``python bench/closer_deletion.py DIR [DIR ...] [--seed N] [--per-file K]``.
Files that already have structure problems are skipped.  Prints the detection rate and
the cases it missed.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from luaguard.luau.lexer import tokenize
from luaguard.luau.mutate import mutate
from luaguard.luau.structure import analyze_structure
from luaguard.text import LineIndex


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-file", type=int, default=1)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    total = flagged = skipped = 0
    for d in args.dirs:
        for root, _, files in sorted(os.walk(d)):
            for name in sorted(files):
                if not name.endswith((".lua", ".luau")):
                    continue
                path = os.path.join(root, name)
                text = open(path, encoding="utf-8", errors="replace").read()
                if analyze_structure(tokenize(text).tokens, LineIndex(text)):
                    skipped += 1
                    continue
                for _ in range(args.per_file):
                    m = mutate(text, rng, kinds=("delete_closer",))
                    if m is None:
                        continue
                    total += 1
                    if analyze_structure(tokenize(m.text).tokens, LineIndex(m.text)):
                        flagged += 1
                    else:
                        print(f"missed: {path} deleting {m.token!r} at offset {m.offset}")
    rate = 100.0 * flagged / total if total else 0.0
    print(f"files skipped (already unbalanced): {skipped}")
    print(f"deleted closers flagged: {flagged}/{total} = {rate:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
