"""ProjectIndex: discovery, lookups, services, the local player, output, incremental updates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from luaguard.project import ProjectIndex, format_tree, load_project, to_json
from luaguard.project.rojo import parse_jsonc

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "projects"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


@pytest.fixture()
def place(tmp_path: Path) -> tuple[Path, ProjectIndex]:
    root = tmp_path / "place"
    shutil.copytree(FIXTURES / "place", root)
    return root, load_project(root)


def tree_signature(index: ProjectIndex) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    return sorted((n.path, n.class_name, n.open_reason, tuple(n.file_paths))
                  for n in [index.root, *index.root.descendants()])


# --- discovery ---------------------------------------------------------------------------------------


def test_discovery_prefers_default_project(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": '{"name": "D", "tree": {"$className": "Folder"}}',
                     "other.project.json": '{"name": "O", "tree": {"$className": "Folder"}}',
                     "sourcemap.json": '{"name": "S", "className": "Folder"}'})
    index = load_project(tmp_path)
    assert index.kind == "rojo" and index.root.name == "D"
    assert index.project_file == tmp_path / "default.project.json"
    assert index.root_dir.is_absolute()


def test_discovery_single_project_file(tmp_path: Path) -> None:
    write(tmp_path, {"game.project.json": '{"tree": {"$className": "Folder"}}'})
    index = load_project(tmp_path)
    assert index.root.name == "game"  # no "name": the file name minus .project.json


def test_discovery_several_projects_falls_back_with_warning(tmp_path: Path) -> None:
    write(tmp_path, {"a.project.json": '{"name": "A", "tree": {"$className": "Folder"}}',
                     "b.project.json": '{"name": "B", "tree": {"$className": "Folder"}}'})
    index = load_project(tmp_path)
    assert index.kind == "none"
    assert any("several project files" in p.message for p in index.problems)
    assert load_project(tmp_path, project_file="b.project.json").root.name == "B"


def test_no_project_gives_open_datamodel(tmp_path: Path) -> None:
    index = load_project(tmp_path)
    assert index.kind == "none" and index.project_file is None
    assert index.root is index.datamodel and index.datamodel.is_open
    assert index.service("ReplicatedStorage").is_open


def test_library_root_parent_unknown() -> None:
    index = load_project(FIXTURES / "library")
    assert index.root.name == "Lib" and index.root.class_name == "ModuleScript"
    assert index.root.parent is None
    assert index.datamodel is not index.root and index.datamodel.is_open
    assert index.resolve_path("Lib.Util.Table").class_name == "ModuleScript"


def test_default_project_name_from_folder(tmp_path: Path) -> None:
    root = tmp_path / "MyGame"
    write(root, {"default.project.json": '{"tree": {"$className": "Folder"}}'})
    assert load_project(root).root.name == "MyGame"


# --- lookups ------------------------------------------------------------------------------------------


def test_instances_for_file_accepts_any_spelling(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    want = index.resolve_path("ReplicatedStorage.Shared.Util")
    assert index.instances_for_file("src/shared/Util.luau") == [want]
    assert index.instances_for_file(root / "src" / "shared" / "Util.luau") == [want]
    assert index.instances_for_file("src\\shared\\Util.luau") == [want]
    assert index.instances_for_file("./src/shared/../shared/Util.luau") == [want]
    assert index.instances_for_file("src/shared/Nope.luau") == []


def test_file_for_instance(place: tuple[Path, ProjectIndex]) -> None:
    _, index = place
    assert index.file_for_instance(index.resolve_path("ServerScriptService.Tool")) == "src/server/Tool/init.server.lua"
    assert index.file_for_instance(index.resolve_path("ReplicatedStorage.Shared")) is None
    assert index.file_for_instance(index.datamodel) == "default.project.json"


@pytest.mark.parametrize(
    "dotted, expected",
    [
        ("game.ReplicatedStorage.Shared.Modules.Combat", "game.ReplicatedStorage.Shared.Modules.Combat"),
        ("ReplicatedStorage.Shared.Util", "game.ReplicatedStorage.Shared.Util"),
        ("workspace.Map", "game.Workspace.Map"),
        ('game["Named Thing"]', 'game["Named Thing"]'),
        ("game['ReplicatedStorage'].Shared", "game.ReplicatedStorage.Shared"),
        ('game:GetService("ServerScriptService").Main', "game.ServerScriptService.Main"),
        ('ReplicatedStorage:WaitForChild("Shared"):FindFirstChild("Util")', "game.ReplicatedStorage.Shared.Util"),
        ("game.ReplicatedStorage.Shared.Modulez", None),
        ("Nope.X", None),
        ("game..X", None),
        ("", None),
    ],
)
def test_resolve_path(place: tuple[Path, ProjectIndex], dotted: str, expected: str | None) -> None:
    _, index = place
    got = index.resolve_path(dotted)
    assert (got.path if got else None) == expected


def test_resolve_partial_reports_the_missing_tail(place: tuple[Path, ProjectIndex]) -> None:
    _, index = place
    node, rest = index.resolve_partial("game.ReplicatedStorage.Shared.Modulez.Combat")
    assert node.path == "game.ReplicatedStorage.Shared" and rest == ["Modulez", "Combat"]


def test_service_lazy_open_nodes(place: tuple[Path, ProjectIndex]) -> None:
    _, index = place
    assert index.service("ServerScriptService") is index.datamodel.children["ServerScriptService"]
    sound = index.service("SoundService")
    assert sound is not None and sound.is_open and sound.path == "game.SoundService"
    assert index.service("SoundService") is sound
    assert "SoundService" not in index.datamodel.children
    assert index.service("NotAService") is None
    assert index.service("Part") is None


def test_local_player(place: tuple[Path, ProjectIndex]) -> None:
    _, index = place
    player = index.local_player()
    assert player.class_name == "Player" and not player.is_open
    assert set(player.children) == {"PlayerGui", "PlayerScripts", "Backpack", "StarterGear"}
    gui = player.children["PlayerGui"]
    assert gui.children["MainMenu"].children["Buttons"].class_name == "ModuleScript"
    assert not gui.is_open  # StarterGui has a $path: closed, so the mirror is too
    scripts = player.children["PlayerScripts"]
    assert "Client" in scripts.children and "PlayerModule" in scripts.children
    assert scripts.is_open  # StarterPlayerScripts has no $path: open
    assert player.children["Backpack"].is_open  # StarterPack not in the project
    assert index.resolve_path("Players.LocalPlayer.PlayerGui.MainMenu") is gui.children["MainMenu"]
    # a mirror is a copy: the StarterGui node is untouched
    assert index.resolve_path("StarterGui.MainMenu") is not gui.children["MainMenu"]
    assert index.local_player() is player


# --- output -------------------------------------------------------------------------------------------


def test_format_tree(place: tuple[Path, ProjectIndex]) -> None:
    _, index = place
    text = format_tree(index)
    lines = text.splitlines()
    assert lines[0] == "# rojo: default.project.json"
    assert lines[1].startswith("Place (DataModel) [default.project.json] (open: ")
    assert "    Shared (Folder) src/shared/" in lines
    assert "      Util (ModuleScript) [src/shared/Util.luau]" in lines
    assert any(line.strip().startswith("Packages (Folder) (open: $path Packages is missing") for line in lines)
    assert "# problems:" in lines


def test_to_json_is_sourcemap_shaped(place: tuple[Path, ProjectIndex]) -> None:
    _, index = place
    data = to_json(index)
    json.dumps(data)
    assert data["name"] == "Place" and data["className"] == "DataModel"
    rs = next(c for c in data["children"] if c["name"] == "ReplicatedStorage")
    shared = next(c for c in rs["children"] if c["name"] == "Shared")
    util = next(c for c in shared["children"] if c["name"] == "Util")
    assert util == {"name": "Util", "className": "ModuleScript", "filePaths": ["src/shared/Util.luau"]}
    assert "open" in rs and "open" not in shared
    assert data["problems"][0]["severity"] == "info"


# --- incremental updates -----------------------------------------------------------------------------


def test_editing_a_script_changes_nothing(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    before = tree_signature(index)
    util = index.resolve_path("ReplicatedStorage.Shared.Util")
    (root / "src/shared/Util.luau").write_text("return {changed = true}\n")
    index.apply_file_changes(["src/shared/Util.luau"])
    assert tree_signature(index) == before
    assert index.resolve_path("ReplicatedStorage.Shared.Util") is util


def test_add_and_delete_files(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    before = tree_signature(index)
    (root / "src/shared/New.luau").write_text("return 1")
    index.apply_file_changes([root / "src/shared/New.luau"])
    new = index.resolve_path("ReplicatedStorage.Shared.New")
    assert new is not None and index.instances_for_file("src/shared/New.luau") == [new]
    (root / "src/shared/New.luau").unlink()
    index.apply_file_changes([], ["src/shared/New.luau"])
    assert index.resolve_path("ReplicatedStorage.Shared.New") is None
    assert index.instances_for_file("src/shared/New.luau") == []
    assert tree_signature(index) == before


def test_new_directory_tree(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    write(root, {"src/shared/Net/init.luau": "", "src/shared/Net/Remote.luau": "", "src/shared/Net/Deep/X.luau": ""})
    index.apply_file_changes(["src/shared/Net/Deep/X.luau", "src/shared/Net/init.luau", "src/shared/Net/Remote.luau"])
    net = index.resolve_path("ReplicatedStorage.Shared.Net")
    assert net.class_name == "ModuleScript"
    assert set(net.children) == {"Remote", "Deep"}
    assert index.resolve_path("ReplicatedStorage.Shared.Net.Deep.X") is not None
    assert tree_signature(index) == tree_signature(load_project(root))


def test_init_file_changes_the_directory_class(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    (root / "src/shared/Modules/init.luau").unlink()
    index.apply_file_changes([], ["src/shared/Modules/init.luau"])
    assert index.resolve_path("ReplicatedStorage.Shared.Modules").class_name == "Folder"
    (root / "src/shared/Modules/init.client.luau").write_text("")
    index.apply_file_changes(["src/shared/Modules/init.client.luau"])
    assert index.resolve_path("ReplicatedStorage.Shared.Modules").class_name == "LocalScript"
    assert tree_signature(index) == tree_signature(load_project(root))


def test_meta_file_changes(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    (root / "src/shared/Util.meta.json").write_text('{"ignoreUnknownInstances": true}')
    index.apply_file_changes(["src/shared/Util.meta.json"])
    assert index.resolve_path("ReplicatedStorage.Shared.Util").is_open
    (root / "src/shared/Util.meta.json").write_text('{"ignoreUnknownInstances": ')
    index.apply_file_changes(["src/shared/Util.meta.json"])
    assert [p.severity for p in index.problems if p.file == "src/shared/Util.meta.json"] == ["error"]
    (root / "src/shared/Util.meta.json").unlink()
    index.apply_file_changes([], ["src/shared/Util.meta.json"])
    assert not index.resolve_path("ReplicatedStorage.Shared.Util").is_open
    assert not [p for p in index.problems if p.file == "src/shared/Util.meta.json"]
    assert tree_signature(index) == tree_signature(load_project(root))


def test_model_json_content_change(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    (root / "src/shared/Prefab.model.json").write_text('{"className": "Folder", "children": [{"name": "Z", "className": "Part"}]}')
    index.apply_file_changes(["src/shared/Prefab.model.json"])
    prefab = index.resolve_path("ReplicatedStorage.Shared.Prefab")
    assert prefab.class_name == "Folder" and set(prefab.children) == {"Z"}


def test_project_file_change_rebuilds(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    data, _ = parse_jsonc((root / "default.project.json").read_text())
    data["tree"]["ReplicatedStorage"]["Extra"] = {"$className": "Folder"}
    (root / "default.project.json").write_text(json.dumps(data))
    index.apply_file_changes(["default.project.json"])
    assert index.resolve_path("ReplicatedStorage.Extra") is not None


def test_malformed_project_on_rebuild_keeps_previous_tree(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    (root / "default.project.json").write_text('{"name": "x", "tree": ')
    index.apply_file_changes(["default.project.json"])
    assert index.resolve_path("ReplicatedStorage.Shared.Util") is not None
    assert any(p.severity == "error" and "keeping the previous index" in p.message for p in index.problems)


def test_missing_path_appearing_rebuilds(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    write(root, {"Packages/Promise.lua": "return {}"})
    index.apply_file_changes(["Packages/Promise.lua"])
    pkgs = index.resolve_path("ReplicatedStorage.Packages")
    assert not pkgs.is_open and "Promise" in pkgs.children
    assert not any("Packages" in p.message for p in index.problems)


def test_path_target_dir_gets_new_child(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    (root / "src/server/Extra.server.luau").write_text("")
    index.apply_file_changes(["src/server/Extra.server.luau"])
    assert index.resolve_path("ServerScriptService.Extra").class_name == "Script"


def test_ignored_files_stay_ignored_incrementally(tmp_path: Path) -> None:
    root = tmp_path / "g"
    shutil.copytree(FIXTURES / "globs", root)
    index = load_project(root)
    (root / "src/New.spec.luau").write_text("")
    (root / "src/New.luau").write_text("")
    index.apply_file_changes(["src/New.spec.luau", "src/New.luau"])
    assert "New.spec" not in index.root.children and "New" in index.root.children


def test_unrelated_files_are_ignored(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    before = tree_signature(index)
    write(root, {"docs/readme.luau": "", "notes.txt": ""})
    index.apply_file_changes(["docs/readme.luau", "notes.txt", "never/existed.luau"], ["gone/too.lua"])
    assert tree_signature(index) == before


def test_local_player_refreshes_after_changes(place: tuple[Path, ProjectIndex]) -> None:
    root, index = place
    first = index.local_player()
    (root / "src/gui/Hud.client.luau").write_text("")
    index.apply_file_changes(["src/gui/Hud.client.luau"])
    second = index.local_player()
    assert second is not first and "Hud" in second.children["PlayerGui"].children


def test_changes_outside_the_root_are_ignored(place: tuple[Path, ProjectIndex], tmp_path: Path) -> None:
    _, index = place
    before = tree_signature(index)
    index.apply_file_changes([tmp_path / "elsewhere.luau", "../x.luau", "/etc/passwd"], ["/tmp/y.lua"])
    assert tree_signature(index) == before
