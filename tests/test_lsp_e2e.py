"""End-to-end tests of ``luaguard serve`` over stdio, driven by pytest-lsp.

Tests that are cheap run under both client profiles pytest-lsp ships for VS Code and
Neovim 0.11 (Neovim negotiates UTF-8 positions and cannot register file watchers).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

FIXTURES = Path(__file__).parent / "fixtures" / "lsp"
SERVER = [sys.executable, "-c", "import sys; from luaguard.cli import main; sys.exit(main(['serve']))"]
FAULTY_SERVER = [sys.executable, str(FIXTURES / "faulty_server.py")]
PROFILES = ["visual-studio-code", "neovim"]


# -- client ---------------------------------------------------------------------------
def make_client() -> LanguageClient:
    """pytest-lsp's client, also recording every publishDiagnostics (in order) and the
    server's client/registerCapability requests."""
    client = LanguageClient(converter_factory=default_converter)
    client.publish_log = []
    client.registrations = []

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.publish_log.append(params)

    def register_capability(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.CLIENT_REGISTER_CAPABILITY] = register_capability
    register_lsp_features(client, features)
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client), params=PROFILES)
async def client(lsp_client: LanguageClient, request):
    lsp_client.profile = request.param
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def vscode(lsp_client: LanguageClient):
    lsp_client.profile = "visual-studio-code"
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=FAULTY_SERVER, client_factory=make_client))
async def faulty(lsp_client: LanguageClient):
    lsp_client.profile = "visual-studio-code"
    yield
    await lsp_client.shutdown_session()


# -- helpers --------------------------------------------------------------------------
async def wait_for(predicate, timeout: float = 10.0, what: str = "condition"):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def start(client: LanguageClient, root: Path, *, init_options=None, settings=None) -> types.InitializeResult:
    """Initialize against ``root`` and wait for the first index to finish."""
    if settings is not None:
        client.set_configuration(settings, section="luaguard")
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(client.profile),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=init_options,
        )
    )
    client.encoding = result.capabilities.position_encoding or "utf-16"
    await wait_for(lambda: index_done(client), what="the index to be ready")
    return result


def index_done(client: LanguageClient) -> bool:
    return any(isinstance(v, types.WorkDoneProgressEnd) for reports in client.progress_reports.values() for v in reports)


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1, language: str = "luau") -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text))
    )
    return uri


def change_doc(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def publishes(client: LanguageClient, uri: str) -> list[types.PublishDiagnosticsParams]:
    return [p for p in client.publish_log if p.uri == uri]


async def diagnostics_for(client: LanguageClient, uri: str, version: int | None = None, after: int = 0, where=None, timeout: float = 10.0):
    """The diagnostics of the first publication for ``uri`` (with ``version``, after the
    first ``after`` publications, satisfying ``where``)."""

    def find():
        for p in publishes(client, uri)[after:]:
            if (version is None or p.version == version) and (where is None or where(p.diagnostics)):
                return p
        return None

    found = await wait_for(find, timeout, f"diagnostics for {uri} (version {version})")
    return list(found.diagnostics)


def codes(diagnostics) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def by_code(diagnostics, code: str) -> types.Diagnostic:
    matches = [d for d in diagnostics if d.code == code]
    assert matches, f"no {code} diagnostic in {codes(diagnostics)}"
    return matches[0]


def units(s: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(s.encode("utf-8"))
    if encoding == "utf-32":
        return len(s)
    return len(s.encode("utf-16-le")) // 2


def offset_of(text: str, pos: types.Position, encoding: str) -> int:
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: pos.line])
    line = lines[pos.line] if pos.line < len(lines) else ""
    n = 0
    for i, ch in enumerate(line):
        if n >= pos.character:
            return start + i
        n += units(ch, encoding)
    return start + len(line.rstrip("\r\n"))


