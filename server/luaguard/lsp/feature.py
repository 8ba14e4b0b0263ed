"""The small contract between :mod:`luaguard.lsp.server` and the feature modules.

A feature module defines a :class:`Feature` subclass and a ``register(server)`` function
that adds an instance with :meth:`LuaguardServer.add_feature
<luaguard.lsp.server.LuaguardServer.add_feature>` and registers the LSP requests it
answers (``@server.feature(...)``).  The server fans lifecycle and document-sync
notifications, and its own events, out to every feature that defines the matching hook,
in registration order (esbonio's ``LanguageFeature`` fan-out).

Hooks (all optional; each may be a plain or an ``async`` method):

=============================  ==============================================================
``on_initialize(params)``      inside the ``initialize`` request (plain methods only)
``on_initialized()``           after ``initialized``; awaited in order
``on_did_open(params)``        ``textDocument/didOpen`` (also ``on_did_change``,
                               ``on_did_save``, ``on_did_close``)
``on_settings_changed()``      settings changed; the index is still valid
``on_reindex_requested(why)``  the project definition or ``luaguard.toml`` changed
``on_config_file_changed()``   ``luaguard.toml`` changed on disk
``on_engine_replaced()``       a (re)index finished and its engine is in use
``on_files_changed()``         files changed on disk and the index was updated in place
``on_shutdown()``              ``shutdown`` request
=============================  ==============================================================

An exception in a hook is logged to the client (``window/logMessage``) and does not stop
the other features.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server import LuaguardServer


class Feature:
    """Base class of a feature: holds the server.  ``name`` identifies it in logs and
    in :meth:`~luaguard.lsp.server.LuaguardServer.get_feature`."""

    name = "feature"

    def __init__(self, server: "LuaguardServer") -> None:
        self.server = server
