"""``luaguard hook``: a coding agent's tool-use hook, before and after a tool runs.

One payload in (stdin, :mod:`.payloads`), one answer out in the agent's protocol.

**The change is what is judged.**  A ``Write`` to an existing file, ``Edit``/``MultiEdit`` and
Codex ``apply_patch`` updates are applied in memory to the file on disk; the findings of the
new text are compared with those of the old text (rule, message without line numbers and
covered text: :mod:`luaguard.introduced`, as ``luaguard check --diff`` does) and only what the
change introduces counts.  What was already in the file never denies and is never reported.
A new file is judged whole.  An MCP tool luaguard knows (its built-in tools, the project's,
the shipped annotations of Roblox's Studio MCP servers) is validated as a call.

**Before the tool runs** (Claude Code / Codex ``PreToolUse``, Cursor ``preToolUse`` /
``beforeMCPExecution``, Copilot ``preToolUse``): introduced errors deny.  A call luaguard
lets through gets no approval from luaguard: for Claude Code an ``"allow"`` would skip the
user's permission prompt, for Cursor ``{"permission": "allow"}`` is read by tools as an
approval on the user's behalf; luaguard answers nothing, so the agent's own approval
settings decide (shared/notes/agents.md; Cursor's hooks reference, cursor.com/docs/hooks,
defines the permission answer of ``preToolUse``/``beforeMCPExecution`` as an explicit
``allow|deny|ask``; a hook entry must not set ``failClosed``, which turns a silent answer into
a denial - reported for the Cursor IDE in awslabs/aidlc-workflows#745 and
aovestdipaperino/tokensave#187).  The old text of every judged file is kept for the after-hook (a file per change
in the temporary directory, keyed by session, path and new text; entries older than a day
are removed).

**After the tool ran** (Claude Code / Codex ``PostToolUse``, Cursor ``postToolUse``, Copilot
``postToolUse``): the findings the written change introduced - warnings included - are told
to the model, which reads nothing a pre-tool hook passes through (Claude Code shows a passing
PreToolUse hook's output in the transcript only; Codex rejects PreToolUse
``additionalContext``).  Nothing is printed when nothing is new.  The old text comes from
the before-hook's record, else from the tool's answer (``tool_response.originalFile``), else
an ``Edit`` is reversed on the file; when none is known the change is not judged (a note).

Answers (``--agent``; Claude Code and Codex share a wire format):

=====================  ======================================  =============================  =====================================
agent                  deny (before)                           otherwise (before)             findings (after)
=====================  ======================================  =============================  =====================================
claude/codex text      exit 2, reason on stderr                exit 0, nothing                exit 2, text on stderr
claude/codex json      ``hookSpecificOutput`` ``deny``          nothing                        ``{"decision": "block", "reason"}``
cursor                 ``{"permission": "deny", ...}``          nothing                        ``{"additional_context"}``
copilot                ``{"permissionDecision": "deny", ...}``  ``{}``                         ``{"additionalContext"}``
=====================  ======================================  =============================  =====================================

Sources: Claude Code hooks reference (code.claude.com/docs/en/hooks: PostToolUse exit 2 /
``decision: "block"`` feeds ``reason`` to Claude, the tool has already run); Codex
``hooks.json`` (the same wire format; PostToolUse since 0.118); Cursor hooks
(``postToolUse`` answers ``additional_context`` for the agent; ``afterFileEdit`` cannot
answer); GitHub Copilot SDK hooks (docs.github.com/en/copilot/how-tos/copilot-sdk:
``onPostToolUse`` returns ``additionalContext``; a ``null``/empty pre-tool answer changes
nothing).

Fail-open: malformed stdin, a broken project file, a file too large to check, an internal
error or a run over ``timeout`` seconds let the tool call through (exit 0) with a note on
stderr - a broken guard must never block the user's agent.  An edit that cannot be applied
(``old_string`` not in the file) is denied: the agent's own tool would fail the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .edits import EditError, FileChange, StringEdit, apply_patch_envelope, apply_string_edits, patch_paths, read_text
from .payloads import AGENTS, PayloadError, ToolUse, parse_payload

_STASH_NAME = re.compile(r"^[0-9a-f]{64}\.json$")

LUAU_SUFFIXES = (".lua", ".luau")
#: content over this many bytes is not checked (passes with a note): the linter's own limit
MAX_CONTENT_BYTES = 10 * 1024 * 1024
OUTPUTS = ("text", "json")
#: records of old texts older than this many seconds are removed
STASH_MAX_AGE = 24 * 3600


@dataclass(slots=True)
class Verdict:
    """luaguard's answer to one tool use: ``deny`` with ``feedback`` (the text for the model);
    ``report``: after the tool ran, what the written change introduced (``""``: nothing new);
    ``note`` (for the user's stderr: why nothing was checked, or ``None``); ``result``: the
    JSON the CLI's ``validate``/``check --diff`` would give (``None`` when nothing was
    checked)."""

    deny: bool
    feedback: str = ""
    report: str = ""
    note: str | None = None
    result: dict[str, Any] | None = None


@dataclass(slots=True)
class HookResponse:
    """What the hook process does: ``exit_code``, ``stdout`` and ``stderr`` text;
    ``abandoned``: the judging ran past the time-out and is still running (the process
    should end right after answering, not wait for it)."""

    exit_code: int
    stdout: str = ""
    stderr: str = ""
    abandoned: bool = False


@dataclass(slots=True)
class HookOptions:
    """``agent`` (one of :data:`~.payloads.AGENTS`), ``output`` (``text`` or ``json``; Cursor
    and Copilot always answer JSON), ``project`` (the root; default: found upward from the
    file or the payload's ``cwd``), ``timeout`` in seconds, ``stash_dir`` (where old texts
    are kept between the before- and after-hook; default: a per-user directory in the
    temporary directory)."""

    agent: str = "claude"
    output: str = "text"
    project: Path | None = None
    timeout: float = 5.0
    extra_tool_files: tuple[str, ...] = field(default_factory=tuple)
    stash_dir: Path | None = None


def _pass(note: str | None = None) -> Verdict:
    return Verdict(False, note=note)


# -- where things are -------------------------------------------------------------------------
def _abs(path: str, cwd: Path | None) -> Path:
    p = Path(path)
    if not p.is_absolute():
        p = (cwd or Path.cwd()) / p
    return Path(os.path.abspath(p))


def _root_for(use: ToolUse, path: Path | None, options: HookOptions) -> Path | None:
    """The project root: ``--project``; else the agent's working directory when it is a
    project root holding ``path`` (every project file under it judges the change, as
    ``luaguard check`` there would); else the nearest project root above ``path`` (or the
    working directory)."""
    from ..workspace import find_project_root

    if options.project is not None:
        return Path(os.path.abspath(options.project))
    start = path.parent if path is not None else use.cwd
    if start is None:
        return None
    root = find_project_root(start)
    if use.cwd is not None and path is not None:
        cwd = Path(os.path.abspath(use.cwd))
        at_cwd = find_project_root(cwd)
        if root is None or (at_cwd is not None and at_cwd == cwd.resolve() and _inside(path, cwd)):
            root = at_cwd
    return root


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


# -- old texts kept between the before- and after-hook ----------------------------------------
def _stash_dir(options: HookOptions) -> Path:
    """Where old texts are kept: ``options.stash_dir``, else ``hook`` in the user's cache
    directory (``$LUAGUARD_CACHE_DIR``, else ``$XDG_CACHE_HOME/luaguard``, else
    ``~/.cache/luaguard``) - never a shared temporary directory another user could plant."""
    if options.stash_dir is not None:
        return options.stash_dir
    env = os.environ.get("LUAGUARD_CACHE_DIR")
    if env and env.lower() != "off":
        return Path(env).expanduser() / "hook"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "luaguard" / "hook"


def _open_stash(options: HookOptions) -> int:
    """A descriptor of the private stash directory, made (0700) if missing.  Raises
    ``OSError`` when the path is a link or not a directory, or belongs to another user (the
    directory is then not used: nothing is followed, nothing deleted); a directory of ours
    with wider permissions is narrowed to 0700."""
    d = _stash_dir(options)
    d.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(f"{d} is not a directory")
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise OSError(f"{d} belongs to another user")
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.fchmod(fd, 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _stash_key(use: ToolUse, path: Path, new_text: str) -> str:
    h = hashlib.sha256()
    h.update(f"{use.session or use.cwd or ''}\0{path}\0".encode("utf-8", errors="replace"))
    h.update(new_text.encode("utf-8", errors="replace"))
    return h.hexdigest()


def _stash(use: ToolUse, options: HookOptions, changes: list[tuple[FileChange, Path]]) -> None:
    """Record each change's old text under (session, path, new text); never raises.  Only
    our own records (regular files named by a key) are ever removed, by name inside the
    directory (no link followed)."""
    try:
        fd = _open_stash(options)
    except OSError:
        return
    try:
        now = time.time()
        for name in os.listdir(fd):
            if not _STASH_NAME.match(name):
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STASH_MAX_AGE:
                    os.unlink(name, dir_fd=fd)
            except OSError:
                pass
        for ch, p in changes:
            if ch.new is None:
                continue
            name = _stash_key(use, p, ch.new) + ".json"
            try:
                out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600,
                              dir_fd=fd)
            except OSError:
                continue
            with os.fdopen(out, "w", encoding="utf-8", errors="surrogatepass") as fh:
                json.dump({"path": str(p), "old": ch.old}, fh)
    except (OSError, ValueError):
        pass
    finally:
        os.close(fd)


def _unstash(use: ToolUse, options: HookOptions, path: Path, new_text: str) -> tuple[bool, str | None]:
    """``(found, old text)`` recorded by the before-hook for this written text (the
    record is removed); ``old`` ``None`` with ``found``: the file did not exist."""
    name = _stash_key(use, path, new_text) + ".json"
    try:
        fd = _open_stash(options)
    except OSError:
        return False, None
    try:
        rfd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK, dir_fd=fd)
        with os.fdopen(rfd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return False, None
            data = json.loads(fh.read(64 * 1024 * 1024).decode("utf-8", errors="surrogatepass"))
        os.unlink(name, dir_fd=fd)
    except (OSError, ValueError, RecursionError):
        return False, None
    finally:
        os.close(fd)
    old = data.get("old") if isinstance(data, dict) else None
    return True, old if isinstance(old, str) else None


# -- judging ----------------------------------------------------------------------------------
def _luau_in_project(use: ToolUse, changes: list[FileChange], options: HookOptions
                     ) -> tuple[Path | None, list[tuple[FileChange, Path]], Verdict | None]:
    """The project root and the changes to Luau files inside it (or a verdict: a write
    through a symbolic link that leaves the project, content too large or binary)."""
    paths = [(ch, _abs(ch.path, use.cwd)) for ch in changes]
    luau = [(ch, p) for ch, p in paths if p.suffix in LUAU_SUFFIXES]
    if not luau:
        return None, [], None
    root = _root_for(use, luau[0][1], options)
    if root is None:
        return None, [], None
    real_root = Path(os.path.realpath(root))
    mine = []
    for ch, p in luau:
        if not _inside(p, root):
            continue  # outside the project: not luaguard's business
        real = Path(os.path.realpath(p))
        if not _inside(real, real_root):
            return root, [], Verdict(True, feedback=f"luaguard: {ch.path} is inside the project but resolves to {real}, "
                                                    f"outside it (a symbolic link): write the file inside the project instead.")
        mine.append((ch, p))
    for ch, _ in mine:
        for text in (ch.new, ch.old):
            if text is not None and len(text.encode("utf-8", errors="replace")) > MAX_CONTENT_BYTES:
                return root, [], _pass(f"luaguard: {ch.path}: content over {MAX_CONTENT_BYTES:,} bytes; not checked")
        if "\x00" in (ch.new or ""):
            return root, [], _pass(f"luaguard: {ch.path}: new content is binary (NUL bytes); not checked")
    return root, mine, None


def _judge(root: Path, mine: list[tuple[FileChange, Path]], *, written: bool) -> Verdict:
    """Lint the changes (what they introduced), each file under the projects that map it
    (:mod:`luaguard.projects`)."""
    from ..engine import ProjectUnreadable
    from ..projects import open_projects
    from ..toolcalls.api import validate_changes
    from ..toolcalls.diffs import TextChange

    try:
        engine = open_projects(root)
    except ProjectUnreadable as exc:
        return _pass(f"luaguard: project at {root} cannot be read ({exc}); not checked")
    changes = [TextChange(str(p) if ch.old is not None else None, str(p) if ch.new is not None else None, ch.new, ch.old)
               for ch, p in mine]
    res = validate_changes(engine, changes, written=written)
    if written:
        found = res["errors"] or res["warnings"]
        return Verdict(False, report=res["feedback"] if found else "", result=res)
    if not res["valid"]:
        return Verdict(True, feedback=res["feedback"], result=res)
    return Verdict(False, result=res)


class _LinkOut(Exception):
    """A file the agent names inside the project resolves outside it (a symbolic link)."""

    def __init__(self, shown: str, real: str) -> None:
        super().__init__(shown)
        self.shown, self.real = shown, real


def _reader(use: ToolUse, options: HookOptions):
    """Reads the file an edit applies to, as :func:`~.edits.read_text` does, but never
    through a link that leaves the project (raises :class:`_LinkOut` before opening it) and
    only a regular file within the size limit (:mod:`luaguard.files`)."""
    def read(path: Path) -> str | None:
        if path.suffix in LUAU_SUFFIXES:
            root = _root_for(use, path, options)
            if root is not None and _inside(path, root):
                from ..files import inside

                if os.path.lexists(path) and not inside(path, root):
                    raise _LinkOut(str(path), os.path.realpath(path))
        return read_text(path)

    return read


def _pre_changes(use: ToolUse, options: HookOptions) -> list[FileChange]:
    """The changes the tool is about to make (raises :class:`EditError`, ``OSError``,
    :class:`_LinkOut`)."""
    read = _reader(use, options)
    if use.kind == "write":
        return [FileChange(use.file_path or "", read(_abs(use.file_path or "", use.cwd)), use.content)]
    if use.kind == "edit":
        path = _abs(use.file_path or "", use.cwd)
        if path.suffix not in LUAU_SUFFIXES:
            return []
        return [apply_string_edits(use.file_path or "", read(path), use.edits)]
    return apply_patch_envelope(use.envelope or "", use.cwd or Path.cwd(), read)


def _post_changes(use: ToolUse, options: HookOptions) -> tuple[list[FileChange], list[str]]:
    """The changes the tool made, rebuilt from the files now on disk and the old texts
    (see the module docstring); files whose old text is unknown are left out (named in the
    second list)."""
    if use.kind in ("write", "edit"):
        targets = [(use.file_path or "", "update")]
    else:
        targets = [(p, kind) for p, kind in patch_paths(use.envelope or "") if kind != "delete"]
    out: list[FileChange] = []
    unknown: list[str] = []
    read = _reader(use, options)
    for raw, kind in targets:
        p = _abs(raw, use.cwd)
        if p.suffix not in LUAU_SUFFIXES:
            continue
        new = read(p)
        if new is None:
            continue
        found, old = _unstash(use, options, p, new)
        if not found:
            found, old = _old_from_response(use, new)
        if not found and kind == "add":
            found, old = True, None
        if found:
            out.append(FileChange(raw, old, new))
        else:
            unknown.append(raw)
    return out, unknown


def _old_from_response(use: ToolUse, new: str) -> tuple[bool, str | None]:
    resp = use.response
    if isinstance(resp, str):
        try:
            resp = json.loads(resp)
        except ValueError:
            resp = None
    if isinstance(resp, dict):
        orig = resp.get("originalFile")
        if isinstance(orig, str):
            return True, orig
        if use.kind == "write" and resp.get("type") == "create":
            return True, None
    if use.kind == "edit" and use.edits and all(e.new for e in use.edits):
        try:
            back = apply_string_edits(use.file_path or "", new,
                                      [StringEdit(e.new, e.old, e.replace_all) for e in reversed(use.edits)])
        except EditError:
            return False, None
        return True, back.new
    return False, None


def _check_mcp(use: ToolUse, options: HookOptions) -> Verdict:
    root = _root_for(use, None, options)
    from ..engine import Engine, ProjectUnreadable, open_engine
    from ..toolcalls import model as M
    from ..toolcalls.api import validate_calls

    if root is not None:
        try:
            engine = open_engine(root)
        except ProjectUnreadable as exc:
            return _pass(f"luaguard: project at {root} cannot be read ({exc}); not checked")
    else:
        engine = Engine(None)
    from .annotations import known_tool

    tool_files = known_tool(use.mcp_server, use.mcp_tool, options.extra_tool_files)
    if tool_files is None:
        return _pass()
    [res] = validate_calls(engine, {"name": use.mcp_tool, "arguments": use.arguments}, extra_tool_files=tool_files)
    if any(e["code"] == M.UNKNOWN_TOOL for e in res["errors"]):
        return _pass()
    if use.event == "post":
        items = [*res["errors"], *res["warnings"]]
        if not items:
            return Verdict(False, result=res)
        listed = " ".join(f"({i}) {p['message']}" for i, p in enumerate(items[:6], 1))
        return Verdict(False, result=res, report=f"luaguard checked the {use.mcp_tool} call that just ran: {listed}")
    if not res["valid"]:
        return Verdict(True, feedback=res["feedback"], result=res)
    return Verdict(False, result=res)


def evaluate(use: ToolUse, options: HookOptions | None = None) -> Verdict:
    """luaguard's verdict on ``use`` (before or after the tool ran, ``use.event``).  Raises
    nothing for bad edits (they are denied, with the reason); other exceptions are bugs
    (:func:`run_hook` turns them into a pass)."""
    options = options or HookOptions()
    try:
        if use.kind == "mcp":
            return _check_mcp(use, options)
        if use.kind not in ("write", "edit", "patch"):
            return _pass()
        if use.event == "post":
            changes, unknown = _post_changes(use, options)
            root, mine, early = _luau_in_project(use, changes, options)
            note = f"luaguard: no record of {', '.join(unknown)} before the change; not checked" if unknown else None
            if early is not None:
                early.deny = False  # the tool already ran
                return early
            if not mine:
                return _pass(note)
            verdict = _judge(root, mine, written=True)
            verdict.note = verdict.note or note
            return verdict
        changes = _pre_changes(use, options)
        root, mine, early = _luau_in_project(use, changes, options)
        if early is not None:
            return early
        if not mine:
            return _pass()
        verdict = _judge(root, mine, written=False)
        if not verdict.deny:
            _stash(use, options, mine)
        return verdict
    except _LinkOut as exc:
        text = (f"luaguard: {exc.shown} is inside the project but resolves to {exc.real}, outside it (a symbolic "
                f"link): write the file inside the project instead.")
        return Verdict(False, note=text) if use.event == "post" else Verdict(True, feedback=text)
    except EditError as exc:
        if use.kind == "edit" and not _edit_in_project(use, options):
            return _pass()
        return Verdict(True, feedback=f"luaguard: this edit cannot be applied: {exc}")
    except (OSError, UnicodeError) as exc:
        return _pass(f"luaguard: cannot read the file to check ({exc}); not checked")


def _edit_in_project(use: ToolUse, options: HookOptions) -> bool:
    if not use.file_path:
        return False
    p = _abs(use.file_path, use.cwd)
    root = _root_for(use, p, options)
    return p.suffix in LUAU_SUFFIXES and root is not None and _inside(p, root)


# -- answering -------------------------------------------------------------------------------
def respond(verdict: Verdict, agent: str = "claude", output: str = "text", event: str = "pre") -> HookResponse:
    """The hook's answer to ``verdict`` in ``agent``'s protocol for ``event`` (``pre`` or
    ``post``; see the module docstring's table)."""
    note = verdict.note + "\n" if verdict.note else ""

    def as_json(body: dict) -> HookResponse:
        # ASCII escapes: a lone surrogate in the code quoted back cannot break the printing
        return HookResponse(0, json.dumps(body) + "\n", note)

    if event == "post":
        text = verdict.report
        if agent == "cursor":
            return as_json({"additional_context": text}) if text else HookResponse(0, "", note)
        if agent == "copilot":
            return as_json({"additionalContext": text} if text else {})
        if not text:
            return HookResponse(0, "", note)
        if output == "json":
            return as_json({"decision": "block", "reason": text})
        return HookResponse(2, "", note + text.rstrip("\n") + "\n")
    if agent == "cursor":
        if verdict.deny:
            return as_json({"permission": "deny", "user_message": "luaguard blocked this change: " + _first_line(verdict.feedback),
                            "agent_message": verdict.feedback})
        return HookResponse(0, "", note)  # no permission: Cursor's own approval settings decide
    if agent == "copilot":
        if verdict.deny:
            return as_json({"permissionDecision": "deny", "permissionDecisionReason": verdict.feedback})
        return as_json({})
    if verdict.deny:
        if output == "json":
            return as_json({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                   "permissionDecisionReason": verdict.feedback}})
        return HookResponse(2, "", verdict.feedback.rstrip("\n") + "\n")
    return HookResponse(0, "", note)


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= 200 else line[:197] + "..."


