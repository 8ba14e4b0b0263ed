"""Every name gets a verdict with its evidence, and severity follows the evidence (issue 40).

Each snippet here is written for this file (none is copied from the corpus); each stands for
one class of false error, wrong fix or silent invention that real games showed:

* member vs child: a name that is no member of an instance's class reads a child, so it is
  never "fixed" into a member (``InventoryChanged`` -> ``AncestryChanged``, ``Close`` ->
  ``Clone``, ``Change`` -> ``Changed``); ``restricted_api`` never fires where the name reads a
  child (``Attributes``, ``Tags``);
* an agent's invented name under an open container reaches the model in patch mode (a
  warning, through the hook) and is a hint in editor mode;
* a misspelt ``WaitForChild`` sibling; ``GetService`` typos outside the DataModel;
* frameworks and packages as evidence: Nevermore's loader links, Wally aliases before
  ``wally install``, Luau string requires with ``.luaurc`` aliases;
* template modules cloned into a host, and place-only children of modules under open
  services.
"""

from __future__ import annotations

import json
from pathlib import Path

from luaguard.agents.hook import HookOptions, run_hook
from luaguard.engine import Engine
from luaguard.findings import Severity
from luaguard.fixes import fix_text
from project_files import rojo_project, write_files

# ReplicatedStorage has no $path: open (the place keeps RemoteEvents made in Studio)
GAME = rojo_project({
    "ReplicatedStorage": {"Shared": {"$path": "src/shared"}},
    "ServerScriptService": {"$className": "ServerScriptService", "$path": "src/server"},
    "StarterGui": {"$className": "StarterGui", "$path": "src/gui"},
    "StarterPlayer": {"StarterPlayerScripts": {"$path": "src/client"}},
})


def game(tmp_path: Path, files: dict[str, str] | None = None) -> Engine:
    base = {"default.project.json": GAME, "src/shared/Util.luau": "return {}\n",
            "src/shared/Config/init.luau": "return {}\n", "src/shared/Config/Values.luau": "return {}\n",
            "src/server/Main.server.luau": "print('main')\n", "src/client/Hello.client.luau": "print('hi')\n"}
    base.update(files or {})
    write_files(tmp_path, base)
    return Engine(tmp_path)


def lint(engine: Engine, rel: str, text: str, mode: str = "editor"):
    return engine.lint_text(text, engine.root / rel, mode=mode)


def shown(found, at_least: Severity = Severity.WARNING):
    return [(f.rule, f.range.start.line + 1) for f in found if f.severity <= at_least]


# -- member vs child ----------------------------------------------------------------------------
def test_a_name_that_is_no_member_reads_a_child_and_is_never_fixed_into_a_member(tmp_path):
    engine = game(tmp_path)
    text = ("local RS = game:GetService('ReplicatedStorage')\n"
            "RS.InventoryChanged:FireServer()\n"                       # a RemoteEvent made in Studio
            "local shopFrame: Frame = script.Parent:WaitForChild('Shop')\n"
            "shopFrame.Close.MouseButton1Click:Connect(print)\n"       # a child button, not :Clone
            "print(script.Parent.Change.Value)\n")                     # a child value, not .Changed
    rel = "src/client/Shop.client.luau"
    found = lint(engine, rel, text)
    assert [f for f in found if f.rule == "unknown_member"] == []
    assert shown(found) == []  # nothing above a hint in editor mode
    result = fix_text(engine, text, engine.root / rel)
    assert result.text == text  # the safe fix changes no valid line
    unsafe = fix_text(engine, text, engine.root / rel, unsafe=True)
    assert "AncestryChanged" not in unsafe.text and ".Clone." not in unsafe.text and ".Changed.Value" not in unsafe.text


def test_members_still_fail_where_no_child_can_exist(tmp_path):
    engine = game(tmp_path)
    text = ('local p = Instance.new("Part")\n'
            "print(p.Anchord)\n"                      # a new part has no children: a member miss
            "p.Transparancy = 1\n"                    # an assignment sets a property, never a child
            "local f = script.Parent :: Frame\n"
            "f.Visble = false\n")                     # only a cast claims the class: a warning
    found = [f for f in lint(engine, "src/client/Ui.client.luau", text) if f.rule == "unknown_member"]
    assert [(f.range.start.line + 1, f.severity.label, f.suggestions[0]) for f in found] == [
        (2, "error", "Anchored"), (3, "error", "Transparency"), (5, "warning", "Visible")]
    assert found[0].fix.safe and found[1].fix.safe and not found[2].fix.safe


