"""Unit tests of the language server's pure parts: conversions, debouncing, the worker,
suppression edits, settings layering and file classification."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from lsprotocol import types

from luaguard.config import Settings
from luaguard.engine import Engine
from luaguard.findings import Finding, Fix, Position, Range, Severity
from luaguard.lsp.code_actions import suppression_edit, wants_quickfix
from luaguard.lsp.configuration import LspSettings, merge_settings, split_lsp_settings, strip_nulls
from luaguard.lsp.convert import (
    PositionEncoder,
    finding_to_diagnostic,
    findings_to_diagnostics,
    fix_from_data,
    prepare_text,
    rule_of,
)
from luaguard.lsp.debounce import Debouncer
from luaguard.lsp.diagnostics import is_luau_document
from luaguard.lsp.host import EngineHost, build_engine, lint_document
from luaguard.lsp.watched_files import classify
from luaguard.lsp.worker import Worker
from luaguard.text import LineIndex
from luaguard.workspace import ProjectSettings, find_project_root, has_project_file, read_project_settings

FIXTURES = Path(__file__).parent / "fixtures" / "lsp"


def rng(l1: int, c1: int, l2: int, c2: int) -> Range:
    return Range(Position(l1, c1), Position(l2, c2))


# -- positions ------------------------------------------------------------------------
EMOJI_LINE = "local s = '\U0001F600' wait(1)"  # wait: index 14, UTF-16 column 15


@pytest.mark.parametrize(
    ("encoding", "column"),
    [("utf-16", 15), ("utf-8", 17), ("utf-32", 14), (None, 15)],
)
def test_position_encoder_columns(encoding, column):
    text = "print(1)\n" + EMOJI_LINE + "\n"
    lines = LineIndex(text)
    utf16 = lines.position(text.index("wait"))
    assert utf16 == Position(1, 15)
    enc = PositionEncoder(text, encoding)
    pos = enc.position(utf16)
    assert (pos.line, pos.character) == (1, column)
    assert enc.offset(pos) == text.index("wait")  # and back


def test_position_encoder_line_end_and_clamping():
    text = "a = 'é'\r\nb\n"
    enc = PositionEncoder(text, "utf-8")
    assert enc.line_end(0) == types.Position(line=0, character=8)  # é is 2 bytes; CRLF not counted
    assert enc.line_end(99) == types.Position(line=2, character=0)
    assert enc.offset(types.Position(line=0, character=999)) == len("a = 'é'")
    assert enc.offset(types.Position(line=50, character=0)) == len(text)


def test_prepare_text_keeps_offsets():
    assert prepare_text("\ufefflocal x") == " local x"
    bad = "a\ud800b"
    out = prepare_text(bad)
    assert out == "a\ufffdb" and len(out) == len(bad)
    out.encode("utf-8")  # valid now
    assert prepare_text("plain") == "plain"


# -- Finding -> Diagnostic ------------------------------------------------------------
def test_finding_to_diagnostic_with_fix():
    text = "x = game.Workspace.Baseplat\n"
    f = Finding(
        "unknown_instance", Severity.ERROR, rng(0, 19, 0, 27), "'Baseplat' ... Did you mean 'Baseplate'?",
        suggestions=("Baseplate", "Base"), fix=Fix(rng(0, 19, 0, 27), "Baseplate", "Replace 'Baseplat' with 'Baseplate'"),
    )
    d = finding_to_diagnostic(f, PositionEncoder(text), version=7)
    assert d.code == "unknown_instance" and d.source == "luaguard"
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.message == f.message
    assert (d.range.start.character, d.range.end.character) == (19, 27)
    assert d.data == {
        "rule": "unknown_instance",
        "suggestions": ["Baseplate", "Base"],
        "fix": {
            "range": {"start": {"line": 0, "character": 19}, "end": {"line": 0, "character": 27}},
            "newText": "Baseplate",
            "title": "Replace 'Baseplat' with 'Baseplate'",
            "safe": False,
        },
        "version": 7,
    }
    assert fix_from_data(d.data) == (d.range, "Baseplate", "Replace 'Baseplat' with 'Baseplate'")
    assert rule_of(d) == "unknown_instance"


@pytest.mark.parametrize("severity", list(Severity))
def test_severity_maps_to_lsp(severity):
    f = Finding("placeholder", severity, rng(0, 0, 0, 1), "m")
    d = finding_to_diagnostic(f, PositionEncoder("x"))
    assert int(d.severity) == int(severity)
    assert d.data["fix"] is None


def test_fix_range_follows_position_encoding():
    text = "local e = '\U0001F600'.Nme\n"
    col = LineIndex(text).position(text.index("Nme")).character  # UTF-16
    f = Finding("x", Severity.WARNING, rng(0, col, 0, col + 3), "m", fix=Fix(rng(0, col, 0, col + 3), "Name"))
    d = finding_to_diagnostic(f, PositionEncoder(text, "utf-8"))
    byte_col = len(text[: text.index("Nme")].encode())
    assert d.range.start.character == byte_col == col + 2
    assert d.data["fix"]["range"]["start"]["character"] == byte_col
    assert d.data["fix"]["title"] == "Replace with 'Name'"


def test_findings_over_the_limit_keep_the_most_severe():
    findings = [Finding("placeholder", Severity.WARNING, rng(i, 0, i, 1), f"w{i}") for i in range(20)]
    findings.append(Finding("syntax_error", Severity.ERROR, rng(30, 0, 30, 1), "e"))
    out = findings_to_diagnostics(findings, PositionEncoder("x\n" * 40), limit=5)
    assert len(out) == 5
    assert out[-1].code == "too_many_problems" and "17 more" in out[-1].message
    kept = out[:-1]
    assert "syntax_error" in [d.code for d in kept]
    lines = [d.range.start.line for d in kept]
    assert lines == sorted(lines)


@pytest.mark.parametrize(
    "data",
    [None, "x", {}, {"fix": None}, {"fix": {"newText": "a"}}, {"fix": {"range": {"start": {"line": 0}}, "newText": "a"}},
     {"fix": {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": True}}, "newText": "a"}},
     {"fix": {"range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "a"}},
     {"fix": {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": 3}}],
)
def test_fix_from_malformed_data_is_none(data):
    assert fix_from_data(data) is None


# -- suppression edits ----------------------------------------------------------------
def apply(text: str, edit) -> str:
    r, new = edit
    lines = LineIndex(text)
    a, b = lines.offset(r.start), lines.offset(r.end)
    return text[:a] + new + text[b:]


def rules_found(text: str) -> list[str]:
    return [f.rule for f in Engine(None).lint_text(text, "x.luau")]


@pytest.mark.parametrize(
    ("text", "line", "rule"),
    [
        ("local x = 1\n-- TODO later\nprint(x)\n", 1, "placeholder"),
        ("local t = {1, 2\nprint(t)\n", 0, "unbalanced_bracket"),
        ("local function f()\n\t...\nend\n", 1, "placeholder"),
        ("local x = 1 -- keep\nlocal t = (x\n", 1, "unbalanced_bracket"),
        ("local a = 1\r\n-- FIXME crlf\r\nprint(a)\r\n", 1, "placeholder"),
    ],
)
def test_suppression_edit_silences_the_rule(text, line, rule):
    assert rule in rules_found(text)
    edit = suppression_edit(text, line, rule)
    assert edit is not None
    fixed = apply(text, edit)
    assert f"luaguard: allow({rule})" in fixed
    assert rule not in rules_found(fixed)
    assert len(fixed.splitlines()) == len(text.splitlines())  # trailing comment, same lines


def test_suppression_edit_extends_an_existing_comment():
    text = "local t = {1, 2 -- luaguard: allow(placeholder)\n"
    edit = suppression_edit(text, 0, "unbalanced_bracket")
    fixed = apply(text, edit)
    assert fixed == "local t = {1, 2 -- luaguard: allow(placeholder, unbalanced_bracket)\n"
    assert "unbalanced_bracket" not in rules_found(fixed)
    assert suppression_edit(fixed, 0, "placeholder") is None  # already allowed


def test_suppression_edit_above_a_line_ending_in_a_long_string():
    text = "local a = 1\n\tlocal s = foo.Bar .. [[\nlong\n]]\n"
    r, new = suppression_edit(text, 1, "unknown_instance")
    assert r.start == r.end == Position(1, 0)
    assert new == "\t-- luaguard: allow(unknown_instance)\n"
    # A line that starts and ends inside the string cannot take a comment.
    text2 = "local s = [[\na\nb\n]]\n"
    assert suppression_edit(text2, 1, "placeholder") is None


def test_wants_quickfix():
    assert wants_quickfix(None) and wants_quickfix([])
    assert wants_quickfix([types.CodeActionKind.QuickFix])
    assert not wants_quickfix([types.CodeActionKind.SourceOrganizeImports])
    assert not wants_quickfix([types.CodeActionKind.Refactor])


# -- debouncer ------------------------------------------------------------------------
async def test_debouncer_coalesces_per_key():
    calls: list[str] = []
    d = Debouncer()
    for i in range(5):
        d.schedule("a", 0.05, lambda i=i: calls.append(f"a{i}"))
    d.schedule("b", 0.01, lambda: calls.append("b"))
    assert d.pending("a") and d.pending("b")
    await asyncio.sleep(0.12)
    assert calls == ["b", "a4"]
    assert not d.pending("a")


async def test_debouncer_cancel_and_async_callbacks():
    calls: list[str] = []
    errors: list[BaseException] = []
    d = Debouncer(on_error=errors.append)

    async def later():
        calls.append("async")

    async def broken():
        raise ValueError("boom")

    d.schedule("x", 0.01, lambda: calls.append("cancelled"))
    assert d.cancel("x") and not d.cancel("x")
    d.schedule("y", 0.0, later)
    d.schedule("z", 0.0, broken)
    await asyncio.sleep(0.05)
    assert calls == ["async"]
    assert len(errors) == 1 and str(errors[0]) == "boom"


# -- worker ---------------------------------------------------------------------------
async def test_worker_runs_in_order_on_one_thread_and_survives_errors():
    w = Worker("test")
    seen: list[tuple[int, str]] = []

    def job(i):
        seen.append((i, threading.current_thread().name))
        if i == 1:
            raise RuntimeError("job 1 fails")
        return i * 10

    futures = [w.submit(job, i) for i in range(4)]
    results = []
    for f in futures:
        try:
            results.append(await asyncio.wrap_future(f))
        except RuntimeError as exc:
            results.append(str(exc))
    assert results == [0, "job 1 fails", 20, 30]
    assert [i for i, _ in seen] == [0, 1, 2, 3]
    assert {name for _, name in seen} == {"test"}
    w.stop()


async def test_worker_priorities():
    w = Worker("prio")
    gate = threading.Event()
    order: list[str] = []
    first = w.submit(gate.wait)  # occupies the thread
    jobs = [
        w.submit(order.append, "big lint", priority=2),
        w.submit(order.append, "lint", priority=1),
        w.submit(order.append, "settings", priority=0),
        w.submit(order.append, "lint 2", priority=1),
    ]
    gate.set()
    await asyncio.wrap_future(first)
    for j in jobs:
        await asyncio.wrap_future(j)
    assert order == ["settings", "lint", "lint 2", "big lint"]
    w.stop()
    with pytest.raises(RuntimeError):
        w.submit(order.append, "after stop")


# -- settings -------------------------------------------------------------------------
def test_settings_layers_and_nulls():
    toml = ProjectSettings(Settings(placeholder_mode="patch", extra_globals=("Knit",)))
    settings, lsp, problems = merge_settings(
        toml,
        {"debounceMs": 40, "extraGlobals": ["Roact"]},
        {"luaguard": {"rules": {"placeholder": "off"}, "placeholderMode": None}},
    )
    assert problems == []
    assert settings.placeholder_mode == "patch"  # null in the client = not set
    assert settings.extra_globals == ("Roact",)  # initializationOptions override the file
    assert settings.rule("placeholder").enabled is False  # client config on top
    assert lsp == LspSettings(debounce_ms=40)


def test_invalid_settings_become_problems_and_defaults():
    toml = ProjectSettings(error="luaguard.toml:3:1: invalid TOML: bad")
    settings, lsp, problems = merge_settings(
        toml, None, {"placeholderMode": "sometimes", "debounceMs": -5, "rules": {"placeholder": "loud"}}
    )
    assert settings == Settings()
    assert lsp == LspSettings()
    assert any("luaguard.toml:3:1" in p for p in problems)
    assert any("placeholder_mode" in p and "'sometimes'" in p for p in problems)
    assert any("debounceMs" in p for p in problems)
    assert any("rules.placeholder" in p for p in problems)


def test_split_lsp_settings():
    rest, lsp, problems = split_lsp_settings({"luaguard": {"debounce_ms": 0, "rules": {}}}, "s", LspSettings())
    assert rest == {"rules": {}} and lsp.debounce_ms == 0 and problems == []
    assert strip_nulls({"a": None, "b": {"c": None, "d": 1}}) == {"b": {"d": 1}}


def test_read_project_settings_never_raises(tmp_path: Path):
    assert read_project_settings(None).settings == Settings()
    (tmp_path / "luaguard.toml").write_text("placeholder_mode = \n")
    loaded = read_project_settings(tmp_path)
    assert loaded.error and "luaguard.toml:1" in loaded.error
    assert loaded.settings == Settings()
    (tmp_path / "luaguard.toml").write_text('placeholder_mode = "patch"\nbogus = 1\n')
    loaded = read_project_settings(tmp_path)
    assert loaded.error is None and loaded.settings.placeholder_mode == "patch"
    assert [p.key for p in loaded.problems] == ["bogus"]


def test_project_root_discovery(tmp_path: Path):
    (tmp_path / "game.project.jsonc").write_text("{}")
    deep = tmp_path / "src" / "a"
    deep.mkdir(parents=True)
    assert find_project_root(deep) == tmp_path.resolve()
    assert has_project_file(tmp_path, Settings())
    assert not has_project_file(deep, Settings())
    assert has_project_file(deep, Settings(sourcemap_file="sm.json"))


# -- documents and files --------------------------------------------------------------
def test_is_luau_document():
    assert is_luau_document("file:///a/b.txt", "luau")
    assert is_luau_document("file:///a/b.LUA", "plaintext")
    assert is_luau_document("untitled:Untitled-1", "lua")
    assert not is_luau_document("file:///a/b.json", "json")


def test_classify_watched_files(tmp_path: Path):
    s = Settings(sourcemap_file="maps/custom.json")
    assert classify(tmp_path / "luaguard.toml", tmp_path, s) == "config"
    assert classify(tmp_path / "sub" / "x.project.json", tmp_path, s) == "project"
    assert classify(tmp_path / "maps" / "custom.json", tmp_path, s) == "project"
    assert classify(tmp_path / "src" / "A.luau", tmp_path, s) == "file"
    assert classify(Path("/elsewhere/A.luau"), tmp_path, s) == "outside"
    assert classify(tmp_path / "A.luau", None, s) == "outside"


# -- engine host ----------------------------------------------------------------------
def test_lint_document_survives_a_broken_check():
    engine = Engine(None)

    class Broken:
        rules = {"placeholder": Severity.ERROR}

        def check(self, ctx):
            raise KeyError("oops")

    engine.checks = [c for c in engine.checks if "placeholder" not in c.rules] + [Broken()]
    findings, errors = lint_document(engine, "-- TODO x\nlocal t = {1\n", None)
    assert [f.rule for f in findings] == ["unbalanced_bracket"]
    assert errors and "KeyError" in errors[-1] and "Broken" in errors[-1]
    assert any(isinstance(c, Broken) for c in engine.checks)  # checks restored


def test_lint_document_binary_and_clean():
    engine = Engine(None)
    findings, errors = lint_document(engine, "\x00\x01garbage", None)
    assert [f.rule for f in findings] == ["unreadable_file"] and errors == []
    assert lint_document(engine, "print(1)\n", None) == ([], [])


def test_build_engine_outcomes(tmp_path: Path):
    none = build_engine(FIXTURES / "noproject", Settings())
    assert none.no_project and none.engine.root is None
    broken = build_engine(FIXTURES / "broken", Settings())
    assert broken.project_error and "default.project.json:5" in broken.project_error
    good = build_engine(FIXTURES / "basic", Settings())
    assert good.project_error is None and good.crash is None
    assert good.scripts == 3 and good.engine.project is not None
    reports: list[tuple[str, int]] = []
    build_engine(FIXTURES / "basic", Settings(), lambda m, p: reports.append((m, p)))
    assert [p for _, p in reports] == sorted(p for _, p in reports) and reports


async def test_engine_host_lint_swap_and_stats():
    host = EngineHost()
    host.root = (FIXTURES / "basic").resolve()
    path = host.root / "src" / "server" / "Main.server.luau"
    text = "local M = require(script.Parent.Combatt)\n"
    before = await host.lint(path, text, "utf-16", 1)
    assert [d.code for d in before.diagnostics] == []  # no index yet: no project checks
    built = await host.build(Settings())
    await host.swap(built.engine)
    after = await host.lint(path, text, "utf-16", 2)
    assert [d.code for d in after.diagnostics] == ["unknown_instance"]
    assert after.diagnostics[0].data["version"] == 2
    assert await host.lint(path, text, "utf-16", 3, lambda: True) is None  # stale: skipped
    stats = host.stats()
    assert stats == {"rules": {"unknown_instance": 1}, "files": 1}
    # the same version linted and published again counts once; a new version replaces it
    await host.lint(path, text, "utf-16", 2)
    await host.lint(path, text, "utf-16", 2)
    assert host.stats() == {"rules": {"unknown_instance": 1}, "files": 1}
    await host.lint(path, text + "local N = require(script.Parent.Nope)\n", "utf-16", 4)
    assert host.stats()["rules"] == {"unknown_instance": 3}  # 1 of version 2, kept, + 2 of version 4
    host.stop()


# -- documents ------------------------------------------------------------------------
def test_lsp_lines_break_only_at_lsp_line_breaks():
    from luaguard.lsp.documents import lsp_lines

    assert lsp_lines("a\rb\r\nc\nd") == ("a\r", "b\r\n", "c\n", "d")
    assert lsp_lines("s = '\x0c\u2028\x85'\nx\n") == ("s = '\x0c\u2028\x85'\n", "x\n")
    assert lsp_lines("") == ()
    text = "a\x0bb\u2029c\r\n\r\nend"
    assert "".join(lsp_lines(text)) == text
    assert len(lsp_lines(text)) == LineIndex(text).line_count


def test_incremental_edit_below_a_form_feed():
    from luaguard.lsp.documents import LspTextDocument

    doc = LspTextDocument("file:///x.luau", "local a = '\x0c'\nlocal b = (1\n")
    edit = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=1, character=12), end=types.Position(line=1, character=12)), text=")"
    )
    doc.apply_change(edit)
    assert doc.source == "local a = '\x0c'\nlocal b = (1)\n"


def test_build_engine_reports_an_indexer_crash(monkeypatch):
    import luaguard.project.index as index

    def explode(*args, **kwargs):
        raise ZeroDivisionError("indexer bug")

    monkeypatch.setattr(index, "load_project", explode)
    result = build_engine(FIXTURES / "basic", Settings())
    assert result.crash and "ZeroDivisionError: indexer bug" in result.crash
    assert result.engine.lint_text("-- TODO\n", None)[0].rule == "placeholder"  # still usable


# -- heap policy ---------------------------------------------------------------------------


def test_build_long_lived_pauses_and_restores_the_collector():
    import gc

    from luaguard.lsp.heap import build_long_lived

    try:
        assert gc.isenabled()
        assert build_long_lived(gc.isenabled) is False  # paused during the build
        assert gc.isenabled()
        gc.disable()
        build_long_lived(lambda: None)
        assert not gc.isenabled()  # disabled before: stays disabled
    finally:
        gc.enable()
        gc.unfreeze()


def test_index_built_paused_and_frozen_then_settle_frees_the_replaced_index(tmp_path):
    import gc
    import weakref

    from luaguard.lsp.heap import build_long_lived, settle_heap

    class Node:
        pass

    seen: list[bool] = []
    real = Engine.reload_project

    def spy(self):
        seen.append(gc.isenabled())
        return real(self)

    (tmp_path / "default.project.json").write_text('{"name": "p", "tree": {"$className": "DataModel"}}')
    # an old index: a cycle, dropped while the new one is built
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    Engine.reload_project = spy
    try:
        result = build_long_lived(build_engine, tmp_path, Settings())
        assert seen == [False] and gc.isenabled() and result.engine.project is not None
        assert gc.get_freeze_count() > 0  # what the build (and everything before it) made
        del a, b
        gc.collect()
        assert gone() is not None  # frozen: no collection reaches the dropped cycle
        settle_heap()
        assert gone() is None  # unfrozen, collected
        assert gc.get_freeze_count() > 0  # what survives is frozen again
    finally:
        Engine.reload_project = real
        gc.unfreeze()


def test_build_long_lived_restores_the_collector_when_the_build_fails():
    import gc

    from luaguard.lsp.heap import build_long_lived

    def boom():
        raise ValueError("bad project")

    try:
        with pytest.raises(ValueError):
            build_long_lived(boom)
        assert gc.isenabled()
    finally:
        gc.unfreeze()
