"""A stand-in for an OpenAI-compatible completion server (vLLM's ``/v1/completions`` and
``/v1/models``) on 127.0.0.1, for the tests of the endpoint client, ``luaguard complete`` and
the language server's endpoint completions."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Iterator


@dataclass
class StandInEndpoint:
    """What the stand-in answers and what it was sent.

    ``url``: the base URL (``http://127.0.0.1:PORT/v1``); ``answers``: ``(status, JSON body)``
    for the POSTs to come, in order (the last one is repeated once the others are used);
    ``models``: the body of ``GET /v1/models`` (``None``: 404); ``seen``: ``(path, body)`` of
    every request, ``body`` ``None`` for a GET; ``bodies``: the POSTed bodies alone."""

    url: str = ""
    answers: list[tuple[int, Any]] = field(default_factory=list)
    models: dict | None = None
    seen: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def bodies(self) -> list[Any]:
        return [body for _, body in self.seen if body is not None]

    def answer_with(self, *answers: tuple[int, Any]) -> None:
        """Replace the queued answers."""
        self.answers[:] = list(answers)


def completion_reply(text: str, logprobs: list[float] | None = None, **extra: Any) -> tuple[int, dict]:
    """A 200 answer with one choice of ``text`` (and its tokens' log-probabilities)."""
    choice: dict[str, Any] = {"text": text, **extra}
    if logprobs is not None:
        choice["logprobs"] = {"token_logprobs": logprobs}
    return 200, {"choices": [choice]}


@contextmanager
def completion_endpoint(*answers: tuple[int, Any]) -> Iterator[StandInEndpoint]:
    """Serve a :class:`StandInEndpoint` answering ``answers`` until the block ends."""
    state = StandInEndpoint(answers=list(answers))

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802
            state.seen.append((self.path, None))
            self._send(200 if state.models is not None else 404, state.models or {})

        def do_POST(self):  # noqa: N802
            state.seen.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            code, payload = state.answers.pop(0) if len(state.answers) > 1 else state.answers[0]
            self._send(code, payload)

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{srv.server_port}/v1"
    try:
        yield state
    finally:
        srv.shutdown()
        srv.server_close()
