""".luaurc: globals, aliases and languageMode, found per directory as Luau finds them (the
nearest file wins, globals add up), never read outside the project root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from luaguard.config import Settings
from luaguard.engine import Engine
from luaguard.project.luaurc import LuaurcReader

PROJECT = {"name": "g", "tree": {"$className": "DataModel", "ReplicatedStorage": {"$path": "src"}}}


def make(tmp_path: Path, files: dict[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "default.project.json").write_text(json.dumps(PROJECT))
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def undefined(engine: Engine, rel: str) -> list[str]:
    text = (engine.root / rel).read_text()
    return [f.message.split("'")[1] for f in engine.lint_text(text, engine.root / rel) if f.rule == "undefined_variable"]


def test_nearest_file_wins_and_globals_add_up(tmp_path: Path):
    root = make(tmp_path, {
        # luau-lsp's JSONC: a comment and a trailing comma
        ".luaurc": '{\n // test globals\n "languageMode": "nonstrict",\n "globals": ["describe"],\n'
                   ' "aliases": {"Lib": "src/lib", "lune": "~/.lune/typedefs"},\n}\n',
        "src/tests/.luaurc": json.dumps({"languageMode": "strict", "globals": ["expect"], "aliases": {"lib": "vendor"}}),
    })
    reader = LuaurcReader(root)
    top, inner = reader.for_dir("src"), reader.for_dir("src/tests")
    assert top.language_mode == "nonstrict" and top.globals == {"describe"}
    assert dict(top.aliases) == {"lib": ("src/lib", ".luaurc")}  # the host's ~ path is not judged
    assert inner.language_mode == "strict" and inner.globals == {"describe", "expect"}
    assert dict(inner.aliases) == {"lib": ("src/tests/vendor", "src/tests/.luaurc")}
    assert reader.problems == []


def test_globals_honoured_per_directory_and_settings_override_mode(tmp_path: Path):
    root = make(tmp_path, {
        "src/tests/.luaurc": json.dumps({"globals": ["expect"], "languageMode": "strict"}),
        "src/tests/a.luau": "expect(1)\n",
        "src/b.luau": "expect(1)\n",
        "src/c.luau": "--!nocheck\nprint(1)\n",
    })
    engine = Engine(root)
    assert undefined(engine, "src/tests/a.luau") == []
    assert undefined(engine, "src/b.luau") == ["expect"]
    assert engine.language_mode("src/tests/a.luau") == "strict"
    ctx = engine.make_context("--!nocheck\nprint(1)\n", root / "src/tests/a.luau")
    assert ctx.options["language_mode"] == "nocheck"  # a file's header wins
    assert Engine(root, Settings(language_mode="nonstrict")).language_mode("src/tests/a.luau") == "nonstrict"


def test_string_require_alias_from_the_nearest_luaurc(tmp_path: Path):
    root = make(tmp_path, {
        ".luaurc": json.dumps({"aliases": {"util": "src/util"}}),
        "src/feature/.luaurc": json.dumps({"aliases": {"util": "src/feature/helpers"}}),
        "src/util/Maths.luau": "return {}\n",
        "src/feature/src/feature/helpers/Other.luau": "return {}\n",
        "src/feature/src/feature/helpers/Maths2.luau": "return {}\n",
        "src/a.luau": 'local m = require("@util/Maths")\nlocal n = require("@util/Mathz")\nreturn m, n\n',
    })
    engine = Engine(root)
    text = (root / "src/a.luau").read_text()
    found = [f for f in engine.lint_text(text, root / "src/a.luau") if f.rule.endswith("instance")]
    assert [f.range.start.line for f in found] == [1], [f.message for f in found]
    assert engine.snapshot.frameworks.luaurc_aliases("src/feature")["util"][1] == "src/feature/.luaurc"


def test_malformed_or_linked_luaurc_adds_nothing(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.json").write_text(json.dumps({"globals": ["stolen"]}))
    root = make(tmp_path / "game", {".luaurc": "{ not json", "src/x/a.luau": "stolen()\n"})
    if hasattr(os, "symlink"):
        try:
            os.symlink(outside / "evil.json", root / "src" / "x" / ".luaurc")
        except OSError:
            pytest.skip("no symbolic links here")
    reader = LuaurcReader(root)
    assert reader.for_dir("src/x").globals == frozenset()
    assert any("not valid JSON" in p for p in reader.problems)
    assert any("outside" in p for p in reader.problems)
    assert undefined(Engine(root), "src/x/a.luau") == ["stolen"]


def test_lint_settings_turn_off_the_rules_their_lints_mean(tmp_path: Path):
    """``"lint": {"UnknownGlobal": false}`` (as vide's .luaurc writes it) is what
    ``--!nolint UnknownGlobal`` is for each file of the directory; ``"*"`` and a nearer file
    override what they inherit, key by key, the last one winning (Luau's Config.cpp)."""
    root = make(tmp_path, {
        "src/plugin/.luaurc": json.dumps({"lint": {"UnknownGlobal": False}}),
        "src/plugin/a.luau": "harness(1)\n-- luaguard: allow(undefined_variable)\nprint(2)\n",
        "src/plugin/again/.luaurc": json.dumps({"lint": {"*": True}}),
        "src/plugin/again/b.luau": "harness(1)\n",
        "src/c.luau": "harness(1)\n",
    })
    engine = Engine(root)
    assert undefined(engine, "src/plugin/a.luau") == []
    # the rule did not run there: its luaguard suppression is not reported unused either
    text = (root / "src/plugin/a.luau").read_text()
    assert [f.rule for f in engine.lint_text(text, root / "src/plugin/a.luau")] == []
    assert undefined(engine, "src/plugin/again/b.luau") == ["harness"]
    assert undefined(engine, "src/c.luau") == ["harness"]
    cfg = LuaurcReader(root).for_dir("src/plugin/again")
    assert not cfg.lint_disabled("UnknownGlobal") and not cfg.lint_disabled("LocalUnused")
    assert LuaurcReader(root).for_dir("src/plugin").lint_disabled("UnknownGlobal")
