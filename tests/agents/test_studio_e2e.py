"""The agents tier: ``luaguard mcp-proxy`` in front of the real robloxstudio-mcp server (npm,
pinned in tests/agents/package-lock.json) with a stand-in Studio plugin on its HTTP bridge
(tests/agents/studio_plugin.py).  Run by tests/agents/run.sh; skipped in the main suite
unless $LUAGUARD_AGENT_TESTS is set (``required``: fail when the package is missing).

Scenarios: create-then-fill; a Studio-side error (passed through, the upstream started once);
Studio disconnected (other calls are not held up); the upstream killed (restarted with
backoff, the session overlay starts over); the latency the proxy adds to a good call.
Figures are appended as JSON lines to $LUAGUARD_AGENT_RESULTS when set."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import statistics
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PLACE = ROOT / "samples" / "place"
SERVER_JS = Path(os.environ.get("ROBLOXSTUDIO_MCP_JS", HERE / "node_modules" / "robloxstudio-mcp" / "dist" / "index.js"))
MODE = os.environ.get("LUAGUARD_AGENT_TESTS", "")

if not MODE:
    pytest.skip("the agents tier runs with tests/agents/run.sh (LUAGUARD_AGENT_TESTS)", allow_module_level=True)
if not SERVER_JS.exists():
    if MODE == "required":
        raise RuntimeError(f"robloxstudio-mcp is not installed at {SERVER_JS} (npm ci in tests/agents)")
    pytest.skip(f"robloxstudio-mcp is not installed at {SERVER_JS}", allow_module_level=True)

sys.path.insert(0, str(HERE))

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from studio_plugin import StudioPlugin  # noqa: E402

from luaguard.agents.proxy import build_proxy  # noqa: E402
from luaguard.engine import Engine  # noqa: E402
from luaguard.workspace import read_project_settings  # noqa: E402

UPSTREAM = ["node", str(SERVER_JS)]
SHOP_PAD = "game.Workspace.Map.Lobby.ShopPad"


def record(name: str, **figures) -> None:
    out = os.environ.get("LUAGUARD_AGENT_RESULTS")
    line = json.dumps({"scenario": name, **figures})
    print(line)
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def engine() -> Engine:
    return Engine(PLACE, read_project_settings(PLACE).settings)


def studio_tree() -> dict[str, str]:
    """What Studio holds: the instances Rojo synced from the project (path -> class)."""
    project = engine().project
    return {n.path: n.class_name for n in (project.root, *project.root.descendants())}


def text(res) -> str:
    return "\n".join(c.text for c in res.content)


def upstream_pids() -> list[int]:
    """The robloxstudio-mcp processes this test process started (its children)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and "robloxstudio-mcp" in cmd:
            pids.append(int(d.name))
    return pids


@pytest.fixture()
def studio(monkeypatch):
    port = free_port()
    monkeypatch.setenv("ROBLOX_STUDIO_PORT", str(port))
    monkeypatch.setenv("ROBLOX_STUDIO_HOST", "127.0.0.1")
    plugin = StudioPlugin(port, studio_tree())
    yield plugin
    plugin.disconnect()


def proxy(notices: list[str], timeout: float = 40.0):
    return build_proxy(engine(), UPSTREAM, timeout=timeout, backoff=(0.5, 8.0), log=notices.append)


async def connected(c: Client, plugin: StudioPlugin) -> None:
    await c.list_tools()  # the upstream is up
    plugin.connect()
    await asyncio.to_thread(plugin.wait_registered)


@pytest.mark.asyncio
async def test_create_then_fill(studio):
    notices: list[str] = []
    boot = "game.ServerScriptService.Server.Boot"
    source = "local Players = game:GetService(\"Players\")\nprint(#Players:GetPlayers())\n"
    async with Client(proxy(notices)) as c:
        await connected(c, studio)
        res = await c.call_tool("create_object", {"className": "Script", "parent": "game.ServerScriptService.Server",
                                                  "name": "Boot"})
        assert not res.is_error, text(res)
        res = await c.call_tool("set_script_source", {"instancePath": boot, "source": source})
        assert not res.is_error, text(res)
        assert studio.sources[boot] == source
        res = await c.call_tool("create_object", {"className": "Folder", "parent": "game.Workspace.Map", "name": "Props"})
        assert not res.is_error, text(res)
        res = await c.call_tool("create_object", {"className": "Part", "parent": "game.Workspace.Map.Props",
                                                  "name": "Crate", "properties": {"Anchored": True}})
        assert not res.is_error, text(res)
        res = await c.call_tool("set_script_source", {"instancePath": boot, "source": source + "-- TODO: spawn\n"})
        assert res.is_error and "TODO" in text(res)
    endpoints = [r.endpoint for r in studio.received]
    assert endpoints == ["/api/create-object", "/api/set-script-source", "/api/create-object", "/api/create-object"]
    assert studio.tree["game.Workspace.Map.Props.Crate"] == "Part" and notices == []
    record("create_then_fill", forwarded=len(endpoints), rejected=1, restarts=0)


