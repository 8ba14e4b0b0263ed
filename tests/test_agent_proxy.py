"""``luaguard mcp-proxy``: driven with the SDK's client, in front of a stand-in upstream
server the tests start (tests/fixtures/stand_in_mcp_server.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from luaguard.agents.proxy import build_proxy  # noqa: E402
from luaguard.engine import Engine  # noqa: E402
from luaguard.workspace import read_project_settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
STAND_IN = [sys.executable, str(ROOT / "tests" / "fixtures" / "stand_in_mcp_server.py")]


@pytest.fixture()
def log(tmp_path, monkeypatch):
    path = tmp_path / "upstream.jsonl"
    monkeypatch.setenv("STAND_IN_LOG", str(path))
    return path


def reached(log: Path) -> list[str]:
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()] if log.exists() else []


def proxy(timeout: float = 30.0, command=None):
    engine = Engine(PLACE, read_project_settings(PLACE).settings)
    return build_proxy(engine, command or STAND_IN, timeout=timeout)


def text(res) -> str:
    return "\n".join(c.text for c in res.content)


@pytest.mark.asyncio
async def test_tools_list_passes_through_and_bad_calls_never_reach_the_upstream(log):
    async with Client(proxy()) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert {"run_code", "set_property", "create_object", "get_weather", "crash", "hang"} <= names
        bad = await c.call_tool("set_property", {"instancePath": "game.Workspace.Map.Lobby.ShopPadd",
                                                 "propertyName": "Transparency", "propertyValue": 0.5})
        assert bad.is_error and "Did you mean 'Workspace.Map.Lobby.ShopPad'?" in text(bad)
        bad = await c.call_tool("run_code", {"command": "print(game.ReplicatedStorage.Shared.Modulez)"})
        assert bad.is_error and "Did you mean 'Modules'?" in text(bad)
        bad = await c.call_tool("create_object", {"className": "Part", "parent": "game.Workspace",
                                                  "properties": {"Anchord": True}})
        assert bad.is_error and "Did you mean 'Anchored'?" in text(bad)
        assert reached(log) == []
        ok = await c.call_tool("run_code", {"command": "print(game.ReplicatedStorage.Shared.Modules)"})
        assert not ok.is_error and "ran" in text(ok)
        other = await c.call_tool("get_weather", {"city": "Oslo"})  # a tool luaguard does not know
        assert not other.is_error and text(other) == "sunny"
        missing = await c.call_tool("set_property", {"instancePath": "game.Workspace"})
        assert missing.is_error and "propertyName" in text(missing)
    assert reached(log) == ["run_code", "get_weather"]


@pytest.mark.asyncio
async def test_a_crashing_or_hanging_upstream_is_reported_and_the_proxy_keeps_serving(log):
    async with Client(proxy(timeout=3.0)) as c:
        await c.list_tools()
        res = await c.call_tool("crash", {})
        assert res.is_error and "upstream" in text(res)
        res = await c.call_tool("run_code", {"command": "print(1)"})  # a restarted upstream
        assert not res.is_error, text(res)
        res = await c.call_tool("hang", {})
        assert res.is_error and "did not answer within 3 s" in text(res)
        res = await c.call_tool("run_code", {"command": "print(2)"})
        assert not res.is_error, text(res)


@pytest.mark.asyncio
async def test_concurrent_calls_each_get_their_own_answer(log):
    async with Client(proxy()) as c:
        await c.list_tools()
        calls = [c.call_tool("run_code", {"command": f"print({i})" if i % 2 else "print(game.ReplicatedStorage.Shared.Modulez)"})
                 for i in range(8)]
        results = await asyncio.gather(*calls)
    assert [r.is_error for r in results] == [i % 2 == 0 for i in range(8)]
    assert reached(log) == ["run_code"] * 4


@pytest.mark.asyncio
async def test_an_upstream_that_cannot_start_is_reported():
    async with Client(proxy(timeout=3.0, command=[sys.executable, "-c", "import sys; sys.exit(1)"])) as c:
        res = await c.call_tool("run_code", {"command": "print(1)"})
    assert res.is_error and "not available" in text(res)


@pytest.mark.asyncio
async def test_the_cli_serves_the_proxy_over_stdio(log):
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "luaguard", "mcp-proxy", "--project", str(PLACE), "--", *STAND_IN],
                                   env=dict(os.environ))
    async with Client(params) as c:
        res = await c.call_tool("run_code", {"command": "local x = (\n"})
        assert res.is_error and "Expected ')'" in text(res)
        res = await c.call_tool("run_code", {"command": "print(1)"})
        assert not res.is_error
    assert reached(log) == ["run_code"]
