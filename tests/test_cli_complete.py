"""``luaguard complete`` as a user meets it: the README's example gives the output the README
shows, stderr says which model answered (the shipped one is a demonstration) and carries no
library warning, and ``completion.endpoint`` is used when set."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from endpoint_standin import completion_endpoint, completion_reply

from luaguard.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _readme_examples() -> list[tuple[list[str], list[str]]]:
    """``(argv, printed lines)`` of each ``$ luaguard complete ...`` in the README's
    "Guarded completions" section (``text`` blocks: a command line, then what it printed)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Guarded completions", 1)[1].split("\n## ", 1)[0]
    out = []
    for block in re.findall(r"```text\n(.*?)```", section, re.S):
        lines = block.splitlines()
        starts = [i for i, ln in enumerate(lines) if ln.startswith("$ luaguard complete ")]
        for k, i in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else len(lines)
            out.append((lines[i][len("$ luaguard "):].split(), lines[i + 1:end]))
    return out


def test_readme_example_output_is_what_the_command_prints() -> None:
    """The README's completion examples, run as written: stdout is exactly the pasted text,
    and the pasted stderr lines (all but the load time) are what stderr says."""
    examples = _readme_examples()
    assert len(examples) >= 2, "the README shows a guarded and an unguarded completion"
    env = dict(os.environ, PYTHONWARNINGS="default")  # DeprecationWarnings too
    for argv, shown in examples[:1]:
        run = subprocess.run([sys.executable, "-m", "luaguard", *argv], capture_output=True, text=True, cwd=ROOT,
                             env=env, timeout=300)
        assert run.returncode == 0, run.stderr
        err = run.stderr.splitlines()
        printed = [ln for ln in shown if not ln.startswith("luaguard: ")]
        assert run.stdout.splitlines() == printed
        for line in shown:
            if line.startswith("luaguard: ") and "loaded in" not in line:
                assert line in err, (line, err)
        assert any(re.fullmatch(r"luaguard: loaded in \d+\.\d s on cpu; generating \.\.\.", ln) for ln in err)
        # no library warnings (transformers' past_key_values FutureWarning was one)
        assert not [ln for ln in err if "Warning" in ln or ln.startswith("[transformers]")], err
        assert len(err) == len([ln for ln in shown if ln.startswith("luaguard: ")])


def test_readme_unguarded_example(capsys: pytest.CaptureFixture[str]) -> None:
    """The second example (in this process: the model is already cached here)."""
    argv, shown = _readme_examples()[1]
    assert "--no-guard" in argv
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [ln for ln in shown if not ln.startswith("luaguard: ")]
    answered = next(ln for ln in shown if ln.startswith("luaguard: answered by"))
    assert answered in err.splitlines() and "the demonstration model" in answered


def test_json_output_names_the_backend(capsys: pytest.CaptureFixture[str]) -> None:
    argv, _shown = _readme_examples()[0]
    assert main([*argv, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["backend"] == "local" and data["model"] == "demonstration" and data["demonstration"] is True
    assert data["fimFamily"] is None  # (--no-fim)
    assert "loading the demonstration model (1.8M parameters" in err


def test_complete_uses_the_endpoint_when_set(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With completion.endpoint set (in the user's own config: a repository cannot set it), no
    local model is loaded: the server answers, and stderr says so."""
    with completion_endpoint(completion_reply("Shared.Net)", [-0.1, -0.2], finish_reason="stop")) as endpoint:
        url = endpoint.url
        user = tmp_path / "user-config.toml"
        user.write_text(f'[completion]\nendpoint = "{url}"\nendpoint_model = "qwen-coder"\nendpoint_project = "place"\n')
        monkeypatch.setenv("LUAGUARD_USER_CONFIG", str(user))
        src = tmp_path / "Main.server.luau"
        src.write_text("local Net = require(game.ReplicatedStorage.\n")
        assert main(["complete", f"{src}:1:44", "--project", str(tmp_path)]) == 0
    seen = endpoint.bodies
    out, err = capsys.readouterr()
    assert out == "Shared.Net)\n"
    assert seen and seen[0]["prompt"] == "local Net = require(game.ReplicatedStorage." and seen[0]["model"] == "qwen-coder"
    assert f"luaguard: asking {url} (completion.endpoint) for model qwen-coder" in err
    assert "luaguard: answered by endpoint model qwen-coder: guarded" in err
    assert "loading" not in err and "demonstration" not in err
    # --model asks for a local model instead (here: one that is not there, named in the error)
    assert main(["complete", f"{src}:1:44", "--project", str(tmp_path), "--model", str(tmp_path / "none")]) == 2
    assert "no such model folder" in capsys.readouterr().err
