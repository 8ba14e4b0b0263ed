"""Command-line front end: ``luaguard check | index | validate | complete | serve``.  No check logic lives
here: every command calls the :class:`~luaguard.engine.Engine` or another engine module.

Exit codes: 0 no error-severity finding, 1 at least one, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

from . import __version__
from .config import Settings
from .findings import Finding, Severity, format_text
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


def collect_files(paths: Sequence[str], root: Path | None = None, exclude: Sequence[str] = ()):
    """The files ``luaguard check PATHS`` lints (:func:`luaguard.files.select_files`: every
    ``.lua``/``.luau`` file except Wally's and npm's installs and the ``exclude`` globs).
    Raises :class:`UsageError` for a path that does not exist."""
    from .files import select_files

    try:
        return select_files(paths, root=root, exclude=exclude)
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


# -- commands -----------------------------------------------------------------------
def cmd_check(args: argparse.Namespace) -> int:
    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    if getattr(args, "diff", None) is not None:
        return _check_diff(args, err)
    paths = list(args.paths)
    first = Path(paths[0]) if paths and paths[0] != "-" else None
    engine = make_engine(args, err, first)
    findings: list[Finding] = []
    checked = 0
    skipped: Counter[str] = Counter()
    if paths == ["-"]:
        data = sys.stdin.buffer.read()
        name = args.stdin_filename or "-"
        if args.stdin_filename and engine.root is not None and not Path(name).is_absolute():
            # --stdin-filename is relative to the project root (or absolute)
            candidate = engine.root / name
            name_for_engine: str = str(candidate)
        else:
            name_for_engine = name
        found = engine.lint_bytes(data, name_for_engine)
        for f in found:
            f.file = name
        findings.extend(found)
        checked = 1
    else:
        if "-" in paths:
            raise UsageError("'-' (stdin) cannot be combined with other paths")
        if not paths and engine.root is None:
            raise UsageError("no paths given and no project found (pass PATHS or --project DIR)")
        if paths:
            selection = collect_files(paths, engine.root, engine.settings.exclude)
        else:
            from .files import filter_project_files

            selection = filter_project_files(engine.script_files(), root=engine.root, exclude=engine.settings.exclude)
        for note in selection.notes:
            err(f"luaguard: {note}")
        skipped = selection.skipped
        if not selection.files:
            why = "; ".join(f"{n} skipped: {r}" for r, n in skipped.items())
            if not paths:
                where = engine.project.project_file.name if engine.project is not None and engine.project.project_file else "the project"
                raise UsageError(f"no Luau files to check: {where} maps no .lua/.luau file" + (f" ({why})" if why else ""))
            err("luaguard: no Luau files to check" + (f" ({why})" if why else ""))
        for file in selection.files:
            findings.extend(engine.lint_file(file))
        checked = len(selection.files)
    if args.format == "json":
        json.dump([f.to_json() for f in findings], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for f in findings:
            print(format_text(f))
        print(summary_line(findings, checked))
    if args.stats:
        out = sys.stderr if args.format == "json" else sys.stdout
        print_stats(engine.stats, out)
        if skipped:
            print("files skipped:", file=out)
            for reason, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])):
                print(f"  {n:>5}  {reason}", file=out)
    return EXIT_FINDINGS if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK


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
    engine = make_engine(args, err)  # the diff's paths are relative to the project found from here
    if engine.root is None:
        raise UsageError("--diff needs a project (pass --project DIR)")
    report = patch_report(engine, args.stdin_filename, diff=data.decode("utf-8", errors="replace"))
    findings = report.findings
    if args.format == "json":
        json.dump([f.to_json() for f in findings], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for f in findings:
            print(format_text(f))
        print(summary_line(findings, len({f.path for f in report.files} | {f.file for f in findings if f.file})))
    if args.stats:
        print_stats(engine.stats, sys.stderr if args.format == "json" else sys.stdout)
    return EXIT_FINDINGS if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK


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
    :mod:`luaguard.guard.generate`."""
    from dataclasses import replace

    from .guard import missing_dependencies, missing_message

    missing = missing_dependencies()
    if missing:
        raise UsageError(f"luaguard complete: {missing_message(missing)}")
    from .guard.generate import CompletionEngine, CompletionRequest, parse_location
    from .guard.model import ModelLoadError

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
        settings = replace(settings, model=args.model)
    request = CompletionRequest(
        text=text, offset=offset, path=str(Path(path).resolve()), max_tokens=args.max_tokens,
        guard=False if args.no_guard else None, temperature=args.temperature, seed=args.seed,
        timeout_ms=args.timeout_ms, stop=args.stop,
    )
    try:
        # the names created at run time, as the linter reads them (the project's and the file's)
        names = engine.runtime_names_for(text, Path(path))
        result = CompletionEngine(settings).complete(request, project=engine.project, runtime_names=names)
    except ModelLoadError as exc:
        raise UsageError(f"cannot load the completion model: {exc}") from exc
    if args.format == "json":
        out = {"file": path, "line": line, "column": col, **result.to_json()}
        json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        if result.text:
            sys.stdout.write(result.text if result.text.endswith("\n") else result.text + "\n")
        note = (f"{'guarded' if result.guarded else 'unguarded'}, {result.tokens} tokens, mean p {result.mean_prob:.2f}, "
                f"min p {result.min_prob:.2f}, stop: {result.stop_reason}")
        if result.withheld:
            note += f"; withheld (mean confidence below {settings.min_confidence:g})"
        if result.degraded:
            note += f"; {result.degraded}"
        err(note)
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

    run_stdio()
    return EXIT_OK


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
    if resp.stdout:
        sys.stdout.write(resp.stdout)
        sys.stdout.flush()
    if resp.stderr:
        sys.stderr.write(resp.stderr)
        sys.stderr.flush()
    return resp.exit_code


