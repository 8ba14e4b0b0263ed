"""``luaguard mcp``: an MCP server (stdio) with the checks an agent runs before it acts.

Built on the official Python SDK (``mcp`` 2.x, :class:`mcp.server.mcpserver.MCPServer`).
Tools - each result's structured content is the JSON the CLI prints for the same check,
its text content the feedback for the model:

``check_luau(path, content=None, mode="patch")``
    lint ``content`` as the file ``path`` (``None``: the file on disk); ``mode`` ``patch``
    (an AI's change: every finding, placeholders are errors) or ``editor``.  Structured:
    ``luaguard.validatePatch``'s shape (``valid``, ``errors``, ``warnings``, ``feedback``,
    ``files``).
``check_diff(diff)``
    a unified diff applied in memory (``luaguard check --diff``).
``validate_tool_call(call)``
    one call, a list, JSONL, an OpenAI message or a plan (``luaguard validate``):
    ``{"results": [CallDict, ...]}``.
``resolve_path(path)``, ``project_tree(root=None, depth=None)``, ``stats()``
    see :mod:`luaguard.toolcalls.api`.

A call is answered ``isError: true`` only when luaguard could not check (bad arguments);
a failed check is a normal result whose ``valid`` is false.  The engine is not
thread-safe: calls run one at a time under a lock.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from mcp import types
from mcp.server.mcpserver import MCPServer

from .. import __version__

INSTRUCTIONS = (
    "luaguard checks Roblox (Luau) code and tool calls against the project's real instance tree. "
    "Call check_luau or check_diff before writing a script, validate_tool_call before calling a Studio "
    "tool, resolve_path when unsure an instance exists. Fix every error it reports before you act."
)


#: content or diffs over this many bytes are not checked (answered isError): the linter's limit
MAX_INPUT_BYTES = 10 * 1024 * 1024


def _too_big(what: str, text: str | None) -> types.CallToolResult | None:
    if text is not None and len(text.encode("utf-8", errors="replace")) > MAX_INPUT_BYTES:
        return _result(f"{what} is over {MAX_INPUT_BYTES:,} bytes; luaguard does not check it. Split the change.",
                       {"error": "too large"}, error=True)
    return None


def _result(text: str, structured: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=structured, is_error=error)


def build_server(engine, *, extra_tool_files: tuple[str, ...] = ()) -> MCPServer:
    """The MCP server for ``engine`` (a :class:`~luaguard.engine.Engine`); ``extra_tool_files``:
    tool definitions added for ``validate_tool_call`` (the CLI's ``--tools``)."""
    from ..toolcalls import api

    server = MCPServer("luaguard", version=__version__, instructions=INSTRUCTIONS)
    lock = threading.Lock()

    @server.tool()
    def check_luau(path: str, content: str | None = None, mode: str = "patch") -> types.CallToolResult:
        """Lint Luau as the project file `path` (root-relative, e.g. src/server/Main.server.luau, or an
        instance path). `content`: the file's full new text (omit to check the file on disk). `mode`:
        "patch" (an AI's change; default) or "editor"."""
        big = _too_big("content", content)
        if big is not None:
            return big
        if mode not in ("patch", "editor"):
            return _result(f"mode must be 'patch' or 'editor', got {mode!r}", {"error": "bad mode"}, error=True)
        with lock:
            if mode == "editor":
                res = api.lint_report(engine, path, content)
                return _result(res["feedback"], res, error="error" in res)
            res = api.validate_patch(engine, path, content=content)
        return _result(res["feedback"], res)

    @server.tool()
    def check_diff(diff: str) -> types.CallToolResult:
        """Apply a unified diff (with ---/+++ file headers, paths relative to the project root) in
        memory and report the problems it introduces."""
        big = _too_big("The diff", diff)
        if big is not None:
            return big
        with lock:
            res = api.validate_patch(engine, None, diff=diff)
        return _result(res["feedback"], res)

    @server.tool()
    def validate_tool_call(call: Any) -> types.CallToolResult:
        """Validate a tool call before making it: {"name": ..., "arguments": {...}}, a list of calls,
        an OpenAI message with tool_calls, or a plan. Returns one result per call."""
        with lock:
            try:
                results = api.validate_calls(engine, call, extra_tool_files=extra_tool_files)
            except Exception as exc:  # a tools file that cannot be read
                return _result(f"luaguard could not load its tool definitions: {exc}", {"error": str(exc)}, error=True)
        text = "\n".join(r["feedback"] for r in results) or "No tool call found in the input."
        return _result(text, {"results": results})

    @server.tool()
    def resolve_path(path: str) -> types.CallToolResult:
        """Does this instance path exist in the project (game.ReplicatedStorage.Shared.Util)? Its class
        and children, or the deepest part that exists and did-you-mean suggestions."""
        with lock:
            res = api.resolve_path(engine, path)
        return _result(res["feedback"], res)

    @server.tool()
    def project_tree(root: str | None = None, depth: int | None = None) -> types.CallToolResult:
        """The project's instance tree (names, classes, files), from `root` (an instance path; default
        the whole DataModel) down `depth` levels."""
        with lock:
            res = api.project_tree(engine, root, depth)
        return _result(json.dumps(res, ensure_ascii=False), res, error="error" in res)

    @server.tool()
    def stats() -> types.CallToolResult:
        """Counts of findings by rule and of checked calls and patches since the server started."""
        with lock:
            res = api.stats(engine)
        return _result(json.dumps(res), res)

    return server
