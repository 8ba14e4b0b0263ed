"""A snapshot of ``luaguard check --format json`` over the whole corpus, for before/after identity.

Every ``.lua``/``.luau`` file of every repository of ``bench/corpus/manifest.json``
(unpacked by ``bench/corpus/unpack.py``) is checked as ``luaguard check FILES`` run at the
project root luaguard finds above it would check it (files grouped by that root, 250 per
process, the same grouping as ``bench/fix_safety.py``).  Each finding becomes one line: its
JSON with sorted keys, its ``file`` rewritten relative to the repository, the repository's
name in front; the lines are sorted.  Two snapshots of two versions of luaguard are identical
byte for byte when the change did not change a finding.  Usage::

    flock /tmp/luaguard-heavy.lock python bench/corpus_json.py --out bench/out/corpus_before.jsonl
    flock /tmp/luaguard-heavy.lock python bench/corpus_json.py --out bench/out/corpus_after.jsonl
    cmp bench/out/corpus_before.jsonl bench/out/corpus_after.jsonl

Printed: the repositories, files, findings and seconds; a process that failed (exit other
than 0/1, or output that is not JSON) is printed and recorded as a line of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))

from fix_safety import CHUNK, groups_of, luau_files  # noqa: E402
from unpack import default_cache, load_manifest, slug  # noqa: E402


def snapshot_repo(repo: str, base: Path, timeout: float) -> list[str]:
    """The sorted-key JSON lines of every finding ``luaguard check --format json`` reports
    on the files under ``base``."""
    lines: list[str] = []
    for root, group in sorted(groups_of(luau_files(base)).items(), key=lambda kv: str(kv[0])):
        cwd = root if root is not None else base
        for i in range(0, len(group), CHUNK):
            rels = [os.path.relpath(p, cwd) for p in group[i:i + CHUNK]]
            proc = subprocess.run([sys.executable, "-m", "luaguard", "check", "--format", "json", *rels], cwd=cwd,
                                  capture_output=True, text=True, timeout=timeout)
            try:
                found = json.loads(proc.stdout or "[]")
            except ValueError:
                found = None
            if proc.returncode not in (0, 1) or found is None:
                msg = f"{repo}: {cwd}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
                print(msg, file=sys.stderr)
                lines.append(json.dumps({"repo": repo, "process_error": proc.returncode}, sort_keys=True))
                continue
            for f in found:
                path = os.path.normpath(os.path.join(cwd, f.get("file") or ""))
                f["file"] = os.path.relpath(path, base)
                lines.append(json.dumps({"repo": repo, **f}, sort_keys=True))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the JSON-lines file to write")
    ap.add_argument("--cache", type=Path, default=None, help="the unpacked corpus (default: unpack.py's)")
    ap.add_argument("--repos", default="", help="comma-separated owner/name to limit to")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per process")
    args = ap.parse_args(argv)
    cache = args.cache or default_cache()
    only = {r for r in args.repos.split(",") if r}
    lines: list[str] = []
    t0 = time.perf_counter()
    repos = files = 0
    for entry in load_manifest():
        if only and entry["repo"] not in only:
            continue
        base = cache / slug(entry["repo"])
        if not base.is_dir():
            print(f"{entry['repo']}: not unpacked at {base}", file=sys.stderr)
            continue
        repos += 1
        files += len(luau_files(base))
        lines += snapshot_repo(entry["repo"], base, args.timeout)
    lines.sort()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"{repos} repositories, {files} files, {len(lines)} findings, {time.perf_counter() - t0:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
