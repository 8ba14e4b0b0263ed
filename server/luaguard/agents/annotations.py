"""The role annotations luaguard ships for Roblox MCP servers (``toolcalls/servers/*.json``:
MCP ``tools/list`` shapes whose properties carry ``x-luaguard`` roles, see
:mod:`luaguard.toolcalls.schemas`).

Roblox/studio-rust-mcp-server: ``run_code`` and ``run_script_in_play_mode`` (Luau linted as
code).  boshyxd/robloxstudio-mcp: ``create_object`` (class, parent, name),
``set_property`` (instance, property, value), ``set_properties`` (instance),
``execute_luau`` (code), ``set_script_source`` (script, source), ``edit_script_lines`` /
``insert_script_lines`` / ``delete_script_lines`` (the script's path) and the rest against
their schemas only.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Iterable

SERVERS_DIR = Path(__file__).resolve().parent.parent / "toolcalls" / "servers"


def shipped_files() -> tuple[Path, ...]:
    """The annotation files luaguard ships (sorted)."""
    return tuple(sorted(SERVERS_DIR.glob("*.json")))


@lru_cache(maxsize=1)
def shipped_tool_names() -> frozenset[str]:
    """Names of the tools the shipped annotations define."""
    names: set[str] = set()
    for f in shipped_files():
        for t in json.loads(f.read_text(encoding="utf-8")).get("tools", ()):
            names.add(t["name"])
    return frozenset(names)


def known_tool(server: str | None, tool: str | None, extra_files: Iterable[str] = ()) -> tuple[str, ...] | None:
    """The tool files to validate a call of ``tool`` with, or ``None`` when luaguard knows
    no tool of that name (the call then passes untouched).  ``server`` is the agent's name
    for the MCP server (``mcp__<server>__<tool>``); the shipped annotations are matched by
    tool name, whatever the server is called.  ``extra_files``: the user's tool files
    (``--tools``), always included."""
    from ..toolcalls.schemas import BUILTIN_TOOLS

    if not tool:
        return None
    files = tuple(str(f) for f in shipped_files()) + tuple(extra_files)
    if tool in shipped_tool_names() or extra_files or tool in {t["name"] for t in BUILTIN_TOOLS}:
        return files
    return None
