"""``luaguard check --jobs N``: worker processes change nothing but the time taken."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from luaguard import parallel

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"

needs_fork = pytest.mark.skipif(not parallel._can_fork(), reason="workers are forked; this platform runs one process")


def run(args, cwd: Path):
    return subprocess.run([sys.executable, "-m", "luaguard.cli", *args], capture_output=True, cwd=cwd, timeout=120)


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """The sample place plus files that give findings of several kinds (an unknown path, a
    TODO, a syntax error, invalid UTF-8, a binary file), enough files for several workers."""
    root = tmp_path / "place"
    shutil.copytree(PLACE, root)
    shared = root / "src" / "shared" / "Modules"
    shared.mkdir(parents=True, exist_ok=True)
    for i in range(12):
        (shared / f"Gen{i:02d}.luau").write_text(
            f'local RS = game:GetService("ReplicatedStorage")\n'
            f"local m = RS.Modulez{i}  -- TODO: later\n"
            f"local function f{i}(x)\n  return x + {i}\n" + ("end\n" if i % 3 else "") + "return m\n")
    (shared / "Latin1.luau").write_bytes(b"local s = '\xe9t\xe9'\nreturn s\n")
    (shared / "Binary.luau").write_bytes(b"\x00\x01\x02" * 50)
    return root


@needs_fork
def test_workers_print_what_one_process_prints(place: Path):
    outs = {}
    for jobs in ("1", "2", "3"):
        proc = run(["check", "--format", "json", "--stats", "--jobs", jobs, "src"], place)
        outs[jobs] = (proc.returncode, proc.stdout, proc.stderr)
    assert outs["1"] == outs["2"] == outs["3"]
    code, stdout, stderr = outs["1"]
    assert code == 1
    found = json.loads(stdout)
    files = [f["file"] for f in found]
    assert len(set(files)) >= 12  # every generated file has a finding
    # the files in the order one process checks them (sorted), each file's findings in place
    assert files == sorted(files, key=lambda f: [p for p in Path(f).parts])
    assert b"unknown_instance" in stderr or b"unknown_instance" in stdout  # (--stats counted the workers' findings)


@needs_fork
def test_workers_text_output_and_stats_are_the_same(place: Path):
    one = run(["check", "--stats", "--jobs", "1", "src"], place)
    two = run(["check", "--stats", "--jobs", "2", "src"], place)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    assert b"placeholder" in one.stdout and b"Found " in one.stdout


def test_jobs_must_be_a_positive_number(place: Path):
    proc = run(["check", "--jobs", "0", "src"], place)
    assert proc.returncode == 2
    assert b"--jobs" in proc.stderr


@needs_fork
def test_map_ordered_keeps_the_order_and_uses_workers():
    pids = list(parallel.map_ordered(lambda i: (i, os.getpid()), list(range(40)), 2))
    assert [i for i, _ in pids] == list(range(40))
    assert os.getpid() not in {p for _, p in pids}


def test_map_ordered_runs_here_for_one_job_or_few_items():
    assert {p for p in parallel.map_ordered(lambda i: os.getpid(), list(range(40)), 1)} == {os.getpid()}
    assert {p for p in parallel.map_ordered(lambda i: os.getpid(), [1, 2], 4)} == {os.getpid()}


@needs_fork
def test_map_ordered_raises_a_workers_exception():
    def boom(i):
        if i == 7:
            raise ValueError("file 7")
        return i

    with pytest.raises(ValueError, match="file 7"):
        list(parallel.map_ordered(boom, list(range(20)), 2))


@needs_fork
def test_a_worker_that_dies_is_an_error_not_a_hang():
    code = ("import os\nfrom luaguard import parallel\n"
            "def f(i):\n    if i == 5:\n        os._exit(3)\n    return i\n"
            "try:\n    list(parallel.map_ordered(f, list(range(30)), 2))\n"
            "except RuntimeError as exc:\n    print('raised:', exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert b"raised: a worker process ended abruptly" in proc.stdout, proc.stderr
