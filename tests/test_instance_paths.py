"""Instance-path checks on a small Rojo project: chains, scopes, open nodes, run-time
names, services, fixes."""

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


def test_typo_under_closed_node_with_suggestion_and_fix(project):
    src = 'local RS = game:GetService("ReplicatedStorage")\nlocal C = require(RS.Shared.Modulez.Combat)\n'
    [f] = lint(project, src)
    assert f.rule == "unknown_instance"
    assert f.message == "'Modulez' is not a child of game.ReplicatedStorage.Shared (Folder). Did you mean 'Modules'?"
    assert f.suggestions[0] == "Modules"
    assert f.fix is not None and f.fix.new_text == "Modules"
    assert (f.range.start.line, f.range.start.character) == (1, 28)


def test_all_lookup_forms(project):
    src = "\n".join([
        'local RS = game:GetService("ReplicatedStorage")',
        'local a = RS.Shared:WaitForChild("Modulez")',
        'local b = RS.Shared:FindFirstChild("Singal")',
        'local c = RS.Shared["Modules"]["Combatt"]',
        'local d = RS.Shared:FindFirstChild("Hitboxx", true)',
        'local e = script:FindFirstAncestor("ServerScriptServic")',
        'local f = RS.Shared:WaitForChild("Modules", 5):WaitForChild("Hitbox")',
    ])
    found = lint(project, src)
    assert rules(found) == [("unknown_instance", n) for n in (2, 3, 4, 5, 6)]
    by_line = {f.range.start.line + 1: f for f in found}
    assert by_line[2].fix.new_text == '"Modules"'
    assert by_line[4].fix.new_text == '"Combat"'
    assert "descendant" in by_line[5].message
    assert "ancestor" in by_line[6].message


def test_members_are_not_children(project):
    src = "\n".join([
        "local p = script.Parent",
        "print(script.Parent.Name, script.Parent.Parent, script.ClassName)",
        "local kids = game.ReplicatedStorage.Shared:GetChildren()",
        "script.Parent.Parent.Server.Main.Disabled = true",
        "game.ReplicatedStorage.Shared.Modules.Combat.Changed:Connect(print)",
    ])
    assert lint(project, src) == []


def test_scopes_shadowing_parameters_and_reassignment(project):
    src = "\n".join([
        "local game = {ReplicatedStorage = {}}",
        "print(game.ReplicatedStorage.Anything)",            # shadowed `game`
        "local function f(workspace) return workspace.Nope end",  # parameter
        "local RS = game.ReplicatedStorage",
        "local Shared = _G.x",
        "Shared = nil",
    ])
    assert lint(project, src) == []
    src2 = "\n".join([
        'local Shared = game:GetService("ReplicatedStorage").Shared',
        "local function g() return Shared.Modulez end",       # upvalue still resolves
        'local Alias = game:GetService("ReplicatedStorage").Shared',
        "Alias = workspace",                                   # reassigned: unknown
        "print(Alias.Modulez)",
    ])
    assert rules(lint(project, src2)) == [("unknown_instance", 2)]


def test_open_nodes_give_hints_in_the_editor_and_near_misses_warn(project):
    src = "\n".join([
        "local x = workspace.SomePartFromStudio",        # Workspace is open
        'local y = game:GetService("Lighting").Sky',       # service not in the project: open
        "local z = game.ReplicatedStorage.Whatever",     # no $path: open
        "local r = game.ReplicatedStorage.Remotes.Damagee",  # open, but a near miss
    ])
    found = lint(project, src)
    # nothing in the project creates, names or reads the first three: a hint (real games keep
    # such children in the place file); the near miss is a warning
    assert [(f.rule, f.range.start.line + 1, f.severity.label) for f in found] == [
        ("unverified_instance", 1, "hint"), ("unverified_instance", 2, "hint"), ("unverified_instance", 3, "hint"),
        ("likely_unknown_instance", 4, "warning")]
    assert found[3].suggestions[0] == "Damage"
    assert "no script creates, names or reads it" in found[0].message and found[0].fix is None
    # in patch mode (code an agent proposes) the same names are warnings: they reach the model
    assert {f.severity.label for f in lint(project, src, mode="patch")} == {"warning"}


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


def test_runtime_created_names_are_not_reported(project):
    src = "\n".join([
        'local folder = Instance.new("Folder")',
        'folder.Name = "Runtime"',
        "folder.Parent = game.ReplicatedStorage.Shared",
        "print(game.ReplicatedStorage.Shared.Runtime)",
        'print(game.ReplicatedStorage.Shared:WaitForChild("NeverCreated"))',
    ])
    assert rules(lint(project, src)) == [("unknown_instance", 5)]


def test_unknown_service(project):
    [f] = lint(project, 'local DS = game:GetService("DataStoreServices")')
    assert f.rule == "unknown_service"
    assert f.suggestions[0] == "DataStoreService"
    assert f.fix.new_text == '"DataStoreService"'


def test_bracket_fix_for_names_with_spaces(project):
    [f] = lint(project, "print(game.ReplicatedStorage.Shared.SpaceName)")
    assert f.suggestions[0] == "Space Name"
    assert f.fix.new_text == '["Space Name"]'


def test_script_resolves_to_the_file_instance_and_runtime_home(project):
    ok = "local hud = script.Parent\nprint(hud.Controller, script.Parent.Parent.Parent.Character)"
    assert lint(project, ok, "src/gui/Hud/Controller.client.luau") == []
    bad = "print(script.Parent.Controler)"
    [f] = lint(project, bad, "src/gui/Hud/Controller.client.luau")
    assert "game.Players.LocalPlayer.PlayerGui.Hud (ScreenGui)" in f.message


def test_missing_child_lists_children_when_nothing_is_close(project):
    [f] = lint(project, "print(game.ReplicatedStorage.Shared.Utils)")
    assert "Children of game.ReplicatedStorage.Shared:" in f.message
    assert f.fix is None


def test_wrong_parent_mentions_where_it_is(project):
    [f] = lint(project, "print(game.ServerScriptService.Server.Combat)")
    assert "'Combat' exists at game.ReplicatedStorage.Shared.Modules.Combat" in f.message


def test_inline_suppression(project):
    src = "print(game.ReplicatedStorage.Shared.Nope) -- luaguard: allow(unknown_instance)\n"
    src += "-- luaguard: allow(unknown_instance)\nprint(game.ReplicatedStorage.Shared.Nope2)\n"
    src += "print(game.ReplicatedStorage.Shared.Nope3)\n"
    assert rules(lint(project, src)) == [("unknown_instance", 4)]
    assert lint(project, "--# luaguard: allow(unknown_instance)\n" + src) == []


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


def test_syntax_error_elsewhere_does_not_hide_path_findings(project):
    src = (
        "local function broken()\n  local x = (1 +\nend\n\nprint(game.ReplicatedStorage.Shared.Modulez)\n-- TODO later\n"
        'local p = Instance.new("Partt")\nprint(undefinedThing)\n'
    )
    found = lint(project, src)
    assert ("unknown_instance", 5) in rules(found)
    assert ("placeholder", 6) in rules(found)
    assert ("unknown_class", 7) in rules(found)
    assert ("undefined_variable", 8) in rules(found)
    assert any(f.rule in ("syntax_error", "unbalanced_bracket") for f in found)