def test_not_scriptable_members_read_children(tmp_path):
    # `Attributes` and `Tags` are NotScriptable members in the API dump: scripts see a child
    engine = game(tmp_path)
    text = ("local folder = game:GetService('ReplicatedStorage'):WaitForChild('Data')\n"
            "print(folder.Attributes, folder.Tags)\n"
            "local m = Instance.new('Model')\n"
            "print(m.Tags)\n")
    found = lint(engine, "src/server/Data.server.luau", text)
    assert [f for f in found if f.rule == "restricted_api"] == []


# -- agent inventions ------------------------------------------------------------------------------
def _post(engine: Engine, rel: str, old: str, new: str) -> bytes:
    path = engine.root / rel
    return json.dumps({"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": str(engine.root),
                       "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": str(path), "content": new},
                       "tool_response": {"originalFile": old}, "tool_use_id": "t1"}).encode()


def test_an_invented_remote_under_an_open_service_reaches_the_model(tmp_path):
    engine = game(tmp_path, {"src/server/Net.server.luau": (
        "local remotes = game:GetService('ReplicatedStorage'):WaitForChild('Remotes')\n"
        "remotes.Buy.OnServerEvent:Connect(print)\n")})
    rel = "src/server/Main.server.luau"
    old = (tmp_path / rel).read_text()
    new = old + "game.ReplicatedStorage.Remotes.Foo.OnServerEvent:Connect(print)\n"
    # patch mode (what the hook lints): a warning naming what was looked for
    found = lint(engine, rel, new, mode="patch")
    assert [(f.rule, f.severity.label) for f in found] == [("unverified_instance", "warning")]
    assert "'Foo' is not in the project under game.ReplicatedStorage.Remotes" in found[0].message
    # through Claude Code's PostToolUse: the warning is fed to the model (exit 2, stderr)
    (tmp_path / rel).write_text(new)
    resp = run_hook(_post(engine, rel, old, new), HookOptions(project=tmp_path))
    assert resp.exit_code == 2 and "'Foo'" in resp.stderr
    # the same line already in a real file, in the editor: a hint only
    assert [(f.rule, f.severity.label) for f in lint(engine, rel, new)] == [("unverified_instance", "hint")]
    # a name another script reads is backed: nothing
    backed = old + "game.ReplicatedStorage.Remotes.Buy:FireClient(nil)\n"
    assert lint(engine, rel, backed, mode="patch") == []


def test_unchanged_rewrites_of_real_files_say_nothing(tmp_path):
    text = "game.ReplicatedStorage.Remotes.PlaceOnly.OnServerEvent:Connect(print)\n"
    engine = game(tmp_path, {"src/server/Old.server.luau": text})
    resp = run_hook(_post(engine, "src/server/Old.server.luau", text, text), HookOptions(project=tmp_path))
    assert resp.exit_code == 0 and resp.stderr == ""


def test_a_misspelt_wait_for_child_sibling(tmp_path):
    engine = game(tmp_path)
    rel = "src/shared/Config/Values.luau"
    found = lint(engine, rel, "local c = script.Parent.Parent:WaitForChild('Utill')\nreturn c\n", mode="patch")
    assert [(f.rule, f.severity.label, f.suggestions[0]) for f in found] == [("unknown_instance", "error", "Util")]
    assert found[0].fix.safe and found[0].fix.new_text == "'Util'"


def test_get_service_typo_outside_the_datamodel_is_an_error(tmp_path):
    engine = game(tmp_path, {"tests/spec.luau": ""})
    found = lint(engine, "tests/spec.luau", "local RS = game:GetService('ReplicatedSttorage')\n")
    assert [(f.rule, f.severity) for f in found] == [("unknown_service", Severity.ERROR)]


# -- frameworks and packages -----------------------------------------------------------------------
NEVERMORE = rojo_project({"ServerScriptService": {"Game": {"$path": "src"}}})
MODULE = "local require = require(script.Parent.loader).load(script)\nlocal Maid = require('Maid')\nreturn {}\n"


