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
they call for.  Found by ``tests/test_lsp_stress.py``.  A request after ``shutdown`` gets
``InvalidRequest`` (-32600), as the LSP specification asks (pygls drops it).

**Framing** (:func:`read_messages`, the server's reader in place of pygls'): each message is
a header block (``Name: value`` lines, ``Content-Length`` required, an empty line) and that
many bytes of JSON.  A body that is not JSON is answered with ``Parse error`` (-32700, id
``null``) and the stream goes on.  A stream that is out of step - a header line that is not
one, no or a non-numeric ``Content-Length``, a body that runs into the next message's header
(a ``Content-Length`` too large) - cannot be resynchronised reliably: the server says why on
stderr and stops with exit code 1 (:class:`FramingError`; editors restart a server that
exits) rather than go on swallowing messages.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

logger = logging.getLogger(__name__)

#: header lines longer than this (bytes) are a framing error
MAX_HEADER_LINE = 8192
#: message bodies longer than this (bytes) are a framing error
MAX_BODY_BYTES = 512 * 1024 * 1024
_HEADER = re.compile(rb"^([A-Za-z][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*?)[ \t]*\r?\n$")


class FramingError(Exception):
    """The LSP byte stream is out of step; ``str()`` says how."""


class BoundedStdin:
    """A binary stream whose ``readline`` returns at most :data:`MAX_HEADER_LINE` + 1 bytes
    (a header line without an end is not read whole into memory)."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def readline(self) -> bytes:
        return self.stream.readline(MAX_HEADER_LINE + 1)

    def read(self, n: int) -> bytes:
        return self.stream.read(n)


async def read_messages(stop_event, reader, protocol: "LuaguardProtocol") -> None:
    """Read framed messages from ``reader`` (``readline()`` / ``readexactly(n)`` awaitables)
    and hand each to ``protocol`` until the end of the stream or ``stop_event``.  Raises
    :class:`FramingError` (see the module docstring)."""
    while not stop_event.is_set():
        length: int | None = None
        headers = 0
        while True:
            line = await reader.readline()
            if not line:
                return
            if not line.strip():
                if headers:
                    break
                continue  # blank lines between messages
            m = _HEADER.match(line)
            if m is None:
                shown = line[:60].decode("utf-8", "replace")
                raise FramingError(f"expected a header line such as 'Content-Length: 123', got {shown!r}"
                                   + (" (too long)" if len(line) > MAX_HEADER_LINE else ""))
            headers += 1
            if m.group(1).lower() == b"content-length":
                if not m.group(2).isdigit():
                    raise FramingError(f"Content-Length is not a number: {m.group(2)[:40].decode('utf-8', 'replace')!r}")
                length = int(m.group(2))
        if length is None:
            raise FramingError("a message without a Content-Length header")
        if length > MAX_BODY_BYTES:
            raise FramingError(f"Content-Length {length:,} is over the {MAX_BODY_BYTES:,}-byte limit")
        body = await reader.readexactly(length)
        if len(body) < length:
            return  # the stream ended inside a message
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except (ValueError, RecursionError) as exc:
            if (isinstance(exc, json.JSONDecodeError) and exc.msg == "Extra data") or b"Content-Length" in body:
                raise FramingError(f"a body of Content-Length {length} runs into the next message") from None
            logger.warning("a message body that is not JSON: %.200r", body)
            protocol._send_response(None, None, JsonRpcParseError().to_response_error())
            continue
        try:
            protocol.handle_message(message)
        except Exception:  # noqa: BLE001 - never let one message stop the reader
            logger.exception("cannot handle message %.200r", message)


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
        if self._shutdown and is_request and message.get("method") != "exit":
            self._send_response(_reply_id(message), None,
                                JsonRpcInvalidRequest("the server is shutting down (shutdown was requested)")
                                .to_response_error())
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
