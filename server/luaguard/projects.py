"""Several Rojo projects in one repository: which projects judge a file, and one verdict.

A repository often holds more than one project file (:mod:`luaguard.project.discover`): a
game and a ``plugin/default.project.json`` beside it, a library's package build and the
``test.project.json`` place its tests run in, a monorepo's packages.  Each script runs
wherever the projects that map it put it, so each is judged under those projects.
:class:`ProjectSet` holds one :class:`~luaguard.engine.Engine` per project (an engine stays
one project) and is what the front ends lint through: ``luaguard check``, the language
server, the agent hook and the MCP server (:func:`luaguard.toolcalls.api.patch_report`).

The rule:

1. **Projects**: every ``*.project.json(c)`` under the project root (not in Wally's
   ``_Index``, ``node_modules``, version-control folders or the ``exclude`` globs), and the
   root's own choice as before (``default.project.json``, else the only
   ``*.project.json``, else ``sourcemap.json``): the *primary* project.  A
   ``project_file`` or ``sourcemap_file`` setting (``--project-file``, ``--sourcemap``)
   pins that one project: no other is read.
2. **Judges of a file**: the projects whose instance tree holds it - a file they map, or a
   file (existing or not) inside a folder they sync, by Rojo's rules.  A file that no
   project maps is judged as before, by the primary project alone.
3. **One verdict**: the file is linted under each judge.  The judges are *places* (a tree
   rooted at a ``DataModel``: a game, a test or dev place) and *package builds* (a library
   or plugin mapped as one ``ModuleScript`` or ``Folder``, inserted into places the
   repository does not show).  A finding - the same rule at the same place in the text;
   for a name looked up in the instance tree, ``unknown_instance``,
   ``likely_unknown_instance`` and ``unknown_member`` count as one - is reported once, when
   **every place** among the judges reports it (with no place among them: when a package
   build does), at the lowest severity a judge gives it, with that judge's message and
   suggestions.  A package build that maps the file and does not report it makes it **at
   most a warning** (the places the package is inserted into may hold the name), saying
   so.  Its fix is safe only when every judge offers the same safe fix.  So a name that
   exists in one place that runs the script is not hallucinated, and a name every place
   lacks stays flagged, an error where every package build that ships the file agrees.
   The lints stop at the first place that finds nothing, so a clean file in a place costs
   one lint; ``internal_error`` findings of every judge linted are kept.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Sequence

from .config import Settings
from .engine import INTERNAL_ERROR, Analysis, Engine, read_for_lint
from .findings import Finding, Severity

__all__ = ["NAME_RULES", "ProjectSet", "merge_findings", "open_projects"]

#: Rules that judge one name against a project's instance tree: the same name may get one
#: of them in one project and another in the next (a missing child under a closed node, a
#: near miss under an open one, a name on a value of known class) - the same finding.
NAME_RULES = frozenset({"unknown_instance", "likely_unknown_instance", "unknown_member"})


def _key(f: Finding) -> tuple:
    return ("name" if f.rule in NAME_RULES else f.rule, f.range.start)


def _weakest(candidates: list[Finding]) -> Finding:
    """The finding of the judge that says least (the lowest severity; the first on a tie),
    with a fix that is safe only when every judge offers the same safe fix."""
    chosen = max(candidates, key=lambda f: int(f.severity))  # ERROR = 1 ... HINT = 4
    fix = chosen.fix
    if fix is not None and fix.safe:
        same = all(c.fix is not None and c.fix.safe and c.fix.range == fix.range and c.fix.new_text == fix.new_text
                   for c in candidates)
        if not same:
            chosen = replace(chosen, fix=replace(fix, safe=False))
    return chosen


def merge_findings(per_judge: Sequence[list[Finding]], places: Sequence[bool] | None = None,
                   names: Sequence[str] | None = None) -> list[Finding]:
    """One list of findings from the lints of one text under several projects (rule 3 of
    the module docstring).  ``places[i]``: judge ``i`` is a place (default: every judge
    counts as one); ``names[i]``: its project file, for the message of a finding a package
    build did not confirm.  Sorted as an engine sorts (line, column, rule);
    ``internal_error`` findings of every judge are kept.  One list: returned as is.  The
    inputs are left unchanged."""
    if not per_judge:
        return []
    n = len(per_judge)
    if n == 1:
        return list(per_judge[0])
    flags = list(places) if places is not None else [True] * n
    # the same finding in each judge's list: the k-th of its key (rule family, start)
    groups: dict[tuple, dict[int, Finding]] = {}
    out: list[Finding] = []
    seen_internal: set = set()
    for i, found in enumerate(per_judge):
        counts: Counter = Counter()
        for f in found:
            if f.rule == INTERNAL_ERROR:
                if (f.range.start, f.message) not in seen_internal:
                    seen_internal.add((f.range.start, f.message))
                    out.append(f)
                continue
            key = _key(f)
            groups.setdefault((key, counts[key]), {})[i] = f
            counts[key] += 1
    for by_judge in groups.values():
        if any(flags[i] and i not in by_judge for i in range(n)):
            continue  # a place accepts the name
        chosen = _weakest([by_judge[i] for i in sorted(by_judge, key=lambda i: (not flags[i], i))])  # a place's words first
        silent = [names[i] if names is not None else f"project {i + 1}" for i in range(n) if i not in by_judge]
        out.append(_unconfirmed(chosen, silent) if silent else chosen)
    out.sort(key=lambda f: (f.range.start.line, f.range.start.character, f.rule))
    return out


def _unconfirmed(f: Finding, packages: list[str]) -> Finding:
    """``f``, which every place reports and the package builds ``packages`` do not: at most
    a warning, its fix never safe (the package is inserted into places the repository does
    not show, where the name may exist)."""
    fix = replace(f.fix, safe=False) if f.fix is not None and f.fix.safe else f.fix
    if f.severity is not Severity.ERROR:
        return replace(f, fix=fix) if fix is not f.fix else f
    which = ", ".join(packages)
    return replace(f, severity=Severity.WARNING, fix=fix,
                   message=f"{f.message} (a warning, not an error: {which} also maps this file, into places "
                           "the repository does not show)")


class ProjectSet:
    """The projects of one repository (see the module docstring), one
    :class:`~luaguard.engine.Engine` each, sharing the settings and one :attr:`stats`
    counter.  Lints like an engine (:meth:`lint_text`, :meth:`lint_bytes`,
    :meth:`lint_file`, :meth:`analyse` - so :func:`luaguard.fixes.fix_text` takes it), each
    file under the projects that map it.

    ``primary``: the engine of the root's own project as before (given, or built for
    ``root`` and ``settings``; ``Engine(None)``: no project at the root).  The other
    projects are read by :meth:`load_others`; :attr:`problems` then names the project
    files that could not be read (skipped) and those left out over
    :data:`~luaguard.project.discover.MAX_PROJECT_FILES`.  Not thread-safe, like an engine.
    """

    def __init__(self, root: Path | None = None, settings: Settings | None = None, *,
                 primary: Engine | None = None) -> None:
        self.primary = primary if primary is not None else Engine(root, settings)
        root = root if root is not None else self.primary.root
        self.root = root.resolve() if root is not None else None
        self.others: list[Engine] = []
        self.problems: list[str] = []

    # -- the projects ----------------------------------------------------------------
    @property
    def engines(self) -> list[Engine]:
        """The primary engine, then one per other project file (in discovery order)."""
        return [self.primary, *self.others]

    @property
    def settings(self) -> Settings:
        return self.primary.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        for engine in self.engines:
            engine.settings = settings

    @property
    def stats(self) -> Counter:
        """Findings by rule over every project's lints (one counter, shared)."""
        return self.primary.stats

    @property
    def project(self):
        """The primary project's index (``None``: none) - what single-project callers read."""
        return self.primary.project

    @property
    def project_error(self) -> str | None:
        return self.primary.project_error

    @property
    def pinned(self) -> bool:
        """Does the configuration name one project file or sourcemap (rule 1)?"""
        s = self.settings
        return bool(s.project_file or s.sourcemap_file)

    def load_others(self) -> None:
        """(Re)read every other project file under the root (rule 1 of the module
        docstring): each gets an engine; one that cannot be read is named in
        :attr:`problems` and skipped.  Loads the primary project first if needed."""
        from .project.discover import MAX_PROJECT_FILES, find_project_files
        from .project.index import ProjectFileError, load_project

        self.others = []
        self.problems = []
        if self.root is None or self.pinned:
            return
        primary = self.primary.project
        primary_file = None
        if primary is not None and primary.project_file is not None and self.primary.root is not None:
            primary_file = self.relpath(primary.project_file)
        files, left_out = find_project_files(self.root, self.settings.excludes)
        if left_out:
            self.problems.append(f"{self.root}: {left_out} more project files than the {MAX_PROJECT_FILES} read; "
                                 "the scripts only they map are judged by the root's project")
        api = primary.api if primary is not None else None
        for rel in files:
            if rel == primary_file:
                continue
            try:
                index = load_project(self.root, project_file=rel, api=api)
            except ProjectFileError as exc:
                if str(exc) != self.primary.project_error:  # (the root's own: reported as such)
                    self.problems.append(f"{exc} (this project is skipped)")
                continue
            api = index.api
            engine = Engine(self.root, self.settings, project=index)
            engine.stats = self.stats
            self.others.append(engine)

    def relpath(self, path: str | Path | None) -> str | None:
        """``path`` relative to the root (POSIX), or ``None`` outside it (or no root)."""
        if path is None or self.root is None:
            return None
        p = Path(path)
        if not p.is_absolute():
            p = Path.cwd() / p
        try:
            return Path(os.path.normpath(p)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def engines_for(self, path: str | Path | None) -> list[Engine]:
        """The engines of the projects that map ``path`` (rule 2: a file they map, or one
        inside a folder they sync), primary first; ``[primary]`` when none does."""
        if not self.others:
            return [self.primary]
        rel = self.relpath(path)
        if rel is None:
            return [self.primary]
        judges = []
        for engine in self.engines:
            project = engine.project if engine.root is not None else None
            if project is not None and project.kind != "none" and project.maps_path(rel):
                judges.append(engine)
        return judges or [self.primary]

    def script_files(self) -> list[Path]:
        """Every ``.lua``/``.luau`` file some project maps (sorted)."""
        files: set[Path] = set()
        for engine in self.engines:
            files.update(engine.script_files())
        return sorted(files)

    def mapped(self, path: str | Path) -> bool:
        """Does some project map ``path`` (rule 2)?"""
        rel = self.relpath(path)
        if rel is None:
            return False
        for engine in self.engines:
            project = engine.project if engine.root is not None else None
            if project is not None and project.kind != "none" and project.maps_path(rel):
                return True
        return False

    # -- linting ---------------------------------------------------------------------
    def analyse(self, text: str, path: str | Path | None = None, *, mode: str | None = None,
                count: bool = True) -> Analysis:
        """:meth:`Engine.analyse <luaguard.engine.Engine.analyse>` under every judge of
        ``path``, merged (:func:`merge_findings`)."""
        judges = self.engines_for(path)
        if len(judges) == 1:
            return judges[0].analyse(text, path, mode=mode, count=count)
        results = self._lint(judges, lambda e: e.analyse(text, path, mode=mode, count=False), lambda r: r.findings)
        merged = self.merge([e for e, _ in results], [r.findings for _, r in results])
        self._count(merged, count)
        return Analysis(merged, all(r.parses for _, r in results))

    def lint_text(self, text: str, path: str | Path | None = None, *, mode: str | None = None,
                  count: bool = True) -> list[Finding]:
        """:meth:`Engine.lint_text <luaguard.engine.Engine.lint_text>` under every judge of
        ``path``, merged."""
        return self.analyse(text, path, mode=mode, count=count).findings

    def lint_bytes(self, data: bytes, path: str | Path, *, count: bool = True) -> list[Finding]:
        """:meth:`Engine.lint_bytes <luaguard.engine.Engine.lint_bytes>` under every judge
        of ``path``, merged."""
        judges = self.engines_for(path)
        if len(judges) == 1:
            return judges[0].lint_bytes(data, path, count=count)
        results = self._lint(judges, lambda e: e.lint_bytes(data, path, count=False), lambda r: r)
        merged = self.merge([e for e, _ in results], [r for _, r in results])
        self._count(merged, count)
        return merged

    def unreadable(self, path: str | Path, why: str) -> list[Finding]:
        """The one ``unreadable_file`` finding for ``path`` (if selected), as
        :meth:`Engine.unreadable <luaguard.engine.Engine.unreadable>` says: a file that was
        not read is judged by no project."""
        return self.primary.unreadable(path, why)

    def lint_file(self, path: str | Path) -> list[Finding]:
        """Read and lint one file (an unreadable file is one finding, as an engine says).
        Read as :meth:`Engine.lint_file <luaguard.engine.Engine.lint_file>` reads: inside
        the root only through no link out of it, a regular file within the size limit
        (:func:`luaguard.engine.read_for_lint`)."""
        data, why = read_for_lint(path, self.root)
        return self.unreadable(path, why) if data is None else self.lint_bytes(data, path)

    def guard_contract(self, path: str | Path | None = None, text: str | None = None):
        """The guard's contract for ``path`` from the first project that judges it
        (:meth:`Engine.guard_contract <luaguard.engine.Engine.guard_contract>`; the
        primary's when no path is given)."""
        engine = self.engines_for(path)[0] if path is not None else self.primary
        return engine.guard_contract(path, text)

    def reload_project(self, *, strict: bool = False) -> None:
        """Re-read the primary project (:meth:`Engine.reload_project
        <luaguard.engine.Engine.reload_project>`) and every other project file."""
        self.primary.reload_project(strict=strict)
        self.load_others()

    def is_place(self, engine: Engine) -> bool:
        """Is ``engine``'s project a place (its tree a ``DataModel``), not a package build?"""
        project = engine.project
        return project is not None and project.root is project.datamodel

    def label(self, engine: Engine) -> str:
        """``engine``'s project file, root-relative (for messages)."""
        project = engine.project
        pf = project.project_file if project is not None else None
        if pf is None:
            return "the root's project"
        return self.relpath(pf) or pf.name

    def merge(self, judges: Sequence[Engine], lists: Sequence[list[Finding]]) -> list[Finding]:
        """:func:`merge_findings` of the lists the ``judges`` produced for one text."""
        return merge_findings(lists, [self.is_place(e) for e in judges], [self.label(e) for e in judges])

    def _lint(self, judges: list[Engine], lint, findings_of) -> list[tuple[Engine, object]]:
        """``lint(engine)`` for the judges, places first, while their lints can still change
        the merge (rule 3): not after a place that leaves no finding every place so far
        reports, and not the package builds when what the places left holds no error and
        no safe fix (a package build can only lower those).  Returns ``(engine, result)``
        of the judges linted, in order; ``findings_of(result)`` is the finding list."""
        places = [self.is_place(e) for e in judges]
        order = sorted(range(len(judges)), key=lambda i: not places[i])
        done: list[tuple[Engine, object]] = []
        place_lists: list[list[Finding]] = []
        for n, i in enumerate(order):
            result = lint(judges[i])
            done.append((judges[i], result))
            if not places[i]:
                continue  # package builds only lower what the places report
            place_lists.append(findings_of(result))
            live = [f for f in merge_findings(place_lists) if f.rule != INTERNAL_ERROR]
            if not live:
                break
            if not any(places[j] for j in order[n + 1:]) and not any(
                    f.severity is Severity.ERROR or (f.fix is not None and f.fix.safe) for f in live):
                break
        return done

    def _count(self, findings: Iterable[Finding], count: bool) -> None:
        if count:
            for f in findings:
                self.stats[f.rule] += 1

    # -- keeping up with edits and the disk (the language server) ---------------------
    def _runs(self, engine: Engine, rel: str) -> bool:
        """Do the run-time names of ``engine``'s project read the file ``rel``: the primary's
        every file under the root (as before), another's the files it maps."""
        if engine is self.primary:
            return True
        project = engine.project
        return project is not None and project.maps_path(rel)

    def set_text(self, path: Path, text: str | None) -> None:
        """An open buffer's text (``None``: closed, the disk counts again) for the
        snapshots (:meth:`luaguard.engine.Engine.set_text`) of the primary project and of
        the others that map it."""
        rel = self.relpath(path)
        for engine in self.engines:
            if engine.root is not None and rel is not None and self._runs(engine, rel):
                engine.set_text(path, text)

    def apply_file_changes(self, changed: Sequence[str], deleted: Sequence[str]) -> bool:
        """Files created/changed/deleted on disk (root-relative POSIX paths): every
        project's index and snapshot follow (:meth:`luaguard.engine.Engine.files_changed`).
        False when no project has an index."""
        updated = False
        for engine in self.engines:
            updated = engine.files_changed(changed, deleted) or updated
        return updated


def open_projects(root: Path) -> ProjectSet:
    """The :class:`ProjectSet` of the repository at ``root``, its settings from
    ``luaguard.toml`` (:func:`luaguard.engine.open_engine` builds the primary engine, and
    raises :class:`~luaguard.engine.ProjectUnreadable` as it does); project files other
    than the primary that cannot be read are skipped (:attr:`ProjectSet.problems`).  What a
    front end that cannot stop on a usage error needs (the agent hook)."""
    from .engine import open_engine

    projects = ProjectSet(primary=open_engine(root))
    projects.load_others()
    return projects