def test_nevermore_loader_links(tmp_path):
    write_files(tmp_path, {"default.project.json": NEVERMORE, "src/Server/Thing.luau": MODULE,
                           "src/Server/Other.luau": MODULE,
                           "package.json": json.dumps({"name": "game", "dependencies": {"@quenty/loader": "^10.0.0"}})})
    engine = Engine(tmp_path)
    assert lint(engine, "src/Server/Thing.luau", MODULE) == []
    # a name the loader does not link is still an error
    bad = MODULE.replace("script.Parent.loader", "script.Parent.loadr")
    assert shown(lint(engine, "src/Server/Thing.luau", bad)) == [("unknown_instance", 1)]


def test_without_nevermore_the_loader_is_not_there(tmp_path):
    write_files(tmp_path, {"default.project.json": NEVERMORE, "src/Server/Thing.luau": MODULE})
    engine = Engine(tmp_path)
    assert shown(lint(engine, "src/Server/Thing.luau", MODULE)) == [("unknown_instance", 1)]


def test_wally_aliases_before_wally_install(tmp_path):
    write_files(tmp_path, {
        "default.project.json": rojo_project({
            "ReplicatedStorage": {"$className": "ReplicatedStorage", "Packages": {"$path": "Packages"}},
            "ServerScriptService": {"$className": "ServerScriptService", "$path": "src/server",
                                    "Packages": {"$path": "ServerPackages"}},
        }),
        "wally.toml": ('[package]\nname = "me/game"\nversion = "0.1.0"\nrealm = "shared"\n\n'
                       '[dependencies]\nKnit = "sleitnick/knit@1.7.0"\n\n'
                       '[server-dependencies]\nProfileStore = "me/profilestore@1.0.0"\n'),
        "src/server/Main.server.luau": "",
    })
    engine = Engine(tmp_path)
    rel = "src/server/Main.server.luau"
    good = ("local Knit = require(game:GetService('ReplicatedStorage').Packages.Knit)\n"
            "local PS = require(game:GetService('ServerScriptService').Packages.ProfileStore)\n")
    assert lint(engine, rel, good) == []
    bad = "local Knit = require(game:GetService('ReplicatedStorage').Packages.Knitt)\n"
    [f] = lint(engine, rel, bad)
    assert (f.rule, f.severity, f.suggestions[0]) == ("unknown_instance", Severity.ERROR, "Knit")
    assert "wally.toml [dependencies]" in f.message and f.fix.safe


def test_string_requires_resolve_like_paths(tmp_path):
    write_files(tmp_path, {
        "default.project.json": rojo_project({"ReplicatedStorage": {"$className": "ReplicatedStorage",
                                                                    "Shared": {"$path": "src/shared"}}}),
        ".luaurc": json.dumps({"aliases": {"lib": "src/shared/lib"}}),
        "src/shared/lib/Signal.luau": "return {}\n",
        "src/shared/Util.luau": "return {}\n",
        "src/shared/net/Remote.luau": "",
        "scripts/build.luau": "",
        "scripts/helpers/fs.luau": "return {}\n",
    })
    engine = Engine(tmp_path)
    good = ('local Util = require("../Util")\nlocal Signal = require("@lib/Signal")\n'
            'local Self = require("./Remote")\nlocal Lune = require("@lune/fs")\n')
    assert lint(engine, "src/shared/net/Remote.luau", good) == []
    bad = 'local Util = require("../Utill")\nlocal Signal = require("@lib/Signl")\n'
    found = lint(engine, "src/shared/net/Remote.luau", bad)
    assert [(f.rule, f.range.start.line + 1, f.suggestions[0]) for f in found] == [
        ("unknown_instance", 1, "Util"), ("unknown_instance", 2, "Signal")]
    fixed = fix_text(engine, bad, tmp_path / "src/shared/net/Remote.luau")
    assert fixed.text == 'local Util = require("../Util")\nlocal Signal = require("@lib/Signal")\n'
    # a file the project does not map: the files on disk
    assert lint(engine, "scripts/build.luau", 'local fs = require("./helpers/fs")\n') == []
    [g] = lint(engine, "scripts/build.luau", 'local fs = require("./helpers/fss")\n')
    # (on disk a build or an install may still make it: a warning, its fix unsafe)
    assert (g.rule, g.severity) == ("likely_unknown_instance", Severity.WARNING) and g.suggestions[0] == "fs"
    assert g.fix is None or not g.fix.safe


