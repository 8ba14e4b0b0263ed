"""``luaguard mcp-proxy -- UPSTREAM...``: a stdio MCP server in front of another one (e.g.
Roblox's Studio MCP server) that validates every ``tools/call`` before forwarding it.

* ``tools/list`` is the upstream's, passed through; luaguard's validator is built from those
  schemas, with the ``x-luaguard`` roles of the shipped annotations (``toolcalls/servers``)
  and of ``--annotations FILE`` copied onto tools and properties of the same names
  (:func:`luaguard.toolcalls.schemas.annotate`); a property without a role that is named like
  one (``instancePath``, ``className``) gets the heuristic role.
* A call the validator rejects is answered ``{"content": [{"type": "text", "text":
  <feedback>}], "isError": true}`` and never reaches the upstream.  Script sources and edits
  are judged on what they introduce over the script's current source (the rule of the hook
  and ``check --diff``).  Tools the upstream does not list pass through untouched.
* **The upstream's answer is its answer**: a result (``isError`` or not) and a JSON-RPC error
  reply (robloxstudio-mcp answers ``-32603 Tool execution failed: Instance not found`` for an
  ordinary failure in Studio) go to the client unchanged; nothing is restarted for them.
* **Calls are forwarded concurrently** over one upstream session (the SDK keeps request ids
  apart): a call waiting for a disconnected Studio does not hold up the others.
* **Session overlay**: what the proxy forwarded and the upstream carried out - instances
  created (``create_object``, ``mass_create_objects``, ``create_ui_tree``, ``clone_object``),
  renamed (``rename_object``, ``set_property`` ``Name``), moved (``move_object``,
  ``set_property`` ``Parent``), deleted (``delete_object``) and the script sources it sent -
  is seen by later calls (:class:`luaguard.toolcalls.api.CallSession`): ``set_script_source``
  on the ``Script`` just created is accepted.  The overlay starts empty whenever the upstream
  (re)starts: a new server may see another place.
* **Restarts only when the transport dies**: the upstream's output closes (it exited, a
  broken pipe), or a call gets no answer within ``timeout`` seconds *and* a ``ping`` gets none
  either (a server that answers pings is working on a slow call: that call is reported,
  the server is kept).  Restarts back off exponentially: the first one after a good run is
  immediate, then ``backoff`` (first delay and cap, in seconds; doubling), reset once an
  upstream has run for a minute; each is announced by one line on stderr.  A call that
  arrives while it is down waits for a restart due within 2 s, else is answered at once
  with the reason.
* **Latency**: the proxy's stdio is read and written by the event loop itself
  (:func:`pipe_stdio`); between two messages from the client, answers already given by the
  upstream are relayed first (:func:`_let_ready_work_run`), and answers ready together go
  out in one write; the CLI's process keeps its long-lived heap out of the garbage
  collector's full passes (``freeze_heap``).  ``bench/agent_eval.py`` measures what it adds.

Nothing from the workspace is executed: only the command line the user gave.
"""

from __future__ import annotations

import gc
import json
import os
import re
import shlex
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Callable

import anyio
from anyio.abc import ObjectReceiveStream
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, INTERNAL_ERROR, REQUEST_TIMEOUT

from .. import __version__