def apply_action(text: str, action: types.CodeAction, uri: str, encoding: str) -> str:
    edit = action.edit
    assert edit is not None
    if edit.document_changes:
        edits = [e for dc in edit.document_changes if dc.text_document.uri == uri for e in dc.edits]
    else:
        edits = list(edit.changes[uri])
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a, b = offset_of(text, e.range.start, encoding), offset_of(text, e.range.end, encoding)
        text = text[:a] + e.new_text + text[b:]
    return text


async def code_actions(client: LanguageClient, uri: str, diagnostics) -> list[types.CodeAction]:
    rng = diagnostics[0].range
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=list(diagnostics)),
        )
    )
    return list(result or [])


# -- tests ----------------------------------------------------------------------------
MAIN = FIXTURES / "basic" / "src" / "server" / "Main.server.luau"

MAIN_TEXT = (
    "local Combat = require(script.Parent.Combatt)\n"  # 0: unknown_instance, fix Combat
    "local s = '\U0001F600' -- TODO emoji\n"  # 1: placeholder after a non-BMP char
    "local t = {1, 2\n"  # 2: unbalanced bracket
)


async def test_diagnostics_fixes_and_suppression(client: LanguageClient):
    await start(client, FIXTURES / "basic")
    enc = client.encoding
    uri = open_doc(client, MAIN, MAIN_TEXT)
    diags = await diagnostics_for(client, uri, version=1)
    assert codes(diags) == ["placeholder", "unbalanced_bracket", "unknown_instance"]
    assert all(d.source == "luaguard" for d in diags)

    unknown = by_code(diags, "unknown_instance")
    assert unknown.severity == types.DiagnosticSeverity.Error
    assert "Did you mean 'Combat'?" in unknown.message
    col = MAIN_TEXT.index("Combatt")
    assert (unknown.range.start.line, unknown.range.start.character, unknown.range.end.character) == (0, col, col + 7)
    assert unknown.data["suggestions"][0] == "Combat"

    todo = by_code(diags, "placeholder")
    line1 = MAIN_TEXT.splitlines()[1]
    assert todo.range.start.line == 1
    # the finding covers the marker and its note, not the comment's dashes
    assert todo.range.start.character == units(line1[: line1.index("TODO")], enc)
    assert todo.range.end.character == units(line1, enc)
    assert todo.severity == types.DiagnosticSeverity.Warning

    bracket = by_code(diags, "unbalanced_bracket")
    assert (bracket.range.start.line, bracket.range.start.character) == (2, 10)

    # The quick fix comes from Diagnostic.data and clears the diagnostic.
    actions = await code_actions(client, uri, [unknown])
    preferred = [a for a in actions if a.is_preferred]
    assert len(preferred) == 1 and preferred[0].kind == types.CodeActionKind.QuickFix
    assert preferred[0].title == "Replace 'Combatt' with 'Combat'"
    fixed = apply_action(MAIN_TEXT, preferred[0], uri, enc)
    assert fixed.splitlines()[0] == "local Combat = require(script.Parent.Combat)"
    assert any(a.title == "Suppress unknown_instance on this line" for a in actions)

    # Suppressing the TODO on its line.
    actions = await code_actions(client, uri, [todo])
    suppress = [a for a in actions if a.title == "Suppress placeholder on this line"]
    assert len(suppress) == 1 and not suppress[0].is_preferred
    fixed = apply_action(fixed, suppress[0], uri, enc)
    assert fixed.splitlines()[1].endswith("-- TODO emoji -- luaguard: allow(placeholder)")

    change_doc(client, uri, 2, fixed)
    diags = await diagnostics_for(client, uri, version=2)
    assert codes(diags) == ["unbalanced_bracket"]

    # A burst of changes is linted once, for the last version only.
    before = len(publishes(client, uri))
    change_doc(client, uri, 3, fixed + "-- TODO three\n")
    change_doc(client, uri, 4, fixed + "-- TODO four\n")
    change_doc(client, uri, 5, fixed.replace("{1, 2", "{1, 2}"))
    diags = await diagnostics_for(client, uri, version=5, after=before)
    assert diags == []
    await asyncio.sleep(0.3)  # nothing older may arrive late
    assert [p.version for p in publishes(client, uri)[before:]] == [5]

    stats = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="luaguard.stats"))
    assert stats["files"] == 1
    assert stats["rules"]["unknown_instance"] >= 1 and stats["rules"]["placeholder"] >= 1

    change_doc(client, uri, 6, "-- TODO six\n")
    assert codes(await diagnostics_for(client, uri, version=6)) == ["placeholder"]
    before = len(publishes(client, uri))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert await diagnostics_for(client, uri, after=before) == []
    assert not [m for m in client.messages if m.type == types.MessageType.Error]


