"""undefined_variable with the project's tooling (luaguard.toml's extra_globals, TestEZ specs,
selene std files).  The rules' own cases (what they find, what must stay silent) are the
fixtures of tests/rules/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from luaguard.config import Settings
from luaguard.engine import Engine


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    tree = {"name": "G", "tree": {"$className": "DataModel",
                                  "ServerScriptService": {"$className": "ServerScriptService", "S": {"$path": "src"}}}}
    (tmp_path / "default.project.json").write_text(json.dumps(tree))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "Main.server.luau").write_text("")
    return tmp_path


def lint(src: str, rule: str, project: Path | None = None, settings: Settings | None = None, path: str = "src/Main.server.luau"):
    engine = Engine(project, settings)
    target = (project / path) if project is not None else path
    return [f for f in engine.lint_text(src, target) if f.rule == rule]


# -- undefined_variable --------------------------------------------------------------
def test_extra_globals_setting_and_testez_specs(project):
    assert lint("print(Knit)", "undefined_variable", settings=Settings(extra_globals=("Knit",))) == []
    assert lint("describe('x', function() it('y', function() expect(1).to.equal(1) end) end)",
                "undefined_variable", project, path="src/Thing.spec.luau") == []
    assert lint("describe('x', function() end)", "undefined_variable", project) != []


def test_selene_std_files_define_globals(project):
    (project / "selene.toml").write_text('std = "roblox+custom"\n')
    (project / "custom.toml").write_text("[[myGlobal.args]]\ntype = \"string\"\n")
    assert lint("myGlobal('x')", "undefined_variable", project) == []
