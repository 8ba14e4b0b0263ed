"""``luaguard hook`` never loses an answer: every input gives a well-formed answer (a denial
stays a denial), the time-out ends the process, and the stash of old texts is private and
never followed through a planted link (issue 41, "lost edits and denials")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hostile import make_repo, out_text, run_luaguard

#: an unknown service whose name ends in a lone surrogate: denied, and the name is quoted back
BAD_WRITE = 'local P = game:GetService("Playerz\ud800")\nprint(P)\n'


def _payload(ws: Path, content: str, **extra) -> str:
    body = {"session_id": "s", "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": str(ws / "src" / "server" / "New.server.luau"), "content": content}, **extra}
    return json.dumps(body)


def _well_formed(proc: subprocess.CompletedProcess) -> None:
    text = out_text(proc)
    assert proc.returncode in (0, 2), text[-2000:]
    assert "Traceback" not in text, text[-2000:]
    if proc.stdout.strip():
        assert isinstance(json.loads(proc.stdout), dict)


def test_an_integer_over_4300_digits_is_answered(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    data = _payload(ws, "print(1)\n")[:-1] + ', "n": ' + "9" * 5000 + "}"
    proc = run_luaguard(["hook"], cwd=ws, input=data)
    _well_formed(proc)


def test_json_nested_as_a_string_is_answered(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    for agent in ("claude", "cursor", "copilot"):
        body = {"cwd": str(ws), "tool_name": "Write", "tool_input": "[" * 200_000 + "]" * 200_000,
                "toolName": "Write", "toolArgs": "{" + '"a":' * 100_000 + "1" + "}" * 100_000}
        proc = run_luaguard(["hook", "--agent", agent], cwd=ws, input=json.dumps(body))
        _well_formed(proc)


def test_a_lone_surrogate_in_the_code_keeps_the_denial(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    data = _payload(ws, BAD_WRITE)
    proc = run_luaguard(["hook", "--agent", "cursor"], cwd=ws, input=data)
    _well_formed(proc)
    assert json.loads(proc.stdout)["permission"] == "deny"
    proc = run_luaguard(["hook", "--output", "json"], cwd=ws, input=data)
    _well_formed(proc)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    copilot = json.dumps({"cwd": str(ws), "toolName": "create",
                          "toolArgs": {"path": str(ws / "src" / "server" / "New.server.luau"), "file_text": BAD_WRITE}})
    proc = run_luaguard(["hook", "--agent", "copilot"], cwd=ws, input=copilot)
    _well_formed(proc)
    assert json.loads(proc.stdout)["permissionDecision"] == "deny"
    proc = run_luaguard(["hook"], cwd=ws, input=data)
    assert proc.returncode == 2 and b"Playerz" in proc.stderr


def test_an_edit_of_a_file_linked_to_dev_zero_is_answered_without_reading_it(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    os.symlink("/dev/zero", ws / "src" / "server" / "Zero.server.luau")
    body = {"cwd": str(ws), "hook_event_name": "PreToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(ws / "src" / "server" / "Zero.server.luau"), "old_string": "a",
                           "new_string": "b"}}
    proc = run_luaguard(["hook", "--timeout", "60"], cwd=ws, input=json.dumps(body), timeout=120)
    _well_formed(proc)
    assert "MemoryError" not in out_text(proc)


TIMEOUT_SCRIPT = r"""
import sys, threading, time
import luaguard.agents.hook as hook

def slow(use, options=None):   # judging that outlives the time-out and keeps a thread alive
    threading.Thread(target=time.sleep, args=(600,), daemon=False).start()
    time.sleep(600)

hook.evaluate = slow
from luaguard.cli import main
sys.exit(main(["hook", "--timeout", "0.5"]))
"""


def test_the_timeout_ends_the_process_not_only_the_answer(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-P", "-c", TIMEOUT_SCRIPT], cwd=ws, input=_payload(ws, "print(1)\n").encode(),
                          capture_output=True, timeout=120)
    assert time.monotonic() - t0 < 100  # the work takes 600 s
    assert proc.returncode == 0 and b"no answer within 0.5 s" in proc.stderr, out_text(proc)


def test_the_stash_never_follows_a_planted_link(tmp_path: Path) -> None:
    """Another user (or the repository's own scripts) plants the hook's stash directory as a
    link to a folder of the victim's: the hook's clean-up must not delete what it points to."""
    ws, _ = make_repo(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    old = time.time() - 3 * 24 * 3600
    for name in ("thesis.tex", "a" * 64 + ".json"):
        (victim / name).write_text("precious\n")
        os.utime(victim / name, (old, old))
    tmpdir, cache = tmp_path / "tmp", tmp_path / "cache"
    tmpdir.mkdir()
    cache.mkdir()
    os.symlink(victim, tmpdir / f"luaguard-hook-{os.getuid()}")
    os.symlink(victim, cache / "hook")
    env = dict(os.environ, TMPDIR=str(tmpdir), LUAGUARD_CACHE_DIR=str(cache), XDG_CACHE_HOME=str(cache))
    proc = run_luaguard(["hook"], cwd=ws, input=_payload(ws, "print(1)\n"), env=env)
    assert proc.returncode == 0, out_text(proc)
    assert sorted(p.name for p in victim.iterdir()) == sorted(["thesis.tex", "a" * 64 + ".json"])


def test_the_stash_is_private(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    cache = tmp_path / "cache"
    env = dict(os.environ, LUAGUARD_CACHE_DIR=str(cache), XDG_CACHE_HOME=str(cache), TMPDIR=str(tmp_path))
    proc = run_luaguard(["hook"], cwd=ws, input=_payload(ws, "print(1)\n"), env=env)
    assert proc.returncode == 0, out_text(proc)
    stash = cache / "hook"
    assert stash.is_dir() and not stash.is_symlink()
    st = stash.stat()
    assert st.st_uid == os.getuid() and (st.st_mode & 0o777) == 0o700
    assert [p.stat().st_mode & 0o777 for p in stash.iterdir()] == [0o600]
