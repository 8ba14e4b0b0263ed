"""luaguard's language server (pygls 2.x).

:mod:`.server` creates the :class:`~luaguard.lsp.server.LuaguardServer` and registers one
module per LSP feature; each module exposes ``register(server)``.  No rule logic lives in
this package: every finding comes from :class:`luaguard.engine.Engine`.
"""