async def test_settings_changes_take_effect(client: LanguageClient):
    bad = {"placeholderMode": "sometimes", "rules": {"placeholder": "loud"}}
    await start(client, FIXTURES / "basic", init_options={"debounceMs": 20}, settings=bad)
    warnings = await wait_for(lambda: [m for m in client.messages if m.type == types.MessageType.Warning], what="a settings warning")
    assert len(warnings) == 1
    text = warnings[0].message
    assert "placeholder_mode" in text and "'sometimes'" in text and "rules.placeholder" in text

    uri = open_doc(client, MAIN, "local x = 1 -- TODO later\n")
    diags = await diagnostics_for(client, uri, version=1)
    assert [(d.code, d.severity) for d in diags] == [("placeholder", types.DiagnosticSeverity.Warning)]  # defaults used

    before = len(publishes(client, uri))
    client.set_configuration({"placeholderMode": "patch"}, section="luaguard")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    diags = await diagnostics_for(client, uri, after=before)
    assert [(d.code, d.severity) for d in diags] == [("placeholder", types.DiagnosticSeverity.Error)]

    before = len(publishes(client, uri))
    client.set_configuration({"rules": {"placeholder": "off"}}, section="luaguard")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await diagnostics_for(client, uri, after=before) == []

    # The same invalid settings again: no second warning, defaults again.
    before = len(publishes(client, uri))
    client.set_configuration(bad, section="luaguard")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    diags = await diagnostics_for(client, uri, after=before)
    assert codes(diags) == ["placeholder"]
    assert len([m for m in client.messages if m.type == types.MessageType.Warning]) == 1


async def test_new_file_makes_instance_path_valid(client: LanguageClient, tmp_path: Path):
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "basic", root)
    await start(client, root)
    uri = open_doc(client, root / "src" / "server" / "Main.server.luau", "local M = require(script.Parent.NewModule)\n")
    diags = await diagnostics_for(client, uri, version=1)
    assert codes(diags) == ["unknown_instance"]

    new_file = root / "src" / "server" / "NewModule.luau"
    new_file.write_text("return {}\n")
    before = len(publishes(client, uri))
    if client.profile == "visual-studio-code":
        # VS Code watches the files the server registered and reports the new one.
        by_method = {r.method: r.register_options for r in client.registrations}
        globs = [w["globPattern"] for w in by_method[types.WORKSPACE_DID_CHANGE_WATCHED_FILES]["watchers"]]
        assert "**/*.project.json" in globs and "**/luaguard.toml" in globs
        assert by_method[types.WORKSPACE_DID_CHANGE_CONFIGURATION] == {"section": "luaguard"}
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=new_file.as_uri(), type=types.FileChangeType.Created)])
        )
    else:
        # Neovim cannot register watchers: saving the new Luau buffer tells the server.
        assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES not in [r.method for r in client.registrations]
        new_uri = open_doc(client, new_file, "return {}\n")
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=new_uri)))
    assert await diagnostics_for(client, uri, after=before, where=lambda ds: not ds) == []

    # Deleting it makes the path unknown again.
    new_file.unlink()
    before = len(publishes(client, uri))
    if client.profile == "visual-studio-code":
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=new_file.as_uri(), type=types.FileChangeType.Deleted)])
        )
        diags = await diagnostics_for(client, uri, after=before, where=lambda ds: bool(ds))
        assert codes(diags) == ["unknown_instance"]


