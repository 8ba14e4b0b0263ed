"""Unpack the real-code corpus (``manifest.json``) from fetched snapshots into a cache folder.

The corpus is public code that nobody here wrote; it is never committed.  Each repository
of the manifest is fetched as a git snapshot first (the session's ``fetch`` tool puts it at
``<mirror>/<owner>+<name>/repo``); this script checks out the manifest's commit of each
one with ``git archive`` into ``<cache>/<owner>+<name>/``, keeping only the manifest's
``include`` prefixes where it names some and leaving out its ``exclude`` prefixes (files the
snapshot lacks: a fetched snapshot may list its largest files without holding them, and
``git archive`` of a tree with such a file fails; each excluded file is written empty, so
the project keeps its instance - a model whose contents are unknown), and writes the manifest's ``luaguard_toml`` (the
configuration a user of that repository would write: extra globals its C++ or Rust test
harness defines) where it gives one.  Re-running is cheap: a repository already
unpacked at the manifest's commit (``<cache>/<owner>+<name>/.corpus-commit``) is skipped.

Usage::

    python bench/corpus/unpack.py [--mirror /work/.mirror] [--cache DIR]

``--cache`` defaults to ``$LUAGUARD_CORPUS`` or ``~/.cache/luaguard/corpus`` (outside the
repository).  Exit status 1 when a snapshot or its commit is missing (the others are still
unpacked and the missing ones listed); ``bench/real_code.py`` reads the same cache.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"


def default_cache() -> Path:
    """``$LUAGUARD_CORPUS`` or ``~/.cache/luaguard/corpus``."""
    env = os.environ.get("LUAGUARD_CORPUS")
    return Path(env) if env else Path.home() / ".cache" / "luaguard" / "corpus"


def load_manifest(path: Path = MANIFEST) -> list[dict]:
    """The manifest's repositories: ``[{"repo": "owner/name", "commit": sha, "include"?: [prefix],
    "exclude"?: [prefix]}]``."""
    return json.loads(path.read_text(encoding="utf-8"))["repositories"]


def slug(repo: str) -> str:
    """``owner/name`` -> ``owner+name`` (the snapshot's and the cache's folder name)."""
    return repo.replace("/", "+")


def unpack_one(entry: dict, mirror: Path, cache: Path) -> str:
    """Unpack one repository; returns ``"unpacked"``, ``"cached"`` or a reason it could not."""
    name = slug(entry["repo"])
    git_dir = mirror / name / "repo"
    dest = cache / name
    stamp = dest / ".corpus-commit"
    if stamp.is_file() and stamp.read_text().strip() == entry["commit"]:
        return "cached"
    if not git_dir.is_dir():
        return f"no snapshot at {git_dir} (fetch github:{entry['repo']} first)"
    # Path specs keep git from reading the blobs of excluded files (absent from the snapshot).
    specs = [f":(exclude){prefix}" for prefix in entry.get("exclude") or ()]
    proc = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", entry["commit"],
                           *(["--", ".", *specs] if specs else [])],
                          capture_output=True)
    if proc.returncode != 0:
        return f"commit {entry['commit'][:12]} not in the snapshot: {proc.stderr.decode(errors='replace').strip()}"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    include = tuple(entry.get("include") or ())
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        members = []
        for m in tar.getmembers():
            if include and not m.name.startswith(include):
                continue
            if not (m.isfile() or m.isdir()):
                continue  # links stay out: the corpus is read, never executed or followed
            members.append(m)
        tar.extractall(dest, members=members, filter="data")
    for prefix in entry.get("exclude") or ():
        listed = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", entry["commit"],
                                 "--", prefix], capture_output=True, text=True)
        for rel in listed.stdout.splitlines():
            target = dest / rel
            if target.resolve().is_relative_to(dest.resolve()) and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(b"")
    config = entry.get("luaguard_toml")
    if config:
        target = dest / config["dir"] / "luaguard.toml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# written by bench/corpus/unpack.py: {config['why']}\n" + config["text"], encoding="utf-8")
    stamp.write_text(entry["commit"] + "\n")
    return "unpacked"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="where fetched snapshots are")
    ap.add_argument("--cache", type=Path, default=None, help="where to unpack (default: $LUAGUARD_CORPUS or ~/.cache/luaguard/corpus)")
    args = ap.parse_args(argv)
    cache = args.cache or default_cache()
    cache.mkdir(parents=True, exist_ok=True)
    missing = []
    for entry in load_manifest():
        status = unpack_one(entry, args.mirror, cache)
        print(f"{entry['repo']:<40} {status}")
        if status not in ("unpacked", "cached"):
            missing.append(entry["repo"])
    print(f"corpus at {cache}: {len(load_manifest()) - len(missing)} repositories ready"
          + (f", {len(missing)} missing: {', '.join(missing)}" if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
