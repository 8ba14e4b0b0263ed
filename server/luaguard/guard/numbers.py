"""Grounded numbers (opt-in): asset ids a model may write must appear in the project or prompt.

LettucePrevent's idea (ban numbers absent from the input), applied where it is right for
Roblox code: asset ids.  The guard constrains

* the digits after ``rbxassetid://`` (and ``roblox.com/asset/?id=`` / ``roblox.com/asset?id=``)
  inside strings, and
* a numeric literal assigned to a name ending in ``Id`` (``sound.SoundId = ...`` is a
  string, but ``{ AssetId = 1234567 }`` and ``product.ProductId = 1234567`` are numbers),

to the digit strings of :class:`IdSet`.  Unlike LettucePrevent, the check is exact at the
boundary: every digit must extend a known id, and the character that ends the number is
allowed only when the digits so far are a complete id (``12`` is not accepted because
``123`` is known).

Ids are collected from the project's text files and the prompt (:func:`collect_ids`):
every run of digits counts, so a number the user wrote anywhere is available.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from .trie import build_trie

__all__ = ["ID_TRIGGERS", "IdSet", "collect_ids"]

#: String prefixes after which the digits of an asset id follow (case-insensitive).
ID_TRIGGERS: tuple[str, ...] = ("rbxassetid://", "roblox.com/asset/?id=", "roblox.com/asset?id=")

_DIGITS = re.compile(rb"[0-9]+")
_TEXT_SUFFIXES = (".luau", ".lua", ".json", ".jsonc", ".toml", ".txt", ".model.json", ".meta.json")
_SKIP_DIRS = frozenset({".git", "node_modules", "Packages", "DevPackages", "ServerPackages", "__pycache__", ".venv"})
_MAX_IDS = 200_000
_MAX_FILE_BYTES = 2_000_000


class IdSet:
    """A trie of allowed digit strings.  Node 0 is the root; ``children[n]`` maps a digit
    byte to a node; ``terminal[n]`` is True where an allowed id ends."""

    def __init__(self, ids: Iterable[str]) -> None:
        self.ids: frozenset[str] = frozenset(i for i in ids if i.isdigit() and i.isascii())
        self.children, ends = build_trie((ident.encode(), True) for ident in sorted(self.ids))
        self.terminal: list[bool] = [end is not None for end in ends]

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, ident: str) -> bool:
        return ident in self.ids


def collect_ids(root: Path | str | None, texts: Iterable[str] = ()) -> frozenset[str]:
    """Digit runs found in the project's text files under ``root`` (VCS and package folders
    skipped, files over 2 MB ignored) and in ``texts``; at most 200,000 distinct ids."""
    found: set[str] = set()
    for text in texts:
        found.update(m.decode() for m in _DIGITS.findall(text.encode("utf-8", "replace")))
    if root is not None and os.path.isdir(root):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")]
            for name in filenames:
                if not name.endswith(_TEXT_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    if os.path.getsize(path) > _MAX_FILE_BYTES:
                        continue
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                found.update(m.decode() for m in _DIGITS.findall(data))
                if len(found) >= _MAX_IDS:
                    break
    return frozenset(sorted(found)[:_MAX_IDS])
