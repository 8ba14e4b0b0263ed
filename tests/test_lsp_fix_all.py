"""End-to-end: the ``source.fixAll.luaguard`` code action does to a buffer what
``luaguard check --fix`` does to the file (one fix engine, luaguard.fixes)."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient

from luaguard.engine import Engine
from luaguard.fixes import fix_text
from test_lsp_e2e import FIXTURES, apply_action, diagnostics_for, open_doc, start, vscode  # noqa: F401

ROOT = FIXTURES / "basic"
MAIN = ROOT / "src" / "server" / "Main.server.luau"
TEXT = (
    'local P = game:GetService("Playerz")\n'                 # safe: Players
    "local Combat = require(script.Parent.Combatt)\n"       # safe: Combat
    "wait(1)\n"                                             # unsafe: not applied
)


async def fix_all(client: LanguageClient, uri: str, only) -> list[types.CodeAction]:
    zero = types.Position(line=0, character=0)
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=zero, end=zero),
        context=types.CodeActionContext(diagnostics=[], only=only)))
    return list(result or [])


async def test_fix_all_source_action(vscode: LanguageClient):  # noqa: F811
    await start(vscode, ROOT)
    uri = open_doc(vscode, MAIN, TEXT)
    await diagnostics_for(vscode, uri, version=1)
    actions = await fix_all(vscode, uri, [types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in actions] == ["source.fixAll.luaguard"]
    assert actions[0].title == "Fix all safe luaguard problems (2)"
    fixed = apply_action(TEXT, actions[0], uri, vscode.encoding)
    assert fixed == fix_text(Engine(ROOT), TEXT, MAIN).text
    assert fixed.splitlines() == ['local P = game:GetService("Players")', "local Combat = require(script.Parent.Combat)", "wait(1)"]
    # quick-fix requests do not get it, nor requests without a filter
    assert all(a.kind != "source.fixAll.luaguard" for a in await fix_all(vscode, uri, [types.CodeActionKind.QuickFix]))
    assert all(a.kind != "source.fixAll.luaguard" for a in await fix_all(vscode, uri, None))