#: an upstream that ran this long before it died restarts after the first delay again
STABLE_AFTER_S = 60.0
#: seconds a ping may take before the upstream counts as not answering
PING_TIMEOUT_S = 5.0
#: a call that finds the upstream down waits for a restart due within this many seconds
SOON_S = 2.0
#: seconds an upstream may take to start (``npx`` may install the package first)
START_TIMEOUT_S = 60.0
#: with ``freeze_heap``: seconds without a call in flight after which the heap is settled
SETTLE_IDLE_S = 1.0


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class _Watched(ObjectReceiveStream[Any]):
    """The upstream transport's message stream as the client session reads it; ``on_end``
    is called when it ends (the upstream closed its output) or is closed."""

    def __init__(self, inner: ObjectReceiveStream[Any], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        self._on_end()
        await self._inner.aclose()


class Unavailable(Exception):
    """The upstream cannot take a request now; ``str()`` says why (for the model)."""


class Upstream:
    """The upstream MCP server behind one client session (see the module docstring).

    ``params``: how to start it; ``timeout``: seconds one request may take; ``backoff``:
    ``(first delay, cap)`` between restarts; ``log``: where the one-line restart notices go;
    ``on_start``: called (no arguments) each time a fresh upstream is ready."""

    def __init__(self, params: StdioServerParameters, timeout: float, *, backoff: tuple[float, float] = (0.5, 30.0),
                 log: Callable[[str], None] = _stderr_line, on_start: Callable[[], None] | None = None) -> None:
        self.params = params
        self.timeout = timeout
        self.start_timeout = max(timeout, START_TIMEOUT_S)
        self.backoff = backoff
        self.log = log
        self.on_start = on_start
        self.session: ClientSession | None = None
        self.state = "starting"      # "starting" | "up" | "down"
        self.starts = 0              # upstream processes that came up (initialized)
        self.restarts = 0            # times the transport died and a restart was scheduled
        self.generation = 0
        self.reason = ""             # why it is down
        self.retry_at = 0.0
        self._changed = anyio.Event()
        self._lost: anyio.Event | None = None
        self._why_lost = ""
        self.shown = " ".join(shlex.quote(a) for a in [params.command, *params.args])

    def _set_state(self, state: str) -> None:
        self.state = state
        self._changed.set()
        self._changed = anyio.Event()

    # -- supervision ----------------------------------------------------------------------------
    async def run(self) -> None:
        """Keep an upstream running for as long as the task is not cancelled."""
        failures = 0
        while True:
            self._set_state("starting")
            started = time.monotonic()
            try:
                why = await self._serve_once()
            except Exception as exc:  # could not start, or the session broke
                why = f"failed ({_describe(exc)})"
            self.session = None
            if time.monotonic() - started >= STABLE_AFTER_S:
                failures = 0
            # the first restart after a good run is immediate; then first delay, doubling, capped
            delay = 0.0 if failures == 0 else min(self.backoff[0] * 2 ** (failures - 1), self.backoff[1])
            failures += 1
            self.restarts += 1
            self.reason = why
            self.retry_at = time.monotonic() + delay
            self._set_state("down")
            self.log(f"luaguard mcp-proxy: the upstream MCP server ({self.shown}) {why}; "
                     + (f"restarting it in {delay:g} s" if delay else "restarting it"))
            await anyio.sleep(delay)

    async def _serve_once(self) -> str:
        lost = anyio.Event()
        self._lost, self._why_lost = lost, ""

        def closed() -> None:  # the transport's read side ends when the process closes its output
            self._why_lost = self._why_lost or "exited (its output closed)"
            lost.set()

        async with stdio_client(self.params) as (read, write):
            async with ClientSession(_Watched(read, closed), write) as session:
                with anyio.fail_after(self.start_timeout):
                    await session.initialize()
                self.session = session
                self.starts += 1
                self.generation += 1
                if self.on_start is not None:
                    self.on_start()
                self._set_state("up")
                await lost.wait()
                self.session = None
        return self._why_lost or "stopped"

    def lose(self, generation: int, why: str) -> None:
        """Declare the upstream of ``generation`` dead (it is then restarted)."""
        if generation == self.generation and self._lost is not None and not self._lost.is_set():
            self._why_lost = why
            self._lost.set()

    async def ready(self) -> tuple[ClientSession, int]:
        """The live session and its generation; waits while the upstream starts (at most
        ``timeout`` seconds).  Raises :class:`Unavailable` while it is down."""
        if self.state == "up" and self.session is not None:  # the common case, without a cancel scope
            return self.session, self.generation
        waited_out_a_start = False
        with anyio.move_on_after(self.start_timeout):
            while True:
                if self.state == "up" and self.session is not None:
                    return self.session, self.generation
                if self.state == "down":
                    wait = max(0.0, self.retry_at - time.monotonic())
                    if wait > SOON_S or waited_out_a_start:
                        raise Unavailable(f"the upstream MCP server is not available: it {self.reason}; "
                                          f"luaguard restarts it in {wait:.1f} s")
                was = self.state
                await self._changed.wait()
                waited_out_a_start = waited_out_a_start or (was == "starting" and self.state == "down")
        raise Unavailable(f"the upstream MCP server did not start within {self.start_timeout:g} s")

    # -- requests -------------------------------------------------------------------------------
    async def request(self, req: Any, result_type: Any, *, to: tuple[ClientSession, int] | None = None) -> Any:
        """Send one request; returns the typed result, or raises :class:`MCPError` (the
        upstream's own error reply, unchanged) or :class:`Unavailable` (no answer: the
        transport died, or the call timed out).  ``to``: the ``(session, generation)``
        :meth:`ready` gave (default: ask it now)."""
        session, gen = to if to is not None else await self.ready()
        t0 = time.monotonic()
        try:
            return await session.send_request(req, result_type, request_read_timeout_seconds=self.timeout)
        except MCPError as exc:
            took = time.monotonic() - t0
            if exc.code == CONNECTION_CLOSED and exc.message == "Connection closed":
                self.lose(gen, "closed the connection")
                raise Unavailable("the upstream MCP server closed the connection during the call; "
                                  "luaguard restarts it") from None
            if exc.code == REQUEST_TIMEOUT and took >= self.timeout * 0.95:
                if await self._answers_ping(session):
                    raise Unavailable(f"the upstream MCP server did not answer this call within {self.timeout:g} s "
                                      f"(it is still running)") from None
                self.lose(gen, f"did not answer within {self.timeout:g} s, nor a ping")
                raise Unavailable(f"the upstream MCP server did not answer within {self.timeout:g} s; "
                                  f"luaguard restarts it") from None
            raise
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream) as exc:
            self.lose(gen, f"broke the connection ({_describe(exc)})")
            raise Unavailable("the upstream MCP server's connection broke during the call; luaguard restarts it") from None

    async def _answers_ping(self, session: ClientSession) -> bool:
        try:
            with anyio.fail_after(PING_TIMEOUT_S):
                await session.send_ping()
            return True
        except Exception:
            return False


