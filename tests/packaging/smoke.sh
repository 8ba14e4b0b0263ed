#!/usr/bin/env bash
# Smoke test of an installed luaguard (run by tests/packaging/run.sh in a clean venv, from a
# folder holding a copy of samples/ and nothing else of the repository).
#   smoke.sh VERSION
set -uo pipefail
VERSION="$1"
fail() { echo "FAILED: $*"; exit 1; }
where=$(python -c 'import luaguard, os; print(os.path.dirname(luaguard.__file__))')
case "$where" in */site-packages/luaguard) ;; *) fail "luaguard imported from $where, not from the venv";; esac
python - "$VERSION" <<'PY' || fail "version or data files"
import importlib.metadata as m, sys, luaguard
from importlib import resources
want = sys.argv[1]
assert luaguard.__version__ == m.version("luaguard") == want, (luaguard.__version__, m.version("luaguard"), want)
data = resources.files("luaguard") / "data"
assert (data / "roblox_api.json").is_file() and (data / "model" / "model.safetensors").is_file()
assert (resources.files("luaguard") / "toolcalls" / "servers" / "robloxstudio-mcp.json").is_file()
print(f"version {want} (importlib.metadata and luaguard.__version__), data files installed")
PY
luaguard --version || fail "luaguard --version"

out=$(luaguard check samples/patches/combat_bad_path.luau --project samples/place --patch); rc=$?
echo "$out"
[[ $rc == 1 ]] || fail "check of a bad patch: exit $rc, expected 1"
grep -qF "samples/patches/combat_bad_path.luau:13:49: error[unknown_instance] 'Modulez' is not a child of game.ReplicatedStorage.Shared (Folder). Did you mean 'Modules'?" <<<"$out" || fail "check output"
grep -qF "Found 1 error in 1 of 1 file." <<<"$out" || fail "check summary"

out=$(luaguard check --project samples/place); rc=$?
[[ $rc == 0 ]] || fail "check of the clean sample place: exit $rc"; echo "$out" | tail -1

out=$(luaguard validate --project samples/place samples/readme/try1.json); rc=$?
[[ $rc == 1 ]] && grep -q '"code": "unknown_path"' <<<"$out" || fail "validate: exit $rc"
echo "validate: unknown_path found"

luaguard index --project samples/place | grep -q "ReplicatedStorage" || fail "index"
echo "index: the instance tree printed"

python - <<'PY' || fail "the language server"
import json, subprocess
p = subprocess.Popen(["luaguard", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(msg):
    body = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body); p.stdin.flush()
def read():
    n = 0
    while True:
        line = p.stdout.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    return json.loads(p.stdout.read(n))
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}})
while True:
    msg = read()
    if msg.get("id") == 1:
        break
assert msg["result"]["serverInfo"]["name"] == "luaguard", msg
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
send({"jsonrpc": "2.0", "method": "exit"})
p.wait(timeout=20)
print("serve: answered initialize as", msg["result"]["serverInfo"])
PY
echo "smoke test passed"
