"""The functions front ends call (CLI ``luaguard validate`` / ``check --diff``, and the LSP
commands).  Every result is JSON-able.

LSP commands (thin wrappers; ``engine`` is the server's :class:`~luaguard.engine.Engine`;
:func:`validate_patch`, :func:`validate_changes`, :func:`patch_report` and
:func:`lint_report` also take a :class:`~luaguard.projects.ProjectSet`, and then judge each
file under the projects that map it):

``luaguard.validateToolCall(input)`` -> ``validate_calls(engine, input)``
    ``input``: a JSON string (one call, an array, JSONL, an OpenAI message with
    ``tool_calls``, a plan) or the same already parsed (object / array).  Returns
    ``list[CallDict]``, one per call in input order::

        CallDict = {
          "valid": bool,                      # no errors
          "errors":   [ErrorDict, ...],       # make the call invalid
          "warnings": [ErrorDict, ...],       # worth telling the model, not fatal
          "feedback": str,                    # one bounded message for the model (<= 1500 chars)
          "tool": str | None,                 # the tool's name as resolved (None if unknown)
          "index": int,                       # 0-based position among the input's calls
          "line": int | None,                 # 1-based input line the call's JSON starts on
          "id": str | int | None,             # OpenAI/Anthropic tool-call id
          "step": str | int | None,           # plan step id
        }
        ErrorDict = {"code": str, "message": str, "field": str | None,
                     "suggestions": [str, ...], "range": LspRange | None}

    ``code`` is one of ``unknown_tool missing_field invalid_argument unknown_path
    path_outside_project unknown_class unknown_property wrong_property_type
    low_confidence unknown_dependency self_dependency forward_dependency
    dependency_cycle`` (calls and plans), ``invalid_json invalid_call`` (input that is
    not a call), ``deprecated_property`` (warning), or a code-check rule id
    (``placeholder``, ``syntax_error``, ``unknown_instance`` ...) for a finding in the
    call's Luau content, whose ``range`` is then the LSP range inside that content.
    Raises :class:`~.schemas.ToolSchemaError` when the configured tools file cannot be
    read or is not JSON.

``luaguard.validatePatch(uri, content=None, diff=None)`` -> ``validate_patch(engine, uri, content, diff)``
    ``uri``: a ``file://`` URI, an absolute path inside the project, a root-relative path
    or an instance path (may be ``None`` when ``diff`` has file headers).  With
    ``content``: lint it as the file's full new text.  With ``diff``: apply the unified
    diff in memory and report changed regions (see :mod:`.diffs`).  With neither: lint
    the file on disk in patch mode.  Returns::

        {"valid": bool, "errors": [ErrorDict + {"file": str | None}], "warnings": [...],
         "feedback": str,
         "files": [{"path": str, "status": "modified" | "added" | "deleted",
                    "findings": [Finding.to_json(), ...]}]}

``validate_changes(engine, changes)`` (the agent hook)
    changes given as texts (:class:`~.diffs.TextChange`: old and new path, new text,
    optionally the old text), judged like a diff: only what the change introduced; the
    same shape as ``validatePatch``.

``luaguard.stats()`` -> ``stats(engine)``
    ``{"rules": {code: count}, "toolcalls": {"calls", "valid", "invalid", "patches",
    "invalid_patches"}}`` over the engine's life.  ``rules`` is ``engine.stats``: the
    code checks' findings plus the tool-call codes counted here.
"""

from __future__ import annotations

import os
import re
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable
from urllib.parse import unquote, urlparse

from ..findings import Severity, format_text
from . import model as M
from .calls import CallContext, NameIndex, apply_effects
from .diffs import DiffReport, FileResult, TextChange, check_changes, check_content, check_diff
from .feedback import feedback_for, patch_feedback
from .model import CallResult, Problem
from .overlay import DirMap, Overlay
from .plans import check_plan, check_sequence
from .reader import read_calls
from .schemas import ToolSet, build_toolset


@dataclass
class _State:
    toolset: ToolSet | None = None
    key: Any = None
    dirmap: DirMap = field(default_factory=DirMap)
    names: NameIndex = field(default_factory=NameIndex)
    counts: dict[str, int] = field(default_factory=lambda: {
        "calls": 0, "valid": 0, "invalid": 0, "patches": 0, "invalid_patches": 0})


