"""Inline suppressions: luaguard's own, selene's and Luau's forms, and the findings about
luaguard's own comments (unknown_suppression, unused_suppression) with their fixes."""

from __future__ import annotations

from pathlib import Path

from luaguard.config import Settings, RuleSettings, settings_from_mapping
from luaguard.engine import Engine
from luaguard.suppressions import LUAU_LINTS, SELENE_LINTS


def rules(src: str, settings: Settings | None = None) -> list[tuple[int, str]]:
    return [(f.range.start.line, f.rule) for f in Engine(settings=settings).lint_text(src, "x.luau")]


def test_selene_allow_covers_the_whole_next_statement():
    src = ("-- selene: allow(undefined_variable)\n"
           "local function f()\n"
           "\treturn bar + baz\n"
           "end\n"
           "local c = qux\n")
    assert rules(src) == [(4, "undefined_variable")]


def test_selene_trailing_comment_silences_nothing_as_in_selene():
    assert rules("local c = qux -- selene: allow(undefined_variable)\n") == [(0, "undefined_variable")]


def test_selene_global_filter_only_before_code_and_spaces_ignored():
    assert rules("--# selene : allow( undefined_variable )\nlocal a = foo\nlocal b = bar\n") == []
    late = "local a = foo\n--# selene: allow(undefined_variable)\nlocal b = bar\n"
    assert [r for _, r in rules(late)] == ["undefined_variable", "undefined_variable"]


def test_selene_deprecated_maps_to_deprecated_api_and_other_lints_do_nothing():
    assert SELENE_LINTS["deprecated"] == ("deprecated_api",)
    assert rules("-- selene: allow(deprecated)\nwait(1)\n") == []
    assert [r for _, r in rules("-- selene: allow(shadowing)\nwait(1)\n")] == ["deprecated_api"]
    # a multi-line block comment holds one filter per line
    assert rules("--[[\n selene: allow(deprecated)\n]]\nwait(1)\n") == []


def test_luau_nolint_in_the_header_only():
    assert LUAU_LINTS["UnknownGlobal"] == ("undefined_variable",)
    assert rules("--!nolint UnknownGlobal\nlocal a = foo\n") == []
    assert rules("--!strict\n--!nolint\nlocal a = foo\nwait(1)\n") == []
    # another Luau lint, or a directive after the first token: Luau ignores it, so does luaguard
    assert [r for _, r in rules("--!nolint LocalUnused\nlocal a = foo\n")] == ["undefined_variable"]
    assert [r for _, r in rules("local a = foo\n--!nolint UnknownGlobal\n")] == ["undefined_variable"]
    assert [r for _, r in rules("--!nolintUnknownGlobal\nlocal a = foo\n")] == ["undefined_variable"]


def test_unknown_suppression_with_a_fix_to_the_rule_meant():
    found = Engine().lint_text("local a = foo -- luaguard: allow(undefined-variable)\n", "x.luau")
    assert [f.rule for f in found] == ["undefined_variable", "unknown_suppression"]
    bad = found[1]
    assert "did you mean 'undefined_variable'" in bad.message
    assert bad.fix is not None and bad.fix.safe and bad.fix.new_text == "undefined_variable"
    assert (bad.fix.range.start.character, bad.fix.range.end.character) == (33, 51)


def test_unused_suppression_and_its_removal():
    src = "print(1) -- luaguard: allow(undefined_variable)\nlocal a = foo -- luaguard: allow(undefined_variable)\n"
    found = Engine().lint_text(src, "x.luau")
    assert [(f.range.start.line, f.rule) for f in found] == [(0, "unused_suppression")]
    fix = found[0].fix
    assert fix.safe and fix.new_text == "" and (fix.range.start.character, fix.range.end.character) == (8, 47)
    # one name of two unused: only that name (and its comma) goes
    found = Engine().lint_text("-- luaguard: allow(undefined_variable, placeholder)\nlocal a = foo\n", "x.luau")
    assert [f.rule for f in found] == ["unused_suppression"]
    assert "'placeholder'" in found[0].message
    assert (found[0].fix.range.start.character, found[0].fix.range.end.character) == (37, 50)
    # every name unused, the comment alone on its line: the line goes
    found = Engine().lint_text("-- luaguard: allow(placeholder)\nprint(1)\n", "x.luau")
    assert found[0].fix.range.start.line == 0 and found[0].fix.range.end.line == 1


def test_unused_is_not_reported_for_a_rule_that_did_not_run_or_is_only_unselected():
    src = "print(1) -- luaguard: allow(undefined_variable)\n"
    off = Settings(rules={"undefined_variable": RuleSettings(enabled=False)})
    assert rules(src, off) == []
    # the finding exists but --ignore hides it: the comment still silences it (used)
    settings, _ = settings_from_mapping({"ignore": ["undefined_variable"]}, "t")
    assert rules("local a = foo -- luaguard: allow(undefined_variable)\n", settings) == []
    # and the rule itself can be turned off
    quiet = Settings(rules={"unused_suppression": RuleSettings(enabled=False)})
    assert rules(src, quiet) == []


def test_cli_fix_removes_unused_suppression(tmp_path: Path):
    from luaguard.cli import main

    f = tmp_path / "a.luau"
    f.write_text("print(1) -- luaguard: allow(undefined_variable)\n-- luaguard: allow(placeholder)\nprint(2)\n")
    main(["check", "--fix", str(f)])
    assert f.read_text() == "print(1)\nprint(2)\n"


def test_config_rule_key_that_names_no_rule_and_severity_message(tmp_path: Path):
    from luaguard.workspace import read_project_settings

    (tmp_path / "luaguard.toml").write_text(
        '[rules]\nplaceholder = "warning"\nundefined_variabel = "off"\nunknown_class = "loud"\n'
        'unknown_member = { severity = "off" }\n')
    result = read_project_settings(tmp_path)
    text = [str(p) for p in result.problems]
    assert any(":3: rules.undefined_variabel:" in t and "did you mean 'undefined_variable'" in t for t in text), text
    assert any(":4: rules.unknown_class:" in t and "expected one of off, error" in t for t in text), text
    assert "undefined_variabel" not in result.settings.rules
    assert result.settings.rule("unknown_member").enabled is False


def test_a_directive_appended_to_a_todo_comment_silences_that_todo():
    # the language server's "Suppress placeholder on this line" appends to the comment
    src = "local x = 1 -- TODO later -- luaguard: allow(placeholder)\nlocal y = 1 -- TODO two\n"
    assert rules(src) == [(1, "placeholder")]
