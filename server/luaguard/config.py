"""Settings: one typed object read from ``luaguard.toml`` and from LSP configuration.

Both sources use the same keys (the LSP client may send camelCase: ``projectFile`` is
``project_file``).  Invalid values never stop luaguard: each is reported as a
:class:`SettingsProblem` and replaced by its default (jedi-language-server's approach).

``luaguard.toml`` at the project root::

    project_file = "default.project.json"   # or a sourcemap via sourcemap_file
    placeholder_mode = "editor"             # "editor" | "patch"
    plugin = true                           # a Studio plugin's code (default: detected)
    extra_globals = ["Knit"]                # added to .luaurc's "globals"
    language_mode = "strict"                # overrides .luaurc's "languageMode"
    exclude = ["src/Generated/", "*.bench.luau"]   # .gitignore patterns relative to this file; not linted
    extend-exclude = ["vendor/"]            # added to exclude (ruff's pair)
    respect_gitignore = true                # leave out .gitignore'd paths and git submodules
    select = ["error", "deprecated_api"]    # report only these rule ids / severity groups (default: all)
    ignore = ["likely_unknown_instance"]    # never report these rule ids / severity groups
    errors_only = false                     # true: report error-severity findings only

    [rules]
    unknown_instance = "warning"            # "off" | "error" | "warning" | "information" | "hint"
    placeholder = { enabled = true, severity = "error" }

    [completion]
    enabled = true
    model = "/path/to/model"                # default: the model shipped with luaguard
    min_confidence = 0.7
    max_tokens = 64
    # endpoint = "http://gpu-box:8000/v1"   # a vLLM server with luaguard's processor: no local model
    # endpoint_model = "my-luau-model"
    # endpoint_project = "place"            # the project's name on that server

    [toolcalls]
    min_confidence = 0.7                    # calls with a lower "confidence" are rejected
    tools_file = "tools.json"               # OpenAI `tools` or MCP `tools/list` JSON
    replace_builtin = false                 # true: only the user's tools exist
    max_content_bytes = 524288              # larger script content is rejected unchecked
    aliases = { list_files = "get_project_structure" }

    [[toolcalls.tools]]                     # inline tool definitions (same shapes)
    name = "spawn_npc"
    parameters = { type = "object", properties = { parent = { type = "string", "x-luaguard" = "parent_path" } }, required = ["parent"] }
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .findings import Severity

CONFIG_FILE = "luaguard.toml"


@dataclass(frozen=True, slots=True)
class RuleSettings:
    """Per-rule switch and severity override (``None`` keeps the rule's default)."""

    enabled: bool = True
    severity: Severity | None = None


@dataclass(frozen=True, slots=True)
class CompletionSettings:
    """Guarded completion settings (``model`` ``None`` = the shipped default model)."""

    enabled: bool = True
    model: str | None = None
    min_confidence: float = 0.7
    max_tokens: int = 64
    timeout_ms: int = 3000
    guard: bool = True
    #: an OpenAI-compatible server (``http://host:8000/v1``) that guards completions itself
    #: (vLLM with luaguard.serving.vllm): no local model is loaded (:mod:`luaguard.completion.client`)
    endpoint: str | None = None
    endpoint_model: str | None = None
    #: the project's name on that server (its ``luaguard_project``)
    endpoint_project: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallSettings:
    """Tool-call validation settings.

    ``tools_file``: JSON with extra tool schemas (OpenAI ``tools`` or MCP ``tools/list``),
    relative to the project root; ``tools``: tool definitions written inline as
    ``[[toolcalls.tools]]`` tables; ``replace_builtin``: use only the user's tools;
    ``aliases``: invented tool name -> real tool, for "did you mean";
    ``max_content_bytes``: larger script content in a call is rejected unchecked.
    """

    min_confidence: float = 0.7
    tools_file: str | None = None
    aliases: tuple[tuple[str, str], ...] = ()
    tools: tuple[dict, ...] = ()
    replace_builtin: bool = False
    max_content_bytes: int = 512 * 1024


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting luaguard reads.  Defaults are what a new user gets."""

    project_file: str | None = None
    sourcemap_file: str | None = None
    placeholder_mode: str = "editor"
    #: the project is a Studio plugin's (``None``: detected, see :mod:`luaguard.project.plugin`)
    plugin: bool | None = None
    extra_globals: tuple[str, ...] = ()
    #: Luau's language mode for every file (``None``: the nearest ``.luaurc``'s; a file's
    #: ``--!strict`` header wins over both: :mod:`luaguard.project.luaurc`)
    language_mode: str | None = None
    exclude: tuple[str, ...] = ()
    #: added to ``exclude`` (ruff's pair: a layer's ``exclude`` replaces, ``extend_exclude`` adds)
    extend_exclude: tuple[str, ...] = ()
    #: leave out what ``.gitignore`` ignores and git submodules (:mod:`luaguard.ignores`)
    respect_gitignore: bool = True
    rules: dict[str, RuleSettings] = field(default_factory=dict)
    #: rule selection (ruff's ``select``/``ignore``): rule ids and severity groups
    #: (:data:`SEVERITY_GROUPS`); empty ``select`` = every rule
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    errors_only: bool = False
    completion: CompletionSettings = field(default_factory=CompletionSettings)
    toolcalls: ToolCallSettings = field(default_factory=ToolCallSettings)

    @property
    def excludes(self) -> tuple[str, ...]:
        """``exclude`` then ``extend_exclude``: the patterns that leave files out."""
        return self.exclude + self.extend_exclude

    def rule(self, rule_id: str) -> RuleSettings:
        return self.rules.get(rule_id, _DEFAULT_RULE)

    def selects(self, rule: str, severity: Severity) -> bool:
        """Whether a finding of ``rule`` with (final) ``severity`` is reported under
        ``select``/``ignore``/``errors_only``.  A selector matches a finding by its rule id
        or by its severity group (``"error"``, ``"warning"`` ...); ``ignore`` wins over
        ``select``.  Rule ids outside :func:`known_rule_ids` (a diff's own problems such as
        ``hunk_does_not_apply``) are not subject to ``select``."""
        if self.errors_only and severity is not Severity.ERROR:
            return False
        if any(_matches(sel, rule, severity) for sel in self.ignore):
            return False
        if self.select and rule in known_rule_ids():
            return any(_matches(sel, rule, severity) for sel in self.select)
        return True


_DEFAULT_RULE = RuleSettings()

#: Severity groups a selector may name instead of a rule id.
SEVERITY_GROUPS: dict[str, Severity] = {
    "error": Severity.ERROR, "warning": Severity.WARNING, "information": Severity.INFORMATION,
    "info": Severity.INFORMATION, "hint": Severity.HINT,
}


def _matches(selector: str, rule: str, severity: Severity) -> bool:
    return selector == rule or SEVERITY_GROUPS.get(selector) is severity


def known_rule_ids() -> dict[str, Severity]:
    """Every rule id a lint can report, with its default severity
    (:func:`luaguard.rules.registry.all_rule_ids`)."""
    global _KNOWN
    if _KNOWN is None:
        from .rules.registry import all_rule_ids

        _KNOWN = all_rule_ids()
    return _KNOWN


_KNOWN: dict[str, Severity] | None = None


def parse_selectors(values: Any) -> tuple[str, ...]:
    """Rule selectors from a list of strings, each ``"a,b"`` split on commas: rule ids of
    :func:`known_rule_ids` and severity groups (:data:`SEVERITY_GROUPS`).

    Raises ``ValueError`` naming the unknown entry and every valid rule id and group.
    """
    if isinstance(values, str) or not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"expected a list of rule ids, got {values!r}")
    out: list[str] = []
    known = known_rule_ids()
    for value in values:
        for part in value.split(","):
            sel = part.strip()
            if not sel:
                continue
            if sel not in known and sel not in SEVERITY_GROUPS:
                raise ValueError(
                    f"unknown rule id {sel!r}; valid rule ids: {', '.join(sorted(known))}; "
                    f"groups: error, warning, information, hint")
            if sel not in out:
                out.append(sel)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    """An invalid setting: where it came from, the key, and why it was replaced."""

    source: str
    key: str
    message: str
    #: 1-based line of the key in the config file (``None``: not known, or not a file)
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.key}: {self.message}"


class ConfigError(Exception):
    """``luaguard.toml`` could not be read at all (bad TOML syntax).  ``str()`` names the
    file, line and column."""


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def settings_from_mapping(data: Any, source: str, base: Settings | None = None) -> tuple[Settings, list[SettingsProblem]]:
    """Build :class:`Settings` from a TOML table or LSP settings object.

    Unknown keys and invalid values become problems; valid keys override ``base``
    (default: all defaults).  Never raises.
    """
    base = base or Settings()
    problems: list[SettingsProblem] = []
    if data is None:
        return base, problems
    if not isinstance(data, dict):
        problems.append(SettingsProblem(source, "<root>", f"expected a table of settings, got {type(data).__name__}"))
        return base, problems
    data = {_snake(str(k)): v for k, v in data.items()}
    if "luaguard" in data and isinstance(data["luaguard"], dict):  # LSP section nesting
        inner = {_snake(str(k)): v for k, v in data.pop("luaguard").items()}
        data = {**data, **inner}
    changes: dict[str, Any] = {}

    def bad(key: str, msg: str) -> None:
        problems.append(SettingsProblem(source, key, msg + "; using the default"))

    for key, value in data.items():
        if key in ("project_file", "sourcemap_file"):
            if value is None or (isinstance(value, str) and value.strip()):
                changes[key] = value
            elif value == "":
                changes[key] = None
            else:
                bad(key, f"expected a file name, got {value!r}")
        elif key == "placeholder_mode":
            if value in ("editor", "patch"):
                changes[key] = value
            else:
                bad(key, f"expected 'editor' or 'patch', got {value!r}")
        elif key == "plugin":
            if value is None or isinstance(value, bool):
                changes[key] = value
            else:
                bad(key, f"expected true or false, got {value!r}")
        elif key == "language_mode":
            if value is None or value in ("strict", "nonstrict", "nocheck"):
                changes[key] = value
            else:
                bad(key, f"expected 'strict', 'nonstrict' or 'nocheck', got {value!r}")
        elif key == "extra_globals":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                changes[key] = tuple(value)
            else:
                bad(key, f"expected a list of names, got {value!r}")
        elif key in ("exclude", "extend_exclude", "extend-exclude"):
            if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
                if key == "exclude":
                    changes[key] = tuple(value)
                else:
                    changes["extend_exclude"] = base.extend_exclude + tuple(value)
            else:
                bad(key, f"expected a list of .gitignore-style patterns, got {value!r}")
        elif key in ("respect_gitignore", "respect-gitignore"):
            if isinstance(value, bool):
                changes["respect_gitignore"] = value
            else:
                bad(key, f"expected true or false, got {value!r}")
        elif key in ("select", "ignore"):
            try:
                changes[key] = parse_selectors(value)
            except ValueError as exc:
                bad(key, str(exc))
        elif key == "errors_only":
            if isinstance(value, bool):
                changes[key] = value
            else:
                bad(key, f"expected true or false, got {value!r}")
        elif key == "rules":
            changes[key] = {**base.rules, **_rules(value, source, problems)}
        elif key == "completion":
            changes[key] = _section(CompletionSettings, base.completion, value, source, "completion", problems)
        elif key in ("toolcalls", "tool_calls"):
            changes["toolcalls"] = _section(ToolCallSettings, base.toolcalls, value, source, "toolcalls", problems)
        elif key in ("trace", "server", "interpreter", "import_strategy", "enable"):
            continue  # client-side settings of the editor extensions
        else:
            problems.append(SettingsProblem(source, key, "unknown setting; ignored"))
    return replace(base, **changes), problems


def _rules(value: Any, source: str, problems: list[SettingsProblem]) -> dict[str, RuleSettings]:
    out: dict[str, RuleSettings] = {}
    if not isinstance(value, dict):
        problems.append(SettingsProblem(source, "rules", f"expected a table of rule settings, got {value!r}; using the defaults"))
        return out
    known = known_rule_ids()
    for rule, spec in value.items():
        key = f"rules.{rule}"
        if rule not in known:
            from .fuzzy import best_fix, rank

            wanted = str(rule).replace("-", "_")
            best = wanted if wanted in known else best_fix(rank(wanted, known))
            hint = f"did you mean '{best}'?" if best else f"rule ids: {', '.join(sorted(known))}"
            problems.append(SettingsProblem(source, key, f"no luaguard rule is named {rule!r}; ignored ({hint})"))
            continue
        if isinstance(spec, bool):
            out[rule] = RuleSettings(enabled=spec)
        elif isinstance(spec, str):
            if spec.lower() in _OFF:
                out[rule] = RuleSettings(enabled=False)
            else:
                try:
                    out[rule] = RuleSettings(severity=Severity.parse(spec))
                except ValueError:
                    problems.append(SettingsProblem(source, key, f"{_bad_severity(spec)}; using the default"))
        elif isinstance(spec, dict):
            enabled = spec.get("enabled", True)
            sev = spec.get("severity")
            if not isinstance(enabled, bool):
                problems.append(SettingsProblem(source, key + ".enabled", f"expected true or false, got {enabled!r}; using true"))
                enabled = True
            severity = None
            if isinstance(sev, str) and sev.lower() in _OFF:
                enabled = False
            elif sev is not None:
                try:
                    severity = Severity.parse(str(sev))
                except ValueError:
                    problems.append(SettingsProblem(source, key + ".severity", f"{_bad_severity(sev)}; using the default"))
            out[rule] = RuleSettings(enabled=enabled, severity=severity)
        else:
            problems.append(SettingsProblem(source, key, f"expected 'off', a severity or a table, got {spec!r}; using the default"))
    return out


#: the values of a rule's setting that turn it off
_OFF = ("off", "none", "disabled", "allow")


def _bad_severity(value: Any) -> str:
    return f"unknown severity {value!r}; expected one of off, error, warning, information, hint"


def key_lines(text: str) -> dict[str, int]:
    """The 1-based line of each key of a TOML text, as dotted paths (``"rules.placeholder"``,
    ``"completion.model"``): the key lines under each ``[table]`` header and the headers
    themselves; inline tables and arrays of tables are not looked into.  For messages only."""
    out: dict[str, int] = {}
    table = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^\[\s*([^\[\]]+?)\s*\]", line)
        if m:
            table = ".".join(p.strip().strip('"\'') for p in m.group(1).split("."))
            out.setdefault(table, n)
            continue
        m = re.match(r"""^("[^"]*"|'[^']*'|[A-Za-z0-9_.\- ]+?)\s*=""", line)
        if m:
            key = ".".join(p.strip().strip('"\'') for p in m.group(1).split("."))
            out.setdefault(f"{table}.{key}" if table else key, n)
    return out


