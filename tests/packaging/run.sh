#!/usr/bin/env bash
# Packaging CI tier (not in .ci/run: it pip-installs build, twine and luaguard's dependencies
# from PyPI into fresh virtual environments, about a minute with a warm pip cache):
#
#   tests/packaging/run.sh [--extras]
#
#   1. a venv at $LUAGUARD_PACKAGING_VENV (default ~/.cache/luaguard/packaging/venv) with
#      build and twine; `python -m build` makes the sdist and the wheel of this checkout
#      (committed or not) in a temporary folder
#   2. `twine check --strict` on both (the metadata and README PyPI would show)
#   3. each of them installed into its own clean venv (no -e, no access to this checkout: the
#      smoke test runs from an empty folder) and tests/packaging/smoke.sh run there: the version
#      is the one of server/luaguard/__init__.py, the data files and the compiled mask walk are
#      installed, `luaguard check` finds the sample patches' hallucinations with the exit
#      status and output the README shows, `luaguard validate` and `luaguard index` answer
#   4. with --extras: the wheel's mcp extra too (`luaguard mcp` starts and answers initialize)
# Needs network access to PyPI.  Exit status: 0 when every step passed.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${LUAGUARD_PACKAGING_CACHE:-$HOME/.cache/luaguard/packaging}"
VENV="${LUAGUARD_PACKAGING_VENV:-$CACHE/venv}"
mkdir -p "$CACHE"
# pip, quiet (a machine's pip configuration may warn about each missing local index)
pipq() { "$@" 2>&1 | { grep -v "^WARNING: Location '" || true; }; }
[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
pipq "$VENV/bin/pip" install -q 'build==1.6.1' 'twine==7.0.0'
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# this checkout's files as a clone would have them (what would be pushed), so nothing
# ignored (a .venv, build/) leaks into the sdist
(cd "$REPO" && git ls-files -z --cached --others --exclude-standard) | while IFS= read -r -d '' rel; do
  if [[ -f "$REPO/$rel" ]]; then mkdir -p "$WORK/src/$(dirname "$rel")"; cp -p "$REPO/$rel" "$WORK/src/$rel"; fi
done
echo "== python -m build"
"$VENV/bin/python" -m build --outdir "$WORK/dist" "$WORK/src" > "$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; exit 1; }
grep -E '^Successfully built' "$WORK/build.log"
echo "== twine check --strict"
"$VENV/bin/twine" check --strict "$WORK"/dist/*
VERSION="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$REPO/server/luaguard/__init__.py")"
for kind in wheel sdist; do
  if [[ $kind == wheel ]]; then dist=$(ls "$WORK"/dist/*.whl); else dist=$(ls "$WORK"/dist/*.tar.gz); fi
  echo "== $kind: $(basename "$dist") in a clean venv"
  python3 -m venv "$WORK/venv-$kind"
  pipq "$WORK/venv-$kind/bin/pip" install -q "$dist"
  mkdir -p "$WORK/run-$kind"
  cp -r "$REPO/samples" "$WORK/run-$kind/samples"
  (cd "$WORK/run-$kind" && PATH="$WORK/venv-$kind/bin:$PATH" bash "$REPO/tests/packaging/smoke.sh" "$VERSION")
done
if [[ "${1:-}" == "--extras" ]]; then
  echo "== the wheel's mcp extra"
  wheel=$(ls "$WORK"/dist/*.whl)
  pipq "$WORK/venv-wheel/bin/pip" install -q "$wheel[mcp]"
  (cd "$WORK/run-wheel" && PATH="$WORK/venv-wheel/bin:$PATH" python "$REPO/tests/packaging/mcp_smoke.py")
fi
echo "packaging: all passed"
