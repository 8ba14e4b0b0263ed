"""``luaguard hook``: a coding agent's pre-tool-use hook.

One payload in (stdin, :mod:`.payloads`), one decision out in the agent's protocol:

* Claude Code / Codex (``--agent claude|codex``): deny is exit status 2 with the feedback on
  stderr (fed to the model); with ``--output json``, exit 0 and ``{"hookSpecificOutput":
  {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason":
  ...}}``.  A change luaguard lets through gets no ``permissionDecision`` at all (an
  ``"allow"`` would skip the user's own permission prompt); its warnings travel as
  ``additionalContext`` with ``--output json``.
* Cursor: always JSON, ``{"permission": "deny", "user_message", "agent_message"}`` or
  ``{"permission": "allow"}``.
* GitHub Copilot: always JSON, ``{"permissionDecision": "deny",
  "permissionDecisionReason"}``, or ``{}`` (``{"additionalContext"}`` with warnings).

What is checked (the same functions as ``luaguard check --diff`` and ``luaguard validate``):
a ``Write`` of a ``.lua``/``.luau`` file inside the project is linted as that file (patch
mode); ``Edit``/``MultiEdit``/``apply_patch`` are applied in memory to the file on disk and
reported as ``check --diff`` reports the change (findings on changed lines and the syntax
and structure errors it causes); an MCP tool luaguard knows (the built-in tools, the
project's, and the shipped annotations of Roblox's Studio MCP servers) is validated as a
call.  Anything else passes silently.  Errors deny, warnings pass.

Fail-open: malformed stdin, a broken project file, a file too large to check, an internal
error or a run over ``timeout`` seconds let the tool call through (exit 0) with a note on
stderr - a broken guard must never block the user's agent.  An edit that cannot be applied
(``old_string`` not in the file) is denied: the agent's own tool would fail the same way.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .edits import EditError, FileChange, apply_patch_envelope, apply_string_edits, read_text, unified_diff
from .payloads import AGENTS, PayloadError, ToolUse, parse_payload

LUAU_SUFFIXES = (".lua", ".luau")
#: content over this many bytes is not checked (passes with a note): the linter's own limit
MAX_CONTENT_BYTES = 10 * 1024 * 1024
OUTPUTS = ("text", "json")


@dataclass(slots=True)
class Verdict:
    """luaguard's answer to one tool use: ``deny`` with ``feedback`` (the text for the
    model), or pass, with ``warnings`` (text, may be empty) and ``note`` (for the user's
    stderr: why nothing was checked, or ``None``).  ``result``: the JSON the CLI's
    ``validate``/``check --diff`` would give (``None`` when nothing was checked)."""

    deny: bool
    feedback: str = ""
    warnings: str = ""
    note: str | None = None
    result: dict[str, Any] | None = None


@dataclass(slots=True)
class HookResponse:
    """What the hook process does: ``exit_code``, ``stdout`` and ``stderr`` text."""

    exit_code: int
    stdout: str = ""
    stderr: str = ""


@dataclass(slots=True)
class HookOptions:
    """``agent`` (one of :data:`~.payloads.AGENTS`), ``output`` (``text`` or ``json``; Cursor
    and Copilot always answer JSON), ``project`` (the root; default: found upward from the
    file or the payload's ``cwd``), ``timeout`` in seconds."""

    agent: str = "claude"
    output: str = "text"
    project: Path | None = None
    timeout: float = 5.0
    extra_tool_files: tuple[str, ...] = field(default_factory=tuple)


def _pass(note: str | None = None) -> Verdict:
    return Verdict(False, note=note)


# -- deciding --------------------------------------------------------------------------------
def _abs(path: str, cwd: Path | None) -> Path:
    p = Path(path)
    if not p.is_absolute():
        p = (cwd or Path.cwd()) / p
    return Path(os.path.abspath(p))


def _root_for(use: ToolUse, path: Path | None, options: HookOptions) -> Path | None:
    from ..workspace import find_project_root

    if options.project is not None:
        return Path(os.path.abspath(options.project))
    start = path.parent if path is not None else use.cwd
    if start is None:
        return None
    root = find_project_root(start)
    if root is None and use.cwd is not None and path is not None:
        root = find_project_root(use.cwd)
    return root


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _diff_for(engine, changes: list[FileChange], cwd: Path | None) -> str:
    return "".join(unified_diff(engine.relpath(_abs(ch.path, cwd)), ch.old, ch.new) for ch in changes)


def _from_patch_result(res: dict[str, Any]) -> Verdict:
    if not res["valid"]:
        return Verdict(True, feedback=res["feedback"], result=res)
    return Verdict(False, warnings=res["feedback"] if res["warnings"] else "", result=res)


def _check_changes(use: ToolUse, changes: list[FileChange], options: HookOptions) -> Verdict:
    """Lint the changes to Luau files inside one project (the first such file's)."""
    paths = [(ch, _abs(ch.path, use.cwd)) for ch in changes]
    luau = [(ch, p) for ch, p in paths if p.suffix in LUAU_SUFFIXES]
    if not luau:
        return _pass()
    root = _root_for(use, luau[0][1], options)
    if root is None:
        return _pass()
    real_root = Path(os.path.realpath(root))
    mine = []
    for ch, p in luau:
        if not _inside(p, root):
            continue  # outside the project: not luaguard's business
        real = Path(os.path.realpath(p))
        if not _inside(real, real_root):
            return Verdict(True, feedback=f"luaguard: {ch.path} is inside the project but resolves to {real}, "
                                          f"outside it (a symbolic link): write the file inside the project instead.")
        mine.append(ch)
    if not mine:
        return _pass()
    from ..engine import ProjectUnreadable, open_engine

    for ch in mine:
        if ch.new is not None and len(ch.new.encode("utf-8", errors="replace")) > MAX_CONTENT_BYTES:
            return _pass(f"luaguard: {ch.path}: new content over {MAX_CONTENT_BYTES:,} bytes; not checked")
        if "\x00" in (ch.new or ""):
            return _pass(f"luaguard: {ch.path}: new content is binary (NUL bytes); not checked")
    try:
        engine = open_engine(root)
    except ProjectUnreadable as exc:
        return _pass(f"luaguard: project at {root} cannot be read ({exc}); not checked")
    from ..toolcalls.api import validate_patch

    if use.kind == "write" and len(mine) == 1 and mine[0].new is not None:
        return _from_patch_result(validate_patch(engine, str(_abs(mine[0].path, use.cwd)), content=mine[0].new))
    diff = _diff_for(engine, mine, use.cwd)
    if not diff:
        return _pass()
    return _from_patch_result(validate_patch(engine, None, diff=diff))


def _check_mcp(use: ToolUse, options: HookOptions) -> Verdict:
    root = _root_for(use, None, options)
    from ..engine import Engine, ProjectUnreadable, open_engine
    from ..toolcalls import model as M
    from ..toolcalls.api import validate_calls

    if root is not None:
        try:
            engine = open_engine(root)
        except ProjectUnreadable as exc:
            return _pass(f"luaguard: project at {root} cannot be read ({exc}); not checked")
    else:
        engine = Engine(None)
    from .annotations import known_tool

    tool_files = known_tool(use.mcp_server, use.mcp_tool, options.extra_tool_files)
    if tool_files is None:
        return _pass()
    [res] = validate_calls(engine, {"name": use.mcp_tool, "arguments": use.arguments}, extra_tool_files=tool_files)
    if any(e["code"] == M.UNKNOWN_TOOL for e in res["errors"]):
        return _pass()
    if not res["valid"]:
        return Verdict(True, feedback=res["feedback"], result=res)
    return Verdict(False, warnings=res["feedback"] if res["warnings"] else "", result=res)


def evaluate(use: ToolUse, options: HookOptions | None = None) -> Verdict:
    """luaguard's verdict on ``use``.  Raises nothing for bad edits (they are denied, with
    the reason); other exceptions are bugs (:func:`run_hook` turns them into a pass)."""
    options = options or HookOptions()
    try:
        if use.kind == "write":
            # (a whole-file write is linted as the new text: the old one is not needed)
            return _check_changes(use, [FileChange(use.file_path or "", None, use.content)], options)
        if use.kind == "edit":
            path = _abs(use.file_path or "", use.cwd)
            if path.suffix not in LUAU_SUFFIXES:
                return _pass()
            change = apply_string_edits(use.file_path or "", read_text(path), use.edits)
            return _check_changes(use, [change], options)
        if use.kind == "patch":
            changes = apply_patch_envelope(use.envelope or "", use.cwd or Path.cwd())
            return _check_changes(use, changes, options)
        if use.kind == "mcp":
            return _check_mcp(use, options)
    except EditError as exc:
        if use.kind == "edit" and not _luau_in_project(use, options):
            return _pass()
        return Verdict(True, feedback=f"luaguard: this edit cannot be applied: {exc}")
    except (OSError, UnicodeError) as exc:
        return _pass(f"luaguard: cannot read the file to check ({exc}); not checked")
    return _pass()


def _luau_in_project(use: ToolUse, options: HookOptions) -> bool:
    if not use.file_path:
        return False
    p = _abs(use.file_path, use.cwd)
    root = _root_for(use, p, options)
    return p.suffix in LUAU_SUFFIXES and root is not None and _inside(p, root)


# -- answering -------------------------------------------------------------------------------
def respond(verdict: Verdict, agent: str = "claude", output: str = "text") -> HookResponse:
    """The hook's answer to ``verdict`` in ``agent``'s protocol (see the module docstring)."""
    note = verdict.note + "\n" if verdict.note else ""
    if agent == "cursor":
        if verdict.deny:
            body = {"permission": "deny", "user_message": "luaguard blocked this change: " + _first_line(verdict.feedback),
                    "agent_message": verdict.feedback}
        else:
            body = {"permission": "allow"}
        return HookResponse(0, json.dumps(body, ensure_ascii=False) + "\n", note)
    if agent == "copilot":
        if verdict.deny:
            body = {"permissionDecision": "deny", "permissionDecisionReason": verdict.feedback}
        else:
            body = {"additionalContext": verdict.warnings} if verdict.warnings else {}
        return HookResponse(0, json.dumps(body, ensure_ascii=False) + "\n", note)
    if output == "json":
        if verdict.deny:
            body = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": verdict.feedback}}
        elif verdict.warnings:
            body = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": verdict.warnings}}
        else:
            return HookResponse(0, "", note)
        return HookResponse(0, json.dumps(body, ensure_ascii=False) + "\n", note)
    if verdict.deny:
        return HookResponse(2, "", verdict.feedback.rstrip("\n") + "\n")
    return HookResponse(0, "", note)


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= 200 else line[:197] + "..."


def run_hook(data: bytes, options: HookOptions | None = None) -> HookResponse:
    """Read one payload from ``data`` and answer it.  Never raises and returns within about
    ``options.timeout`` seconds: malformed input, internal errors and time-outs pass with a
    note on stderr."""
    options = options or HookOptions()
    if options.agent not in AGENTS:
        return HookResponse(0, "", f"luaguard hook: unknown agent {options.agent!r} (known: {', '.join(AGENTS)}); not checked\n")
    try:
        payload = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return respond(_pass(f"luaguard hook: stdin is not UTF-8 ({exc.reason} at byte {exc.start}); not checked"),
                       options.agent, options.output)
    except json.JSONDecodeError as exc:
        return respond(_pass(f"luaguard hook: stdin is not a JSON payload (line {exc.lineno}, column {exc.colno}: "
                             f"{exc.msg}); not checked"), options.agent, options.output)
    except RecursionError:
        return respond(_pass("luaguard hook: stdin JSON is nested too deeply; not checked"), options.agent, options.output)
    try:
        use = parse_payload(payload, options.agent)
    except PayloadError as exc:
        return respond(_pass(f"luaguard hook: {exc}; not checked"), options.agent, options.output)
    box: list[Verdict] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            box.append(evaluate(use, options))
        except BaseException as exc:  # a bug must not block the agent
            errors.append(exc)

    t = threading.Thread(target=work, name="luaguard-hook", daemon=True)
    t.start()
    t.join(options.timeout)
    if t.is_alive():
        verdict = _pass(f"luaguard hook: no answer within {options.timeout:g} s; not checked")
    elif errors:
        verdict = _pass(f"luaguard hook: internal error ({errors[0]!r}); not checked")
    else:
        verdict = box[0]
    return respond(verdict, options.agent, options.output)
