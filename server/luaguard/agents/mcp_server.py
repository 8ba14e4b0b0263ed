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
    ``{"results": [CallDict, ...]}``.  Known tools: luaguard's built-in ones, the Studio MCP
    servers' tools luaguard ships annotations for (``run_code``, ``execute_luau``,
    ``create_object``, ``set_script_source`` ...; a same-named built-in is replaced) and the
    ``--tools`` files.
``resolve_path(path)``, ``project_tree(root=None, depth=None)``, ``stats()``
    see :mod:`luaguard.toolcalls.api`.

A call is answered ``isError: true`` only when luaguard could not check (bad arguments: one
sentence naming the argument and what it must be, e.g. "Argument 'depth' must be 0 or
more, got -1."); a failed check is a normal result whose ``valid`` is false.  The engine is
not thread-safe: calls run one at a time under a lock.
"""

from __future__ import annotations

import json
import threading
from typing import Annotated, Any, Literal

from mcp import types
from mcp.server.mcpserver import MCPServer
from pydantic import Field

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


_TYPE_WORDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
               "object": "an object", "array": "a list", "null": "null"}


def _got(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False, default=str)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)
    return f"{shown} ({kind})" if value is not None else "null"


def _expected(schema: dict) -> str:
    """What ``schema`` accepts, in words ("an integer, 0 or more, or null")."""
    if "anyOf" in schema or "oneOf" in schema:
        parts = [p for p in (_expected(s) for s in schema.get("anyOf", schema.get("oneOf", [])) if isinstance(s, dict)) if p]
        return (", or ".join(parts) if any("," in p or " from " in p for p in parts) else " or ".join(parts)) \
            or "a value of the declared type"
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    t = schema.get("type")
    words = " or ".join(_TYPE_WORDS.get(x, str(x)) for x in t) if isinstance(t, list) else _TYPE_WORDS.get(t, "")
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is not None and hi is not None:
        bound = f"from {lo:g} to {hi:g}"
    elif lo is not None:
        bound = f"{lo:g} or more"
    elif hi is not None:
        bound = f"at most {hi:g}"
    else:
        return words
    if not words:
        return bound
    return f"{words} {bound}" if bound.startswith("from") else f"{words}, {bound}"


def argument_problem(tool: str, schema: dict | None, arguments: dict[str, Any]) -> str | None:
    """One sentence naming the first argument of ``arguments`` that does not fit the tool's
    input ``schema`` (JSON Schema) and what it must be, or ``None`` when all fit."""
    import jsonschema

    if not isinstance(schema, dict):
        return None
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    for name in schema.get("required", []):
        if name not in arguments:
            return f"Argument '{name}' of {tool} is missing; it must be {_expected(props.get(name, {}))}."
    extra = [k for k in arguments if k not in props]
    if extra:
        return f"{tool} has no argument '{extra[0]}'; it takes {', '.join(props) or 'no arguments'}."
    for name, value in arguments.items():
        sub = props.get(name)
        if not isinstance(sub, dict):
            continue
        try:
            errors = list(jsonschema.Draft202012Validator(sub).iter_errors(value))
        except jsonschema.exceptions.SchemaError:
            continue
        if errors:
            return f"Argument '{name}' of {tool} must be {_expected(sub)}, got {_got(value)}."
    return None


class _CheckedServer(MCPServer):
    """An :class:`MCPServer` that answers arguments that do not fit a tool's input schema
    with one sentence (the SDK answers with pydantic's multi-line report)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        problem = argument_problem(name, self._tool_input_schema(name), arguments or {})
        if problem is not None:
            return _result(problem, {"error": problem}, error=True)
        return await super().call_tool(name, arguments, context)


def build_server(engine, *, extra_tool_files: tuple[str, ...] = ()) -> MCPServer:
    """The MCP server for ``engine`` (a :class:`~luaguard.engine.Engine`, or a
    :class:`~luaguard.projects.ProjectSet`: ``check_luau`` and ``check_diff`` then judge
    each file under the projects that map it, the other tools read its primary project);
    ``extra_tool_files``: tool definitions added for ``validate_tool_call`` (the CLI's
    ``--tools``), after the shipped annotations of the Studio MCP servers."""
    from ..toolcalls import api
    from .annotations import shipped_files

    tool_files = (*map(str, shipped_files()), *extra_tool_files)
    server = _CheckedServer("luaguard", version=__version__, instructions=INSTRUCTIONS)
    projects = engine  # lints: under the projects that map the file
    engine = getattr(engine, "primary", engine)
    lock = threading.Lock()

    @server.tool()
    def check_luau(path: str, content: str | None = None,
                   mode: Literal["patch", "editor"] = "patch") -> types.CallToolResult:
        """Lint Luau as the project file `path` (root-relative, e.g. src/server/Main.server.luau, or an
        instance path). `content`: the file's full new text (omit to check the file on disk). `mode`:
        "patch" (an AI's change; default) or "editor"."""
        big = _too_big("content", content)
        if big is not None:
            return big
        with lock:
            if mode == "editor":
                res = api.lint_report(projects, path, content)
                return _result(res["feedback"], res, error="error" in res)
            res = api.validate_patch(projects, path, content=content)
        return _result(res["feedback"], res)

    @server.tool()
    def check_diff(diff: str) -> types.CallToolResult:
        """Apply a unified diff (with ---/+++ file headers, paths relative to the project root) in
        memory and report the problems it introduces."""
        big = _too_big("The diff", diff)
        if big is not None:
            return big
        with lock:
            res = api.validate_patch(projects, None, diff=diff)
        return _result(res["feedback"], res)

    @server.tool()
    def validate_tool_call(call: Any) -> types.CallToolResult:
        """Validate a tool call before making it: {"name": ..., "arguments": {...}}, a list of calls,
        an OpenAI message with tool_calls, or a plan. Knows luaguard's tools and the Roblox Studio MCP
        servers' (run_code, execute_luau, create_object, set_property, set_script_source ...)."""
        with lock:
            try:
                results = api.validate_calls(engine, call, extra_tool_files=tool_files)
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
    def project_tree(root: str | None = None,
                     depth: Annotated[int | None, Field(ge=0, le=1000)] = None) -> types.CallToolResult:
        """The project's instance tree (names, classes, files), from `root` (an instance path; default
        the whole DataModel) down `depth` levels (0 or more; default all)."""
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
