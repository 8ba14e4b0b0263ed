"""The compiled walk's constants come from the Python definitions (luaguard/guard/walk_layout.py
reads them from source for setup.py): what it reads is what the modules define."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

pytest.importorskip("numpy")

from luaguard.guard import walk_layout

GUARD = Path(walk_layout.__file__).resolve().parent


def test_every_constant_is_the_modules_value():
    got = walk_layout.values(GUARD)
    assert list(got) == [c for c, _, _ in walk_layout.CONSTANTS]
    for c_name, module, py_name in walk_layout.CONSTANTS:
        assert got[c_name] == getattr(importlib.import_module(f"luaguard.guard.{module}"), py_name), c_name


def test_header_defines_each_once_and_a_missing_name_is_named():
    text = walk_layout.header(GUARD)
    defines = [line.split()[1] for line in text.splitlines() if line.startswith("#define ") and "(" in line]
    assert sorted(defines) == sorted(c for c, _, _ in walk_layout.CONSTANTS)
    assert walk_layout.module_constants("A, B = range(3, 5)\nC = A | B << 2\nD = -C\nE = len('x')\n") == \
        {"A": 3, "B": 4, "C": 3 | 4 << 2, "D": -(3 | 4 << 2)}
    with pytest.raises(KeyError, match="defines no integer NOPE"):
        old = walk_layout.CONSTANTS
        try:
            walk_layout.CONSTANTS = (("NOPE", "automaton", "NOPE"),)
            walk_layout.values(GUARD)
        finally:
            walk_layout.CONSTANTS = old
