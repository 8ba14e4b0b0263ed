"""Which files ``luaguard check`` lints: the directory walk and what it leaves out.

Every ``.lua``/``.luau`` file is linted wherever it lives (a project's own code may sit in
``src/ReplicatedFirst/Packages/MyGame/`` or a dot-folder such as ``.lune/``), except:

* third-party code a package manager installs and owns: Wally's managed index
  (``_Index`` inside ``Packages``, ``DevPackages`` or ``ServerPackages``) and npm's
  ``node_modules``;
* version-control metadata (``.git``, ``.hg``, ``.svn``);
* files matching the ``exclude`` globs of ``luaguard.toml`` - selene's setting of the same
  name: glob patterns relative to the project root, ``*`` within one path segment, ``**``
  across segments (matched with wcmatch's ``globmatch``, ``GLOBSTAR``);
* files that are not Luau (another extension): skipped with a note when named on the
  command line.

:func:`select_files` returns the files and, per reason, how many were skipped, for the
CLI's ``--stats`` and its "0 files" message.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from wcmatch import glob as wglob

LUAU_SUFFIXES = (".lua", ".luau")

SKIP_WALLY = "Wally's managed packages (Packages/_Index)"
SKIP_NPM = "npm packages (node_modules)"
SKIP_EXCLUDED = "excluded by luaguard.toml's exclude"
SKIP_NOT_LUAU = "not a Luau file (.lua/.luau)"
SKIP_UNMAPPED = "not mapped by the project file (pass PATHS, e.g. `luaguard check .`, to check them)"

_VCS_DIRS = frozenset({".git", ".hg", ".svn"})
_WALLY_FOLDERS = frozenset({"Packages", "DevPackages", "ServerPackages"})
_GLOB_FLAGS = wglob.GLOBSTAR | wglob.DOTGLOB


@dataclass
class FileSelection:
    """The files to lint (in order, no duplicates), how many were skipped per reason (the
    ``SKIP_*`` strings), and one note per file named on the command line that was skipped."""

    files: list[Path] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)


def is_managed_dir(parent: str, name: str) -> str | None:
    """The skip reason of directory ``name`` inside ``parent`` (names only), or ``None``."""
    if name == "_Index" and parent in _WALLY_FOLDERS:
        return SKIP_WALLY
    if name == "node_modules":
        return SKIP_NPM
    return None


def excluded(rel: str, patterns: Sequence[str]) -> bool:
    """Does the project-root-relative POSIX path ``rel`` match one of the ``exclude`` globs?"""
    return bool(patterns) and wglob.globmatch(rel, list(patterns), flags=_GLOB_FLAGS)


def select_files(paths: Iterable[str | Path], *, root: Path | None = None, exclude: Sequence[str] = ()) -> FileSelection:
    """Expand ``paths`` (files and directories) to the files to lint (see the module
    docstring); ``root`` is the project root the ``exclude`` globs are relative to.
    Raises ``FileNotFoundError`` naming a path that does not exist."""
    out = FileSelection()
    seen: set[Path] = set()

    def add(p: Path) -> None:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            out.files.append(p)

    def rel_of(p: Path) -> str | None:
        if root is None:
            return None
        try:
            return p.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return None

    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                base = os.path.basename(dirpath)
                keep = []
                for d in sorted(dirnames):
                    if d in _VCS_DIRS or d == "__pycache__":
                        continue
                    reason = is_managed_dir(base, d)
                    if reason is not None:
                        out.skipped[reason] += _count_luau(os.path.join(dirpath, d))
                        continue
                    keep.append(d)
                dirnames[:] = keep
                for name in sorted(filenames):
                    if not name.endswith(LUAU_SUFFIXES):
                        continue
                    f = Path(dirpath) / name
                    rel = rel_of(f)
                    if rel is not None and excluded(rel, exclude):
                        out.skipped[SKIP_EXCLUDED] += 1
                        continue
                    add(f)
        elif p.exists():
            rel = rel_of(p)
            if not p.name.endswith(LUAU_SUFFIXES):
                out.skipped[SKIP_NOT_LUAU] += 1
                out.notes.append(f"{raw}: skipped: {SKIP_NOT_LUAU}")
            elif rel is not None and excluded(rel, exclude):
                out.skipped[SKIP_EXCLUDED] += 1
                out.notes.append(f"{raw}: skipped: {SKIP_EXCLUDED}")
            else:
                add(p)
        else:
            raise FileNotFoundError(str(raw))
    return out


def filter_project_files(files: Iterable[Path], *, root: Path, exclude: Sequence[str] = ()) -> FileSelection:
    """The project's own script files (``luaguard check`` without PATHS) minus Wally's and
    npm's installs and the ``exclude`` globs."""
    out = FileSelection()
    for f in files:
        try:
            rel = f.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = f.as_posix()
        parts = rel.split("/")
        reason = next((r for a, b in zip(parts, parts[1:]) if (r := is_managed_dir(a, b)) is not None), None)
        if reason is None and parts and parts[0] == "node_modules":
            reason = SKIP_NPM
        if reason is not None:
            out.skipped[reason] += 1
        elif excluded(rel, exclude):
            out.skipped[SKIP_EXCLUDED] += 1
        else:
            out.files.append(f)
    return out


def _count_luau(path: str) -> int:
    n = 0
    for _dirpath, _dirnames, filenames in os.walk(path):
        n += sum(1 for f in filenames if f.endswith(LUAU_SUFFIXES))
    return n


def write_atomic(path: str | Path, data: bytes) -> None:
    """Replace the file at ``path`` (following a symbolic link to its target) with ``data``:
    written to a temporary file in the same directory, flushed to disk, given the old
    file's permission bits (a new file: 0666 less the umask), then moved over the old one
    with ``os.replace`` - a reader sees the old or the new file, never half of one.
    Raises ``OSError`` (the temporary file is removed)."""
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def unmapped_files(root: Path, mapped: Iterable[Path], *, exclude: Sequence[str] = ()) -> list[Path]:
    """The ``.lua``/``.luau`` files under ``root`` (the walk of :func:`select_files`:
    Wally's and npm's installs, VCS folders and ``exclude`` left out) that are not in
    ``mapped`` - what ``luaguard check`` without PATHS does not lint."""
    keys = {p.resolve() for p in mapped}
    return [p for p in select_files([root], root=root, exclude=exclude).files if p.resolve() not in keys]
