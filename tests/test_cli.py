"""The command-line front end: output formats, exit codes, stdin, bad projects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from luaguard.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
PATCHES = ROOT / "samples" / "patches"


def run(args, stdin: bytes | None = None, cwd: Path = ROOT):
    return subprocess.run(
        [sys.executable, "-m", "luaguard.cli", *args], input=stdin, capture_output=True, cwd=cwd, timeout=120
    )


def test_check_sample_place_is_clean(capsys):
    code = main(["check", str(PLACE)])
    out = capsys.readouterr().out
    assert code == 0
    assert "No problems found in" in out


def test_check_patch_from_stdin_text_output():
    patch = (PATCHES / "combat_bad_path.luau").read_bytes()
    proc = run(["check", "-", "--project", str(PLACE), "--stdin-filename", "src/shared/Modules/Combat.luau", "--patch"], patch)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "src/shared/Modules/Combat.luau:13:" in out
    assert "error[unknown_instance] 'Modulez' is not a child of" in out
    assert "Found 1 error in 1 of 1 file." in out


def test_check_json_output_shape():
    patch = (PATCHES / "hud_todo.luau").read_bytes()
    case = next(c for c in json.loads((PATCHES / "manifest.json").read_text()) if c["patch"] == "hud_todo.luau")
    proc = run(["check", "-", "--project", str(PLACE), "--stdin-filename", case["target"], "--format", "json", "--patch"], patch)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert isinstance(data, list) and data
    item = data[0]
    assert set(item) == {"file", "range", "severity", "code", "message", "suggestions", "fix"}
    assert set(item["range"]) == {"start", "end"} and set(item["range"]["start"]) == {"line", "character"}
    assert item["severity"] in ("error", "warning", "information", "hint")
    assert item["range"]["start"]["line"] == case["expect"][0]["line"] - 1  # 0-based


def test_editor_mode_todo_exits_zero(tmp_path):
    f = tmp_path / "a.luau"
    f.write_text("local x = 1 -- TODO: later\n")
    proc = run(["check", str(f)])
    assert proc.returncode == 0
    assert "warning[placeholder]" in proc.stdout.decode()


def test_bad_project_file_exit_2_names_file_and_position(tmp_path):
    (tmp_path / "default.project.json").write_text('{\n  "name": "x",\n  "tree": \n}\n')
    (tmp_path / "a.luau").write_text("print(1)\n")
    proc = run(["check", str(tmp_path / "a.luau")])
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "default.project.json:4:1: invalid JSON" in err


def test_project_shape_error_exit_2(tmp_path):
    (tmp_path / "default.project.json").write_text('{\n  "name": "x",\n  "tree": {"A": {"$path": 5}}\n}\n')
    (tmp_path / "a.luau").write_text("print(1)\n")
    proc = run(["check", str(tmp_path / "a.luau")])
    assert proc.returncode == 2
    assert "default.project.json" in proc.stderr.decode()


def test_missing_path_is_usage_error():
    proc = run(["check", "does/not/exist.luau"])
    assert proc.returncode == 2
    assert "no such file" in proc.stderr.decode()


def test_index_prints_tree_with_open_nodes():
    proc = run(["index", "--project", str(PLACE)])
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert "ReplicatedStorage" in out and "open" in out
    proc = run(["index", "--project", str(PLACE), "--format", "json"])
    tree = json.loads(proc.stdout)
    assert tree["className"] == "DataModel"


def test_stats_flag_counts_by_rule(capsys):
    main(["check", str(PATCHES / "hud_todo.luau"), "--project", str(PLACE), "--stats"])
    out = capsys.readouterr().out
    assert "findings by rule:" in out and "placeholder" in out


def test_version_says_whether_the_mask_walk_is_compiled(capsys, monkeypatch):
    import importlib.util

    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("luaguard ") and "(mask walk: compiled)" in out  # the install builds it
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name.endswith("._walk") else real(name, *a))
    assert main(["--version"]) == 0
    assert "mask walk: Python; the compiled module was not built" in capsys.readouterr().out


COMBAT_AT = "samples/place/src/server/Services/CombatService.luau:20:1"


def test_missing_guard_extra_is_found_without_importing_it(monkeypatch):
    import importlib.util

    import luaguard.guard as G

    assert G.missing_dependencies() == []  # the test install has the extra
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("torch", "tokenizers") else real(name, *a))
    assert G.missing_dependencies() == ["torch", "tokenizers"]
    # luaguard is not on PyPI: the command names this interpreter and this clone (an editable install)
    assert f"{sys.executable} -m pip install -e '{ROOT}[guard]'" in G.missing_message(["torch"])


def test_complete_without_the_guard_extra_is_a_usage_error():
    """An install without the ``guard`` extra (numpy made unimportable in a fresh process):
    ``luaguard complete`` says what to install and exits 2, with no traceback."""
    code = ("import sys; sys.modules['numpy'] = None; from luaguard.cli import main; "
            f"raise SystemExit(main(['complete', {str(ROOT / COMBAT_AT)!r}]))")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert got.returncode == 2, got.stderr
    assert "missing: numpy" in got.stderr and f"-m pip install -e '{ROOT}[guard]'" in got.stderr
    assert "Traceback" not in got.stderr


def test_language_server_without_the_guard_extra_reports_it_once():
    """Without the ``guard`` extra the completion feature answers nothing and shows one
    message; re-indexing and file changes do not touch the guard (no import error logged)."""
    code = r'''
import asyncio, sys
sys.modules["numpy"] = None
from types import SimpleNamespace
from luaguard.config import CompletionSettings
from luaguard.lsp.completion import CompletionFeature

shown = []
server = SimpleNamespace(host=SimpleNamespace(settings=SimpleNamespace(completion=CompletionSettings())),
                         show_once=lambda key, msg: shown.append(msg))
feature = CompletionFeature(server)
feature.on_engine_replaced()
assert asyncio.run(feature.generate("file:///x.luau", None)) is None
assert asyncio.run(feature.generate("file:///x.luau", None)) is None
feature.on_shutdown()
assert "luaguard.guard.matcher" not in sys.modules
print(shown)
'''
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert got.returncode == 0, got.stderr
    assert "missing: numpy" in got.stdout and f"-m pip install -e '{ROOT}[guard]'" in got.stdout
