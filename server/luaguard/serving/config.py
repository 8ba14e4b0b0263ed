"""Server-side configuration of luaguard in a serving engine, and the per-request keys.

Projects are named by the server, never by a request (a request must not make the server
read an arbitrary path).  Either:

* ``LUAGUARD_PROJECTS="place=/srv/place,lobby=/srv/lobby"`` (names to project roots), or
* ``LUAGUARD_SERVING_CONFIG=/etc/luaguard/serving.toml`` with a ``[projects]`` table
  (``place = "/srv/place"``; relative roots are taken from the file's directory).

Each project's index loads once per worker and is reloaded when the project changes on disk
(its project file, or a file or folder under a mapped directory: checked at most every
``RELOAD_CHECK_SECONDS`` when a request for it arrives).

Per-request keys (flat values: what vLLM's ``vllm_xargs`` carries): ``luaguard``,
``luaguard_project``, ``luaguard_file``, ``luaguard_prompt`` (see
:mod:`luaguard.serving.vllm`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

RELOAD_CHECK_SECONDS = 2.0
#: files whose change triggers a re-index even while the project does not load
_PROJECT_FILES = ("default.project.json", "sourcemap.json", "luaguard.toml")
log = logging.getLogger("luaguard.serving")
_KEYS = ("luaguard", "luaguard_project", "luaguard_file", "luaguard_prompt")


class XArgsError(ValueError):
    """Malformed luaguard request keys; ``str()`` names the key and what is wrong."""


class ConfigError(ValueError):
    """A broken server configuration (names the variable or file and what is wrong)."""


@dataclass(frozen=True, slots=True)
class GuardRequest:
    """What one request asks of luaguard: the project's name, the project-relative file
    (``None``: not given) and the prompt text to prime with (``None``: decode the ids)."""

    project: str
    file: str | None = None
    prompt: str | None = None


def _truthy(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return v.strip().lower() in ("1", "true", "yes", "on")
    return None


def parse_xargs(extra: dict[str, Any] | None) -> GuardRequest | None:
    """The :class:`GuardRequest` of a request's extra args, or ``None`` when it does not
    opt in.  Raises :class:`XArgsError` for a luaguard key with a bad value, an unknown
    ``luaguard_*`` key, or ``luaguard_project`` missing when ``luaguard`` is on."""
    if not extra:
        return None
    if not isinstance(extra, dict):
        raise XArgsError(f"extra args must be an object, got {type(extra).__name__}")
    for k in extra:
        if isinstance(k, str) and k.startswith("luaguard") and k not in _KEYS:
            raise XArgsError(f"unknown key {k!r} (luaguard's keys: {', '.join(_KEYS)})")
    if "luaguard" not in extra:
        if any(k in extra for k in _KEYS):
            raise XArgsError("luaguard_* keys given without 'luaguard': true")
        return None
    on = _truthy(extra["luaguard"])
    if on is None:
        raise XArgsError(f"'luaguard' must be true or false, got {extra['luaguard']!r}")
    if not on:
        return None
    project = extra.get("luaguard_project")
    if not isinstance(project, str) or not project.strip():
        raise XArgsError("'luaguard_project' (a project name the server was configured with) is required")
    file = extra.get("luaguard_file")
    if file is not None:
        if not isinstance(file, str) or not file.strip():
            raise XArgsError(f"'luaguard_file' must be a project-relative path, got {file!r}")
        p = PurePosixPath(file.replace("\\", "/"))
        if p.is_absolute() or ".." in p.parts or (file[1:3] == ":/" or file[1:3] == ":\\"):
            raise XArgsError(f"'luaguard_file' must be relative to the project and stay inside it, got {file!r}")
        file = p.as_posix()
    prompt = extra.get("luaguard_prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise XArgsError(f"'luaguard_prompt' must be a string, got {type(prompt).__name__}")
    return GuardRequest(project.strip(), file, prompt)


@dataclass
class ServedProject:
    """One configured project: its index (reloaded when the project changes on disk) and
    its guards (:func:`~luaguard.guard.matcher.project_guard` of the file's
    :meth:`~luaguard.engine.Engine.guard_contract`: the linter's contract).

    A reload that fails (a project file saved broken while the server runs) keeps the last
    good index and logs a warning; it is tried again after the next change on disk.  Only a
    project that never loaded raises (:class:`ConfigError`), so a broken project fails its
    own requests (HTTP 400), never the engine or other projects."""

    name: str
    root: Path
    _engine: Any = None
    _signature: tuple = ()
    _checked: float = 0.0
    _error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _fingerprint(self) -> tuple:
        """Modification times of the project's files and mapped folders (what a re-index
        would notice)."""
        out = []
        project = self._engine.project if self._engine is not None else None
        paths = {self.root}
        for name in _PROJECT_FILES:
            paths.add(self.root / name)
        if project is not None:
            if project.project_file is not None:
                paths.add(Path(project.project_file))
            for rel in project.file_instances:
                paths.add(self.root / rel)
                paths.add((self.root / rel).parent)
        for p in sorted(paths):
            try:
                out.append((str(p), p.stat().st_mtime_ns))
            except OSError:
                out.append((str(p), None))
        return tuple(out)

    @property
    def error(self) -> str | None:
        """Why the last load failed (``None``: it did not)."""
        return self._error

    def engine(self):
        """The project's :class:`~luaguard.engine.Engine` (index loaded), reloaded after a
        change on disk; the last good one when a reload fails.  Raises :class:`ConfigError`
        when the project has never loaded (its message names the project and the reason)."""
        from ..engine import open_engine

        with self._lock:
            now = time.monotonic()
            if self._checked and now - self._checked < RELOAD_CHECK_SECONDS:
                return self._current()
            self._checked = now
            signature = self._fingerprint()
            if (self._engine is not None or self._error is not None) and signature == self._signature:
                return self._current()
            self._signature = signature  # (a failed load is tried again after the next change)
            try:
                engine = open_engine(self.root, require_index=True)
                engine.snapshot.names()  # (read the scripts now, not in a decoding step)
            except Exception as exc:  # noqa: BLE001 - a broken project must not stop the server
                self._error = str(exc) or type(exc).__name__
                if self._engine is not None:
                    log.warning("luaguard: project %r (%s) no longer loads, keeping its last good index: %s",
                                self.name, self.root, self._error)
                else:
                    log.error("luaguard: project %r (%s) does not load: %s", self.name, self.root, self._error)
                return self._current()
            if self._engine is None and self._error is not None:
                log.warning("luaguard: project %r (%s) loads again", self.name, self.root)
            self._engine, self._error = engine, None
            self._signature = self._fingerprint()
            return engine

    def _current(self):
        if self._engine is None:
            raise ConfigError(f"project {self.name!r} ({self.root}): {self._error or 'not loaded'}")
        return self._engine

    def contract(self, rel: str | None = None):
        """The :class:`~luaguard.engine.GuardContract` of the project-relative file ``rel``
        (``None``: not given) on the current index."""
        return self.engine().guard_contract(rel)

    def guard(self, tokenizer, vocab_size: int | None, rel: str | None = None, contract=None):
        """The guard of ``tokenizer`` (logits width ``vocab_size``) for the file ``rel`` on
        the current index: :func:`~luaguard.guard.matcher.project_guard` of its contract
        (``contract``: the one the caller already took from :meth:`contract`)."""
        from ..guard.matcher import project_guard
        from ..guard.token_bytes import token_table

        return project_guard(token_table(tokenizer, vocab_size), contract if contract is not None else self.contract(rel))

    def scripts(self, rel: str | None) -> list:
        """The instances of the project file ``rel`` (empty when not given or not mapped)."""
        return list(self.contract(rel).scripts) if rel else []


class ProjectRegistry:
    """The projects a server may guard, by name."""

    def __init__(self, projects: dict[str, Path]) -> None:
        self.projects = {name: ServedProject(name, root) for name, root in projects.items()}

    @classmethod
    def from_environment(cls, env: dict[str, str] | None = None) -> ProjectRegistry:
        """From ``LUAGUARD_SERVING_CONFIG`` (a TOML file) or ``LUAGUARD_PROJECTS``; an empty
        registry when neither is set.  Raises :class:`ConfigError` naming the variable or file
        for a malformed value or a root that is not a directory."""
        env = os.environ if env is None else env
        projects: dict[str, Path] = {}
        cfg = env.get("LUAGUARD_SERVING_CONFIG")
        if cfg:
            path = Path(cfg)
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise ConfigError(f"LUAGUARD_SERVING_CONFIG={cfg}: cannot read: {exc.strerror or exc}") from None
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{cfg}: not valid TOML: {exc}") from None
            table = data.get("projects")
            if not isinstance(table, dict):
                raise ConfigError(f"{cfg}: needs a [projects] table of name = \"root\"")
            for name, root in table.items():
                if not isinstance(root, str):
                    raise ConfigError(f"{cfg}: projects.{name} must be a path string")
                r = Path(root)
                projects[name] = r if r.is_absolute() else path.parent / r
        spec = env.get("LUAGUARD_PROJECTS")
        if spec:
            for part in spec.split(","):
                if not part.strip():
                    continue
                name, sep, root = part.partition("=")
                if not sep or not name.strip() or not root.strip():
                    raise ConfigError(f"LUAGUARD_PROJECTS: expected name=/path/to/project, got {part.strip()!r}")
                projects[name.strip()] = Path(root.strip())
        for name, root in projects.items():
            if not root.is_dir():
                raise ConfigError(f"luaguard serving: project {name!r}: {root} is not a directory")
        return cls(projects)

    def require(self, name: str) -> ServedProject:
        """The project ``name``; raises :class:`XArgsError` (a 400 for the request) when the
        server has no such project."""
        got = self.projects.get(name)
        if got is None:
            known = ", ".join(sorted(self.projects)) or "none configured"
            raise XArgsError(f"unknown luaguard_project {name!r} (this server guards: {known})")
        return got
