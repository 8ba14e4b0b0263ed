"""``luaguard mcp``'s ``check_luau`` in editor mode reads only regular files inside the project
root, as patch mode and ``check_diff`` do (issue 41: absolute paths, ``../``, links and
``/dev/zero`` were read, and the findings leaked the file's words)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostile import SECRET, JsonLines, make_repo, popen_luaguard

pytest.importorskip("mcp")


@pytest.fixture
def mcp(tmp_path: Path):
    ws, outside = make_repo(tmp_path)
    os.symlink(outside / "creds.luau", ws / "src" / "shared" / "Creds.luau")
    os.symlink("/dev/zero", ws / "src" / "shared" / "Zero.luau")
    os.mkfifo(ws / "src" / "shared" / "Pipe.luau")
    conv = JsonLines(popen_luaguard(["mcp", "--project", str(ws)], cwd=ws))
    conv.initialize()
    yield conv, ws, outside
    conv.close()


def test_editor_mode_refuses_paths_outside_the_project(mcp) -> None:
    conv, ws, outside = mcp
    paths = [str(outside / "creds.luau"), "../outside/creds.luau", "src/../../outside/creds.luau",
             "src/shared/Creds.luau", str(ws / "src" / "shared" / "Creds.luau"), "/dev/zero", "src/shared/Zero.luau",
             "/etc/passwd"]
    for i, path in enumerate(paths, 1):
        got = conv.call(i, "check_luau", {"path": path, "mode": "editor"})
        assert "result" in got, (path, got)
        text = json.dumps(got)
        assert SECRET not in text and "root:" not in text, (path, text[:500])
        assert "path_outside_project" in text, (path, text[:500])


def test_editor_mode_refuses_what_is_not_a_regular_file(mcp) -> None:
    conv, _ws, _ = mcp
    got = conv.call(1, "check_luau", {"path": "src/shared/Pipe.luau", "mode": "editor"}, timeout=60)
    text = json.dumps(got)
    assert got["result"]["isError"] and "not a regular file" in text, text[:500]
    got = conv.call(2, "check_luau", {"path": "src/shared/Util.luau", "mode": "editor"})  # still serving
    assert not got["result"]["isError"]