# -- templates and place-only children --------------------------------------------------------------
def test_a_module_cloned_into_a_gui_reads_its_host(tmp_path):
    engine = game(tmp_path, {
        "src/shared/UI/Tooltip.luau": "local main = script.Parent.main\nmain.Visible = true\nreturn {}\n",
        "src/client/Setup.client.luau": (
            "local gui = script.Parent\n"
            "local tip = game:GetService('ReplicatedStorage').Shared.UI.Tooltip:Clone()\n"
            "tip.Parent = gui\n"),
    })
    found = lint(engine, "src/shared/UI/Tooltip.luau", (tmp_path / "src/shared/UI/Tooltip.luau").read_text())
    assert shown(found, Severity.ERROR) == []


def test_place_only_children_of_a_module_under_an_open_service(tmp_path):
    engine = game(tmp_path, {"src/shared/Effects.luau": "local e = script.emitter:Clone()\nreturn e\n"})
    found = lint(engine, "src/shared/Effects.luau", (tmp_path / "src/shared/Effects.luau").read_text())
    assert shown(found, Severity.ERROR) == []
    # the same module under a closed service: its children are what the project says
    closed = game(tmp_path / "closed", {
        "default.project.json": rojo_project({"ReplicatedStorage": {"$className": "ReplicatedStorage",
                                                                    "$path": "src/shared"}}),
        "src/shared/Effects.luau": "local e = script.emitter:Clone()\nreturn e\n"})
    assert shown(lint(closed, "src/shared/Effects.luau", "local e = script.emitter:Clone()\nreturn e\n")) == [
        ("unknown_instance", 1)]


def test_nevermore_bootstrapped_from_a_script_without_a_package_json(tmp_path):
    # the loader package arrives as a git submodule (an empty folder in the checkout); the
    # game's server script finds LoaderUtils to bootstrap it
    write_files(tmp_path, {
        "default.project.json": rojo_project({"ServerScriptService": {
            "packages": {"$className": "Folder", "game": {"$path": "src/modules"}},
            "Script": {"$path": "src/scripts"}}}),
        "src/scripts/Main.server.luau": (
            "local SSS = game:GetService('ServerScriptService')\n"
            "local loader = SSS:FindFirstChild('LoaderUtils', true).Parent\n"
            "local require = require(loader).bootstrapGame(SSS.packages)\n"),
        "src/modules/Server/Thing.luau": MODULE,
    })
    engine = Engine(tmp_path)
    assert shown(lint(engine, "src/modules/Server/Thing.luau", MODULE)) == []


def test_nevermore_replicates_the_bootstrapped_root_into_a_closed_replicated_storage(tmp_path):
    # bootstrapGame(root) on the server parents a Folder named after the root (the client
    # replica, with its loader links) into ReplicatedStorage; the client bootstraps from it
    client = ("local RS = game:GetService('ReplicatedStorage')\n"
              "local loader = RS:WaitForChild('Arena'):WaitForChild('loader')\n"
              "local require = require(loader).bootstrapGame(loader.Parent)\n")
    write_files(tmp_path, {
        "default.project.json": rojo_project({
            "ReplicatedStorage": {"$path": "src/replicated"},  # closed: a $path folder
            "ServerScriptService": {"Arena": {"$path": "src/modules"}, "Boot": {"$path": "src/server"}},
            "StarterPlayer": {"StarterPlayerScripts": {"$path": "src/client"}}}),
        "src/replicated/Assets/.gitkeep": "",
        "src/server/Main.server.luau": (
            "local SSS = game:GetService('ServerScriptService')\n"
            "local loader = SSS:FindFirstChild('LoaderUtils', true).Parent\n"
            "local require = require(loader).bootstrapGame(SSS.Arena)\n"),
        "src/client/Main.client.luau": client,
        "src/modules/Client/Thing.luau": MODULE,
    })
    engine = Engine(tmp_path)
    assert shown(lint(engine, "src/client/Main.client.luau", client)) == []
    # another name under the closed ReplicatedStorage is still certain
    other = client.replace("'Arena'", "'Areena'")
    assert shown(lint(engine, "src/client/Main.client.luau", other)) == [("unknown_instance", 2)]
    # the legacy loader (LoaderUtils.toWallyFormat) parents a Folder named Packages there instead
    legacy = "local packages = game:GetService('ReplicatedStorage'):WaitForChild('Packages')\n"
    assert shown(lint(engine, "src/client/Main.client.luau", legacy)) == []


