"""The CLI reads and writes only regular files inside the project root, with the size limit
enforced while reading, and writes a fix only over the text it was computed from (issue 41,
"writes and reads outside the repository", "unbounded reads", "lost edits")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hostile import FIXABLE, SECRET, make_repo, out_text, run_luaguard


def test_fix_never_rewrites_a_file_a_link_in_the_repository_points_to(tmp_path: Path) -> None:
    ws, outside = make_repo(tmp_path)
    victim = outside / "victim.luau"
    victim.write_text(FIXABLE)
    os.symlink(victim, ws / "src" / "server" / "x.server.luau")
    own = ws / "src" / "server" / "Own.server.luau"
    own.write_text(FIXABLE)  # the same text inside the project is fixed: the fix exists
    proc = run_luaguard(["check", "--fix", "."], cwd=ws)
    assert proc.returncode in (0, 1), out_text(proc)
    assert victim.read_text() == FIXABLE, "a file outside the project was rewritten"
    assert 'GetService("Players")' in own.read_text()
    assert (ws / "src" / "server" / "x.server.luau").is_symlink()
    assert "outside the project root" in out_text(proc)


def test_check_never_reads_a_link_to_a_file_outside_and_says_so_once(tmp_path: Path) -> None:
    ws, outside = make_repo(tmp_path)
    os.symlink(outside / "creds.luau", ws / "src" / "server" / "Passwd.luau")
    os.symlink(outside / "creds.luau", ws / "src" / "shared" / "Creds.luau")
    proc = run_luaguard(["check", "."], cwd=ws)
    text = out_text(proc)
    assert proc.returncode in (0, 1), text
    assert SECRET not in text, "the words of a file outside the project came back as findings"
    notes = [line for line in text.splitlines() if line.startswith("luaguard:") and "outside the project root" in line]
    assert len(notes) == 1, text


def test_a_top_level_project_file_linked_outside_the_root_is_refused(tmp_path: Path) -> None:
    ws, outside = make_repo(tmp_path)
    real = outside / "game.project.json"
    os.replace(ws / "default.project.json", real)
    os.symlink(real, ws / "default.project.json")
    proc = run_luaguard(["index", "--project", str(ws)], cwd=ws)
    assert proc.returncode == 2, out_text(proc)
    assert "outside the project root" in out_text(proc)
    # a sourcemap too
    os.unlink(ws / "default.project.json")
    (outside / "sourcemap.json").write_text('{"name": "g", "className": "DataModel", "children": []}')
    os.symlink(outside / "sourcemap.json", ws / "sourcemap.json")
    proc = run_luaguard(["index", "--project", str(ws)], cwd=ws)
    assert proc.returncode == 2 and "outside the project root" in out_text(proc), out_text(proc)


def test_a_script_linked_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    os.symlink("/dev/zero", ws / "src" / "server" / "Zero.server.luau")
    proc = run_luaguard(["check", "."], cwd=ws, timeout=120)
    text = out_text(proc)
    assert proc.returncode in (0, 1) and "Traceback" not in text and "MemoryError" not in text, text[-2000:]


def test_a_fifo_in_the_repository_is_not_opened_for_reading(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    os.mkfifo(ws / "src" / "server" / "Pipe.server.luau")
    proc = run_luaguard(["check", "."], cwd=ws, timeout=60)  # opening a FIFO blocks until a writer comes
    text = out_text(proc)
    assert proc.returncode in (0, 1) and "Traceback" not in text, text[-2000:]
    assert "not a regular file" in text


def test_a_selene_std_file_linked_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    (ws / "selene.toml").write_text('std = "roblox+zero"\n')
    os.symlink("/dev/zero", ws / "zero.toml")
    (ws / "Defs.d.luau").symlink_to("/dev/zero")
    proc = run_luaguard(["check", "."], cwd=ws, timeout=120)
    text = out_text(proc)
    assert proc.returncode in (0, 1) and "Traceback" not in text and "MemoryError" not in text, text[-2000:]


def test_a_huge_script_is_refused_while_reading_not_after(tmp_path: Path) -> None:
    """A sparse 64 GiB file: reading it whole before checking the limit takes all memory."""
    ws, _ = make_repo(tmp_path)
    with open(ws / "src" / "server" / "Huge.server.luau", "wb") as fh:
        fh.truncate(64 * 1024 ** 3)
    proc = run_luaguard(["check", "src/server/Huge.server.luau"], cwd=ws, timeout=120)
    text = out_text(proc)
    assert "MemoryError" not in text and "Traceback" not in text, text[-2000:]
    assert "limit" in text


def test_fix_keeps_a_line_saved_while_the_file_was_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``--fix`` reads, lints (seconds on a large file), then writes: a save in between must
    win - the fix is skipped and the user told, never the saved line lost."""
    import luaguard.fixes as fixes
    from luaguard.cli import main

    ws, _ = make_repo(tmp_path)
    target = ws / "src" / "server" / "Fixme.server.luau"
    target.write_text(FIXABLE)
    real_fix_text = fixes.fix_text
    saved = FIXABLE + "print('saved by the editor meanwhile')\n"

    def fix_text_while_the_user_saves(*args, **kwargs):
        result = real_fix_text(*args, **kwargs)
        target.write_text(saved)
        return result

    monkeypatch.setattr(fixes, "fix_text", fix_text_while_the_user_saves)
    monkeypatch.chdir(ws)
    main(["check", "--fix", str(target)])
    err = capsys.readouterr().err
    assert target.read_text() == saved, "the line saved meanwhile was lost"
    assert "changed" in err and "not fixed" in err, err


def test_a_baseline_linked_outside_the_root_is_not_written(tmp_path: Path) -> None:
    ws, outside = make_repo(tmp_path)
    precious = outside / "bashrc"
    precious.write_text("export PATH=/usr/bin\n")
    os.symlink(precious, ws / "luaguard-baseline.json")
    proc = run_luaguard(["check", ".", "--baseline", "luaguard-baseline.json", "--update-baseline"], cwd=ws)
    assert precious.read_text() == "export PATH=/usr/bin\n", out_text(proc)
    assert "outside the project root" in out_text(proc)
