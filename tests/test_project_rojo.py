"""Rojo sync rules (Rojo 7.x, see luaguard/project/rojo.py) over small fixture projects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from luaguard.project import Instance, ProjectIndex, load_project
from luaguard.project.rojo import compile_glob, default_rule

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "projects"


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def node(index: ProjectIndex, dotted: str) -> Instance:
    inst = index.resolve_path(dotted)
    assert inst is not None, f"{dotted} not found"
    return inst


@pytest.fixture(scope="module")
def place() -> ProjectIndex:
    return load_project(FIXTURES / "place")


# --- file types -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dotted, cls",
    [
        ("ReplicatedStorage.Shared.Util", "ModuleScript"),  # .luau
        ("ReplicatedStorage.Shared.Config", "ModuleScript"),  # .json
        ("ReplicatedStorage.Shared.Settings", "ModuleScript"),  # .toml
        ("ReplicatedStorage.Shared.Data", "ModuleScript"),  # .yaml
        ("ReplicatedStorage.Shared.Readme", "StringValue"),  # .txt
        ("ReplicatedStorage.Shared.Strings", "LocalizationTable"),  # .csv
        ("ReplicatedStorage.Shared.Prefab", "Model"),  # .model.json
        ("ServerScriptService.Main", "Script"),  # .server.luau
        ("ServerScriptService.Old", "Script"),  # .server.lua
        ("StarterPlayer.StarterPlayerScripts.Client.Input", "LocalScript"),  # .client.luau
        ("StarterPlayer.StarterPlayerScripts.Client.Helper", "Script"),  # .plugin.luau
    ],
)
def test_file_classes(place: ProjectIndex, dotted: str, cls: str) -> None:
    assert node(place, dotted).class_name == cls


def test_names_strip_only_the_rule_suffix(place: ProjectIndex) -> None:
    mods = node(place, "ReplicatedStorage.Shared.Modules")
    assert set(mods.children) == {"Combat", "Combat.spec"}


def test_unknown_extensions_are_ignored(place: ProjectIndex) -> None:
    shared = node(place, "ReplicatedStorage.Shared")
    assert "NOTES" not in shared.children and "NOTES.md" not in shared.children
    assert not place.instances_for_file("src/shared/NOTES.md")


def test_script_run_contexts_legacy_default(place: ProjectIndex) -> None:
    assert node(place, "ServerScriptService.Main").run_context == "Legacy"
    assert node(place, "StarterPlayer.StarterPlayerScripts.Client.Helper").run_context == "Plugin"
    assert node(place, "StarterPlayer.StarterPlayerScripts.Client.Input").run_context is None


def test_init_files_make_the_directory_the_script(place: ProjectIndex) -> None:
    modules = node(place, "ReplicatedStorage.Shared.Modules")
    assert modules.class_name == "ModuleScript"
    assert modules.dir_path == "src/shared/Modules"
    assert place.file_for_instance(modules) == "src/shared/Modules/init.luau"
    assert "init" not in modules.children
    tool = node(place, "ServerScriptService.Tool")
    assert tool.class_name == "Script" and set(tool.children) == {"Handler"}
    menu = node(place, "StarterGui.MainMenu")
    assert menu.class_name == "LocalScript" and "Buttons" in menu.children


def test_init_priority_order(tmp_path: Path) -> None:
    # init.luau beats init.server.luau beats init.client.lua beats init.csv (Rojo's list)
    write(tmp_path, {
        "default.project.json": '{"name": "P", "tree": {"$path": "src"}}',
        "src/A/init.luau": "", "src/A/init.server.luau": "", "src/A/init.csv": "",
        "src/B/init.client.lua": "", "src/B/init.csv": "", "src/B/init.plugin.luau": "",
        "src/C/init.csv": "",
        "src/D/init.plugin.lua": "",
    })
    index = load_project(tmp_path)
    kids = index.root.children
    assert kids["A"].class_name == "ModuleScript"
    assert kids["A"].children == {}  # the other init files never become instances
    assert kids["B"].class_name == "LocalScript"
    assert kids["C"].class_name == "LocalizationTable"
    assert kids["D"].class_name == "Script" and kids["D"].run_context == "Plugin"


def test_directories_become_folders(place: ProjectIndex) -> None:
    assert node(place, "ReplicatedStorage.Shared").class_name == "Folder"
    assert node(place, "ReplicatedStorage.Shared").dir_path == "src/shared"


def test_model_json_children_and_names(place: ProjectIndex) -> None:
    prefab = node(place, "ReplicatedStorage.Shared.Prefab")
    # the top-level "Name" is ignored since Rojo 6: the file name wins
    assert prefab.name == "Prefab"
    assert prefab.children["Handle"].class_name == "Part"
    assert prefab.children["Attachment"].class_name == "Attachment"  # unnamed: named after its class
    assert prefab.children["Nested"].children["Value"].class_name == "IntValue"  # Name/ClassName/Children aliases
    assert prefab.open_reason is None


def test_empty_model_json_is_no_instance(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": '{"name": "P", "tree": {"$path": "src"}}',
                     "src/Empty.model.json": "", "src/init.luau": ""})
    assert "Empty" not in load_project(tmp_path).root.children


def test_rbxm_and_rbxmx_are_open(place: ProjectIndex) -> None:
    assets = node(place, "ReplicatedStorage.Assets")
    assert assets.is_open and assets.class_name == "Model" and assets.class_guessed
    gui = node(place, "ReplicatedStorage.Gui")
    assert gui.is_open and gui.class_name == "ScreenGui" and not gui.class_guessed


def test_rbxm_class_from_project_inference(tmp_path: Path) -> None:
    write(tmp_path, {
        "default.project.json": json.dumps({"name": "P", "tree": {"$className": "DataModel", "Workspace": {
            "Terrain": {"$path": "terrain.rbxm"}}}}),
        "terrain.rbxm": b"<roblox!\x00\x01",
    })
    terrain = load_project(tmp_path).resolve_path("Workspace.Terrain")
    assert terrain is not None and terrain.class_name == "Terrain" and terrain.is_open
    assert not terrain.class_guessed  # implied by the name under Workspace


# --- project nodes ----------------------------------------------------------------------------------


def test_service_class_inference_and_open_defaults(place: ProjectIndex) -> None:
    rs = place.datamodel.child("ReplicatedStorage")
    assert rs is not None and rs.class_name == "ReplicatedStorage"
    assert rs.is_open  # no $path: $ignoreUnknownInstances defaults to true
    sss = place.datamodel.child("ServerScriptService")
    assert sss is not None and not sss.is_open  # $path given: closed
    assert node(place, "StarterPlayer.StarterPlayerScripts").class_name == "StarterPlayerScripts"


def test_explicit_ignore_unknown_instances_false_closes(place: ProjectIndex) -> None:
    assert not node(place, "ReplicatedStorage.Closed").is_open


def test_workspace_is_open_and_has_engine_children(place: ProjectIndex) -> None:
    ws = node(place, "Workspace")
    assert ws.is_open
    assert node(place, "Workspace.Terrain").class_name == "Terrain"
    assert node(place, "Workspace.Map").class_name == "Model"


def test_workspace_closed_only_when_explicit(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "DataModel",
        "Workspace": {"$path": "ws", "$ignoreUnknownInstances": False},
        "Lighting": {"$path": "light"},
    }}), "ws/Part.model.json": '{"className": "Part"}', "light/Sky.model.json": '{"className": "Sky"}'})
    index = load_project(tmp_path)
    assert not index.resolve_path("Workspace").is_open
    assert index.resolve_path("Workspace.Part") is not None
    assert not index.resolve_path("Lighting").is_open


def test_workspace_with_path_but_no_explicit_flag_stays_open(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "DataModel", "Workspace": {"$path": "ws"}}}), "ws/a.luau": ""})
    assert load_project(tmp_path).resolve_path("Workspace").is_open


def test_missing_path_is_open_and_info_problem(place: ProjectIndex) -> None:
    pkgs = node(place, "ReplicatedStorage.Packages")
    assert pkgs.is_open and "missing" in pkgs.open_reason
    infos = [p for p in place.problems if p.severity == "info" and "Packages" in p.message]
    assert len(infos) == 1
    assert infos[0].file == "default.project.json" and infos[0].line == 10


def test_names_with_spaces(place: ProjectIndex) -> None:
    thing = place.resolve_path('game["Named Thing"]')
    assert thing is not None and thing.class_name == "Folder"
    assert thing.path == 'game["Named Thing"]'


def test_class_name_with_path_to_folder(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "Folder",
        "Cfg": {"$className": "Configuration", "$path": "cfg"},
        "Bad": {"$className": "Folder", "$path": "x.luau"},
    }}), "cfg/a.luau": "", "x.luau": ""})
    index = load_project(tmp_path)
    assert index.root.children["Cfg"].class_name == "Configuration"
    assert "a" in index.root.children["Cfg"].children
    # $className with a $path that is not a Folder is a Rojo error; the file's class is kept
    assert index.root.children["Bad"].class_name == "ModuleScript"
    assert any(p.severity == "error" and "/tree/Bad/$className" in p.message for p in index.problems)


def test_node_without_class_or_path_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "DataModel", "Mystery": {}}})})
    index = load_project(tmp_path)
    assert index.datamodel.children["Mystery"].is_open
    assert any("needs $className" in p.message for p in index.problems)


def test_unknown_class_name_warns(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "DataModel", "X": {"$className": "Foldr"}}})})
    index = load_project(tmp_path)
    assert any(p.severity == "warning" and '"Foldr" is not a known Roblox class' in p.message for p in index.problems)


def test_optional_path(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "Folder",
        "Here": {"$path": {"optional": "here"}},
        "Gone": {"$path": {"optional": "gone"}},
    }}), "here/a.luau": ""})
    index = load_project(tmp_path)
    assert "a" in index.root.children["Here"].children
    assert index.root.children["Gone"].is_open


def test_same_path_twice_maps_file_to_two_instances(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "Folder", "A": {"$path": "lib"}, "B": {"$path": "lib"}}}), "lib/M.luau": ""})
    index = load_project(tmp_path)
    paths = sorted(i.path for i in index.instances_for_file("lib/M.luau"))
    assert paths == ["P.A.M", "P.B.M"]


def test_path_children_and_project_children_merge(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "DataModel",
        "ReplicatedStorage": {"$path": "shared", "Extra": {"$className": "Folder"}, "Dup": {"$className": "Folder"}},
    }}), "shared/Dup.luau": "", "shared/M.luau": ""})
    rs = load_project(tmp_path).resolve_path("ReplicatedStorage")
    assert set(rs.children) == {"Extra", "Dup", "M"}
    assert rs.children["Dup"].class_name == "ModuleScript"  # the $path child comes first
    assert [d.class_name for d in rs.duplicates] == ["Folder"]


def test_properties_do_not_change_the_tree_but_run_context_is_read() -> None:
    index = load_project(FIXTURES / "runcontext")
    boot = index.resolve_path("ReplicatedFirst.Boot")
    assert boot.class_name == "Script" and boot.run_context == "Legacy"


def test_emit_legacy_scripts_false() -> None:
    index = load_project(FIXTURES / "runcontext")
    sss = index.resolve_path("ServerScriptService")
    assert sss.children["Server"].class_name == "Script" and sss.children["Server"].run_context == "Server"
    assert sss.children["Client"].class_name == "Script" and sss.children["Client"].run_context == "Client"
    assert sss.children["Plug"].run_context == "Plugin"
    assert sss.children["Mod"].class_name == "ModuleScript"
    assert sss.children["Forced"].run_context == "Client"  # RunContext from Forced.meta.json


# --- nested projects ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nested() -> ProjectIndex:
    return load_project(FIXTURES / "nested")


def test_nested_project_via_directory_path(nested: ProjectIndex) -> None:
    inner = nested.resolve_path("ReplicatedStorage.Inner")
    # the outer key names the instance; the inner project's tree gives class and children
    assert inner is not None and inner.class_name == "ModuleScript" and "Part" in inner.children
    assert "libs/inner/default.project.json" in inner.file_paths


def test_nested_project_via_file_path(nested: ProjectIndex) -> None:
    via = nested.resolve_path("ReplicatedStorage.ViaFile")
    assert via.class_name == "Folder" and via.is_open  # nested root without $path: open by default
    assert "other.project.json" in via.file_paths
    assert nested.resolve_path("ReplicatedStorage.ViaFile.Code.A").class_name == "ModuleScript"


def test_directory_with_default_project_becomes_that_project(nested: ProjectIndex) -> None:
    code = nested.resolve_path("ReplicatedStorage.Code")
    # src/Pkg holds default.project.json named "PackageName": Rojo names the instance after it
    assert "PackageName" in code.children and "Pkg" not in code.children
    pkg = code.children["PackageName"]
    assert pkg.class_name == "ModuleScript" and set(pkg.children) == {"Helper"}
    assert not nested.instances_for_file("src/Pkg/stray.lua")


# --- meta files ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def meta() -> ProjectIndex:
    return load_project(FIXTURES / "meta")


def test_init_meta_class_name(meta: ProjectIndex) -> None:
    assert meta.resolve_path("ServerStorage.Config").class_name == "Configuration"
    assert "src/Config/init.meta.json" in meta.resolve_path("ServerStorage.Config").file_paths


def test_adjacent_meta_class_name_is_ignored_with_warning(meta: ProjectIndex) -> None:
    assert meta.resolve_path("ServerStorage.Config.Limit").class_name == "StringValue"
    assert any(p.file == "src/Config/Limit.meta.json" and p.severity == "warning" for p in meta.problems)


def test_init_meta_class_name_on_script_dir_is_an_error(meta: ProjectIndex) -> None:
    assert meta.resolve_path("ServerStorage.Scripted").class_name == "Script"
    err = [p for p in meta.problems if p.file == "src/Scripted/init.meta.json"]
    assert err and err[0].severity == "error" and err[0].line == 1


def test_meta_ignore_unknown_instances_opens(meta: ProjectIndex) -> None:
    assert meta.resolve_path("ServerStorage.Loose").is_open
    assert meta.resolve_path("ServerStorage.Open").is_open
    assert not meta.resolve_path("ServerStorage.Config").is_open


def test_malformed_meta_is_a_problem_not_a_crash(meta: ProjectIndex) -> None:
    broken = [p for p in meta.problems if p.file == "src/Broken.meta.json"]
    assert broken and broken[0].severity == "error" and broken[0].line == 2
    assert meta.resolve_path("ServerStorage.Broken").class_name == "ModuleScript"
    assert meta.instances_for_file("src/Broken.meta.json")  # meta files map to their instance


# --- globs and sync rules -------------------------------------------------------------------------------


def test_glob_ignore_paths_with_negation() -> None:
    index = load_project(FIXTURES / "globs")
    root = index.root
    assert set(root.children) == {"Foo", "c", "ignored", "keep"}
    assert set(root.children["ignored"].children) == {"keep"}  # re-included by "!src/ignored/keep.luau"
    assert set(root.children["keep"].children) == {"Bar"}


def test_user_sync_rules() -> None:
    index = load_project(FIXTURES / "syncrules")
    code = index.root.children["Code"]
    assert code.children["Mod"].class_name == "ModuleScript"  # *.source -> moduleScript, stem name
    assert code.children["Table"].class_name == "StringValue"  # suffix ".data.bin" stripped
    assert code.children["Job"].class_name == "Script"
    assert "Gone" not in code.children and "Gone.skip" not in code.children  # use: ignore
    assert "Other" not in code.children and "Other.not" not in code.children  # excluded; no default rule
    assert "Kept" in code.children


@pytest.mark.parametrize(
    "pattern, path, matches",
    [
        ("*.spec.lua", "src/deep/a.spec.lua", True),  # `*` crosses `/` (globset default)
        ("**/*.lua", "a.lua", True),
        ("src/**/x.lua", "src/x.lua", True),
        ("src/**", "src", False),
        ("src/{a,b}.lua", "src/b.lua", True),
        ("src/[!a]*.lua", "src/a1.lua", False),
        ("file?.txt", "file1.txt", True),
        ("Packages", "Packages/x", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert bool(compile_glob(pattern).fullmatch(path)) is matches


@pytest.mark.parametrize(
    "name, expected",
    [
        ("a.server.luau", ("server", "a")),
        ("a.client.lua", ("client", "a")),
        ("a.plugin.lua", ("plugin", "a")),
        ("a.spec.luau", ("module", "a.spec")),
        ("x.project.json", ("project", "x")),
        ("x.model.jsonc", ("jsonModel", "x")),
        ("x.meta.json", None),
        ("x.jsonc", ("json", "x")),
        ("x.yml", ("yaml", "x")),
        ("x.rbxmx", ("rbxmx", "x")),
        ("README.md", None),
        ("a.module.luau", ("module", "a.module")),  # no ".module" rule in Rojo
        (".luau", ("module", ".luau")),  # Rust's file_stem: a leading dot is no extension
    ],
)
def test_default_rules(name: str, expected: tuple[str, str] | None) -> None:
    assert default_rule(name) == expected


def test_name_in_properties_is_ignored_with_warning(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": {
        "$className": "DataModel", "Lighting": {"$properties": {"Name": "Sun", "ClockTime": 3}}}})})
    index = load_project(tmp_path)
    assert index.resolve_path("Lighting") is not None and index.resolve_path("Sun") is None
    assert any("/tree/Lighting/$properties/Name" in p.message and p.severity == "warning" for p in index.problems)
