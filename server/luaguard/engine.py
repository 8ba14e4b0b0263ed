"""The one entry point the front ends use: "lint this text as this project file".

The CLI and the LSP server both hold an :class:`Engine` for a project root; neither
contains check logic.  Flow: text -> tokens -> AST -> checks -> suppression and
severity settings -> sorted :class:`~luaguard.findings.Finding` list.

Inline suppression: luaguard's own comments (``-- luaguard: allow(rule)``), selene's
(``-- selene: allow(undefined_variable)``) and Luau's (``--!nolint UnknownGlobal``) -
:mod:`luaguard.suppressions` says which forms and which rules.
"""

from __future__ import annotations

import gc
import logging
import os
import weakref
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .analysis.snapshot import Snapshot
from .analysis.world import OwnFacts
from .checks.base import CheckContext
from .config import Settings
from .contract import GuardContract
from .findings import Finding, Severity
from .luau.parsed import parsed
from .rules.registry import roblox_api_rules
from .suppressions import Suppressions, luaurc_disabled_rules, parse_suppressions, suppression_findings  # noqa: F401 (re-exported)
from .text import LineIndex, decode_source

LUAU_SUFFIXES = (".luau", ".lua")

INTERNAL_ERROR = "internal_error"
#: Rules that assume the file runs in Roblox: warnings in files the project does not map
#: into its DataModel (:attr:`~luaguard.checks.base.CheckContext.in_datamodel`) - except
#: findings marked ``impossible`` (a non-service in ``GetService``, a method missing from a
#: certain class: wrong in any host that runs the code).
ROBLOX_API_RULES = roblox_api_rules()
log = logging.getLogger("luaguard")


@contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector while a file is analysed.

    Tokens and AST nodes are allocated by the hundred thousand and none of them form
    cycles that outlive the analysis; without the pause, collections scan the growing
    heap again and again and analysis time grows faster than the file.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def default_checks() -> list:
    """Every check, in the order findings are produced."""
    from .checks import registry

    return registry.all_checks()