def cmd_mcp(args: argparse.Namespace) -> int:
    """``luaguard mcp``: the MCP server over stdio (needs the ``mcp`` extra)."""
    try:
        from .agents.mcp_server import build_server
    except ImportError as exc:
        raise UsageError(f"luaguard mcp needs the MCP SDK: pip install 'luaguard[mcp]' ({exc})") from None
    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    engine = make_engine(args, err)
    build_server(engine, extra_tool_files=tuple(args.tools or ())).run()
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
        raise UsageError(f"luaguard mcp-proxy needs the MCP SDK: pip install 'luaguard[mcp]' ({exc})") from None
    from .toolcalls.schemas import ToolSchemaError

    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    engine = make_engine(args, err)
    try:
        server = build_proxy(engine, upstream, annotation_files=tuple(args.annotations or ()),
                             timeout=max(0.5, args.timeout))
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
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--stats", action="store_true", help="print counts of findings by rule")
    p.add_argument("--diff", metavar="FILE", help="apply a unified diff ('-' = stdin) in memory and lint the changed "
                                                  "regions; --stdin-filename names the file of header-less hunks")
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
    p.add_argument("--model", metavar="PATH", help="model folder or cached hub id (default: completion.model, else the shipped model)")
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed")
    p.add_argument("--timeout-ms", type=int, default=None, metavar="MS", help="time budget (default: completion.timeout_ms)")
    p.add_argument("--stop", choices=("balanced", "line"), default="balanced", help="where the model may stop")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_complete)

    p = sub.add_parser("serve", help="run the language server over stdio")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("hook", help="a coding agent's pre-tool-use hook: one payload on stdin, the agent's answer out")
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
                   help="a call the upstream does not answer in this long is reported and the upstream restarted")
    p.add_argument("upstream", nargs=argparse.REMAINDER, help="the upstream MCP server's command line, after --")
    p.set_defaults(func=cmd_mcp_proxy)

    return parser


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
