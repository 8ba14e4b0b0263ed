"""``textDocument/publishDiagnostics`` for open Luau documents.

* which documents: language id ``luau`` or ``lua``, or a ``.luau``/``.lua`` path;
* when: ``didOpen``/``didSave`` at once, ``didChange`` debounced (``debounceMs``, default
  150 ms after the last change; at least 1 s for buffers over a million characters), and every open document again after a settings change,
  a (re)index or files changing on disk;
* where: on the engine worker (:class:`~luaguard.lsp.host.EngineHost`), never on the
  event loop;
* staleness: each document has a sequence number bumped by every event that needs a new
  lint; a result is published only if no newer event arrived meanwhile, with the
  document version it was computed for;
* before the first index is ready, a lint waits up to :data:`INDEX_WAIT_SECONDS` for it,
  then runs without project checks (the index swap re-lints everything);
* ``didClose`` clears the document's diagnostics.

Exceptions inside the engine are logged (``window/logMessage``) and whatever the working
checks found is still published.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from lsprotocol import types
from pygls.uris import to_fs_path

from ..engine import LUAU_SUFFIXES
from .debounce import Debouncer
from .feature import Feature
from .host import LARGE_DOCUMENT

LANGUAGE_IDS = frozenset({"luau", "lua"})

#: How long a lint waits for the first project index before running without it.
INDEX_WAIT_SECONDS = 1.0

#: Debounce for documents over :data:`~luaguard.lsp.host.LARGE_DOCUMENT` characters
#: (a lint of a multi-megabyte buffer takes seconds).
LARGE_DEBOUNCE_SECONDS = 1.0


def is_luau_document(uri: str, language_id: str | None) -> bool:
    """Whether luaguard lints a document with this URI and language id."""
    if language_id and language_id.lower() in LANGUAGE_IDS:
        return True
    path = uri.split("?", 1)[0].split("#", 1)[0].lower()
    return path.endswith(LUAU_SUFFIXES)


@dataclass
class DocumentState:
    """Bookkeeping of one open document: ``seq`` grows with every event that calls for
    a new lint; ``published_seq`` is the sequence number of the last publication."""

    uri: str
    seq: int = 0
    published_seq: int = -1


class DiagnosticsFeature(Feature):
    """Lints open documents and publishes their diagnostics; see the module docstring."""

    name = "diagnostics"

    def __init__(self, server) -> None:
        super().__init__(server)
        self.documents: dict[str, DocumentState] = {}
        self.debouncer = Debouncer(on_error=self._debounce_error)

    # -- document events ---------------------------------------------------------------
    def on_did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        if not is_luau_document(doc.uri, doc.language_id):
            return
        self.documents[doc.uri] = DocumentState(doc.uri)
        self.request(doc.uri, 0.0)

    def on_did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in self.documents:
            delay = self.debounce_seconds
            if len(self.server.workspace.get_text_document(uri).source) > LARGE_DOCUMENT:
                delay = max(delay, LARGE_DEBOUNCE_SECONDS)
            self.request(uri, delay)

    def on_did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in self.documents:
            self.request(uri, 0.0)

    async def on_did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        state = self.documents.pop(uri, None)
        if state is None:
            return
        self.debouncer.cancel(uri)
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        await self.server.host.forget(self._path(uri))

    # -- server events -----------------------------------------------------------------
    def on_settings_changed(self) -> None:
        self.relint_all()

    def on_engine_replaced(self) -> None:
        self.relint_all()

    def on_files_changed(self) -> None:
        self.relint_all()

    def on_shutdown(self) -> None:
        self.debouncer.cancel_all()

    # -- linting -----------------------------------------------------------------------
    @property
    def debounce_seconds(self) -> float:
        """The ``debounceMs`` setting in seconds."""
        lsp = self.server.lsp_settings
        return (getattr(lsp, "debounce_ms", 150) or 0) / 1000.0

    def relint_all(self) -> None:
        """Lint every open document again, now."""
        for uri in list(self.documents):
            self.request(uri, 0.0)

    def request(self, uri: str, delay: float) -> None:
        """Ask for a lint of ``uri`` after ``delay`` seconds (replacing a pending one)."""
        state = self.documents.get(uri)
        if state is None:
            return
        state.seq += 1
        seq = state.seq
        self.debouncer.schedule(uri, delay, lambda: self.lint(uri, seq))

    def _path(self, uri: str):
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        return self.server.host.document_path(fs_path)

    async def lint(self, uri: str, seq: int) -> None:
        """Lint the current text of ``uri`` and publish, unless superseded."""
        server = self.server
        host = server.host
        state = self.documents.get(uri)
        if state is None or state.seq != seq:
            return

        def stale() -> bool:
            return self.documents.get(uri) is not state or state.seq != seq

        if not host.ready_event().is_set():
            await host.wait_ready(INDEX_WAIT_SECONDS)
            if stale():
                return
        doc = server.workspace.get_text_document(uri)
        text, version = doc.source, doc.version
        path = self._path(uri)
        encoding = server.workspace.position_encoding
        try:
            result = await host.lint(path, text, encoding, version, stale)
        except Exception:  # noqa: BLE001 - feature boundary
            server.log_error(f"linting {uri} failed", traceback.format_exc())
            return
        if result is None or stale():
            return
        for error in result.errors:
            server.log_error(f"a check failed on {uri}", error)
        state.published_seq = seq
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=result.diagnostics, version=version)
        )

    def _debounce_error(self, exc: BaseException) -> None:
        self.server.log_error("a scheduled lint failed", "".join(traceback.format_exception(exc)))


def register(server) -> None:
    """Add the diagnostics feature (it works through the server's document hooks)."""
    server.add_feature(DiagnosticsFeature(server))
