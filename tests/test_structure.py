"""Structure analysis (luau/structure.py): no false problems on valid code and the samples, every
deleted closer found.  Its messages as the engine reports them are the fixtures of
tests/rules/unbalanced_bracket and tests/rules/unclosed_block."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from luaguard.luau.lexer import tokenize
from luaguard.luau.mutate import mutate
from luaguard.luau.structure import UNCLOSED_BLOCK, analyze_structure
from luaguard.text import LineIndex

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "place"


def problems(src: str):
    return analyze_structure(tokenize(src).tokens, LineIndex(src))


VALID = [
    "local x = if a then b else c",
    "local x = if a then (if b then 1 else 2) else 3",
    "local x = if a then if b then 1 else 2 else 3",
    "if a then x = if b then 1 else 2 else y = 3 end",
    "return if a then b elseif c then d else e",
    "for k in if t then pairs(t) else ipairs({}) do end",
    "while f(function() return true end) do end",
    "for i = 1, (function() return 3 end)() do end",
    "type function f(t) return t end",
    "local s = `a {if x then '{' else '}'} b {({})}`",
    "local t = { [1] = {}, f = function() end }",
    "repeat local done = true until done",
    "local f = function(...) return ... end",
    "type T = { a: number, b: { c: string } }",
    "declare function foo(x: number): ()",
    # definition files: a declared class's methods have no body (Luau's parseDeclaration)
    "declare class Part extends BasePart\n\tSize: Vector3\n\tfunction Touch(self, cb: (Part) -> ()): nil\n"
    "\tfunction Clone(self): Part\nend\ndeclare function f(x: number): string\n",
    "declare extern type Part with\n\tfunction Touch(self): nil\n\t[\"Size\"]: Vector3\n\tfunction Clone(self): Part\nend\n",
]


def test_declared_class_left_open_is_reported():
    src = "declare class Part\n\tfunction Touch(self): nil\n"
    [p] = problems(src)
    assert p.rule == UNCLOSED_BLOCK
    assert p.message == "Expected 'end' (to close 'class' at line 1), got <eof>"


@pytest.mark.parametrize("src", VALID)
def test_valid_code_has_no_problems(src):
    assert problems(src) == []


def test_samples_are_clean():
    for f in sorted(SAMPLES.rglob("*.luau")):
        src = f.read_text(encoding="utf-8")
        assert problems(src) == [], f


def test_deleting_any_closer_is_flagged_in_samples():
    """The acceptance experiment over the samples: delete one random closer per file."""
    rng = random.Random(2024)
    total = flagged = 0
    for f in sorted(SAMPLES.rglob("*.luau")):
        src = f.read_text(encoding="utf-8")
        for _ in range(5):
            m = mutate(src, rng, kinds=("delete_closer",))
            assert m is not None
            total += 1
            flagged += bool(problems(m.text))
    assert total >= 100
    assert flagged / total >= 0.99
