"""introduced_findings: what a change added, judged by a line-insensitive key."""

from luaguard.engine import Engine
from luaguard.introduced import changed_lines, finding_key, introduced_findings, normalise_message


def _lint(text: str):
    return Engine(None).lint_text(text, None, mode="patch", count=False)


OLD = "local x = 1\n-- TODO(bob): migrate to ProfileStore\nprint(x)\n"


def test_messages_lose_line_numbers():
    assert normalise_message("Expected 'end' (to close 'function' at line 12), got <eof>") == \
        "Expected 'end' (to close 'function' at line #), got <eof>"
    assert normalise_message("Line 4: bad") == "Line #: bad"
    # an opener on the error's own line is named by its column, one above by its line
    assert normalise_message("Expected 'end' (to close 'function' at column 8), got <eof>") == \
        normalise_message("Expected 'end' (to close 'function' at line 24), got <eof>")


def test_text_after_a_one_line_unclosed_function_adds_nothing():
    old = "local x = 1\nlocal function f() return x"
    new = old + "\n-- reviewed\n"
    assert introduced_findings(_lint(old), old, _lint(new), new) == []


def test_existing_todo_is_not_introduced_when_lines_move():
    new = "local y = 2\nlocal z = 3\n" + OLD + "print(y + z)\n"
    old_f, new_f = _lint(OLD), _lint(new)
    assert any(f.rule == "placeholder" for f in new_f)
    assert introduced_findings(old_f, OLD, new_f, new) == []


def test_a_second_todo_is_introduced_on_its_own_line():
    new = OLD + "-- TODO(bob): migrate to ProfileStore\n"
    out = introduced_findings(_lint(OLD), OLD, _lint(new), new)
    assert [(f.rule, f.range.start.line) for f in out] == [("placeholder", 3)]


def test_new_file_is_judged_whole():
    new_f = _lint(OLD)
    assert introduced_findings([], None, new_f, OLD) == new_f


def test_a_new_syntax_error_is_introduced():
    new = OLD + "end\n"
    out = introduced_findings(_lint(OLD), OLD, _lint(new), new)
    assert out and all(f.range.start.line == 3 for f in out)


def test_key_uses_the_covered_text():
    [f] = [f for f in _lint("-- TODO: x\n") if f.rule == "placeholder"]
    assert finding_key(f, "-- TODO: x\n") == ("placeholder", "TODO comment in a patch: 'TODO: x'", "TODO: x")
    # the same rule and message on other words is another finding
    a, b = "print(game.ReplicatedStorag)\n", "print(game.ReplicatedStorag)\nprint(game.ServerStorag)\n"
    assert len(introduced_findings(_lint(a), a, _lint(b), b)) == 1


def test_changed_lines():
    text = "local a = 1\nprint(a)\n"
    assert changed_lines(text, text) == set()
    assert changed_lines(text, "x()\n" + text) == {0}
    assert changed_lines(text, "local a = 2\nprint(a)\n") == {0}
