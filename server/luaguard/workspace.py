"""Finding a project's root directory and reading its ``luaguard.toml``.

Shared by the two front ends (the CLI and the LSP server); neither raises on a broken
configuration here: callers decide whether a problem is fatal (the CLI exits 2, the
language server shows a warning and keeps serving with defaults).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .config import (
    CONFIG_FILE,
    ConfigError,
    Settings,
    SettingsProblem,
    env_settings,
    find_config,
    read_config_data,
    settings_from_mapping,
    user_config_path,
    user_only_keys_set,
    with_lines,
    without_user_only_keys,
)

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
    ``config_path`` is the file read (``None``: there is none); ``notices``: what the user
    must be told once (the repository's settings that were ignored, and how to allow them).
    """

    settings: Settings = field(default_factory=Settings)
    problems: list[SettingsProblem] = field(default_factory=list)
    config_path: Path | None = None
    error: str | None = None
    notices: list[str] = field(default_factory=list)


def read_project_settings(root: Path | None, base: Settings | None = None) -> ProjectSettings:
    """The settings for the project at ``root``, in layers (later ones override):

    1. ``base`` (default: all defaults);
    2. the user's config file (:func:`~luaguard.config.user_config_path`), every key;
    3. the ``luaguard.toml`` of ``root`` (or the nearest one above it) - except the settings
       that send code off the machine or load a model
       (:data:`~luaguard.config.USER_ONLY_KEYS`): a repository is untrusted input, so those
       are ignored (and :attr:`ProjectSettings.notices` says so) unless the user config's
       ``trusted_projects`` lists the project (VS Code's workspace trust, for luaguard);
    4. the environment (:data:`~luaguard.config.ENV_SETTINGS`).

    Never raises: a broken user config is a problem; a broken ``luaguard.toml`` is
    :attr:`ProjectSettings.error`.
    """
    settings = base or Settings()
    problems: list[SettingsProblem] = []
    notices: list[str] = []
    user_path = user_config_path()
    trusted: list[str] = []
    if user_path.is_file():
        try:
            data = read_config_data(user_path)
        except ConfigError as exc:
            problems.append(SettingsProblem(str(user_path), "<file>", f"{exc}; not used"))
        else:
            listed = data.pop("trusted_projects", [])
            if isinstance(listed, list) and all(isinstance(p, str) for p in listed):
                trusted = listed
            else:
                problems.append(SettingsProblem(str(user_path), "trusted_projects",
                                                "expected a list of folders; no project trusted"))
            settings, found = settings_from_mapping(data, str(user_path), settings)
            problems += with_lines(found, user_path)
    result = ProjectSettings(settings, problems, None, None, notices)
    path = None
    if root is not None:
        path = root / CONFIG_FILE
        if not path.is_file():
            path = find_config(root)
    if path is not None:
        result.config_path = path
        try:
            data = read_config_data(path)
        except ConfigError as exc:
            result.error = str(exc)
            data = None
        if data is not None:
            ignored = user_only_keys_set(data)
            if ignored and not _trusted(root, trusted):
                data = without_user_only_keys(data)
                notices.append(
                    f"{path}: {' and '.join(ignored)} ignored: a repository's settings cannot send your code off this "
                    f"machine or choose a model to load. Set {'them' if len(ignored) > 1 else 'it'} in your editor's "
                    f"luaguard settings, in {user_path} or in the environment (LUAGUARD_COMPLETION_ENDPOINT, "
                    f"LUAGUARD_COMPLETION_MODEL); or, if you trust this repository, add "
                    f"trusted_projects = [\"{Path(root).resolve()}\"] to {user_path}.")
            result.settings, found = settings_from_mapping(data, str(path), result.settings)
            result.problems += with_lines(found, path)
    env = env_settings()
    if env:
        result.settings, found = settings_from_mapping(env, "environment", result.settings)
        result.problems += found
    return result


def _trusted(root: Path | None, trusted: list[str]) -> bool:
    """Is ``root`` one of the user's ``trusted_projects`` folders or inside one?"""
    if root is None:
        return False
    real = os.path.realpath(root)
    for folder in trusted:
        t = os.path.realpath(os.path.expanduser(folder))
        if real == t or real.startswith(t.rstrip(os.sep) + os.sep):
            return True
    return False
