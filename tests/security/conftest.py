"""The hostile-repository suite (issue 41): every case is a repository or an input an attacker
controls, and each test shows what luaguard does with it.  Helpers shared by the suite live in
:mod:`hostile`; the modules of ``tests/`` (``raw_lsp``, ``endpoint_standin`` ...) are importable."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
