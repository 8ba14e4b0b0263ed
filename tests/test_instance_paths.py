"""Instance-path checks where the project changes around the file (another script names the
child).  The rules' own cases are the fixtures of tests/rules/ (unknown_instance,
likely_unknown_instance, unverified_instance, unknown_service)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from luaguard.engine import Engine


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    tree = {
        "name": "Game",
        "tree": {
            "$className": "DataModel",
            "ReplicatedStorage": {
                "$className": "ReplicatedStorage",
                "Shared": {"$path": "src/shared"},
                "Remotes": {"$className": "Folder", "Damage": {"$className": "RemoteEvent"}},
            },
            "ServerScriptService": {"$className": "ServerScriptService", "Server": {"$path": "src/server"}},
            "StarterGui": {"$className": "StarterGui", "$path": "src/gui"},
        },
    }
    (tmp_path / "default.project.json").write_text(json.dumps(tree))
    shared = tmp_path / "src" / "shared"
    (shared / "Modules").mkdir(parents=True)
    (shared / "Modules" / "Combat.luau").write_text("return {}")
    (shared / "Modules" / "Hitbox.luau").write_text("return {}")
    (shared / "Signal.luau").write_text("return {}")
    (shared / "Space Name").mkdir()
    (shared / "Space Name" / "init.luau").write_text("return {}")
    (tmp_path / "src" / "server").mkdir(parents=True)
    (tmp_path / "src" / "server" / "Main.server.luau").write_text("print('hi')")
    gui = tmp_path / "src" / "gui" / "Hud"
    gui.mkdir(parents=True)
    (gui / "init.meta.json").write_text(json.dumps({"className": "ScreenGui"}))
    (gui / "Controller.client.luau").write_text("print('gui')")
    return tmp_path


def lint(project: Path, src: str, file: str = "src/server/Main.server.luau", mode: str = "editor"):
    return Engine(project).lint_text(src, project / file, mode=mode)


def rules(findings):
    return [(f.rule, f.range.start.line + 1) for f in findings]


def test_names_other_scripts_read_or_create_back_a_name_under_an_open_node(project):
    (project / "src" / "server" / "Net.server.luau").write_text(
        'local remotes = game:GetService("ReplicatedStorage"):WaitForChild("Events")\n'
        "remotes.Buy.OnServerEvent:Connect(print)\n"
        'local made = "Sky"\n')
    src = "\n".join([
        "game.ReplicatedStorage.Events.Buy:FireServer()",    # both read by another script
        "game.ReplicatedStorage.Events.Sell:FireServer()",   # Events backed, Sell read nowhere
        'print(game:GetService("Lighting").Sky)',             # a script names it
    ])
    found = lint(project, src, mode="patch")
    assert rules(found) == [("unverified_instance", 2)]
    assert "'Sell' is not in the project under game.ReplicatedStorage.Events" in found[0].message


@pytest.mark.parametrize("src", [
    "local x = script.Parent.\nlocal y = 1\n",  # a name missing at the end of a line
    "local x = game.ReplicatedStorage.Remotes.\nlocal y = 1\n",  # under a closed folder
    "game.ReplicatedStorage.Shared.:Connect()\n",
    "script.Parent.Parent.[\"x\"]\n",
    "local p = Instance.new(\"Part\")\np:(1)\n",  # a missing method name
])
def test_a_syntax_errors_missing_name_is_never_judged_as_a_name(project, src):
    # the parser stands a placeholder in for the missing identifier; only the syntax error
    # may be reported, never "'%error-id%' is not a child of ..."
    for mode in ("editor", "patch"):
        found = lint(project, src, mode=mode)
        assert any(f.rule == "syntax_error" for f in found)
        assert all("error-id" not in f.message for f in found), [f.message for f in found]
        assert {f.rule for f in found} <= {"syntax_error", "unbalanced_bracket", "unclosed_block"}
