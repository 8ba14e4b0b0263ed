"""Open documents with the LSP's own line breaks.

pygls splits a document into lines with ``str.splitlines``, which also breaks at form
feeds, vertical tabs, ``\\x1c``-``\\x1e``, NEL, U+2028 and U+2029.  The LSP counts only
``\\n``, ``\\r\\n`` and ``\\r``, so an incremental edit below such a character lands on the
wrong line and corrupts the server's copy of the buffer.  :func:`install` makes the
workspace create documents whose ``lines`` follow the LSP (and luaguard's
:class:`~luaguard.text.LineIndex`).
"""

from __future__ import annotations

import logging
import re

from pygls.workspace import TextDocument, Workspace

logger = logging.getLogger(__name__)

_OTHER_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_LSP_BREAK = re.compile(r"(\r\n|\r|\n)")


def lsp_lines(text: str) -> tuple[str, ...]:
    """``text`` split after each ``\\n``, ``\\r\\n`` or lone ``\\r`` (breaks kept)."""
    if not _OTHER_BREAKS.search(text):
        return tuple(text.splitlines(keepends=True))
    parts = _LSP_BREAK.split(text)
    lines = [parts[i] + parts[i + 1] for i in range(0, len(parts) - 1, 2)]
    if parts[-1]:
        lines.append(parts[-1])
    return tuple(lines)


class LspTextDocument(TextDocument):
    """A pygls document whose lines break only where the LSP says."""

    @property
    def lines(self):  # type: ignore[override]
        """The document's lines, split as the LSP splits them (breaks kept)."""
        return lsp_lines(self.source)


class LspWorkspace(Workspace):
    """A pygls workspace creating :class:`LspTextDocument` objects."""

    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


def install(server) -> bool:
    """Switch ``server``'s workspace (created by pygls during ``initialize``) to
    :class:`LspWorkspace`.  Returns False, leaving pygls' behaviour, if this pygls
    version's workspace does not have the expected shape."""
    try:
        workspace = server.workspace
        if type(workspace) is Workspace and hasattr(workspace, "_create_text_document") and hasattr(workspace, "_sync_kind"):
            workspace.__class__ = LspWorkspace
            return True
    except Exception:  # noqa: BLE001
        logger.exception("could not install LSP line handling")
    return False