def test_get_service_is_the_service_whatever_node_the_project_makes_of_it(tmp_path):
    # a service whose $path folder holds init.client.luau: the project's node is a LocalScript,
    # but GetService returns the service, whose class has the method
    write_files(tmp_path, {
        "default.project.json": rojo_project({"ReplicatedFirst": {"$path": "src/first"}}),
        "src/first/init.client.luau": "print('boot')\n"})
    engine = Engine(tmp_path)
    text = "local RF = game:GetService('ReplicatedFirst')\nRF:RemoveDefaultLoadingScreen()\nRF:RemoveDefaultLoadingScrean()\n"
    found = lint(engine, "src/first/init.client.luau", text)
    assert [(f.rule, f.range.start.line + 1, f.severity.label) for f in found] == [("unknown_member", 3, "error")]
    assert found[0].suggestions[0] == "RemoveDefaultLoadingScreen"


def test_a_child_found_into_a_local_and_tested_is_not_an_error(tmp_path):
    engine = game(tmp_path)
    text = ("local extra = script:FindFirstChild('Extra')\n"
            "if extra then\n\tprint(extra.Value)\nend\n"
            "local deep = script.Parent and script.Parent:FindFirstChild('Deeper')\n"
            "if not deep then return end\n")
    assert shown(lint(engine, "src/server/Main.server.luau", text), Severity.ERROR) == []
    # a loop that waits until a harness parents it: also a check
    polled = "local r\nwhile r == nil do\n\tr = game:FindFirstChild('Result')\n\ttask.wait(1)\nend\n"
    assert shown(lint(engine, "src/server/Main.server.luau", polled), Severity.ERROR) == []
    # not tested: the code assumes the child is there
    assert shown(lint(engine, "src/server/Main.server.luau", "print(script:FindFirstChild('Extra').Value)\n"),
                 Severity.ERROR) == [("unknown_instance", 1)]


def test_a_type_named_like_a_class_is_the_files_type(tmp_path):
    engine = game(tmp_path)
    text = ("export type Object = {Name: string, _maid: any}\n"
            "local function new(): Object\n"
            "\tlocal self = setmetatable({} :: any, {}) :: Object\n"
            "\tself._maid = {}\n\tself:Setup()\n\treturn self\nend\nreturn new\n")
    assert [f for f in lint(engine, "src/shared/Util.luau", text) if f.rule == "unknown_member"] == []


def test_tool_calls_read_the_same_verdicts(tmp_path):
    # a Studio tool acting on a package Wally will link in: not "missing"; a service the
    # engine owns holds no such child: an error
    from luaguard.toolcalls.api import validate_calls

    write_files(tmp_path, {
        "default.project.json": rojo_project({
            "ReplicatedStorage": {"$className": "ReplicatedStorage", "Packages": {"$path": "Packages"}}}),
        "wally.toml": '[package]\nname = "me/game"\nversion = "0.1.0"\nrealm = "shared"\n\n[dependencies]\nKnit = "a/knit@1.0.0"\n',
    })
    engine = Engine(tmp_path)

    def call(path: str) -> dict:
        [res] = validate_calls(engine, {"call": {"name": "modify_property", "arguments": {
            "instancePath": path, "property": "Name", "value": "X"}}})
        return res

    assert call("ReplicatedStorage.Packages.Knit")["warnings"] == [] and call("ReplicatedStorage.Packages.Knit")["valid"]
    bad = call("RunService.Gadget")
    assert not bad["valid"] and bad["errors"][0]["code"] == "unknown_path"


def test_string_requires_written_for_darklua_path_mode(tmp_path):
    write_files(tmp_path, {
        "default.project.json": rojo_project({"ReplicatedStorage": {"$className": "ReplicatedStorage",
                                                                    "Shared": {"$path": "src/shared"}}}),
        "darklua.json": json.dumps({"process": [{"rule": "convert_require", "current": {
            "name": "path", "sources": {"@Shared": "src/shared/"}}, "target": {"name": "roblox"}}]}),
        "src/shared/Util.luau": "return {}\n",
        "src/shared/Palette/init.luau": "",
        "src/shared/Palette/Light.luau": "return {}\n",
    })
    engine = Engine(tmp_path)
    rel = "src/shared/Palette/init.luau"
    # `./` from an init file's own folder; an alias from the rule's sources; a folder's init
    good = 'local L = require("./Light")\nlocal U = require("@Shared/Util")\nlocal P = require("@Shared/Palette/init")\n'
    assert lint(engine, rel, good) == []
    [f] = lint(engine, rel, 'local U = require("@Shared/Utill")\n')
    assert (f.rule, f.severity, f.suggestions[0]) == ("unknown_instance", Severity.ERROR, "Util")


