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
many bytes of JSON.  Framing errors are reported (a warning on stderr, which editors show in
the server's output) and the stream is resynchronised at the next ``Content-Length`` header
instead of swallowing what follows: a line that is not a header is skipped (or read from the
``Content-Length:`` inside it - what a body shorter than its ``Content-Length`` leaves
before the next header); a header block without a numeric ``Content-Length`` is skipped; a
body that runs into the next message's header (a ``Content-Length`` too large) is cut at
that header - the JSON before it is still handled and the rest is read again as the next
message.  A body that is not JSON is answered with ``Parse error`` (-32700, id ``null``).
Header lines are bounded (:data:`MAX_HEADER_LINE`), bodies too (:data:`MAX_BODY_BYTES`).
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


class BoundedStdin:
    """A binary stream for the reader thread: ``readline`` returns at most
    :data:`MAX_HEADER_LINE` + 1 bytes (a line without an end is not read whole into memory),
    and bytes given back with :meth:`unread` are read again first."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self._back = b""

    def unread(self, data: bytes) -> None:
        self._back = data + self._back

    def readline(self) -> bytes:
        if self._back:
            i = self._back.find(b"\n", 0, MAX_HEADER_LINE + 1)
            if i >= 0 or len(self._back) > MAX_HEADER_LINE:
                cut = i + 1 if i >= 0 else MAX_HEADER_LINE + 1
                line, self._back = self._back[:cut], self._back[cut:]
                return line
            head, self._back = self._back, b""
            return head + self.stream.readline(MAX_HEADER_LINE + 1 - len(head))
        return self.stream.readline(MAX_HEADER_LINE + 1)

    def read(self, n: int) -> bytes:
        if self._back:
            head, self._back = self._back[:n], self._back[n:]
            return head + (self.stream.read(n - len(head)) if n > len(head) else b"")
        return self.stream.read(n)


def _framing(what: str) -> None:
    logger.warning("LSP framing error: %s; resynchronising at the next Content-Length header", what)


async def read_messages(stop_event, reader, protocol: "LuaguardProtocol", stream: BoundedStdin | None = None) -> None:
    """Read framed messages from ``reader`` (``readline()`` / ``readexactly(n)`` awaitables
    over ``stream``, the :class:`BoundedStdin` that takes bytes back) and hand each to
    ``protocol`` until the end of the stream or ``stop_event`` (see the module docstring)."""
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
                i = line.find(b"Content-Length:")
                if i > 0 and stream is not None:
                    _framing(f"{i} bytes before a header ({line[:40]!r}): a body shorter than its Content-Length?")
                    stream.unread(line[i:])
                    length, headers = None, 0
                    continue
                _framing(f"a line that is not a header: {line[:60]!r}" + (" (too long)" if len(line) > MAX_HEADER_LINE else ""))
                length, headers = None, 0
                continue
            headers += 1
            if m.group(1).lower() == b"content-length":
                length = int(m.group(2)) if m.group(2).isdigit() else None
                if length is None:
                    _framing(f"Content-Length is not a number: {m.group(2)[:40]!r}")
        if length is None:
            _framing("a header block without a Content-Length")
            continue
        if length > MAX_BODY_BYTES:
            _framing(f"Content-Length {length:,} is over the {MAX_BODY_BYTES:,}-byte limit")
            continue
        body = await reader.readexactly(length)
        if len(body) < length:
            return  # the stream ended inside a message
        cut = body.find(b"Content-Length:")
        if cut >= 0 and stream is not None:
            _framing(f"a body of Content-Length {length} runs into the next message")
            stream.unread(body[cut:])
            body = body[:cut]
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except (ValueError, RecursionError):
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