def build_proxy(engine, upstream_command: list[str], *, annotation_files: tuple[str, ...] = (),
                timeout: float = 60.0, backoff: tuple[float, float] = (0.5, 30.0),
                log: Callable[[str], None] = _stderr_line, freeze_heap: bool = False) -> Server:
    """The proxy server for ``engine``'s project in front of ``upstream_command`` (argv).
    Raises ``ValueError`` for an empty command and
    :class:`~luaguard.toolcalls.schemas.ToolSchemaError` for an unreadable annotations file.
    ``server.upstream`` is the :class:`Upstream`, ``server.proxy_state`` the session state
    (for tests and diagnostics).  ``freeze_heap`` (for a process that is only the proxy, as
    ``luaguard mcp-proxy`` is): what is alive once the project is indexed, whenever the
    validators are compiled, and after calls once none has been in flight for
    :data:`SETTLE_IDLE_S` (caches the first judgements filled, such as the Roblox API's
    members) is moved out of the garbage collector's reach (:func:`gc.collect`, then
    :func:`gc.freeze`), so that a full collection no longer walks the project's index and
    the API (about 40 ms on this kind of machine: a stall of every call in flight)."""
    from ..toolcalls.api import check_calls, commit_effects, new_session
    from ..toolcalls.schemas import ToolSet, annotate, load_tool_definitions, read_tools_file
    from .annotations import shipped_files

    if not upstream_command:
        raise ValueError("no upstream command (luaguard mcp-proxy -- COMMAND ARGS...)")
    annotations: list[dict] = []
    for f in (*shipped_files(), *map(Path, annotation_files)):
        data = read_tools_file(Path(f))
        items = data.get("tools") if isinstance(data, dict) else data
        annotations.extend(t for t in (items or []) if isinstance(t, dict))
    state: dict[str, Any] = {"tools": None, "toolset": None, "tools_key": None, "session": None,
                             "in_flight": 0, "unsettled": 0, "last_call": 0.0}

    def settle() -> None:
        if freeze_heap:
            gc.collect()  # only what survives is frozen: garbage is never kept
            gc.freeze()
            state["unsettled"] = 0

    async def settle_when_idle() -> None:
        while True:
            await anyio.sleep(SETTLE_IDLE_S)
            if (state["unsettled"] and not state["in_flight"]
                    and time.monotonic() - state["last_call"] >= SETTLE_IDLE_S):
                settle()

    def on_start() -> None:  # a fresh upstream: its tools may differ, and it saw none of our calls
        state["tools"] = state["toolset"] = None
        state["session"] = new_session(engine)
        settle()

    # the upstream inherits the user's environment, as if the agent had started it
    params = StdioServerParameters(command=upstream_command[0], args=list(upstream_command[1:]), env=dict(os.environ))
    upstream = Upstream(params, timeout, backoff=backoff, log=log, on_start=on_start)

    async def _refresh() -> types.ListToolsResult:
        got = await upstream.request(types.ListToolsRequest(), types.ListToolsResult)
        defs = [{"name": t.name, "description": t.description or "", "inputSchema": t.input_schema} for t in got.tools]
        key = json.dumps(defs, sort_keys=True, default=str)
        if state["toolset"] is None or state["tools_key"] != key:  # compile the validators once per listing
            specs, problems = load_tool_definitions(annotate(defs, annotations), "upstream tools/list")
            state["toolset"] = ToolSet({s.name: s for s in specs}, {}, problems)
            state["tools_key"] = key
            settle()
        state["tools"] = got
        return got

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        try:
            return await _refresh()
        except Unavailable as exc:
            raise MCPError(INTERNAL_ERROR, f"luaguard mcp-proxy: cannot list the upstream's tools: {exc}") from None

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        state["in_flight"] += 1
        try:
            return await judge_and_forward(params)
        finally:
            state["in_flight"] -= 1
            state["unsettled"] += 1
            state["last_call"] = time.monotonic()

    async def judge_and_forward(params: types.CallToolRequestParams) -> types.CallToolResult:
        name, args = params.name, params.arguments or {}
        try:
            to = await upstream.ready()  # judge against the upstream that will carry it out
            if state["toolset"] is None:
                await _refresh()
                to = await upstream.ready()
        except Unavailable as exc:
            return _error(f"luaguard mcp-proxy: {exc}")
        ts, session = state["toolset"], state["session"]
        checked = None
        if ts is not None and name in ts.tools:
            [checked] = check_calls(engine, {"name": name, "arguments": args}, tools=ts, session=session)
            if not checked.valid:
                return _error(checked.feedback)
        req = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=params.arguments))
        try:
            got = await upstream.request(req, types.CallToolResult, to=to)
        except Unavailable as exc:
            return _error(f"luaguard mcp-proxy: {exc}")
        if (checked is not None and session is not None and not got.is_error
                and state["session"] is session and upstream.generation == to[1]):
            commit_effects(engine, session, checked)
        return got

    @asynccontextmanager
    async def lifespan(server):
        async with anyio.create_task_group() as tg:
            tg.start_soon(upstream.run)
            if freeze_heap:
                tg.start_soon(settle_when_idle)
            try:
                yield {"upstream": upstream}
            finally:
                tg.cancel_scope.cancel()

    server = Server("luaguard-proxy", version=__version__, lifespan=lifespan,
                    on_list_tools=on_list_tools, on_call_tool=on_call_tool,
                    instructions="Tool calls are checked by luaguard against the Roblox project before they reach "
                                 "the upstream server; a rejected call says what to fix.")
    server.upstream = upstream  # for tests and diagnostics
    server.proxy_state = state
    return server


