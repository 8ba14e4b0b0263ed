"""Coding agents' pre- and post-tool-use hook payloads read into one shape, :class:`ToolUse`.

Formats (``shared/notes/agents.md``, from each agent's documentation):

* Claude Code ``PreToolUse`` (and OpenAI Codex CLI, same wire format): ``{"session_id",
  "transcript_path", "cwd", "permission_mode", "hook_event_name", "tool_name",
  "tool_input", "tool_use_id"}``; ``tool_input`` is ``{file_path, content}`` (``Write``),
  ``{file_path, old_string, new_string, replace_all}`` (``Edit``), ``{file_path, edits:
  [{old_string, new_string, replace_all?}]}`` (``MultiEdit``); MCP tools are named
  ``mcp__<server>__<tool>``; Codex sends edits as an ``apply_patch`` envelope.
* Cursor ``preToolUse`` / ``beforeMCPExecution``: ``tool_name``, ``tool_input`` (an object
  or a JSON string), ``workspace_roots``; for ``beforeMCPExecution`` the tool is an MCP
  server's tool.
* GitHub Copilot: ``{timestamp, cwd, toolName, toolArgs}`` (``toolArgs`` an object or a JSON
  string).

After the tool ran (``ToolUse.event == "post"``): Claude Code / Codex ``PostToolUse`` (the
same fields plus ``tool_response``), Cursor ``postToolUse`` (plus ``tool_output``; its
``afterFileEdit`` carries no tool name and cannot answer the model, so it is read as a tool
luaguard ignores), Copilot ``postToolUse`` (plus ``toolResult``).  Cursor names MCP tools
``MCP:<server>:<tool>`` in ``preToolUse``/``postToolUse``.

Field names vary between agents' file tools (``file_path``/``path``, ``content``/
``file_text``, ``old_string``/``old_str``); the aliases below cover the ones documented.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .edits import StringEdit, is_patch_envelope

AGENTS = ("claude", "codex", "cursor", "copilot")

_PATH_KEYS = ("file_path", "path", "filePath", "target_file", "file")
_CONTENT_KEYS = ("content", "contents", "file_text", "text")
_OLD_KEYS = ("old_string", "old_str", "oldString")
_NEW_KEYS = ("new_string", "new_str", "newString")
_WRITE_TOOLS = {"write", "create", "create_file", "write_file"}
_EDIT_TOOLS = {"edit", "str_replace", "search_replace", "str_replace_based_edit_tool", "str_replace_editor", "strreplace"}
_POST_EVENTS = {"posttooluse", "aftermcpexecution", "afterfileedit"}
_MULTI_TOOLS = {"multiedit", "multi_edit"}


class PayloadError(ValueError):
    """A payload that is not a hook payload of the agent (``str()`` says what is wrong)."""


@dataclass(slots=True)
class ToolUse:
    """What an agent is about to do.

    ``kind``: ``"write"`` (``content`` is the file's whole new text), ``"edit"``
    (``edits`` replace strings in the file), ``"patch"`` (``envelope`` is an
    ``apply_patch`` envelope), ``"mcp"`` (``mcp_tool`` of server ``mcp_server`` called with
    ``arguments``) or ``"other"`` (a tool luaguard has nothing to say about).  ``cwd`` is
    the agent's working directory (relative paths start there).  ``event``: ``"pre"``
    (the tool is about to run) or ``"post"`` (it ran; ``response`` is what it answered);
    ``session``: the agent's session or conversation id, when the payload has one."""

    agent: str
    tool: str
    kind: str
    cwd: Path | None = None
    event: str = "pre"
    session: str | None = None
    response: Any = None
    file_path: str | None = None
    content: str | None = None
    edits: tuple[StringEdit, ...] = ()
    envelope: str | None = None
    mcp_server: str | None = None
    mcp_tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


def _first(d: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in d:
            return d[k]
    return None


def _str_field(d: dict[str, Any], keys: tuple[str, ...], what: str, tool: str) -> str:
    v = _first(d, keys)
    if not isinstance(v, str):
        raise PayloadError(f"{tool}: tool input has no {what} string ({' / '.join(keys)})")
    return v


def _input_obj(raw: Any, tool: str) -> Any:
    if isinstance(raw, str):
        s = raw.strip()
        if s.startswith(("{", "[")):
            try:
                return json.loads(s)
            except json.JSONDecodeError as exc:
                raise PayloadError(f"{tool}: tool input is a string that is not valid JSON "
                                   f"(line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
            except RecursionError:
                raise PayloadError(f"{tool}: tool input is a string holding JSON nested too deeply") from None
            except ValueError as exc:  # an integer over Python's 4,300-digit limit
                raise PayloadError(f"{tool}: tool input is a string holding JSON that cannot be read ({exc})") from None
        return raw
    return raw if raw is not None else {}


def _find_envelope(obj: Any) -> str | None:
    if isinstance(obj, str):
        return obj if is_patch_envelope(obj) else None
    if isinstance(obj, dict):
        for v in obj.values():
            got = _find_envelope(v)
            if got is not None:
                return got
    if isinstance(obj, list):
        for v in obj:
            got = _find_envelope(v)
            if got is not None:
                return got
    return None


def parse_payload(data: Any, agent: str = "claude") -> ToolUse:
    """Read one hook payload (already JSON-decoded) of ``agent`` (one of :data:`AGENTS`).

    Raises :class:`PayloadError` when ``data`` is not an object with a tool name, or a
    file tool's input lacks what it needs (a ``Write`` without ``content``).
    """
    if not isinstance(data, dict):
        raise PayloadError(f"expected a JSON object, got {type(data).__name__}")
    event_name = data.get("hook_event_name")
    post = ((isinstance(event_name, str) and event_name.lower() in _POST_EVENTS)
            or any(k in data for k in ("tool_response", "tool_output", "toolResult")))
    session = next((data[k] for k in ("session_id", "conversation_id", "sessionId") if isinstance(data.get(k), str)), None)
    if post and event_name == "afterFileEdit" and "tool_name" not in data:
        return ToolUse(agent=agent, tool="afterFileEdit", kind="other", event="post", session=session)
    if agent == "copilot" or ("toolName" in data and "tool_name" not in data):
        tool, raw = data.get("toolName"), data.get("toolArgs")
    else:
        tool, raw = data.get("tool_name"), data.get("tool_input")
    if not isinstance(tool, str) or not tool:
        raise PayloadError("no tool name (tool_name / toolName) in the payload")
    cwd = data.get("cwd")
    if not isinstance(cwd, str):
        roots = data.get("workspace_roots")
        cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    use = ToolUse(agent=agent, tool=tool, kind="other", cwd=Path(cwd) if cwd else None,
                  event="post" if post else "pre", session=session,
                  response=next((data[k] for k in ("tool_response", "tool_output", "toolResult") if k in data), None))
    args = _input_obj(raw, tool)
    low = tool.lower()
    if tool.startswith("mcp__") and tool.count("__") >= 2:
        _, server, name = tool.split("__", 2)
        use.kind, use.mcp_server, use.mcp_tool = "mcp", server, name
    elif tool.startswith("MCP:") and len(tool) > 4:
        parts = tool[4:].split(":")
        use.kind, use.mcp_server, use.mcp_tool = "mcp", (parts[0] if len(parts) > 1 else None), parts[-1]
    elif event_name in ("beforeMCPExecution", "afterMCPExecution"):
        use.kind, use.mcp_tool = "mcp", tool
        server = data.get("server") or data.get("url") or data.get("command")
        use.mcp_server = server if isinstance(server, str) else None
    if use.kind == "mcp":
        if not isinstance(args, dict):
            raise PayloadError(f"{tool}: MCP tool arguments must be an object, got {type(args).__name__}")
        use.arguments = args
        return use
    envelope = _find_envelope(args) if low in ("apply_patch", "shell", "bash", "exec", "local_shell") or is_patch_text(args) else None
    if envelope is not None:
        use.kind, use.envelope = "patch", envelope
        return use
    if not isinstance(args, dict):
        return use
    if low == "str_replace_based_edit_tool" or low == "str_replace_editor":
        cmd = args.get("command")
        if cmd == "create":
            low = "write"
        elif cmd != "str_replace":
            return use
    if low in _WRITE_TOOLS:
        use.kind = "write"
        use.file_path = _str_field(args, _PATH_KEYS, "file path", tool)
        use.content = _str_field(args, _CONTENT_KEYS, "content", tool)
    elif low in _EDIT_TOOLS:
        use.kind = "edit"
        use.file_path = _str_field(args, _PATH_KEYS, "file path", tool)
        use.edits = (StringEdit(_str_field(args, _OLD_KEYS, "old_string", tool),
                                _str_field(args, _NEW_KEYS, "new_string", tool),
                                bool(args.get("replace_all", False))),)
    elif low in _MULTI_TOOLS:
        use.kind = "edit"
        use.file_path = _str_field(args, _PATH_KEYS, "file path", tool)
        items = args.get("edits")
        if not isinstance(items, list) or not items:
            raise PayloadError(f"{tool}: tool input has no 'edits' list")
        edits = []
        for i, e in enumerate(items):
            if not isinstance(e, dict):
                raise PayloadError(f"{tool}: edits[{i}] is not an object")
            edits.append(StringEdit(_str_field(e, _OLD_KEYS, f"edits[{i}].old_string", tool),
                                    _str_field(e, _NEW_KEYS, f"edits[{i}].new_string", tool),
                                    bool(e.get("replace_all", False))))
        use.edits = tuple(edits)
    return use


def is_patch_text(args: Any) -> bool:
    """Whether the tool input is (or directly holds) an ``apply_patch`` envelope."""
    if isinstance(args, str):
        return is_patch_envelope(args)
    if isinstance(args, dict):
        return any(isinstance(v, str) and is_patch_envelope(v) for v in args.values())
    return False