class Engine:
    """Lints Luau text in the context of one project.

    ``root`` is the project directory (``None``: loose files, no index).  The project
    index is loaded on first use; :attr:`project_error` holds the message when the
    project file is broken (the checks that need the index are then skipped and the
    rest still run).  Not thread-safe: the LSP server calls it from one worker.
    """

    def __init__(self, root: Path | None = None, settings: Settings | None = None, *, project=None) -> None:
        self.root = root.resolve() if root is not None else None
        self.settings = settings or Settings()
        self._project = project
        self._project_loaded = project is not None
        self.project_error: str | None = None
        self.checks = default_checks()
        self.stats: Counter[str] = Counter()
        self._snapshot: Snapshot | None = None
        self._project_globals: frozenset[str] | None = None
        self._plugin: tuple | None = None
        self._luaurc = None  # a luaguard.project.luaurc.LuaurcReader, made on first use

    # -- project -----------------------------------------------------------------
    @property
    def project(self):
        """The :class:`~luaguard.project.index.ProjectIndex`, or ``None`` (no root, or
        a broken project file: see :attr:`project_error`)."""
        if not self._project_loaded:
            self._project_loaded = True
            self.reload_project()
        return self._project

    def reload_project(self, *, strict: bool = False) -> None:
        """(Re)build the index from disk.

        With ``strict`` a broken project file raises
        :class:`~luaguard.project.index.ProjectFileError`; otherwise the error is kept
        in :attr:`project_error` and the index is ``None``.
        """
        self._project_loaded = True
        self.project_error = None
        self._project = None
        self._project_globals = None
        self._snapshot = None
        self._luaurc = None
        if self.root is None:
            return
        from .project.index import ProjectFileError, load_project

        try:
            self._project = load_project(
                self.root,
                project_file=self.settings.project_file,
                sourcemap_file=self.settings.sourcemap_file,
            )
        except ProjectFileError as exc:
            self.project_error = str(exc)
            if strict:
                raise

    @property
    def snapshot(self) -> Snapshot:
        """The project's semantic model (:class:`~luaguard.analysis.snapshot.Snapshot`):
        made on first use, replaced when the project is indexed again or files change on
        disk (:meth:`files_changed`).  Without a project, a snapshot of an empty open
        ``DataModel`` (services, classes and members are still known)."""
        project = self.project
        snap = self._snapshot
        if snap is None or (project is not None and snap.project is not project):
            if project is None:
                from .project.index import empty_project

                snap = Snapshot(empty_project())
            else:
                snap = Snapshot(project, self._script_files, _read_text)
            self._snapshot = snap
        return snap

    def files_changed(self, changed: Iterable[str], deleted: Iterable[str] = ()) -> bool:
        """Files (root-relative POSIX paths) were created, changed or deleted on disk:
        update the index in place and replace the snapshot (the scans of other files and
        the open buffers carry over).  False when there is no index to update.  Exceptions
        from the index propagate (the caller indexes again)."""
        changed, deleted = list(changed), list(deleted)
        if self.root is None:
            return False
        project = self.project
        if project is None:
            return False
        project.apply_file_changes(changed, deleted)
        if any(rel.rsplit("/", 1)[-1] == ".luaurc" for rel in (*changed, *deleted)):
            self._luaurc = None
        scripts = [self.root / rel for rel in (*changed, *deleted) if rel.endswith(LUAU_SUFFIXES)]
        if self._snapshot is not None and self._snapshot.project is project:
            self._snapshot = self._snapshot.after_changes(scripts)
        return True

    def set_text(self, path: Path, text: str | None) -> None:
        """The editor's buffer for the file ``path`` (absolute; ``None``: closed - the file
        on disk counts again): what it creates and reads counts for every other file."""
        if self.root is not None and self.relpath(path) is not None:
            self.snapshot.set_text(path, text)

    @property
    def plugin_project(self) -> bool:
        """Is the project a Studio plugin's (the ``plugin`` setting, else detected:
        :func:`luaguard.project.plugin.is_plugin_project`)?"""
        project, setting = self.project, self.settings.plugin
        got = self._plugin
        if got is None or got[0] is not project or got[1] != setting:
            from .project.plugin import is_plugin_project

            got = self._plugin = (project, setting, is_plugin_project(project, setting))
        return got[2]

    def relpath(self, path: str | Path | None) -> str | None:
        """``path`` as a person typed it - absolute, or relative to the **current
        directory** (the CLI's and the language server's file arguments) - relative to the
        project root as a POSIX string; ``None`` when outside the root (or no root).  A
        path that names a project file relative to the root (a request's
        ``luaguard_file``, the Hugging Face example) goes through :meth:`project_relpath`."""
        if path is None or self.root is None:
            return None
        p = Path(path)
        if not p.is_absolute():
            p = Path.cwd() / p
        try:
            rel = Path(os.path.normpath(p)).relative_to(self.root)
        except ValueError:
            return None
        return rel.as_posix()

    def project_relpath(self, path: str | Path | None) -> str | None:
        """A project file's path relative to the root (POSIX), never read against the
        process's working directory: :func:`project_relpath` of :attr:`root`."""
        return project_relpath(self.root, path) if self.root is not None else None

    def _script_files(self) -> list[Path]:
        project = self.project
        if project is None or self.root is None:
            return []
        return [self.root / rel for rel in project.file_instances if rel.endswith(LUAU_SUFFIXES)]

    def runtime_names_for(self, text: str, path: str | Path | None = None):
        """The run-time names a lint of ``text`` as ``path`` reads, for the guard
        (:class:`~luaguard.analysis.snapshot.WorldNames`: the project's name pool carrying
        its snapshot, plus the text's own names and facts), so that the guard accepts
        exactly the names the linter accepts in that file.  ``path``: absolute or
        root-relative (:meth:`project_relpath`)."""
        rel = self.project_relpath(path)
        project = self.project
        scripts = project.instances_for_file(rel) if (project is not None and rel is not None) else []
        abs_path = self.root / rel if (rel is not None and self.root is not None) else None
        return self.snapshot.names().with_own(OwnFacts(text, abs_path, scripts))

    def script_files(self) -> list[Path]:
        """Every ``.lua``/``.luau`` file the project maps (sorted)."""
        return sorted(set(self._script_files()))

    def luau_config(self, path: str | Path | None):
        """The :class:`~luaguard.project.luaurc.LuauConfig` of the project file ``path``
        (absolute or root-relative): its nearest ``.luaurc`` files' (none outside the root)."""
        from .project.luaurc import EMPTY, LuaurcReader

        if self.root is None or path is None:
            return EMPTY
        if self._luaurc is None:
            self._luaurc = LuaurcReader(self.root)
        return self._luaurc.for_file(self.project_relpath(path))

    def language_mode(self, path: str | Path | None, lex=None) -> str | None:
        """Luau's language mode of a file: its header hot comment (``--!strict``; ``lex``:
        the file's tokens), else the ``language_mode`` setting, else the nearest ``.luaurc``'s
        ``languageMode``; ``None``: none set."""
        if lex is not None:
            from .project.luaurc import header_mode

            mode = header_mode(lex)
            if mode is not None:
                return mode
        return self.settings.language_mode or self.luau_config(path).language_mode

    def extra_globals(self, path: str | Path | None) -> frozenset[str]:
        """Globals defined outside the file: the ``extra_globals`` setting, the ``globals``
        of the file's ``.luaurc`` files, the project's selene std files and definition files,
        and TestEZ's globals in ``*.spec`` files."""
        if self._project_globals is None:
            from .project.globals import project_globals

            self._project_globals = project_globals(self.root) if self.root is not None else frozenset()
        names = self._project_globals | frozenset(self.settings.extra_globals) | self.luau_config(path).globals
        if path is not None and str(path).endswith((".spec.lua", ".spec.luau")):
            from .project.globals import TESTEZ_GLOBALS

            names |= TESTEZ_GLOBALS
        return names

    def guard_contract(self, path: str | Path | None = None, text: str | None = None) -> GuardContract:
        """The :class:`GuardContract` of ``path`` (``text``: its current content, whose own
        run-time names count as the linter counts them in :meth:`make_context`).  Every
        front end that builds a guard (the language server, ``luaguard complete``, the vLLM
        registry, the Hugging Face example) takes it from here, so the guard accepts what
        this engine's checks accept.  ``path`` is a project file: absolute, or relative to
        the project **root** (``"src/server/Main.server.luau"``; never to the process's
        working directory - :meth:`project_relpath`); a path outside the root gives a
        contract without ``path`` and ``scripts``.  Reads the project's script files on
        first use (the run-time names); call it on the thread that owns the engine."""
        project = self.project
        rel = self.project_relpath(path)
        # the project's names carrying its snapshot, plus the text's own
        names = self.runtime_names_for(text, path) if text else self.snapshot.names()
        if project is None or rel is None:
            return GuardContract(project, names, rel)
        return GuardContract(project, names, rel, tuple(project.instances_for_file(rel)), True)

    # -- linting -----------------------------------------------------------------
    def make_context(self, text: str, path: str | Path | None = None, *, mode: str | None = None) -> CheckContext:
        """Tokenize and parse ``text`` and gather what checks need about ``path``.  The
        tokens, line index and tree are computed once per text
        (:func:`luaguard.luau.parsed.parsed`): a file judged by several projects, or parsed
        before for another file's run-time facts, is not lexed and parsed again."""
        declarations = str(path or "").endswith((".d.lua", ".d.luau"))
        lex, lines, ast = parsed(text, declarations)
        rel = self.relpath(path)
        project = self.project
        scripts = project.instances_for_file(rel) if (project is not None and rel is not None) else []
        ctx = CheckContext(
            text=text,
            lines=lines,
            lex=lex,
            mode=mode or self.settings.placeholder_mode,
            path=rel if rel is not None else (str(path) if path is not None else None),
            project=project,
            scripts=scripts,
            options={"extra_globals": self.extra_globals(rel if rel is not None else path),
                     "language_mode": self.language_mode(rel, lex),
                     # rules the nearest .luaurc's "lint" settings turn off for this file
                     "luaurc_off": luaurc_disabled_rules(self.luau_config(rel)) if rel is not None else frozenset()},
            in_datamodel=not (project is not None and rel is not None and project.outside_datamodel(rel)),
            plugin=self.plugin_project,
        )
        ref = weakref.ref(ctx)  # (no reference cycle: the context is freed by reference counting)
        snapshot = ctx.snapshot = self.snapshot
        ctx.rel = rel
        root = self.root

        def view():
            c = ref()  # (read when the checks run: a caller may set the file's rel and scripts first)
            abs_path = root / c.rel if (c.rel is not None and root is not None) else None
            return snapshot.view(text, abs_path, c.scripts, lambda: getattr(ref(), "ast", None))

        ctx.view = view
        ctx.ast = ast
        return ctx

    def lint_text(self, text: str, path: str | Path | None = None, *, mode: str | None = None,
                  count: bool = True) -> list[Finding]:
        """Findings for ``text`` as the content of ``path`` (which need not exist).

        ``mode`` is ``"editor"`` or ``"patch"`` (default: the ``placeholder_mode``
        setting).  Findings are sorted by position; ``file`` is set to ``path`` as
        given; ``count``: add them to :attr:`stats` (the language server counts the lints
        of open documents itself, once per document version).  Never raises on any text: an internal failure of the front end or of a
        check becomes an ``internal_error`` finding and the other checks still run.
        """
        return self.analyse(text, path, mode=mode, count=count).findings

    def analyse(self, text: str, path: str | Path | None = None, *, mode: str | None = None,
                count: bool = True) -> "Analysis":
        """:meth:`lint_text`, and whether Luau's grammar accepts ``text`` whatever rules are
        selected or suppressed (what :mod:`luaguard.fixes` needs before it edits a file)."""
        display = str(path) if path is not None else None
        with _gc_paused():
            try:
                ctx = self.make_context(text, path, mode=mode)
            except Exception as exc:  # pragma: no cover - a bug, reported not raised
                log.exception("luaguard: failed to read %s", display)
                f = _file_problem(display or "-", INTERNAL_ERROR, f"luaguard could not analyse this file: {exc!r}")
                return Analysis([f], parses=False)
            parses = not ctx.lex.errors and ctx.ast is not None and not ctx.ast.errors
            findings = self.run_checks(ctx, display_path=display, count=count)
            # Free the tokens and the tree (no reference cycles: reference counting does
            # it) before the collector is back, so it has nothing large to scan.
            del ctx
        return Analysis(findings, parses)

    def run_checks(self, ctx: CheckContext, display_path: str | None = None, *, count: bool = True) -> list[Finding]:
        """Run every enabled check on a prepared context (``count``: see :meth:`lint_text`)."""
        settings = self.settings
        out: list[Finding] = []
        unselected: list[Finding] = []  # (a suppression that silences one of these is used)
        ran: set[str] = set()
        off = ctx.options.get("luaurc_off") or frozenset()  # (as if ignored for this file)
        for check in self.checks:
            if not any(settings.rule(r).enabled and r not in off for r in check.rules):
                continue
            ran.update(r for r in check.rules if settings.rule(r).enabled and r not in off)
            try:
                found = check.check(ctx)
            except Exception as exc:  # a bug in one check must not hide the others
                log.exception("luaguard: check %s failed", type(check).__name__)
                found = [_file_problem(display_path or "-", INTERNAL_ERROR, f"{type(check).__name__} failed: {exc!r}", Severity.WARNING)]
            for f in found:
                rs = settings.rule(f.rule)
                if not rs.enabled or f.rule in off:
                    continue
                if not ctx.in_datamodel and f.rule in ROBLOX_API_RULES and f.severity is Severity.ERROR \
                        and not f.data.get("impossible"):
                    f.severity = Severity.WARNING  # the file's host may not be Roblox
                if rs.severity is not None:
                    f.severity = rs.severity
                if not settings.selects(f.rule, f.severity):
                    unselected.append(f)
                    continue  # select / ignore / errors_only
                out.append(f)
        out = merge_syntax(out)
        from .config import known_rule_ids

        known = known_rule_ids()
        sup = parse_suppressions(ctx, known)
        if sup.allows_ or sup.unknown:
            out = [f for f in out if not sup.allows(f)]
            for f in unselected:
                sup.allows(f)
            for f in suppression_findings(ctx, sup, ran, known):
                rs = settings.rule(f.rule)
                if not rs.enabled:
                    continue
                if rs.severity is not None:
                    f.severity = rs.severity
                if settings.selects(f.rule, f.severity) and not sup.allows(f, mark=False):
                    out.append(f)
        for f in out:
            f.file = display_path
            if count:
                self.stats[f.rule] += 1
        out.sort(key=lambda f: (f.range.start.line, f.range.start.character, f.rule))
        return out

    def lint_bytes(self, data: bytes, path: str | Path, *, count: bool = True) -> list[Finding]:
        """Decode file bytes (BOM, invalid UTF-8, binary, size limit) and lint them
        (``count``: see :meth:`lint_text`)."""
        decoded = decode_source(data)
        if decoded.text is None:
            return self._selected([_file_problem(path, "unreadable_file", decoded.problem or "not a text file")])
        findings = self.lint_text(decoded.text, path, count=count)
        if decoded.invalid_utf8_offset is not None and self.settings.selects("invalid_utf8", Severity.WARNING):
            lines = LineIndex(decoded.text)
            pos = lines.position(decoded.invalid_utf8_offset)
            f = _file_problem(path, "invalid_utf8", f"File is not valid UTF-8 (first bad byte on line {pos.line + 1}); invalid bytes were read as U+FFFD", Severity.WARNING)
            f.range = lines.range(decoded.invalid_utf8_offset, decoded.invalid_utf8_offset + 1)
            findings.insert(0, f)
        return findings

    def lint_file(self, path: str | Path) -> list[Finding]:
        """Read and lint one file; an unreadable file is one finding, not an exception.  A
        path inside the project root is read only if it resolves inside it, and only a
        regular file within the size limit (:func:`luaguard.files.read_bytes`)."""
        data, why = read_for_lint(path, self.root)
        return self.unreadable(path, why) if data is None else self.lint_bytes(data, path)

    def unreadable(self, path: str | Path, why: str) -> list[Finding]:
        """The one ``unreadable_file`` finding for ``path`` (if selected): ``why`` it was not read."""
        return self._selected([_file_problem(path, "unreadable_file", why)])

    def _selected(self, findings: list[Finding]) -> list[Finding]:
        return [f for f in findings if self.settings.selects(f.rule, f.severity)]