#: at most this many turns of the event loop are given to ready work before the next message
READY_TURNS = 32


async def _let_ready_work_run(loop) -> None:
    """Give the work the event loop can run now its turns (at most :data:`READY_TURNS`)
    before the next message from the client is taken in: an answer the upstream already
    gave is relayed before another call is judged.  Without this a burst of calls (8 sent
    at once) is taken in and judged back to back while the answers in flight advance one
    step (a turn of the loop) per call taken in, and they need several: every answer of
    the burst goes out about when the last call has been judged.  Work waiting for I/O is
    never waited for.  The loop's queue of ready callbacks is asyncio's ``loop._ready``; a loop without
    one gets a single turn."""
    import asyncio

    ready = getattr(loop, "_ready", None)
    await asyncio.sleep(0)
    if ready is None:
        return
    for _ in range(READY_TURNS - 1):
        if not ready:
            return
        await asyncio.sleep(0)


#: a client line longer than this (bytes) is answered with an error and skipped, not read
MAX_LINE_BYTES = 64 * 1024 * 1024
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def malformed_answer(line: bytes, head_only: bool = False):
    """The JSON-RPC error that answers a client line the SDK cannot read (``None`` for a
    notification or a line with no request id to answer): ``-32700`` (not JSON), ``-32600``
    (a request over :data:`MAX_LINE_BYTES`, or one holding a lone surrogate escape - valid
    JSON, not valid Unicode - or not of a JSON-RPC message's shape).  ``head_only``: ``line``
    is the first bytes of an over-long line."""
    import mcp_types

    def answer(rid, code: int, message: str):
        return mcp_types.JSONRPCError(jsonrpc="2.0", id=rid, error=mcp_types.ErrorData(code=code, message=message))

    if head_only:
        m = _ID.search(line[:4096])
        rid = json.loads(m.group(1)) if m else None
        return answer(rid, -32600, f"luaguard: the message is over {MAX_LINE_BYTES:,} bytes; not read")
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return answer(None, -32700, "luaguard: parse error: the message is not JSON")
    if not isinstance(data, dict) or "method" not in data or "id" not in data:
        return None
    rid = data.get("id")
    if not (isinstance(rid, (int, str)) and not isinstance(rid, bool)):
        rid = None
    if re.search(r'\\u[dD][89abAB][0-9a-fA-F]{2}|\\u[dD][c-fC-F][0-9a-fA-F]{2}', line.decode("utf-8", "replace")):
        return answer(rid, -32600, "luaguard: the request holds a lone surrogate escape (such as \\ud800), which is "
                                   "not valid Unicode; not read")
    return answer(rid, -32600, "luaguard: invalid request: not a JSON-RPC 2.0 request MCP can read")


