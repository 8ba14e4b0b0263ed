"""``textDocument/completion`` and ``textDocument/inlineCompletion``: guarded completions.

The text comes from :class:`luaguard.completion.generate.CompletionEngine` — a local causal LM
whose every decoding step is masked so it cannot spell an instance path that does not
exist, a placeholder or an unopened closer.  Generation is CPU-bound: it runs on its own
worker thread (never on the event loop, never on the linting worker), is bounded by
``completion.maxTokens`` and ``completion.timeoutMs``, and stops at the next step when the
client cancels the request.  A completion whose mean token probability is under
``completion.minConfidence`` is withheld (an empty answer).

The completion item replaces the identifier being typed (``game.ReplicatedStorage.Sh|``
becomes ``Shared...``) so clients filter it as usual; the inline item inserts at the
cursor.  A missing or broken model, or an install without the ``guard`` extra, is reported
once (``window/showMessage``) and answered with nothing; linting is unaffected.
"""

from __future__ import annotations

import asyncio
import re
import sys
import threading
import traceback
from typing import Any

from lsprotocol import types

from .convert import PositionEncoder
from .feature import Feature
from .heap import settle_heap
from .worker import Worker

_MATCHER = "luaguard.guard.matcher"
_WORD_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
TRIGGER_CHARACTERS = [".", ":", '"', "("]
_LABEL_MAX = 60


