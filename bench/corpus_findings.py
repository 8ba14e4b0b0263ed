"""Save ``luaguard check --format json .`` of every corpus repository, to diff versions.

Usage::

    python bench/corpus_findings.py OUT_DIR [--jobs N] [--only NAME,...]
    diff -r BEFORE_DIR AFTER_DIR

Runs ``luaguard check --format json .`` (this checkout's) at the root of each unpacked
repository of the real-code corpus (``~/.cache/luaguard/corpus/<owner>+<name>``, see
``bench/corpus/manifest.json``) and writes its standard output to
``OUT_DIR/<owner>+<name>.json`` and its standard error and exit status to
``OUT_DIR/<owner>+<name>.err``.  A speed change must leave every file byte-identical.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

CORPUS = Path(os.environ.get("LUAGUARD_CACHE", Path.home() / ".cache" / "luaguard")) / "corpus"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--jobs", default=None, help="pass --jobs N to luaguard check")
    ap.add_argument("--only", default=None, help="comma-separated repository folder names")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    script = Path(sys.executable).parent / "luaguard"
    cmd = [str(script)] if script.exists() else [sys.executable, "-P", "-m", "luaguard.cli"]
    cmd += ["check", "--format", "json"] + (["--jobs", args.jobs] if args.jobs else []) + ["."]
    only = {o.strip() for o in args.only.split(",")} if args.only else None
    total = 0.0
    for repo in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        if only is not None and repo.name not in only:
            continue
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=repo, capture_output=True)
        dt = time.perf_counter() - t0
        total += dt
        (out / f"{repo.name}.json").write_bytes(proc.stdout)
        (out / f"{repo.name}.err").write_bytes(proc.stderr + f"\nexit status {proc.returncode}\n".encode())
        print(f"{repo.name}: {dt:.2f} s, exit {proc.returncode}, {len(proc.stdout)} bytes", flush=True)
    print(f"total {total:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
