"""``luaguard mcp-proxy``: driven with the SDK's client, in front of a stand-in upstream
server the tests start (tests/fixtures/stand_in_mcp_server.py).  The real robloxstudio-mcp
package with a stand-in Studio plugin is the tests/agents tier."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

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


def entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def reached(log: Path) -> list[str]:
    return [e["tool"] for e in entries(log) if "tool" in e]


def starts(log: Path) -> int:
    return sum(1 for e in entries(log) if "start" in e)


def proxy(timeout: float = 30.0, command=None, notices: list | None = None, backoff=(0.5, 30.0)):
    engine = Engine(PLACE, read_project_settings(PLACE).settings)
    return build_proxy(engine, command or STAND_IN, timeout=timeout, backoff=backoff,
                       log=(notices.append if notices is not None else lambda _line: None))


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
async def test_the_upstreams_errors_are_its_answers_and_nothing_restarts(log):
    notices: list[str] = []
    async with Client(proxy(notices=notices)) as c:
        await c.list_tools()
        with pytest.raises(MCPError) as err:  # a JSON-RPC error reply, passed through unchanged
            await c.call_tool("create_object", {"className": "Folder", "parent": "game.Workspace",
                                                "name": "MissingThing"})
        assert (err.value.code, err.value.message) == (-32603, "Tool execution failed: Instance not found")
        res = await c.call_tool("studio_error", {"message": "Studio says no"})  # an isError result, unchanged
        assert res.is_error and "Studio says no" in text(res)
        ok = await c.call_tool("run_code", {"command": "print(1)"})
        assert not ok.is_error
    assert starts(log) == 1 and notices == []


@pytest.mark.asyncio
async def test_calls_are_forwarded_concurrently_and_each_gets_its_own_answer(log):
    async with Client(proxy()) as c:
        await c.list_tools()
        slow = asyncio.create_task(c.call_tool("slow", {"seconds": 2}))
        await asyncio.sleep(0.2)
        fast = await asyncio.gather(*[c.call_tool("run_code", {"command": f"print('{'x' * i}')"}) for i in range(1, 7)])
        assert [text(r) for r in fast] == [f"ran {9 + i} characters" for i in range(1, 7)]
        assert not slow.done()  # the fast calls were not held up behind the slow one
        assert text(await slow) == "slept 2.0"


@pytest.mark.asyncio
async def test_a_crashed_upstream_is_restarted_and_reported_in_one_line(log):
    notices: list[str] = []
    async with Client(proxy(timeout=5.0, notices=notices)) as c:
        await c.list_tools()
        res = await c.call_tool("crash", {})
        assert res.is_error and "upstream" in text(res)
        res = await c.call_tool("run_code", {"command": "print(1)"})  # the restart is immediate
        assert not res.is_error, text(res)
    assert starts(log) == 2
    assert len(notices) == 1 and "exited" in notices[0] and "\n" not in notices[0]


@pytest.mark.asyncio
async def test_a_slow_call_is_reported_and_a_wedged_upstream_restarted(log, monkeypatch):
    import luaguard.agents.proxy as P

    monkeypatch.setattr(P, "PING_TIMEOUT_S", 0.5)
    notices: list[str] = []
    async with Client(proxy(timeout=1.0, notices=notices)) as c:
        await c.list_tools()
        res = await c.call_tool("hang", {})  # the server still answers pings: kept
        assert res.is_error and "did not answer this call within 1 s (it is still running)" in text(res)
        assert starts(log) == 1 and notices == []
        res = await c.call_tool("wedge", {})  # nothing answers: restarted
        assert res.is_error and "restarts it" in text(res)
        res = await c.call_tool("run_code", {"command": "print(2)"})
        assert not res.is_error, text(res)
    assert starts(log) == 2 and len(notices) == 1 and "nor a ping" in notices[0]


@pytest.mark.asyncio
async def test_an_upstream_that_exits_at_start_is_retried_with_backoff(log, monkeypatch):
    monkeypatch.setenv("STAND_IN_EXIT_AT_START", "1")
    notices: list[str] = []
    async with Client(proxy(timeout=3.0, notices=notices, backoff=(0.2, 0.8))) as c:
        res = await c.call_tool("run_code", {"command": "print(1)"})
        assert res.is_error and "not available" in text(res)
        await asyncio.sleep(1.5)
        res = await c.call_tool("run_code", {"command": "print(1)"})
        assert res.is_error and "restarts it in" in text(res)
    # delays 0, 0.2, 0.4, 0.8, 0.8 ...: a handful of starts in ~2 s (without backoff: dozens)
    assert 2 <= starts(log) <= 8, starts(log)
    assert all("\n" not in n and "Traceback" not in n for n in notices)


@pytest.mark.asyncio
async def test_what_the_proxy_forwarded_is_seen_by_later_calls(log):
    """create-then-fill: a Script created under a Rojo-mapped folder takes a source; a Folder
    created there takes a Part; a deleted instance is gone; a failed creation leaves nothing;
    a restart forgets everything."""
    boot = "game.ServerScriptService.Server.Boot"
    async with Client(proxy(timeout=5.0)) as c:
        await c.list_tools()
        res = await c.call_tool("set_script_source", {"instancePath": boot, "source": "print('boot')\n"})
        assert res.is_error and "Boot" in text(res)  # does not exist yet
        res = await c.call_tool("create_object", {"className": "Script", "parent": "game.ServerScriptService.Server",
                                                  "name": "Boot"})
        assert not res.is_error, text(res)
        res = await c.call_tool("set_script_source", {"instancePath": boot, "source": "print('boot')\n"})
        assert not res.is_error, text(res)
        # the source it sent is the script's source now: a rewrite adding nothing passes, a new TODO does not
        res = await c.call_tool("set_script_source", {"instancePath": boot, "source": "print('boot')\n-- booted\n"})
        assert not res.is_error, text(res)
        res = await c.call_tool("set_script_source", {"instancePath": boot, "source": "print('boot')\n-- TODO: more\n"})
        assert res.is_error and "TODO" in text(res)
        res = await c.call_tool("create_object", {"className": "Folder", "parent": "game.ServerScriptService.Server",
                                                  "name": "Props"})
        assert not res.is_error
        res = await c.call_tool("mass_create_objects", {"objects": [
            {"className": "Part", "parent": "game.ServerScriptService.Server.Props", "name": "Crate"}]})
        assert not res.is_error, text(res)
        res = await c.call_tool("set_property", {"instancePath": "game.ServerScriptService.Server.Props.Crate",
                                                 "propertyName": "Anchored", "propertyValue": True})
        assert not res.is_error, text(res)
        res = await c.call_tool("rename_object", {"instancePath": "game.ServerScriptService.Server.Props",
                                                  "newName": "Scenery"})
        assert not res.is_error, text(res)
        res = await c.call_tool("set_property", {"instancePath": "game.ServerScriptService.Server.Scenery.Crate",
                                                 "propertyName": "Anchored", "propertyValue": False})
        assert not res.is_error, text(res)
        res = await c.call_tool("delete_object", {"instancePath": "game.ServerScriptService.Server.Scenery"})
        assert not res.is_error, text(res)
        res = await c.call_tool("set_property", {"instancePath": "game.ServerScriptService.Server.Scenery.Crate",
                                                 "propertyName": "Anchored", "propertyValue": True})
        assert res.is_error
        with pytest.raises(MCPError):  # Studio refused: nothing was created
            await c.call_tool("create_object", {"className": "Folder", "parent": "game.ServerScriptService.Server",
                                                "name": "MissingParentFolder"})
        res = await c.call_tool("set_property", {"instancePath": "game.ServerScriptService.Server.MissingParentFolder",
                                                 "propertyName": "Name", "propertyValue": "X"})
        assert res.is_error
        await c.call_tool("crash", {})
        res = await c.call_tool("set_script_source", {"instancePath": boot, "source": "print('boot')\n"})
        assert res.is_error and "Boot" in text(res)  # a new upstream: the session starts over


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


def test_a_burst_of_calls_over_the_clis_stdio_gets_every_answer_in_its_own_line(log):
    """Calls written to the proxy's stdin in one write (as an agent with several calls in
    flight does): each gets its own answer, one JSON line each (answers written together
    stay framed), the fast ones before the slow one sent first, a rejected one never
    reaching the upstream."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    calls = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 1.5}}}]
    calls += [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": "run_code", "arguments": {"command": "print(" + "1" * i + ")"}}} for i in range(2, 10)]
    calls.append({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                  "params": {"name": "run_code", "arguments": {"command": "print(game.ReplicatedStorage.Shared.Modulez)"}}})
    p = subprocess.Popen([sys.executable, "-m", "luaguard", "mcp-proxy", "--project", str(PLACE), "--", *STAND_IN],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        p.stdin.write((json.dumps(init) + "\n").encode())
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["id"] == 0
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
                       + "".join(json.dumps(m) + "\n" for m in calls)).encode())
        p.stdin.flush()
        answers = [json.loads(p.stdout.readline()) for _ in calls]
    finally:
        p.stdin.close()
        p.wait(timeout=30)
    assert sorted(a["id"] for a in answers) == list(range(1, 11))
    assert answers[-1]["id"] == 1 and answers[-1]["result"]["content"][0]["text"] == "slept 1.5"
    by_id = {a["id"]: a["result"] for a in answers}
    for i in range(2, 10):
        assert by_id[i]["content"][0]["text"] == f"ran {7 + i} characters" and not by_id[i].get("isError")
    assert by_id[10]["isError"] and "Did you mean 'Modules'?" in by_id[10]["content"][0]["text"]
    assert sorted(reached(log)) == ["run_code"] * 8 + ["slow"]