def with_lines(problems: list[SettingsProblem], path: Path | str, text: str | None = None) -> list[SettingsProblem]:
    """``problems`` of the config file ``path`` with the line of their key set (read from
    ``text``, else from the file through :mod:`luaguard.files`); unchanged when unknown."""
    mine = [p for p in problems if p.source == str(path) and p.line is None]
    if not mine:
        return problems
    if text is None:
        from .files import read_text

        try:
            text = read_text(path, root=Path(path).parent, limit=MAX_CONFIG_BYTES)
        except (OSError, ValueError):
            return problems
    lines = key_lines(text)
    out = []
    for p in problems:
        if p in mine:
            parts = p.key.split(".")
            line = next((lines[k] for k in (".".join(parts[:i]) for i in range(len(parts), 0, -1)) if k in lines), None)
            p = replace(p, line=line)
        out.append(p)
    return out


def _section(cls: type, base: Any, value: Any, source: str, name: str, problems: list[SettingsProblem]) -> Any:
    if not isinstance(value, dict):
        problems.append(SettingsProblem(source, name, f"expected a table, got {value!r}; using the defaults"))
        return base
    known = {f.name: f for f in fields(cls)}
    changes: dict[str, Any] = {}
    for raw_key, v in value.items():
        k = _snake(str(raw_key))
        key = f"{name}.{k}"
        if k not in known:
            problems.append(SettingsProblem(source, key, "unknown setting; ignored"))
            continue
        default = getattr(cls(), k)
        ok = False
        if k == "aliases":
            if isinstance(v, dict) and all(isinstance(a, str) and isinstance(b, str) for a, b in v.items()):
                v, ok = tuple(sorted(v.items())), True
        elif k == "tools":
            if isinstance(v, list) and all(isinstance(t, dict) for t in v):
                v, ok = tuple(v), True
        elif isinstance(default, bool):
            ok = isinstance(v, bool)
        elif isinstance(default, float):
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= float(v) <= 1.0
            v = float(v) if ok else v
        elif isinstance(default, int):
            ok = isinstance(v, int) and not isinstance(v, bool) and v > 0
        else:  # optional strings
            ok = v is None or (isinstance(v, str) and v.strip() != "")
            if ok and k == "endpoint" and v is not None and not re.match(r"^https?://[^/\s]+", v):
                ok = False  # an http(s) URL
            if v == "":
                v, ok = None, True
        if ok:
            changes[k] = v
        else:
            problems.append(SettingsProblem(source, key, f"invalid value {v!r}; using the default {default!r}"))
    return replace(base, **changes)


