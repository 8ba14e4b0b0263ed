"""Compare luaguard's syntax errors with the reference Luau compiler's.

Needs a ``luau-compile`` built from the public luau-lang/luau repository (never committed;
build it with ``cmake -S luau -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build
--target Luau.Compile.CLI``).  It is the oracle: ``luau-compile --null FILE`` exits non-zero
and prints ``FILE(line,col): SyntaxError: message`` for the first syntax error.

1. Every file the compiler accepts must get 0 syntax findings from luaguard
   (``syntax_error``, ``unbalanced_bracket``, ``unclosed_block``).
2. ``--mutations N`` mutated copies (a random token deleted, duplicated or swapped; fixed
   seed): agreement on "has a syntax error" and on the line of the first error.

``--write-cases FILE --sample K`` stores K mutated cases (file path relative to the
current directory, its SHA-1, the edit) with the compiler's verdict as JSON lines, so
``tests/test_syntax_oracle_cases.py`` can replay them without the compiler.  Only write
cases for files this project owns (``samples/``): fetched code is never committed.

Usage::

    python bench/syntax_oracle.py --compiler /path/to/luau-compile DIR [DIR ...] \\
        [--mutations 2000] [--seed 7] [--write-cases tests/data/syntax_cases.jsonl --sample 300]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from luaguard.engine import Engine
from luaguard.luau.lexer import tokenize
from luaguard.luau.mutate import mutate
from luaguard.luau.parser import parse
from luaguard.text import LineIndex

SYNTAX_RULES = {"syntax_error", "unbalanced_bracket", "unclosed_block"}
_ERR = re.compile(r"\((\d+),(\d+)\): SyntaxError: (.*)")


def compiler_verdict(compiler: str, text: str, workdir: str) -> tuple[bool, int | None, str]:
    """``(has_error, first_error_line_1based, message)`` from the compiler."""
    path = os.path.join(workdir, "case.luau")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    proc = subprocess.run([compiler, "--null", path], capture_output=True, text=True, timeout=30)
    if proc.returncode == 0:
        return False, None, ""
    m = _ERR.search(proc.stdout + proc.stderr)
    if not m:
        return True, None, (proc.stdout + proc.stderr).strip()[:200]
    return True, int(m.group(1)), m.group(3)


def luaguard_verdict(engine: Engine, text: str) -> tuple[bool, int | None, str]:
    """``(has_error, first_error_line_1based, message)``: the error flag from the engine's
    findings; the first line from the raw lexer + parser errors (where Luau reports)."""
    findings = [f for f in engine.lint_text(text, "case.luau") if f.rule in SYNTAX_RULES]
    if not findings:
        return False, None, ""
    lex = tokenize(text)
    chunk = parse(text, lex)
    lines = LineIndex(text)
    # Luau prints its first *reported* error; a lexical error counts as reported when the
    # parser reaches the broken token, i.e. before any parser error that follows it.
    first = None
    if chunk.errors:
        first = (chunk.errors[0].start, chunk.errors[0].message)
    for e in lex.errors:
        if first is None or e.start < first[0]:
            first = (e.start, e.message)
            break
    if first is not None:
        return True, lines.position(first[0]).line + 1, first[1]
    first = min(findings, key=lambda f: (f.range.start.line, f.range.start.character))
    return True, first.range.start.line + 1, first.message


def collect(dirs: list[str]) -> list[Path]:
    out = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in files:
                if f.endswith((".lua", ".luau")) and not f.endswith((".d.lua", ".d.luau")):
                    out.append(Path(root) / f)
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--mutations", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--write-cases", metavar="FILE")
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--show", type=int, default=15, help="print this many disagreements")
    args = ap.parse_args(argv)

    engine = Engine()
    workdir = tempfile.mkdtemp(prefix="luaguard-oracle-")
    valid: list[tuple[Path, str]] = []
    false_errors = []
    rejected = 0
    for path in collect(args.dirs):
        text = path.read_bytes().decode("utf-8", errors="replace")
        has, _, _ = compiler_verdict(args.compiler, text, workdir)
        if has:
            rejected += 1
            continue
        valid.append((path, text))
        mine, line, msg = luaguard_verdict(engine, text)
        if mine:
            false_errors.append((path, line, msg))
    print(f"valid files (compiler accepts): {len(valid)}   skipped (compiler rejects): {rejected}")
    print(f"luaguard syntax findings on valid files: {len(false_errors)}")
    for path, line, msg in false_errors[:args.show]:
        print(f"  FALSE ERROR {path}:{line}: {msg}")

    rng = random.Random(args.seed)
    agree_has = agree_line = both_err = total = 0
    cases = []
    disagreements = []
    t0 = time.perf_counter()
    while total < args.mutations and valid:
        path, text = rng.choice(valid)
        m = mutate(text, rng)
        if m is None:
            continue
        total += 1
        c_has, c_line, c_msg = compiler_verdict(args.compiler, m.text, workdir)
        l_has, l_line, l_msg = luaguard_verdict(engine, m.text)
        if c_has == l_has:
            agree_has += 1
        else:
            disagreements.append((path, m, c_has, c_line, c_msg, l_has, l_line, l_msg))
        if c_has and l_has:
            both_err += 1
            if c_line == l_line:
                agree_line += 1
            elif len(disagreements) < 200:
                disagreements.append((path, m, c_has, c_line, c_msg, l_has, l_line, l_msg))
        cases.append({"file": path.as_posix(), "sha1": hashlib.sha1(text.encode("utf-8")).hexdigest(),
                      "kind": m.kind, "edit": list(m.edit), "token": m.token,
                      "has_error": c_has, "line": c_line, "message": c_msg})
    elapsed = time.perf_counter() - t0
    print(f"mutated files: {total} ({elapsed:.1f} s)")
    if total:
        print(f"agreement on 'has a syntax error': {agree_has}/{total} = {100.0 * agree_has / total:.2f}%")
    if both_err:
        print(f"first error line matches (both report an error): {agree_line}/{both_err} = {100.0 * agree_line / both_err:.2f}%")
    for path, m, c_has, c_line, c_msg, l_has, l_line, l_msg in disagreements[:args.show]:
        print(f"  {path.name} {m.kind} {m.token!r}@{m.offset}: luau={c_has}:{c_line} {c_msg!r} | luaguard={l_has}:{l_line} {l_msg!r}")

    if args.write_cases:
        sample = random.Random(args.seed + 1).sample(cases, min(args.sample, len(cases)))
        out = Path(args.write_cases)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for case in sample:
                fh.write(json.dumps(case) + "\n")
        print(f"wrote {len(sample)} cases to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
