"""End-to-end: guarded completions from ``luaguard serve`` (the shipped default model)."""

from __future__ import annotations

from pathlib import Path

from endpoint_standin import completion_endpoint, completion_reply
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
    # the shipped model says what it is wherever it answers
    assert all(i.detail.startswith("luaguard demonstration model (guarded), confidence ") for i in result.items)
    assert all("demonstration model" in i.documentation.value and i.data["demonstration"] for i in result.items)
    engine = Engine(PLACE)
    for item in result.items:
        completed = prefix + item.text_edit.new_text
        found = [f for f in engine.lint_text(completed, TARGET) if f.rule in ("unknown_instance", "unknown_service", "placeholder")]
        assert found == [], (item.text_edit.new_text, [f.message for f in found])


async def test_completion_from_an_endpoint(vscode: LanguageClient):  # noqa: F811
    """``completion.endpoint``: the server posts to an OpenAI-compatible server with the luaguard
    keys (no local model) and offers its answer."""
    with completion_endpoint(completion_reply("Shared", [-0.05], finish_reason="stop")) as endpoint:
        await start(vscode, PLACE, settings={"completion": {
            "endpoint": endpoint.url, "endpointModel": "m", "endpointProject": "place"}})
        prefix = "local Module = require(game.ReplicatedStorage."
        uri = open_doc(vscode, TARGET, prefix)
        result = await vscode.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, len(prefix))))
        assert result is not None and [i.text_edit.new_text for i in result.items] == ["Shared"]
        assert result.items[0].detail.startswith("luaguard endpoint m (guarded)")
        assert not result.items[0].data["demonstration"]
        assert endpoint.bodies[0]["prompt"] == prefix and endpoint.bodies[0]["vllm_xargs"]["luaguard_project"] == "place"
        assert endpoint.bodies[0]["vllm_xargs"]["luaguard_file"] == "src/server/Services/CombatService.luau"


async def test_endpoint_completion_without_a_project_is_not_labelled_guarded(vscode: LanguageClient):  # noqa: F811
    """With ``endpointProject`` empty no luaguard keys are sent, so the server guards nothing:
    the item says "unguarded"."""
    with completion_endpoint(completion_reply("Shared", [-0.05])) as endpoint:
        await start(vscode, PLACE, settings={"completion": {
            "endpoint": endpoint.url, "endpointModel": "m"}})
        prefix = "local Module = require(game.ReplicatedStorage."
        uri = open_doc(vscode, TARGET, prefix)
        result = await vscode.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, len(prefix))))
        assert result is not None and result.items[0].detail.startswith("luaguard endpoint m (unguarded)")
        assert "vllm_xargs" not in endpoint.bodies[0]
