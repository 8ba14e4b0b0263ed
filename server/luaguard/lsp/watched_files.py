"""``workspace/didChangeWatchedFiles``: keeping the index in step with the disk.

After ``initialized`` the server registers file watchers dynamically (when the client
allows it) for the files that shape the DataModel: project files, sourcemaps,
``luaguard.toml`` and everything Rojo turns into instances.  Events are batched briefly
(a branch switch sends hundreds), then:

* ``luaguard.toml`` changed -> settings re-read and a full re-index;
* a ``*.project.json(c)``/``sourcemap.json`` (or the configured project/sourcemap file)
  changed -> full re-index;
* anything else under the project root -> ``ProjectIndex.apply_file_changes`` in place,
  then the open documents are linted again.

Clients that cannot register watchers (Neovim's default on Linux) still get a saved
Luau document treated as a changed file.
"""

from __future__ import annotations

import asyncio
import os
import traceback
from pathlib import Path, PurePosixPath

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import to_fs_path

from ..config import CONFIG_FILE
from ..engine import LUAU_SUFFIXES
from ..workspace import PROJECT_SUFFIXES
from .configuration import CLIENT_TIMEOUT
from .debounce import Debouncer
from .feature import Feature

WATCH_GLOBS = (
    "**/*.project.json",
    "**/*.project.jsonc",
    "**/sourcemap.json",
    "**/luaguard.toml",
    "**/*.{lua,luau,json,toml,txt,csv,meta.json,model.json,rbxm,rbxmx}",
)

#: Seconds to wait for more file events before acting on a batch.
BATCH_SECONDS = 0.05

REGISTRATION_ID = "luaguard-watched-files"


def classify(path: Path, root: Path | None, settings) -> str:
    """``"config"``, ``"project"``, ``"file"`` (a file under ``root``) or ``"outside"``."""
    name = path.name
    if name == CONFIG_FILE:
        return "config"
    configured = {Path(p).name for p in (settings.project_file, settings.sourcemap_file) if p}
    if name.endswith(PROJECT_SUFFIXES) or name == "sourcemap.json" or name in configured:
        return "project"
    if root is None:
        return "outside"
    try:
        path.relative_to(root)
    except ValueError:
        return "outside"
    return "file"


class WatchedFilesFeature(Feature):
    """Registers the watchers and applies file events; see the module docstring."""

    name = "watched_files"

    def __init__(self, server) -> None:
        super().__init__(server)
        self.registered = False
        self.changed: set[Path] = set()
        self.deleted: set[Path] = set()
        self.debouncer = Debouncer(on_error=lambda exc: server.log_error("file change handling failed", "".join(traceback.format_exception(exc))))
        self._lock = asyncio.Lock()

    async def on_initialized(self) -> None:
        caps = self.server.client_capabilities
        if not get_capability(caps, "workspace.did_change_watched_files.dynamic_registration", False):
            self.server.log("luaguard: the client cannot watch files for the server; saved Luau files are re-indexed on save")
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=g) for g in WATCH_GLOBS]
        )
        try:
            await asyncio.wait_for(
                self.server.client_register_capability_async(
                    types.RegistrationParams(
                        registrations=[
                            types.Registration(id=REGISTRATION_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)
                        ]
                    )
                ),
                CLIENT_TIMEOUT,
            )
        except Exception as exc:  # noqa: BLE001
            self.server.log(f"luaguard: could not register file watchers: {exc!r}", types.MessageType.Warning)
            return
        self.registered = True

    def on_did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        if self.registered:
            return
        uri = params.text_document.uri
        if uri.startswith("file:") and uri.lower().endswith(LUAU_SUFFIXES):
            path = to_fs_path(uri)
            if path:
                self.add(Path(path), deleted=False)

    def on_shutdown(self) -> None:
        self.debouncer.cancel_all()

    # -- batching ----------------------------------------------------------------------
    def did_change_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        """Queue the events of a ``didChangeWatchedFiles`` notification."""
        for event in params.changes:
            if not event.uri.startswith("file:"):
                continue
            path = to_fs_path(event.uri)
            if path:
                self.add(Path(path), deleted=event.type == types.FileChangeType.Deleted)

    def add(self, path: Path, deleted: bool) -> None:
        """Queue one created/changed (or ``deleted``) file; the batch runs shortly."""
        path = Path(os.path.normpath(path))
        root = self.server.host.root
        if root is not None and not _within(path, root):
            real = Path(os.path.realpath(path))
            if _within(real, root):
                path = real
        if deleted:
            self.changed.discard(path)
            self.deleted.add(path)
        else:
            self.deleted.discard(path)
            self.changed.add(path)
        self.debouncer.schedule("batch", BATCH_SECONDS, self.flush)

    async def flush(self) -> None:
        """Apply the queued file events (see the module docstring)."""
        async with self._lock:
            changed, deleted = self.changed, self.deleted
            self.changed, self.deleted = set(), set()
            if changed or deleted:
                await self._apply(changed, deleted)

    async def _apply(self, changed: set[Path], deleted: set[Path]) -> None:
        server = self.server
        host = server.host
        root = host.root
        kinds = {p: classify(p, root, host.settings) for p in changed | deleted}
        if "config" in kinds.values():
            await server.dispatch("on_config_file_changed")
            return
        if "project" in kinds.values():
            await server.dispatch("on_reindex_requested", "project file changed")
            return
        rel_changed = [_rel(p, root) for p in changed if kinds[p] == "file"]
        rel_deleted = [_rel(p, root) for p in deleted if kinds[p] == "file"]
        if not rel_changed and not rel_deleted:
            return
        try:
            updated = await host.apply_file_changes(rel_changed, rel_deleted)
        except Exception:  # noqa: BLE001 - fall back to a full index
            server.log_error("updating the index in place failed; re-indexing", traceback.format_exc())
            await server.dispatch("on_reindex_requested", "files changed")
            return
        if updated:
            await server.dispatch("on_files_changed")


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _rel(path: Path, root: Path) -> str:
    return PurePosixPath(path.relative_to(root).as_posix()).as_posix()


def register(server) -> None:
    """Add the watched-files feature and handle ``workspace/didChangeWatchedFiles``."""
    feature = server.add_feature(WatchedFilesFeature(server))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls, params: types.DidChangeWatchedFilesParams) -> None:
        try:
            feature.did_change_watched_files(params)
        except Exception:  # noqa: BLE001
            ls.log_error("didChangeWatchedFiles failed", traceback.format_exc())
