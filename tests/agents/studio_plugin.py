"""A stand-in for the Roblox Studio plugin of robloxstudio-mcp: an HTTP client of the server's
bridge (own code; the protocol read from robloxstudio-mcp 2.6.0's server and plugin sources).

Bridge protocol (the MCP server listens on ``127.0.0.1:$ROBLOX_STUDIO_PORT``):

* ``POST /ready {"instanceId", "role": "edit", "pluginReady": true, "timestamp"}`` registers a
  Studio instance (answer ``{"success": true, "assignedRole"}``);
* ``GET /poll?instanceId=...`` answers ``{"request": {"endpoint": "/api/create-object",
  "data": {...}} | null, "requestId", "mcpConnected"}`` (503 while the MCP side is not up);
* ``POST /response {"requestId", "response": {...}}`` answers a request;
  ``{"requestId", "error": "..."}`` fails it - the server turns that into the JSON-RPC error
  ``-32603 Tool execution failed: <error>``;
* ``POST /disconnect {"instanceId"}`` unregisters; requests then wait (30 s) for a plugin.

A request stays pending (and is handed out by every poll) until it is answered: the plugin
answers each request id once.

The plugin keeps a small DataModel (paths -> class, script sources), applies the requests it
understands and fails the rest the way Studio would ("Instance not found").  Everything it
receives is recorded in :attr:`StudioPlugin.received`.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any

SCRIPT_CLASSES = ("Script", "LocalScript", "ModuleScript")


@dataclass
class Received:
    endpoint: str
    data: dict
    error: str | None = None


@dataclass
class StudioPlugin:
    """``port``: the bridge's port; ``tree``: instance path -> class name (``game.X.Y``)."""

    port: int
    tree: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    instance_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._taken: set[str] = set()  # the bridge hands a request out until it is answered
        self.registrations = 0

    # -- HTTP ---------------------------------------------------------------------------------
    def _http(self, method: str, path: str, body: dict | None = None, timeout: float = 5.0) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    # -- connection ---------------------------------------------------------------------------
    def connect(self) -> None:
        """Start polling (registering with ``/ready`` first, and again whenever the server
        comes back after a failure)."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="studio-plugin", daemon=True)
        self._thread.start()

    def disconnect(self) -> None:
        """Stop polling and unregister (as Studio does when the plugin is switched off)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        try:
            self._http("POST", "/disconnect", {"instanceId": self.instance_id, "timestamp": time.time()})
        except OSError:
            pass

    def wait_registered(self, count: int = 1, timeout: float = 30.0) -> None:
        t0 = time.monotonic()
        while self.registrations < count:
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"the plugin did not register {count} time(s) within {timeout} s")
            time.sleep(0.05)

    def _loop(self) -> None:
        registered = False
        while not self._stop.is_set():
            try:
                if not registered:
                    status, _ = self._http("POST", "/ready", {"instanceId": self.instance_id, "role": "edit",
                                                              "pluginReady": True, "timestamp": time.time()})
                    registered = status == 200
                    if registered:
                        self.registrations += 1
                    continue
                status, body = self._http("GET", f"/poll?instanceId={self.instance_id}")
            except OSError:  # the server is gone (restarting): register again when it is back
                registered = False
                time.sleep(0.1)
                continue
            if status == 200 and isinstance(body, dict) and body.get("request") and body.get("requestId") not in self._taken:
                self._taken.add(body["requestId"])
                threading.Thread(target=self._answer, args=(body["requestId"], body["request"]), daemon=True).start()
            else:
                time.sleep(0.002)

    def _answer(self, request_id: str, request: dict) -> None:
        endpoint, data = request.get("endpoint", ""), request.get("data") or {}
        with self._lock:
            try:
                response, error = self.handle(endpoint, data), None
            except LookupError as exc:
                response, error = None, str(exc.args[0])
            self.received.append(Received(endpoint, data, error))
        body = {"requestId": request_id, "error": error} if error else {"requestId": request_id, "response": response}
        try:
            self._http("POST", "/response", body)
        except OSError:
            pass

    # -- the DataModel ------------------------------------------------------------------------
    def _need(self, path: str) -> str:
        if path not in self.tree:
            raise LookupError("Instance not found")
        return path

    def handle(self, endpoint: str, data: dict) -> dict:
        """Apply one request; raises ``LookupError(message)`` for a Studio-side failure."""
        if endpoint == "/api/create-object":
            return self._create(data.get("parent", ""), data.get("className", ""), data.get("name"))
        if endpoint in ("/api/mass-create-objects", "/api/mass-create-objects-with-properties"):
            return {"results": [self._create(o.get("parent", ""), o.get("className", ""), o.get("name"))
                                for o in data.get("objects", [])]}
        if endpoint == "/api/create-ui-tree":
            return self._tree(data.get("parentPath", ""), data.get("tree") or {})
        if endpoint == "/api/delete-object":
            path = self._need(data.get("instancePath", ""))
            for p in [p for p in self.tree if p == path or p.startswith(path + ".")]:
                del self.tree[p]
                self.sources.pop(p, None)
            return {"success": True, "instancePath": path}
        if endpoint == "/api/set-property":
            path = self._need(data.get("instancePath", ""))
            if data.get("propertyName") == "Name":
                new = path.rsplit(".", 1)[0] + "." + str(data.get("propertyValue"))
                for p in [p for p in self.tree if p == path or p.startswith(path + ".")]:
                    self.tree[new + p[len(path):]] = self.tree.pop(p)
                return {"success": True, "instancePath": new}
            return {"success": True, "instancePath": path}
        if endpoint == "/api/set-script-source":
            path = self._need(data.get("instancePath", ""))
            if self.tree[path] not in SCRIPT_CLASSES:
                return {"error": f"Instance is not a script-like object: {self.tree[path]}"}
            self.sources[path] = data.get("source", "")
            return {"success": True, "instancePath": path}
        if endpoint == "/api/get-script-source":
            path = self._need(data.get("instancePath", ""))
            src = self.sources.get(path, "")
            return {"instancePath": path, "className": self.tree[path], "source": src,
                    "lineCount": src.count("\n") + 1}
        if endpoint == "/api/place-info":
            return {"placeName": "Stand-in place", "instances": len(self.tree)}
        return {"error": f"Unknown endpoint: {endpoint}"}

    def _create(self, parent: str, cls: str, name: str | None) -> dict:
        if parent not in self.tree:
            raise LookupError(f"Parent instance not found: {parent}")
        path = f"{parent}.{name or cls}"
        self.tree[path] = cls
        return {"success": True, "className": cls, "parent": parent, "instancePath": path, "name": name or cls}

    def _tree(self, parent: str, node: dict) -> dict:
        made = self._create(parent, node.get("className", "Frame"), node.get("name"))
        for child in node.get("children") or []:
            self._tree(made["instancePath"], child)
        return made
