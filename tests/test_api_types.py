"""Roblox API facts in the checks (issue 33): legacy enum names, deprecated items, values
typed from what API methods return, ``IsA`` on receivers that may not be Instances, and
members above the code's security level (plugins).  Every snippet is written here for
the class of miss it stands for; none is copied from a corpus file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from luaguard.config import Settings, settings_from_mapping
from luaguard.engine import Engine
from luaguard.project.plugin import is_plugin_project


def lint(src: str, rules: tuple[str, ...], root: Path | None = None, path: str = "x.luau",
         settings: Settings | None = None):
    engine = Engine(root, settings)
    target = root / path if root is not None else path
    return [f for f in engine.lint_text(src, target) if f.rule in rules]


def at(findings, line: int):
    return [f for f in findings if f.range.start.line + 1 == line]


# -- legacy enum names and deprecated items ----------------------------------------------------
def test_legacy_enum_names_are_valid_and_deprecated():
    src = "\n".join([
        "local params = RaycastParams.new()",
        "params.FilterType = Enum.RaycastFilterType.Whitelist",
        "params.FilterType = Enum.RaycastFilterType.Blacklist",
        "if key == Enum.KeyCode.Unknown then end",
        "label.Font = Enum.Font.GothamSemibold",
        'local m = Enum.Material["Corroded Metal"]',
    ])
    found = lint(src, ("unknown_member", "deprecated_api"))
    assert not [f for f in found if f.rule == "unknown_member"]
    by_line = {f.range.start.line + 1: f for f in found}
    assert set(by_line) == {2, 3, 4, 5, 6}
    assert all(f.severity.label == "warning" for f in found)
    assert by_line[2].message == ("Enum.RaycastFilterType.Whitelist is a legacy name of "
                                  "Enum.RaycastFilterType.Include; use 'Include'")
    assert by_line[2].fix.new_text == "Include" and by_line[3].fix.new_text == "Exclude"
    assert by_line[4].fix.new_text == "None" and by_line[5].fix.new_text == "GothamMedium"
    assert by_line[6].fix.new_text == '"CorrodedMetal"'


def test_misspelt_enum_items_are_still_errors_and_never_suggest_legacy_names():
    [f] = lint("local t = Enum.RaycastFilterType.Whitelst", ("unknown_member",))
    assert f.severity.label == "error" and "Whitelist" not in f.suggestions
    [g] = lint("local f = Enum.Font.GothamItalic", ("unknown_member",))
    assert g.severity.label == "error"


def test_deprecated_enum_items_and_enums_warn_once():
    found = lint("local a = Enum.KeyCode.World0\nlocal b = Enum.Status.Poison", ("deprecated_api",))
    assert [(f.range.start.line + 1, f.message) for f in found] == [
        (1, "Enum.KeyCode.World0 is deprecated"), (2, "Enum.Status is deprecated")]


def test_deprecated_members_from_the_dump_offer_a_fix_only_for_a_rename():
    src = ('local p = Instance.new("Part")\np:clone()\n'
           'local ts = game:GetService("TeleportService")\nts:TeleportToPlaceInstance(1, "x")\n'
           'local uis = game:GetService("UserInputService")\nuis:GetUserCFrame(Enum.UserCFrame.Head)')
    by_line = {f.range.start.line + 1: f for f in lint(src, ("deprecated_api",))}
    assert by_line[2].fix.new_text == "Clone"
    assert by_line[4].fix is None and "TeleportAsync" in by_line[4].message  # not a drop-in
    # the dump's preferred name is VRService's member: no misleading "use 'GetUserCFrame'"
    assert by_line[6].message == "UserInputService.GetUserCFrame is deprecated"


# -- IsA on receivers that may not be Instances --------------------------------------------------
@pytest.mark.parametrize("src", [
    # an EnumItem's IsA takes an enum's name
    'local UIS = game:GetService("UserInputService")\n'
    'UIS.InputBegan:Connect(function(input)\n\tif input.KeyCode:IsA("KeyCode") then end\nend)',
    # a class library's own IsA on its tables
    'local Box = {}\nBox.__index = Box\nfunction Box:IsA(name) return name == "Box" end\n'
    'local b = setmetatable({}, Box)\nprint(b:IsA("ReplicatedBox"))',
    'local function describe(value)\n\tif value:IsA("ObservableMap") then return "map" end\nend',
])
def test_isa_on_values_not_known_to_be_instances_is_silent(src):
    assert lint(src, ("unknown_class",)) == []


def test_isa_typo_is_an_error_on_instances_and_a_warning_elsewhere():
    src = ('if workspace:IsA("Modle") then end\n'
           'local p = Instance.new("Part")\nif p:IsA("BasePrat") then end\n'
           'local function f(thing)\n\treturn thing:IsA("Humanoidd")\nend')
    by_line = {f.range.start.line + 1: f for f in lint(src, ("unknown_class",))}
    assert by_line[1].severity.label == "error" and by_line[1].suggestions[0] == "Model"
    assert by_line[3].severity.label == "error" and by_line[3].suggestions[0] == "BasePart"
    assert by_line[5].severity.label == "warning" and by_line[5].suggestions[0] == "Humanoid"


# -- values typed from API returns ---------------------------------------------------------------
def test_methods_on_what_api_methods_return():
    src = "\n".join([
        'local DataStoreService = game:GetService("DataStoreService")',
        'local board = DataStoreService:GetOrderedDataStore("Wins")',
        "local pages = board:GetSortedAsyncc(false, 10)",
        'local UIS = game:GetService("UserInputService")',
        "local ok = UIS:IsGamepadConnected(Enum.UserInputType.Gamepad1)",
        'local remote = game:GetService("ReplicatedStorage"):WaitForChild("Ping")',
        "remote:FireServr()",
        "remote:Explode()",
        'local hrp = workspace:FindFirstChild("Spawn")',
        "hrp:Destory()",
    ])
    found = lint(src, ("unknown_member",))
    got = {f.range.start.line + 1: (f.severity.label, list(f.suggestions[:1]), f.message) for f in found}
    assert got[3][:2] == ("error", ["GetSortedAsync"])
    assert got[3][2].startswith("'GetSortedAsyncc' is not a method of OrderedDataStore.")
    # a method for a method: not the event GamepadConnected
    assert got[5][:2] == ("error", ["GetGamepadConnected"])
    # WaitForChild gives an Instance of some class: a method no class has is certain
    assert got[7][:2] == ("error", ["FireServer"]) and "any Instance" in got[7][2]
    assert got[8] == ("error", [], "'Explode' is not a method of any Instance.")
    assert got[10][:2] == ("error", ["Destroy"])
    assert set(got) == {3, 5, 7, 8, 10}


@pytest.mark.parametrize("src", [
    # a subclass's method on what WaitForChild/FindFirstChild give: the code knows the class
    'local h = workspace:WaitForChild("Dummy"):WaitForChild("Humanoid")\nh:LoadAnimation(anim)\nh:TakeDamage(5)',
    'local r = game:GetService("ReplicatedStorage"):WaitForChild("Remote")\nr:FireServer(1)\nr.OnClientEvent:Connect(print)',
    # children of what WaitForChild gives are unknown: dot names are not checked against subclasses
    'local gui = game:GetService("Players").LocalPlayer:WaitForChild("PlayerGui"):WaitForChild("Shop")\n'
    'local card = gui:FindFirstChild("Template"):Clone()\ncard.BuyButton.Activated:Connect(print)\ncard.Price.Text = "1"',
    # a wrapper table annotated with a class may add methods: only near misses count there
    "local frame: ScrollingFrame = window:Add('ScrollingFrame')\nframe:Add('TextBox')\nframe:ResizeCanvas(true)",
    # a project node's class may change at run time (a template cloned elsewhere): only near misses
    'local part = workspace:FindFirstChild("Spawn")\nprint(part.Sizee)',
    'local seat = game:GetService("Players"):GetPlayerFromCharacter(model)\nprint(seat.UserId, seat.Character)',
])
def test_uncertain_or_valid_uses_are_silent(src):
    assert [f for f in lint(src, ("unknown_member",)) if f.severity.label == "error"] == []


def test_dot_near_miss_of_a_member_on_an_instance_is_a_child_read():
    # `inst.X` reads a child whenever X is no member: where the instance's children are not
    # known, a near miss of a member is a hint naming the member (patch mode: a warning), never
    # an unknown_member with a fix
    src = 'local thing = workspace:WaitForChild("Thing")\nprint(thing.Nmae)'
    assert lint(src, ("unknown_member",)) == []
    [f] = lint(src, ("unverified_instance",))
    assert f.severity.label == "hint" and f.suggestions[0] == "Name" and f.fix is None
    src2 = 'local plr = game:GetService("Players"):GetPlayerFromCharacter(model)\nprint(plr.UserIdd)'
    [g] = lint(src2, ("unverified_instance",))
    assert g.suggestions[0] == "UserId" and "no member of Player" in g.message
    # assigned, the name must be a property: certain wherever the class is
    [h] = lint('local plr = game:GetService("Players"):GetPlayerFromCharacter(model)\nplr.UserIdd = 1', ("unknown_member",))
    assert h.severity.label == "error" and h.suggestions[0] == "UserId"


def test_invented_method_on_a_project_node_needs_a_near_miss(tmp_path):
    tree = {"name": "P", "tree": {"$className": "DataModel",
                                  "Workspace": {"$className": "Workspace",
                                                "Tool": {"$className": "Tool", "Main": {"$path": "src/Main.server.luau"}}}}}
    (tmp_path / "default.project.json").write_text(json.dumps(tree))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "Main.server.luau").write_text("")
    src = "script.Parent:SetNetworkOwnershipAuto()\nscript.Parent:Activte()\n"
    found = lint(src, ("unknown_member",), tmp_path, "src/Main.server.luau")
    assert [(f.range.start.line + 1, f.suggestions[0]) for f in found] == [(2, "Activate")]


# -- security levels and plugins ---------------------------------------------------------------
PLUGIN_ONLY = 'local Players = game:GetService("Players")\nPlayers:SetChatStyle(Enum.ChatStyle.Classic)\n'


def _project(root: Path, name: str) -> Path:
    tree = {"name": "P", "tree": {"$className": "Folder", "Main": {"$path": "src"}}}
    (root / name).write_text(json.dumps(tree))
    (root / "src").mkdir(exist_ok=True)
    return root


@pytest.mark.parametrize("name", ["plugin.project.json", "studio-plugin.project.json"])
def test_plugin_projects_may_use_plugin_members(tmp_path, name):
    root = _project(tmp_path, name)
    assert lint(PLUGIN_ONLY, ("restricted_api",), root, "src/init.server.luau") == []


def test_plugin_folder_setting_and_plugin_global(tmp_path):
    folder = tmp_path / "my-plugin"
    folder.mkdir()
    root = _project(folder, "default.project.json")
    assert lint(PLUGIN_ONLY, ("restricted_api",), root, "src/init.server.luau") == []
    game = tmp_path / "game"
    game.mkdir()
    groot = _project(game, "default.project.json")
    assert lint(PLUGIN_ONLY, ("restricted_api",), groot, "src/init.server.luau", Settings(plugin=True)) == []
    assert lint('local bar = plugin:CreateToolbar("X")\n' + PLUGIN_ONLY, ("restricted_api",), groot,
                "src/init.server.luau") == []
    # explicitly not a plugin, whatever the folder says
    assert lint(PLUGIN_ONLY, ("restricted_api",), root, "src/init.server.luau", Settings(plugin=False)) != []


def test_plugin_detection_rules(tmp_path):
    from luaguard.project.index import load_project

    both = tmp_path / "both"
    both.mkdir()
    (both / "place.project.json").write_text('{"name": "p", "tree": {"$className": "DataModel"}}')
    (both / "plugin.project.json").write_text('{"name": "p", "tree": {"$className": "Folder"}}')
    assert is_plugin_project(load_project(both))  # several project files, one a plugin's
    assert not is_plugin_project(None) and is_plugin_project(None, True)
    _, problems = settings_from_mapping({"plugin": "yes"}, "luaguard.toml")
    assert problems and problems[0].key == "plugin"
    settings, problems = settings_from_mapping({"plugin": True}, "luaguard.toml")
    assert settings.plugin is True and not problems
