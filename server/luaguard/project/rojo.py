"""Rojo's sync rules: turn a ``*.project.json`` and the files it points at into an instance tree.

This follows Rojo 7.x (checked against Rojo's ``src/project.rs`` and
``src/snapshot_middleware/*.rs`` at 7.7): what each file becomes, how instances are named,
which ``init`` file turns a directory into a script, how ``.meta.json`` files apply, how
``$className`` is inferred for services, ``globIgnorePaths`` and ``syncRules``.  File
*contents* are only read where the tree depends on them: project files, ``.meta.json``,
``.model.json`` and the first element of ``.rbxmx`` models.  Scripts are mapped by name.

Sync rules (Rojo 7.7; the version that added each rule in brackets):

* ``*.server.lua(u)`` -> ``Script`` (``RunContext`` Legacy, or Server when the project
  sets ``emitLegacyScripts: false`` [7.4]); ``*.client.lua(u)`` -> ``LocalScript`` (or a
  ``Script`` with ``RunContext`` Client); ``*.plugin.lua(u)`` -> ``Script`` with
  ``RunContext`` Plugin [7.5]; other ``*.lua``/``*.luau`` [7.2] -> ``ModuleScript``.
  The instance is named after the file minus the suffix (``foo.server.lua`` -> ``foo``;
  ``foo.spec.lua`` -> ``foo.spec``).
* ``*.project.json(c)`` -> a nested project; ``*.model.json(c)`` -> the JSON model (the
  top-level ``Name`` is ignored since Rojo 6; children named ``Name``/``name`` or after
  their class); ``*.json(c)`` (not ``*.meta.json``), ``*.toml`` [7.4], ``*.yml``/``*.yaml``
  [7.6] -> ``ModuleScript``; ``*.csv`` -> ``LocalizationTable``; ``*.txt`` ->
  ``StringValue``; ``*.rbxm``/``*.rbxmx`` -> the model's single top-level instance.
  ``.jsonc`` variants and JSONC syntax (comments, trailing commas) are from 7.7.
  Files matching no rule are ignored.
* A directory becomes a ``Folder`` unless it holds ``default.project.json(c)`` (then it is
  that project) or an ``init`` file, checked in this order: ``init.luau``, ``init.lua``,
  ``init.server.luau``, ``init.server.lua``, ``init.client.luau``, ``init.client.lua``,
  ``init.plugin.lua``, ``init.plugin.luau`` [7.7], ``init.csv`` [7.3]; the directory then
  becomes that script/``LocalizationTable`` and its other entries its children.  These
  ``init`` files never become instances of their own.
* ``<name>.meta.json(c)`` next to a script/``.txt``/``.csv``/``.json``/``.toml``/``.yaml``
  file sets ``ignoreUnknownInstances`` and properties of the instance named ``<name>``;
  ``init.meta.json(c)`` does so for the directory and may set ``className`` when the
  directory would otherwise be a ``Folder``.
* Project nodes: ``$path`` (a string or ``{"optional": path}`` [7.1]) is relative to the
  project file's folder; ``$className`` must name a Folder-compatible class if ``$path``
  gives one; for children of a ``DataModel`` named after a service, of ``StarterPlayer``
  named ``StarterPlayerScripts``/``StarterCharacterScripts`` and of ``Workspace`` named
  ``Terrain``, the class is inferred from the name; ``$ignoreUnknownInstances`` defaults
  to true where there is no ``$path``.  Children from ``$path`` come before children the
  project declares (sorted by name, as Rojo's ``BTreeMap`` orders them).
* ``globIgnorePaths`` (gitignore-style ``!`` negation [7.7]; last match wins) apply to
  directory entries, relative to the folder of the project that declares them, and
  accumulate into nested projects; ``syncRules`` [7.5] apply only in their own project;
  ``emitLegacyScripts`` defaults to true.  Globs follow the ``globset`` crate with default
  options: ``*`` and ``?`` also match ``/``.

Open nodes (children may exist that the files do not show; see :mod:`.tree`): nodes with
``$ignoreUnknownInstances`` true (explicit, or by default for project nodes without
``$path``) or ``ignoreUnknownInstances`` in a meta file; ``.rbxm``/``.rbxmx`` models
(contents are not read); ``$path`` targets missing from the checkout (Wally's
``Packages/``; also recorded as an ``info`` problem); ``Workspace`` unless the project sets
``$ignoreUnknownInstances: false`` on it (a place file adds parts, terrain and, at run
time, characters); paths refused for safety.

Safety: nothing outside the index root is read: ``$path`` values that leave the root
(``../..``, ``/etc``) and symbolic links whose target is outside the root are refused with
a problem; directory symlink loops and recursive project includes are detected and
reported, never followed.  Deeply nested JSON is reported, never a ``RecursionError``.
"""

from __future__ import annotations

import bisect
import json
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any, Callable

from .api import RobloxApi
from .tree import Instance

__all__ = [
    "IndexProblem",
    "ProjectFileError",
    "JsonError",
    "parse_jsonc",
    "pointer_position",
    "Locator",
    "compile_glob",
    "RojoBuilder",
]

# --------------------------------------------------------------------------------------------
# Shared types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexProblem:
    """Something wrong or notable found while indexing.

    ``file`` is the project-root-relative POSIX path (or the absolute path for files
    outside the root); ``line``/``column`` are 1-based (``None`` when unknown);
    ``severity`` is ``"error" | "warning" | "info"``.
    """

    file: str
    line: int | None
    column: int | None
    message: str
    severity: str

    def __str__(self) -> str:
        return f"{_location(self.file, self.line, self.column)}: {self.severity}: {self.message}"


class ProjectFileError(Exception):
    """A project or sourcemap file is malformed JSON or has the wrong shape.

    Attributes ``file`` (path as shown), ``line``/``column`` (1-based, ``None`` when
    unknown) and ``message``; ``str()`` is ``"file:line:col: message"``.
    """

    def __init__(self, file: str, line: int | None, column: int | None, message: str) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{_location(self.file, self.line, self.column)}: {self.message}"


def _location(file: str, line: int | None, column: int | None) -> str:
    """``file``, ``file:line`` or ``file:line:column`` (1-based, as given)."""
    if line is None:
        return file
    return f"{file}:{line}" if column is None else f"{file}:{line}:{column}"


# --------------------------------------------------------------------------------------------
# JSON with comments
# --------------------------------------------------------------------------------------------

MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_JSON_DEPTH = 500


