"""A small LSP client over a real ``luaguard serve`` process (stdio, JSON-RPC with
``Content-Length`` framing), for the stress test and ``bench/scale.py``.

Unlike pytest-lsp's client it can send anything, garbage included, never validates what it
sends, and timestamps every message it receives (``time.perf_counter`` seconds), so
latency can be measured from the moment a notification is written.

Server-to-client requests are answered automatically: ``workspace/configuration`` with
:attr:`RawLspClient.settings` (one copy per requested item), everything else
(``client/registerCapability``, ``window/workDoneProgress/create`` ...) with ``null``.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER_COMMAND = [sys.executable, "-c", "import sys; from luaguard.cli import main; sys.exit(main(['serve']))"]


@dataclass
class Received:
    """One message from the server and when it arrived (``perf_counter`` seconds)."""

    at: float
    message: dict


@dataclass
class RawLspClient:
    """Runs the server and talks to it.  Use as a context manager (kills the process on
    exit if it is still running).  ``stderr_path`` collects the server's log."""

    cwd: Path
    stderr_path: Path
    command: list[str] = field(default_factory=lambda: list(SERVER_COMMAND))
    settings: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self.responses: dict[Any, Received] = {}
        self.notifications: list[Received] = []
        self.server_requests: list[Received] = []
        self.read_error: BaseException | None = None
        self._stderr = open(self.stderr_path, "wb")
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     cwd=str(self.cwd), env=env)
        self._reader = threading.Thread(target=self._read_loop, name="raw-lsp-reader", daemon=True)
        self._reader.start()

    # -- context manager -----------------------------------------------------------------
    def __enter__(self) -> "RawLspClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except Exception:  # noqa: BLE001
                pass
        self._stderr.close()

    # -- sending -------------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> float:
        """Write raw bytes to the server's stdin; returns the time after the write."""
        with self._lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return time.perf_counter()

    def send(self, message: Any) -> float:
        """Frame and send one JSON value (not checked: garbage is allowed)."""
        body = json.dumps(message, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
        return self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> float:
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return self.send(msg)

    def request(self, method: str, params: Any = None) -> int:
        """Send a request; returns its id (see :meth:`wait_response`)."""
        rid = next(self._ids)
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def next_id(self) -> int:
        return next(self._ids)

    def call(self, method: str, params: Any = None, timeout: float = 30.0) -> dict:
        """Request and wait for the response message."""
        return self.wait_response(self.request(method, params), timeout).message

    # -- receiving -----------------------------------------------------------------------
    def wait_response(self, rid: Any, timeout: float = 30.0) -> Received:
        return self.wait_for(lambda: self.responses.get(rid), timeout, f"the response to request {rid}")

    def wait_for(self, predicate, timeout: float = 30.0, what: str = "a condition"):
        """Wait until ``predicate()`` is truthy (re-checked on every message); return it."""
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate()
                if value:
                    return value
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
                if self.read_error is not None or (self.proc.poll() is not None and not self._reader.is_alive()):
                    raise RuntimeError(f"server ended (exit {self.proc.poll()}) while waiting for {what}")
                self._cond.wait(min(left, 0.5))

    def publications(self, uri: str) -> list[Received]:
        """Every ``textDocument/publishDiagnostics`` for ``uri``, in arrival order."""
        with self._cond:
            return [n for n in self.notifications
                    if n.message.get("method") == "textDocument/publishDiagnostics" and n.message["params"]["uri"] == uri]

    def progress_ended(self) -> bool:
        with self._cond:
            return any(n.message.get("method") == "$/progress" and (n.message.get("params") or {}).get("value", {}).get("kind") == "end"
                       for n in self.notifications)

    def _read_loop(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    continue
                body = out.read(length)
                at = time.perf_counter()
                message = json.loads(body)
                self._dispatch(Received(at, message))
        except BaseException as exc:  # noqa: BLE001 - reported to waiters
            self.read_error = exc
        finally:
            with self._cond:
                self._cond.notify_all()

    def _dispatch(self, rec: Received) -> None:
        msg = rec.message
        if "method" in msg and "id" in msg:
            with self._cond:
                self.server_requests.append(rec)
            self._answer(msg)
        elif "method" in msg:
            with self._cond:
                self.notifications.append(rec)
                self._cond.notify_all()
        else:
            with self._cond:
                self.responses[msg.get("id")] = rec
                self._cond.notify_all()

    def _answer(self, msg: dict) -> None:
        if msg["method"] == "workspace/configuration":
            items = (msg.get("params") or {}).get("items") or [{}]
            result: Any = [self.settings for _ in items]
        else:
            result = None
        try:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        except OSError:
            pass

    # -- conveniences --------------------------------------------------------------------
    def initialize(self, root: Path, init_options: Any = None, timeout: float = 60.0) -> dict:
        """``initialize`` + ``initialized`` for ``root``; waits for the first index."""
        result = self.call("initialize", {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "window": {"workDoneProgress": True},
                "workspace": {"configuration": True, "didChangeConfiguration": {"dynamicRegistration": True}},
                "textDocument": {"publishDiagnostics": {"versionSupport": True},
                                 "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}},
            },
            "initializationOptions": init_options,
        }, timeout)
        self.notify("initialized", {})
        self.wait_for(self.progress_ended, timeout, "the first index")
        return result

    def rss_kib(self) -> int | None:
        """The server's resident memory (KiB, from ``/proc``), or None where unavailable."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    def shutdown(self, timeout: float = 30.0) -> int | None:
        """``shutdown`` + ``exit``; returns the exit status (None if still running)."""
        self.call("shutdown", None, timeout)
        self.notify("exit")
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
