#!/usr/bin/env python3
"""Benchmark the project indexer: cold index time, peak memory, incremental update time.

Usage::

    python bench/index_speed.py [--sizes 1000,10000,50000] [--repeat 3]

For each size N it generates a Rojo place project of N files under a temporary
directory (``default.project.json`` mapping ReplicatedStorage/ServerScriptService/
StarterPlayer to ``src/shared``, ``src/server``, ``src/client``; directories of about 40
files, a few ``init.luau`` directories and ``.meta.json`` files), then prints:

* cold index time (best of ``--repeat`` runs of ``load_project``; the API data is loaded
  once beforehand, as the LSP and CLI do);
* peak Python memory during one cold index (``tracemalloc``) and the process's max RSS;
* incremental update times for ``apply_file_changes``: editing a script (no tree change),
  adding a new script, and deleting it (median of 50 each).

Targets (from the project brief): 10,000 files cold in <= 1 s; one-file update <= 10 ms.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from luaguard.project import load_api, load_project  # noqa: E402

FILES_PER_DIR = 40


def generate(root: Path, n_files: int) -> None:
    """Write a project of ``n_files`` files (scripts plus a few meta files) under ``root``."""
    project = {
        "name": "Bench",
        "tree": {
            "$className": "DataModel",
            "ReplicatedStorage": {"Shared": {"$path": "src/shared"}},
            "ServerScriptService": {"Server": {"$path": "src/server"}},
            "StarterPlayer": {"StarterPlayerScripts": {"Client": {"$path": "src/client"}}},
            "Workspace": {"$properties": {"Gravity": 196.2}},
        },
    }
    (root / "default.project.json").write_text(json.dumps(project, indent=2))
    areas = [("shared", ""), ("server", ".server"), ("client", ".client")]
    written = 0
    d = 0
    while written < n_files:
        area, suffix = areas[d % 3]
        depth_path = root / "src" / area / f"group{d // 30}" / f"dir{d}"
        depth_path.mkdir(parents=True, exist_ok=True)
        for i in range(FILES_PER_DIR):
            if written >= n_files:
                break
            if i == 0 and d % 5 == 0:
                name = "init.luau"
            elif i == 1 and d % 7 == 0:
                (depth_path / f"File{i - 1}.meta.json").write_text('{"ignoreUnknownInstances": false}')
                written += 1
                continue
            else:
                name = f"File{i}{suffix if i % 4 == 0 else ''}.luau"
            (depth_path / name).write_text("return {}\n")
            written += 1
        d += 1


def bench(n: int, repeat: int) -> dict[str, float]:
    api = load_api()
    tmp = Path(tempfile.mkdtemp(prefix=f"luaguard-bench-{n}-"))
    try:
        generate(tmp, n)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            index = load_project(tmp, api=api)
            times.append(time.perf_counter() - t0)
        tracemalloc.start()
        index = load_project(tmp, api=api)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        n_instances = sum(1 for _ in index.root.descendants()) + 1

        edit_target = next(p for p in index.file_instances if p.endswith("File2.luau"))
        new_rel = str(Path(edit_target).parent / "BrandNew.luau")
        edit, add, delete = [], [], []
        for _ in range(50):
            t0 = time.perf_counter()
            index.apply_file_changes([edit_target])
            edit.append(time.perf_counter() - t0)
            (tmp / new_rel).write_text("return 1\n")
            t0 = time.perf_counter()
            index.apply_file_changes([new_rel])
            add.append(time.perf_counter() - t0)
            assert index.instances_for_file(new_rel), "new file was not indexed"
            (tmp / new_rel).unlink()
            t0 = time.perf_counter()
            index.apply_file_changes([], [new_rel])
            delete.append(time.perf_counter() - t0)
            assert not index.instances_for_file(new_rel), "deleted file still indexed"
        return {
            "files": n,
            "instances": n_instances,
            "cold_s": min(times),
            "peak_mib": peak / 2**20,
            "edit_ms": statistics.median(edit) * 1000,
            "add_ms": statistics.median(add) * 1000,
            "delete_ms": statistics.median(delete) * 1000,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'files':>7} {'instances':>9} {'cold (s)':>9} {'peak MiB':>9} "
          f"{'edit ms':>8} {'add ms':>8} {'delete ms':>9}")
    for n in (int(x) for x in args.sizes.split(",")):
        r = bench(n, args.repeat)
        print(f"{r['files']:>7} {r['instances']:>9} {r['cold_s']:>9.3f} {r['peak_mib']:>9.1f} "
              f"{r['edit_ms']:>8.3f} {r['add_ms']:>8.3f} {r['delete_ms']:>9.3f}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS: {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
