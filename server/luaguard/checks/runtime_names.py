"""Names that a project creates at run time.

``workspace:WaitForChild("Arena")`` is fine when some script does
``arena.Name = "Arena"`` or ``Instance.new("Folder")`` + a helper called with
``"Arena"``: the child is not in the project files but exists while the game runs.  A
name counts as created at run time when it appears as a string literal anywhere in the
project *outside* path look-ups (``WaitForChild``/``FindFirstChild``/``GetService``
arguments and ``["..."]`` indexes), which would otherwise let a hallucinated name vouch
for itself.  Class names passed to ``Instance.new`` count too (a new instance is named
after its class).

The scan is a regular expression over raw text (comments included, a deliberate
over-approximation that can only silence findings, never add them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterable

_LOOKUP_OR_STRING = re.compile(
    r"""(?P<lookup>(?:WaitForChild|FindFirstChild|FindFirstAncestor|GetService|FindFirstChildOfClass|FindFirstChildWhichIsA|FindFirstAncestorOfClass|FindFirstAncestorWhichIsA|FindService)\s*\(\s*|\[\s*)?"""
    r"""(?:"(?P<dq>[^"\\\r\n]{1,100})"|'(?P<sq>[^'\\\r\n]{1,100})')"""
)


def created_names(text: str) -> set[str]:
    """String-literal contents of ``text`` that are not arguments of path look-ups."""
    out: set[str] = set()
    for m in _LOOKUP_OR_STRING.finditer(text):
        if m.group("lookup") is None:
            out.add(m.group("dq") if m.group("dq") is not None else m.group("sq"))
    return out


class RuntimeNames:
    """Per-project cache of :func:`created_names` over every script file.

    ``files`` returns the script paths to scan (called lazily, on first use);
    ``read`` reads one of them (missing or unreadable files count as empty).  Open
    editor buffers override disk through :meth:`set_text`.
    """

    def __init__(self, files: Callable[[], Iterable[Path]], read: Callable[[Path], str | None]) -> None:
        self._files = files
        self._read = read
        self._per_file: dict[Path, set[str]] | None = None
        self._overrides: dict[Path, set[str]] = {}
        self._union: frozenset[str] | None = None

    def _ensure(self) -> dict[Path, set[str]]:
        if self._per_file is None:
            per_file: dict[Path, set[str]] = {}
            for path in self._files():
                text = self._read(path)
                if text:
                    per_file[path] = created_names(text)
            self._per_file = per_file
        return self._per_file

    def names(self) -> frozenset[str]:
        """Union over the project (open buffers replacing their files)."""
        if self._union is None:
            per_file = dict(self._ensure())
            per_file.update(self._overrides)
            union: set[str] = set()
            for names in per_file.values():
                union |= names
            self._union = frozenset(union)
        return self._union

    def set_text(self, path: Path, text: str | None) -> None:
        """Use ``text`` for ``path`` (an open buffer); ``None`` drops the override."""
        if text is None:
            self._overrides.pop(path, None)
        else:
            self._overrides[path] = created_names(text)
        self._union = None

    def file_changed(self, path: Path) -> None:
        """Re-read ``path`` from disk (created, changed or deleted)."""
        if self._per_file is not None:
            text = self._read(path)
            if text:
                self._per_file[path] = created_names(text)
            else:
                self._per_file.pop(path, None)
        self._union = None

    def invalidate(self) -> None:
        """Forget everything read from disk (after a full re-index)."""
        self._per_file = None
        self._union = None