class CompletionFeature(Feature):
    """Owns the completion engine (re-created when the completion settings change)."""

    name = "completion"

    def __init__(self, server) -> None:
        super().__init__(server)
        self.worker = Worker("luaguard-completion")
        self._engine = None
        self._engine_settings = None

    # -- engine ------------------------------------------------------------------------
    def engine(self):
        """The :class:`~luaguard.completion.generate.CompletionEngine` for the current settings."""
        from ..completion.generate import CompletionEngine

        settings = self.server.host.settings.completion
        if self._engine is None or settings != self._engine_settings:
            if settings.endpoint:
                from ..completion.client import RemoteCompletionEngine

                self._engine = RemoteCompletionEngine(settings, self.server.host.engine.root)
            else:
                self._engine = CompletionEngine(settings)
            self._engine_settings = settings
        return self._engine

    def on_shutdown(self) -> None:
        self.worker.stop()

    # -- keeping the guard in step with the index -------------------------------------
    def on_engine_replaced(self) -> None:
        """A (re)index finished: when the model is already loaded (completions were used),
        fill the mask cache for the new tree in the background so the next completions are
        fast (the guard's name tables live on the new engine's snapshot; the old ones go
        with the old engine).  The model itself is loaded on the first completion request,
        not at start-up."""
        if _MATCHER not in sys.modules:
            return  # no guard was ever built (none was asked for, or the guard extra is missing)
        if not self.server.host.settings.completion.enabled or self._engine is None or not self._engine.is_loaded:
            return
        project = self.server.host.engine.project
        if project is None:
            return
        engine = self._engine
        contract = self.server.host.engine.guard_contract()

        def warm() -> None:
            try:
                engine.warm(contract, budget_s=3.0)
            except Exception:  # noqa: BLE001 - a missing model is reported on first use
                pass

        self.worker.submit(warm, priority=5)

    def _settle_heap(self) -> None:
        try:
            self.worker.submit(settle_heap, priority=9)
        except RuntimeError:  # the server shut down meanwhile
            pass

    # -- requests ----------------------------------------------------------------------
    async def generate(self, uri: str, position: types.Position):
        """Run one guarded completion for ``uri`` at ``position``; returns
        ``(completion, text, offset, encoder)`` or ``None`` (disabled, not a Luau file,
        model unavailable)."""
        from ..guard import missing_dependencies, missing_message

        server = self.server
        settings = server.host.settings.completion
        if not settings.enabled:
            return None
        missing = missing_dependencies() if not settings.endpoint else None
        if missing:
            server.show_once("completion-extra", f"luaguard: {missing_message(missing)}")
            return None
        from ..completion.requests import CompletionRequest
        from ..completion.loading import ModelLoadError
        doc = server.workspace.text_documents.get(uri)
        if doc is None:
            return None
        text = doc.source
        encoder = PositionEncoder(text, server.workspace.position_encoding)
        offset = encoder.offset(position)
        path = server.host.document_path(doc.path)
        engine = self.engine()
        host = server.host
        await host.wait_ready(10)
        cancel = threading.Event()
        request = CompletionRequest(text=text, offset=offset, path=str(path) if path is not None else None)
        was_loaded = engine.is_loaded
        try:
            # the linter's contract for this file, taken on this thread (the engine is not
            # thread-safe); the worker builds the guard from it
            contract = host.projects.guard_contract(path, text)  # (the first project that maps the file)
            result = await self.worker.run(lambda: engine.complete(request, contract, cancelled=cancel.is_set))
            if not was_loaded and engine.is_loaded:
                # the model and its libraries are long-lived too (350k objects: a full
                # collection took 190 ms, 0 once frozen): freeze them out of later
                # collections, a second after this answer has gone (see luaguard.lsp.heap)
                asyncio.get_running_loop().call_later(1.0, self._settle_heap)
        except asyncio.CancelledError:
            cancel.set()  # the generation stops at its next step
            raise
        except ModelLoadError as exc:
            server.show_once(f"completion-model:{exc}", f"luaguard: completions are unavailable: {exc}")
            return None
        except Exception as exc:
            from ..completion.client import EndpointError

            if not isinstance(exc, EndpointError):
                raise
            server.show_once(f"completion-endpoint:{exc}", f"luaguard: the completion server failed: {exc}")
            return None
        return result, text, offset, encoder

    async def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        got = await self.generate(params.text_document.uri, params.position)
        if got is None:
            return None
        result, text, offset, encoder = got
        if result.withheld or not result.text:
            return types.CompletionList(is_incomplete=False, items=[])
        line_start = text.rfind("\n", 0, offset) + 1
        word = _WORD_BEFORE.search(text, line_start, offset)
        word_start = word.start() if word else offset
        typed = text[word_start:offset]
        new_text = typed + result.text
        lines = encoder.lines
        rng = types.Range(encoder.position(lines.position(word_start)), encoder.position(lines.position(offset)))
        first = new_text.strip().splitlines()[0] if new_text.strip() else new_text
        label = first if len(first) <= _LABEL_MAX else first[: _LABEL_MAX - 1] + "…"
        source = _source(result, self.server.host.settings.completion)
        doc = f"```luau\n{new_text}\n```"
        if result.demonstration:
            from ..completion.loading import DEMO_NOTE

            doc += f"\n\nFrom {DEMO_NOTE}."
        item = types.CompletionItem(
            label=label,
            kind=types.CompletionItemKind.Text,
            detail=f"luaguard {source} ({'guarded' if result.guarded else 'unguarded'}), "
                   + (f"confidence {result.mean_prob:.2f}" if result.mean_prob is not None else "confidence unknown"),
            documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc),
            filter_text=new_text,
            sort_text="0",
            insert_text_format=types.InsertTextFormat.PlainText,
            text_edit=types.TextEdit(range=rng, new_text=new_text),
            data={"meanProb": result.mean_prob, "minProb": result.min_prob, "stopReason": result.stop_reason,
                  "model": result.model, "backend": result.backend, "demonstration": result.demonstration},
        )
        return types.CompletionList(is_incomplete=True, items=[item])

    async def inline_completion(self, params: Any):
        got = await self.generate(params.text_document.uri, params.position)
        if got is None:
            return None
        result, _text, _offset, _encoder = got
        if result.withheld or not result.text:
            return types.InlineCompletionList(items=[])
        pos = params.position
        return types.InlineCompletionList(
            items=[types.InlineCompletionItem(insert_text=result.text, range=types.Range(pos, pos))]
        )


def _source(result, settings) -> str:
    """Which model answered, for the item's detail: ``demonstration model`` for the shipped
    one (so nobody mistakes it for a code model), else the model's name, or the endpoint's."""
    if result.demonstration:
        return "demonstration model"
    if settings.endpoint:
        return f"endpoint {settings.endpoint_model or settings.endpoint}"
    return f"model {result.model or settings.model}"


def register(server) -> None:
    """Add the completion feature; answer ``textDocument/completion`` and, for clients
    that support it, ``textDocument/inlineCompletion``."""
    feature = server.add_feature(CompletionFeature(server))

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS))
    async def completion(ls, params: types.CompletionParams):
        try:
            return await feature.completion(params)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - feature boundary: answer, never crash
            ls.log_error("completion failed", traceback.format_exc())
            return None

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(ls, params: types.InlineCompletionParams):
        try:
            return await feature.inline_completion(params)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001
            ls.log_error("inlineCompletion failed", traceback.format_exc())
            return None