@pytest.mark.asyncio
async def test_the_next_message_waits_for_the_work_that_is_ready_not_for_io():
    """What the proxy's stdin reader does between two messages from the client: the tasks
    that can run (an answer on its way out) run first; a task waiting for I/O is not waited
    for; a task that never stops being ready holds it for a bounded number of turns."""
    from luaguard.agents.proxy import READY_TURNS, _let_ready_work_run

    loop = asyncio.get_running_loop()
    steps: list[int] = []

    async def relay(n: int) -> None:  # an answer that needs n turns of the loop to go out
        for i in range(n):
            await asyncio.sleep(0)
        steps.append(n)

    blocked = asyncio.Event()
    waiting = asyncio.create_task(blocked.wait())
    tasks = [asyncio.create_task(relay(n)) for n in (3, 8)]
    await _let_ready_work_run(loop)
    assert sorted(steps) == [3, 8] and all(t.done() for t in tasks)
    assert not waiting.done()

    turns = 0

    async def spinner() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    spin = asyncio.create_task(spinner())
    await _let_ready_work_run(loop)
    assert 1 <= turns <= READY_TURNS + 1
    spin.cancel()
    waiting.cancel()


@pytest.mark.asyncio
async def test_the_proxy_process_freezes_its_heap_once_the_project_is_indexed_and_when_idle(log, monkeypatch):
    """``freeze_heap`` (the CLI sets it): once the upstream is up and the validators are
    compiled, the index and the Roblox API are out of the collector's reach (a full
    collection would otherwise walk them, tens of milliseconds with calls in flight); what
    later calls built (caches such as the API's members) follows once no call has been in
    flight for a while - once, not while calls come, and not again with nothing new."""
    import gc

    import luaguard.agents.proxy as P

    monkeypatch.setattr(P, "SETTLE_IDLE_S", 0.2)
    freezes: list[float] = []
    real_freeze = gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: (freezes.append(time.monotonic()), real_freeze())[1])
    engine = Engine(PLACE, read_project_settings(PLACE).settings)
    try:
        async with Client(build_proxy(engine, STAND_IN, freeze_heap=True, log=lambda _line: None)) as c:
            await c.list_tools()
            assert freezes and gc.get_freeze_count() > 0
            at_start = len(freezes)
            for i in range(3):
                ok = await c.call_tool("run_code", {"command": f"print(game.ReplicatedStorage.Shared.Modules, {i})"})
                assert not ok.is_error, text(ok)
            assert len(freezes) == at_start  # not while calls come
            await asyncio.sleep(0.7)
            assert len(freezes) == at_start + 1
            await asyncio.sleep(0.5)
            assert len(freezes) == at_start + 1  # nothing new since
    finally:
        gc.unfreeze()
    freezes.clear()
    async with Client(proxy()) as c:  # without it (a library caller's process): nothing frozen
        await c.list_tools()
        await c.call_tool("run_code", {"command": "print(1)"})
        await asyncio.sleep(0.7)
    assert freezes == [] and gc.get_freeze_count() == 0


