"""Fix safety on real code: what ``luaguard check --fix`` changes in public code that works.

Every ``.lua``/``.luau`` file of the corpus (``bench/corpus/manifest.json``, unpacked by
``bench/corpus/unpack.py``) is fixed in a copy of its repository (never in the cache), as
``luaguard check --fix FILE`` would fix it: the files are grouped by the project root
luaguard finds above them (:func:`luaguard.workspace.find_project_root`, the root the CLI
takes from its first path) and each group goes through the CLI in a process of its own, run
in the repository's copy:

1. ``luaguard check --format json FILES`` - the findings and the fixes they carry (the
   attribution of each changed line);
2. ``luaguard check --fix FILES`` (safe fixes only) in one copy;
3. ``luaguard check --fix --unsafe-fixes FILES`` in another copy.

Printed: the throughput of step 1 (MB of the files given to ``luaguard check`` per second of
its processes' wall time, start-up and indexing included); the files and lines the safe fixes changed (a line of the original text counts once
however many edits touch it), each with the finding whose fix starts on it (rule, severity,
message) and the old and new text - every one to be judged by hand: the corpus is code that
works, so a changed line is either a true bug fixed or valid code rewritten - with the same
counts for ``--unsafe-fixes``; and, for both, the files the Luau compiler (``--compiler``,
``luau-compile --null``) accepted before and rejects after (target 0).  A line changed with
no finding starting on it was changed by a later pass of the fix loop (a fix revealed
another).  The full list goes to ``bench/out/fix_safety.txt``, the raw data to
``bench/out/fix_safety.json``.  Usage::

    python bench/corpus/unpack.py
    python bench/fix_safety.py --compiler PATH/TO/luau-compile [--repos A,B] [--kinds game,nevermore]
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))

from unpack import default_cache, load_manifest, slug  # noqa: E402

OUT = HERE / "out"
CHUNK = 250  # files per CLI process (a command line stays short)


def luau_files(base: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        out += [Path(dirpath) / n for n in sorted(filenames) if n.endswith((".lua", ".luau"))]
    return out


def cli(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "luaguard", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def groups_of(files: list[Path]) -> dict[Path | None, list[Path]]:
    """Files by the project root ``luaguard check FILE`` finds above each one."""
    from luaguard.workspace import find_project_root

    by_dir: dict[Path, Path | None] = {}
    out: dict[Path | None, list[Path]] = defaultdict(list)
    for f in files:
        d = f.parent
        if d not in by_dir:
            by_dir[d] = find_project_root(d)
        out[by_dir[d]].append(f)
    return out


def changed_lines(old: str, new: str) -> list[tuple[int, str, str]]:
    """``(1-based line of old, old line, new line(s))`` for each line of ``old`` the change touches."""
    a, b = old.splitlines(), new.splitlines()
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # pure insertion: attribute to the line before
            out.append((max(i1, 1), a[i1 - 1] if i1 else "", "\n".join(b[j1:j2])))
            continue
        for k in range(i1, i2):
            j = j1 + (k - i1)
            out.append((k + 1, a[k], b[j] if j < j2 else ""))
    return out


def compiles(compiler: str | None, path: Path) -> bool | None:
    if not compiler:
        return None
    return subprocess.run([compiler, "--null", str(path)], capture_output=True).returncode == 0


def run_repo(entry: dict, cache: Path, tmp: Path, compiler: str | None, timeout: float) -> dict:
    src = cache / slug(entry["repo"])
    copies = {mode: tmp / mode / slug(entry["repo"]) for mode in ("safe", "unsafe")}
    for dest in copies.values():
        shutil.copytree(src, dest, symlinks=True)
    out: dict = {"repo": entry["repo"], "kind": entry.get("kind", "library"), "files": 0, "errors": [],
                 "changes": {"safe": [], "unsafe": []}, "broken": {"safe": [], "unsafe": []}, "fixes_offered": Counter(),
                 "check_s": 0.0, "check_bytes": 0}
    findings: dict[str, list[dict]] = defaultdict(list)
    base = copies["safe"]
    files = luau_files(base)
    out["files"] = len(files)
    for root, group in groups_of(files).items():
        cwd = root if root is not None else base
        for i in range(0, len(group), CHUNK):
            rels = [os.path.relpath(p, cwd) for p in group[i:i + CHUNK]]
            t0 = time.perf_counter()
            proc = cli(["check", "--format", "json", *rels], cwd, timeout)
            out["check_s"] += time.perf_counter() - t0
            out["check_bytes"] += sum(p.stat().st_size for p in group[i:i + CHUNK])
            try:
                for f in json.loads(proc.stdout or "[]"):
                    path = os.path.normpath(os.path.join(cwd, f.get("file") or ""))
                    findings[os.path.relpath(path, base)].append(f)
                    if f.get("fix"):
                        out["fixes_offered"]["safe" if f["fix"].get("safe") else "unsafe"] += 1
            except ValueError:
                out["errors"].append(f"{cwd}: check --format json: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
            for mode, extra in (("safe", []), ("unsafe", ["--unsafe-fixes"])):
                mcwd = copies[mode] / os.path.relpath(cwd, base)
                proc = cli(["check", "--fix", *extra, *rels], mcwd, timeout)
                if proc.returncode not in (0, 1):
                    out["errors"].append(f"{mcwd}: check --fix {' '.join(extra)}: exit {proc.returncode}: "
                                         f"{proc.stderr.strip()[-300:]}")
    for mode, dest in copies.items():
        for f in luau_files(dest):
            rel = os.path.relpath(f, dest)
            old_b, new_b = (src / rel).read_bytes(), f.read_bytes()
            if old_b == new_b:
                continue
            old, new = old_b.decode("utf-8", "replace"), new_b.decode("utf-8", "replace")
            for line, a, b in changed_lines(old, new):
                why = [x for x in findings.get(rel, []) if x.get("fix") and x["fix"]["range"]["start"]["line"] + 1 == line
                       and (mode == "unsafe" or x["fix"].get("safe"))]
                out["changes"][mode].append({"file": rel, "line": line, "old": a, "new": b,
                                             "findings": [{"code": x["code"], "severity": x["severity"],
                                                           "message": x["message"], "new_text": x["fix"]["new_text"],
                                                           "safe": x["fix"].get("safe")} for x in why]})
            before, after = compiles(compiler, src / rel), compiles(compiler, f)
            if before and after is False:
                out["broken"][mode].append(rel)
    for dest in copies.values():
        shutil.rmtree(dest, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", help="luau-compile: files it accepted before and rejects after a fix are counted")
    ap.add_argument("--cache", type=Path, default=None, help="the unpacked corpus (default: as unpack.py)")
    ap.add_argument("--repos", default="", help="comma-separated owner/name (default: the whole manifest)")
    ap.add_argument("--kinds", default="", help="only manifest entries of these kinds (library = no kind)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per CLI process")
    ap.add_argument("--show", type=int, default=10_000, help="changed lines to print (all go to bench/out/fix_safety.txt)")
    args = ap.parse_args(argv)
    cache = args.cache or default_cache()
    repos = {r.strip() for r in args.repos.split(",") if r.strip()}
    kinds = {k.strip() for k in args.kinds.split(",") if k.strip()}
    entries = [e for e in load_manifest() if (not repos or e["repo"] in repos or slug(e["repo"]) in repos)
               and (not kinds or e.get("kind", "library") in kinds)]
    t0 = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="luaguard-fix-safety-") as tmp:
        for entry in entries:
            if not (cache / slug(entry["repo"])).is_dir():
                print(f"  (not in the cache: {entry['repo']}; run bench/corpus/unpack.py)")
                continue
            results.append(run_repo(entry, cache, Path(tmp), args.compiler, args.timeout))
    took = time.perf_counter() - t0
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "fix_safety.json").write_text(json.dumps(results, indent=1, default=dict))
    lines = []
    for r in results:
        for c in r["changes"]["safe"]:
            why = "; ".join(f"{w['code']} [{w['severity']}] {w['message']}" for w in c["findings"]) or "(a later pass)"
            lines.append(f"{r['repo']}/{c['file']}:{c['line']}: {why}\n    - {c['old'].strip()}\n    + {c['new'].strip()}")
    (OUT / "fix_safety.txt").write_text("\n".join(lines) + "\n")
    nfiles = sum(r["files"] for r in results)
    print(f"fix safety: {nfiles} files in {len(results)} repositories, {took:.0f} s")
    cs, cb = sum(r["check_s"] for r in results), sum(r["check_bytes"] for r in results)
    if cs:
        print(f"`luaguard check --format json FILES` (one process per project root and {CHUNK} files, start-up and "
              f"indexing included): {cb / 1e6:.2f} MB in {cs:.1f} s = {cb / 1e6 / cs:.2f} MB/s")
    for mode in ("safe", "unsafe"):
        ch = [(r, c) for r in results for c in r["changes"][mode]]
        nf = len({(r["repo"], c["file"]) for r, c in ch})
        rules = Counter(w["code"] for _r, c in ch for w in c["findings"][:1])
        broken = [(r["repo"], f) for r in results for f in r["broken"][mode]]
        flag = "--fix" if mode == "safe" else "--fix --unsafe-fixes"
        print(f"{flag}: {len(ch)} changed lines in {nf} files; by the rule of the fix on the line: {dict(rules)}; "
              f"files the compiler accepted before and rejects after: {len(broken)}")
        for repo, f in broken:
            print(f"  broken by {flag}: {repo}/{f}")
        by_kind = Counter(r["kind"] for r, _c in ch)
        if by_kind:
            print(f"  changed lines by corpus kind: {dict(by_kind)}")
    print("lines changed by --fix (safe), each to be judged:")
    for line in lines[: args.show]:
        print("  " + line.replace("\n", "\n  "))
    errors = [e for r in results for e in r["errors"]]
    for e in errors[:20]:
        print(f"  CLI problem: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
