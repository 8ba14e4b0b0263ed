#!/usr/bin/env bash
# Agents CI tier: luaguard mcp-proxy in front of the real robloxstudio-mcp server (npm, pinned
# by tests/agents/package-lock.json) with a stand-in Studio plugin on its HTTP bridge.
#
#   tests/agents/run.sh
#
#   1. tests/agents: npm ci (robloxstudio-mcp 2.6.0 and its dependencies, from the lock file)
#   2. pytest tests/agents/test_studio_e2e.py: create-then-fill, a Studio-side error passed
#      through (the upstream started once), Studio disconnected (other calls not held up),
#      the upstream killed (restarted with backoff), the latency the proxy adds to a good call
#   3. the figures (one JSON line per scenario)
#
# Needs Node 20 + npm (the npm registry, for step 1) and a Python with luaguard installed
# with its mcp extra ($LUAGUARD_PYTHON, default .venv/bin/python of the checkout).  The
# upstream listens on a free port of 127.0.0.1 (and on 3002 if that is free, as it does for
# old plugins).  Exit status: non-zero if a step failed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${LUAGUARD_PYTHON:-$REPO/.venv/bin/python}"
RESULTS="${LUAGUARD_AGENT_RESULTS:-${TMPDIR:-/tmp}/luaguard-agents-results.jsonl}"
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

for tool in node npm timeout; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done
"$PY" -c 'import luaguard, mcp' || { echo "luaguard with the mcp extra is not installed in $PY (set LUAGUARD_PYTHON)" >&2; exit 2; }

T0=$(date +%s)
echo "==> npm ci (robloxstudio-mcp, pinned)"
cd "$REPO/tests/agents"
if [[ -f node_modules/.package-lock.json && node_modules/.package-lock.json -nt package-lock.json ]]; then
  echo "node_modules up to date with package-lock.json"
else
  npm ci --prefer-offline --loglevel=error
fi
node -e 'console.log("robloxstudio-mcp " + require("./node_modules/robloxstudio-mcp/package.json").version)'

echo "==> end-to-end: luaguard mcp-proxy + robloxstudio-mcp + stand-in Studio plugin"
cd "$REPO"
rm -f "$RESULTS"
LUAGUARD_AGENT_TESTS=required LUAGUARD_AGENT_RESULTS="$RESULTS" \
  timeout 600 "$PY" -m pytest -q -p no:cacheprovider tests/agents/test_studio_e2e.py

echo
echo "figures:"
cat "$RESULTS"
echo
echo "agents tier passed in $(( $(date +%s) - T0 ))s"
