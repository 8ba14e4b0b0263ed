"""The engine as the language server holds it: a :class:`~luaguard.projects.ProjectSet`
(one :class:`~luaguard.engine.Engine` per project file of the workspace; each document is
linted under the projects that map it), touched only from one worker thread, replaced
wholesale after each (re)index.

Threads: the asyncio loop (pygls) never runs engine code.  ``lint`` jobs, settings
updates and incremental file changes run in order on the **engine worker**; building a
fresh index runs on the **indexer worker**, so lints keep being answered (with the old
index, or without one before the first index is ready) while a project loads.  The new
engine is swapped in by a job on the engine worker.
"""

from __future__ import annotations

import asyncio
import os
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..config import Settings
from ..engine import INTERNAL_ERROR, LUAU_SUFFIXES, Engine
from ..findings import Finding
from ..projects import ProjectSet
from ..workspace import has_project_file
from .convert import PositionEncoder, findings_to_diagnostics, prepare_text
from .heap import build_long_lived, settle_heap
from .worker import Worker

#: Buffers with more characters than this are linted after the others (priority 2).
LARGE_DOCUMENT = 1_000_000


@dataclass
class LintResult:
    """What one lint produced: LSP diagnostics (already in client units) and the
    tracebacks of anything that failed inside the engine (empty when all went well)."""

    diagnostics: list
    findings: list[Finding]
    errors: list[str] = field(default_factory=list)


@dataclass
class IndexResult:
    """Outcome of :func:`build_engine`.

    ``engine`` (the root's own project) is always usable; ``projects`` holds it and the
    workspace's other project files.  ``no_project``: the workspace has no project file;
    ``project_error``: the project file is malformed (``"file:line:col: message"``);
    ``crash``: the indexer itself failed (traceback); ``problems``: the indexes'
    non-fatal problems and the other project files that could not be read;
    ``files``/``scripts``: counts for the progress report (every project's).
    """

    engine: Engine
    root: Path | None
    no_project: bool = False
    project_error: str | None = None
    crash: str | None = None
    problems: list = field(default_factory=list)
    files: int = 0
    scripts: int = 0
    projects: ProjectSet | None = None

    def __post_init__(self) -> None:
        if self.projects is None:
            self.projects = ProjectSet(primary=self.engine)


def build_engine(root: Path | None, settings: Settings, report: Callable[[str, int], None] | None = None) -> IndexResult:
    """Build an engine for ``root`` and load its project index, then the workspace's
    other project files (:class:`~luaguard.projects.ProjectSet`; slow: run it on the
    indexer worker).  Never raises.

    ``report(message, percentage)`` is called between phases.
    """
    report = report or (lambda message, pct: None)
    if root is None or not has_project_file(root, settings):
        # no project of its own: the workspace's loose files are linted without one, but
        # project files deeper down (a monorepo's games) still judge the files they map
        result = IndexResult(Engine(None, settings), root, no_project=root is not None)
        if root is None or settings.project_file or settings.sourcemap_file:
            return result
        result.projects = ProjectSet(root, primary=result.engine)
        engine = result.engine
    else:
        engine = Engine(root, settings)
        result = IndexResult(engine, root)
        report("reading the project file", 10)
        try:
            engine.reload_project()
        except Exception:  # noqa: BLE001 - an indexer bug must not stop the server
            result.crash = traceback.format_exc()
            return result
        result.project_error = engine.project_error
        project = engine.project
        if project is not None:
            result.problems = list(getattr(project, "problems", []) or [])
            files = getattr(project, "file_instances", {}) or {}
            result.files = len(files)
    try:
        projects = result.projects
        projects.load_others()
    except Exception:  # noqa: BLE001 - an indexer bug must not stop the server
        result.crash = traceback.format_exc()
        return result
    if projects.others:
        result.no_project = False
    result.problems.extend(projects.problems)
    scripts: set[str] = set()
    for other in projects.engines:
        index = other.project
        if index is None:
            continue
        if other is not engine:
            result.problems.extend(index.problems)
            result.files += len(index.file_instances)
        scripts.update(rel for rel in index.file_instances if rel.endswith(LUAU_SUFFIXES))
    result.scripts = len(scripts)
    report(f"scanning {result.scripts} scripts", 60)
    try:
        for other in projects.engines:
            if other.project is not None:
                other.snapshot.names()
    except Exception:  # noqa: BLE001
        result.crash = traceback.format_exc()
    return result


