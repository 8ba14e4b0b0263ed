"""Command-line front end: ``luaguard check | index | validate | complete | model | serve``.  No check logic lives
here: every command calls the :class:`~luaguard.engine.Engine` or another engine module.

Exit codes: 0 no error-severity finding, 1 at least one, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from . import __version__
from .config import Settings
from .findings import Finding, Severity
from .workspace import find_project_root, read_project_settings

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A bad command line or configuration: printed as ``luaguard: error: ...``, exit 2."""


def load_settings(root: Path | None, err: Callable[[str], None]) -> Settings:
    """Settings from the project's ``luaguard.toml`` (defaults without one).

    Raises :class:`UsageError` for a config file that is not valid TOML; invalid values
    are reported through ``err`` and replaced by defaults.
    """
    result = read_project_settings(root)
    if result.error:
        raise UsageError(result.error)
    for p in result.problems:
        err(f"warning: {p}")
    for n in result.notices:
        err(f"luaguard: warning: {n}")
    return result.settings


def make_engine(args: argparse.Namespace, err: Callable[[str], None], first_path: Path | None = None):
    """Build the engine for ``--project`` (or the project found above the first path).

    Raises :class:`UsageError` when the project or its config file is broken.
    """
    from .engine import Engine

    if args.project:
        root = Path(args.project)
        if not root.is_dir():
            raise UsageError(f"--project {args.project}: not a directory")
    else:
        root = find_project_root(first_path or Path.cwd())
    settings = load_settings(root, err)
    from dataclasses import replace

    if getattr(args, "project_file", None):
        settings = replace(settings, project_file=args.project_file, sourcemap_file=None)
    elif getattr(args, "sourcemap", None):
        settings = replace(settings, sourcemap_file=args.sourcemap, project_file=None)
    if getattr(args, "patch", False):
        settings = replace(settings, placeholder_mode="patch")
    settings = _selection_settings(args, settings)
    engine = Engine(root, settings)
    if root is not None:
        from .project.index import ProjectFileError

        try:
            engine.reload_project(strict=True)
        except ProjectFileError as exc:
            raise UsageError(f"bad project file: {exc}") from exc
        project = engine.project
        if project is not None:
            fatal = []
            main_file = project.project_file.name if project.project_file is not None else None
            for p in project.problems:
                if p.severity in ("error", "warning"):
                    loc = f"{p.file}" + (f":{p.line}" if p.line else "") + (f":{p.column}" if p.column else "")
                    err(f"{p.severity}: {loc}: {p.message}")
                    if p.severity == "error" and main_file is not None and p.file == main_file:
                        fatal.append(loc)
            if fatal:
                raise UsageError(f"bad project file {main_file} (see {', '.join(fatal)})")
    return engine


def make_projects(args: argparse.Namespace, err: Callable[[str], None], first_path: Path | None = None):
    """:func:`make_engine`'s engine as the primary project of a
    :class:`~luaguard.projects.ProjectSet` holding every other project file under its root
    (none when one is pinned; with no project root, those under the directory
    ``first_path``); a project file that cannot be read is reported through ``err`` and
    skipped, as are the problems of the others' indexes."""
    from .projects import ProjectSet

    engine = make_engine(args, err, first_path)
    root = engine.root
    if root is None and first_path is not None and first_path.is_dir():
        root = first_path  # a folder of projects (a monorepo's games) without one of its own
    projects = ProjectSet(root, primary=engine)
    projects.load_others()
    for problem in projects.problems:
        err(f"warning: {problem}")
    said: set[str] = set()
    for other in projects.others:
        for p in other.project.problems:
            if p.severity in ("error", "warning"):
                loc = f"{p.file}" + (f":{p.line}" if p.line else "") + (f":{p.column}" if p.column else "")
                line = f"{p.severity}: {loc}: {p.message}"
                if line not in said:
                    said.add(line)
                    err(line)
    return projects


def collect_files(paths: Sequence[str], root: Path | None = None, exclude: Sequence[str] = (),
                  respect_gitignore: bool = True):
    """The files ``luaguard check PATHS`` lints (:func:`luaguard.files.select_files`: every
    ``.lua``/``.luau`` file except package managers' installs, ``_Index`` trees, what git
    leaves out and the ``exclude`` patterns).  Raises :class:`UsageError` for a path that
    does not exist."""
    from .files import select_files

    try:
        return select_files(paths, root=root, exclude=exclude, respect_gitignore=respect_gitignore)
    except FileNotFoundError as exc:
        raise UsageError(f"{exc.args[0]}: no such file or directory") from None


# -- output -------------------------------------------------------------------------
def summary_line(findings: list[Finding], files: int) -> str:
    counts = Counter(f.severity for f in findings)
    parts = []
    for sev in Severity:
        n = counts.get(sev, 0)
        if n:
            parts.append(f"{n} {sev.label}{'s' if n != 1 and sev is not Severity.INFORMATION else ''}")
    touched = len({f.file for f in findings})
    if not parts:
        return f"No problems found in {files} file{'s' if files != 1 else ''}."
    return f"Found {', '.join(parts)} in {touched} of {files} file{'s' if files != 1 else ''}."


