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
def stats(server, *args: Any) -> dict:
    """``{"rules": {rule_id: count}, "files": n}``: findings by rule over every lint in
    this session and the number of distinct files linted."""
    return server.host.stats()


def _wrap(name: str, fn: Callable[..., Any]):
    async def handler(ls, *args):
        try:
            result = fn(ls, *args)
            if inspect.isawaitable(result):
                result = await result
            return result
        except Exception:
            ls.log_error(f"command {name} failed", traceback.format_exc())
            raise

    return handler


def register(server) -> None:
    """Register every command in :data:`COMMANDS` with ``server`` (before ``initialize``,
    so they are advertised in ``executeCommandProvider``)."""
    for name, fn in COMMANDS.items():
        server.command(name)(_wrap(name, fn))