@dataclass
class Analysis:
    """The result of :meth:`Engine.analyse`: the findings, and whether the text parses
    (no lexer or parser error, whatever the rule settings)."""

    findings: list[Finding]
    parses: bool


class ProjectUnreadable(Exception):
    """:func:`open_engine` could not read a project: ``str()`` is the reason (the config
    file's or the project file's error)."""


def read_for_lint(path: str | Path, root: Path | None) -> tuple[bytes | None, str]:
    """A file's bytes for a lint as ``(data, "")``, or ``(None, why)`` when it is not read:
    a path spelled inside ``root`` is read only if it resolves inside it, and only a regular
    file within the size limit (:func:`luaguard.files.read_bytes`)."""
    from .files import Refused, lexically_inside, read_bytes

    inside = root if root is not None and lexically_inside(path, root) else None
    try:
        return read_bytes(path, root=inside), ""
    except Refused as exc:
        return None, exc.why
    except (OSError, ValueError) as exc:
        return None, f"cannot read file: {getattr(exc, 'strerror', None) or exc}"


def project_relpath(root: Path, path: str | Path | None) -> str | None:
    """``path`` - a project file, absolute or relative to ``root`` - as a POSIX path
    relative to ``root``; ``None`` when it is not given or lies outside the root (``..``
    that climbs out, an absolute path elsewhere).  A relative path is read against
    ``root``, never against the process's working directory (a serving worker or an
    editor's server may run anywhere).  An absolute path that only symbolic links bring
    inside the root is compared with the links resolved."""
    if path is None:
        return None
    text = os.fspath(path)
    if not text.strip():
        return None
    p = Path(text)
    root = Path(root)
    full = p if p.is_absolute() else root / p
    try:
        rel = Path(os.path.normpath(full)).relative_to(os.path.normpath(root))
    except ValueError:
        if not p.is_absolute():
            return None  # (a relative path that climbs out of the root)
        try:
            rel = Path(os.path.realpath(full)).relative_to(os.path.realpath(root))
        except (ValueError, OSError):
            return None
    return rel.as_posix() if rel.parts else None  # (the root itself is no file)


