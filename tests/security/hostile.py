"""Helpers of the hostile-repository suite: a small Rojo project with an outside folder beside
it, and running luaguard in a child process bounded in memory and time (so a test of an
unbounded read fails instead of exhausting the machine)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: address-space limit of the child processes (bytes): an unbounded read fails fast under it
MEMORY_LIMIT = 3 * 1024 ** 3
#: a token that must never come back in an answer when it only exists outside the project
SECRET = "AKIAHOSTILE7QX2SECRET"

PROJECT = {"name": "hostile", "tree": {"$className": "DataModel",
                                       "ReplicatedStorage": {"Shared": {"$path": "src/shared"}},
                                       "ServerScriptService": {"Server": {"$path": "src/server"}}}}
#: a file with one certain, safe fix (unknown_service: "Playerz" -> "Players")
FIXABLE = 'local Players = game:GetService("Playerz")\nprint(Players)\n'


def make_repo(base: Path) -> tuple[Path, Path]:
    """``base/ws`` (a project with ``src/shared`` and ``src/server``) and ``base/outside``
    (holding ``creds.luau``, whose text carries :data:`SECRET`)."""
    ws, outside = base / "ws", base / "outside"
    for d in (ws / "src" / "shared", ws / "src" / "server", outside):
        d.mkdir(parents=True, exist_ok=True)
    (ws / "default.project.json").write_text(json.dumps(PROJECT))
    (ws / "src" / "shared" / "Util.luau").write_text("return {}\n")
    (ws / "src" / "server" / "Main.server.luau").write_text("print('main')\n")
    # read as Luau, its words come back in findings ("'AKIA...' is not defined")
    (outside / "creds.luau").write_text(f"print({SECRET})\nroot:x:0:0:root:/root:/bin/bash\n")
    return ws, outside


def _limits() -> None:  # runs in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child luaguard: this one, with a private user config and cache
    directory unless ``extra`` names them."""
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(extra)
    return env


def run_luaguard(args: list[str], *, cwd: Path, input: bytes | str | None = None, timeout: float = 120,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -P -m luaguard.cli ARGS`` in ``cwd`` under :data:`MEMORY_LIMIT`; raises
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds (the child is killed)."""
    data = input.encode("utf-8", "surrogatepass") if isinstance(input, str) else input
    return subprocess.run([sys.executable, "-P", "-m", "luaguard.cli", *args], cwd=cwd, input=data,
                          capture_output=True, timeout=timeout, preexec_fn=_limits, env=env or child_env())


def popen_luaguard(args: list[str], *, cwd: Path, env: dict[str, str] | None = None, stderr=subprocess.PIPE
                   ) -> subprocess.Popen:
    """A long-running luaguard (a server) under :data:`MEMORY_LIMIT`, pipes on stdin/stdout."""
    return subprocess.Popen([sys.executable, "-P", "-m", "luaguard.cli", *args], cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr, preexec_fn=_limits, env=env or child_env())


def out_text(proc: subprocess.CompletedProcess) -> str:
    """stdout and stderr of a finished child, decoded."""
    return proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")


class JsonLines:
    """A JSON-RPC conversation over newline-delimited stdio (an MCP server or the proxy) with
    a child process; every wait is bounded (``TimeoutError``)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self._buf = b""

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def read(self, timeout: float = 60.0) -> dict:
        """The next message from the server."""
        import select
        import time

        end = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no message from the server")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError(f"the server ended (exit {self.proc.wait(10)})")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def answer_to(self, rid, timeout: float = 60.0) -> dict:
        """The response to request ``rid`` (notifications and other responses skipped)."""
        while True:
            msg = self.read(timeout)
            if msg.get("id") == rid and ("result" in msg or "error" in msg):
                return msg

    def initialize(self) -> dict:
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "hostile", "version": "1"}}})
        got = self.answer_to(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return got

    def call(self, rid: int, tool: str, arguments: dict, timeout: float = 60.0) -> dict:
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        return self.answer_to(rid, timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        for s in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if s is not None:
                s.close()
