"""``textDocument/codeAction``: quick fixes built from the diagnostics' ``data``.

For each luaguard diagnostic in the request context:

* its fix, when the finding had one (ruff-lsp's way: the fix was computed with the
  diagnostic and travels in ``Diagnostic.data``, so nothing is linted again) - the same
  :class:`~luaguard.findings.Fix` ``luaguard check --fix`` applies; marked ``isPreferred``
  (what an editor's auto-fix applies) only when the check marked it safe, as ``--fix``
  applies only safe fixes; offered only while the document is at the version the
  diagnostic was computed for;
* "Suppress <rule> on this line": appends ``-- luaguard: allow(<rule>)`` to the line
  (or adds the rule to an ``allow(...)`` comment already there; when the line ends inside
  a multi-line string or comment, a comment line is inserted above it instead).  The
  engine reads both forms (see :mod:`luaguard.engine`).

And, when the client asks for ``source.fixAll`` (VS Code's ``editor.codeActionsOnSave``:
``{"source.fixAll.luaguard": "explicit"}``, or the Source Action menu), one
``source.fixAll.luaguard`` action, "Fix all safe luaguard problems": what ``luaguard check
--fix`` does to the buffer (:func:`luaguard.fixes.fix_text`: safe fixes, linted again until
stable, nothing in a buffer that does not parse), as one edit of the whole document.
"""

from __future__ import annotations

import asyncio
import re
import traceback

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import to_fs_path

from ..findings import Range
from ..luau.lexer import tokenize
from ..text import LineIndex
from .convert import SOURCE, PositionEncoder, diagnostic_data, fix_from_data, fix_is_safe, rule_of
from .feature import Feature

