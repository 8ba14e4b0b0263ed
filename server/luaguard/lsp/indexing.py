"""Indexing the project in the background, with ``$/progress``.

After ``initialized`` (and whenever the project definition or ``luaguard.toml``
changes) a new engine is built on the indexer worker; the work is reported with
``window/workDoneProgress/create`` + ``$/progress`` begin/report/end when the client
supports it.  Lints keep running meanwhile; when the new engine is swapped in, the open
documents are linted again (``on_engine_replaced``).  A newer request supersedes an
index still running.

Messages: no project file -> one information message; a malformed project file -> one
warning naming file and line (per distinct error); index problems -> the log.
"""

from __future__ import annotations

import asyncio
import itertools
import traceback

from lsprotocol import types
from pygls.capabilities import get_capability

from .configuration import CLIENT_TIMEOUT
from .feature import Feature
from .host import IndexResult

_tokens = itertools.count(1)


class Progress:
    """One work-done progress, tolerant of clients that do not support or reject it.
    Methods must be called on the event loop."""

    def __init__(self, server, title: str) -> None:
        self.server = server
        self.title = title
        self.token: str | None = None

    async def begin(self, message: str) -> None:
        """Create the progress token and send ``begin`` (nothing when unsupported)."""
        caps = self.server.client_capabilities
        if not get_capability(caps, "window.work_done_progress", False):
            return
        token = f"luaguard-index-{next(_tokens)}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), CLIENT_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - no answer or an error: index without progress
            self.server.log(f"luaguard: progress not available: {exc!r}")
            return
        self.token = token
        self.server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=self.title, message=message, percentage=0, cancellable=False)
        )

    def report(self, message: str, percentage: int) -> None:
        """Send a ``report`` (``percentage`` 0-100)."""
        if self.token is not None:
            self.server.work_done_progress.report(token=self.token, value=types.WorkDoneProgressReport(message=message, percentage=percentage))

    def end(self, message: str) -> None:
        """Send ``end`` once."""
        if self.token is not None:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.token = None


class IndexingFeature(Feature):
    """Builds and swaps engines; see the module docstring."""

    name = "indexing"

    def __init__(self, server) -> None:
        super().__init__(server)
        self.generation = 0
        self.task: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()

    async def on_initialized(self) -> None:
        self.start("initial index")

    def on_reindex_requested(self, reason: str) -> None:
        self.start(reason)

    def start(self, reason: str) -> asyncio.Task:
        """Start a (re)index; an earlier one still running will not be swapped in."""
        self.generation += 1
        task = asyncio.ensure_future(self._run(self.generation, reason))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self.task = task
        return task

    async def _run(self, generation: int, reason: str) -> None:
        server = self.server
        host = server.host
        progress = Progress(server, "luaguard: indexing")
        try:
            root = host.root
            await progress.begin(f"{reason}: {root}" if root else reason)

            def report(message: str, percentage: int) -> None:
                server.call_soon(progress.report, message, percentage)

            result = await host.build(host.settings, report)
            if generation != self.generation:
                progress.end("superseded by a newer index")
                return
            await host.swap(result.projects)
            await host.settle()
            host.ready_event().set()
            progress.end(self._summary(result))
            self._announce(result)
            await server.dispatch("on_engine_replaced")
        except Exception:  # noqa: BLE001 - feature boundary
            server.log_error("indexing failed", traceback.format_exc())
            progress.end("failed")
            host.ready_event().set()

    @staticmethod
    def _summary(result: IndexResult) -> str:
        if result.no_project:
            return "no project file"
        if result.project_error or result.crash:
            return "project not loaded"
        return f"{result.files} files, {result.scripts} scripts"

    def _announce(self, result: IndexResult) -> None:
        server = self.server
        if result.no_project:
            server.show_once(
                f"no-project:{result.root}",
                f"luaguard: no Rojo project file (default.project.json, *.project.json or sourcemap.json) in {result.root}; "
                "instance paths are not checked. The other checks run normally.",
                types.MessageType.Info,
            )
        elif result.project_error:
            server.show_once(
                f"project-error:{result.project_error}",
                f"luaguard: cannot load the project: {result.project_error}. Instance paths are not checked until it is fixed; the other checks still run.",
                types.MessageType.Warning,
            )
        elif result.crash:
            server.log_error("indexing the project failed", result.crash)
            last = result.crash.strip().splitlines()[-1]
            server.show_once(
                f"index-crash:{last}",
                f"luaguard: indexing the project failed ({last}); instance paths are not checked. See the luaguard output for details.",
                types.MessageType.Warning,
            )
        else:
            server.log(f"luaguard: indexed {result.root}: {self._summary(result)}", types.MessageType.Info)
        for problem in result.problems:
            level = types.MessageType.Info if getattr(problem, "severity", "") == "info" else types.MessageType.Warning
            server.log_once(f"index-problem:{problem}", f"luaguard: {problem}", level)


def register(server) -> None:
    """Add the indexing feature (it starts after ``initialized``)."""
    server.add_feature(IndexingFeature(server))