async def test_each_document_is_judged_by_the_projects_that_map_it(vscode: LanguageClient, tmp_path: Path):
    """A game, its test place and a plugin beside them (tests/project_files.py): tests are
    judged in the test place, the plugin under its own project, shared code in both."""
    from project_files import several_projects

    client = vscode
    root = several_projects(tmp_path / "repo", {"tests/Bad.spec.luau": "return {}\n"})
    await start(client, root)
    # Fixtures exists only where the tests run, Remotes only in the game
    spec = root / "tests" / "Net.spec.luau"
    assert await diagnostics_for(client, open_doc(client, spec, spec.read_text())) == []
    shared = open_doc(client, root / "src" / "shared" / "Net.luau", "return script.Parent.Parent.Fixtures, "
                                                                     "script.Parent.Parent.Remotes.Hit\n")
    assert await diagnostics_for(client, shared) == []
    plugin = open_doc(client, root / "plugin" / "src" / "init.server.luau", "return require(script.Widgt)\n")
    [d] = await diagnostics_for(client, plugin)
    assert d.code == "unknown_instance" and "Did you mean 'Widget'?" in d.message
    uri = open_doc(client, root / "tests" / "Bad.spec.luau", "return require(script.Parent.Helpr)\n")
    [d] = await diagnostics_for(client, uri)
    assert d.code == "unknown_instance" and "Did you mean 'Helper'?" in d.message
    # a file created on disk updates the test place's index in place
    (root / "tests" / "Helpr.luau").write_text("return {}\n")
    before = len(publishes(client, uri))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=(root / "tests" / "Helpr.luau").as_uri(), type=types.FileChangeType.Created)]))
    assert await diagnostics_for(client, uri, after=before, where=lambda ds: not ds) == []


async def test_malformed_project_file(vscode: LanguageClient, tmp_path: Path):
    client = vscode
    root = tmp_path / "broken"
    shutil.copytree(FIXTURES / "broken", root)
    await start(client, root)
    warnings = await wait_for(lambda: [m for m in client.messages if m.type == types.MessageType.Warning], what="a project warning")
    assert len(warnings) == 1
    assert "default.project.json:5" in warnings[0].message

    # The server keeps serving the checks that need no project.
    uri = open_doc(client, root / "src" / "server" / "Main.server.luau", "local C = require(script.Parent.Combat)\n-- TODO x\n")
    diags = await diagnostics_for(client, uri, version=1)
    assert codes(diags) == ["placeholder"]
    actions = await code_actions(client, uri, diags)
    assert [a.title for a in actions] == ["Suppress placeholder on this line"]

    # Fixing the project file on disk loads the project: now the path is checked.
    project = root / "default.project.json"
    project.write_text(project.read_text().replace('"DataModel"\n', '"DataModel",\n'))
    before = len(publishes(client, uri))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=project.as_uri(), type=types.FileChangeType.Changed)])
    )
    diags = await diagnostics_for(client, uri, after=before, where=lambda ds: len(ds) == 2)
    assert codes(diags) == ["placeholder", "unknown_instance"]
    assert len([m for m in client.messages if m.type == types.MessageType.Warning]) == 1

    # A new luaguard.toml is read and applied.
    config = root / "luaguard.toml"
    config.write_text('[rules]\nplaceholder = "off"\n')
    before = len(publishes(client, uri))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Created)])
    )
    diags = await diagnostics_for(client, uri, after=before, where=lambda ds: len(ds) == 1)
    assert codes(diags) == ["unknown_instance"]


async def test_no_project_file_one_info_message(vscode: LanguageClient):
    client = vscode
    root = FIXTURES / "noproject"
    await start(client, root)
    uri = open_doc(client, root / "loose.luau", "print('x')\n-- TODO y\n")
    diags = await diagnostics_for(client, uri, version=1)
    assert codes(diags) == ["placeholder"]
    change_doc(client, uri, 2, "print('x')\n")
    assert await diagnostics_for(client, uri, version=2) == []
    infos = [m for m in client.messages if m.type == types.MessageType.Info]
    assert len(infos) == 1 and "no Rojo project file" in infos[0].message
    assert len(client.messages) == 1
    (reports,) = client.progress_reports.values()
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].title == "luaguard: indexing"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and reports[-1].message == "no project file"