async def _read_line(reader) -> tuple[bytes, bytes | None]:
    """The next line from ``reader`` (``b""`` at the end), or ``(b"", head)`` for a line over
    the reader's limit: its first bytes, the rest read and dropped without keeping it."""
    import asyncio

    try:
        return await reader.readuntil(b"\n"), None
    except asyncio.IncompleteReadError as exc:
        return exc.partial, None
    except asyncio.LimitOverrunError as exc:
        head = await reader.read(min(4096, max(exc.consumed, 1)))
    while True:
        try:
            await reader.readuntil(b"\n")
            return b"", head
        except asyncio.IncompleteReadError:
            return b"", head
        except asyncio.LimitOverrunError as exc:
            await reader.read(max(exc.consumed, 1))


@asynccontextmanager
async def pipe_stdio():
    """This process's stdin/stdout as an MCP server's message streams, read and written by
    the event loop itself (the SDK's stdio transport hands every line to a worker thread,
    about a millisecond per message on a busy machine).  POSIX pipes, sockets and terminals;
    raises ``ValueError``/``OSError`` for other standard streams (a regular file).  A line the
    SDK cannot read (not JSON, a lone surrogate escape, over :data:`MAX_LINE_BYTES`) is
    answered with a JSON-RPC error (:func:`malformed_answer`), never dropped silently."""
    import asyncio

    import mcp_types
    from mcp.shared.message import SessionMessage

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    stdin = os.fdopen(os.dup(0), "rb", buffering=0)
    stdout = os.fdopen(os.dup(1), "wb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    in_send, in_recv = anyio.create_memory_object_stream[Any](0)
    out_send, out_recv = anyio.create_memory_object_stream[Any](0)

    async def read_loop() -> None:
        async with in_send:
            while True:
                line, head = await _read_line(reader)
                if head is not None:
                    await out_send.send(SessionMessage(malformed_answer(head, head_only=True)))
                    continue
                if not line:
                    break
                if not line.strip():
                    continue
                try:
                    item: Any = SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                except ValueError:
                    answer = malformed_answer(line)
                    if answer is not None:
                        await out_send.send(SessionMessage(answer))
                    continue
                await in_send.send(item)
                await _let_ready_work_run(loop)

    async def write_loop() -> None:
        async with out_recv:
            async for msg in out_recv:
                # the answers ready now go out in one write: one wake-up of the client for them all
                batch = [msg]
                while True:
                    try:
                        batch.append(out_recv.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                writer.write("".join(m.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                                     for m in batch).encode())
                await writer.drain()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_loop)
        tg.start_soon(write_loop)
        try:
            yield in_recv, out_send
        finally:
            tg.cancel_scope.cancel()
            transport.close()


def run_stdio(server: Server) -> None:
    """Serve ``server`` over this process's stdin/stdout until the client disconnects
    (:func:`pipe_stdio`; the SDK's transport where that cannot be used).  The SDK's own log
    records are silenced: the proxy reports an upstream's failure in one line of its own."""
    import logging

    from mcp.server.stdio import stdio_server

    logging.getLogger("mcp").setLevel(logging.CRITICAL + 1)

    async def main() -> None:
        try:
            transport = pipe_stdio()
            read, write = await transport.__aenter__()
        except (ValueError, OSError):
            transport = stdio_server()
            read, write = await transport.__aenter__()
        try:
            await server.run(read, write, server.create_initialization_options())
        finally:
            await transport.__aexit__(None, None, None)

    anyio.run(main)
