"""Server-side configuration of luaguard in a serving engine, and the per-request keys.

Projects are named by the server, never by a request (a request must not make the server
read an arbitrary path).  Either:

* ``LUAGUARD_PROJECTS="place=/srv/place,lobby=/srv/lobby"`` (names to project roots), or
* ``LUAGUARD_SERVING_CONFIG=/etc/luaguard/serving.toml`` with a ``[projects]`` table
  (``place = "/srv/place"``; relative roots are taken from the file's directory) and
  optionally ``prompt_tokens = 8192``.

Roots are made absolute when the configuration is read; a request's ``luaguard_file`` is
resolved against its project's root, never the server's working directory.  Each project's
index loads once per process and is reloaded by a watcher thread when the project changes
on disk (its project file, or a file or folder under a mapped directory: checked every
``RELOAD_CHECK_SECONDS``), so no request waits for a re-index.

``LUAGUARD_PROMPT_TOKENS`` (default :data:`PROMPT_TOKENS`, at least 64): the guard reads at
most this many tokens of the served model's tokenizer from the end of a request's
``luaguard_prompt``; a longer prompt is trimmed, never refused (:func:`bound_prompt`,
:func:`trim_prompt`).

Per-request keys (flat values: what vLLM's ``vllm_xargs`` carries): ``luaguard``,
``luaguard_project``, ``luaguard_file``, ``luaguard_prompt`` (see
:mod:`luaguard.serving.vllm` and :func:`parse_xargs`).
"""

from __future__ import annotations

import logging
import os
import posixpath
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RELOAD_CHECK_SECONDS = 2.0
#: files whose change triggers a re-index even while the project does not load
_PROJECT_FILES = ("default.project.json", "sourcemap.json", "luaguard.toml")
log = logging.getLogger("luaguard.serving")
_KEYS = ("luaguard", "luaguard_project", "luaguard_file", "luaguard_prompt")
#: a key this similar to one of luaguard's (rapidfuzz OSA similarity of the lower-cased key,
#: 0-100) is taken for a misspelt luaguard key and refused, not ignored
NEAR_KEY_SCORE = 75.0
#: default of ``LUAGUARD_PROMPT_TOKENS``: the guard reads at most this many tokens (of the
#: served model's tokenizer) from the end of a request's ``luaguard_prompt``
PROMPT_TOKENS = 8192
#: characters kept per token of that cap when a ``luaguard_prompt`` is cut without the
#: tokenizer (in :meth:`~luaguard.serving.vllm.LuaguardLogitsProcessor.validate_params`):
#: code averages 3-4 characters a token, so the cut keeps the tokens the guard reads and bounds
#: the work and the bytes sent on to the engine
CHARS_PER_TOKEN = 8


class XArgsError(ValueError):
    """Malformed luaguard request keys; ``str()`` names the key and what is wrong."""


class ConfigError(ValueError):
    """A broken server configuration (names the variable or file and what is wrong)."""


@dataclass(frozen=True, slots=True)
class GuardRequest:
    """What one request asks of luaguard: the project's name, the file (``None``: not
    given; ``/``-separated, relative to the project's root or absolute - resolved against
    the root by :meth:`ServedProject.relpath`) and the prompt text to prime with (``None``:
    decode the ids)."""

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


def _near_key(key: str) -> str | None:
    """The luaguard key ``key`` misspells (another case, ``-`` for ``_``, a typo:
    ``Luaguard``, ``LUAGUARD_PROJECT``, ``luaguard_projcet``), else ``None``."""
    from ..fuzzy import rank

    folded = key.strip().lower().replace("-", "_")
    if folded in _KEYS:
        return folded
    got = rank(folded, _KEYS, limit=1, min_score=NEAR_KEY_SCORE)
    return got[0][0] if got else None


def _kind(v: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object",
            type(None): "null"}.get(type(v), type(v).__name__)


def _string(extra: dict[str, Any], key: str, what: str) -> str | None:
    """``extra[key]`` when it is a non-blank string, ``None`` when absent; raises
    :class:`XArgsError` naming a wrong type as a wrong type."""
    if key not in extra:
        return None
    v = extra[key]
    if not isinstance(v, str):
        raise XArgsError(f"{key!r} must be a string ({what}), got {_kind(v)}: {v!r}"[:300])
    if not v.strip():
        raise XArgsError(f"{key!r} must not be empty ({what})")
    return v


