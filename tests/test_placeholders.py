"""Placeholder check: truncation markers always, TODO/FIXME by mode, varargs never."""

from __future__ import annotations

import pytest

from luaguard.engine import Engine
from luaguard.findings import Severity


def lint(src: str, mode: str = "editor"):
    return [f for f in Engine().lint_text(src, "x.luau", mode=mode) if f.rule == "placeholder"]


@pytest.mark.parametrize(
    "src",
    [
        "local x = 1\n-- ... rest of code\n",
        "local x = 1\n-- rest of the implementation here\n",
        "-- your code here\n",
        "-- implement this\n",
        "-- <placeholder>\n",
        "-- (existing code unchanged)\n",
        "-- same as before\n",
        "function f()\n  ...\nend\n",
        "local t = {\n  a = 1,\n  ...\n}\n",
        "if x then\n  ...\nend\n",
        "-- rest of the hitbox code here\n",
        "-- ... rest of implementation remains the same\n",
        "--[[ (rest of file unchanged) ]]\n",
        "local x = f() -- ... rest of code\n",  # after code on its line too
        "local x = f() -- rest of the implementation here\n",
        "local x = 1\n-- etc.\n",
        "-- keep existing handlers\n",
        "-- (leave the other methods as is)\n",
        # truncation markers keep their recall next to the explanations below (issue 33)
        "-- code omitted\n",
        "-- ... code omitted ...\n",
        "-- [code omitted]\n",
        "-- some code omitted here\n",
        "-- rest of code here\n",
        "-- rest of the code here (unchanged)\n",
        "--[[ code truncated ]]\n",
        "-- ... existing code ...\n",
    ],
)
def test_truncation_markers_are_errors_in_every_mode(src):
    for mode in ("editor", "patch"):
        found = lint(src, mode)
        assert len(found) == 1, (mode, src)
        assert found[0].severity is Severity.ERROR


@pytest.mark.parametrize("src", [
    "-- ...\n",
    "--[[ ... ]]\n",
    "local a = 1\n\t-- ...\nlocal b = 2\n",
    "if a then\n\tb()\n\t-- \u2026\nend\n",
    "local a = 1 --[[ note ]] -- ...\n",  # after a comment, not after code
])
def test_bare_ellipsis_comment_is_error_in_patch_and_warning_in_editor(src):
    """A comment that is only an ellipsis, alone on its line: an assistant's classic elision
    (patch mode), a person's pause (editor mode)."""
    assert [f.severity for f in lint(src, "patch")] == [Severity.ERROR]
    assert [f.severity for f in lint(src, "editor")] == [Severity.WARNING]


@pytest.mark.parametrize("src", [
    'local function lex(c)\n\tif c == "." then\n\t\treturn "DOTS"   -- ...\n\tend\nend\n',
    "local t = {1, 2, 3} -- \u2026\n",
    "f(a, b) -- etc.\n",
    "local s = [[\nlong\n]] -- ...\n",  # a multi-line token ending on the comment's line
])
def test_ellipsis_after_code_on_its_line_is_prose(src):
    for mode in ("editor", "patch"):
        assert lint(src, mode) == [], (mode, src)


def test_todo_is_warning_in_editor_and_error_in_patch():
    src = "local x = 1 -- TODO: handle nil\n-- FIXME later\n-- todo: lower case marker\n"
    editor = lint(src, "editor")
    patch = lint(src, "patch")
    assert [f.severity for f in editor] == [Severity.WARNING] * 3
    assert [f.severity for f in patch] == [Severity.ERROR] * 3
    assert patch[2].message.startswith("TODO comment in a patch")


@pytest.mark.parametrize(
    "src",
    [
        "local function f(...) return ... end",
        "local function f(...)\n  local t = {...}\n  print(select('#', ...))\nend",
        "local function f(...)\n  g(\n    ...\n  )\nend",
        "type F<T...> = (T...) -> ()",
        "local s = 'TODO: this is data, not a comment'",
        "local s = '-- rest of code'",
        "-- Loading... please wait\nlocal x = 1",
        "--!strict\nlocal x = 1",
        "local todo = 'x' -- a todo list item",
        "-- the rest of the code expects numbers here, not strings\nlocal n = 1",
        "-- We handle the rest of the cases below by falling back to defaults\nlocal n = 1",
        "-- keep existing items when merging the two inventories\nlocal n = 1",
        "-- the todo list is sorted by date\nlocal n = 1",
    ],
)
def test_not_placeholders(src):
    assert lint(src, "patch") == []


@pytest.mark.parametrize(
    "src",
    [
        # an omission explained is prose: the code is complete as written (issue 33)
        "-- port note: code omitted because this VM has no 64-bit integers\nlocal x = 1\n",
        "-- layout code omitted for now but ported further down\nlocal x = 1\n",
        "-- code omitted, see upstream for the full version\nlocal x = 1\n",
        "-- the rest of code here only runs in Studio\nlocal x = 1\n",
        "-- rest of code omitted since the engine does it for us\nlocal x = 1\n",
        "-- see upstream\nlocal x = 1\n",
        # a banner around a section title is not an elision
        "--[[----------------------------------\n-- other functions\n----------------------------------]]\nlocal x = 1\n",
    ],
)
def test_explained_omissions_are_not_placeholders(src):
    for mode in ("editor", "patch"):
        assert lint(src, mode) == [], (mode, src)


def test_statement_ellipsis_supersedes_the_vararg_syntax_error():
    found = Engine().lint_text("local function f()\n  ...\nend\n", "x.luau")
    assert [f.rule for f in found] == ["placeholder"]