_STATES: "weakref.WeakKeyDictionary[Any, _State]" = weakref.WeakKeyDictionary()


def _state(engine) -> _State:
    engine = getattr(engine, "primary", engine)  # a ProjectSet keeps its counts on its primary engine
    st = _STATES.get(engine)
    if st is None:
        st = _State()
        _STATES[engine] = st
    return st


def _mtime(p: Path) -> float | None:
    try:
        return p.stat().st_mtime
    except OSError:
        return None


def toolset(engine, extra_files: Iterable[str | os.PathLike] = ()) -> ToolSet:
    """The engine's tool set (built-ins + configured tools + ``extra_files``), cached
    until the settings or a tools file's modification time change.  Raises
    :class:`~.schemas.ToolSchemaError` for an unreadable tools file."""
    st = _state(engine)
    settings = engine.settings.toolcalls
    extras = tuple(Path(p) for p in extra_files)
    files = list(extras)
    if settings.tools_file:
        tf = Path(settings.tools_file)
        files.append(tf if tf.is_absolute() or engine.root is None else engine.root / tf)
    key = (settings, engine.root, extras, tuple(_mtime(p) for p in files))
    if st.toolset is None or st.key != key:
        st.toolset = build_toolset(settings, engine.root, extras)
        st.key = key
    return st.toolset


def _context(engine, ts: ToolSet, session: CallSession | None = None) -> CallContext:
    st = _state(engine)
    s = engine.settings.toolcalls
    ctx = CallContext(engine=engine, toolset=ts, project=engine.project, min_confidence=s.min_confidence,
                      max_content_bytes=getattr(s, "max_content_bytes", 512 * 1024), dirmap=st.dirmap, names=st.names)
    if session is not None:
        ctx.overlay, ctx.deleted, ctx.defer_effects = session.overlay, session.deleted, True
    return ctx


@dataclass
class CallSession:
    """What outlives one batch of calls: an MCP proxy session's view of the calls it
    forwarded (created, renamed, moved, deleted instances; script sources it sent).
    ``overlay`` is a copy-on-write view over the engine's index (never changed)."""

    overlay: Overlay
    deleted: dict[str, str] = field(default_factory=dict)


def new_session(engine) -> CallSession | None:
    """A fresh :class:`CallSession` for ``engine``'s project (``None`` without one)."""
    if engine.project is None:
        return None
    return CallSession(Overlay(engine.project, _state(engine).dirmap))


def check_calls(engine, data: Any, *, extra_tool_files: Iterable[str | os.PathLike] = (),
                tools: ToolSet | None = None, session: CallSession | None = None) -> list[CallResult]:
    """Like :func:`validate_calls` but returns :class:`~.model.CallResult` objects;
    ``tools``: check against this tool set instead of the engine's (an MCP proxy's
    upstream tools).  ``session``: later batches see what earlier ones did, once the
    caller applies each result's effects with :func:`commit_effects` (they are deferred)."""
    ts = tools if tools is not None else toolset(engine, extra_tool_files)
    st = _state(engine)
    results: list[CallResult] = []
    for batch in read_calls(data):
        ctx = _context(engine, ts, session)
        if batch.kind == "plan":
            out = check_plan(ctx, batch)
        else:
            out = check_sequence(ctx, batch)
        results.extend(out)
    for r in results:
        r.feedback = feedback_for(r)
        st.counts["calls"] += 1
        st.counts["valid" if r.valid else "invalid"] += 1
        for p in (*r.errors, *r.warnings):
            if not p.from_content:
                engine.stats[p.code] += 1
    return results


def commit_effects(engine, session: CallSession, result: CallResult) -> None:
    """Apply ``result``'s deferred effects to ``session`` (the upstream carried it out)."""
    if result.effects:
        ctx = _context(engine, toolset(engine), session)
        ctx.defer_effects = False
        apply_effects(ctx, result.effects)
        result.effects = []