def parse_xargs(extra: dict[str, Any] | None) -> GuardRequest | None:
    """The :class:`GuardRequest` of a request's extra args, or ``None`` when it does not
    opt in.  Raises :class:`XArgsError` for: a luaguard key with a value of the wrong type
    (named as such: ``'luaguard_project' must be a string ..., got a number``) or an empty
    one; a key that misspells one of luaguard's - keys are compared case-insensitively and by
    similarity (:data:`NEAR_KEY_SCORE`), so ``Luaguard``, ``LUAGUARD`` or
    ``luaguard_projcet`` are refused with a did-you-mean instead of leaving the request
    unguarded - or any other ``luaguard*`` key; ``luaguard_*`` keys without ``luaguard``;
    ``luaguard_project`` missing when ``luaguard`` is on; a ``luaguard_file`` that climbs out
    of the project (``..``) or is a Windows drive path.  An absolute ``luaguard_file`` is
    kept: :meth:`ServedProject.relpath` accepts it inside the project's root only."""
    if not extra:
        return None
    if not isinstance(extra, dict):
        raise XArgsError(f"extra args must be an object, got {type(extra).__name__}")
    for k in extra:
        if not isinstance(k, str) or k in _KEYS:
            continue
        near = _near_key(k)
        if near is not None:
            raise XArgsError(f"unknown key {k!r}: did you mean {near!r}? (luaguard's keys are lower case: "
                             f"{', '.join(_KEYS)})")
        if k.lower().startswith("luaguard"):
            raise XArgsError(f"unknown key {k!r} (luaguard's keys: {', '.join(_KEYS)})")
    if "luaguard" not in extra:
        given = [k for k in _KEYS if k in extra]
        if given:
            raise XArgsError(f"{given[0]!r} given without 'luaguard': true")
        return None
    on = _truthy(extra["luaguard"])
    if on is None:
        raise XArgsError(f"'luaguard' must be true or false, got {extra['luaguard']!r}"[:300])
    if not on:
        return None
    project = _string(extra, "luaguard_project", "a project name the server was configured with")
    if project is None:
        raise XArgsError("'luaguard_project' (a project name the server was configured with) is required")
    file = _string(extra, "luaguard_file", "the file being completed, relative to the project")
    if file is not None:
        if "\0" in file:
            raise XArgsError("'luaguard_file' must not contain a NUL character")
        posix = file.replace("\\", "/")
        if posix[1:3] == ":/":
            raise XArgsError(f"'luaguard_file' is a Windows drive path, outside the project: send it relative to "
                             f"the project, got {file!r}")
        norm = posixpath.normpath(posix)
        if not posix.startswith("/") and (norm == ".." or norm.startswith("../")):
            raise XArgsError(f"'luaguard_file' must be relative to the project and stay inside it, got {file!r}")
        file = norm
    if "luaguard_prompt" in extra and not isinstance(extra["luaguard_prompt"], str):
        raise XArgsError(f"'luaguard_prompt' must be a string, got {_kind(extra['luaguard_prompt'])}")
    return GuardRequest(project.strip(), file, extra.get("luaguard_prompt"))


