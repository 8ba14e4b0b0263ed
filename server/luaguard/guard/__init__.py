"""Guarded decoding: the matcher, its mask engine and the completion loop.

Everything here needs the ``guard`` extra (``pip install 'luaguard[guard]'``: numpy, torch,
transformers, safetensors, tokenizers); the linter, the CLI's other commands and the
language server's other features do not.  :func:`missing_dependencies` says, without
importing them, which of those modules are not installed, so front ends can report it
instead of failing on an import.
"""

from __future__ import annotations

import importlib.util

__all__ = ["GUARD_EXTRA", "missing_dependencies", "missing_message"]

#: the modules of the ``guard`` extra (pyproject.toml), in the order they are reported
GUARD_EXTRA = ("numpy", "torch", "transformers", "safetensors", "tokenizers")


def missing_dependencies() -> list[str]:
    """The modules of :data:`GUARD_EXTRA` that cannot be imported (not installed), found
    without importing any of them; ``[]`` when completions can run."""
    missing = []
    for name in GUARD_EXTRA:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a broken or half-removed install
            found = False
        if not found:
            missing.append(name)
    return missing


def missing_message(missing: list[str]) -> str:
    """The user-facing sentence for :func:`missing_dependencies`' result."""
    return (f"completions need the guard extra, which is not installed (missing: {', '.join(missing)}): "
            "pip install 'luaguard[guard]'")