def validate_calls(engine, text_or_obj: Any, *, extra_tool_files: Iterable[str | os.PathLike] = (),
                   tools: ToolSet | None = None) -> list[dict]:
    """Validate every call in ``text_or_obj``; see the module docstring for the shape
    (``tools``: see :func:`check_calls`)."""
    return [r.to_json() for r in check_calls(engine, text_or_obj, extra_tool_files=extra_tool_files, tools=tools)]


def uri_to_path(uri: str) -> str:
    """A ``file://`` URI as a local path (other strings are returned unchanged)."""
    if not uri.startswith("file:"):
        return uri
    path = unquote(urlparse(uri).path)
    if re.match(r"^/[A-Za-z]:[/\\]", path):
        path = path[1:]
    return path


def patch_report(engine, uri_or_path: str | None, content: str | None = None, diff: str | None = None) -> DiffReport:
    """The :class:`~.diffs.DiffReport` behind :func:`validate_patch` (the CLI prints it).
    ``engine``: an :class:`~luaguard.engine.Engine`, or a
    :class:`~luaguard.projects.ProjectSet` (each file judged under the projects that map it)."""
    return judged_report(engine, lambda e: _patch_report(e, uri_or_path, content, diff))


def judged_report(engine, run: Callable[[Any], DiffReport]) -> DiffReport:
    """``run(engine)``; for a :class:`~luaguard.projects.ProjectSet`, ``run`` under its
    primary engine (which names the files) and under every other project that maps one of
    them, each file's findings merged as :meth:`luaguard.projects.ProjectSet.merge` says,
    counted once into the stats."""
    from collections import Counter

    from ..projects import ProjectSet

    if not isinstance(engine, ProjectSet):
        return run(engine)
    projects = engine
    if not projects.others:
        return run(projects.primary)

    def quiet(e) -> DiffReport:
        saved = e.stats
        e.stats = Counter()
        try:
            return run(e)
        finally:
            e.stats = saved

    base = quiet(projects.primary)
    root = projects.root
    judges = {fr.path: projects.engines_for(root / fr.path) if root is not None else [projects.primary]
              for fr in base.files}
    reports = {id(projects.primary): base}
    for js in judges.values():
        for e in js:
            if id(e) not in reports:
                reports[id(e)] = quiet(e)
    merged = DiffReport(problems=list(base.problems))
    for fr in base.files:
        used, lists = [], []
        for e in judges[fr.path]:
            other = next((x for x in reports[id(e)].files if x.path == fr.path), None)
            if other is not None:
                used.append(e)
                lists.append(other.findings)
        kept = projects.merge(used, lists) if lists else fr.findings
        merged.files.append(FileResult(fr.path, fr.status, kept, fr.text, fr.changed_lines))
    for f in merged.findings:
        projects.stats[f.rule] += 1
    return merged


def _patch_report(engine, uri_or_path: str | None, content: str | None, diff: str | None) -> DiffReport:
    st = _state(engine)
    path = uri_to_path(uri_or_path) if uri_or_path else None
    if diff is not None:
        return check_diff(engine, diff, path, st.dirmap)
    if path is None:
        report = DiffReport()
        from .diffs import _problem

        report.problems.append(_problem(M.INVALID_ARGUMENT, "validatePatch needs a uri (or a diff with file headers).", None))
        engine.stats[M.INVALID_ARGUMENT] += 1
        return report
    if content is None:
        from .diffs import _read, _resolve_file

        probe: list = []
        rel = _resolve_file(engine, path, probe)
        text = _read(engine, rel) if rel is not None else None
        if text is None:
            report = DiffReport(problems=probe)
            if not probe:
                from .diffs import _problem

                report.problems.append(_problem(M.UNKNOWN_PATH, f"{path}: no such file in the project.", path))
            for p in report.problems:
                engine.stats[p.rule] += 1
            return report
        content = text
    return check_content(engine, path, content, st.dirmap)


def validate_patch(engine, uri_or_path: str | None, content: str | None = None, diff: str | None = None) -> dict:
    """Check a proposed change to one file (full ``content`` or a unified ``diff``); see
    the module docstring for the returned shape."""
    report = patch_report(engine, uri_or_path, content, diff)
    return _patch_result(engine, report, uri_or_path or "the diff")