def bound_prompt(text: str, tokens: int) -> str:
    """``text`` cut to its last ``tokens * CHARS_PER_TOKEN`` characters, from the first
    line start in the first quarter of what is kept (else mid-line): the tokenizer-free
    first cut of a ``luaguard_prompt`` - constant work whatever the text's size (a 4 MB
    prompt costs what a cap-sized one does).  ``text`` itself when it is short enough."""
    limit = max(1, tokens) * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    nl = tail.find("\n", 0, limit // 4)
    return tail[nl + 1:] if nl >= 0 else tail


def trim_prompt(text: str, tokenizer, tokens: int) -> str:
    """The end of ``text`` that holds at most ``tokens`` tokens of ``tokenizer``, from a
    line start where one falls within the first quarter of it: what the guard primes with
    (brackets and blocks opened before the cut are not known to it, as for a prompt cut to
    the model's context).  Tokenizes at most ``tokens * CHARS_PER_TOKEN`` characters."""
    text = bound_prompt(text, tokens)
    try:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = enc["input_ids"], enc["offset_mapping"]
    except (NotImplementedError, TypeError, ValueError, KeyError):  # (a slow tokenizer: no offsets)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        return text if len(ids) <= tokens else tokenizer.decode(ids[-tokens:])
    if len(ids) <= tokens:
        return text
    start = offsets[len(ids) - tokens][0]
    nl = text.find("\n", start, start + (len(text) - start) // 4)
    return text[nl + 1:] if nl >= 0 else text[start:]


@dataclass
class ServedProject:
    """One configured project: its index (reloaded when the project changes on disk) and
    its guards (:func:`~luaguard.guard.matcher.project_guard` of the file's
    :meth:`~luaguard.engine.Engine.guard_contract`: the linter's contract).

    The first load happens on first use (:meth:`engine`); later changes are picked up by
    :meth:`refresh`, which the registry's watcher thread (:meth:`ProjectRegistry.watch`)
    calls every :data:`RELOAD_CHECK_SECONDS` - never a request, so no request (and no engine
    step) waits for a re-index.  A reload that fails (a project file saved broken, or
    deleted, while the server runs) keeps the last good index and logs one warning; it is
    tried again after the next change on disk.  A project that never loaded - a broken
    project file, or a root with no project file at all - raises :class:`ConfigError` for
    its requests (HTTP 400 naming the reason), never failing the engine or other projects.
    ``quiet``: log those at DEBUG (a process that only validates requests, beside the engine
    process that logs them)."""

    name: str
    root: Path
    quiet: bool = False
    _engine: Any = None
    _signature: tuple = ()
    _error: str | None = None
    _tried: bool = False
    _lock: threading.RLock = field(default_factory=threading.RLock)
    #: ``hook(project, engine)`` called after each successful (re)load, by key (the processor
    #: builds the guard of its tokenizer there: on the watcher thread, not in the engine step)
    on_load: dict = field(default_factory=dict)

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

    def _log(self, level: int, msg: str, *args: Any) -> None:
        log.log(logging.DEBUG if self.quiet else level, msg, *args)

    def engine(self):
        """The project's :class:`~luaguard.engine.Engine` (index loaded): the current one -
        loaded on the first call, reloaded only by :meth:`refresh`.  Raises
        :class:`ConfigError` when the project has never loaded (its message names the
        project and the reason)."""
        engine = self._engine
        if engine is not None:
            return engine
        with self._lock:
            if not self._tried:
                self.refresh()
            return self._current()

    def refresh(self) -> bool:
        """Reload the index when the project changed on disk since the last try (returns
        whether a new index was loaded).  A failed reload keeps the last good index and
        logs one warning; never raises."""
        from ..engine import open_engine

        with self._lock:
            signature = self._fingerprint()
            if self._tried and signature == self._signature:
                return False
            first = not self._tried
            self._tried = True
            self._signature = signature  # (a failed load is tried again after the next change)
            try:
                engine = open_engine(self.root, require_index=True)
                engine.snapshot.names()  # (read the scripts now, not in a decoding step)
            except Exception as exc:  # noqa: BLE001 - a broken project must not stop the server
                self._error = str(exc) or type(exc).__name__
                if self._engine is not None:
                    self._log(logging.WARNING, "luaguard: project %r (%s) no longer loads, keeping its last good "
                              "index: %s", self.name, self.root, self._error)
                elif first:
                    self._log(logging.ERROR, "luaguard: project %r (%s) does not load; its requests are refused "
                              "(HTTP 400): %s", self.name, self.root, self._error)
                return False
            old = self._engine
            if old is None and self._error is not None:
                self._log(logging.WARNING, "luaguard: project %r (%s) loads again", self.name, self.root)
            elif old is not None and self._error is not None:
                self._log(logging.WARNING, "luaguard: project %r (%s) loads again (its new index replaces the last "
                          "good one)", self.name, self.root)
            self._engine, self._error = engine, None
            self._signature = self._fingerprint()
        for hook in list(self.on_load.values()):
            try:
                hook(self, engine)
            except Exception:  # noqa: BLE001
                log.exception("luaguard: after loading project %r", self.name)
        return True

    def _current(self):
        if self._engine is None:
            raise ConfigError(f"project {self.name!r} ({self.root}): {self._error or 'not loaded'}")
        return self._engine

    def relpath(self, file: str | None) -> str | None:
        """The request's ``luaguard_file`` relative to the project's root (``None`` when not
        given): a relative path is read against the root, never the server's working
        directory; an absolute one must lie inside the root.  Raises :class:`XArgsError`
        (HTTP 400) for a file outside the project."""
        if file is None:
            return None
        from ..engine import project_relpath

        rel = project_relpath(self.root, file)
        if rel is None:
            raise XArgsError(f"'luaguard_file' {file!r} is outside project {self.name!r}: send it relative to the "
                             f"project's root")
        return rel

    def contract(self, rel: str | None = None):
        """The :class:`~luaguard.engine.GuardContract` of the file ``rel`` (relative to the
        project's root or absolute inside it; ``None``: not given) on the current index."""
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
    """The projects a server may guard, by name, and ``prompt_tokens``: how many tokens of
    a ``luaguard_prompt`` the guard reads (``LUAGUARD_PROMPT_TOKENS``, default
    :data:`PROMPT_TOKENS`)."""

    def __init__(self, projects: dict[str, Path], *, prompt_tokens: int = PROMPT_TOKENS) -> None:
        self.projects = {name: ServedProject(name, Path(os.path.abspath(root))) for name, root in projects.items()}
        self.prompt_tokens = prompt_tokens
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()

    @classmethod
    def from_environment(cls, env: dict[str, str] | None = None) -> ProjectRegistry:
        """From ``LUAGUARD_SERVING_CONFIG`` (a TOML file: a ``[projects]`` table, optional
        ``prompt_tokens``) or ``LUAGUARD_PROJECTS``, and ``LUAGUARD_PROMPT_TOKENS``; an
        empty registry when neither is set.  Raises :class:`ConfigError` naming the variable
        or file for a malformed value or a root that is not a directory.  (A root without a
        project file is no start-up error: that project's requests are refused with its
        reason, :class:`ServedProject`.)"""
        env = os.environ if env is None else env
        projects: dict[str, Path] = {}
        prompt_tokens: Any = PROMPT_TOKENS
        where = "LUAGUARD_PROMPT_TOKENS"
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
            if "prompt_tokens" in data:
                prompt_tokens, where = data["prompt_tokens"], f"{cfg}: prompt_tokens"
        spec = env.get("LUAGUARD_PROJECTS")
        if spec:
            for part in spec.split(","):
                if not part.strip():
                    continue
                name, sep, root = part.partition("=")
                if not sep or not name.strip() or not root.strip():
                    raise ConfigError(f"LUAGUARD_PROJECTS: expected name=/path/to/project, got {part.strip()!r}")
                projects[name.strip()] = Path(root.strip())
        if env.get("LUAGUARD_PROMPT_TOKENS"):
            prompt_tokens, where = env["LUAGUARD_PROMPT_TOKENS"].strip(), "LUAGUARD_PROMPT_TOKENS"
        try:
            n = int(prompt_tokens) if not isinstance(prompt_tokens, bool) else 0
        except (TypeError, ValueError):
            n = 0
        if n < 64:
            raise ConfigError(f"{where}: expected a whole number of tokens >= 64, got {prompt_tokens!r}")
        for name, root in projects.items():
            if not root.is_dir():
                raise ConfigError(f"luaguard serving: project {name!r}: {root} is not a directory")
        return cls(projects, prompt_tokens=n)

    def require(self, name: str) -> ServedProject:
        """The project ``name``; raises :class:`XArgsError` (a 400 for the request) when the
        server has no such project."""
        got = self.projects.get(name)
        if got is None:
            known = ", ".join(sorted(self.projects)) or "none configured"
            raise XArgsError(f"unknown luaguard_project {name!r} (this server guards: {known})")
        return got

    def resolve(self, req: GuardRequest) -> tuple[ServedProject, str | None]:
        """The project of ``req`` and its file relative to the project's root; raises
        :class:`XArgsError` for an unknown project or a file outside it."""
        project = self.require(req.project)
        return project, project.relpath(req.file)

    def watch(self, interval: float | None = None) -> None:
        """Start (once) the daemon thread that calls every project's
        :meth:`ServedProject.refresh` every ``interval`` seconds (default
        :data:`RELOAD_CHECK_SECONDS`); :meth:`close` stops it."""
        if self._watcher is not None or not self.projects:
            return
        every = RELOAD_CHECK_SECONDS if interval is None else interval

        def run() -> None:
            while not self._stop.wait(every):
                for project in list(self.projects.values()):
                    try:
                        project.refresh()
                    except Exception:  # noqa: BLE001 - the watcher must go on
                        log.exception("luaguard: checking project %r for changes failed", project.name)

        self._watcher = threading.Thread(target=run, name="luaguard-project-watcher", daemon=True)
        self._watcher.start()

    def close(self) -> None:
        """Stop the watcher thread (if any)."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
