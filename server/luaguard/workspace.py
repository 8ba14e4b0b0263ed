"""Finding a project's root directory and reading its ``luaguard.toml``.

Shared by the two front ends (the CLI and the LSP server); neither raises on a broken
configuration here: callers decide whether a problem is fatal (the CLI exits 2, the
language server shows a warning and keeps serving with defaults).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .config import CONFIG_FILE, ConfigError, Settings, SettingsProblem, find_config, load_config

#: Names that mark a project root (a ``*.project.json`` or ``*.project.jsonc`` counts too).
PROJECT_MARKERS = (CONFIG_FILE, "default.project.json", "sourcemap.json")
PROJECT_SUFFIXES = (".project.json", ".project.jsonc")


def find_project_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a ``luaguard.toml``, a
    ``*.project.json(c)`` or a ``sourcemap.json``; ``None`` if there is none.

    ``start`` may be a file (its directory is used).  Unreadable directories are skipped.
    """
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for d in (start, *start.parents):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        if any(n in PROJECT_MARKERS or n.endswith(PROJECT_SUFFIXES) for n in names):
            return d
    return None


def has_project_file(root: Path, settings: Settings) -> bool:
    """Whether ``root`` has something to index: a configured ``project_file`` or
    ``sourcemap_file`` (even if missing: the indexer then reports it), a
    ``*.project.json(c)`` or a ``sourcemap.json`` (the files
    :func:`luaguard.project.index.load_project` discovers)."""
    if settings.project_file or settings.sourcemap_file:
        return True
    try:
        names = os.listdir(root)
    except OSError:
        return False
    return any(n == "sourcemap.json" or n.endswith(PROJECT_SUFFIXES) for n in names)


@dataclass
class ProjectSettings:
    """Result of :func:`read_project_settings`.

    ``settings`` are usable in every case (defaults when the file is missing or broken);
    ``problems`` are invalid values that were replaced by defaults; ``error`` is set when
    the file could not be read at all (``"path:line:col: invalid TOML: ..."``);
    ``config_path`` is the file read (``None``: there is none).
    """

    settings: Settings = field(default_factory=Settings)
    problems: list[SettingsProblem] = field(default_factory=list)
    config_path: Path | None = None
    error: str | None = None


def read_project_settings(root: Path | None, base: Settings | None = None) -> ProjectSettings:
    """Read the ``luaguard.toml`` of ``root`` (or the nearest one above it).

    ``base`` (default: all defaults) is what the file's keys override.  Never raises.
    """
    base = base or Settings()
    if root is None:
        return ProjectSettings(base)
    path = root / CONFIG_FILE
    if not path.is_file():
        found = find_config(root)
        if found is None:
            return ProjectSettings(base)
        path = found
    try:
        settings, problems = load_config(path, base)
    except ConfigError as exc:
        return ProjectSettings(base, [], path, str(exc))
    return ProjectSettings(settings, problems, path)
