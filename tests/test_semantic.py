"""Semantic checks: undefined_variable, unknown_class, unknown_member, deprecated_api —
positive cases, and the cases that must stay silent."""

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
def test_undefined_global_with_suggestion_and_fix():
    [f] = lint("local v = Vectr3.new(1, 2, 3)", "undefined_variable")
    assert f.message == "'Vectr3' is not defined. Did you mean 'Vector3'?"
    assert f.fix.new_text == "Vector3"
    [g] = lint("local player = 1\nprint(playr)", "undefined_variable")
    assert g.suggestions[0] == "player"


@pytest.mark.parametrize(
    "src",
    [
        "print(math.floor(1), string.len('x'), task.wait, typeof(1), Instance, Enum, workspace, script)",
        "counter = 0\nprint(counter)",
        "function helper() end\nhelper()",
        "local function f(a) return a end\nprint(f(1))",
        "type function t(x) return types.number end",
        "setfenv(1, {})\nprint(anything)",
        "for i, v in ipairs({}) do print(i, v) end",
        "continue_count = 1 print(continue_count)",
        "export type T = number\nlocal x: T = 1",
    ],
)
def test_defined_names_are_silent(src):
    assert lint(src, "undefined_variable") == []


def test_extra_globals_setting_and_testez_specs(project):
    assert lint("print(Knit)", "undefined_variable", settings=Settings(extra_globals=("Knit",))) == []
    assert lint("describe('x', function() it('y', function() expect(1).to.equal(1) end) end)",
                "undefined_variable", project, path="src/Thing.spec.luau") == []
    assert lint("describe('x', function() end)", "undefined_variable", project) != []


def test_selene_std_files_define_globals(project):
    (project / "selene.toml").write_text('std = "roblox+custom"\n')
    (project / "custom.toml").write_text("[[myGlobal.args]]\ntype = \"string\"\n")
    assert lint("myGlobal('x')", "undefined_variable", project) == []


# -- unknown_class -------------------------------------------------------------------
def test_unknown_class_in_instance_new_and_isa():
    [f] = lint('local p = Instance.new("Partt")', "unknown_class")
    assert f.suggestions[0] == "Part" and f.fix.new_text == '"Part"'
    [g] = lint('local ok = x:IsA("Modle")', "unknown_class")
    assert g.suggestions[0] == "Model"
    [h] = lint('local c = x:FindFirstChildOfClass("Humanoidd")', "unknown_class")
    assert h.suggestions[0] == "Humanoid"
    [n] = lint('local s = Instance.new("Players")', "unknown_class")
    assert n.message.startswith("'Players' cannot be created with Instance.new")


@pytest.mark.parametrize(
    "src",
    [
        "local p = Instance.new(className)",
        'local p = Instance.new("Part", workspace)',
        'local ok = x:IsA("BasePart") and x:IsA("GuiObject")',
        'local Instance = {new = function(n) return n end}\nlocal p = Instance.new("Whatever")',
    ],
)
def test_valid_classes_are_silent(src):
    assert lint(src, "unknown_class") == []


# -- unknown_member ------------------------------------------------------------------
def test_unknown_members_where_the_class_is_certain(project):
    src = "\n".join([
        'local p = Instance.new("Part")',
        "p.Sizee = Vector3.one",
        "p:Destory()",
        'local players = game:GetService("Players")',
        "local lp = players.LocalPlayr",                    # Players holds players only: no child so named
        "local cam = workspace.CurrentCamra",               # Workspace may hold a child so named
        "local m = Vector3.new(1, 2, 3).Magnitud",
        "local mat = Enum.Materal.Plastic",
        "local item = Enum.Material.Plastik",
        "local function f(h: Humanoid) return h.WalkSpeeed end",  # a Humanoid's children are not known
        "local function g(h: Humanoid) h.WalkSpeeed = 16 end",    # assigned: a property, never a child
    ])
    found = lint(src, "unknown_member", project)
    got = {(f.range.start.line + 1, f.suggestions[0] if f.suggestions else None) for f in found}
    assert got == {(2, "Size"), (3, "Destroy"), (5, "LocalPlayer"), (7, "Magnitude"),
                   (8, "Material"), (9, "Plastic"), (11, "WalkSpeed")}
    # where a child may have the name, a read is a child the project does not back: a hint
    # naming the member (no fix: the name may be a child's)
    hints = {f.range.start.line + 1: f for f in lint(src, "unverified_instance", project)}
    assert sorted(hints) == [6, 10] and all(f.severity.label == "hint" and f.fix is None for f in hints.values())
    assert hints[6].suggestions[0] == "CurrentCamera" and "Did you mean the member 'CurrentCamera'?" in hints[6].message
    msgs = {f.range.start.line + 1: f.message for f in found}
    assert msgs[2] == "'Sizee' is not a property of Part: assigning it fails at run time. Did you mean 'Size'?"
    assert msgs[3] == "'Destory' is not a method of Part. Did you mean 'Destroy'?"
    assert msgs[9] == "'Plastik' is not an item of Enum.Material. Did you mean 'Plastic'?"


@pytest.mark.parametrize(
    "src",
    [
        'local p = Instance.new("Part")\nlocal k = "Size"\nprint(p[k])',                      # dynamic index
        'local p: any = Instance.new("Part")\nprint(p.Sizee)',                                # any-typed
        'local p = Instance.new("Part") :: any\nprint(p.Sizee)',                              # cast to any
        'local p = Instance.new("Part")\nlocal c = Instance.new("Folder")\nc.Name = "Sizer"\nc.Parent = p\nprint(p.Sizer)',  # run time
        'local p = Instance.new("Part")\nprint(p.Size, p.Anchored, p.Touched, p:GetChildren())',
        'local p = Instance.new("Part")\np = workspace\nprint(p.Sizee)',                      # reassigned
        "local m = Enum.Material.Plastic.Value",
        'local part = workspace:FindFirstChild("X")\nprint(part.Sizee)',                       # class unknown
    ],
)
def test_uncertain_members_are_silent(src, project):
    assert lint(src, "unknown_member", project) == []


# -- deprecated_api ------------------------------------------------------------------
def test_deprecated_globals_and_members():
    src = 'wait(1)\nspawn(print)\nlocal p = Instance.new("Part")\np:Remove()\nlocal h: Humanoid = x\nh:LoadAnimation(a)'
    found = lint(src, "deprecated_api")
    by_line = {f.range.start.line + 1: f for f in found}
    assert set(by_line) == {1, 2, 4, 6}
    assert by_line[1].fix.new_text == "task.wait"
    assert by_line[4].fix.new_text == "Destroy"
    assert by_line[6].fix is None and "Animator:LoadAnimation" in by_line[6].message
    assert all(f.severity.label == "warning" for f in found)


def test_modern_api_and_shadowed_names_are_silent():
    src = "task.wait(1)\nlocal function wait() end\nwait()\nlocal p = Instance.new('Part')\np:Destroy()"
    assert lint(src, "deprecated_api") == []
