"""The JSON-RPC protocol object of the luaguard server: pygls' ``LanguageServerProtocol``
with stricter message handling.

pygls 2.1 turns incoming JSON into LSP types inside ``json.loads``' ``object_hook``, so:

* a request whose params do not fit its type (``textDocument/hover`` without a
  ``textDocument``) raises inside ``json.loads``; pygls logs it and never answers, and
  the client waits for ever (JSON-RPC 2.0 asks for an ``Invalid params`` error, -32602);
* a request without ``"jsonrpc": "2.0"`` is not answered either (``Invalid Request``,
  -32600, is due);
* the hook runs for *every* JSON object, so an object nested in a message that happens to
  carry a ``"jsonrpc"`` key (an MCP ``tools/call`` request passed as a command argument)
  is turned into a JSON-RPC message object instead of staying a plain mapping.

Here the hook leaves every object a plain ``dict`` and :meth:`handle_message` structures
the whole message once, answering the requests it cannot read with the JSON-RPC error
they call for.  Found by ``tests/test_lsp_stress.py``.
"""

from __future__ import annotations

import logging
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidRequest
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

logger = logging.getLogger(__name__)


def _reply_id(message: dict) -> int | str | None:
    """The id to answer ``message`` with (JSON-RPC allows numbers and strings)."""
    rid = message.get("id")
    return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None


class LuaguardProtocol(LanguageServerProtocol):
    """``LanguageServerProtocol`` that answers malformed requests (see module doc)."""

    def structure_message(self, data: dict[str, Any]):
        """The ``json.loads`` object hook: keep every object a plain mapping (the whole
        message is structured in :meth:`handle_message`)."""
        return data

    def handle_message(self, message: Any) -> None:
        """Structure one whole incoming message and dispatch it.

        Anything that is not a JSON object is logged and dropped (nothing can be
        answered without an id).  A request that cannot be structured gets an error
        response: ``Invalid Request`` without ``"jsonrpc": "2.0"``, else the error pygls
        raised (``Invalid params`` for params of the wrong shape).
        """
        if not isinstance(message, dict):
            if hasattr(message, "jsonrpc"):  # already structured (a caller other than the reader)
                super().handle_message(message)
            else:
                logger.warning("ignoring a message that is not a JSON object: %.200r", message)
            return
        is_request = "method" in message and "id" in message
        if message.get("jsonrpc") != JsonRPCProtocol.VERSION:
            logger.warning("ignoring a message without \"jsonrpc\": \"2.0\": %.200r", message)
            if is_request:
                self._send_response(_reply_id(message), None,
                                    JsonRpcInvalidRequest('the message lacks "jsonrpc": "2.0"').to_response_error())
            return
        try:
            structured = LanguageServerProtocol.structure_message(self, message)
        except JsonRpcException as exc:
            if is_request:
                self._send_response(_reply_id(message), None, exc.to_response_error())
            return
        except Exception:  # noqa: BLE001 - never let one message stop the reader
            logger.exception("cannot read message %.200r", message)
            if is_request:
                self._send_response(_reply_id(message), None, JsonRpcInternalError().to_response_error())
            return
        super().handle_message(structured)