def validate_changes(engine, changes: Iterable[TextChange], *, written: bool = False) -> dict:
    """Check changes given as whole texts (an agent's ``Write``/``Edit``/``apply_patch``
    applied in memory: :class:`~.diffs.TextChange`): each changed Luau file is judged on
    what the change introduced (a new file whole), as ``check --diff`` judges a diff.
    Returns :func:`validate_patch`'s shape; ``written``: the changes are already on disk
    (the feedback asks for a follow-up edit instead of a retry)."""
    changes = list(changes)
    report = judged_report(engine, lambda e: check_changes(e, changes, _state(e).dirmap))
    return _patch_result(engine, report, "the change", written=written)


def _patch_result(engine, report: DiffReport, fallback: str, *, written: bool = False) -> dict:
    errors: list[Problem] = []
    warnings: list[Problem] = []
    out_errors: list[dict] = []
    out_warnings: list[dict] = []
    for f in report.findings:
        where = f"{f.file}:{f.range.start.line + 1}: " if f.file else ""
        p = Problem(f.rule, where + f.message, None, tuple(f.suggestions),
                    severity=Severity.ERROR if f.severity is Severity.ERROR else Severity.WARNING,
                    range=f.range.to_json() if f.file else None)
        d = {**p.to_json(), "file": f.file}
        if p.severity is Severity.ERROR:
            errors.append(p)
            out_errors.append(d)
        else:
            warnings.append(p)
            out_warnings.append(d)
    st = _state(engine)
    st.counts["patches"] += 1
    if errors:
        st.counts["invalid_patches"] += 1
    named = [f for f in report.files if f.findings] if written else []
    shown = ", ".join(f.path for f in (named or report.files)) or fallback
    return {
        "valid": not errors,
        "errors": out_errors,
        "warnings": out_warnings,
        "feedback": patch_feedback(shown, errors, warnings, written=written),
        "files": [{"path": f.path, "status": f.status, "findings": [x.to_json() for x in f.findings]}
                  for f in report.files],
    }


def stats(engine) -> dict:
    """Counts over the engine's life; see the module docstring."""
    st = _state(engine)
    return {"rules": dict(sorted(engine.stats.items())), "toolcalls": dict(st.counts)}


def resolve_path(engine, path: str) -> dict:
    """Whether the instance ``path`` (``game.ReplicatedStorage.Shared.Util``,
    ``ReplicatedStorage.Shared``, ``workspace.Map``) exists in the project's DataModel::

        {"path": str, "exists": bool, "className": str | None, "children": [str, ...],
         "filePaths": [str, ...], "open": str | None,        # for an existing instance
         "resolved": str | None, "missing": str | None,      # deepest existing node, first missing name
         "suggestions": [str, ...], "feedback": str}

    ``open`` is why children not in the project may exist at run time (then a missing name
    is not certainly wrong).  Without a project every path is unknown (``exists`` false,
    ``feedback`` says so).  Never raises.
    """
    from ..fuzzy import rank

    project = engine.project
    out: dict = {"path": path, "exists": False, "className": None, "children": [], "filePaths": [], "open": None,
                 "resolved": None, "missing": None, "suggestions": []}
    if project is None:
        out["feedback"] = f"No project is loaded, so '{path}' cannot be checked."
        return out
    node, rest = project.resolve_partial(path)
    if node is not None and not rest:
        kids = [c.name for c in node.all_children()]
        out.update(exists=True, className=node.class_name, children=kids, filePaths=list(node.file_paths),
                   open=node.open_reason, resolved=node.path)
        listing = ", ".join(kids[:30]) + (f" and {len(kids) - 30} more" if len(kids) > 30 else "")
        out["feedback"] = f"{node.path} exists ({node.class_name}). Children: {listing or '(none)'}."
        return out
    if node is None:
        first = rest[0] if rest else path
        names = ["game", "workspace", *sorted(project.api.services)]
        out["missing"] = first
        out["suggestions"] = [c for c, _ in rank(first, names)]
        hint = f" Did you mean {out['suggestions'][0]}?" if out["suggestions"] else ""
        out["feedback"] = f"'{path}' does not start at game, workspace or a service.{hint}"
        return out
    missing = rest[0]
    kids = [c.name for c in node.all_children()]
    out.update(resolved=node.path, missing=missing, open=node.open_reason,
               suggestions=[c for c, _ in rank(missing, kids)], className=None)
    hint = f" Did you mean {node.path}.{out['suggestions'][0]}?" if out["suggestions"] else ""
    if node.open_reason:
        out["feedback"] = (f"{node.path} has no child '{missing}' in the project, but may get one at run time "
                           f"({node.open_reason}).{hint}")
    else:
        out["feedback"] = f"Path {path} does not exist: {node.path} has no child '{missing}'.{hint}"
    return out


