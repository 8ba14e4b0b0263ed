"""Settings for the server: ``luaguard.toml`` + ``initializationOptions`` + the client's
``luaguard`` configuration section (``workspace/configuration``), in that order (later
sources override earlier ones; ``null`` values mean "not set").

Invalid values are replaced by their defaults and each distinct problem is shown once
(``window/showMessage`` warning; jedi-language-server's behaviour).  A
``workspace/didChangeConfiguration`` pulls the section again: a change of
``project_file``/``sourcemap_file`` re-indexes, any other change re-lints.

Server-only settings (:class:`LspSettings`) live in the same section:
``debounceMs`` (``debounce_ms``), the delay in milliseconds between the last edit and the
lint (default 150, 0 to 10000).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import to_fs_path

from ..config import Settings, SettingsProblem, settings_from_mapping
from ..workspace import ProjectSettings, find_project_root, read_project_settings
from .feature import Feature

SECTION = "luaguard"

#: Seconds to wait for the client to answer a request before going on without it.
CLIENT_TIMEOUT = 5.0

#: Settings whose change needs a re-index (they choose the project file).
PROJECT_KEYS = ("project_file", "sourcemap_file")


@dataclass(frozen=True, slots=True)
class LspSettings:
    """Settings only the language server reads.  ``debounce_ms``: milliseconds between
    the last ``didChange`` and the lint."""

    debounce_ms: int = 150


_LSP_KEYS = {"debounceMs": "debounce_ms", "debounce_ms": "debounce_ms"}


def strip_nulls(value: Any) -> Any:
    """``value`` without ``None`` entries in (nested) mappings: a client sending
    ``null`` for a setting means "not set", so the file's value stays."""
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    return value


