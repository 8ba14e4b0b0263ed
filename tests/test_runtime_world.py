"""The run-time world (``analysis/world.py``): a child missing from the project files
is an error only where the project determines the container's contents; names created at
run time count only where the creating code may parent them; the guard follows the same
rule.

Every snippet here is written for this file (none is copied from the corpus); each stands
for one class of false error or recall hole that real games showed (``bench/real_code.py``
over the games of ``bench/corpus/manifest.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

from luaguard.engine import Engine
from luaguard.findings import Severity
from luaguard.guard.paths import KIND_DOT, KIND_LOOKUP, PathSpace
from project_files import rojo_project, write_files


# (folders synced from a directory are closed: Rojo removes what the files do not describe)
PLACE = rojo_project({
    "ReplicatedStorage": {
        "$className": "ReplicatedStorage",
        "Shared": {"$path": "src/shared"},
        "Remotes": {"$path": "src/remotes"},
        "Templates": {"$path": "src/templates"},
    },
    "ServerScriptService": {"$className": "ServerScriptService", "$path": "src/server"},
    "ServerStorage": {"$className": "ServerStorage", "$path": "src/storage"},
    "StarterGui": {"$className": "StarterGui", "$path": "src/gui"},
    "StarterPlayer": {
        "$className": "StarterPlayer",
        "StarterPlayerScripts": {"$className": "StarterPlayerScripts", "$path": "src/client"},
    },
})


def place(tmp_path: Path, files: dict[str, str]) -> Engine:
    base = {"default.project.json": PLACE, "src/shared/Util.luau": "return {}\n",
            "src/remotes/Damage.model.json": json.dumps({"ClassName": "RemoteEvent"}),
            "src/templates/Sword.model.json": json.dumps({"ClassName": "Tool"}),
            "src/server/Main.server.luau": "print('main')\n", "src/client/Hello.client.luau": "print('hi')\n"}
    base.update(files)
    write_files(tmp_path, base)
    return Engine(tmp_path)


def findings(engine: Engine, rel: str, text: str | None = None, mode: str = "patch"):
    path = engine.root / rel
    if text is None:
        text = path.read_text()
    return engine.lint_text(text, path, mode=mode)


def errors(engine: Engine, rel: str, text: str | None = None):
    return [(f.rule, f.range.start.line + 1) for f in findings(engine, rel, text) if f.severity is Severity.ERROR]


# -- names created at run time: scoped to where code parents them --------------------------------
def test_a_name_is_accepted_under_the_instance_the_code_parents_it_to_only(tmp_path):
    engine = place(tmp_path, {
        "src/server/Net.server.luau": (
            'local RS = game:GetService("ReplicatedStorage")\n'
            'local ev = Instance.new("RemoteEvent")\n'
            'ev.Name = "Hit"\n'
            "ev.Parent = RS.Remotes\n"
        ),
        "src/client/Use.client.luau": (
            'local RS = game:GetService("ReplicatedStorage")\n'
            'local a = RS.Remotes:WaitForChild("Hit")\n'
            'local b = RS.Templates:WaitForChild("Hit")\n'
        ),
    })
    assert errors(engine, "src/client/Use.client.luau") == [("unknown_instance", 3)]


def test_recall_hole_a_gui_name_made_elsewhere_does_not_vouch_for_a_package_path(tmp_path):
    """Before, any string used as a Name anywhere was accepted under every folder."""
    engine = place(tmp_path, {
        "src/gui/Hud/init.meta.json": json.dumps({"className": "ScreenGui"}),
        "src/gui/Hud/Button.client.luau": (
            "local function build(holder)\n"
            '\tlocal region = Instance.new("Frame")\n'
            '\tregion.Name = "HitArea"\n'
            "\tregion.Parent = holder\n"
            "end\n"
            "build(script.Parent)\n"
        ),
        "src/shared/Icon/init.luau": "return {}\n",
        "src/shared/Icon/Packages/Signal.luau": "return {}\n",
        "src/server/Req.server.luau": (
            'local Icon = game:GetService("ReplicatedStorage").Shared.Icon\n'
            "local r = require(Icon.Packages.HitArea)\n"
        ),
    })
    assert errors(engine, "src/server/Req.server.luau") == [("unknown_instance", 2)]
    # the GUI that code builds it into accepts it (the helper's call site gives the parent)
    assert errors(engine, "src/gui/Hud/Button.client.luau", "local f = script.Parent.HitArea\n") == []


def test_helper_functions_name_and_parent_from_their_call_sites(tmp_path):
    engine = place(tmp_path, {
        "src/server/Boot.server.luau": (
            "local function create(className, name, parent)\n"
            "\tlocal obj = Instance.new(className)\n"
            "\tobj.Name = name\n"
            "\tobj.Parent = parent\n"
            "\treturn obj\n"
            "end\n"
            'create("Folder", "Stats", game:GetService("ReplicatedStorage").Remotes)\n'
        ),
        "src/client/Read.client.luau": (
            'local Remotes = game:GetService("ReplicatedStorage"):WaitForChild("Remotes")\n'
            'local s = Remotes:WaitForChild("Stats")\n'
            'local t = Remotes:WaitForChild("Statz")\n'
        ),
    })
    assert errors(engine, "src/client/Read.client.luau") == [("unknown_instance", 3)]


def test_clones_and_reparented_instances_count_where_they_land(tmp_path):
    engine = place(tmp_path, {
        "src/storage/Kit/Common/Damage.luau": "return {}\n",
        "src/storage/Kit/Client/init.luau": "local Damage = require(script.Parent:WaitForChild('Damage'))\nreturn {}\n",
        "src/server/Setup.server.luau": (
            'local Kit = game:GetService("ServerStorage").Kit\n'
            "local client = Kit.Client:Clone()\n"
            "Kit.Common.Damage:Clone().Parent = client\n"
            'client.Parent = game:GetService("ReplicatedStorage")\n'
            'game:GetService("ReplicatedStorage").Templates.Sword:Clone().Parent = workspace\n'
        ),
    })
    # the module runs inside the clone of Client, which code gives a Damage module
    assert errors(engine, "src/storage/Kit/Client/init.luau") == []


# -- Roblox's run-time containers -------------------------------------------------------------------
def test_player_children_that_server_scripts_add(tmp_path):
    engine = place(tmp_path, {
        "src/server/Stats.server.luau": (
            'game:GetService("Players").PlayerAdded:Connect(function(player)\n'
            '\tlocal folder = Instance.new("Folder")\n'
            '\tfolder.Name = "leaderstats"\n'
            "\tfolder.Parent = player\n"
            "end)\n"
        ),
        "src/client/Show.client.luau": (
            'local player = game:GetService("Players").LocalPlayer\n'
            'local stats = player:WaitForChild("leaderstats")\n'
            'local other = player:WaitForChild("SessionData")\n'
            'local typo = player:WaitForChild("PlayerGuii")\n'
        ),
    })
    got = findings(engine, "src/client/Show.client.luau")
    # (patch mode: a name no script creates, names or reads under a player is a warning)
    assert [(f.rule, f.range.start.line + 1) for f in got] == [("unverified_instance", 3), ("likely_unknown_instance", 4)]
    # the warnings say why the child may exist: a script parents instances at run time
    assert "src/server/Stats.server.luau" in got[1].message and got[1].suggestions[0] == "PlayerGui"
    assert "src/server/Stats.server.luau" in got[0].message
    assert [f.rule for f in findings(engine, "src/client/Show.client.luau", mode="editor")
            if f.severity is not Severity.HINT] == ["likely_unknown_instance"]


def test_player_children_are_errors_when_no_script_adds_any(tmp_path):
    engine = place(tmp_path, {
        "src/client/Show.client.luau": 'local x = game:GetService("Players").LocalPlayer:WaitForChild("Coins")\n',
    })
    assert errors(engine, "src/client/Show.client.luau") == [("unknown_instance", 1)]


def test_character_parts_from_a_script_cloned_into_characters(tmp_path):
    engine = place(tmp_path, {
        "src/server/Assets/Regen.server.luau": (
            'local humanoid = script.Parent:WaitForChild("Humanoid")\n'
            "local torso = script.Parent.Torso\n"
        ),
    })
    assert errors(engine, "src/server/Assets/Regen.server.luau") == []
    # other names from such a script are still checked
    assert errors(engine, "src/server/Assets/Regen.server.luau", "local x = script.Parent.Gadget\n") == \
        [("unknown_instance", 1)]


# -- templates --------------------------------------------------------------------------------------
def test_disabled_scripts_and_the_modules_inside_templates(tmp_path):
    engine = place(tmp_path, {
        # disabled in its meta file: cloned and enabled elsewhere (its parent is the host)
        "src/server/Pickup/init.server.luau": "local handle = script.Parent\nhandle.Touched:Connect(print)\n",
        "src/server/Pickup/init.meta.json": json.dumps({"properties": {"Disabled": True}}),
        "src/server/Pickup/Config.luau": "local host = script.Parent.Parent\nreturn host.Speed\n",
        # a tool kept in ServerStorage: its scripts run in clones, so do its modules
        "src/storage/Blaster/init.meta.json": json.dumps({"className": "Tool"}),
        "src/storage/Blaster/Fire.server.luau": "local tool = script.Parent\n",
        "src/storage/Blaster/Shared.luau": "local d = script.Parent:WaitForChild('Damager')\nreturn d\n",
    })
    for rel in ("src/server/Pickup/init.server.luau", "src/server/Pickup/Config.luau", "src/storage/Blaster/Shared.luau"):
        assert errors(engine, rel) == [], rel


def test_a_template_module_finds_its_siblings_on_its_clone(tmp_path):
    """A module inside a tool kept in ServerStorage runs in a clone of the tool: the siblings it
    had where it stands come along (no warning), a near miss of one is a warning naming it."""
    engine = place(tmp_path, {
        "src/storage/Launcher/init.meta.json": json.dumps({"className": "Tool"}),
        "src/storage/Launcher/Settings.model.json": json.dumps({"ClassName": "Configuration"}),
        "src/storage/Launcher/Run.server.luau": "local tool = script.Parent\n",
        "src/storage/Launcher/Aim.luau": "local cfg = script.Parent.Settings\nreturn cfg\n",
    })
    rel = "src/storage/Launcher/Aim.luau"
    assert findings(engine, rel) == []
    near = findings(engine, rel, "local cfg = script.Parent.Setings\nreturn cfg\n")
    assert [(f.rule, f.severity) for f in near] == [("likely_unknown_instance", Severity.WARNING)]
    assert "Did you mean 'Settings'?" in near[0].message


def test_a_script_gets_children_on_its_clone(tmp_path):
    engine = place(tmp_path, {
        "src/server/Fly.client.luau": "local speed = script.Speed.Value\n",
    })
    # a LocalScript under ServerScriptService does not run there: a template given values
    assert errors(engine, "src/server/Fly.client.luau") == []


def test_modules_moved_by_code_see_their_new_parent(tmp_path):
    engine = place(tmp_path, {
        "src/storage/Parts/Common/Hurt.luau": "local cfg = script.Parent:WaitForChild('Settings')\nreturn cfg\n",
        "src/server/Pack.server.luau": (
            'local Parts = game:GetService("ServerStorage").Parts\n'
            "local function pack(host)\n"
            "\tfor _, m in Parts.Common:GetChildren() do\n"
            "\t\tm:Clone().Parent = host\n"
            "\tend\n"
            "end\n"
            "return pack\n"
        ),
    })
    assert errors(engine, "src/storage/Parts/Common/Hurt.luau") == []
    got = findings(engine, "src/storage/Parts/Common/Hurt.luau", "local cfg = script.Parent:WaitForChild('Setings')\n")
    assert all(f.severity is not Severity.ERROR for f in got)


# -- the project's own evidence -------------------------------------------------------------------
def test_presence_checked_children_are_not_errors(tmp_path):
    engine = place(tmp_path, {"src/shared/Store.luau": "return {}\n"})
    checked = (
        "local function key(id)\n"
        '\tif script:FindFirstChild("Override") and game.JobId == "" then\n'
        "\t\treturn script.Override.Value\n"
        "\tend\n"
        "\treturn id\n"
        "end\n"
        "return key\n"
    )
    assert errors(engine, "src/shared/Store.luau", checked) == []
    # unchecked, a module under an open service: the place may give it the child - no error,
    # but nothing backs the name (patch mode: a warning)
    assert [(f.rule, f.severity.label) for f in findings(engine, "src/shared/Store.luau", "return script.Override.Value\n")] \
        == [("unverified_instance", "warning")]
    assert [(f.rule, f.severity.label) for f in findings(engine, "src/shared/Store.luau", checked)] == []


def test_code_loaded_by_asset_id_may_create_service_children(tmp_path):
    engine = place(tmp_path, {
        "src/server/Loader.server.luau": "require(1234567)(script)\n",
        "src/server/Use.server.luau": (
            'local Admin = require(game:GetService("ServerScriptService"):WaitForChild("AdminModule"))\n'
            'local x = game:GetService("ReplicatedStorage").Remotes.Missing\n'
        ),
    })
    # the service child: a warning at most; a folder the project closes: still an error
    assert errors(engine, "src/server/Use.server.luau") == [("unknown_instance", 2)]


def test_npm_packages_and_empty_path_directories_are_open(tmp_path):
    (tmp_path / "vendor" / "Lib").mkdir(parents=True)  # a git submodule not checked out
    engine = place(tmp_path, {
        "default.project.json": rojo_project({
            "ReplicatedStorage": {
                "$className": "ReplicatedStorage",
                "Game": {"$path": "game"},
                "Lib": {"$path": "vendor/Lib"},
            },
        }),
        "game/node_modules/@me/maid/src/init.luau": "local require = require(script.Parent.loader).load(script)\nreturn {}\n",
        "game/Main.luau": 'local x = require(game:GetService("ReplicatedStorage").Lib.Anything)\nreturn x\n',
    })
    assert errors(engine, "game/node_modules/@me/maid/src/init.luau") == []
    assert errors(engine, "game/Main.luau") == []


# -- one contract: the guard accepts what the linter accepts -------------------------------------
def _table_names(space: PathSpace, node, kind: int) -> set[str]:
    table = space.get_table(space.table(space.nodeset((node,)), kind))
    return {raw.decode() for raw, _value in table.trie.items()}, table.free


def test_the_guard_takes_the_same_scoped_names(tmp_path):
    engine = place(tmp_path, {
        "src/server/Net.server.luau": (
            'local RS = game:GetService("ReplicatedStorage")\n'
            'local ev = Instance.new("RemoteEvent")\n'
            'ev.Name = "Hit"\n'
            "ev.Parent = RS.Remotes\n"
        ),
    })
    project = engine.project
    space = PathSpace(project, engine.snapshot.names())
    rs = project.service("ReplicatedStorage")
    remotes, templates = rs.child("Remotes"), rs.child("Templates")
    names, free = _table_names(space, remotes, KIND_LOOKUP)
    assert "Hit" in names and not free
    names, free = _table_names(space, templates, KIND_DOT)
    assert "Hit" not in names and "Sword" in names and not free
    # the linter agrees name by name
    for parent, ok in (("Remotes", True), ("Templates", False)):
        got = errors(engine, "src/server/Main.server.luau", f'local x = game.ReplicatedStorage.{parent}.Hit\n')
        assert (got == []) is ok


def test_runtime_names_for_a_file_carry_its_own_facts(tmp_path):
    engine = place(tmp_path, {})
    text = 'local f = Instance.new("Folder")\nf.Name = "Cache"\nf.Parent = script\nprint(script.Cache)\n'
    names = engine.runtime_names_for(text, tmp_path / "src/server/Main.server.luau")
    main = engine.project.instances_for_file("src/server/Main.server.luau")[0]
    assert names.view().verdict(main, "Cache").kind == "created_by_script"
    assert names.view().verdict(main, "Other").kind == "nothing_creates_it"
    assert errors(engine, "src/server/Main.server.luau", text) == []
