"""Applying fixes (luaguard.fixes) and ``luaguard check --fix``: safe and unsafe fixes as the
checks mark them, iteration until stable, files that do not parse left alone, atomic writes,
``--fix --diff`` next to ``--diff FILE``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from luaguard.cli import main
from luaguard.engine import Engine
from luaguard.files import write_atomic
from luaguard.findings import Finding, Fix, Position, Range, Severity
from luaguard.fixes import MAX_PASSES, SKIP_SYNTAX, apply_fixes, fix_text

PROJECT = {
    "name": "t",
    "tree": {
        "$className": "DataModel",
        "ReplicatedStorage": {"Shared": {"$path": "src/shared"}},
        "ServerScriptService": {"Server": {"$path": "src/server"}},
    },
}

BAD = (
    'local Players = game:GetService("Playerz")\n'        # unknown_service: safe fix
    "local Hitbox = require(game.ReplicatedStorage.Sharde.Modulez.Hitbox)\n"  # Sharde, then Modulez
    "local p = Instance.new(\"Partt\")\n"                  # unknown_class: safe fix
    "local q = Instance.new(\"Part\")\n"
    "q.Sizee = Vector3.new(1, 1, 1)\n"                     # unknown_member: safe fix
    "wait(1)\n"                                             # deprecated_api: unsafe fix
)


def make_project(root: Path, main_text: str = BAD) -> Path:
    (root / "default.project.json").write_text(json.dumps(PROJECT))
    (root / "src" / "shared" / "Modules").mkdir(parents=True)
    (root / "src" / "server").mkdir(parents=True)
    (root / "src" / "shared" / "Modules" / "Hitbox.luau").write_text("return {}\n")
    main = root / "src" / "server" / "Main.server.luau"
    main.write_bytes(main_text.encode("utf-8"))
    return main


def test_checks_mark_safe_and_unsafe_fixes(tmp_path):
    main = make_project(tmp_path)
    found = {f.rule: f for f in Engine(tmp_path).lint_file(main)}
    assert found["unknown_service"].fix.safe
    assert found["unknown_class"].fix.safe
    assert found["unknown_member"].fix.safe
    assert not found["deprecated_api"].fix.safe  # task.wait behaves differently
    assert not found["likely_unknown_instance"].fix.safe  # ReplicatedStorage is open: may be created at run time
    assert found["unknown_service"].to_json()["fix"]["safe"] is True


def test_fix_iterates_until_stable(tmp_path):
    main = make_project(tmp_path, "local H = require(game.ReplicatedStorage.Shared.Modulez.Hitboxx)\n")
    engine = Engine(tmp_path)
    result = fix_text(engine, main.read_text(), main)
    # 'Hitboxx' can only be checked once 'Modulez' resolves: the second pass fixes it
    assert result.text == "local H = require(game.ReplicatedStorage.Shared.Modules.Hitbox)\n"
    assert [f.data["name"] for f in result.fixed] == ["Modulez", "Hitboxx"]
    assert result.passes == 3 and result.findings == []


def test_safe_only_by_default_unsafe_with_flag(tmp_path):
    main = make_project(tmp_path)
    engine = Engine(tmp_path)
    safe = fix_text(engine, BAD, main)
    assert safe.text.splitlines() == [
        'local Players = game:GetService("Players")',
        "local Hitbox = require(game.ReplicatedStorage.Sharde.Modulez.Hitbox)",
        'local p = Instance.new("Part")',
        'local q = Instance.new("Part")',
        "q.Size = Vector3.new(1, 1, 1)",
        "wait(1)",
    ]
    assert sorted(f.rule for f in safe.findings) == ["deprecated_api", "likely_unknown_instance"]
    unsafe = fix_text(engine, BAD, main, unsafe=True)
    assert unsafe.text.splitlines()[1] == "local Hitbox = require(game.ReplicatedStorage.Shared.Modules.Hitbox)"
    assert unsafe.text.splitlines()[5] == "task.wait(1)"
    assert unsafe.findings == []


def test_never_fixes_a_file_that_does_not_parse(tmp_path):
    text = BAD + "local t = {1, 2\n"
    main = make_project(tmp_path, text)
    result = fix_text(Engine(tmp_path), text, main)
    assert result.skipped == SKIP_SYNTAX and result.text == text and not result.fixed
    assert "unbalanced_bracket" in {f.rule for f in result.findings}


def test_syntax_error_blocks_fixes_even_when_ignored(tmp_path, monkeypatch, capsys):
    text = BAD + "local t = {1, 2\n"
    main = make_project(tmp_path, text)
    monkeypatch.chdir(tmp_path)
    code = main_cli(["check", "--fix", "--ignore", "syntax_error,unbalanced_bracket", str(main)])
    assert main.read_text() == text
    assert "not fixed: the file has a syntax error" in capsys.readouterr().err
    assert code == 1


def main_cli(argv):
    return main(argv)


def _finding(l0, c0, l1, c1, new, safe=True, rule="r"):
    rng = Range(Position(l0, c0), Position(l1, c1))
    return Finding(rule, Severity.ERROR, rng, "m", fix=Fix(rng, new, "", safe))


def test_apply_fixes_skips_overlaps_and_noops():
    text = "abcdef\nghij\n"
    fixes = [_finding(0, 1, 0, 3, "X"), _finding(0, 2, 0, 4, "Y"), _finding(1, 0, 1, 1, "g"), _finding(1, 1, 1, 2, "Z", safe=False)]
    new, applied = apply_fixes(text, fixes)
    assert new == "aXdef\nghij\n"  # the overlapping edit waits; 'g' -> 'g' is no change; the unsafe one is left
    assert len(applied) == 1
    new, applied = apply_fixes(text, fixes, unsafe=True)
    assert new == "aXdef\ngZij\n" and len(applied) == 2


def test_apply_fixes_utf16_columns():
    text = "local s = '\U0001F600' x = Baseplat\n"
    col = len("local s = '") + 2 + len("' x = ")  # the emoji is 2 UTF-16 units
    new, _ = apply_fixes(text, [_finding(0, col, 0, col + 8, "Baseplate")])
    assert new == "local s = '\U0001F600' x = Baseplate\n"


def test_fixes_undoing_each_other_stop(tmp_path):
    class Flip:
        rules = {"flip": Severity.ERROR}

        def check(self, ctx):
            name = "zz" if "zz" in ctx.text else "yy"
            i = ctx.text.index(name)
            return [ctx.finding("flip", Severity.ERROR, i, i + 2, "m", fix_text="yy" if name == "zz" else "zz", fix_safe=True)]

    engine = Engine(None)
    engine.checks = [Flip()]
    result = fix_text(engine, "local zz = 1\n", None)
    assert result.note == "fixes undo each other; left as they are"
    assert result.text == "local yy = 1\n"


def test_a_fix_that_would_break_the_syntax_is_dropped():
    class Breaker:
        rules = {"breaker": Severity.ERROR}

        def check(self, ctx):
            i = ctx.text.index("zz")
            return [ctx.finding("breaker", Severity.ERROR, i, i + 2, "m", fix_text="(", fix_safe=True)]

    engine = Engine(None)
    engine.checks = [Breaker()]
    result = fix_text(engine, "local zz = 1\n", None)
    assert result.note == "a fix would break the syntax; not applied"
    assert result.text == "local zz = 1\n" and not result.fixed


def test_pass_bound(tmp_path):
    class Count:
        rules = {"count": Severity.ERROR}

        def check(self, ctx):
            i = ctx.text.index("x")
            return [ctx.finding("count", Severity.ERROR, i, i + 1, "m", fix_text="xx", fix_safe=True)]

    engine = Engine(None)
    engine.checks = [Count()]
    result = fix_text(engine, "local x = 1\n", None)
    assert result.passes == MAX_PASSES and "stopped after" in result.note
    assert result.text.count("x") == MAX_PASSES


def test_write_atomic_keeps_mode_and_follows_links(tmp_path):
    target = tmp_path / "a.luau"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link.luau"
    link.symlink_to(target)
    write_atomic(link, b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.luau", "link.luau"]  # no temporary file left


def test_cli_fix_writes_and_reports_what_remains(tmp_path, monkeypatch, capsys):
    main_file = make_project(tmp_path, BAD.replace("\n", "\r\n"))
    main_file.write_bytes(b"\xef\xbb\xbf" + main_file.read_bytes())
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--fix"])
    out = capsys.readouterr().out
    data = main_file.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b'GetService("Players")\r\n' in data  # BOM and CRLF kept
    assert b"wait(1)" in data and b"task.wait" not in data
    assert "Fixed 3 problems in 1 file." in out
    assert "src/server/Main.server.luau:6:1: warning[deprecated_api]" in out
    assert "fix (unsafe): Replace 'wait' with 'task.wait'" in out
    assert code == 0  # only warnings remain


def test_cli_fix_diff_prints_and_writes_nothing(tmp_path, monkeypatch, capsys):
    main_file = make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--fix", "--diff", "--unsafe-fixes", "src/server/Main.server.luau"])
    captured = capsys.readouterr()
    assert main_file.read_text() == BAD
    assert captured.out.startswith("--- a/src/server/Main.server.luau\n+++ b/src/server/Main.server.luau\n")
    assert "+task.wait(1)\n" in captured.out and "-wait(1)\n" in captured.out
    assert "Would fix 6 problems in 1 file (0 would remain)." in captured.err
    assert code == 0
    # the path after --diff is a path to fix when --fix is given
    code = main(["check", "--fix", "--diff", "src/server/Main.server.luau"])
    assert '+local Players = game:GetService("Players")' in capsys.readouterr().out
    assert main_file.read_text() == BAD


def test_diff_without_fix_still_lints_a_diff(tmp_path, monkeypatch, capsys):
    make_project(tmp_path)
    (tmp_path / "change.diff").write_text(
        "--- a/src/shared/Modules/Hitbox.luau\n+++ b/src/shared/Modules/Hitbox.luau\n@@ -1 +1,2 @@\n"
        "+local S = game:GetService(\"Workspacee\")\n return {}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--diff", "change.diff"]) == 1
    assert "unknown_service" in capsys.readouterr().out
    assert main(["check", "--diff"]) == 2
    assert "--diff needs a FILE" in capsys.readouterr().err
    assert main(["check", "--unsafe-fixes", "src"]) == 2


def test_cli_fix_stdin_prints_the_fixed_text(tmp_path, monkeypatch, capsys):
    import io
    import sys

    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'local P = game:GetService("Playerz")\n')))
    code = main(["check", "-", "--fix", "--stdin-filename", "src/server/New.server.luau"])
    captured = capsys.readouterr()
    assert captured.out == 'local P = game:GetService("Players")\n'
    assert "No problems found in 1 file." in captured.err
    assert code == 0


@pytest.mark.parametrize("unsafe", [False, True])
def test_fixed_text_is_what_the_lsp_quick_fixes_give(tmp_path, unsafe):
    """One fix data: applying each diagnostic's code-action edit (Diagnostic.data) gives the
    text --fix gives in its first pass."""
    from luaguard.lsp.convert import PositionEncoder, finding_to_diagnostic, fix_from_data, fix_is_safe

    main_file = make_project(tmp_path)
    findings = Engine(tmp_path).lint_file(main_file)
    edits = []
    for f in findings:
        d = finding_to_diagnostic(f, PositionEncoder(BAD))
        fix = fix_from_data(d.data)
        if fix is not None and (unsafe or fix_is_safe(d.data)):
            rng, new, _ = fix
            edits.append(Finding("r", Severity.ERROR, Range(Position(rng.start.line, rng.start.character),
                                                             Position(rng.end.line, rng.end.character)), "m",
                                 fix=Fix(Range(Position(rng.start.line, rng.start.character),
                                               Position(rng.end.line, rng.end.character)), new, "", True)))
    via_lsp, _ = apply_fixes(BAD, edits)
    via_cli, _ = apply_fixes(BAD, findings, unsafe=unsafe)
    assert via_lsp == via_cli != BAD