def open_engine(root: Path, *, require_index: bool = False) -> Engine:
    """An :class:`Engine` for the project at ``root`` with its ``luaguard.toml`` settings
    and its index loaded - what a front end that cannot stop on a usage error (the agent
    hook, a serving worker) needs.  Raises :class:`ProjectUnreadable` for a config file that
    is not valid TOML, a broken project file, or (``require_index``) no project file at all
    (no ``default.project.json``, single ``*.project.json`` or ``sourcemap.json`` in the
    root: :func:`~luaguard.project.index.load_project` would index it as an empty, open
    DataModel, which guards nothing).
    """
    from .workspace import read_project_settings

    result = read_project_settings(root)
    if result.error:
        raise ProjectUnreadable(result.error)
    engine = Engine(root, result.settings)
    project = engine.project
    if project is None and engine.project_error:
        raise ProjectUnreadable(engine.project_error)
    if require_index and (project is None or project.kind == "none"):
        why = "; ".join(p.message for p in (project.problems if project is not None else ()) if p.file == ".")
        raise ProjectUnreadable(f"no project file in {engine.root} (default.project.json, one *.project.json or "
                                f"sourcemap.json)" + (f": {why}" if why else ""))
    return engine


def merge_syntax(findings: Iterable[Finding]) -> list[Finding]:
    """Keep one report per syntax mistake.

    The structure check names an unclosed bracket or block at its opener; the parser
    notices the same mistake later and may cascade.  When structure findings exist,
    parser errors that restate a match failure, or that lie inside the span from an
    unclosed opener to where it was detected, are dropped.  A parser error on a ``...``
    the placeholder check reports is dropped too.  Exact duplicates go.
    """
    findings = list(findings)
    spans = [f.data["span"] for f in findings if "span" in f.data]
    placeholders = {f.start for f in findings if f.data.get("supersedes_syntax")}
    out = []
    seen = set()
    for f in findings:
        if f.data.get("from_parser"):
            if spans and (f.data.get("matching") or any(s <= f.start <= e for s, e in spans)):
                continue
            if f.start in placeholders:
                continue  # "Cannot use '...' outside of a vararg function": the placeholder says why
        key = (f.rule, f.range.start, f.range.end, f.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out


def _file_problem(path: str | Path, rule: str, message: str, severity: Severity = Severity.ERROR) -> Finding:
    from .findings import Position, Range

    zero = Position(0, 0)
    return Finding(rule, severity, Range(zero, zero), message, file=str(path))


def _read_text(path: Path) -> str | None:
    """A project script's text for the run-time names (the index maps only files inside the
    root: read only a regular file, within the size limit); ``None`` when unreadable."""
    from .files import read_bytes

    try:
        data = read_bytes(path)
    except (OSError, ValueError):  # ValueError: a NUL or an unpaired surrogate in the name
        return None
    return decode_source(data).text
