"""Bad input never crashes: binary, huge, invalid UTF-8, CRLF, BOM, broken projects."""

from __future__ import annotations

from pathlib import Path

from luaguard.engine import Engine

PLACE = Path(__file__).resolve().parent.parent / "samples" / "place"


def test_binary_file_is_one_finding(tmp_path):
    f = tmp_path / "model.luau"
    f.write_bytes(b"\x00\x01\x02binary\xff" * 100)
    [finding] = Engine().lint_file(f)
    assert finding.rule == "unreadable_file" and "binary" in finding.message


def test_five_megabyte_file(tmp_path):
    line = "local value = game:GetService('ReplicatedStorage') -- padding padding\n"
    f = tmp_path / "big.luau"
    f.write_text(line * (5 * 1024 * 1024 // len(line) + 1))
    assert f.stat().st_size > 5 * 1024 * 1024
    assert Engine().lint_file(f) == []


def test_invalid_utf8_reports_line_and_still_lints(tmp_path):
    f = tmp_path / "bad.luau"
    f.write_bytes(b"local a = 1\nlocal s = '\xff\xfe'\nprint(a\n")
    found = Engine().lint_file(f)
    rules = [x.rule for x in found]
    assert "invalid_utf8" in rules and "unbalanced_bracket" in rules
    bad = next(x for x in found if x.rule == "invalid_utf8")
    assert "line 2" in bad.message and bad.range.start.line == 1


def test_crlf_and_bom_positions(tmp_path):
    f = tmp_path / "crlf.luau"
    f.write_bytes(b"\xef\xbb\xbflocal x = 1\r\n-- TODO: y\r\nprint(x\r\n")
    found = Engine().lint_file(f)
    by_rule = {x.rule: x for x in found}
    assert by_rule["placeholder"].range.start.line == 1
    assert by_rule["unbalanced_bracket"].range.start.line == 2
    assert by_rule["unbalanced_bracket"].range.start.character == 5


def test_missing_and_malformed_project_files_do_not_crash(tmp_path):
    (tmp_path / "default.project.json").write_text("{ not json")
    engine = Engine(tmp_path)
    found = engine.lint_text("print(workspace.Foo)\n-- TODO x\n", tmp_path / "a.luau")
    assert engine.project is None and engine.project_error and "default.project.json" in engine.project_error
    assert [f.rule for f in found] == ["placeholder"]
    empty = Engine(tmp_path / "nope")
    assert empty.lint_text("print(1)", "a.luau") == []


def test_unreadable_path_is_a_finding(tmp_path):
    [f] = Engine().lint_file(tmp_path / "missing.luau")
    assert f.rule == "unreadable_file"


def test_hostile_nesting_through_every_check(tmp_path):
    import threading
    import time

    cases = [
        "x = " + "(" * 10000 + "1" + ")" * 10000,
        "local v = game" + ".Child" * 950,
        "local v = game" + ":FindFirstChild('a')" * 400,
        "f = " + "function() " * 2000 + "end " * 2000,
        "local t = " + "{" * 3000 + "}" * 3000,
        "print(" + "'x'.." * 5000 + "'y')",
    ]
    engine = Engine(PLACE)
    results: list = []

    def run():  # in a worker thread, as the language server runs checks
        for src in cases:
            t0 = time.perf_counter()
            found = engine.lint_text(src, PLACE / "src/server/Bootstrap.server.luau")
            results.append((time.perf_counter() - t0, [f.rule for f in found]))

    th = threading.Thread(target=run)
    th.start()
    th.join(120)
    assert not th.is_alive()
    assert len(results) == len(cases)
    for elapsed, rules in results:
        assert elapsed < 20
        assert "internal_error" not in rules


def test_analysis_leaves_no_reference_cycles():
    """Tokens and the tree are freed by reference counting: the garbage collector has
    nothing to find after a lint (so big files do not trigger repeated collections)."""
    import gc

    engine = Engine(PLACE)
    files = sorted(PLACE.rglob("*.luau"))
    text = "".join("do\n" + f.read_text(encoding="utf-8") + "\nend\n" for f in files[:8])
    engine.lint_text(text, files[0])  # warm caches (index, runtime names)
    gc.collect()
    # a second warm-up: engines of earlier tests (in the same process) whose caches are
    # released lazily on a later access would otherwise be counted here
    engine.lint_text(text, files[0])
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        engine.lint_text(text, files[0])
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
