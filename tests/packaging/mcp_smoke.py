"""``luaguard mcp`` from an installed wheel with the mcp extra answers MCP's ``initialize``
and lists its tools (run by ``tests/packaging/run.sh --extras``)."""

import json
import subprocess

p = subprocess.Popen(["luaguard", "mcp", "--project", "samples/place"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     text=True)


def call(msg: dict) -> dict:
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()
    while True:
        got = json.loads(p.stdout.readline())
        if got.get("id") == msg.get("id"):
            return got


init = call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "smoke", "version": "0"}}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
tools = call({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
names = sorted(t["name"] for t in tools["result"]["tools"])
p.stdin.close()
p.wait(timeout=20)
assert init["result"]["serverInfo"]["name"], init
assert "check_luau" in names, names
print("mcp: initialize answered, tools:", ", ".join(names))
