"""The roles luaguard ships for Roblox Studio MCP servers' tools (toolcalls/servers/*.json):
property maps, lists and trees of new instances, script edits applied before linting, and
annotations copied onto an upstream server's own schemas."""

from __future__ import annotations

from pathlib import Path

import pytest

from luaguard.agents.annotations import known_tool, shipped_files, shipped_tool_names
from luaguard.engine import Engine
from luaguard.toolcalls.api import validate_calls
from luaguard.toolcalls.schemas import annotate, load_tool_definitions, read_tools_file

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
SHOP = "game.ServerScriptService.Server.Services.ShopService"


@pytest.fixture(scope="module")
def engine():
    return Engine(PLACE)


def check(engine, name, arguments):
    files = [str(f) for f in shipped_files()]
    [r] = validate_calls(engine, {"name": name, "arguments": arguments}, extra_tool_files=files)
    return r


def test_shipped_annotations_load_without_problems():
    for f in shipped_files():
        tools, problems = load_tool_definitions(read_tools_file(f), str(f))
        assert tools and problems == [], f
    assert {"run_code", "execute_luau", "create_object", "mass_create_objects"} <= shipped_tool_names()
    assert known_tool("x", "get_weather") is None and known_tool("x", "run_code") is not None


@pytest.mark.parametrize("name,args,field,text", [
    ("create_object", {"className": "Part", "parent": "game.Workspace", "properties": {"Anchord": True}},
     "properties.Anchord", "Did you mean 'Anchored'?"),
    ("create_object", {"className": "Part", "parent": "game.Workspace", "properties": {"Transparency": "high"}},
     "properties.Transparency", "it is a number"),
    ("set_properties", {"instancePath": "game.Workspace.Map.Lobby.ShopPad", "properties": {"BrickColr": "Red"}},
     "properties.BrickColr", "Did you mean 'BrickColor'?"),
    ("mass_create_objects", {"objects": [{"className": "Folder", "parent": "game.ReplicatedStorage.Sharde"}]},
     "objects[0].parent", "Did you mean 'ReplicatedStorage.Shared'?"),
    ("mass_create_objects", {"objects": [{"className": "Partt", "parent": "game.Workspace"}]},
     "objects[0].className", "Did you mean 'Part'?"),
    ("create_ui_tree", {"parentPath": "game.StarterGui", "tree": {"className": "ScreenGui", "children": [
        {"className": "Frame", "children": [{"className": "TextLable"}]}]}},
     "tree.children[0].children[0].className", "Did you mean 'TextLabel'?"),
    ("edit_script_lines", {"instancePath": SHOP, "old_string": "local Config = require(ReplicatedStorage.Shared.Config)",
                           "new_string": "local Config = require(ReplicatedStorage.Shared.Confg)"},
     "new_string", "Did you mean 'Config'?"),
    ("insert_script_lines", {"instancePath": SHOP, "afterLine": 12, "newContent": "local Bad = (\n"},
     "newContent", "Expected ')'"),
    ("edit_script_lines", {"instancePath": SHOP, "old_string": "no such text", "new_string": "x"},
     "old_string", "is not in"),
    ("run_code", {"command": "local x = game.ReplicatedStorage.Shared.Modulez"}, "command", "Did you mean 'Modules'?"),
])
def test_bad_studio_calls_are_rejected_with_the_field_and_a_fix(engine, name, args, field, text):
    r = check(engine, name, args)
    assert not r["valid"]
    assert any(e["field"] == field and (text in e["message"] or text in " ".join(e["suggestions"]))
               for e in r["errors"]), r["errors"]


@pytest.mark.parametrize("name,args", [
    ("create_object", {"className": "Part", "parent": "game.Workspace", "properties": {"Anchored": True, "Transparency": 0.5}}),
    ("set_properties", {"instancePath": "game.Workspace.Map.Lobby.ShopPad", "properties": {"Anchored": True}}),
    ("mass_create_objects", {"objects": [{"className": "Folder", "parent": "game.ReplicatedStorage.Shared", "name": "A"}]}),
    ("create_ui_tree", {"parentPath": "game.StarterGui", "tree": {"className": "ScreenGui", "children": [
        {"className": "TextLabel", "properties": {"Text": "hi"}}]}}),
    ("edit_script_lines", {"instancePath": SHOP, "old_string": "local Config = require(ReplicatedStorage.Shared.Config)",
                           "new_string": "local Config = require(ReplicatedStorage.Shared:WaitForChild(\"Config\"))"}),
    ("insert_script_lines", {"instancePath": SHOP, "afterLine": 12, "newContent": "local Extra = 1\n"}),
    ("execute_luau", {"code": "print(game.ReplicatedStorage.Shared.Modules)"}),
])
def test_valid_studio_calls_pass(engine, name, args):
    r = check(engine, name, args)
    assert r["valid"], r["errors"]


def test_annotate_copies_roles_onto_an_upstreams_schema():
    upstream = [{"name": "create_object", "inputSchema": {"type": "object", "properties": {
        "className": {"type": "string"}, "parent": {"type": "string"}, "extra": {"type": "string"}}}},
        {"name": "unrelated", "inputSchema": {"type": "object", "properties": {"className": {"type": "string"}}}}]
    ann = read_tools_file(ROOT / "server/luaguard/toolcalls/servers/robloxstudio-mcp.json")["tools"]
    out = annotate(upstream, ann)
    props = out[0]["inputSchema"]["properties"]
    assert props["className"]["x-luaguard"] == "class_name" and props["parent"]["x-luaguard"] == "parent_path"
    assert "x-luaguard" not in props["extra"]
    assert "x-luaguard" not in out[1]["inputSchema"]["properties"]["className"]
    assert "x-luaguard" not in upstream[0]["inputSchema"]["properties"]["className"]  # a copy