def project_tree(engine, root: str | None = None, depth: int | None = None) -> dict:
    """The project's instance tree (the shape of ``luaguard index --format json``), from
    the instance ``root`` (default: the whole DataModel) down ``depth`` levels (``None``:
    all; cut nodes carry ``"more": <number of children>``).  ``{"error": str}`` when there is
    no project or ``root`` does not exist.  Never raises."""
    project = engine.project
    if project is None:
        return {"error": "no project is loaded"}
    node = project.root
    if root:
        node, rest = project.resolve_partial(root)
        if node is None or rest:
            return {"error": resolve_path(engine, root)["feedback"]}
    limit = depth if isinstance(depth, int) and depth >= 0 else None

    def as_dict(n, level: int) -> dict:
        d: dict = {"name": n.name, "className": n.class_name}
        if n.file_paths:
            d["filePaths"] = list(n.file_paths)
        if n.open_reason:
            d["open"] = n.open_reason
        kids = n.all_children()
        if kids:
            if limit is not None and level >= limit:
                d["more"] = len(kids)
            else:
                d["children"] = [as_dict(c, level + 1) for c in kids]
        return d

    out = as_dict(node, 0)
    out["path"] = node.path
    return out


def lint_report(engine, path: str, content: str | None = None) -> dict:
    """Editor-mode findings for ``content`` as the project file ``path`` (root-relative or
    absolute inside the root; ``None`` content: the file on disk), as ``luaguard check
    --format json`` gives them::

        {"path": str, "valid": bool, "findings": [Finding.to_json(), ...], "feedback": str}

    ``{"path", "error", "errors", "feedback"}`` when the file cannot be read: a path outside
    the project root (``..``, absolute elsewhere, a link leading out: the code
    ``path_outside_project``, as patch mode gives), not a regular file, over the size limit
    (:mod:`luaguard.files`).  Without a project, only ``content`` is checked.  Never raises."""
    from ..files import OUTSIDE, Refused, confine, read_bytes

    def refused(code: str, msg: str) -> dict:
        return {"path": path, "valid": False, "error": msg,
                "errors": [{"code": code, "message": msg}], "feedback": f"{msg} ({code})"}

    p = Path(uri_to_path(path))
    if engine.root is not None and not p.is_absolute():
        p = engine.root / p
    if engine.root is not None:
        try:
            confine(p, engine.root)
        except Refused:
            return refused(M.PATH_OUTSIDE_PROJECT, f"{path}: the path is outside the project root; luaguard checks "
                                                   "only the project's files")
    if content is None:
        if engine.root is None:
            return refused(M.INVALID_ARGUMENT, f"{path}: no project is open: pass the file's content to check it")
        try:
            data = read_bytes(p, root=engine.root)
        except Refused as exc:
            code = M.PATH_OUTSIDE_PROJECT if exc.reason == OUTSIDE else M.INVALID_ARGUMENT
            return refused(code, f"{path}: {exc.why}")
        except (OSError, ValueError) as exc:
            msg = f"{path}: cannot read file: {getattr(exc, 'strerror', None) or exc}"
            return {"path": path, "error": msg, "feedback": msg}
        findings = engine.lint_bytes(data, p)
    else:
        findings = engine.lint_text(content, p, mode="editor")
    shown = engine.relpath(p) or path
    for f in findings:
        f.file = shown
    errors = [f for f in findings if f.severity is Severity.ERROR]
    lines = [format_text(f) for f in findings[:40]]
    if len(findings) > 40:
        lines.append(f"... and {len(findings) - 40} more")
    return {"path": shown, "valid": not errors, "findings": [f.to_json() for f in findings],
            "feedback": "\n".join(lines) or f"{shown}: no problems found."}
