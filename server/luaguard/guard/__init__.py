"""Guarded decoding: the matcher, its mask engine and the completion loop.

**The guard's contract.**  The guard refuses a token only if the text it would complete
gets an error-severity finding from the linter in patch mode (a placeholder, a path that
does not exist under a closed node, a service that does not exist, a closer with nothing to
close, a syntax error).  Everything the patch-mode linter accepts, the guard accepts: its
Luau knowledge is the linter's (the parser's if-expressions, vararg functions and type
regions at priming, the resolver's values and scoping for paths, the placeholder rules of
:mod:`luaguard.checks.placeholders` compiled into its automaton, the same run-time names,
Wally dependencies, template scripts and files outside the DataModel).  The other way
round it may be more lenient where the text alone cannot tell yet (a value it cannot know
is left open).  Every front end builds its guard the same way, from the linting engine's
contract for the file (:meth:`luaguard.engine.Engine.guard_contract` ->
:func:`.matcher.project_guard`).  Measured on public Luau by ``bench/real_code.py`` (the guard
replay: every lint-clean file of the corpus fed token by token, masks included, at the test
tokenizers and at real production ones: Qwen2.5's 151k BPE, Qwen3.6's 248k, DeepSeek's) and
tested by ``tests/test_guard_real_code.py``.

Everything here needs the ``guard`` extra (``pip install -e '.[guard]'`` in a clone: numpy, torch,
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
    from ..install import extra_command

    return (f"completions need the guard extra, which is not installed (missing: {', '.join(missing)}): "
            f"{extra_command('guard')}")
