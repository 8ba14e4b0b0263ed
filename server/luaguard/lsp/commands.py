"""``workspace/executeCommand``: a small registry of server commands.

Add a command with the :func:`command` decorator in any feature module (imported before
:func:`register` runs, i.e. listed before ``commands`` in
:data:`~luaguard.lsp.server.FEATURE_MODULES`, or in this module)::

    @command("luaguard.validateToolCall")
    async def validate(server, *args):
        ...

Handlers receive the :class:`~luaguard.lsp.server.LuaguardServer` and the command's
``arguments`` (JSON values), may be plain or ``async``, and return a JSON-serialisable
value.  An exception becomes a JSON-RPC error response and a log entry; the server keeps
running.
"""

from __future__ import annotations

import inspect
import traceback
from typing import Any, Callable

#: Command name -> handler(server, *arguments).
COMMANDS: dict[str, Callable[..., Any]] = {}


def command(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the handler of command ``name`` (replacing an earlier one)."""

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        COMMANDS[name] = fn
        return fn

    return decorator


@command("luaguard.stats")
async def stats(server, *args: Any) -> dict:
    """``{"rules": {rule_id: count}, "files": n, "toolcalls": {...}}``: findings by rule
    over every lint and validation in this session, the number of distinct files
    linted, and tool-call counts (see :func:`luaguard.toolcalls.api.stats`)."""
    from ..toolcalls import api

    result = server.host.stats()
    toolcalls = await server.host.engine_worker.run(lambda: api.stats(server.host.engine)["toolcalls"])
    result["toolcalls"] = toolcalls
    return result


@command("luaguard.validateToolCall")
async def validate_tool_call(server, payload: Any = None, *args: Any) -> list:
    """Validate one call, an array, JSONL, an OpenAI message or a plan (a JSON string or
    the parsed value); returns :func:`luaguard.toolcalls.api.validate_calls`'s list."""
    from ..toolcalls import api

    host = server.host
    await host.wait_ready(30)
    return await host.engine_worker.run(api.validate_calls, host.engine, payload)


@command("luaguard.validatePatch")
async def validate_patch(server, uri: Any = None, content: Any = None, diff: Any = None, *args: Any) -> dict:
    """Validate an AI patch for ``uri``: full new ``content`` or a unified ``diff``
    (patch mode), under the projects that map the file; returns
    :func:`luaguard.toolcalls.api.validate_patch`'s dict."""
    from ..toolcalls import api

    if isinstance(uri, dict):  # a single object argument: {"uri", "content", "diff"}
        uri, content, diff = uri.get("uri"), uri.get("content"), uri.get("diff")
    for name, value, what in (("uri", uri, "a file URI or a project path"), ("content", content, "the file's new text"),
                              ("diff", diff, "a unified diff")):
        if value is not None and not isinstance(value, str):
            raise bad_arguments(f"luaguard.validatePatch: '{name}' must be a string ({what}) or null, "
                                f"got {type(value).__name__}")
    host = server.host
    await host.wait_ready(30)
    return await host.engine_worker.run(api.validate_patch, host.projects, uri, content, diff)


def bad_arguments(message: str) -> Exception:
    """The one-line ``InvalidParams`` (-32602) error a command answers bad arguments with."""
    from pygls.exceptions import JsonRpcInvalidParams

    return JsonRpcInvalidParams(message)


def _wrap(name: str, fn: Callable[..., Any]):
    from pygls.exceptions import JsonRpcException

    async def handler(ls, *args):
        try:
            result = fn(ls, *args)
            if inspect.isawaitable(result):
                result = await result
            return result
        except JsonRpcException:
            raise  # an answer (bad arguments), not a failure
        except Exception:
            ls.log_error(f"command {name} failed", traceback.format_exc())
            raise

    return handler


def register(server) -> None:
    """Register every command in :data:`COMMANDS` with ``server`` (before ``initialize``,
    so they are advertised in ``executeCommandProvider``)."""
    for name, fn in COMMANDS.items():
        server.command(name)(_wrap(name, fn))