def test_a_generated_folder_git_ignores_inside_a_synced_folder(tmp_path):
    # a code generator writes src/shared/net/ at build time; .gitignore keeps it out of the
    # checkout: the closed folder may hold it
    engine = game(tmp_path, {".gitignore": "/src/shared/net\n*.rbxl\n"})
    text = "local Net = require(game:GetService('ReplicatedStorage').Shared.net.Server)\n"
    assert shown(lint(engine, "src/server/Main.server.luau", text), Severity.ERROR) == []
    # a name nothing ignores is still an error
    other = "local Net = require(game:GetService('ReplicatedStorage').Shared.network)\n"
    assert shown(lint(engine, "src/server/Main.server.luau", other), Severity.ERROR) == [("unknown_instance", 1)]


def test_a_service_far_from_every_service_outside_the_datamodel_is_a_warning(tmp_path):
    # a test runner's host may add services the API dump does not list; a near miss of a
    # real service fails anywhere
    engine = game(tmp_path, {"bin/run.luau": ""})
    found = lint(engine, "bin/run.luau", "local P = game:GetService('ProcessService')\n")
    assert [(f.rule, f.severity) for f in found] == [("unknown_service", Severity.WARNING)]
    found = lint(engine, "src/server/Main.server.luau", "local P = game:GetService('ProcessService')\n")
    assert [(f.rule, f.severity) for f in found] == [("unknown_service", Severity.ERROR)]


def test_a_misspelt_member_of_the_local_player_is_a_member_miss(tmp_path):
    # scripts give players children at run time (named by expressions): a child may exist, but
    # only one no script spells - a near miss of a member there is the member, misspelt
    engine = game(tmp_path, {"src/server/Stats.server.luau": (
        "game:GetService('Players').PlayerAdded:Connect(function(player)\n"
        "\tlocal v = Instance.new('IntValue')\n\tv.Name = player.Name .. 'Data'\n\tv.Parent = player\nend)\n")})
    text = "local player = game:GetService('Players').LocalPlayer\nlocal c = player.Charcter\nlocal d = player.SessionData\n"
    found = lint(engine, "src/client/Hello.client.luau", text)
    assert [(f.rule, f.range.start.line + 1, f.severity.label) for f in found if f.severity <= Severity.WARNING] == [
        ("unknown_member", 2, "error")]
    assert found[0].suggestions[0] == "Character"


def test_a_fix_is_a_candidate_of_the_same_kind(tmp_path):
    # the only near miss of the method `Activate` is the event `Activated`: named, not applied
    engine = game(tmp_path)
    text = "local b = Instance.new('TextButton')\nb:Activate()\nb:Destory()\n"
    found = lint(engine, "src/client/Hello.client.luau", text)
    assert [(f.range.start.line + 1, f.suggestions[0], f.fix.new_text if f.fix else None) for f in found] == [
        (2, "Activated", None), (3, "Destroy", "Destroy")]


def test_a_cloned_module_reading_a_child_of_its_host_named_like_a_member(tmp_path):
    # the module is cloned into a GUI whose button is named Close (a near miss of the method
    # Clone): a child read, never "fixed" into the member
    engine = game(tmp_path, {
        "src/shared/UI/Dialog.luau": "local close = script.Parent.Close\nreturn close\n",
        "src/client/Setup.client.luau": (
            "local d = game:GetService('ReplicatedStorage').Shared.UI.Dialog:Clone()\n"
            "d.Parent = script.Parent\n"),
    })
    found = lint(engine, "src/shared/UI/Dialog.luau", "local close = script.Parent.Close\nreturn close\n")
    assert [f for f in found if f.rule == "unknown_member" or f.severity is Severity.ERROR] == []


