"""``luaguard mcp``: the MCP server driven end to end with the official SDK's client
(in process, and once over stdio as an agent starts it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from luaguard.agents.mcp_server import build_server  # noqa: E402
from luaguard.engine import Engine  # noqa: E402
from luaguard.workspace import read_project_settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
SHOP = "src/server/Services/ShopService.luau"


def server():
    return build_server(Engine(PLACE, read_project_settings(PLACE).settings))


def text(res) -> str:
    return "\n".join(c.text for c in res.content)


@pytest.mark.asyncio
async def test_tools_are_listed_with_their_arguments():
    async with Client(server()) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == {"check_luau", "check_diff", "validate_tool_call", "resolve_path", "project_tree", "stats"}
    assert tools["check_luau"].input_schema["required"] == ["path"]


@pytest.mark.asyncio
async def test_check_luau_patch_and_editor_modes():
    async with Client(server()) as c:
        bad = await c.call_tool("check_luau", {"path": "src/server/New.server.luau",
                                               "content": "local m = game.ReplicatedStorage.Shared.Modulez\n-- TODO: x\n"})
        assert not bad.is_error
        assert bad.structured_content["valid"] is False
        assert "Did you mean 'Modules'?" in text(bad) and "TODO" in text(bad)
        ok = await c.call_tool("check_luau", {"path": SHOP})  # the file on disk
        assert ok.structured_content["valid"] is True
        ed = await c.call_tool("check_luau", {"path": SHOP, "content": "local x = (\n", "mode": "editor"})
        assert ed.structured_content["valid"] is False
        assert any(f["code"] in ("syntax_error", "unbalanced_bracket") for f in ed.structured_content["findings"])
        wrong = await c.call_tool("check_luau", {"path": SHOP, "mode": "sloppy"})
        assert wrong.is_error


@pytest.mark.asyncio
async def test_check_diff_and_validate_tool_call():
    diff = (f"--- a/{SHOP}\n+++ b/{SHOP}\n@@ -13,1 +13,1 @@\n-local Config = require(ReplicatedStorage.Shared.Config)\n"
            f"+local Config = require(ReplicatedStorage.Shared.Confg)\n")
    async with Client(server()) as c:
        res = await c.call_tool("check_diff", {"diff": diff})
        assert res.structured_content["valid"] is False and "Did you mean 'Config'?" in text(res)
        call = {"name": "create_instance", "arguments": {"className": "Partt", "parent": "Workspace", "name": "P"}}
        res = await c.call_tool("validate_tool_call", {"call": call})
        [r] = res.structured_content["results"]
        assert r["valid"] is False and "Part" in r["feedback"]
        res = await c.call_tool("validate_tool_call", {"call": json.dumps([call, {"name": "read_scrpt", "arguments": {}}])})
        assert len(res.structured_content["results"]) == 2


@pytest.mark.asyncio
async def test_resolve_path_tree_and_stats():
    async with Client(server()) as c:
        res = await c.call_tool("resolve_path", {"path": "game.ReplicatedStorage.Shared.Modulez.Combat"})
        s = res.structured_content
        assert s["exists"] is False and s["missing"] == "Modulez" and s["suggestions"][0] == "Modules"
        res = await c.call_tool("resolve_path", {"path": "ReplicatedStorage.Shared.Modules"})
        assert res.structured_content["exists"] is True and "Combat" in res.structured_content["children"]
        res = await c.call_tool("project_tree", {"root": "ReplicatedStorage.Shared", "depth": 1})
        tree = res.structured_content
        assert tree["path"] == "game.ReplicatedStorage.Shared"
        assert all("children" not in ch for ch in tree["children"])
        assert any(ch.get("more") for ch in tree["children"])
        res = await c.call_tool("project_tree", {"root": "ReplicatedStorage.Nope"})
        assert res.is_error
        res = await c.call_tool("stats", {})
        assert "rules" in res.structured_content


@pytest.mark.asyncio
async def test_over_stdio_as_an_agent_starts_it():
    params = StdioServerParameters(command=sys.executable, args=["-m", "luaguard", "mcp", "--project", str(PLACE)])
    async with Client(params) as c:
        res = await c.call_tool("resolve_path", {"path": "workspace.Map.Lobby.ShopPadd"})
    assert "ShopPad" in res.structured_content["suggestions"]


@pytest.mark.asyncio
async def test_huge_and_binary_inputs_are_answered_not_crashed():
    async with Client(server()) as c:
        res = await c.call_tool("check_luau", {"path": "src/server/Big.server.luau", "content": "local x = 1\n" * 1_000_000})
        assert res.is_error and "does not check it" in text(res)
        res = await c.call_tool("check_luau", {"path": "src/server/Bin.server.luau", "content": "a\x00b\x01"})
        assert not res.is_error and res.structured_content["valid"] is False
        res = await c.call_tool("check_diff", {"diff": "not a diff at all"})
        assert not res.is_error and isinstance(res.structured_content["valid"], bool)
        res = await c.call_tool("validate_tool_call", {"call": "{broken json"})
        assert not res.is_error and res.structured_content["results"][0]["valid"] is False


@pytest.mark.asyncio
async def test_validate_tool_call_knows_the_studio_servers_tools():
    async with Client(server()) as c:
        for call, valid, said in (
            ({"name": "run_code", "arguments": {"command": "print(game.ReplicatedStorage.Shared.Modules)"}}, True, "valid"),
            ({"name": "run_code", "arguments": {"command": "print(game.ReplicatedStorage.Shared.Modulez)"}}, False,
             "Did you mean 'Modules'?"),
            ({"name": "execute_luau", "arguments": {"code": "local x = (\n"}}, False, "Expected ')'"),
            ({"name": "create_object", "arguments": {"className": "Partt", "parent": "game.Workspace"}}, False,
             "Did you mean 'Part'?"),
            ({"name": "set_script_source", "arguments": {"instancePath": "game.ServerScriptService.Server.Bootstrap",
                                                         "source": "print('hi')\n"}}, True, "valid"),
        ):
            res = await c.call_tool("validate_tool_call", {"call": call})
            [r] = res.structured_content["results"]
            assert r["valid"] is valid and said in r["feedback"], r
            assert "There is no tool named" not in r["feedback"]


@pytest.mark.asyncio
async def test_bad_arguments_are_one_sentence_naming_the_argument_and_the_type():
    async with Client(server()) as c:
        for tool, args, want in (
            ("project_tree", {"depth": -1}, "Argument 'depth' of project_tree must be an integer from 0 to 1000, or null, got -1"),
            ("project_tree", {"depth": "deep"}, "Argument 'depth' of project_tree must be an integer"),
            ("check_luau", {"path": SHOP, "mode": "sloppy"}, "Argument 'mode' of check_luau must be one of 'patch', 'editor'"),
            ("check_luau", {}, "Argument 'path' of check_luau is missing; it must be a string."),
            ("resolve_path", {"path": 3}, "Argument 'path' of resolve_path must be a string, got 3 (an integer)."),
            ("resolve_path", {"path": "x", "pth": "y"}, "resolve_path has no argument 'pth'; it takes path."),
        ):
            res = await c.call_tool(tool, args)
            assert res.is_error and text(res).startswith(want), (tool, text(res))
            assert "\n" not in text(res) and "http" not in text(res) and "pydantic" not in text(res)
