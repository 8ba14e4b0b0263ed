"""Finding every Rojo project file of a repository.

A repository often holds more than one project file, each describing where its scripts
run (read on 41 public repositories, ``bench/corpus/manifest.json``):

* places: a game's ``default.project.json``, and beside a library the places its tests,
  benchmarks or examples run in (``test.project.json``, ``dev.project.json``,
  ``place.project.json``, ``test/default.project.json`` ...), whose tree is a
  ``DataModel``;
* package builds: a library's or a plugin's ``default.project.json`` that maps its source
  folder as one ``ModuleScript`` or ``Folder`` (the place it is inserted into is not in the
  repository), a ``plugin/default.project.json`` beside a game, the packages of a monorepo
  (``packages/*/default.project.json``), deploy builds (``.github/*.deploy.project.json``).

:func:`find_project_files` lists them all; :mod:`luaguard.projects` judges each script
under the ones that map it.  Left out, as ``luaguard check``'s directory walk leaves them
out (:mod:`luaguard.files`): Wally's installs (``Packages/_Index``, ``DevPackages/_Index``,
``ServerPackages/_Index``: third-party packages whose own project files describe their
build, not this repository), ``node_modules``, version-control folders, files matching the
``exclude`` globs, and project files that resolve (through a symbolic link) outside the
root.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Sequence

from ..files import excluded, is_managed_dir

__all__ = ["PROJECT_FILE_SUFFIXES", "MAX_PROJECT_FILES", "find_project_files"]

PROJECT_FILE_SUFFIXES = (".project.json", ".project.jsonc")

#: At most this many project files are read from one repository (the rest are named as
#: left out): a repository of test fixtures (Rojo's own has 145) stays cheap to index.
MAX_PROJECT_FILES = 256

_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__"})


def find_project_files(root: Path | str, exclude: Sequence[str] = (), *,
                       limit: int = MAX_PROJECT_FILES) -> tuple[list[str], int]:
    """Every ``*.project.json(c)`` under ``root`` (the module docstring says which are left
    out), as root-relative POSIX paths: the root's own first, then by depth and name.
    Returns ``(paths, left_out)``: at most ``limit`` paths, and how many more there were.
    Unreadable directories are skipped; never raises for a missing ``root`` (no paths)."""
    root_s = os.path.abspath(os.fspath(root))
    real_root = os.path.realpath(root_s)
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root_s):
        base = os.path.basename(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and is_managed_dir(base, d) is None)
        for name in sorted(filenames):
            if not name.endswith(PROJECT_FILE_SUFFIXES):
                continue
            full = os.path.join(dirpath, name)
            rel = Path(os.path.relpath(full, root_s)).as_posix()
            if excluded(rel, exclude) or not os.path.isfile(full):
                continue
            real = os.path.realpath(full)
            if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
                continue  # a link out of the repository: never read
            found.append(rel)
    found.sort(key=lambda r: (r.count("/"), posixpath.dirname(r), posixpath.basename(r)))
    return found[:limit], max(0, len(found) - limit)
