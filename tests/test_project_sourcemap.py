"""Reading sourcemap.json (the format `rojo sourcemap` writes) into the instance tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from luaguard.project import SCRIPTS_ONLY_REASON, ProjectFileError, load_project

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "projects"


def test_scripts_only_sourcemap_is_open_everywhere() -> None:
    index = load_project(FIXTURES / "sourcemap_scripts")
    assert index.kind == "sourcemap" and index.scripts_only
    util = index.resolve_path("ReplicatedStorage.Shared.Util")
    assert util is not None and util.class_name == "ModuleScript"
    # without --include-non-scripts, any non-script child may exist: nothing is closed
    assert all(n.open_reason == SCRIPTS_ONLY_REASON for n in [index.root, *index.root.descendants()]
               if n.open_reason != "created by the engine")
    assert index.instances_for_file("src/shared/Net/init.luau")[0].name == "Net"
    assert index.resolve_path("ServerScriptService.Main").run_context == "Server"


def test_complete_sourcemap_closes_below_services() -> None:
    index = load_project(FIXTURES / "sourcemap_full")
    assert not index.scripts_only
    rs = index.resolve_path("ReplicatedStorage")
    assert rs.is_open  # services stay open
    shared = index.resolve_path("ReplicatedStorage.Shared")
    assert not shared.is_open and set(shared.children) == {"Util", "Assets", "Version"}
    assert index.resolve_path("Workspace").is_open
    # backslash paths are normalised; a Script's run context comes from its file name
    assert index.instances_for_file("src/shared/Util.luau")[0].name == "Util"
    assert index.resolve_path("StarterPlayer.StarterPlayerScripts.Input").run_context == "Client"
    # paths outside the root are not mapped, and reported once
    assert index.resolve_path("game.Outside").file_paths == []
    assert [p.severity for p in index.problems] == ["info"]


def test_unlisted_services_are_open() -> None:
    index = load_project(FIXTURES / "sourcemap_full")
    lighting = index.service("Lighting")
    assert lighting is not None and lighting.is_open and lighting.parent is index.datamodel
    assert "Lighting" not in index.datamodel.children


def test_library_sourcemap_gets_synthesized_datamodel(tmp_path: Path) -> None:
    (tmp_path / "sourcemap.json").write_text(json.dumps(
        {"name": "Lib", "className": "ModuleScript", "filePaths": ["src/init.luau"],
         "children": [{"name": "A", "className": "ModuleScript", "filePaths": ["src/A.luau"]}]}))
    index = load_project(tmp_path)
    assert index.root.name == "Lib" and index.root.parent is None
    assert index.datamodel is not index.root and index.datamodel.is_open


def test_explicit_sourcemap_wins_over_project(tmp_path: Path) -> None:
    (tmp_path / "default.project.json").write_text('{"name": "P", "tree": {"$className": "Folder"}}')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "map.json").write_text(json.dumps({"name": "S", "className": "Folder"}))
    index = load_project(tmp_path, sourcemap_file="out/map.json")
    assert index.kind == "sourcemap" and index.root.name == "S"
    assert index.project_file == tmp_path / "out" / "map.json"


@pytest.mark.parametrize(
    "content, pointer, line",
    [
        ('{"name": "A"}', "", 1),
        ('{"name": "A", "className": "Folder", "children": {}}', "/children", 1),
        ('{"name": "A", "className": "Folder",\n "children": [{"name": 3, "className": "X"}]}', "/children/0/name", 2),
        ('{"name": "A", "className": "Folder", "filePaths": [1]}', "/filePaths/0", 1),
    ],
)
def test_wrong_shape_names_pointer_and_line(tmp_path: Path, content: str, pointer: str, line: int) -> None:
    (tmp_path / "sourcemap.json").write_text(content)
    with pytest.raises(ProjectFileError) as exc:
        load_project(tmp_path)
    assert exc.value.file == "sourcemap.json"
    assert exc.value.line == line
    assert f"{pointer}:" in exc.value.message or (pointer == "" and exc.value.message.startswith("/:"))


def test_malformed_sourcemap_json(tmp_path: Path) -> None:
    (tmp_path / "sourcemap.json").write_text('{"name": "A",\n  "className": }')
    with pytest.raises(ProjectFileError) as exc:
        load_project(tmp_path)
    assert (exc.value.line, exc.value.column) == (2, 16)
    assert str(exc.value).startswith("sourcemap.json:2:16: ")


def test_sourcemap_change_rebuilds(tmp_path: Path) -> None:
    sm = tmp_path / "sourcemap.json"
    sm.write_text(json.dumps({"name": "G", "className": "DataModel", "children": [
        {"name": "ReplicatedStorage", "className": "ReplicatedStorage"}]}))
    index = load_project(tmp_path)
    assert index.resolve_path("ReplicatedStorage.New") is None
    sm.write_text(json.dumps({"name": "G", "className": "DataModel", "children": [
        {"name": "ReplicatedStorage", "className": "ReplicatedStorage", "children": [
            {"name": "New", "className": "ModuleScript", "filePaths": ["New.luau"]}]}]}))
    index.apply_file_changes(["src/unrelated.luau"])
    assert index.resolve_path("ReplicatedStorage.New") is None  # only the sourcemap matters
    index.apply_file_changes([str(sm)])
    assert index.resolve_path("ReplicatedStorage.New") is not None