async def test_awkward_documents_do_not_crash(vscode: LanguageClient):
    client = vscode
    root = FIXTURES / "basic"
    await start(client, root)
    base = root / "src" / "server"

    # A 5 MB buffer (a long string, so the lint itself is quick) with problems at the end.
    filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do\n"
    huge = "local s = [==[\n" + filler * (5_000_000 // len(filler)) + "]==]\nlocal t = {1, 2\n-- TODO at the end\n"
    huge_uri = open_doc(client, base / "Huge.luau", huge)
    stats = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="luaguard.stats"))
    assert isinstance(stats["rules"], dict) and isinstance(stats["files"], int)

    binary_uri = open_doc(client, base / "Blob.luau", "\x00\x01\x02binary\x00garbage")
    crlf_uri = open_doc(client, base / "Crlf.luau", "local a = 1\r\n-- TODO crlf\r\nlocal b = (a\r\n")
    bom_uri = open_doc(client, base / "Bom.luau", "\ufefflocal x = 1 -- TODO bom\n")
    ff_uri = open_doc(client, base / "FormFeed.luau", "local a = '\x0c\u2028'\nlocal b = (1\n")
    other_uri = open_doc(client, base / "notes.txt", "-- TODO not luau", language="plaintext")

    diags = await diagnostics_for(client, huge_uri, version=1, timeout=20)
    last = huge.count("\n") - 1
    assert [(d.code, d.range.start.line) for d in diags] == [("unbalanced_bracket", last - 1), ("placeholder", last)]

    diags = await diagnostics_for(client, binary_uri, version=1)
    assert codes(diags) == ["unreadable_file"] and "binary" in diags[0].message

    diags = await diagnostics_for(client, crlf_uri, version=1)
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in diags] == [
        ("placeholder", 1, 3, 12),
        ("unbalanced_bracket", 2, 10, 11),
    ]
    # An incremental edit in a CRLF document: close the bracket.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=crlf_uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=2, character=12), end=types.Position(line=2, character=12)),
                    text=")",
                )
            ],
        )
    )
    diags = await diagnostics_for(client, crlf_uri, version=2)
    assert codes(diags) == ["placeholder"]

    # Form feed and U+2028 are not line breaks for the LSP: an edit on the next line lands right.
    assert codes(await diagnostics_for(client, ff_uri, version=1)) == ["unbalanced_bracket"]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=ff_uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=1, character=12), end=types.Position(line=1, character=12)),
                    text=")",
                )
            ],
        )
    )
    assert await diagnostics_for(client, ff_uri, version=2) == []

    diags = await diagnostics_for(client, bom_uri, version=1)
    assert [(d.code, d.range.start.character) for d in diags] == [("placeholder", 16)]  # the BOM is column 0; "TODO" at 16

    await asyncio.sleep(0.2)
    assert not publishes(client, other_uri)
    assert not [m for m in client.messages if m.type == types.MessageType.Error]


async def test_failing_check_still_publishes_the_rest(faulty: LanguageClient):
    client = faulty
    await start(client, FIXTURES / "basic")
    uri = open_doc(client, MAIN, "-- TODO never reported\nlocal t = {1, 2\n")
    diags = await diagnostics_for(client, uri, version=1)
    assert codes(diags) == ["unbalanced_bracket"]
    errors = await wait_for(lambda: [m for m in client.log_messages if m.type == types.MessageType.Error], what="an error log")
    assert any("placeholder check exploded" in m.message for m in errors)
    # Still answering, and still linting later edits.
    change_doc(client, uri, 2, "local t = {1, 2}\n")
    assert await diagnostics_for(client, uri, version=2) == []