def print_stats(stats: Counter, out) -> None:
    print("findings by rule:", file=out)
    if not stats:
        print("  (none)", file=out)
    for rule, n in sorted(stats.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {rule:<24} {n}", file=out)


def exit_status(findings: list[Finding], args: argparse.Namespace, err: Callable[[str], None]) -> int:
    """1 when an error is reported or, with ``--max-warnings N``, more than N warnings;
    ``--exit-zero`` makes it 0."""
    status = EXIT_FINDINGS if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK
    limit = getattr(args, "max_warnings", None)
    if limit is not None:
        n = sum(1 for f in findings if f.severity is Severity.WARNING)
        if n > limit:
            err(f"luaguard: {n} warning{'s' if n != 1 else ''}, more than --max-warnings {limit}")
            status = EXIT_FINDINGS
    return EXIT_OK if getattr(args, "exit_zero", False) else status


# -- commands -----------------------------------------------------------------------
#: ``--diff`` given without a value (``luaguard check --fix --diff``): print the fixes as a diff
SHOW_FIX_DIFF = "\0show-fix-diff"


@dataclass
class Checked:
    """One linted text: the file (``None`` for stdin), the name printed for it, the text the
    findings were computed on (``None``: unreadable), the findings, and how many fixes were
    applied to it."""

    path: Path | None
    shown: str
    text: str | None
    findings: list[Finding]
    fixed: int = 0


def shown_path(path: Path) -> str:
    """How ``luaguard check`` names a file: relative to the current directory (``../x`` for a
    file beside it), absolute only when the two share nothing but the file-system root."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    try:
        if os.path.dirname(os.path.commonpath([absolute, cwd])) == os.path.commonpath([absolute, cwd]):
            return absolute  # only the root in common (or another drive)
        return os.path.relpath(absolute, cwd)
    except ValueError:
        return absolute


def _fix_diff_option(args: argparse.Namespace) -> bool:
    """Sort out the two meanings of ``--diff`` (documented in ``luaguard check --help``):
    with ``--fix`` it takes no value and prints the fixes as a unified diff instead of
    writing them (ruff's ``--fix --diff``); without ``--fix``, ``--diff FILE|-`` lints a
    unified diff.  argparse lets ``--fix --diff a.luau`` give ``a.luau`` to ``--diff``: it
    is moved back to the paths.  Returns whether the fixes are to be shown as a diff."""
    if args.diff is None:
        return False
    if args.fix:
        if args.diff != SHOW_FIX_DIFF:
            args.paths = [args.diff, *args.paths]
        args.diff = None
        return True
    if args.diff == SHOW_FIX_DIFF:
        raise UsageError("--diff needs a FILE (a unified diff to lint, '-' = stdin), or --fix "
                         "(--fix --diff: show the fixes as a diff instead of writing them)")
    return False


def _selection_settings(args: argparse.Namespace, settings: Settings) -> Settings:
    """``--select``/``--ignore``/``--quiet`` over the settings of ``luaguard.toml``: ``--select``
    replaces its ``select``, ``--ignore`` adds to its ``ignore``.  Raises :class:`UsageError`
    for an unknown rule id (naming the valid ones)."""
    from dataclasses import replace

    from .config import parse_selectors

    changes: dict = {}
    for opt in ("select", "ignore"):
        values = getattr(args, opt, None)
        if values:
            try:
                parsed = parse_selectors(values)
            except ValueError as exc:
                raise UsageError(f"--{opt}: {exc}") from None
            changes[opt] = parsed if opt == "select" else tuple(dict.fromkeys(settings.ignore + parsed))
    if getattr(args, "quiet", False):
        changes["errors_only"] = True
    return replace(settings, **changes) if changes else settings


#: ``luaguard check``: parses made for the run-time facts of files not linted yet are kept
#: for their lints up to this many characters of source (about 35 bytes of memory each)
KEPT_PARSE_CHARS = 2_000_000


def cmd_check(args: argparse.Namespace) -> int:
    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    show_diff = _fix_diff_option(args)
    if args.diff is not None:
        for flag, on in (("--baseline", args.baseline), ("--unsafe-fixes", args.unsafe_fixes), ("--since", args.since)):
            if on:
                raise UsageError(f"--diff FILE (lint a unified diff) cannot be combined with {flag}")
        return _check_diff(args, err)
    if args.unsafe_fixes and not args.fix:
        raise UsageError("--unsafe-fixes works with --fix (luaguard check --fix --unsafe-fixes)")
    if args.update_baseline and not args.baseline:
        raise UsageError("--update-baseline needs --baseline FILE")
    if args.since is not None:
        for flag, on in (("--fix", args.fix), ("--baseline", args.baseline), ("'-' (stdin)", "-" in args.paths)):
            if on:
                raise UsageError(f"--since REF (check what changed since REF) cannot be combined with {flag}")
    paths = list(args.paths)
    first = Path(paths[0]) if paths and paths[0] != "-" else None
    engine = make_projects(args, err, first)
    from .luau.parsed import keep_parses

    keep_parses(KEPT_PARSE_CHARS)  # (a file parsed for another's run-time facts is not parsed again for its lint)
    fix = FixOptions(unsafe=args.unsafe_fixes, show_diff=show_diff) if args.fix else None
    checked: list[Checked] = []
    skipped: Counter[str] = Counter()
    changes = None
    if args.since is not None:
        from .vcs import GitError, changes_since

        try:
            changes = changes_since(args.since, engine.root or Path.cwd())
        except GitError as exc:
            raise UsageError(f"--since {args.since}: {exc}") from None
    since_hidden = 0
    if paths == ["-"]:
        checked.append(_check_stdin(engine, args, fix))
    else:
        if "-" in paths:
            raise UsageError("'-' (stdin) cannot be combined with other paths")
        if not paths and engine.root is None:
            raise UsageError("no paths given and no project found (pass PATHS or --project DIR)")
        from .files import SKIP_UNMAPPED, filter_project_files, unmapped_files

        if paths:
            selection = collect_files(paths, engine.root, engine.settings.excludes, engine.settings.respect_gitignore)
        else:
            git = engine.settings.respect_gitignore
            selection = filter_project_files(engine.script_files(), root=engine.root, exclude=engine.settings.excludes,
                                             respect_gitignore=git)
            unmapped = unmapped_files(engine.root, engine.script_files(), exclude=engine.settings.excludes,
                                      respect_gitignore=git)
            if changes is not None:
                unmapped = [u for u in unmapped if changes.relative(u) in changes.files]
            if unmapped:
                selection.skipped[SKIP_UNMAPPED] += len(unmapped)
                where = _project_files_named(engine)
                n = len(unmapped)
                err(f"luaguard: {n} Luau file{'s' if n != 1 else ''} in the project {'are' if n != 1 else 'is'} not mapped by "
                    f"{where} and {'were' if n != 1 else 'was'} not checked (e.g. {shown_path(unmapped[0])}); "
                    f"to check {'them' if n != 1 else 'it'} too, name the folder: luaguard check {shown_path(engine.root) or '.'}")
        for note in selection.notes:
            err(f"luaguard: {note}")
        _say_refused(selection, err)
        skipped = selection.skipped
        if not selection.files:
            why = "; ".join(f"{n} skipped: {r}" for r, n in skipped.items())
            if not paths:
                where = _project_files_named(engine)
                raise UsageError(f"no Luau files to check: {where} maps no .lua/.luau file" + (f" ({why})" if why else ""))
            err("luaguard: no Luau files to check" + (f" ({why})" if why else ""))
        files = selection.files
        if changes is not None:
            files = [f for f in files if changes.relative(f) in changes.files]
            moved = f" (merge base {changes.base[:10]}: {args.since} has moved on since)" if changes.base != changes.ref_commit else ""
            err(f"luaguard: {len(files)} of {len(selection.files)} Luau file{'s' if len(selection.files) != 1 else ''} "
                f"changed since {args.since}{moved}")
        from .console import file_progress

        with file_progress(len(files), enabled=_stderr_is_terminal()) as advance:
            for c in _check_files(engine, files, fix, err, selection.roots, args.jobs):
                if changes is not None:
                    since_hidden += _keep_introduced(engine, c, changes)
                checked.append(c)
                advance(c.shown)
        keep_parses(0)
    findings = [f for c in checked for f in c.findings]
    hidden = 0
    scope = f" changed since {args.since}" if args.since is not None else ""
    if args.baseline:
        findings, hidden = _apply_baseline(Path(args.baseline), checked, update=args.update_baseline, err=err,
                                           root=engine.root)
    if fix is not None and fix.show_diff and paths != ["-"]:
        n = sum(c.fixed for c in checked)
        files = sum(1 for c in checked if c.fixed)
        err(f"Would fix {n} problem{'s' if n != 1 else ''} in {files} file{'s' if files != 1 else ''} "
            f"({len(findings)} would remain).")
    elif paths == ["-"] and fix is not None:
        _emit(findings, len(checked), args, checked, engine, out=sys.stderr)
    else:
        _emit(findings, len(checked), args, checked, engine, hidden=hidden, since_hidden=since_hidden, scope=scope)
        if fix is not None:
            n = sum(c.fixed for c in checked)
            files = sum(1 for c in checked if c.fixed)
            out = sys.stdout if args.format == "text" else sys.stderr
            print(f"Fixed {n} problem{'s' if n != 1 else ''} in {files} file{'s' if files != 1 else ''}.", file=out)
    if args.stats:
        out = sys.stdout if args.format == "text" else sys.stderr
        print_stats(engine.stats, out)
        if skipped:
            print("files skipped:", file=out)
            for reason, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])):
                print(f"  {n:>5}  {reason}", file=out)
    return exit_status(findings, args, err)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _keep_introduced(engine, c: "Checked", changes) -> int:
    """``--since``: keep only the findings of ``c`` that its change introduced, judged as
    ``check --diff`` judges them (:func:`luaguard.introduced.introduced_findings`: the key
    rule, text and message without line numbers, counted; a file new since the merge base
    keeps every finding).  Returns how many findings were dropped."""
    from .introduced import introduced_findings
    from .text import decode_source
    from .vcs import GitError

    change = changes.files.get(changes.relative(c.path)) if c.path is not None else None
    if change is None or c.text is None:
        return 0
    try:
        old = changes.old_bytes(change)
    except GitError as exc:
        raise UsageError(f"--since {changes.ref}: {c.shown}: {exc}") from None
    if old is None:
        return 0
    old_text = decode_source(old).text
    if old_text is None:
        return 0
    before = engine.lint_bytes(old, c.shown, count=False)
    kept = introduced_findings(before, old_text, c.findings, c.text)
    dropped = len(c.findings) - len(kept)
    c.findings = kept
    return dropped


def _project_files_named(projects) -> str:
    """The project file(s) ``luaguard check`` read, for its messages."""
    names = [e.project.project_file for e in projects.engines if e.project is not None and e.project.project_file]
    if not names:
        return "the project"
    if len(names) == 1:
        return names[0].name
    return f"any of its {len(names)} project files"


@dataclass
class FixOptions:
    """``--fix``: apply unsafe fixes too (``--unsafe-fixes``); print a diff instead of writing."""

    unsafe: bool = False
    show_diff: bool = False


def _check_stdin(engine, args: argparse.Namespace, fix: FixOptions | None) -> Checked:
    """Lint stdin as ``--stdin-filename`` (relative to the project root).  With ``--fix`` the
    fixed text (or with ``--diff`` the diff) goes to stdout, as ruff does."""
    from .text import decode_source

    data = sys.stdin.buffer.read()
    name = args.stdin_filename or "-"
    if args.stdin_filename and engine.root is not None and not Path(name).is_absolute():
        path_for_engine = str(engine.root / name)  # --stdin-filename is relative to the project root
    else:
        path_for_engine = name
    decoded = decode_source(data)
    text = decoded.text
    fixed = 0
    if fix is not None and text is not None and decoded.invalid_utf8_offset is None:
        from .fixes import fix_text

        result = fix_text(engine, text, path_for_engine, unsafe=fix.unsafe)
        found = result.findings
        fixed = len(result.fixed)
        if result.skipped or result.note:
            print(f"luaguard: {name}: {'not fixed: ' + result.skipped if result.skipped else result.note}", file=sys.stderr)
        if fix.show_diff:
            if result.changed:
                from .agents.edits import unified_diff

                sys.stdout.write(unified_diff(name, text, result.text))
        else:
            sys.stdout.write(result.text)
        text = result.text
    else:
        found = engine.lint_bytes(data, path_for_engine)
        if fix is not None:
            sys.stdout.buffer.write(data)  # not fixable: the input unchanged
    for f in found:
        f.file = name
    path = Path(path_for_engine) if args.stdin_filename else None
    return Checked(path, name, text, found, fixed)


def _check_files(engine, files: list[Path], fix: FixOptions | None, err: Callable[[str], None],
                 roots: dict, jobs: int | None) -> Iterator[Checked]:
    """:func:`_check_file` of each of ``files``, in order.  Without ``--fix``, over ``jobs``
    worker processes (``None``: one per CPU; :mod:`luaguard.parallel`): the same results
    in the same order as one process, and the findings counted in ``engine.stats`` as one
    process counts them.  ``--fix`` writes files and prints diffs: one process."""
    from . import parallel

    if jobs is None:
        jobs = parallel.default_jobs()
    if fix is not None or jobs <= 1 or len(files) < parallel.MIN_FILES:
        for file in files:
            yield _check_file(engine, file, shown_path(file), fix, err, roots.get(file))
        return
    parent = os.getpid()
    stats = engine.stats

    def one(file: Path) -> tuple[Checked, Counter | None]:
        if os.getpid() == parent:  # (no worker: counted here already)
            return _check_file(engine, file, shown_path(file), None, err, roots.get(file)), None
        before = Counter(stats)
        c = _check_file(engine, file, shown_path(file), None, err, roots.get(file))
        return c, stats - before

    parallel.warm(engine)
    for c, counted in parallel.map_ordered(one, files, jobs):
        if counted:
            stats.update(counted)
        yield c


def _check_file(engine, path: Path, shown: str, fix: FixOptions | None, err: Callable[[str], None],
                root: Path | None = None) -> Checked:
    """Lint one file (and with ``fix``, apply the fixes: atomically, or shown as a diff).
    ``root``: the folder reads and writes are confined to (:mod:`luaguard.files`); a fix is
    written only over the text it was computed from."""
    from .files import Refused, read_stamped
    from .text import decode_source

    try:
        data, stamp = read_stamped(path, root=root)
    except Refused as exc:
        return Checked(path, shown, None, engine.unreadable(shown, exc.why))
    except OSError as exc:
        return Checked(path, shown, None, engine.unreadable(shown, f"cannot read file: {exc.strerror or exc}"))
    decoded = decode_source(data)
    if fix is None or decoded.text is None or decoded.invalid_utf8_offset is not None:
        if fix is not None and decoded.text is not None:
            err(f"luaguard: {shown}: not fixed: the file is not valid UTF-8")
        return Checked(path, shown, decoded.text, engine.lint_bytes(data, shown))
    from . import fixes

    result = fixes.fix_text(engine, decoded.text, shown, unsafe=fix.unsafe)
    if result.skipped:
        if fix_available(result.findings, fix.unsafe):
            err(f"luaguard: {shown}: not fixed: {result.skipped}")
    elif result.note:
        err(f"luaguard: {shown}: {result.note}")
    if result.changed:
        if fix.show_diff:
            from .agents.edits import unified_diff

            sys.stdout.write(unified_diff(Path(shown).as_posix(), decoded.text, result.text))
        else:
            from .files import write_atomic

            new = (b"\xef\xbb\xbf" if decoded.had_bom else b"") + result.text.encode("utf-8")
            try:
                write_atomic(path, new, root=root, expect=stamp)
            except Refused as exc:
                err(f"luaguard: {shown}: {exc.why}")
                return Checked(path, shown, decoded.text, engine.lint_bytes(data, shown, count=False))
            except OSError as exc:
                err(f"luaguard: {shown}: cannot write the fixes: {exc.strerror or exc}")
                return Checked(path, shown, decoded.text, engine.lint_bytes(data, shown, count=False))
    return Checked(path, shown, result.text, result.findings, len(result.fixed))


def _say_refused(selection, err: Callable[[str], None]) -> None:
    """One line per kind of file the file layer refused (links out of the root, FIFOs ...)."""
    from .files import SKIP_NOT_REGULAR, SKIP_OUTSIDE

    for reason, what in ((SKIP_OUTSIDE, "{are} {links} to files outside the project root and {were} not read"),
                         (SKIP_NOT_REGULAR, "{are} not a regular file (a FIFO, device or socket) and {were} not read")):
        files = selection.refused.get(reason)
        if not files:
            continue
        n = len(files)
        words = {"are": "are" if n != 1 else "is", "links": "links" if n != 1 else "a link",
                 "were": "were" if n != 1 else "was"}
        err(f"luaguard: {n} Luau file{'s' if n != 1 else ''} {what.format(**words)} (e.g. {shown_path(files[0])})")


def fix_available(findings: list[Finding], unsafe: bool) -> bool:
    """Whether any of ``findings`` has a fix ``--fix`` would apply (with ``--unsafe-fixes``:
    ``unsafe``)."""
    from .fixes import fixable

    return bool(fixable(findings, unsafe=unsafe))


def _apply_baseline(path: Path, checked: list[Checked], *, update: bool, err: Callable[[str], None],
                    root: Path | None = None) -> tuple[list[Finding], int]:
    """``--baseline FILE``: record the findings when ``FILE`` does not exist (or with
    ``--update-baseline``) and report none; otherwise report only the findings the baseline
    does not hold.  Returns the findings to report and how many the baseline hid.  A
    ``FILE`` spelled inside the project ``root`` is read and written only inside it (a link
    in the repository leading out is refused)."""
    from .baseline import BaselineError, baseline_json, baseline_key, load_baseline
    from .files import Refused, lexically_inside, write_atomic
    from .output import relative_to_root

    root = root if root is not None and lexically_inside(path, root) else None

    base_dir = Path(os.path.abspath(path)).parent
    items = []
    for c in checked:
        where = c.path if c.path is not None else Path(c.shown)
        rel = relative_to_root(where, base_dir)
        items.extend((f, baseline_key(f, c.text, rel)) for f in c.findings)
    if update or not path.exists():
        try:
            old = len(load_baseline(path, root)) if path.exists() else None
        except BaselineError:
            old = None
        try:
            write_atomic(path, baseline_json(k for _, k in items).encode("utf-8"), root=root)
        except Refused as exc:
            raise UsageError(f"{path}: cannot write the baseline: {exc.why.replace('not read', 'not written')}") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot write the baseline: {exc.strerror or exc}") from None
        n = len(items)
        was = f" (was {old})" if old is not None else ""
        err(f"luaguard: recorded {n} finding{'s' if n != 1 else ''} in the baseline {path}{was}; "
            f"`luaguard check --baseline {path}` reports only findings that are not in it")
        return [], n
    try:
        baseline = load_baseline(path, root)
    except BaselineError as exc:
        raise UsageError(str(exc)) from None
    fresh = baseline.new_findings(items)
    return fresh, len(items) - len(fresh)


def _emit(findings: list[Finding], files: int, args: argparse.Namespace, checked: list[Checked], engine,
          *, hidden: int = 0, since_hidden: int = 0, scope: str = "", out=None) -> None:
    """Print ``findings`` in ``--format`` (text, json, github, sarif).  ``hidden``: findings a
    baseline accounts for; ``since_hidden``: findings ``--since`` left out as older than the
    change; ``scope``: what the files are (``" changed since main"``)."""
    out = out or sys.stdout
    fmt = args.format
    if fmt == "json":
        json.dump([f.to_json() for f in findings], out, indent=2)
        out.write("\n")
        return
    texts: dict[int, str | None] = {}
    for c in checked:
        for f in c.findings:
            texts[id(f)] = c.text
    if fmt in ("github", "sarif"):
        from .output import relative_to_root, repository_root, sarif_log

        root = repository_root()
        where: dict[int, Path] = {}
        for c in checked:
            for f in c.findings:
                where[id(f)] = c.path if c.path is not None else Path(c.shown)

        def path_of(f: Finding) -> str:
            return relative_to_root(where.get(id(f), Path(f.file or "-")), root)

        if fmt == "github":
            _emit_github(findings, files, path_of, out, scope)
        else:
            from .introduced import finding_key

            log = sarif_log(findings, path_of, root, key_of=lambda f: finding_key(f, texts.get(id(f))))
            json.dump(log, out, indent=2, ensure_ascii=False)
            out.write("\n")
        return
    from .console import Printer, SourceLines, color_wanted, rule_summary

    printer = Printer(out, color_wanted(getattr(args, "color", "auto"), out))
    lines = SourceLines()
    for f in findings:
        printer.finding(f, texts.get(id(f)), lines)
    if not getattr(args, "stats", False):
        for row in rule_summary(findings):
            printer.line(row, "bold" if row.endswith(":") else "")
    line = summary_line(findings, files)
    notes = []
    if hidden:
        notes.append(f"{hidden} finding{'s' if hidden != 1 else ''} in the baseline not shown")
    if since_hidden:
        notes.append(f"{since_hidden} finding{'s' if since_hidden != 1 else ''} from before the change not shown")
    if scope:
        line = line[:-1] + scope + "."
    if notes:
        line = line[:-1] + f" ({'; '.join(notes)})."
    printer.line(line, "bold")


def _emit_github(findings: list[Finding], files: int, path_of: Callable[[Finding], str], out, scope: str) -> None:
    """``--format github``: the annotations (errors first), one summary line, and the
    Markdown job summary appended to ``$GITHUB_STEP_SUMMARY`` when it is set."""
    from .output import github_lines, github_step_summary, github_summary_line

    for line in github_lines(findings, path_of):
        print(line, file=out)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    written = False
    if summary_path:
        try:
            with open(summary_path, "a", encoding="utf-8") as fh:
                fh.write(github_step_summary(findings, path_of, files, scope=scope) + "\n")
            written = True
        except OSError as exc:
            print(f"luaguard: cannot write the job summary to $GITHUB_STEP_SUMMARY ({summary_path}): "
                  f"{exc.strerror or exc}", file=sys.stderr)
    print(github_summary_line(findings, files, summary_file=written, scope=scope), file=out)


def _read_input(name: str, what: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise UsageError(f"{name}: cannot read {what}: {exc.strerror or exc}") from exc


def _check_diff(args: argparse.Namespace, err: Callable[[str], None]) -> int:
    """``luaguard check --diff FILE|-``: apply a unified diff in memory and lint the result."""
    from .toolcalls.api import patch_report

    if args.paths:
        raise UsageError("--diff takes no PATHS (the diff names its files)")
    data = _read_input(args.diff, "diff")
    engine = make_projects(args, err)  # the diff's paths are relative to the project found from here
    if engine.root is None:
        raise UsageError("--diff needs a project (pass --project DIR)")
    report = patch_report(engine, args.stdin_filename, diff=data.decode("utf-8", errors="replace"))
    findings = report.findings
    text_of = {id(f): fr.text for fr in report.files for f in fr.findings}  # (problems of the diff have none)
    checked = [Checked(engine.root / f.file if f.file else None, f.file or "-", text_of.get(id(f)), [f]) for f in findings]
    if report.applied:
        n = len(report.applied)
        err(f"luaguard: the diff is already applied to {n} file{'s' if n != 1 else ''} on disk "
            f"({', '.join(report.applied[:3])}{', ...' if n > 3 else ''}): judged as applied")
    _emit(findings, len({f.path for f in report.files} | {f.file for f in findings if f.file}), args, checked, engine)
    if args.stats:
        print_stats(engine.stats, sys.stderr if args.format == "json" else sys.stdout)
    return exit_status(findings, args, err)


def cmd_validate(args: argparse.Namespace) -> int:
    """``luaguard validate [FILE|-]``: one result per call (JSON lines by default)."""
    from .toolcalls.api import check_calls, stats
    from .toolcalls.schemas import ToolSchemaError

    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    data = _read_input(args.file, "tool calls")
    engine = make_engine(args, err)
    try:
        results = check_calls(engine, data, extra_tool_files=args.tools or ())
    except ToolSchemaError as exc:
        raise UsageError(str(exc)) from exc
    from .toolcalls.api import toolset

    for problem in toolset(engine, args.tools or ()).problems:
        err(f"warning: {problem}")
    if args.format == "json":
        json.dump([r.to_json() for r in results], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif args.format == "text":
        for r in results:
            where = f"line {r.record.line}" if r.record.line else f"call {r.record.index + 1}"
            print(f"{where}: {r.tool or r.record.name!s}: {'valid' if r.valid else 'INVALID'}")
            for p in r.errors:
                print(f"    error[{p.code}] {p.field + ': ' if p.field else ''}{p.message}")
            for p in r.warnings:
                print(f"    warning[{p.code}] {p.field + ': ' if p.field else ''}{p.message}")
            print(f"    feedback: {r.feedback}")
    else:
        for r in results:
            print(json.dumps(r.to_json(), ensure_ascii=False))
    if args.stats:
        out = sys.stderr if args.format != "text" else sys.stdout
        counts = stats(engine)["toolcalls"]
        print(f"calls: {counts['calls']} ({counts['valid']} valid, {counts['invalid']} invalid)", file=out)
        print_stats(engine.stats, out)
    return EXIT_FINDINGS if any(not r.valid for r in results) else EXIT_OK


def cmd_complete(args: argparse.Namespace) -> int:
    """``luaguard complete FILE:LINE:COL``: a guarded completion at a position (1-based line
    and column, the column counted in characters).  Generation logic lives in
    :mod:`luaguard.completion.generate`; with ``completion.endpoint`` set (and no ``--model``) the
    completion is asked of that server (:mod:`luaguard.completion.client`).  stderr says which
    backend and model answered - the shipped model is called a demonstration - and shows
    progress while a local model loads."""
    import time
    from dataclasses import replace

    from .completion.requests import CompletionRequest, parse_location

    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    try:
        path, line, col = parse_location(args.location)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    try:
        text = Path(path).read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    lines = text.splitlines(keepends=True) or [""]
    if line > len(lines) + (1 if text.endswith(("\n", "\r")) else 0):
        raise UsageError(f"{path}:{line}: the file has {len(lines)} lines")
    body = lines[line - 1].rstrip("\r\n") if line <= len(lines) else ""
    if col > len(body) + 1:
        raise UsageError(f"{path}:{line}:{col}: line {line} has {len(body)} characters")
    offset = sum(len(x) for x in lines[: line - 1]) + col - 1
    engine = make_engine(args, err, Path(path))
    settings = engine.settings.completion
    if args.model:
        settings = replace(settings, model=args.model, endpoint=None)
    request = CompletionRequest(
        text=text, offset=offset, path=str(Path(path).resolve()), max_tokens=args.max_tokens,
        guard=False if args.no_guard else None, temperature=args.temperature, seed=args.seed,
        timeout_ms=args.timeout_ms, stop=args.stop, fim=not args.no_fim, min_confidence=args.min_confidence,
    )
    # the guard accepts what the linter accepts in this file (its contract); FILE is typed
    # relative to the current directory, the contract reads paths against the project root
    contract = engine.guard_contract(os.path.abspath(path), text)
    if settings.endpoint:
        from .completion.client import EndpointError, RemoteCompletionEngine

        err(f"luaguard: asking {settings.endpoint} (completion.endpoint)"
            + (f" for model {settings.endpoint_model}" if settings.endpoint_model else ""))
        try:
            result = RemoteCompletionEngine(settings, engine.root).complete(request, contract)
        except EndpointError as exc:
            raise UsageError(f"the completion server failed: {exc}") from exc
        result = replace(result, backend="endpoint", model=settings.endpoint_model or settings.endpoint)
    else:
        from .guard import missing_dependencies, missing_message

        missing = missing_dependencies()
        if missing:
            raise UsageError(f"luaguard complete: {missing_message(missing)}")
        from .completion.generate import CompletionEngine
        from .completion.loading import DEMO_NOTE, ModelLoadError

        local = CompletionEngine(settings)
        what = DEMO_NOTE if not settings.model else f"model {settings.model}"
        err(f"luaguard: loading {what} ...")
        t0 = time.monotonic()
        try:
            lm = local.load(progress=sys.stderr.isatty())  # (transformers' bar: for a person, not a log)
            err(f"luaguard: loaded in {time.monotonic() - t0:.1f} s on {lm.device}; generating ...")
            result = local.complete(request, contract)
        except ModelLoadError as exc:
            raise UsageError(f"cannot load the completion model: {exc}") from exc
    if args.format == "json":
        out = {"file": path, "line": line, "column": col, **result.to_json()}
        json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        if result.text:
            sys.stdout.write(result.text if result.text.endswith("\n") else result.text + "\n")
        who = ("the demonstration model" if result.demonstration
               else f"{result.backend or 'endpoint'} model {result.model or '(unnamed)'}")
        note = (f"luaguard: answered by {who}: {'guarded' if result.guarded else 'unguarded'}, {result.tokens} tokens, "
                + (f"mean p {result.mean_prob:.2f}, min p {result.min_prob:.2f}" if result.mean_prob is not None
                   else "confidence unknown") + f", stop: {result.stop_reason}")
        if result.fim_family:
            note += f", fill-in-the-middle ({result.fim_family})"
        if result.withheld:
            floor = args.min_confidence if args.min_confidence is not None else settings.min_confidence
            note += f"; withheld (mean confidence below {floor:g})"
        if result.degraded:
            note += f"; {result.degraded}"
        err(note)
    return EXIT_OK


def cmd_model_pull(args: argparse.Namespace) -> int:
    """``luaguard model pull NAME [--revision R]``: see :func:`luaguard.completion.hub.pull`."""
    from .completion.hub import HubError, pull

    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    try:
        result = pull(args.name, args.revision, progress=not args.quiet, say=lambda m: err(f"luaguard: pulling {m}"))
    except HubError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        err("luaguard: interrupted; run the same command again to go on (the files already downloaded are kept)")
        return 130
    print(f"Pulled {result.repo_id} (commit {result.commit[:10]}, {len(result.files)} files, "
          f"{result.bytes / 1e6:.1f} MB) into {result.path}")
    print(f"Use it: luaguard complete FILE:LINE:COL --model {result.setting}")
    print(f'    or, in luaguard.toml:\n        [completion]\n        model = "{result.setting}"')
    return EXIT_OK


def cmd_model_list(args: argparse.Namespace) -> int:
    """``luaguard model list``: see :func:`luaguard.completion.hub.list_models`."""
    from .completion.hub import HubError, format_table, list_models

    try:
        entries = list_models()
    except HubError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        json.dump([e.to_json() for e in entries], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_table(entries))
    return EXIT_OK


def cmd_index(args: argparse.Namespace) -> int:
    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    engine = make_engine(args, err)
    project = engine.project
    if project is None:
        raise UsageError("no project found (pass --project DIR)")
    from .project.index import format_tree, to_json

    if args.format == "json":
        json.dump(to_json(project), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_tree(project))
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from .lsp.server import run_stdio

    return run_stdio()


def cmd_hook(args: argparse.Namespace) -> int:
    """``luaguard hook``: see :mod:`luaguard.agents.hook` (never fails: exit 0 or 2)."""
    from .agents.hook import HookOptions, run_hook

    try:
        data = sys.stdin.buffer.read()
    except OSError as exc:
        print(f"luaguard hook: cannot read stdin ({exc}); not checked", file=sys.stderr)
        return EXIT_OK
    opts = HookOptions(agent=args.agent, output=args.output, project=Path(args.project) if args.project else None,
                       timeout=max(0.1, args.timeout), extra_tool_files=tuple(args.tools or ()))
    resp = run_hook(data, opts)
    for stream, text in ((sys.stdout, resp.stdout), (sys.stderr, resp.stderr)):
        if text:
            try:
                stream.write(text)
                stream.flush()
            except UnicodeEncodeError:  # a lone surrogate quoted back: the answer still goes out
                stream.buffer.write(text.encode("utf-8", "backslashreplace"))
                stream.flush()
    if resp.abandoned:  # the time-out ends the process, not only the answer
        os._exit(resp.exit_code)
    return resp.exit_code


def cmd_mcp(args: argparse.Namespace) -> int:
    """``luaguard mcp``: the MCP server over stdio (needs the ``mcp`` extra)."""
    try:
        from .agents.mcp_server import build_server
    except ImportError as exc:
        from .install import extra_command

        raise UsageError(f"luaguard mcp needs the MCP SDK (luaguard's mcp extra): {extra_command('mcp')} ({exc})") from None
    from .agents.proxy import run_stdio

    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    engine = make_projects(args, err)
    # the proxy's stdio transport: malformed requests get JSON-RPC errors, not silence
    run_stdio(build_server(engine, extra_tool_files=tuple(args.tools or ()))._lowlevel_server)
    return EXIT_OK


def cmd_mcp_proxy(args: argparse.Namespace) -> int:
    """``luaguard mcp-proxy -- UPSTREAM...``: see :mod:`luaguard.agents.proxy`."""
    upstream = list(args.upstream)
    if upstream[:1] == ["--"]:
        upstream = upstream[1:]
    if not upstream:
        raise UsageError("mcp-proxy needs the upstream server's command after --")
    try:
        from .agents.proxy import build_proxy, run_stdio
    except ImportError as exc:
        from .install import extra_command

        raise UsageError(f"luaguard mcp-proxy needs the MCP SDK (luaguard's mcp extra): {extra_command('mcp')} ({exc})") from None
    from .toolcalls.schemas import ToolSchemaError

    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    engine = make_engine(args, err)
    try:
        server = build_proxy(engine, upstream, annotation_files=tuple(args.annotations or ()),
                             timeout=max(0.5, args.timeout), freeze_heap=True)
    except ToolSchemaError as exc:
        raise UsageError(str(exc)) from None
    run_stdio(server)
    return EXIT_OK


def _project_file_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--project-file", metavar="NAME", help="Rojo project file in the project root (default: default.project.json)")
    g.add_argument("--sourcemap", metavar="NAME", help="read this sourcemap.json instead of a Rojo project file")


def _version() -> str:
    """``luaguard X.Y.Z (mask walk: ...)``: whether the guard's compiled mask walk is
    installed (looked up without importing the guard, which would load numpy)."""
    import importlib.util

    built = importlib.util.find_spec("luaguard.guard._walk") is not None
    walk = "compiled" if built else "Python; the compiled module was not built (no C compiler at install)"
    return f"luaguard {__version__} (mask walk: {walk})"


def _count(value: str) -> int:
    """argparse type: a whole number >= 0."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {n}")
    return n


def _jobs(value: str) -> int:
    """argparse type: a number of worker processes, >= 1."""
    n = _count(value)
    if n < 1:
        raise argparse.ArgumentTypeError("expected a number of processes >= 1, got 0")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="luaguard", description="Guard-rails for AI-written Roblox (Luau) code.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("check", help="lint Luau files, a directory, or stdin")
    p.add_argument("paths", nargs="*", metavar="PATHS", help="files or directories ('-' = stdin); default: every script the project maps")
    p.add_argument("--project", metavar="DIR", help="project root (default: found above the first path)")
    _project_file_options(p)
    p.add_argument("--stdin-filename", metavar="NAME", help="project file the stdin text is meant for (so `script` resolves)")
    p.add_argument("--patch", action="store_true", help="patch mode: the code is an AI proposal (TODO/FIXME are errors)")
    p.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text",
                   help="text (default); json; github: GitHub Actions annotations; sarif: SARIF 2.1.0 for code scanning "
                        "(github and sarif name files relative to the repository root)")
    p.add_argument("--stats", action="store_true", help="print counts of findings by rule")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text output: auto (default) = when stdout is a terminal and NO_COLOR is not set")
    p.add_argument("--diff", metavar="FILE", nargs="?", const=SHOW_FIX_DIFF,
                   help="without --fix: apply a unified diff ('-' = stdin) in memory and lint the changed regions "
                        "(--stdin-filename names the file of header-less hunks); with --fix (no FILE): print the "
                        "fixes as a unified diff instead of writing them")
    g = p.add_argument_group("fixes")
    g.add_argument("--fix", action="store_true",
                   help="apply the safe fixes (the one clearly best name for a path, service, class, member or enum "
                        "item) and report what remains; files with a syntax error are left alone")
    g.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix: apply the unsafe fixes too (near misses under open nodes, globals, deprecated APIs)")
    g = p.add_argument_group("rule selection (also select/ignore/errors_only in luaguard.toml)")
    g.add_argument("--select", action="append", metavar="RULES",
                   help="report only these rule ids or severity groups (error, warning), comma-separated; repeatable")
    g.add_argument("--ignore", action="append", metavar="RULES",
                   help="do not report these rule ids or severity groups, comma-separated; repeatable")
    g.add_argument("-q", "--quiet", "--errors-only", dest="quiet", action="store_true",
                   help="report error-severity findings only")
    g = p.add_argument_group("baselines")
    g.add_argument("--baseline", metavar="FILE",
                   help="report only findings not recorded in FILE; when FILE does not exist, record the current "
                        "findings in it")
    g.add_argument("--update-baseline", action="store_true", help="record the current findings in the --baseline FILE")
    g = p.add_argument_group("CI")
    g.add_argument("--since", metavar="REF",
                   help="check only the Luau files changed since the merge base of the git revision REF and HEAD "
                        "(commits, uncommitted and untracked files), and report only the findings the change "
                        "introduced (new files: every finding)")
    g.add_argument("--exit-zero", action="store_true", help="exit 0 even when errors are found (2 stays for usage errors)")
    g.add_argument("--max-warnings", type=_count, metavar="N",
                   help="exit 1 when more than N warnings are reported (as well as on any error)")
    p.add_argument("-j", "--jobs", type=_jobs, metavar="N", default=None,
                   help="worker processes that lint the files (default: one per CPU; 1: none); the output is the "
                        "same, in the same order; --fix runs in one process")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("validate", help="validate AI tool calls, plans or OpenAI tool_calls messages")
    p.add_argument("file", nargs="?", default="-", metavar="FILE",
                   help="one call, an array, JSONL, an OpenAI message or a plan ('-' = stdin, the default)")
    p.add_argument("--project", metavar="DIR", help="project root (default: found above the current directory)")
    p.add_argument("--tools", metavar="FILE", action="append",
                   help="extra tool schemas (OpenAI tools or MCP tools/list JSON); repeatable")
    p.add_argument("--format", choices=("jsonl", "json", "text"), default="jsonl",
                   help="jsonl: one result object per line (default); json: one array; text: for people")
    p.add_argument("--stats", action="store_true", help="print counts of calls and of findings by rule (stderr for JSON)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("index", help="print the project's instance tree")
    p.add_argument("--project", metavar="DIR", help="project root (default: found above the current directory)")
    _project_file_options(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("complete", help="guarded completion at FILE:LINE:COL with the local model")
    p.add_argument("location", metavar="FILE:LINE:COL", help="position to complete at (1-based line and column)")
    p.add_argument("--project", metavar="DIR", help="project root (default: found above FILE)")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N", help="generate at most N tokens (default: completion.max_tokens)")
    p.add_argument("--no-guard", action="store_true", help="generate without the decoding guard")
    p.add_argument("--model", metavar="NAME", help="model folder or pulled hub id OWNER/NAME (see `luaguard model list`; "
                                                 "default: completion.endpoint, else completion.model, else the shipped "
                                                 "demonstration model)")
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed")
    p.add_argument("--timeout-ms", type=int, default=None, metavar="MS", help="time budget (default: completion.timeout_ms)")
    p.add_argument("--stop", choices=("balanced", "line"), default="balanced", help="where the model may stop")
    p.add_argument("--no-fim", action="store_true",
                   help="send only the text before the cursor (default: fill-in-the-middle when the model has FIM tokens)")
    p.add_argument("--min-confidence", type=float, default=None, metavar="P",
                   help="withhold a completion whose mean token probability is below P (default: completion.min_confidence)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_complete)

    p = sub.add_parser("model", help="get a completion model: `model pull OWNER/NAME`, `model list`")
    msub = p.add_subparsers(dest="model_command", required=True, metavar="ACTION")
    q = msub.add_parser("pull", help="download a Hugging Face model (config, tokenizer, safetensors) into the local cache")
    q.add_argument("name", metavar="OWNER/NAME", help="the model's Hugging Face id, e.g. Qwen/Qwen2.5-Coder-1.5B")
    q.add_argument("--revision", metavar="R", help="branch, tag or commit (default: the repository's default branch)")
    q.add_argument("--quiet", action="store_true", help="no progress bars")
    q.set_defaults(func=cmd_model_pull)
    q = msub.add_parser("list", help="the shipped demonstration model and the models in the local cache")
    q.add_argument("--format", choices=("text", "json"), default="text")
    q.set_defaults(func=cmd_model_list)

    p = sub.add_parser("serve", help="run the language server over stdio")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("hook", help="a coding agent's tool-use hook (before and after the tool runs): one payload on "
                                    "stdin, the agent's answer out")
    p.add_argument("--agent", choices=("claude", "codex", "cursor", "copilot"), default="claude",
                   help="the agent's hook protocol (default claude)")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="claude/codex: deny by exit 2 + stderr (text) or by a JSON decision on stdout (json); "
                        "cursor and copilot always answer JSON")
    p.add_argument("--project", metavar="DIR", help="project root (default: found upward from the file or cwd)")
    p.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                   help="pass the call unchecked after this long (default 5)")
    p.add_argument("--tools", action="append", metavar="FILE", help="extra tool definitions for MCP calls (repeatable)")
    p.set_defaults(func=cmd_hook)

    p = sub.add_parser("mcp", help="run luaguard's MCP server over stdio")
    p.add_argument("--project", metavar="DIR", help="project root (default: found upward from the current directory)")
    p.add_argument("--tools", action="append", metavar="FILE", help="extra tool definitions for validate_tool_call")
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("mcp-proxy", help="an MCP server in front of another one: validates every tool call first",
                       usage="luaguard mcp-proxy [--project DIR] [--annotations FILE] [--timeout S] -- UPSTREAM_COMMAND...")
    p.add_argument("--project", metavar="DIR", help="project root (default: found upward from the current directory)")
    p.add_argument("--annotations", action="append", metavar="FILE",
                   help="x-luaguard role annotations for the upstream's tools (repeatable; added to the shipped ones)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="a call the upstream does not answer in this long is reported (and the upstream restarted "
                        "if it does not answer a ping either; default 60)")
    p.add_argument("upstream", nargs=argparse.REMAINDER, help="the upstream MCP server's command line, after --")
    p.set_defaults(func=cmd_mcp_proxy)

    p = sub.add_parser("rule", help="print a rule's documentation (without ID: every rule id with its summary)")
    p.add_argument("rule_id", nargs="?", metavar="ID", help="a rule id, e.g. unknown_instance")
    p.set_defaults(func=cmd_rule)

    return parser


def cmd_rule(args: argparse.Namespace) -> int:
    """``luaguard rule [ID]``: the rule's documentation page (:func:`luaguard.rules.docs.rule_page`),
    or every rule id with its default severity and one line; an unknown id is a usage error."""
    from .rules.docs import rule_page
    from .rules.registry import all_rules

    rules = all_rules()
    if not args.rule_id:
        for rule in rules.values():
            print(f"{rule.id:<24} {rule.severity.label:<8} {rule.short}")
        return EXIT_OK
    rule = rules.get(args.rule_id)
    if rule is None:
        raise UsageError(f"unknown rule id {args.rule_id!r}; valid rule ids: {', '.join(rules)}")
    print(rule_page(rule), end="")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``luaguard`` console script; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors already
        return int(exc.code or 0)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"luaguard: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
