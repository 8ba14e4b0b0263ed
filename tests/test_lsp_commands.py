"""End-to-end: the tool-call commands of ``luaguard serve`` return the same structures
as ``luaguard validate`` / ``luaguard check --diff``."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from luaguard.engine import Engine
from luaguard.toolcalls import api
from test_lsp_e2e import start, vscode  # noqa: F401  (the pytest-lsp fixture)

PLACE = Path(__file__).resolve().parent.parent / "samples" / "place"


async def execute(client: LanguageClient, command: str, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=list(arguments)))


async def test_validate_tool_call_and_patch_commands(vscode: LanguageClient):  # noqa: F811
    await start(vscode, PLACE)
    call = {"name": "read_script", "arguments": {"path": "ServerScriptService.Server.Services.CombatServise"}}
    result = await execute(vscode, "luaguard.validateToolCall", json.dumps(call))
    expected = api.validate_calls(Engine(PLACE), json.dumps(call))
    assert result == expected
    assert result[0]["valid"] is False
    assert result[0]["errors"][0]["code"] == "unknown_path"
    assert "CombatService" in result[0]["errors"][0]["suggestions"][0]

    bad = "local RS = game:GetService('ReplicatedStorage')\nlocal C = require(RS.Shared.Modulez.Combat)\n-- TODO finish\n"
    patch = await execute(vscode, "luaguard.validatePatch", "src/shared/Modules/Hitbox.luau", bad)
    assert patch["valid"] is False
    assert sorted(e["code"] for e in patch["errors"]) == ["placeholder", "unknown_instance"]

    stats = await execute(vscode, "luaguard.stats")
    assert stats["toolcalls"]["calls"] >= 1 and stats["toolcalls"]["invalid"] >= 1
    assert stats["rules"]["unknown_path"] >= 1