def test_the_cli_reports_an_upstream_that_cannot_start_in_one_line_without_a_traceback(tmp_path):
    """An upstream command that exits at once: one stderr line per attempt, no traceback,
    and the proxy still answers (tools/list with an error) until stdin closes."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    msgs = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    p = subprocess.Popen([sys.executable, "-m", "luaguard", "mcp-proxy", "--project", str(PLACE), "--",
                          sys.executable, "-c", "import sys; sys.exit(1)"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write("".join(json.dumps(m) + "\n" for m in msgs).encode())
    p.stdin.flush()
    time.sleep(2.5)
    p.stdin.close()
    p.wait(timeout=30)
    out, err = p.stdout.read(), p.stderr.read()
    replies = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    assert any(r.get("id") == 2 and "error" in r and "not available" in r["error"]["message"] for r in replies), replies
    lines = [ln for ln in err.decode().splitlines() if ln.strip()]
    assert lines and all(ln.startswith("luaguard mcp-proxy: the upstream MCP server") for ln in lines), lines
    assert 2 <= len(lines) <= 6 and "Traceback" not in err.decode()


@pytest.mark.asyncio
async def test_an_inserted_asset_opens_its_parent_for_the_session(log, tmp_path):
    """Instances luaguard cannot name (an inserted asset) make their parent open: a later
    call naming a child there is a warning, not an error."""
    ann = tmp_path / "insert.json"
    ann.write_text(json.dumps({"tools": [{"name": "get_weather", "x-luaguard": {"effect": "adds_children"},
                                          "inputSchema": {"type": "object", "properties": {
                                              "city": {"type": "string", "x-luaguard": "parent_path"}}}}]}))
    engine = Engine(PLACE, read_project_settings(PLACE).settings)
    server = build_proxy(engine, STAND_IN, annotation_files=(str(ann),), log=lambda _l: None)
    folder = "game.ServerScriptService.Server.Services"
    async with Client(server) as c:
        await c.list_tools()
        res = await c.call_tool("set_property", {"instancePath": f"{folder}.Tree", "propertyName": "Name",
                                                 "propertyValue": "X"})
        assert res.is_error
        res = await c.call_tool("get_weather", {"city": folder})
        assert not res.is_error, text(res)
        res = await c.call_tool("set_property", {"instancePath": f"{folder}.Tree", "propertyName": "Name",
                                                 "propertyValue": "X"})
        assert not res.is_error, text(res)  # forwarded: the folder may hold what was inserted
