"""Which files of a project ``luaguard check`` leaves out beyond package managers' installs:
what git leaves out, and what ``luaguard.toml`` excludes.

* **``.gitignore``** (``respect_gitignore = true``, the default, as ruff): every
  ``.gitignore`` from the project root down to a file's directory, with git's semantics
  (gitignore(5): a pattern with a ``/`` before its end is anchored to its file's directory,
  ``dir/`` matches directories only, ``!`` re-includes, the deepest file that has a matching
  pattern decides, and a file in an ignored directory stays ignored), matched by the
  ``pathspec`` library.  Only files inside the project root are read: a ``.gitignore`` above
  it, ``.git/info/exclude`` and the user's global excludes file are not.
* **git submodules**: the ``path`` of each submodule in the root's ``.gitmodules`` - code
  another repository owns (``git ls-files`` lists none of it either).  Off with
  ``respect_gitignore = false`` too.
* **``exclude`` / ``extend-exclude``** of ``luaguard.toml``: patterns with ``.gitignore``
  semantics relative to the project root (``src/Generated/``, ``*.bench.luau``,
  ``!src/Generated/Keep.luau``); ``exclude`` replaces the list of a configuration layered
  under it (the user's config), ``extend-exclude`` adds to it (ruff's pair).

Applies to the files a directory walk or the project file finds; a file named on the
command line is linted unless ``exclude`` names it (ruff lints a file it is given).
"""

from __future__ import annotations

import os
import posixpath
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

SKIP_GITIGNORE = "ignored by .gitignore (respect_gitignore = false in luaguard.toml to lint them)"
SKIP_SUBMODULE = "in a git submodule (.gitmodules): another repository's code"

@lru_cache(maxsize=64)
def compiled(patterns: tuple[str, ...]):
    """``patterns`` (gitignore lines) as a ``pathspec.GitIgnoreSpec``."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def matches(spec, rel: str, is_dir: bool = False) -> bool | None:
    """Does the compiled ``spec`` ignore the POSIX path ``rel`` (``True``), re-include it
    (``False``) or say nothing (``None``)?  A directory is matched as ``rel/``."""
    return spec.check_file(rel + "/" if is_dir else rel).include


class IgnoreRules:
    """The ``.gitignore`` files and submodules of the project at ``root`` (read lazily,
    cached per directory).  Paths are root-relative POSIX strings."""

    def __init__(self, root: Path | str, *, respect_gitignore: bool = True,
                 read: Callable[[Path, Path], str | None] | None = None) -> None:
        """``read(path, root)``: a small text file's content, ``None`` when it is not a
        regular file inside ``root`` or cannot be read - the file-access layer's
        (:func:`luaguard.files.read_small_text`, which :mod:`luaguard.files` passes: this
        module sits above that layer and never reads on its own); ``None``: no
        ``.gitignore`` or ``.gitmodules`` is read."""
        self.root = Path(root)
        self.respect_gitignore = respect_gitignore
        self._reader = read
        self._specs: dict[str, object | None] = {}
        self._submodules: frozenset[str] | None = None

    def reason(self, rel: str, is_dir: bool = False) -> str | None:
        """Why ``rel`` is left out (:data:`SKIP_SUBMODULE`, :data:`SKIP_GITIGNORE`), or
        ``None``.  Only the path itself is judged, not its parents (a walk prunes ignored
        directories before it reaches their files)."""
        if not self.respect_gitignore or not rel or rel == ".":
            return None
        if is_dir and rel in self.submodules():
            return SKIP_SUBMODULE
        parts = rel.split("/")
        for depth in range(len(parts) - 1, -1, -1):  # the deepest .gitignore first
            base = "/".join(parts[:depth])
            spec = self._spec(base)
            if spec is None:
                continue
            hit = matches(spec, "/".join(parts[depth:]), is_dir)
            if hit is not None:
                return SKIP_GITIGNORE if hit else None
        return None

    def reason_with_parents(self, rel: str) -> str | None:
        """:meth:`reason` of the file ``rel`` or of any directory above it (for a list of
        files that no walk pruned: the project file's)."""
        parts = rel.split("/")
        for end in range(1, len(parts)):
            why = self.reason("/".join(parts[:end]), is_dir=True)
            if why is not None:
                return why
        return self.reason(rel)

    def submodules(self) -> frozenset[str]:
        """The root-relative paths of the root's ``.gitmodules`` submodules."""
        if self._submodules is None:
            text = self._read(".gitmodules") or ""
            found = set()
            for m in re.finditer(r"^\s*path\s*=\s*(.+?)\s*$", text, re.MULTILINE):
                path = posixpath.normpath(m.group(1).strip().strip('"'))
                if path and not path.startswith(("../", "/")) and path not in ("..", "."):
                    found.add(path)
            self._submodules = frozenset(found)
        return self._submodules

    def _spec(self, base: str):
        if base not in self._specs:
            text = self._read(f"{base}/.gitignore" if base else ".gitignore")
            lines = tuple(text.splitlines()) if text else ()
            self._specs[base] = compiled(lines) if any(ln.strip() and not ln.startswith("#") for ln in lines) else None
        return self._specs[base]

    def _read(self, rel: str) -> str | None:
        if self._reader is None:
            return None
        return self._reader(self.root / rel, self.root)


def exclude_spec(patterns: Sequence[str]):
    """The compiled spec of ``exclude`` + ``extend-exclude`` patterns, or ``None`` (none)."""
    pats = tuple(p for p in patterns if p and p.strip())
    return compiled(pats) if pats else None


def count_luau(path: str | os.PathLike, suffixes=(".lua", ".luau")) -> int:
    """How many Luau files lie under the directory ``path`` (links to directories not followed)."""
    n = 0
    for _dirpath, _dirnames, filenames in os.walk(path):
        n += sum(1 for f in filenames if f.endswith(suffixes))
    return n
