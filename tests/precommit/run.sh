#!/usr/bin/env bash
# pre-commit CI tier (not in .ci/run: pre-commit pip-installs luaguard and its dependencies
# from PyPI into its own environment, about a minute the first time):
#
#   tests/precommit/run.sh
#
#   1. a venv at $LUAGUARD_PRECOMMIT_CACHE/venv (default ~/.cache/luaguard/precommit) with
#      pre-commit 4.7.0 and pytest
#   2. tests/precommit/check_precommit.py: this checkout's files (committed or not) become a
#      git repository at a fixed path with a reproducible commit, so pre-commit's environment
#      is reused while the sources do not change; a temporary game repository uses its
#      .pre-commit-hooks.yaml: `luaguard` on staged files, `pre-commit run --all-files`,
#      `luaguard-fix` (the file is fixed, the hook reports it modified files); and the README's
#      `repo: local` hook (`language: system`) with luaguard installed in the venv (editable)
# Needs git and network access to PyPI.  Exit status: pytest's.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export LUAGUARD_PRECOMMIT_CACHE="${LUAGUARD_PRECOMMIT_CACHE:-$HOME/.cache/luaguard/precommit}"
VENV="$LUAGUARD_PRECOMMIT_CACHE/venv"
mkdir -p "$LUAGUARD_PRECOMMIT_CACHE"
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q 'pre-commit==4.7.0' 'pytest>=8'
"$VENV/bin/pip" install -q -e "$REPO"
export PATH="$VENV/bin:$PATH"
cd "$REPO"
timeout 900 "$VENV/bin/python" -m pytest -q -s -p no:cacheprovider -W ignore::pytest.PytestConfigWarning "$REPO/tests/precommit/check_precommit.py" "$@"