def run_hook(data: bytes, options: HookOptions | None = None) -> HookResponse:
    """Read one payload from ``data`` and answer it.  Never raises and returns within about
    ``options.timeout`` seconds: malformed input, internal errors and time-outs pass with a
    note on stderr."""
    options = options or HookOptions()
    if options.agent not in AGENTS:
        return HookResponse(0, "", f"luaguard hook: unknown agent {options.agent!r} (known: {', '.join(AGENTS)}); not checked\n")
    try:
        payload = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return respond(_pass(f"luaguard hook: stdin is not UTF-8 ({exc.reason} at byte {exc.start}); not checked"),
                       options.agent, options.output)
    except json.JSONDecodeError as exc:
        return respond(_pass(f"luaguard hook: stdin is not a JSON payload (line {exc.lineno}, column {exc.colno}: "
                             f"{exc.msg}); not checked"), options.agent, options.output)
    except RecursionError:
        return respond(_pass("luaguard hook: stdin JSON is nested too deeply; not checked"), options.agent, options.output)
    except ValueError as exc:  # an integer over Python's 4,300-digit limit
        return respond(_pass(f"luaguard hook: stdin JSON cannot be read ({exc}); not checked"),
                       options.agent, options.output)
    try:
        use = parse_payload(payload, options.agent)
    except PayloadError as exc:
        return respond(_pass(f"luaguard hook: {exc}; not checked"), options.agent, options.output)
    except (ValueError, RecursionError) as exc:  # a tool input that is JSON in a string, nested too deeply
        return respond(_pass(f"luaguard hook: the tool input cannot be read ({type(exc).__name__}); not checked"),
                       options.agent, options.output)
    box: list[Verdict] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            box.append(evaluate(use, options))
        except BaseException as exc:  # a bug must not block the agent
            errors.append(exc)

    t = threading.Thread(target=work, name="luaguard-hook", daemon=True)
    t.start()
    t.join(options.timeout)
    if t.is_alive():
        verdict = _pass(f"luaguard hook: no answer within {options.timeout:g} s; not checked")
    elif errors:
        verdict = _pass(f"luaguard hook: internal error ({errors[0]!r}); not checked")
    else:
        verdict = box[0]
    resp = respond(verdict, options.agent, options.output, use.event)
    resp.abandoned = t.is_alive()
    return resp
