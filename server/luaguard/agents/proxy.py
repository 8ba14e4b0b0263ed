"""``luaguard mcp-proxy -- UPSTREAM...``: a stdio MCP server in front of another one (e.g.
Roblox's Studio MCP server) that validates every ``tools/call`` before forwarding it.

* ``tools/list`` is the upstream's, passed through; luaguard's validator is built from those
  schemas, with the ``x-luaguard`` roles of the shipped annotations (``toolcalls/servers``)
  and of ``--annotations FILE`` copied onto tools and properties of the same names
  (:func:`luaguard.toolcalls.schemas.annotate`); a property without a role that is named like
  one (``instancePath``, ``className``) gets the heuristic role.
* A call the validator rejects is answered ``{"content": [{"type": "text", "text":
  <feedback>}], "isError": true}`` and never reaches the upstream; a valid one is forwarded
  and the upstream's answer returned unchanged.  Tools the upstream does not list pass
  through untouched (the upstream answers them).
* The upstream runs in one worker task that owns its stdio client; calls are forwarded one at
  a time, in order.  An upstream that exits or does not answer within ``timeout`` seconds is
  reported to the caller (``isError``) and restarted for the next call; the proxy keeps
  serving.  Nothing from the workspace is executed: only the command line the user gave.
"""

from __future__ import annotations

import os
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.server.lowlevel import Server

from .. import __version__


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


@dataclass
class _Job:
    kind: str  # "list" | "call"
    name: str | None
    arguments: dict[str, Any] | None
    done: anyio.Event
    result: Any = None


class Upstream:
    """The upstream MCP server behind a worker task (see the module docstring).

    ``params``: how to start it; ``timeout``: seconds one request may take."""

    def __init__(self, params: StdioServerParameters, timeout: float) -> None:
        self.params = params
        self.timeout = timeout
        self._send, self._recv = anyio.create_memory_object_stream[_Job](64)
        self.restarts = 0

    async def request(self, kind: str, name: str | None = None, arguments: dict[str, Any] | None = None) -> Any:
        """Run one request on the upstream; returns its result, or an ``Exception`` that
        says why there is none (never raises for the upstream's failures)."""
        job = _Job(kind, name, arguments, anyio.Event())
        await self._send.send(job)
        await job.done.wait()
        return job.result

    async def worker(self) -> None:
        """Serve jobs forever, (re)starting the upstream as needed."""
        pending: _Job | None = None
        while True:
            try:
                async with Client(self.params, read_timeout_seconds=self.timeout) as client:
                    while True:
                        job = pending or await self._recv.receive()
                        pending = None
                        try:
                            with anyio.fail_after(self.timeout):
                                if job.kind == "list":
                                    job.result = await client.list_tools()
                                else:
                                    job.result = await client.call_tool(job.name, job.arguments or {})
                        except TimeoutError:
                            job.result = RuntimeError(f"the upstream MCP server did not answer within {self.timeout:g} s; "
                                                      f"it is restarted for the next call")
                            job.done.set()
                            break
                        except Exception as exc:  # a protocol failure (a tool's own error is a result)
                            job.result = RuntimeError(f"the upstream MCP server failed ({_describe(exc)}); "
                                                      f"it is restarted for the next call")
                            job.done.set()
                            break
                        job.done.set()
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:  # the upstream could not start or died
                if pending is None:
                    try:
                        pending = self._recv.receive_nowait()
                    except anyio.WouldBlock:
                        pending = None
                if pending is not None:
                    pending.result = RuntimeError(f"the upstream MCP server is not available ({_describe(exc)}); "
                                                  f"it is restarted for the next call")
                    pending.done.set()
                    pending = None
            self.restarts += 1
            await anyio.sleep(0.2)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def build_proxy(engine, upstream_command: list[str], *, annotation_files: tuple[str, ...] = (),
                timeout: float = 60.0) -> Server:
    """The proxy server for ``engine``'s project in front of ``upstream_command`` (argv).
    Raises ``ValueError`` for an empty command and
    :class:`~luaguard.toolcalls.schemas.ToolSchemaError` for an unreadable annotations file."""
    from ..toolcalls.api import check_calls
    from ..toolcalls.schemas import ToolSet, annotate, load_tool_definitions, read_tools_file
    from .annotations import shipped_files

    if not upstream_command:
        raise ValueError("no upstream command (luaguard mcp-proxy -- COMMAND ARGS...)")
    annotations: list[dict] = []
    for f in (*shipped_files(), *map(Path, annotation_files)):
        data = read_tools_file(Path(f))
        items = data.get("tools") if isinstance(data, dict) else data
        annotations.extend(t for t in (items or []) if isinstance(t, dict))
    # the upstream inherits the user's environment, as if the agent had started it
    params = StdioServerParameters(command=upstream_command[0], args=list(upstream_command[1:]), env=dict(os.environ))
    upstream = Upstream(params, timeout)
    state: dict[str, Any] = {"tools": None, "toolset": None, "problems": []}
    lock = threading.Lock()

    async def _refresh() -> types.ListToolsResult | Exception:
        got = await upstream.request("list")
        if isinstance(got, types.ListToolsResult):
            defs = [{"name": t.name, "description": t.description or "", "inputSchema": t.input_schema}
                    for t in got.tools]
            specs, problems = load_tool_definitions(annotate(defs, annotations), "upstream tools/list")
            state["tools"] = got
            state["toolset"] = ToolSet({s.name: s for s in specs}, {}, problems)
        return got

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        got = await _refresh()
        if isinstance(got, Exception):
            raise RuntimeError(f"luaguard mcp-proxy: cannot list the upstream's tools: {got}")
        return got

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        if state["toolset"] is None:
            await _refresh()
        ts = state["toolset"]
        name, args = params.name, params.arguments or {}
        if ts is not None and name in ts.tools:
            with lock:
                [res] = check_calls(engine, {"name": name, "arguments": args}, tools=ts)
            if not res.valid:
                return _error(res.feedback)
        got = await upstream.request("call", name, args)
        if isinstance(got, types.CallToolResult):
            return got
        return _error(f"luaguard mcp-proxy: {got}")

    @asynccontextmanager
    async def lifespan(server):
        async with anyio.create_task_group() as tg:
            tg.start_soon(upstream.worker)
            try:
                yield {"upstream": upstream}
            finally:
                tg.cancel_scope.cancel()

    server = Server("luaguard-proxy", version=__version__, lifespan=lifespan,
                    on_list_tools=on_list_tools, on_call_tool=on_call_tool,
                    instructions="Tool calls are checked by luaguard against the Roblox project before they reach "
                                 "the upstream server; a rejected call says what to fix.")
    server.upstream = upstream  # for tests and diagnostics
    return server


def run_stdio(server: Server) -> None:
    """Serve ``server`` over this process's stdin/stdout until the client disconnects."""
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)

