"""Human output of ``luaguard check``: the source line and caret, the fix as a one-line diff,
the summary by rule, colour (``--color``, ``NO_COLOR``) and the progress bar on a terminal."""

from __future__ import annotations

import io
import os
import pty
import sys
from pathlib import Path

import pytest

from luaguard.cli import main
from luaguard.console import Printer, SourceLines, color_wanted, finding_lines, rule_summary, utf16_index
from luaguard.findings import Finding, Fix, Position, Range, Severity

ROOT = Path(__file__).resolve().parent.parent


def finding(line: int, start: int, end: int, *, end_line: int | None = None, fix: Fix | None = None,
            rule: str = "unknown_instance", severity: Severity = Severity.ERROR) -> Finding:
    r = Range(Position(line, start), Position(line if end_line is None else end_line, end))
    return Finding(rule, severity, r, "msg", fix=fix, file="a.luau")


def rows(f: Finding, text: str) -> list[str]:
    return [t for t, _ in finding_lines(f, text)]


def test_source_line_caret_and_fix_diff():
    text = "local a = 1\nlocal b = game.Workspace.Partt\n"
    fix = Fix(Range(Position(1, 25), Position(1, 30)), "Part", "Replace 'Partt' with 'Part'", safe=True)
    assert rows(finding(1, 25, 30, fix=fix), text) == [
        "a.luau:2:26: error[unknown_instance] msg",
        "    2 | local b = game.Workspace.Partt",
        "      |                          ^^^^^",
        "    fix: Replace 'Partt' with 'Part'",
        "      - local b = game.Workspace.Partt",
        "      + local b = game.Workspace.Part",
    ]


def test_tabs_wide_characters_and_utf16_columns():
    # a tab is 4 columns; 'é' one cell; '界' two cells; '😀' two UTF-16 units and two cells
    text = "\tlocal s = '界😀é' .. Foo\n"
    col = len("\tlocal s = '界😀é' .. ".encode("utf-16-le")) // 2
    got = rows(finding(0, col, col + 3), text)
    assert got[1] == "    1 |     local s = '界😀é' .. Foo"
    assert got[2] == "      |" + " " * (1 + 4 + len("local s = '") + 2 + 2 + 1 + len("' .. ")) + "^^^"
    assert utf16_index("😀x", 2) == 1 and utf16_index("abc", 10) == 3


def test_control_characters_never_reach_the_terminal():
    text = "local x = '\x1b[31mred\x1b[0m' .. Bad\n"
    at = text.index("Bad")
    got = rows(finding(0, at, at + 3), text)
    assert "\x1b" not in "".join(got)
    assert got[1] == "    1 | local x = '?[31mred?[0m' .. Bad"
    assert got[2].index("^") == got[1].index("Bad")


def test_long_lines_are_cut_around_the_range_and_empty_ranges_get_one_caret():
    text = "x = {" + "1, " * 200 + "Bad, " + "2, " * 200 + "}\n"
    at = text.index("Bad")
    got = rows(finding(0, at, at + 3), text)
    assert got[1].startswith("    1 | …") and got[1].endswith("…") and len(got[1]) < 200
    assert got[2].index("^^^") == got[1].index("Bad")
    got = rows(finding(0, 3, 3), "end)\n")
    assert got[2] == "      |    ^"
    # a range over several lines: the first line, to its end; a fix over lines: no diff
    text = "function f()\n  return 1\n"
    fix = Fix(Range(Position(0, 0), Position(1, 3)), "x", "multi-line", safe=False)
    got = rows(finding(0, 0, 3, end_line=1, fix=fix, rule="unclosed_block"), text)
    assert got[2] == "      | ^^^^^^^^^^^^" and got[-1] == "    fix (unsafe): multi-line"
    # no text (an unreadable file, a problem of a diff): the old two-part output
    assert rows(finding(0, 0, 1), None) == ["a.luau:1:1: error[unknown_instance] msg"]


def test_rule_summary():
    fs = [finding(0, 0, 1, fix=Fix(Range(Position(0, 0), Position(0, 1)), "y", safe=True))] * 3
    fs += [finding(0, 0, 1, rule="deprecated_api", severity=Severity.WARNING,
                   fix=Fix(Range(Position(0, 0), Position(0, 1)), "y", safe=False))] * 4
    assert rule_summary(fs) == [
        "Findings by rule:",
        "       3  unknown_instance  error    3 fixable with --fix",
        "       4  deprecated_api    warning  4 with --fix --unsafe-fixes",
    ]
    assert rule_summary(fs[:3] * 3) == []  # one rule: the closing line says it
    assert rule_summary(fs[2:6]) == []     # fewer than 5 findings


def test_color_choice(monkeypatch):
    tty = io.StringIO()
    tty.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert color_wanted("auto", tty) and not color_wanted("auto", io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not color_wanted("auto", tty) and color_wanted("always", tty)
    monkeypatch.setenv("NO_COLOR", "")
    assert color_wanted("auto", tty)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert color_wanted("auto", io.StringIO()) and not color_wanted("never", tty)


def test_color_always_and_never_on_the_command_line(capsys):
    args = ["check", str(ROOT / "samples/patches/combat_bad_path.luau"), "--project", str(ROOT / "samples/place")]
    main([*args, "--color", "never"])
    plain = capsys.readouterr().out
    assert "\x1b[" not in plain and "^^^^^^^" in plain
    main([*args, "--color", "always"])
    colored = capsys.readouterr().out
    assert "\x1b[1;31merror\x1b[0m" in colored and "\x1b[32m      + local Hitbox" in colored
    import re

    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain  # the same text, coloured


def test_printer_writes_plain_text_without_rich():
    out = io.StringIO()
    Printer(out, color=False).finding(finding(0, 0, 1), "x\n", SourceLines())
    assert out.getvalue() == "a.luau:1:1: error[unknown_instance] msg\n    1 | x\n      | ^\n"


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a pseudo-terminal")
def test_on_a_terminal_colour_and_progress_bar():
    """In a real (pseudo-)terminal: colour by default and, once the run is slow enough (the
    threshold set to 0 here), rich's progress bar on stderr, erased at the end."""
    code = ("import luaguard.console as C; C.PROGRESS_AFTER_S = 0; from luaguard.cli import main; "
            f"raise SystemExit(main(['check', {str(ROOT / 'samples/patches')!r}, '--project', "
            f"{str(ROOT / 'samples/place')!r}, '--patch']))")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execve(sys.executable, [sys.executable, "-c", code], env)
    chunks = []
    while True:
        try:
            b = os.read(fd, 65536)
        except OSError:
            break
        if not b:
            break
        chunks.append(b)
    _, status = os.waitpid(pid, 0)
    out = b"".join(chunks).decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 1
    assert "checking" in out and "/43" in out  # the bar: 43 files
    assert "\x1b[2K" in out                     # erased
    assert "\x1b[1;31merror\x1b[0m" in out      # colour on a terminal
    assert "Found 29 errors, 7 warnings in 35 of 43 files." in out