def find_config(start: Path) -> Path | None:
    """The nearest ``luaguard.toml`` in ``start`` or its parents, or ``None``."""
    start = start.resolve()
    for d in (start, *start.parents):
        candidate = d / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None


#: config files larger than this are not read (bytes)
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def read_config_data(path: Path) -> dict[str, Any]:
    """The TOML table of a config file: only a regular file inside its own folder (a link
    leading elsewhere is refused), at most :data:`MAX_CONFIG_BYTES` (:mod:`luaguard.files`).
    Raises :class:`ConfigError` (``"path:line:col: message"``) for TOML syntax errors or an
    unreadable file."""
    from .files import Refused, read_bytes

    try:
        raw = read_bytes(path, root=Path(path).parent, limit=MAX_CONFIG_BYTES).decode("utf-8")
    except Refused as exc:
        raise ConfigError(f"{path}: cannot read: {exc.why}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    try:
        return tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        where = f"{path}:{m.group(1)}:{m.group(2)}" if m else str(path)
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(f"{where}: invalid TOML: {msg}") from exc
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None


def load_config(path: Path, base: Settings | None = None) -> tuple[Settings, list[SettingsProblem]]:
    """Read a ``luaguard.toml`` (every key honoured: see :func:`luaguard.workspace.read_project_settings`
    for a repository's file, whose keys in :data:`USER_ONLY_KEYS` are not).

    Raises :class:`ConfigError` (``"path:line:col: message"``) for TOML syntax errors or
    an unreadable file; invalid values become problems and defaults.
    """
    return settings_from_mapping(read_config_data(path), str(path), base)


# -- workspace trust ---------------------------------------------------------------------------
#: Settings that send code off the machine or load a model: honoured only from the user's own
#: settings (the editor's, :func:`user_config_path`, the environment: :data:`ENV_SETTINGS`),
#: never from a repository's ``luaguard.toml`` - unless the user lists the repository in
#: ``trusted_projects`` of the user config file.  ``(table, key)``.
USER_ONLY_KEYS: tuple[tuple[str, str], ...] = (("completion", "endpoint"), ("completion", "model"))
#: Environment variables that set completion settings (the user's own, like the editor's).
ENV_SETTINGS: dict[str, tuple[str, str]] = {
    "LUAGUARD_COMPLETION_ENDPOINT": ("completion", "endpoint"),
    "LUAGUARD_COMPLETION_ENDPOINT_MODEL": ("completion", "endpoint_model"),
    "LUAGUARD_COMPLETION_ENDPOINT_PROJECT": ("completion", "endpoint_project"),
    "LUAGUARD_COMPLETION_MODEL": ("completion", "model"),
}


def user_config_path() -> Path:
    """The user's own config file: ``$LUAGUARD_USER_CONFIG``, else
    ``$XDG_CONFIG_HOME/luaguard/config.toml``, else ``~/.config/luaguard/config.toml``
    (``%APPDATA%\\luaguard\\config.toml`` on Windows).  It takes every ``luaguard.toml``
    key, plus ``trusted_projects``: folders whose own ``luaguard.toml`` may set
    :data:`USER_ONLY_KEYS` too."""
    import os

    env = os.environ.get("LUAGUARD_USER_CONFIG")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or (os.environ.get("APPDATA") if os.name == "nt" else None)
    return Path(base or Path.home() / ".config") / "luaguard" / "config.toml"


def user_only_keys_set(data: Any) -> list[str]:
    """The :data:`USER_ONLY_KEYS` a config table sets (``"completion.endpoint"`` ...)."""
    out = []
    for table, key in USER_ONLY_KEYS:
        section = data.get(table) if isinstance(data, dict) else None
        if isinstance(section, dict) and any(_snake(str(k)) == key for k in section):
            out.append(f"{table}.{key}")
    return out


def without_user_only_keys(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a config table without the :data:`USER_ONLY_KEYS`."""
    out = dict(data)
    for table, key in USER_ONLY_KEYS:
        section = out.get(table)
        if isinstance(section, dict):
            out[table] = {k: v for k, v in section.items() if _snake(str(k)) != key}
    return out


def env_settings(environ: Any = None) -> dict[str, Any]:
    """The settings the environment sets (:data:`ENV_SETTINGS`), as a config table (empty
    values are not set)."""
    import os

    environ = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for name, (table, key) in ENV_SETTINGS.items():
        value = environ.get(name)
        if value:
            out.setdefault(table, {})[key] = value
    return out
