"""Validation of AI tool calls, plans and diffs against the project index.

Front ends call :mod:`luaguard.toolcalls.api` (``validate_calls``, ``validate_patch``,
``stats``); the modules below it are one concern each: :mod:`.reader` (input shapes),
:mod:`.schemas` (tool definitions), :mod:`.calls` (per-call checks), :mod:`.values`
(property value types), :mod:`.paths` (instance/file paths), :mod:`.overlay` (the
copy-on-write index view), :mod:`.plans` (dependencies and simulation), :mod:`.diffs`
(unified diffs), :mod:`.feedback` (the message for the model).
"""

from __future__ import annotations

from .api import stats, validate_calls, validate_patch

__all__ = ["stats", "validate_calls", "validate_patch"]
