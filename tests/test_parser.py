"""The Luau parser: all of current Luau parses cleanly; errors are Luau's, at Luau's
positions; recovery keeps the rest of the file; hostile input is bounded."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from luaguard.luau import ast as A
from luaguard.luau.parser import parse
from luaguard.text import LineIndex

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

VALID = {
    "locals_and_assignments": "local a, b: number = 1, 2\na, b = b, a\na += 1; b //= 2\nlocal s = 'x'\ns ..= 'y'",
    "functions": "local function f(a: number, ...: string): (number, ...string) return a, ... end\n"
                 "function M.g(self) end\nfunction M:h<T>(x: T): T return x end\nlocal anon = function(...) return select('#', ...) end",
    "control_flow": "for i = 1, 10, 2 do if i == 3 then continue elseif i > 8 then break else end end\n"
                    "for k, v in pairs({}) do end\nwhile true do break end\nrepeat local x = 1 until x == 1\ndo end",
    "if_expressions": "local x = if a then 1 elseif b then 2 else 3\nlocal y = if if c then d else e then f else g\n"
                      "print(if x then `{x}` else 'none')",
    "interpolation": "local s = `a {b + 1} c {`nested {d}`} e {({1}) [1]}`",
    "tables": "local t = {1, 2; x = 3, ['y z'] = 4, [5] = function() end,}\nlocal e = {}",
    "types": "type A = number | string?\nexport type B<T, U = string> = { read x: T, write y: U, [string]: any }\n"
             "type F = <T...>(T...) -> ...number\ntype G = (a: number, b: string) -> ()\n"
             "type H = typeof(setmetatable({}, {}))\ntype I = 'a' | 'b' | true\ntype J = { number }\n"
             "type K<T... = ...any> = (T...) -> T...\ntype L = ((number) -> string) & ((string) -> number)\n"
             "type M = { f: (self: M) -> () }\nlocal v = x :: number\nlocal w = (y :: any) :: string",
    "type_function": "type function addProp(t)\n  t:setproperty(types.singleton('x'), types.number)\n  return t\nend",
    "attributes": "@native function hot(a) return a * 2 end\n@checked local function c() end\n"
                  "@[deprecated{use = 'x', reason = 'y'}] function old() end\nlocal f = @native function() end",
    "const": "const LIMIT = 10\nconst function pure() return LIMIT end",
    "generics_call": "local v = f<<number>>(1)\nlocal w = obj:method<<string>>('x')",
    "numbers": "local n = 0x1F + 0b101 + 1_000 + 1e-3 + .5",
    "comments": "--!strict\n--[==[ long\n]==] local a = 1 -- tail",
    "method_calls": "game:GetService('Players').PlayerAdded:Connect(function(p) print(p.Name) end)\nf{1} f'x' f[[y]]",
    "semicolons": "local a = 1; local b = 2; print(a);",
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_luau_has_no_errors(name):
    chunk = parse(VALID[name])
    assert chunk.errors == [], [e.message for e in chunk.errors]


def test_every_sample_parses_cleanly():
    files = sorted((SAMPLES / "place").rglob("*.luau"))
    assert len(files) >= 20
    for f in files:
        chunk = parse(f.read_text(encoding="utf-8"))
        assert chunk.errors == [], (f, [e.message for e in chunk.errors])


def errors(src: str) -> list[tuple[int, str]]:
    chunk = parse(src)
    lines = LineIndex(src)
    return [(lines.position(e.start).line + 1, e.message) for e in chunk.errors]


@pytest.mark.parametrize(
    "src, line, message",
    [
        ("local x = (1\nprint(x)", 2, "Expected ')' (to close '(' at line 1), got 'print'"),
        ("local x = f(1, )", 1, "Expected expression after ',' but got ')' instead"),
        ("local function f()\n  return 1\n", 3, "Expected 'end' (to close 'function' at line 1), got <eof>"),
        ("if x then\n  y()\n", 3, "Expected 'end' (to close 'then' at line 1), got <eof>"),
        ("local = 3", 1, "Expected identifier when parsing variable name, got '='"),
        ("x = = 2", 1, "Expected identifier when parsing expression, got '='"),
        ("foo", 1, "Incomplete statement: expected assignment or a function call"),
        ("break", 1, "break statement must be inside a loop"),
        ("local function f() print(...) end", 1, "Cannot use '...' outside of a vararg function"),
        ("if a && b then end", 1, "Unexpected '&&'; did you mean 'and'?"),
        ("if a != b then end", 1, "Unexpected '!='; did you mean '~='?"),
        ("local t = {a = 1 b = 2}", 1, "Expected ',' after table constructor element"),
        ("local x = (a = 1)", 1, "Expected ')' (to close '(' at column 11), got '='; did you mean to use '{' when defining a table?"),
        ("function f() -> number end", 1, "Function return type annotations are written after ':' instead of '->'"),
        ("@foo function f() end", 1, "Invalid attribute '@foo'"),
        ("const x", 1, "Missing initializer in const declaration"),
        ("end", 1, "Expected <eof>, got 'end'"),
    ],
)
def test_error_messages_and_positions(src, line, message):
    errs = errors(src)
    assert errs, "expected an error"
    assert errs[0] == (line, message)


def test_ambiguous_call_reported():
    errs = errors("local a = f\n(g)()")
    assert errs and errs[0][1].startswith("Ambiguous syntax")


def test_error_recovery_keeps_later_functions():
    src = "local function broken()\n  local x = (1 +\nend\n\nlocal function fine()\n  return game.Workspace\nend\n"
    chunk = parse(src)
    assert chunk.errors
    names = [s.var.name for s in chunk.body.body if isinstance(s, A.StatLocalFunction)]
    assert names == ["broken", "fine"]


def test_stray_end_reported_then_rest_still_parsed():
    chunk = parse("print(1)\nend\nlocal later = 2")
    assert chunk.errors[0].message == "Expected <eof>, got 'end'"
    assert any(isinstance(s, A.StatLocal) and s.vars[0].name == "later" for s in chunk.body.body)


def test_names_resolve_to_locals_and_globals_with_shadowing():
    chunk = parse("local game = {}\nprint(game)\ndo local workspace = 1 end\nprint(workspace)")
    reads = [n for n in A.walk(chunk.body) if isinstance(n, (A.ExprLocal, A.ExprGlobal))]
    kinds = {(type(n).__name__, n.name) for n in reads}
    assert ("ExprLocal", "game") in kinds
    assert ("ExprGlobal", "workspace") in kinds  # the local went out of scope
    assert ("ExprGlobal", "print") in kinds


def test_reassignments_are_recorded_on_locals():
    chunk = parse("local RS = game.ReplicatedStorage\nRS = nil\nlocal Other = 1\nOther += 1\nlocal Kept = 2")
    locals_ = {s.vars[0].name: s.vars[0] for s in chunk.body.body if isinstance(s, A.StatLocal)}
    assert len(locals_["RS"].assignments) == 1
    assert len(locals_["Other"].assignments) == 1
    assert locals_["Kept"].assignments == []


@pytest.mark.parametrize(
    "src",
    [
        "(" * 10000,
        "x = " + "(" * 10000 + "1" + ")" * 10000,
        "local t = " + "{" * 5000 + "}" * 5000,
        "local x = " + " + ".join(["1"] * 60000),
        "f = " + "function() " * 3000 + "end " * 3000,
        "x = " + "-" * 20000 + "1",
    ],
)
def test_hostile_nesting_is_bounded(src):
    start = time.perf_counter()
    chunk = parse(src)
    assert time.perf_counter() - start < 10
    # Either it parses, or it ends with one clear error; never a RecursionError.
    for e in chunk.errors:
        assert e.message


def test_one_megabyte_single_line_and_random_bytes():
    big = "local t = {" + ",".join(str(i) for i in range(160000)) + "}"
    assert len(big) > 1_000_000
    assert parse(big).errors == []
    rng = random.Random(5)
    for _ in range(20):
        data = bytes(rng.randrange(256) for _ in range(2000)).decode("utf-8", errors="replace")
        parse(data)  # must not raise


def test_error_limit_stops_parsing():
    chunk = parse("= " * 500)
    # 100 errors, then Luau's fatal "Reached error limit" one.
    assert len(chunk.errors) == 101
    assert chunk.errors[-1].message == "Reached error limit (100)"


def test_double_semicolon_is_an_error_as_in_luau():
    assert errors("local a = 1;;")[0][1] == "Expected identifier when parsing expression, got ';'"