_ALLOW_COMMENT = re.compile(r"--\s*luaguard:\s*allow\(([^)]*)\)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

#: The code-action kind of the fix-all action (ruff's naming: ``source.fixAll.<tool>``).
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.luaguard"

#: Rules a suppression comment makes no sense for.
UNSUPPRESSIBLE = frozenset({"too_many_problems", "unreadable_file", "internal_error", "unknown_suppression",
                            "unused_suppression"})

#: Documents larger than this are not tokenized to place a suppression comment.
LEX_LIMIT = 2_000_000


def _inside_token(lex, offset: int) -> bool:
    return any(t.start < offset < t.end for t in (*lex.tokens, *lex.comments))


def suppression_edit(text: str, line: int, rule: str, *, lex_limit: int = LEX_LIMIT) -> tuple[Range, str] | None:
    """The edit that silences ``rule`` on 0-based ``line`` of ``text``.

    Returns ``(range, new_text)`` with a UTF-16 range, or None when the rule is already
    allowed there or no comment can be placed (the line starts and ends inside a
    multi-line string or comment).
    """
    lines = LineIndex(text)
    line = min(max(line, 0), lines.line_count - 1)
    start = lines.starts[line]
    line_text = lines.line_text(line)
    existing = _ALLOW_COMMENT.search(line_text)
    if existing:
        rules = [r.strip() for r in existing.group(1).split(",") if r.strip()]
        if rule in rules or "all" in rules:
            return None
        return lines.range(start + existing.start(1), start + existing.end(1)), ", ".join([*rules, rule])
    eol = start + len(line_text)
    if len(text) <= lex_limit:
        lex = tokenize(text)
        if _inside_token(lex, eol):
            if line == 0 or _inside_token(lex, start):
                return None
            indent = re.match(r"[ \t]*", line_text).group(0)
            m = _LINE_BREAK.search(text)
            newline = m.group(0) if m else "\n"
            here = lines.position(start)
            return Range(here, here), f"{indent}-- luaguard: allow({rule}){newline}"
    end = lines.position(eol)
    return Range(end, end), f" -- luaguard: allow({rule})"


def _admits(only, kind: str) -> bool:
    return any(kind == str(getattr(k, "value", k)) or kind.startswith(str(getattr(k, "value", k)) + ".") for k in only)


def wants_quickfix(only) -> bool:
    """Whether a ``context.only`` filter admits ``quickfix`` actions."""
    if not only:
        return True
    return _admits(only, types.CodeActionKind.QuickFix.value)


def wants_fix_all(only) -> bool:
    """Whether a ``context.only`` filter asks for the fix-all action (``source``,
    ``source.fixAll`` or ``source.fixAll.luaguard``; never without a filter: source actions
    are asked for by name)."""
    return bool(only) and _admits(only, FIX_ALL)


class CodeActionsFeature(Feature):
    """Answers ``textDocument/codeAction``; see the module docstring."""

    name = "code_actions"

    def _edit(self, uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        caps = self.server.client_capabilities
        if get_capability(caps, "workspace.workspace_edit.document_changes", False):
            return types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                        edits=edits,
                    )
                ]
            )
        return types.WorkspaceEdit(changes={uri: edits})

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """The quick fixes for the luaguard diagnostics in ``params.context`` (other
        sources' diagnostics are ignored; ``context.only`` is honoured), or the fix-all
        action when ``context.only`` asks for it."""
        if wants_fix_all(params.context.only):
            action = await self._fix_all(params.text_document.uri)
            return [action] if action is not None else []
        if not wants_quickfix(params.context.only):
            return []
        uri = params.text_document.uri
        ours = [d for d in params.context.diagnostics if d.source == SOURCE]
        if not ours:
            return []
        doc = self.server.workspace.text_documents.get(uri)
        version = doc.version if doc is not None else None
        actions: list[types.CodeAction] = []
        for d in ours:
            data = diagnostic_data(d)
            fix = fix_from_data(data)
            if fix is None:
                continue
            made_for = data.get("version")
            if isinstance(made_for, int) and version is not None and made_for != version:
                continue  # stale: fresh diagnostics are on their way
            rng, new_text, title = fix
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[d],
                    is_preferred=fix_is_safe(data),
                    edit=self._edit(uri, version, [types.TextEdit(range=rng, new_text=new_text)]),
                )
            )
        if doc is not None:
            actions.extend(await self._suppressions(uri, doc.source, version, ours))
        return actions

    async def _fix_all(self, uri: str) -> types.CodeAction | None:
        doc = self.server.workspace.text_documents.get(uri)
        if doc is None:
            return None
        text = doc.source
        host = self.server.host
        await host.wait_ready(30)  # fixes need the project index
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        result = await host.fix(host.document_path(fs_path), text)
        if result is None or not result.changed:
            return None
        encoder = PositionEncoder(text, self.server.workspace.position_encoding)
        whole = encoder.range(LineIndex(text).range(0, len(text)))
        n = len(result.fixed)
        return types.CodeAction(
            title=f"Fix all safe luaguard problems ({n})",
            kind=FIX_ALL,
            edit=self._edit(uri, doc.version, [types.TextEdit(range=whole, new_text=result.text)]),
        )

    async def _suppressions(self, uri: str, text: str, version: int | None, diagnostics) -> list[types.CodeAction]:
        wanted: dict[tuple[int, str], types.Diagnostic] = {}
        for d in diagnostics:
            rule = rule_of(d)
            if rule and rule not in UNSUPPRESSIBLE:
                wanted.setdefault((d.range.start.line, rule), d)
        if not wanted:
            return []
        encoding = self.server.workspace.position_encoding

        def build() -> list[types.CodeAction]:
            encoder = PositionEncoder(text, encoding)
            out = []
            for (line, rule), d in wanted.items():
                edit = suppression_edit(text, line, rule)
                if edit is None:
                    continue
                rng, new_text = edit
                out.append(
                    types.CodeAction(
                        title=f"Suppress {rule} on this line",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[d],
                        edit=self._edit(uri, version, [types.TextEdit(range=encoder.range(rng), new_text=new_text)]),
                    )
                )
            return out

        if len(text) > 100_000:
            return await asyncio.to_thread(build)
        return build()


def register(server) -> None:
    """Add the code-action feature and answer ``textDocument/codeAction`` (quick fixes)."""
    feature = server.add_feature(CodeActionsFeature(server))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False),
    )
    async def code_action(ls, params: types.CodeActionParams) -> list[types.CodeAction]:
        try:
            return await feature.code_actions(params)
        except Exception:  # noqa: BLE001 - feature boundary: answer, never crash
            ls.log_error("codeAction failed", traceback.format_exc())
            return []