def test_a_safe_fix_needs_a_certain_finding(tmp_path):
    # a receiver that may be no Instance (a test asserting that a wrong name answers false):
    # the near miss of a class is a warning, and its fix is never applied unattended
    engine = game(tmp_path, {"tests/isa.spec.luau": ""})
    text = "local function check(thing)\n\tassert(thing:IsA('Paart') == false)\nend\nreturn check\n"
    found = lint(engine, "tests/isa.spec.luau", text)
    assert [(f.rule, f.severity.label, f.suggestions[0]) for f in found] == [("unknown_class", "warning", "Part")]
    assert found[0].fix is not None and not found[0].fix.safe
    assert fix_text(engine, text, engine.root / "tests/isa.spec.luau").text == text
    # on a real Instance the same name is certain: an error with a safe fix
    sure = "local p = Instance.new('Part')\nprint(p:IsA('Paart'))\n"
    [f] = lint(engine, "src/server/Main.server.luau", sure)
    assert (f.rule, f.severity.label, f.fix.safe) == ("unknown_class", "error", True)


def test_a_child_tested_by_an_if_expression_is_not_an_error(tmp_path):
    # an optional dependency: `if X:FindFirstChild("N") then X.N else nil` copes with N's absence
    engine = game(tmp_path)
    rel = "src/shared/Config/Values.luau"
    text = ("local Shared = script.Parent.Parent\n"
            "local Logger = if Shared:FindFirstChild('Logger') then require(Shared.Logger) else nil\n"
            "return Logger\n")
    assert shown(lint(engine, rel, text)) == []
    # without the test the same read is certain (the folder is mapped from disk)
    bare = "local Shared = script.Parent.Parent\nlocal Logger = require(Shared.Logger)\nreturn Logger\n"
    assert shown(lint(engine, rel, bare)) == [("unknown_instance", 2)]


def test_code_loaded_by_asset_id_does_not_reach_the_datamodels_own_children(tmp_path):
    # a loader (require(<asset id>)) may create anything under the services, but the
    # DataModel's children are services: game.GmaeId is still a member miss
    engine = game(tmp_path, {"src/server/Loader.server.luau": "require(1234567)\n"})
    found = lint(engine, "src/server/Main.server.luau", "print(game.GmaeId, game.PlaceId)\n")
    assert [(f.rule, f.severity.label, f.suggestions[0]) for f in found] == [("unknown_member", "error", "GameId")]


def test_a_git_submodule_not_checked_out_may_hold_any_name(tmp_path):
    # Packages/json-luau is a submodule whose checkout is empty; once checked out its own
    # project file may name it `json`: a name beside it is not certainly missing
    files = {
        "default.project.json": rojo_project({"ReplicatedStorage": {"$className": "ReplicatedStorage",
                                                                     "Packages": {"$path": "Packages"}}}),
        "Packages/Signal.luau": "return {}\n",
        "Packages/json-luau/.keep": "",
        "src/Net.luau": "",
    }
    text = "local Packages = game:GetService('ReplicatedStorage').Packages\nlocal json = require(Packages.json)\n"
    write_files(tmp_path, files)
    (tmp_path / "Packages/json-luau/.keep").unlink()
    assert shown(lint(Engine(tmp_path), "src/Net.luau", text)) == [("unknown_instance", 2)]
    (tmp_path / ".gitmodules").write_text('[submodule "Packages/json-luau"]\n\tpath = Packages/json-luau\n'
                                          "\turl = https://example.invalid/json-luau.git\n")
    assert shown(lint(Engine(tmp_path), "src/Net.luau", text)) == []
    # checked out (not empty): its files say what it holds, and the miss is certain again
    write_files(tmp_path, {"Packages/json-luau/init.luau": "return {}\n"})
    assert shown(lint(Engine(tmp_path), "src/Net.luau", text)) == [("unknown_instance", 2)]


def test_a_global_the_code_tests_for_is_a_warning_unless_it_is_a_typo(tmp_path):
    engine = game(tmp_path)
    rel = "src/server/Main.server.luau"
    text = ("if __HARNESS__ then print('under the harness') end\n"
            "local fallback = __CONFIG__ or {}\n"
            "print(__COUNTER__)\n")
    found = lint(engine, rel, text)
    assert [(f.range.start.line + 1, f.severity.label) for f in found] == [(1, "warning"), (2, "warning"), (3, "error")]
    # a near miss of a local is a typo even in a condition
    typo = "local player = nil\nif plaer then print(player) end\n"
    [f] = lint(engine, rel, typo)
    assert (f.rule, f.severity.label, f.suggestions[0]) == ("undefined_variable", "error", "player")