def split_lsp_settings(data: Any, source: str, base: LspSettings) -> tuple[Any, LspSettings, list[SettingsProblem]]:
    """Take the server-only keys out of a client settings object.

    Returns the rest (for :func:`~luaguard.config.settings_from_mapping`), the merged
    :class:`LspSettings` and problems with invalid values.  ``data`` may nest the keys
    under ``"luaguard"``.
    """
    problems: list[SettingsProblem] = []
    if not isinstance(data, dict):
        return data, base, problems
    data = dict(data)
    if isinstance(data.get(SECTION), dict):
        inner = dict(data.pop(SECTION))
        data = {**data, **inner}
    debounce = base.debounce_ms
    for key in list(data):
        if key not in _LSP_KEYS:
            continue
        value = data.pop(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 10000:
            debounce = int(value)
        else:
            problems.append(SettingsProblem(source, key, f"expected milliseconds from 0 to 10000, got {value!r}; using the default {LspSettings().debounce_ms}"))
    return data, LspSettings(debounce_ms=debounce), problems


def merge_settings(project: ProjectSettings, init_options: Any, client_config: Any) -> tuple[Settings, LspSettings, list[str]]:
    """Layer ``luaguard.toml`` < ``initializationOptions`` < client configuration.

    Returns the settings, the server-only settings and every problem as text
    (``"source: key: message"``, a TOML syntax error included).  Never raises.
    """
    problems: list[str] = []
    if project.error:
        problems.append(f"{project.error}; using the default settings")
    problems.extend(str(p) for p in project.problems)
    settings = project.settings
    lsp = LspSettings()
    for source, raw in (("initializationOptions", init_options), (f"client settings ({SECTION})", client_config)):
        if raw is None:
            continue
        raw = strip_nulls(raw)
        rest, lsp, lsp_problems = split_lsp_settings(raw, source, lsp)
        problems.extend(str(p) for p in lsp_problems)
        settings, found = settings_from_mapping(rest, source, settings)
        problems.extend(str(p) for p in found)
    return settings, lsp, problems


def workspace_root(params: types.InitializeParams) -> Path | None:
    """The workspace directory: ``rootUri``, else the first workspace folder, else the
    deprecated ``rootPath``; None for a client without a folder (single files)."""
    uri = params.root_uri
    if not uri and params.workspace_folders:
        uri = params.workspace_folders[0].uri
    path = to_fs_path(uri) if uri else params.root_path
    if not path:
        return None
    p = Path(path)
    return p if p.is_dir() else None


class ConfigurationFeature(Feature):
    """Owns the settings layers; see the module docstring."""

    name = "configuration"

    def __init__(self, server) -> None:
        super().__init__(server)
        self.init_options: Any = None
        self.client_config: Any = None
        self.project = ProjectSettings()
        self.supports_pull = False
        self.root_uri: str | None = None
        server.lsp_settings = LspSettings()

    # -- lifecycle ---------------------------------------------------------------------
    def on_initialize(self, params: types.InitializeParams) -> None:
        host = self.server.host
        ws = workspace_root(params)
        host.workspace_root = ws
        host.root = (find_project_root(ws) or ws.resolve()) if ws is not None else None
        self.root_uri = params.root_uri or (params.workspace_folders[0].uri if params.workspace_folders else None)
        self.init_options = params.initialization_options
        self.supports_pull = bool(get_capability(params.capabilities, "workspace.configuration", False))
        self.project = read_project_settings(host.root)
        settings, lsp, problems = merge_settings(self.project, self.init_options, None)
        host.settings = settings
        host.engine.settings = settings  # nothing runs on the engine before initialized
        self.server.lsp_settings = lsp
        self._report(problems)
        self._tell_notices()

    async def on_initialized(self) -> None:
        await self._register_for_changes()
        if not self.supports_pull:
            return
        self.client_config = await self._pull()
        await self._apply(project_changed=False)

    async def _register_for_changes(self) -> None:
        """Ask for ``didChangeConfiguration`` of our section (clients such as VS Code
        only send it for sections a server registered)."""
        caps = self.server.client_capabilities
        if not get_capability(caps, "workspace.did_change_configuration.dynamic_registration", False):
            return
        params = types.RegistrationParams(
            registrations=[
                types.Registration(
                    id="luaguard-configuration",
                    method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                    register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION),
                )
            ]
        )
        try:
            await asyncio.wait_for(self.server.client_register_capability_async(params), CLIENT_TIMEOUT)
        except Exception as exc:  # noqa: BLE001
            self.server.log(f"luaguard: could not register for configuration changes: {exc!r}")

    async def on_config_file_changed(self) -> None:
        """``luaguard.toml`` changed on disk: re-read it and re-index."""
        self.project = read_project_settings(self.server.host.root)
        self._tell_notices()
        await self._apply(project_changed=True)

    async def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        """Pull the section again (or take the pushed settings from clients that cannot
        be asked) and apply it."""
        if self.supports_pull:
            self.client_config = await self._pull()
        else:
            pushed = params.settings
            if isinstance(pushed, dict) and isinstance(pushed.get(SECTION), dict):
                pushed = pushed[SECTION]
            self.client_config = pushed if isinstance(pushed, dict) else None
        await self._apply(project_changed=False)

    # -- helpers -----------------------------------------------------------------------
    async def _pull(self) -> Any:
        try:
            result = await asyncio.wait_for(
                self.server.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(scope_uri=self.root_uri, section=SECTION)])
                ),
                CLIENT_TIMEOUT,
            )
        except Exception as exc:  # noqa: BLE001 - a client error or silence must not stop us
            self.server.log(f"luaguard: workspace/configuration failed: {exc!r}", types.MessageType.Warning)
            return self.client_config
        if isinstance(result, (list, tuple)) and result:
            value = result[0]
            return value if isinstance(value, dict) else None
        return None

    async def _apply(self, project_changed: bool) -> None:
        host = self.server.host
        old = host.settings
        settings, lsp, problems = merge_settings(self.project, self.init_options, self.client_config)
        self.server.lsp_settings = lsp
        self._report(problems)
        if project_changed or any(getattr(old, k) != getattr(settings, k) for k in PROJECT_KEYS):
            host.settings = settings
            await self.server.dispatch("on_reindex_requested", "settings changed")
            return
        if settings != old:
            await host.update_settings(settings)
            await self.server.dispatch("on_settings_changed")

    def _tell_notices(self) -> None:
        """Say once each repository setting that was ignored (workspace trust)."""
        for n in self.project.notices:
            self.server.show_once(f"notice:{n}", f"luaguard: {n}", types.MessageType.Warning)

    def _report(self, problems: list[str]) -> None:
        fresh = [p for p in problems if p not in self.server._shown]
        for p in problems:
            self.server.log_once(f"setting:{p}", f"luaguard: invalid setting: {p}", types.MessageType.Warning)
        if not fresh:
            return
        for p in fresh:
            self.server._shown.add(p)
        shown = fresh[:5]
        more = f"\n(and {len(fresh) - 5} more: see the luaguard output)" if len(fresh) > 5 else ""
        text = "luaguard: invalid settings, defaults used instead:\n" + "\n".join(f"- {p}" for p in shown) + more
        self.server.show_once("settings:" + "|".join(fresh), text, types.MessageType.Warning)


def register(server) -> None:
    """Add the configuration feature and handle ``workspace/didChangeConfiguration``."""
    feature = server.add_feature(ConfigurationFeature(server))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls, params: types.DidChangeConfigurationParams) -> None:
        try:
            await feature.did_change_configuration(params)
        except Exception:  # noqa: BLE001 - feature boundary
            import traceback

            ls.log_error("configuration change failed", traceback.format_exc())
