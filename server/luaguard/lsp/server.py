"""The luaguard language server: creates the pygls server and fans events out to the
feature modules listed in :data:`FEATURE_MODULES` (one module per LSP feature, each
with ``register(server)``; see :mod:`luaguard.lsp.feature` for the hooks).

Run it with ``luaguard serve`` (stdio).  Adding a feature: write
``luaguard/lsp/<name>.py`` with ``register(server)`` and add ``<name>`` to
:data:`FEATURE_MODULES` (or :data:`OPTIONAL_MODULES` when it may be absent).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import logging
import sys
import traceback
from typing import Any, Iterable, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from . import documents
from .feature import Feature
from .host import EngineHost
from .protocol import LuaguardProtocol

logger = logging.getLogger(__name__)

#: Feature modules, in the order their hooks run.  ``configuration`` must come first
#: (the others read settings) and ``indexing`` before ``diagnostics``.
FEATURE_MODULES: tuple[str, ...] = (
    "configuration",
    "indexing",
    "diagnostics",
    "code_actions",
    "watched_files",
    "commands",
)

#: Feature modules loaded only when present (written by other parts of the project).
OPTIONAL_MODULES: tuple[str, ...] = ("completion",)

F = TypeVar("F", bound=Feature)


class LuaguardServer(LanguageServer):
    """pygls server with luaguard's shared state.

    ``host`` owns the engine (:class:`~luaguard.lsp.host.EngineHost`); ``features`` are
    the registered :class:`~luaguard.lsp.feature.Feature` objects; ``lsp_settings`` the
    server-only settings (set by the configuration feature).
    """

    def __init__(self) -> None:
        super().__init__(
            "luaguard",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=LuaguardProtocol,
        )
        self.host = EngineHost()
        self.features: list[Feature] = []
        self.lsp_settings: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.is_initialized = False
        self._shown: set[str] = set()
        self._logged: set[str] = set()
        self._queued: list[tuple[str, types.MessageType, str]] = []
        self._startup_problems: list[str] = []

    # -- features ----------------------------------------------------------------------
    def add_feature(self, feature: Feature) -> Feature:
        """Register ``feature`` for the hooks (see :mod:`luaguard.lsp.feature`)."""
        self.features.append(feature)
        return feature

    def get_feature(self, cls: type[F]) -> F | None:
        """The registered feature of class ``cls`` (or a subclass), or None."""
        for feature in self.features:
            if isinstance(feature, cls):
                return feature
        return None

    async def dispatch(self, hook: str, *args: Any) -> None:
        """Call ``hook(*args)`` on every feature defining it, in order, awaiting async
        hooks; exceptions are logged and do not stop the others."""
        for feature in list(self.features):
            method = getattr(feature, hook, None)
            if method is None:
                continue
            try:
                result = method(*args)
                if inspect.isawaitable(result):
                    await result
            except Exception:  # noqa: BLE001 - feature boundary
                self.log_error(f"{feature.name}.{hook} failed", traceback.format_exc())

    def dispatch_sync(self, hook: str, *args: Any) -> None:
        """Like :meth:`dispatch` for plain (non-async) hooks."""
        for feature in list(self.features):
            method = getattr(feature, hook, None)
            if method is None:
                continue
            try:
                method(*args)
            except Exception:  # noqa: BLE001
                self.log_error(f"{feature.name}.{hook} failed", traceback.format_exc())

    # -- messages to the user ----------------------------------------------------------
    def show_once(self, key: str, message: str, type: types.MessageType = types.MessageType.Warning) -> bool:
        """``window/showMessage`` unless a message with ``key`` was shown before in this
        session (jedi-language-server style: each distinct problem once).  Messages
        before ``initialized`` are queued.  Returns True when shown (or queued)."""
        if key in self._shown:
            return False
        self._shown.add(key)
        self._send("show", type, message)
        return True

    def log(self, message: str, type: types.MessageType = types.MessageType.Log) -> None:
        """``window/logMessage`` (the client's output panel)."""
        self._send("log", type, message)

    def log_once(self, key: str, message: str, type: types.MessageType = types.MessageType.Log) -> None:
        """:meth:`log` unless a message with ``key`` was logged before."""
        if key in self._logged:
            return
        self._logged.add(key)
        self.log(message, type)

    def log_error(self, what: str, details: str = "") -> None:
        """Log an internal error once per distinct (what, last traceback line)."""
        last = details.strip().splitlines()[-1] if details.strip() else ""
        self.log_once(f"error:{what}:{last}", f"luaguard: {what}\n{details}".rstrip(), types.MessageType.Error)
        logger.error("%s\n%s", what, details)

    def _send(self, kind: str, type: types.MessageType, message: str) -> None:
        if not self.is_initialized:
            self._queued.append((kind, type, message))
            return
        try:
            if kind == "show":
                self.window_show_message(types.ShowMessageParams(type=type, message=message))
            else:
                self.window_log_message(types.LogMessageParams(type=type, message=message))
        except Exception:  # noqa: BLE001 - never let a message break a feature
            logger.exception("could not send a message to the client")

    def flush_messages(self) -> None:
        """Send the messages queued before ``initialized``."""
        queued, self._queued = self._queued, []
        for kind, type, message in queued:
            self._send(kind, type, message)

    def call_soon(self, fn: Any, *args: Any) -> None:
        """Run ``fn(*args)`` on the event loop; safe from any thread."""
        loop = self.loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # loop closed during exit
            pass


def _register_lifecycle(server: LuaguardServer) -> None:
    @server.feature(types.INITIALIZE)
    def on_initialize(ls: LuaguardServer, params: types.InitializeParams) -> None:
        documents.install(ls)
        ls.dispatch_sync("on_initialize", params)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: LuaguardServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.is_initialized = True
        ls.flush_messages()
        for problem in ls._startup_problems:
            ls.show_once(problem, problem, types.MessageType.Error)
        await ls.dispatch("on_initialized")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: LuaguardServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.dispatch("on_did_open", params)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: LuaguardServer, params: types.DidChangeTextDocumentParams) -> None:
        await ls.dispatch("on_did_change", params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: LuaguardServer, params: types.DidSaveTextDocumentParams) -> None:
        await ls.dispatch("on_did_save", params)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: LuaguardServer, params: types.DidCloseTextDocumentParams) -> None:
        await ls.dispatch("on_did_close", params)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: LuaguardServer, params: Any) -> None:
        await ls.dispatch("on_shutdown")
        ls.host.stop()