def lint_document(engine: Engine | ProjectSet, text: str, path: Path | None) -> tuple[list[Finding], list[str]]:
    """Lint buffer text as the file ``path`` (with a :class:`~luaguard.projects.ProjectSet`:
    under the projects that map it).

    ``text`` must have gone through :func:`~luaguard.lsp.convert.prepare_text`.  Binary
    content, over-size buffers and invalid text give one finding (the engine's
    ``lint_bytes`` rules).  The engine turns a failing check into an
    ``internal_error`` finding and keeps the other checks' findings; those are returned
    as ``errors`` (for the log) rather than published.  Never raises.
    """
    try:
        found = engine.lint_bytes(text.encode("utf-8"), path, count=False)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - defensive: the engine is not supposed to raise
        return [], [traceback.format_exc()]
    errors = [f.message for f in found if f.rule == INTERNAL_ERROR]
    return [f for f in found if f.rule != INTERNAL_ERROR], errors


class EngineHost:
    """Owns the current engine, its settings and the two workers (see module doc).

    Attributes other than the workers are read and written on the event loop, except
    :attr:`projects` (and its primary :attr:`engine`), which only engine-worker jobs use.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.workspace_root: Path | None = None
        self.root: Path | None = None
        self.projects = ProjectSet(primary=Engine(None, self.settings))
        self.engine_worker = Worker("luaguard-engine")
        self.index_worker = Worker("luaguard-indexer")
        self.ready: asyncio.Event | None = None
        self.files_linted: set[str] = set()
        self._open_texts: dict[Path, str] = {}
        # findings by rule, counted once per document version: the latest version of each
        # document (which may be linted again, e.g. after an index change: it replaces its
        # count) and the sum over the versions that newer ones replaced
        self._latest: dict[str, tuple[int | None, Counter[str]]] = {}
        self._closed: Counter[str] = Counter()

    @property
    def engine(self) -> Engine:
        """The root's own project's engine (what the commands and completions use)."""
        return self.projects.primary

    # -- readiness ---------------------------------------------------------------------
    def ready_event(self) -> asyncio.Event:
        """The event set once the first index finished (created in the running loop)."""
        if self.ready is None:
            self.ready = asyncio.Event()
        return self.ready

    async def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the first index; True when ready."""
        event = self.ready_event()
        if event.is_set():
            return True
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    # -- paths -------------------------------------------------------------------------
    def document_path(self, fs_path: str | None) -> Path | None:
        """The path the engine should see for a document (``None``: not a file).

        Inside the project root the path is kept as the client spelled it; when only
        the symlink-resolved path is inside the root, that one is used.
        """
        if not fs_path:
            return None
        p = Path(os.path.normpath(fs_path))
        root = self.root
        if root is not None and not _is_within(p, root):
            real = Path(os.path.realpath(p))
            if _is_within(real, root):
                return real
        return p

    # -- engine jobs (run on the engine worker) ----------------------------------------
    async def lint(self, path: Path | None, text: str, encoding: str | None, version: int | None,
                   is_stale: Callable[[], bool] = lambda: False) -> LintResult | None:
        """Lint ``text`` as ``path`` on the engine worker; None when ``is_stale()`` is
        already true when the job starts (a newer edit superseded it)."""
        priority = 2 if len(text) > LARGE_DOCUMENT else 1
        return await self.engine_worker.run(self._lint_job, path, text, encoding, version, is_stale, priority=priority)

    def _lint_job(self, path: Path | None, text: str, encoding: str | None, version: int | None,
                  is_stale: Callable[[], bool]) -> LintResult | None:
        if is_stale():
            return None
        text = prepare_text(text)
        projects = self.projects
        if path is not None:
            self._open_texts[path] = text
            projects.set_text(path, text)
            self.files_linted.add(str(path))
        findings, errors = lint_document(projects, text, path)
        self._count(path, version, findings)
        encoder = PositionEncoder(text, encoding)
        return LintResult(findings_to_diagnostics(findings, encoder, version), findings, errors)

    async def fix(self, path: Path | None, text: str, *, unsafe: bool = False):
        """``luaguard check --fix`` on buffer text, on the engine worker: the
        :class:`~luaguard.fixes.FixResult` of :func:`~luaguard.fixes.fix_text`, or None for a
        buffer the linter reads differently from its text (a byte-order mark, lone surrogates)."""
        from ..fixes import fix_text

        def job():
            if prepare_text(text) != text:
                return None
            return fix_text(self.projects, text, path, unsafe=unsafe, count=False)

        return await self.engine_worker.run(job, priority=1)

    async def forget(self, path: Path | None) -> None:
        """A document was closed: disk content counts again for run-time names."""
        if path is None:
            return

        def job() -> None:
            self._open_texts.pop(path, None)
            self.projects.set_text(path, None)

        await self.engine_worker.run(job)

    async def update_settings(self, settings: Settings) -> None:
        """Use ``settings`` from the next lint on (no re-index)."""
        self.settings = settings

        def job() -> None:
            self.projects.settings = settings

        await self.engine_worker.run(job)

    async def apply_file_changes(self, changed: Iterable[str], deleted: Iterable[str]) -> bool:
        """Update the index for files created/changed/deleted on disk.

        Paths are root-relative POSIX strings.  Returns False when there is no index to
        update.  Exceptions from the index propagate (the caller re-indexes).
        """
        changed, deleted = sorted(set(changed)), sorted(set(deleted))

        def job() -> bool:
            return self.projects.apply_file_changes(changed, deleted)

        return await self.engine_worker.run(job)

    async def build(self, settings: Settings, report: Callable[[str, int], None] | None = None) -> IndexResult:
        """Build a new engine for :attr:`root` on the indexer worker (with the collector
        paused, see :mod:`luaguard.lsp.heap`; :meth:`settle` follows the swap)."""
        return await self.index_worker.run(build_long_lived, build_engine, self.root, settings, report)

    async def settle(self) -> float:
        """Collect what the replaced engine left and freeze the new index out of later
        collections (:func:`~luaguard.lsp.heap.settle_heap`), on the indexer worker."""
        return await self.index_worker.run(settle_heap)

    async def swap(self, projects: ProjectSet | Engine) -> None:
        """Make ``projects`` current (keeping statistics and open-buffer texts); an engine
        alone is one project."""
        if isinstance(projects, Engine):
            projects = ProjectSet(primary=projects)

        def job() -> None:
            old = self.projects
            projects.settings = self.settings
            for engine in projects.engines:
                engine.stats = old.stats
            for path, text in self._open_texts.items():
                projects.set_text(path, text)
            self.projects = projects

        await self.engine_worker.run(job)

    def _count(self, path: Path | None, version: int | None, findings: list[Finding]) -> None:
        """Count ``findings`` once for this version of the document (engine worker)."""
        key = str(path)
        counts = Counter(f.rule for f in findings)
        old = self._latest.get(key)
        if old is not None and old[0] != version:
            self._closed.update(old[1])
        self._latest[key] = (version, counts)

    def stats(self) -> dict:
        """``{"rules": {rule: count}, "files": n}``: findings by rule - in open documents,
        each counted once per document version however often that version was linted (and
        published), plus those of validations (the engine's :attr:`~Engine.stats`) - and
        the number of distinct files linted."""
        for _ in range(20):
            try:
                total = Counter(self.engine.stats)
                total.update(self._closed)
                for _version, counts in list(self._latest.values()):
                    total.update(counts)
                files = len(self.files_linted)
                break
            except RuntimeError:  # changed by the engine worker while copying
                continue
        else:  # pragma: no cover
            total, files = Counter(), len(self.files_linted)
        return {"rules": dict(sorted(total.items())), "files": files}

    def stop(self) -> None:
        """Stop both workers after their queued jobs."""
        self.engine_worker.stop()
        self.index_worker.stop()


def _is_within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