@pytest.mark.asyncio
async def test_a_studio_side_error_is_passed_through_and_nothing_restarts(studio):
    notices: list[str] = []
    server = proxy(notices)
    del studio.tree[SHOP_PAD]  # gone in Studio (the user deleted it), still in the project
    async with Client(server) as c:
        await connected(c, studio)
        with pytest.raises(MCPError) as err:
            await c.call_tool("delete_object", {"instancePath": SHOP_PAD})
        assert err.value.code == -32603 and "Instance not found" in err.value.message
        t0 = time.perf_counter()
        res = await c.call_tool("get_place_info", {})
        after_ms = (time.perf_counter() - t0) * 1e3
        assert not res.is_error, text(res)
    assert server.upstream.starts == 1 and notices == []
    record("studio_error", error_code=err.value.code, error=err.value.message, upstream_starts=server.upstream.starts,
           next_good_call_ms=round(after_ms, 1))


@pytest.mark.asyncio
async def test_a_disconnected_studio_does_not_stall_other_calls(studio):
    notices: list[str] = []
    async with Client(proxy(notices)) as c:
        await connected(c, studio)
        studio.disconnect()
        waiting = asyncio.create_task(c.call_tool("create_object", {"className": "Folder", "parent": "game.Workspace",
                                                                    "name": "Later"}))
        await asyncio.sleep(0.5)
        t0 = time.perf_counter()
        rejected = await c.call_tool("set_property", {"instancePath": "game.Workspace.Mapp", "propertyName": "Name",
                                                      "propertyValue": "X"})
        local = await c.call_tool("get_connected_instances", {})  # answered by the server itself
        listed = await c.list_tools()
        others_ms = (time.perf_counter() - t0) * 1e3
        assert rejected.is_error and "Did you mean" in text(rejected)
        assert not local.is_error and json.loads(text(local))["count"] == 0
        assert len(listed.tools) > 60
        assert not waiting.done()  # still waiting for Studio, and nobody else waited for it
        studio.connect()  # Studio comes back: the waiting call is carried out
        res = await asyncio.wait_for(waiting, 25)
        assert not res.is_error, text(res)
    assert "game.Workspace.Later" in studio.tree and notices == []
    record("studio_disconnected", other_calls_ms=round(others_ms, 1), waiting_call_completed=True)


@pytest.mark.asyncio
async def test_a_killed_upstream_is_restarted_with_backoff(studio):
    notices: list[str] = []
    server = proxy(notices)
    boot = "game.ServerScriptService.Server.Boot"
    async with Client(server) as c:
        await connected(c, studio)
        res = await c.call_tool("create_object", {"className": "Script", "parent": "game.ServerScriptService.Server",
                                                  "name": "Boot"})
        assert not res.is_error
        [pid] = upstream_pids()
        os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.3)
        res = await c.call_tool("get_place_info", {})  # waits for the immediate restart
        t0 = time.monotonic()
        while server.upstream.starts < 2 and time.monotonic() - t0 < 30:
            await asyncio.sleep(0.1)
        await asyncio.to_thread(studio.wait_registered, 2)
        # a fresh upstream has seen none of this session's calls: the overlay started over
        res = await c.call_tool("set_script_source", {"instancePath": boot, "source": "print(1)\n"})
        assert res.is_error and "Boot" in text(res)
        # killed again at once: this restart waits (backoff)
        [pid] = upstream_pids()
        os.kill(pid, signal.SIGKILL)
        t0 = time.monotonic()
        while server.upstream.starts < 3 and time.monotonic() - t0 < 30:
            await asyncio.sleep(0.05)
        second_restart_s = time.monotonic() - t0
        await asyncio.to_thread(studio.wait_registered, 3)
        res = await c.call_tool("get_place_info", {})
        assert not res.is_error, text(res)
    assert server.upstream.starts == 3 and len(notices) == 2, notices
    assert "restarting it in 0.5 s" in notices[1] and all("\n" not in n for n in notices)
    record("upstream_killed", starts=server.upstream.starts, notices=notices, second_restart_s=round(second_restart_s, 2))


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


@pytest.mark.asyncio
async def test_the_latency_the_proxy_adds_to_a_good_call(studio):
    """The same good call straight to robloxstudio-mcp and through the proxy (the same plugin
    answering); the proxy's share is the difference of the medians."""
    call = ("set_property", {"instancePath": SHOP_PAD, "propertyName": "Transparency", "propertyValue": 0.5})
    n = 40

    async def timed(c: Client) -> list[float]:
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            res = await c.call_tool(*call)
            out.append((time.perf_counter() - t0) * 1e3)
            assert not res.is_error, text(res)
        return out

    direct = StdioServerParameters(command=UPSTREAM[0], args=UPSTREAM[1:], env=dict(os.environ))
    async with Client(direct) as c:
        await connected(c, studio)
        await timed(c)  # warm-up
        straight = await timed(c)
    studio.disconnect()
    studio.registrations = 0
    async with Client(proxy([])) as c:
        await connected(c, studio)
        await timed(c)
        proxied = await timed(c)
    added_p50 = statistics.median(proxied) - statistics.median(straight)
    record("added_latency", calls=n, direct_p50_ms=round(statistics.median(straight), 2),
           proxied_p50_ms=round(statistics.median(proxied), 2), added_p50_ms=round(added_p50, 2),
           direct_p99_ms=round(pct(straight, 0.99), 2), proxied_p99_ms=round(pct(proxied, 0.99), 2))
    assert added_p50 <= 50, (added_p50, straight, proxied)