def create_server(modules: Iterable[str] = FEATURE_MODULES, optional: Iterable[str] = OPTIONAL_MODULES) -> LuaguardServer:
    """A server with the given feature modules (names under ``luaguard.lsp``) registered.

    A missing optional module is skipped; one that fails to import is reported to the
    user after ``initialized`` and skipped (the rest of the server still works).
    """
    server = LuaguardServer()
    _register_lifecycle(server)
    for name in modules:
        importlib.import_module(f"{__package__}.{name}").register(server)
    for name in optional:
        full = f"{__package__}.{name}"
        if importlib.util.find_spec(full) is None:
            continue
        try:
            importlib.import_module(full).register(server)
        except Exception:  # noqa: BLE001
            server._startup_problems.append(f"luaguard: the {name} feature could not start: {traceback.format_exc().strip().splitlines()[-1]}")
            logger.exception("feature %s failed to load", name)
    return server


def run_stdio() -> int:
    """Serve LSP over stdin/stdout until the client sends ``exit``; returns the exit code."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="luaguard: %(levelname)s %(name)s: %(message)s")
    server = create_server()
    return serve_io(server, sys.stdin.buffer, sys.stdout.buffer)


def serve_io(server: LuaguardServer, stdin, stdout) -> int:
    """pygls' ``start_io`` with luaguard's reader (:func:`~luaguard.lsp.protocol.read_messages`:
    framing errors reported and resynchronised, bounded header lines and bodies)."""
    import threading

    from pygls.io_ import StdinAsyncReader, StdoutWriter

    from .protocol import BoundedStdin, read_messages

    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout))
    stream = BoundedStdin(stdin)
    reader = StdinAsyncReader(stream, server.thread_pool)
    try:
        asyncio.run(read_messages(server._stop_event, reader, server.protocol, stream))
    except BrokenPipeError:
        logger.error("the connection to the client is lost; the server stops")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
    return 0
