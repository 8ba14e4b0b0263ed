"""A local HTTP stand-in for the Hugging Face Hub, for the ``luaguard model pull`` tests.

It answers the part of the Hub's HTTP API that ``huggingface_hub`` uses to download a model
(the routes are the Hub's public ones): repository info
(``GET /api/models/OWNER/NAME[/revision/REV]``: ``sha`` and ``siblings``), the file tree
(``GET /api/models/OWNER/NAME/tree/REV``) and the files themselves
(``HEAD``/``GET /OWNER/NAME/resolve/REV/PATH`` with ``X-Repo-Commit``, ``ETag`` and
``Content-Length``, and ``Range`` for resumed downloads); errors carry the Hub's
``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``).  Point
``HF_ENDPOINT`` (or ``huggingface_hub.constants.ENDPOINT``) at :attr:`HubStandIn.url`.

Every request is recorded (:attr:`HubStandIn.requests`: method, path, ``Range`` header) so
tests can say what was and was not downloaded.  :meth:`HubStandIn.stall` makes the next GET
of one file send part of it and then hang until released (to kill a download in the middle);
:meth:`HubStandIn.cut` makes it send part of the file and close the connection (a dropped
connection).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse


@dataclass
class Repo:
    """A model repository: ``revisions`` maps a branch or tag to ``(commit, {path: bytes})``."""

    revisions: dict[str, tuple[str, dict[str, bytes]]] = field(default_factory=dict)

    def add(self, ref: str, files: dict[str, bytes]) -> str:
        commit = hashlib.sha1(ref.encode() + b"".join(sorted(hashlib.sha1(p.encode() + d).digest()
                                                              for p, d in files.items()))).hexdigest()
        self.revisions[ref] = (commit, files)
        return commit

    def find(self, rev: str) -> tuple[str, dict[str, bytes]] | None:
        if rev in self.revisions:
            return self.revisions[rev]
        for commit, files in self.revisions.values():
            if commit == rev:
                return commit, files
        return None


class HubStandIn:
    """The server; use as a context manager (it runs on 127.0.0.1, an ephemeral port)."""

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str, str | None]] = []
        self._stall: dict[str, tuple[int, threading.Event, threading.Event]] = {}
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:  # noqa: N802
                stand_in._serve(self, head=True)

            def do_GET(self) -> None:  # noqa: N802
                stand_in._serve(self, head=False)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> HubStandIn:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        for _n, _sent, release in self._stall.values():
            release.set()
        self._server.shutdown()
        self._server.server_close()

    def add(self, repo_id: str, files: dict[str, bytes], ref: str = "main") -> str:
        """Publish ``files`` as ``ref`` of ``repo_id``; returns the commit hash."""
        return self.repos.setdefault(repo_id, Repo()).add(ref, files)

    def stall(self, path: str, after: int) -> tuple[threading.Event, threading.Event]:
        """The next GET of a file named ``path`` sends ``after`` bytes then waits: returns
        ``(sent, release)`` events (``sent`` is set once the bytes are out)."""
        sent, release = threading.Event(), threading.Event()
        self._stall[path] = (after, sent, release)
        return sent, release

    def cut(self, path: str, after: int) -> None:
        """The next GET of a file named ``path`` sends ``after`` bytes, then closes the connection."""
        release = threading.Event()
        release.set()
        self._stall[path] = (after, threading.Event(), release)

    def fetched(self, path: str) -> list[str | None]:
        """The ``Range`` headers of the GETs of file ``path`` (``None``: the whole file)."""
        return [rng for m, p, rng in self.requests if m == "GET" and "/resolve/" in p and p.endswith("/" + path)]

    # -------------------------------------------------------------------------------- routes
    def _serve(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        url = urlparse(h.path)
        path = unquote(url.path)
        with self._lock:
            self.requests.append(("HEAD" if head else "GET", path, h.headers.get("Range")))
        m = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/([^/]+))?", path)
        if m:
            return self._info(h, m.group(1), m.group(2) or "main")
        m = re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/([^/]+)(?:/.*)?", path)
        if m:
            return self._tree(h, m.group(1), m.group(2))
        m = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if m:
            return self._file(h, m.group(1), m.group(2), m.group(3), head=head)
        self._error(h, 404, "RepoNotFound", "no such route")

    def _error(self, h, status: int, code: str, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        h.send_response(status)
        h.send_header("X-Error-Code", code)
        h.send_header("X-Error-Message", message)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _json(self, h, data) -> None:
        body = json.dumps(data).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _revision(self, h, repo_id: str, rev: str):
        repo = self.repos.get(repo_id)
        if repo is None:
            self._error(h, 404, "RepoNotFound", f"Repository Not Found for url: {repo_id}")
            return None
        found = repo.find(rev)
        if found is None:
            self._error(h, 404, "RevisionNotFound", f"Invalid rev id: {rev}")
        return found

    def _info(self, h, repo_id: str, rev: str) -> None:
        found = self._revision(h, repo_id, rev)
        if found is None:
            return
        commit, files = found
        self._json(h, {"id": repo_id, "modelId": repo_id, "sha": commit, "private": False,
                       "siblings": [{"rfilename": p, "size": len(d), "blobId": _oid(d)} for p, d in sorted(files.items())]})

    def _tree(self, h, repo_id: str, rev: str) -> None:
        found = self._revision(h, repo_id, rev)
        if found is None:
            return
        _commit, files = found
        self._json(h, [{"type": "file", "path": p, "size": len(d), "oid": _oid(d)} for p, d in sorted(files.items())])

    def _file(self, h, repo_id: str, rev: str, name: str, *, head: bool) -> None:
        found = self._revision(h, repo_id, rev)
        if found is None:
            return
        commit, files = found
        if name not in files:
            return self._error(h, 404, "EntryNotFound", f"{name} does not exist on {rev}")
        data = files[name]
        start = 0
        rng = h.headers.get("Range")
        if rng and not head:
            m = re.fullmatch(r"bytes=(\d+)-", rng.strip())
            start = int(m.group(1)) if m else 0
        body = data[start:]
        h.send_response(206 if start else 200)
        h.send_header("X-Repo-Commit", commit)
        h.send_header("ETag", f'"{_oid(data)}"')
        h.send_header("Content-Length", str(len(body) if not head else len(data)))
        if start:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        h.end_headers()
        if head:
            return
        stall = self._stall.pop(name, None)
        if stall is None:
            h.wfile.write(body)
            return
        after, sent, release = stall
        h.wfile.write(body[:after])
        h.wfile.flush()
        sent.set()
        release.wait(60)
        h.close_connection = True  # the rest never comes: the client sees a cut transfer


def _oid(data: bytes) -> str:
    """Git's blob id of ``data`` (what the Hub reports as a file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