class JsonError(Exception):
    """Malformed JSON(C): ``message`` with 1-based ``line``/``column`` (may be None)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(message)


_COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)
_TRAILING_COMMA_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|,(?=\s*[\]}])', re.S)
_BRACKET_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[{]|[\]}]')


def _blank(match: re.Match) -> str:
    text = match.group(0)
    if text.startswith('"'):
        return text
    # keep newlines so line/column numbers stay right
    return "".join(c if c == "\n" else " " for c in text)


def _strip_jsonc(text: str) -> str:
    if "/" in text:
        text = _COMMENT_RE.sub(_blank, text)
    if "," in text:
        text = _TRAILING_COMMA_RE.sub(_blank, text)
    return text


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def _too_deep_offset(text: str, limit: int) -> int | None:
    depth = 0
    for m in _BRACKET_RE.finditer(text):
        tok = m.group(0)
        if tok in "[{":
            depth += 1
            if depth > limit:
                return m.start()
        elif tok in "]}":
            depth -= 1
    return None


def parse_jsonc(text: str) -> tuple[Any, str]:
    """Parse JSON with comments and trailing commas (Rojo's JSONC dialect).

    Returns ``(value, stripped_text)``; ``stripped_text`` has the same line/column layout
    as ``text`` (comments blanked) and is what :func:`pointer_position` expects.  Raises
    :class:`JsonError` with a 1-based line/column for malformed input, an empty document,
    or nesting deeper than 500 levels.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    stripped = _strip_jsonc(text)
    if not stripped.strip():
        raise JsonError("file contains no JSON value", 1, 1)
    off = _too_deep_offset(stripped, MAX_JSON_DEPTH)
    if off is not None:
        line, col = _line_col(stripped, off)
        raise JsonError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", line, col)
    try:
        return json.loads(stripped), stripped
    except json.JSONDecodeError as exc:
        raise JsonError(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:  # pragma: no cover - guarded by the depth check above
        raise JsonError("JSON nested too deeply", 1, 1) from None


def _decode_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        prefix = raw[: exc.start]
        line = prefix.count(b"\n") + 1
        col = exc.start - (prefix.rfind(b"\n") + 1) + 1
        raise JsonError("file is not UTF-8 text", line, col) from None


_TOKEN_RE = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([{}\[\],:])|([^\s{}\[\],:"]+))', re.S)


class Locator:
    """Finds the line/column of JSON values by pointer, in one pass over the text.

    ``Locator(stripped_text)(["tree", "ReplicatedStorage", "$path"])`` -> ``(line, col)``
    (1-based) of that value, or of its deepest existing ancestor; ``(None, None)`` for an
    empty document.  The offsets of all values are computed on the first call and
    cached, so many lookups in a large file stay cheap.
    """

    __slots__ = ("text", "_offsets", "_line_starts")

    def __init__(self, text: str) -> None:
        self.text = text
        self._offsets: dict[tuple, int] | None = None
        self._line_starts: list[int] | None = None

    def _line_col(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def _scan(self) -> dict[tuple, int]:
        text = self.text
        out: dict[tuple, int] = {}
        frames: list[list] = []  # [kind "o"|"a", current key/index, awaiting a key?]
        i = 0
        n = len(text)
        while i < n:
            m = _TOKEN_RE.match(text, i)
            if m is None or m.end() == i:
                break
            i = m.end()
            if m.group(1) is not None:
                tok, start = m.group(1), m.start(1)
            elif m.group(2) is not None:
                tok, start = m.group(2), m.start(2)
            else:
                tok, start = m.group(3), m.start(3)
            top = frames[-1] if frames else None
            if top is not None and top[0] == "o" and top[2]:
                if tok == "}":
                    frames.pop()
                elif tok.startswith('"'):
                    try:
                        top[1] = json.loads(tok)
                    except ValueError:
                        top[1] = tok[1:-1]
                    top[2] = False
                continue
            if tok == ":":
                continue
            if tok == ",":
                if top is not None:
                    if top[0] == "o":
                        top[2] = True
                    else:
                        top[1] += 1
                continue
            if tok in ("}", "]"):
                if frames:
                    frames.pop()
                continue
            out[tuple(f[1] for f in frames)] = start
            if tok == "{":
                frames.append(["o", None, True])
            elif tok == "[":
                frames.append(["a", 0, False])
        return out

    def __call__(self, parts: list[str | int]) -> tuple[int | None, int | None]:
        if self._offsets is None:
            self._offsets = self._scan()
        key = tuple(parts)
        while True:
            off = self._offsets.get(key)
            if off is not None:
                return self._line_col(off)
            if not key:
                return None, None
            key = key[:-1]


def pointer_position(text: str, parts: list[str | int]) -> tuple[int | None, int | None]:
    """1-based ``(line, column)`` of the JSON value at the pointer ``parts`` in ``text``.

    ``text`` must be the stripped text :func:`parse_jsonc` returned.  Returns the position
    of the deepest value found along the pointer (``(None, None)`` if none).  For many
    lookups in one file, keep a :class:`Locator`.
    """
    return Locator(text)(parts)


def _pointer_str(parts: list[str | int]) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


# --------------------------------------------------------------------------------------------
# Globs (globset semantics with default options: `*`/`?` match `/` too)
# --------------------------------------------------------------------------------------------


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob as Rojo's ``globset`` matcher does (default options).

    ``*`` matches any run of characters including ``/``; ``?`` any one character; ``**/``
    at the start and ``/**/`` inside also match zero directories; ``[...]``/``[!...]`` are
    classes; ``{a,b}`` alternatives; ``\\`` escapes.  The whole path must match.
    Raises ``ValueError`` for an unclosed ``[`` or ``{``.
    """
    out: list[str] = []
    i = 0
    n = len(pattern)
    in_alt = 0
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars = j - i
            if stars >= 2 and (i == 0 or pattern[i - 1] == "/") and j < n and pattern[j] == "/":
                out.append("(?:.*/)?")
                i = j + 1
                continue
            out.append(".*")
            i = j
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            j = i + 1
            negate = False
            if j < n and pattern[j] in "!^":
                negate = True
                j += 1
            start = j
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                raise ValueError(f"unclosed character class in glob {pattern!r}")
            body = pattern[start:j].replace("\\", "\\\\").replace("^", "\\^")
            out.append(("[^" if negate else "[") + body + "]")
            i = j + 1
        elif c == "{":
            in_alt += 1
            out.append("(?:")
            i += 1
        elif c == "}" and in_alt:
            in_alt -= 1
            out.append(")")
            i += 1
        elif c == "," and in_alt:
            out.append("|")
            i += 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    if in_alt:
        raise ValueError(f"unclosed alternation in glob {pattern!r}")
    return re.compile("".join(out), re.S)


@dataclass(frozen=True, slots=True)
class _IgnoreRule:
    base: str  # root-relative folder of the declaring project ("" = root)
    regex: re.Pattern[str]
    negated: bool


@dataclass(frozen=True, slots=True)
class _SyncRule:
    base: str
    include: re.Pattern[str]
    exclude: re.Pattern[str] | None
    use: str
    suffix: str | None


def _relative_to(base: str, rel: str) -> str | None:
    if not base:
        return rel
    if rel.startswith(base) and len(rel) > len(base) and rel[len(base)] == "/":
        return rel[len(base) + 1:]
    return None


@dataclass(frozen=True, slots=True)
class _Ctx:
    """Rojo's ``InstanceContext`` plus the chain of projects being expanded."""

    ignore_rules: tuple[_IgnoreRule, ...] = ()
    sync_rules: tuple[_SyncRule, ...] = ()
    emit_legacy: bool = True
    chain: tuple[str, ...] = ()  # root-relative paths of the project files being expanded

    def ignored(self, rel: str) -> bool:
        ignored = False
        for rule in self.ignore_rules:
            sub = _relative_to(rule.base, rel)
            if sub is not None and rule.regex.fullmatch(sub):
                ignored = not rule.negated
        return ignored

    def user_rule(self, rel: str) -> _SyncRule | None:
        for rule in self.sync_rules:
            sub = _relative_to(rule.base, rel)
            if sub is None:
                continue
            if rule.exclude is not None and rule.exclude.fullmatch(sub):
                continue
            if rule.include.fullmatch(sub):
                return rule
        return None


# --------------------------------------------------------------------------------------------
# Sync rules for files
# --------------------------------------------------------------------------------------------

_SYNC_USE = {
    "csv": "csv", "jsonModel": "jsonModel", "json": "json", "serverScript": "server",
    "clientScript": "client", "moduleScript": "module", "pluginScript": "plugin",
    "legacyClientScript": "legacyClient", "legacyServerScript": "legacyServer",
    "runContextServerScript": "runContextServer", "runContextClientScript": "runContextClient",
    "project": "project", "rbxm": "rbxm", "rbxmx": "rbxmx", "toml": "toml", "text": "text",
    "yaml": "yaml", "ignore": "ignore",
}

# (suffix, middleware, strip the suffix? else use the file stem)
_DEFAULT_RULES: tuple[tuple[str, str, bool], ...] = (
    (".server.lua", "server", True),
    (".server.luau", "server", True),
    (".client.lua", "client", True),
    (".client.luau", "client", True),
    (".plugin.lua", "plugin", True),
    (".plugin.luau", "plugin", True),
    (".lua", "module", False),
    (".luau", "module", False),
    (".project.json", "project", True),
    (".project.jsonc", "project", True),
    (".model.json", "jsonModel", True),
    (".model.jsonc", "jsonModel", True),
    (".json", "json", True),
    (".jsonc", "json", True),
    (".toml", "toml", False),
    (".csv", "csv", False),
    (".txt", "text", False),
    (".rbxmx", "rbxmx", False),
    (".rbxm", "rbxm", False),
    (".yml", "yaml", False),
    (".yaml", "yaml", False),
)

# `init` files are never instances of their own (Rojo's snapshot_from_vfs).
_INIT_FILE_NAMES = frozenset({
    "init.server.luau", "init.server.lua", "init.client.luau", "init.client.lua",
    "init.plugin.luau", "init.plugin.lua", "init.luau", "init.lua", "init.csv",
})
# Directory middleware priority (Rojo's get_dir_middleware).
_INIT_ORDER: tuple[tuple[str, str], ...] = (
    ("init.luau", "module"),
    ("init.lua", "module"),
    ("init.server.luau", "server"),
    ("init.server.lua", "server"),
    ("init.client.luau", "client"),
    ("init.client.lua", "client"),
    ("init.plugin.lua", "plugin"),
    ("init.plugin.luau", "plugin"),
    ("init.csv", "csv"),
)
_DEFAULT_PROJECT_NAMES = ("default.project.json", "default.project.jsonc")

_SCRIPT_MIDDLEWARES = frozenset({
    "server", "client", "module", "plugin", "legacyServer", "legacyClient",
    "runContextServer", "runContextClient",
})
# middlewares whose resulting tree depends on the file's contents
_CONTENT_MIDDLEWARES = frozenset({"project", "jsonModel", "rbxmx"})
_ADJACENT_META = frozenset({
    "server", "client", "module", "plugin", "legacyServer", "legacyClient",
    "runContextServer", "runContextClient", "json", "toml", "yaml", "csv", "text",
})
_RUN_CONTEXT_VALUES = {0: "Legacy", 1: "Server", 2: "Client", 3: "Plugin"}

_KNOWN_TOP_KEYS = frozenset({
    "$schema", "name", "tree", "servePort", "servePlaceIds", "blockedPlaceIds", "placeId",
    "gameId", "serveAddress", "serveAllowedHosts", "emitLegacyScripts", "globIgnorePaths",
    "syncbackRules", "syncRules",
})
_KNOWN_NODE_KEYS = frozenset({
    "$className", "$path", "$properties", "$attributes", "$ignoreUnknownInstances", "$id",
})

MAX_PROJECT_NESTING = 32
MAX_NODE_DEPTH = 200


def _file_stem(name: str) -> str:
    # Rust's Path::file_stem: strip the last extension; a leading dot is not an extension.
    dot = name.rfind(".")
    if dot <= 0:
        return name
    return name[:dot]


def default_rule(name: str) -> tuple[str, str] | None:
    """``(middleware, instance name)`` for a file name under Rojo's default sync rules."""
    for suffix, middleware, strip in _DEFAULT_RULES:
        if name.endswith(suffix):
            if middleware == "json" and (name.endswith(".meta.json") or name.endswith(".meta.jsonc")):
                return None
            return middleware, (name[: -len(suffix)] if strip else _file_stem(name))
    return None


def _script_class(middleware: str, emit_legacy: bool) -> tuple[str, str | None]:
    if middleware == "module":
        return "ModuleScript", None
    if middleware == "server":
        return "Script", ("Legacy" if emit_legacy else "Server")
    if middleware == "client":
        return ("LocalScript", None) if emit_legacy else ("Script", "Client")
    if middleware == "plugin":
        return "Script", "Plugin"
    if middleware == "legacyServer":
        return "Script", "Legacy"
    if middleware == "legacyClient":
        return "LocalScript", None
    if middleware == "runContextServer":
        return "Script", "Server"
    if middleware == "runContextClient":
        return "Script", "Client"
    raise ValueError(middleware)


def _run_context_value(value: Any) -> str | None:
    if isinstance(value, str):
        name = value.rsplit(".", 1)[-1]
        return name if name in _RUN_CONTEXT_VALUES.values() else None
    if isinstance(value, dict) and "Enum" in value:
        v = value["Enum"]
        if isinstance(v, int):
            return _RUN_CONTEXT_VALUES.get(v)
        if isinstance(v, str):
            return _run_context_value(v)
    return None


def _disabled(props: dict) -> bool:
    """``"Disabled": true`` or ``"Enabled": false`` in a ``$properties`` / meta
    ``properties`` object (Rojo's implicit property values: a bare boolean, or
    ``{"Bool": ...}``)."""
    def as_bool(value):
        if isinstance(value, dict) and "Bool" in value:
            value = value["Bool"]
        return value if isinstance(value, bool) else None
    return as_bool(props.get("Disabled")) is True or as_bool(props.get("Enabled")) is False


def _empty_dir(path: str) -> bool:
    try:
        with os.scandir(path) as it:
            return next(it, None) is None
    except OSError:
        return False


def _closeable(reason: str | None) -> bool:
    """Open reasons that an explicit ``$ignoreUnknownInstances: false`` overrides."""
    return reason is None or reason == OPEN_DEFAULT_IGNORE or reason.startswith(
        ("ignoreUnknownInstances in ", "$ignoreUnknownInstances is true"))


def _valid_utf8(name: str) -> bool:
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


# --------------------------------------------------------------------------------------------
# Builder
# --------------------------------------------------------------------------------------------

OPEN_DEFAULT_IGNORE = "no $path: Rojo keeps instances it does not know ($ignoreUnknownInstances defaults to true)"
OPEN_WORKSPACE = "Workspace holds parts, terrain and characters from the place itself"
OPEN_RBXM = "model file {path}: its contents are not read"
OPEN_RBXM_KNOWN = "part of model file {path}: what Studio saved, which scripts may add to"
OPEN_MISSING = "$path {path} is missing from this checkout (installed or generated later?)"
OPEN_UNSERVED_SERVICE = "service not described by the project"
OPEN_ENGINE = "created by the engine"
OPEN_EMPTY = "$path {path} is an empty directory (a git submodule not checked out, or output not built yet)"
OPEN_NPM = ("npm package under node_modules: its loader and dependencies are linked in at run time "
            "(as Wally links packages)")


@dataclass(slots=True)
class _Site:
    """A filesystem entry snapshotted into ``inst`` (Rojo's instigating source)."""

    kind: str  # "child" (entry of a scanned directory) | "path" (a project node's $path)
    rel: str
    ctx: _Ctx
    inst: Instance
    parent: Instance | None  # holder the instance was attached to ("child" sites)
    is_dir: bool = False


@dataclass(slots=True)
class _Listing:
    names: list[str]
    dirs: set[str]
    links: set[str]
    others: set[str]  # neither file nor directory (broken links, sockets ...)


class RojoBuilder:
    """Builds the instance tree of one Rojo project and keeps what incremental updates need.

    ``root_dir`` is the absolute index root; ``project_rel`` the root-relative POSIX path
    of the project file.  After :meth:`build`, ``root`` is the tree, ``file_instances``
    maps files to instances and ``problems`` lists what went wrong.  Raises
    :class:`ProjectFileError` from :meth:`build` when the top-level project file is
    malformed or has the wrong shape.
    """

    def __init__(self, root_dir: str, project_rel: str, api: RobloxApi) -> None:
        self.root_dir = root_dir.rstrip("/") or "/"
        self.root_real = os.path.realpath(self.root_dir)
        self.project_rel = project_rel
        self.api = api
        self.reset()

    def reset(self) -> None:
        self.root: Instance | None = None
        self.problems: list[Any] = []
        self.file_instances: dict[str, list[Instance]] = {}
        self.sites: dict[str, list[_Site]] = {}
        self.site_of: dict[int, _Site] = {}
        self.holders: dict[str, list[tuple[Instance, _Ctx]]] = {}
        self.holder_keys: dict[int, str] = {}
        self.project_files: set[str] = set()
        self.watch_missing: set[str] = set()

    # --- helpers -------------------------------------------------------------------------------
    def abs(self, rel: str) -> str:
        if not rel:
            return self.root_dir
        if self.root_dir == "/":
            return "/" + rel
        return self.root_dir + "/" + rel

    def problem(self, file: str, message: str, severity: str = "error",
                line: int | None = None, column: int | None = None) -> None:
        self.problems.append(IndexProblem(file, line, column, message, severity))

    def _register_file(self, rel: str, inst: Instance) -> None:
        inst.file_paths.append(rel)
        lst = self.file_instances.get(rel)
        if lst is None:
            self.file_instances[rel] = [inst]
        else:
            lst.append(inst)

    def _add_site(self, site: _Site) -> None:
        lst = self.sites.get(site.rel)
        if lst is None:
            self.sites[site.rel] = [site]
        else:
            lst.append(site)
        self.site_of[id(site.inst)] = site

    def _add_holder(self, rel: str, inst: Instance, ctx: _Ctx) -> None:
        inst.dir_path = rel
        lst = self.holders.get(rel)
        if lst is None:
            self.holders[rel] = [(inst, ctx)]
        else:
            lst.append((inst, ctx))
        self.holder_keys[id(inst)] = rel

    def unregister_subtree(self, inst: Instance) -> None:
        """Forget every map entry of ``inst`` and its descendants (before replacing them)."""
        nodes = [inst]
        nodes.extend(inst.descendants())
        for node in nodes:
            for fp in node.file_paths:
                lst = self.file_instances.get(fp)
                if lst is not None:
                    lst[:] = [x for x in lst if x is not node]
                    if not lst:
                        del self.file_instances[fp]
            site = self.site_of.pop(id(node), None)
            if site is not None:
                lst2 = self.sites.get(site.rel)
                if lst2 is not None:
                    lst2[:] = [s for s in lst2 if s is not site]
                    if not lst2:
                        del self.sites[site.rel]
            key = self.holder_keys.pop(id(node), None)
            if key is not None:
                lst3 = self.holders.get(key)
                if lst3 is not None:
                    lst3[:] = [h for h in lst3 if h[0] is not node]
                    if not lst3:
                        del self.holders[key]

    def _list_dir(self, rel: str) -> _Listing | None:
        names: list[str] = []
        dirs: set[str] = set()
        links: set[str] = set()
        others: set[str] = set()
        try:
            with os.scandir(self.abs(rel)) as it:
                for entry in it:
                    name = entry.name
                    names.append(name)
                    try:
                        if entry.is_symlink():
                            links.add(name)
                        if entry.is_dir():
                            dirs.add(name)
                        elif not entry.is_file():
                            others.add(name)
                    except OSError:
                        others.add(name)
        except OSError as exc:
            self.problem(rel or ".", f"cannot list directory: {exc.strerror}", "warning")
            return None
        names.sort()
        return _Listing(names, dirs, links, others)

    def _inside_root(self, real: str) -> bool:
        root = self.root_real
        return real == root or real.startswith(root + "/") or root == "/"

    def read_json(self, rel: str, what: str) -> tuple[Any, str] | None:
        """Read and parse a JSON(C) file; problems are recorded and ``None`` returned.  Only a
        regular file inside the root, at most :data:`MAX_JSON_BYTES` (:mod:`luaguard.files`)."""
        from ..files import OUTSIDE, TOO_LARGE, Refused, read_bytes

        path = self.abs(rel)
        try:
            raw = read_bytes(path, root=self.root_real, limit=MAX_JSON_BYTES)
        except Refused as exc:
            if exc.reason == OUTSIDE:
                self.problem(rel, f"{what} is a link to a file outside the project root; not read")
            elif exc.reason == TOO_LARGE:
                self.problem(rel, f"{what} is too large to read (over {MAX_JSON_BYTES} bytes)")
            else:
                self.problem(rel, f"{what} is not a regular file; not read")
            return None
        except OSError as exc:
            self.problem(rel, f"cannot read {what}: {exc.strerror}")
            return None
        try:
            return parse_jsonc(_decode_text(raw))
        except JsonError as exc:
            self.problem(rel, f"malformed {what}: {exc.message}", "error", exc.line, exc.column)
            return None

    # --- project files ---------------------------------------------------------------------------
    def build(self) -> Instance:
        """Full build from the project file; returns the root instance."""
        self.reset()
        rel = self.project_rel
        self.project_files.add(rel)
        raw = read_project_file(self.abs(rel), self.root_real, rel, "project file")
        try:
            data, text = parse_jsonc(_decode_text(raw))
        except JsonError as exc:
            raise ProjectFileError(rel, exc.line, exc.column, exc.message) from None

        locate = Locator(text)

        def fail(parts: list[str | int], message: str) -> None:
            line, col = locate(parts)
            raise ProjectFileError(rel, line, col, f"{_pointer_str(parts)}: {message}")

        ctx = self._project_ctx(rel, data, _Ctx(), fail, locate)
        name = self._project_name(rel, data, None)
        root = self._project_tree(rel, data, locate, name, ctx, fail)
        self.root = root
        return root

    def _project_name(self, rel: str, data: dict, fallback: str | None) -> str:
        name = data.get("name")
        if isinstance(name, str):
            return name
        base = posixpath.basename(rel)
        if base in _DEFAULT_PROJECT_NAMES:
            folder = posixpath.dirname(rel)
            return posixpath.basename(folder) if folder else posixpath.basename(self.root_real)
        if fallback is not None:
            return fallback
        for suffix in (".project.json", ".project.jsonc"):
            if base.endswith(suffix):
                return base[: -len(suffix)]
        return base

    def _project_ctx(self, rel: str, data: Any, parent: _Ctx,
                     fail: Callable[[list[str | int], str], None],
                     loc: Callable[[list[str | int]], tuple[int | None, int | None]] | None = None) -> _Ctx:
        """Validate the project's top level and build its context (Rojo's snapshot_project)."""
        if not isinstance(data, dict):
            fail([], "a project file must be a JSON object")
        if "tree" not in data:
            fail([], 'missing required field "tree"')
        if not isinstance(data["tree"], dict):
            fail(["tree"], '"tree" must be an object')
        if "name" in data and not isinstance(data["name"], str):
            fail(["name"], '"name" must be a string')
        for key in data:
            if key not in _KNOWN_TOP_KEYS:
                self.problem(rel, f'unknown project field "{key}" (ignored; Rojo rejects unknown fields)',
                             "warning", *(loc([key]) if loc else (None, None)))
        emit = data.get("emitLegacyScripts")
        if emit is not None and not isinstance(emit, bool):
            fail(["emitLegacyScripts"], '"emitLegacyScripts" must be true or false')
        folder = posixpath.dirname(rel)
        ignore_rules = list(parent.ignore_rules)
        globs = data.get("globIgnorePaths", [])
        if not isinstance(globs, list):
            fail(["globIgnorePaths"], '"globIgnorePaths" must be a list of strings')
        for i, pattern in enumerate(globs):
            if not isinstance(pattern, str):
                fail(["globIgnorePaths", i], "glob must be a string")
            negated = False
            body = pattern
            if body.startswith("!"):
                negated, body = True, body[1:]
            elif body.startswith("\\!"):
                body = body[1:]
            try:
                ignore_rules.append(_IgnoreRule(folder, compile_glob(body), negated))
            except ValueError as exc:
                fail(["globIgnorePaths", i], str(exc))
        sync_rules: list[_SyncRule] = []
        rules = data.get("syncRules", [])
        if not isinstance(rules, list):
            fail(["syncRules"], '"syncRules" must be a list of objects')
        for i, rule in enumerate(rules):
            if not isinstance(rule, dict):
                fail(["syncRules", i], "sync rule must be an object")
            pattern, use = rule.get("pattern"), rule.get("use")
            if not isinstance(pattern, str):
                fail(["syncRules", i, "pattern"], '"pattern" must be a string')
            if not isinstance(use, str) or use not in _SYNC_USE:
                fail(["syncRules", i, "use"], f'"use" must be one of {", ".join(sorted(_SYNC_USE))}')
            exclude, suffix = rule.get("exclude"), rule.get("suffix")
            if exclude is not None and not isinstance(exclude, str):
                fail(["syncRules", i, "exclude"], '"exclude" must be a string')
            if suffix is not None and not isinstance(suffix, str):
                fail(["syncRules", i, "suffix"], '"suffix" must be a string')
            try:
                sync_rules.append(_SyncRule(
                    folder, compile_glob(pattern), compile_glob(exclude) if exclude else None,
                    _SYNC_USE[use], suffix,
                ))
            except ValueError as exc:
                fail(["syncRules", i], str(exc))
        return _Ctx(
            ignore_rules=tuple(ignore_rules),
            sync_rules=tuple(sync_rules),
            emit_legacy=True if emit is None else emit,
            chain=parent.chain + (rel,),
        )

    def _nested_project(self, rel: str, fallback_name: str, parent_ctx: _Ctx) -> Instance:
        """Snapshot a project file reached through ``$path`` or a directory."""
        self.project_files.add(rel)
        if rel in parent_ctx.chain:
            self.problem(rel, "recursive project include: "
                         + " -> ".join(parent_ctx.chain + (rel,)) + "; not expanded again")
            return Instance(fallback_name, "Folder", open_reason="recursive project include")
        if len(parent_ctx.chain) >= MAX_PROJECT_NESTING:
            self.problem(rel, f"projects nested more than {MAX_PROJECT_NESTING} deep; not expanded")
            return Instance(fallback_name, "Folder", open_reason="project nesting too deep")
        loaded = self.read_json(rel, "project file")
        if loaded is None:
            return Instance(fallback_name, "Folder", open_reason=f"project file {rel} could not be read")
        data, text = loaded

        class _Stop(Exception):
            pass

        locate = Locator(text)

        def fail(parts: list[str | int], message: str) -> None:
            line, col = locate(parts)
            self.problem(rel, f"{_pointer_str(parts)}: {message}", "error", line, col)
            raise _Stop

        try:
            ctx = self._project_ctx(rel, data, parent_ctx, fail, locate)
            name = self._project_name(rel, data, fallback_name)
            return self._project_tree(rel, data, locate, name, ctx, fail)
        except _Stop:
            return Instance(fallback_name, "Folder", open_reason=f"project file {rel} is invalid")

    def _project_tree(self, rel: str, data: dict, loc: Locator, name: str, ctx: _Ctx,
                      fail: Callable[[list[str | int], str], None]) -> Instance:
        """Rojo's snapshot_project_node over the whole ``tree``, iteratively."""
        folder = posixpath.dirname(rel)
        root_holder: list[Instance] = []
        # (node json, instance name, parent instance, parent class, pointer parts, depth)
        stack: list[tuple[dict, str, Instance | None, str | None, list[str | int], int]] = [
            (data["tree"], name, None, None, ["tree"], 0)
        ]
        while stack:
            node, iname, parent, parent_class, ptr, depth = stack.pop()
            inst = self._project_node(rel, folder, node, iname, parent_class, ptr, ctx, fail, loc)
            if parent is None:
                root_holder.append(inst)
                self._register_file(rel, inst)
            else:
                parent.add_child(inst)
            child_keys = sorted(k for k in node if not k.startswith("$"))
            if child_keys and depth + 1 > MAX_NODE_DEPTH:
                line, col = loc(ptr)
                self.problem(rel, f"{_pointer_str(ptr)}: project tree nested deeper than "
                             f"{MAX_NODE_DEPTH} levels; children ignored", "error", line, col)
                inst.open_reason = inst.open_reason or "project tree too deep to index"
                continue
            for key in reversed(child_keys):
                child = node[key]
                if not isinstance(child, dict):
                    fail(ptr + [key], f'child "{key}" must be an object (a project node)')
                    continue
                stack.append((child, key, inst, inst.class_name, ptr + [key], depth + 1))
        return root_holder[0]

    def _project_node(self, rel: str, folder: str, node: dict, name: str, parent_class: str | None,
                      ptr: list[str | int], ctx: _Ctx,
                      fail: Callable[[list[str | int], str], None],
                      loc: Callable[[list[str | int]], tuple[int | None, int | None]]) -> Instance:
        for key in node:
            if key.startswith("$") and key not in _KNOWN_NODE_KEYS:
                self.problem(rel, f'{_pointer_str(ptr + [key])}: unknown key "{key}" '
                             "(keys starting with $ are reserved by Rojo); ignored", "warning", *loc(ptr + [key]))
        class_name = node.get("$className")
        if class_name is not None and not isinstance(class_name, str):
            fail(ptr + ["$className"], '"$className" must be a string')
        ignore = node.get("$ignoreUnknownInstances")
        if ignore is not None and not isinstance(ignore, bool):
            fail(ptr + ["$ignoreUnknownInstances"], '"$ignoreUnknownInstances" must be true or false')
        props = node.get("$properties")
        if props is not None and not isinstance(props, dict):
            fail(ptr + ["$properties"], '"$properties" must be an object')
        attrs = node.get("$attributes")
        if attrs is not None and not isinstance(attrs, dict):
            fail(ptr + ["$attributes"], '"$attributes" must be an object')
        path_value = node.get("$path")
        optional = False
        if path_value is not None:
            if isinstance(path_value, dict):
                if set(path_value) != {"optional"} or not isinstance(path_value["optional"], str):
                    fail(ptr + ["$path"], '"$path" must be a string or {"optional": "<path>"}')
                path_value = path_value["optional"]
                optional = True
            elif not isinstance(path_value, str):
                fail(ptr + ["$path"], '"$path" must be a string or {"optional": "<path>"}')
        if class_name is not None and not self.api.has_class(class_name):
            self.problem(rel, f'{_pointer_str(ptr + ["$className"])}: "{class_name}" is not a known Roblox class',
                         "warning", *loc(ptr + ["$className"]))

        inferred = self._infer_class(name, parent_class)
        from_path: Instance | None = None
        path_open: str | None = None
        target_rel: str | None = None
        missing_path: str | None = None
        if path_value is not None:
            target_rel, refusal = self._resolve_project_path(folder, path_value)
            if refusal is not None:
                self.problem(rel, f"{_pointer_str(ptr + ['$path'])}: {refusal}", "warning",
                             *loc(ptr + ["$path"]))
                path_open = f"$path {path_value} refused: {refusal}"
            else:
                assert target_rel is not None
                abs_target = self.abs(target_rel)
                if not os.path.lexists(abs_target):
                    self.watch_missing.add(target_rel)
                    self.problem(rel, f"{_pointer_str(ptr + ['$path'])}: $path {path_value!r} "
                                 f"({target_rel or '.'}) does not exist in this checkout; "
                                 "treating the instance as open", "info",
                                 *loc(ptr + ["$path"]))
                    path_open = OPEN_MISSING.format(path=target_rel or ".")
                    missing_path = target_rel
                else:
                    is_dir = os.path.isdir(abs_target)
                    from_path = self.snapshot_entry(target_rel, ctx, is_dir, name)
                    if is_dir and from_path is not None and not from_path.all_children() and _empty_dir(abs_target):
                        # git never checks out an empty directory: it is a submodule that was
                        # not cloned or a build output not made yet - its contents are unknown
                        self.watch_missing.add(target_rel)
                        path_open = OPEN_EMPTY.format(path=target_rel or ".")
                    if from_path is None:
                        if not (optional or class_name or inferred):
                            self.problem(rel, f"{_pointer_str(ptr + ['$path'])}: {target_rel} cannot be "
                                         "turned into a Roblox instance by Rojo (unknown file type?)",
                                         "error", *loc(ptr + ["$path"]))
                        path_open = f"$path {target_rel} produced no instance"

        # Rojo's class resolution table
        path_class = None
        if from_path is not None and not from_path.class_guessed:
            path_class = from_path.class_name
        if class_name is not None and path_class is None:
            final_class = class_name
        elif class_name is None and path_class is not None:
            final_class = inferred if (inferred and path_class == "Folder") else path_class
        elif class_name is None and path_class is None and inferred:
            final_class = inferred
        elif class_name is not None and path_class is not None:
            final_class = class_name if path_class == "Folder" else path_class
            if path_class != "Folder" and class_name != path_class:
                self.problem(rel, f"{_pointer_str(ptr + ['$className'])}: $className {class_name!r} "
                             f"conflicts with the class from $path ({path_class}); $path must refer to a "
                             "Folder when $className is set", "error",
                             *loc(ptr + ["$className"]))
        elif from_path is not None:  # guessed class (rbxm) and nothing better
            final_class = from_path.class_name
        else:
            final_class = "Folder"
            if path_value is None:
                self.problem(rel, f"{_pointer_str(ptr)}: instance {name!r} needs $className, $path, or "
                             "a service name", "error", *loc(ptr))
                path_open = "class unknown: the project node has neither $className nor $path"

        if from_path is not None:
            inst = from_path
            inst.name = name
            if inst.class_name != final_class:
                inst.class_name = final_class
                if final_class != "Script":
                    inst.run_context = None
            if final_class in (class_name, inferred):
                inst.class_guessed = False  # the project states (or implies) the class
            assert target_rel is not None
            self._add_site(_Site("path", target_rel, ctx, inst, None, os.path.isdir(self.abs(target_rel))))
        else:
            inst = Instance(name, final_class)
        if path_open is not None:
            inst.open_reason = path_open
        if missing_path is not None:
            inst.missing_path = missing_path

        # open-ness ($ignoreUnknownInstances)
        if ignore is True:
            inst.open_reason = inst.open_reason or "$ignoreUnknownInstances is true"
        elif ignore is False:
            if path_open is None and _closeable(inst.open_reason):
                inst.open_reason = None
        elif path_value is None:
            inst.open_reason = inst.open_reason or OPEN_DEFAULT_IGNORE
        if final_class == "Workspace" and ignore is not False and inst.open_reason is None:
            inst.open_reason = OPEN_WORKSPACE

        if props:
            for bad_key in ("Name", "Parent"):
                if bad_key in props:
                    self.problem(rel, f"{_pointer_str(ptr + ['$properties', bad_key])}: Rojo ignores "
                                 f"{bad_key} in $properties (the instance is named by its key)", "warning",
                                 *loc(ptr + ["$properties", bad_key]))
        if props and final_class == "Script" and "RunContext" in props:
            rc = _run_context_value(props["RunContext"])
            if rc:
                inst.run_context = rc
        if props and _disabled(props):
            inst.disabled = True
        return inst

    def _infer_class(self, name: str, parent_class: str | None) -> str | None:
        if parent_class is None:
            return None
        if parent_class == "DataModel":
            if "Service" in self.api.class_tags(name) or self.api.is_service(name):
                return name
        elif parent_class == "StarterPlayer":
            if name in ("StarterPlayerScripts", "StarterCharacterScripts"):
                return name
        elif parent_class == "Workspace":
            if name == "Terrain":
                return name
        return None

    def _resolve_project_path(self, folder: str, value: str) -> tuple[str | None, str | None]:
        """Root-relative normalised target of a ``$path``, or a refusal reason."""
        if "\x00" in value or not _valid_utf8(value):
            return None, "path is not a valid file name (a NUL character or an unpaired surrogate); not read"
        value = value.replace("\\", "/")
        if not value:
            value = "."
        if value.startswith("/") or re.match(r"^[A-Za-z]:/", value):
            abs_path = posixpath.normpath(value)
            real_root = self.root_real
            if abs_path == self.root_dir or abs_path.startswith(self.root_dir.rstrip("/") + "/"):
                rel = abs_path[len(self.root_dir):].lstrip("/")
            elif abs_path == real_root or abs_path.startswith(real_root.rstrip("/") + "/"):
                rel = abs_path[len(real_root):].lstrip("/")
            else:
                return None, "absolute path outside the project root; not read"
        else:
            rel = posixpath.normpath(posixpath.join(folder, value)) if folder else posixpath.normpath(value)
            if rel == ".":
                rel = ""
            if rel == ".." or rel.startswith("../"):
                return None, "path leaves the project root; not read"
        real = os.path.realpath(self.abs(rel))
        if not self._inside_root(real):
            return None, "path resolves (through a symbolic link) outside the project root; not read"
        return rel, None

    # --- filesystem snapshots ----------------------------------------------------------------------
    def snapshot_entry(self, rel: str, ctx: _Ctx, is_dir: bool, name_hint: str | None = None,
                       listing: _Listing | None = None, is_link: bool = False) -> Instance | None:
        """Snapshot one filesystem entry (Rojo's snapshot_from_vfs), directories in full.

        Registers sites for the entries *inside* directories; the caller registers the
        entry itself.  Returns ``None`` when the entry is not an instance.
        """
        if not is_dir:
            name = posixpath.basename(rel)
            if name in _INIT_FILE_NAMES:
                return None
            return self._snapshot_file(rel, ctx, None, is_link)
        real = os.path.realpath(self.abs(rel))
        return self._snapshot_dir_tree(rel, ctx, real, (real,), name_hint)

    def _rule_for(self, rel: str, name: str, ctx: _Ctx) -> tuple[str, str] | None:
        if ctx.sync_rules:
            rule = ctx.user_rule(rel)
            if rule is not None:
                if rule.suffix is not None and name.endswith(rule.suffix):
                    return rule.use, name[: -len(rule.suffix)]
                return rule.use, (name if rule.suffix is not None else _file_stem(name))
        return default_rule(name)

    def _snapshot_file(self, rel: str, ctx: _Ctx, dir_names: set[str] | None,
                       is_link: bool) -> Instance | None:
        name = posixpath.basename(rel)
        found = self._rule_for(rel, name, ctx)
        if found is None:
            return None
        middleware, iname = found
        if middleware == "ignore":
            return None
        outside_link = False
        if is_link:
            real = os.path.realpath(self.abs(rel))
            outside_link = not self._inside_root(real)
        if outside_link and middleware in _CONTENT_MIDDLEWARES:
            self.problem(rel, "symbolic link to a file outside the project root; not read", "warning")
            inst = Instance(iname, "Folder", open_reason="link outside the project root; not followed",
                            class_guessed=True)
            self._register_file(rel, inst)
            return inst
        if outside_link:
            # Rojo would sync the file, so the instance stays; but the file is left out of
            # the file map, so nothing (run-time name scan, `luaguard check`) reads it.
            self.problem(rel, "symbolic link to a file outside the project root; its content is not read", "warning")
        if middleware in _SCRIPT_MIDDLEWARES:
            cls, rc = _script_class(middleware, ctx.emit_legacy)
            inst = Instance(iname, cls, run_context=rc)
        elif middleware in ("json", "toml", "yaml"):
            inst = Instance(iname, "ModuleScript")
        elif middleware == "csv":
            inst = Instance(iname, "LocalizationTable")
        elif middleware == "text":
            inst = Instance(iname, "StringValue")
        elif middleware == "rbxm":
            inst = Instance(iname, "Model", open_reason=OPEN_RBXM.format(path=rel), class_guessed=True)
        elif middleware == "rbxmx":
            inst = self._rbxmx_model(rel, iname)
        elif middleware == "jsonModel":
            return self._json_model(rel, iname)
        elif middleware == "project":
            return self._nested_project(rel, iname, ctx)
        else:  # pragma: no cover - every middleware is handled above
            return None
        if not outside_link:
            self._register_file(rel, inst)
        if middleware in _ADJACENT_META:
            folder = posixpath.dirname(rel)
            for ext in (".meta.json", ".meta.jsonc"):
                meta_name = iname + ext
                exists = (meta_name in dir_names) if dir_names is not None else \
                    os.path.isfile(self.abs(posixpath.join(folder, meta_name) if folder else meta_name))
                if exists:
                    meta_rel = posixpath.join(folder, meta_name) if folder else meta_name
                    self._apply_meta(meta_rel, inst, directory=False)
        return inst

    def _rbxmx_model(self, rel: str, name: str) -> Instance:
        """The instance an ``.rbxmx`` model file becomes: its first top-level ``<Item>``
        (class), with the items nested in it as children (names from their ``Name``
        property), read with the standard library's XML parser.  The nodes stay open: the
        model is what Studio saved, and scripts may add to it.  A file over 8 MB, one that
        is not well-formed, or more than 20,000 items: only the top item's class (or
        ``Model``), children unknown."""
        guessed = Instance(name, "Model", open_reason=OPEN_RBXM.format(path=rel), class_guessed=True)
        path = self.abs(rel)
        try:
            if os.path.getsize(path) > 8 * 1024 * 1024:
                cls = self._rbxmx_class(rel)
                return Instance(name, cls, open_reason=OPEN_RBXM.format(path=rel)) if cls else guessed
            root = _rbxmx_items(path)
        except (OSError, ValueError, SyntaxError):  # ParseError is a SyntaxError
            cls = self._rbxmx_class(rel)
            return Instance(name, cls, open_reason=OPEN_RBXM.format(path=rel)) if cls else guessed
        if root is None:
            return guessed
        reason = OPEN_RBXM_KNOWN.format(path=rel)

        def build(item, inst_name: str) -> Instance:
            cls_name, _own, kids = item
            node = Instance(inst_name, cls_name, open_reason=reason)
            for kid in kids:
                node.add_child(build(kid, kid[1] or kid[0]))
            return node

        return build(root, name)

    def _rbxmx_class(self, rel: str) -> str | None:
        """Class of the first (top-level) ``<Item>`` of an ``.rbxmx`` file; reads at most 64 KiB."""
        from ..files import read_bytes

        try:
            head = read_bytes(self.abs(rel), root=self.root_real, limit=MAX_JSON_BYTES)[:65536]
        except OSError:
            return None
        m = re.search(rb'<Item\s+class\s*=\s*"([A-Za-z0-9_]+)"', head)
        return m.group(1).decode("ascii") if m else None

    def _apply_meta(self, meta_rel: str, inst: Instance, directory: bool) -> None:
        loaded = self.read_json(meta_rel, "meta file")
        self._register_file(meta_rel, inst)
        if loaded is None:
            return
        data, text = loaded
        if not isinstance(data, dict):
            self.problem(meta_rel, "a meta file must be a JSON object", "error", 1, 1)
            return
        locate = Locator(text)
        ignore = data.get("ignoreUnknownInstances")
        if ignore is not None:
            if not isinstance(ignore, bool):
                self.problem(meta_rel, '"ignoreUnknownInstances" must be true or false', "error",
                             *locate(["ignoreUnknownInstances"]))
            elif ignore:
                inst.open_reason = inst.open_reason or f"ignoreUnknownInstances in {meta_rel}"
            elif inst.open_reason and inst.open_reason.startswith("ignoreUnknownInstances in "):
                inst.open_reason = None
        cls = data.get("className")
        if cls is not None:
            if not directory:
                self.problem(meta_rel, '"className" is only honoured in init.meta.json (Rojo ignores it here)',
                             "warning", *locate(["className"]))
            elif not isinstance(cls, str):
                self.problem(meta_rel, '"className" must be a string', "error",
                             *locate(["className"]))
            elif inst.class_name != "Folder":
                self.problem(meta_rel, "className in init.meta.json can only be used when the directory "
                             f"would be a Folder (it is a {inst.class_name})", "error",
                             *locate(["className"]))
            else:
                if not self.api.has_class(cls):
                    self.problem(meta_rel, f'"{cls}" is not a known Roblox class', "warning",
                                 *locate(["className"]))
                inst.class_name = cls
        props = data.get("properties")
        if props is not None and not isinstance(props, dict):
            self.problem(meta_rel, '"properties" must be an object', "error",
                         *locate(["properties"]))
        elif props:
            if inst.class_name == "Script" and "RunContext" in props:
                rc = _run_context_value(props["RunContext"])
                if rc:
                    inst.run_context = rc
            if _disabled(props):
                inst.disabled = True

    def _json_model(self, rel: str, name: str) -> Instance | None:
        """A ``.model.json``: top-level name from the file, children from the JSON."""
        try:
            if os.path.getsize(self.abs(rel)) == 0:
                return None
        except OSError:
            pass
        loaded = self.read_json(rel, "JSON model")
        if loaded is None:
            inst = Instance(name, "Folder", open_reason=f"JSON model {rel} could not be read", class_guessed=True)
            self._register_file(rel, inst)
            return inst
        data, text = loaded
        locate = Locator(text)

        def bad(parts: list[str | int], msg: str) -> None:
            self.problem(rel, f"{_pointer_str(parts)}: {msg}", "error", *locate(parts))

        def field_of(obj: dict, *keys: str) -> Any:
            for k in keys:
                if k in obj:
                    return obj[k]
            return None

        if not isinstance(data, dict):
            bad([], "a JSON model must be an object")
            inst = Instance(name, "Folder", open_reason=f"JSON model {rel} is invalid", class_guessed=True)
            self._register_file(rel, inst)
            return inst
        top: Instance | None = None
        stack: list[tuple[Any, Instance | None, list[str | int], int]] = [(data, None, [], 0)]
        while stack:
            obj, parent, ptr, depth = stack.pop()
            if not isinstance(obj, dict):
                bad(ptr, "a model instance must be an object")
                continue
            cls = field_of(obj, "className", "ClassName")
            if not isinstance(cls, str):
                bad(ptr, 'missing or non-string "className"')
                cls = "Folder"
            if parent is None:
                iname = name
            else:
                n = field_of(obj, "name", "Name")
                iname = n if isinstance(n, str) else cls
            inst = Instance(iname, cls)
            if parent is None:
                top = inst
            else:
                parent.add_child(inst)
            kids = field_of(obj, "children", "Children")
            if kids is None:
                continue
            key = "children" if "children" in obj else "Children"
            if not isinstance(kids, list):
                bad(ptr + [key], '"children" must be a list')
                continue
            if depth + 1 > MAX_NODE_DEPTH:
                bad(ptr + [key], f"model nested deeper than {MAX_NODE_DEPTH} levels; children ignored")
                inst.open_reason = "model too deep to index"
                continue
            for i in range(len(kids) - 1, -1, -1):
                stack.append((kids[i], inst, ptr + [key, i], depth + 1))
        assert top is not None
        self._register_file(rel, top)
        return top

    def _dir_kind(self, listing: _Listing) -> tuple[str, str | None]:
        names = listing.names
        name_set = set(names)
        for proj in _DEFAULT_PROJECT_NAMES:
            if proj in name_set and proj not in listing.dirs:
                return "project", proj
        for init_name, middleware in _INIT_ORDER:
            if init_name in name_set and init_name not in listing.dirs:
                return middleware, init_name
        return "dir", None

    def _make_dir_instance(self, rel: str, name: str, ctx: _Ctx,
                           listing: _Listing) -> tuple[Instance | None, bool]:
        """Instance for a directory; returns (instance, expand children from the listing?)."""
        kind, init_name = self._dir_kind(listing)
        if kind == "project":
            assert init_name is not None
            proj_rel = posixpath.join(rel, init_name) if rel else init_name
            return self._nested_project(proj_rel, name, ctx), False
        if kind == "dir":
            inst = Instance(name, "Folder")
        elif kind == "csv":
            inst = Instance(name, "LocalizationTable")
        else:
            cls, rc = _script_class(kind, ctx.emit_legacy)
            inst = Instance(name, cls, run_context=rc)
        if init_name is not None:
            self._register_file(posixpath.join(rel, init_name) if rel else init_name, inst)
        name_set = set(listing.names)
        for meta in ("init.meta.json", "init.meta.jsonc"):
            if meta in name_set and meta not in listing.dirs:
                self._apply_meta(posixpath.join(rel, meta) if rel else meta, inst, directory=True)
        if "node_modules" in rel.split("/") and inst.open_reason is None:
            inst.open_reason = OPEN_NPM
        return inst, True

    def _snapshot_dir_tree(self, rel: str, ctx: _Ctx, real: str, chain: tuple[str, ...],
                           name_hint: str | None) -> Instance | None:
        listing = self._list_dir(rel)
        name = name_hint if name_hint is not None else (posixpath.basename(rel) or posixpath.basename(self.root_real))
        if listing is None:
            inst = Instance(name, "Folder", open_reason="directory could not be listed")
            return inst
        top, expand = self._make_dir_instance(rel, name, ctx, listing)
        if top is None or not expand:
            return top
        self._add_holder(rel, top, ctx)
        # work items: (dir rel, its instance, listing, real path, symlink chain)
        work: list[tuple[str, Instance, _Listing, str, tuple[str, ...]]] = [(rel, top, listing, real, chain)]
        while work:
            drel, dinst, lst, dreal, dchain = work.pop()
            self._expand_dir(drel, dinst, lst, dreal, dchain, ctx, work)
        return top

    def _expand_dir(self, drel: str, dinst: Instance, lst: _Listing, dreal: str,
                    dchain: tuple[str, ...], ctx: _Ctx, work: list) -> None:
        names_set = set(lst.names)
        prefix = drel + "/" if drel else ""
        check_ignore = bool(ctx.ignore_rules)
        for name in lst.names:
            if name in lst.others:
                continue
            crel = prefix + name
            if check_ignore and ctx.ignored(crel):
                continue
            if not _valid_utf8(name):
                self.problem(prefix + name.encode("utf-8", "backslashreplace").decode("utf-8"),
                             "file name is not valid UTF-8; Rojo cannot sync it (skipped)", "warning")
                continue
            is_link = name in lst.links
            if name in lst.dirs:
                child = self._child_dir(crel, name, ctx, dreal, dchain, is_link, work)
            else:
                if name in _INIT_FILE_NAMES:
                    continue
                child = self._snapshot_file(crel, ctx, names_set, is_link)
            if child is not None:
                dinst.add_child(child)
                self._add_site(_Site("child", crel, ctx, child, dinst, name in lst.dirs))

    def _child_dir(self, crel: str, name: str, ctx: _Ctx, dreal: str, dchain: tuple[str, ...],
                   is_link: bool, work: list) -> Instance | None:
        if is_link:
            creal = os.path.realpath(self.abs(crel))
            if not self._inside_root(creal):
                self.problem(crel, "symbolic link to a directory outside the project root; not followed", "warning")
                return Instance(name, "Folder", open_reason="link outside the project root; not followed")
            cur = dreal
            looped = creal == cur or cur.startswith(creal + "/") or any(
                c == creal or c.startswith(creal + "/") for c in dchain)
            if looped:
                self.problem(crel, "symbolic link loop; not followed", "warning")
                return Instance(name, "Folder", open_reason="symbolic link loop; not followed")
            # remember the directory the link sits in too: a link back to it is a loop
            cchain = dchain + (dreal, creal)
        else:
            creal = dreal + "/" + name if dreal != "/" else "/" + name
            cchain = dchain
        listing = self._list_dir(crel)
        if listing is None:
            return Instance(name, "Folder", open_reason="directory could not be listed")
        inst, expand = self._make_dir_instance(crel, name, ctx, listing)
        if inst is not None and expand:
            self._add_holder(crel, inst, ctx)
            work.append((crel, inst, listing, creal, cchain))
        return inst

    # --- incremental updates -----------------------------------------------------------------------
    def resnapshot_child(self, site: _Site) -> None:
        """Re-snapshot a directory entry in place (after it changed, appeared or vanished)."""
        parent = site.parent
        assert parent is not None and site.kind == "child"
        self.unregister_subtree(site.inst)
        parent.remove_child(site.inst)
        self.add_entry(site.rel, parent, site.ctx)

    def add_entry(self, rel: str, parent: Instance, ctx: _Ctx) -> Instance | None:
        """Snapshot the entry ``rel`` (if it exists and is not ignored) under ``parent``."""
        abs_path = self.abs(rel)
        if not os.path.lexists(abs_path) or ctx.ignored(rel):
            return None
        name = posixpath.basename(rel)
        if not _valid_utf8(name):
            return None
        is_link = os.path.islink(abs_path)
        is_dir = os.path.isdir(abs_path)
        if is_dir:
            folder = posixpath.dirname(rel)
            dreal = os.path.realpath(self.abs(folder))
            work: list = []
            child = self._child_dir(rel, name, ctx, dreal, (dreal,), is_link, work)
            while work:
                drel, dinst, lst, creal, cchain = work.pop()
                self._expand_dir(drel, dinst, lst, creal, cchain, ctx, work)
        elif os.path.isfile(abs_path):
            if name in _INIT_FILE_NAMES:
                return None
            child = self._snapshot_file(rel, ctx, None, is_link)
        else:
            return None
        if child is not None:
            parent.add_child(child)
            self._add_site(_Site("child", rel, ctx, child, parent, is_dir))
        return child

    def is_content_dependent(self, rel: str, ctx: _Ctx) -> bool:
        """True when the tree depends on the contents of file ``rel`` (model.json, project ...)."""
        name = posixpath.basename(rel)
        found = self._rule_for(rel, name, ctx)
        return found is not None and found[0] in _CONTENT_MIDDLEWARES


_MAX_MODEL_ITEMS = 20_000


def _rbxmx_items(path: str):
    """``(class, name, children)`` of the first top-level ``<Item>`` of an ``.rbxmx``
    file (Roblox's XML model format: ``<roblox><Item class="C"><Properties><string
    name="Name">N</string>...</Properties><Item ...>...</Item></Item></roblox>``), or
    ``None`` without one.  Raises ``ValueError`` past :data:`_MAX_MODEL_ITEMS` items and
    the XML parser's ``ParseError`` for a malformed file."""
    import xml.etree.ElementTree as ET

    stack: list[list] = []
    top = None
    count = 0
    in_props = 0
    name_next = False
    for event, el in ET.iterparse(path, events=("start", "end")):
        tag = el.tag
        if event == "start":
            if tag == "Item":
                count += 1
                if count > _MAX_MODEL_ITEMS:
                    raise ValueError("model too large")
                stack.append([el.get("class") or "Model", "", []])
            elif tag == "Properties":
                in_props += 1
            elif in_props and tag in ("string", "String") and el.get("name") == "Name":
                name_next = True
            continue
        if tag == "Item":
            item = stack.pop()
            entry = (item[0], item[1], item[2])
            if stack:
                stack[-1][2].append(entry)
            elif top is None:
                top = entry
            el.clear()
        elif tag == "Properties":
            in_props -= 1
        elif name_next and tag in ("string", "String"):
            if stack:
                stack[-1][1] = el.text or ""
            name_next = False
    return top


def read_project_file(path: str, root_real: str, rel: str, what: str) -> bytes:
    """The bytes of the top-level project file or sourcemap ``rel`` (at ``path``): only a
    regular file inside the root (a link out of it is refused like the nested ones), at most
    :data:`MAX_JSON_BYTES`, the limit enforced while reading (:mod:`luaguard.files`).
    Raises :class:`ProjectFileError`."""
    from ..files import OUTSIDE, TOO_LARGE, Refused, read_bytes

    try:
        return read_bytes(path, root=root_real, limit=MAX_JSON_BYTES)
    except Refused as exc:
        why = {OUTSIDE: f"the {what} is a link to a file outside the project root; not read",
               TOO_LARGE: f"{what} is too large"}.get(exc.reason, f"the {what} is not a regular file; not read")
        raise ProjectFileError(rel, None, None, why) from None
    except OSError as exc:
        raise ProjectFileError(rel, None, None, f"cannot read {what}: {exc.strerror}") from None
