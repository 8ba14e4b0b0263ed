"""End-to-end: guarded completions from ``luaguard serve`` (the shipped default model)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from luaguard.engine import Engine
from test_lsp_e2e import open_doc, start, vscode  # noqa: F401  (the pytest-lsp fixture)

PLACE = Path(__file__).resolve().parent.parent / "samples" / "place"
TARGET = PLACE / "src" / "server" / "Services" / "CombatService.luau"


async def test_completion_paths_resolve(vscode: LanguageClient):  # noqa: F811
    await start(vscode, PLACE, settings={"completion": {"minConfidence": 0.0, "maxTokens": 24}})
    prefix = 'local ReplicatedStorage = game:GetService("ReplicatedStorage")\nlocal Module = require(game.ReplicatedStorage.'
    uri = open_doc(vscode, TARGET, prefix)
    line = prefix.count("\n")
    col = len(prefix.splitlines()[-1])
    result = await vscode.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line, col))
    )
    assert result is not None and result.items, "a guarded completion"
    engine = Engine(PLACE)
    for item in result.items:
        completed = prefix + item.text_edit.new_text
        found = [f for f in engine.lint_text(completed, TARGET) if f.rule in ("unknown_instance", "unknown_service", "placeholder")]
        assert found == [], (item.text_edit.new_text, [f.message for f in found])
