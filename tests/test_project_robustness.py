"""Bad input never crashes the indexer: clear errors with file/line, safe paths, no loops."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path

import pytest

from luaguard.project import ProjectFileError, load_project


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def project(tree: dict, **extra) -> str:
    return json.dumps({"name": "P", "tree": tree, **extra}, indent=2)


# --- project file errors ----------------------------------------------------------------------------


def test_missing_explicit_project_file(tmp_path: Path) -> None:
    with pytest.raises(ProjectFileError, match="project file not found") as exc:
        load_project(tmp_path, project_file="nope.project.json")
    assert exc.value.file == "nope.project.json"


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ProjectFileError, match="not a directory"):
        load_project(tmp_path / "missing")


def test_project_file_outside_root_refused(tmp_path: Path) -> None:
    write(tmp_path, {"out.project.json": project({"$className": "Folder"}), "root/x.txt": ""})
    with pytest.raises(ProjectFileError, match="inside the project root"):
        load_project(tmp_path / "root", project_file="../out.project.json")


def test_malformed_json_has_line_and_column(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": '{\n  "name": "P",\n  "tree": {\n    "$path": "src"\n    "x": 1\n  }\n}'})
    with pytest.raises(ProjectFileError) as exc:
        load_project(tmp_path)
    assert (exc.value.file, exc.value.line, exc.value.column) == ("default.project.json", 5, 5)
    assert str(exc.value).startswith("default.project.json:5:5: invalid JSON")


def test_empty_and_non_utf8_project_files(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": "  \n"})
    with pytest.raises(ProjectFileError, match="no JSON value"):
        load_project(tmp_path)
    write(tmp_path, {"default.project.json": b'{"name": "\xff"}'})
    with pytest.raises(ProjectFileError, match="not UTF-8") as exc:
        load_project(tmp_path)
    assert (exc.value.line, exc.value.column) == (1, 11)


def line_of(text: str, marker: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if marker in line)


@pytest.mark.parametrize(
    "content, pointer, marker",
    [
        (project({"ReplicatedStorage": {"$path": 5}}), "/tree/ReplicatedStorage/$path", '"$path": 5'),
        (project({"ReplicatedStorage": {"$path": {"optional": 1}}}), "/tree/ReplicatedStorage/$path", '"$path": {'),
        (project({"A": {"$className": ["Folder"]}}), "/tree/A/$className", '"$className": ['),
        (project({"A": {"$className": "Folder", "$ignoreUnknownInstances": "yes"}}),
         "/tree/A/$ignoreUnknownInstances", '"$ignoreUnknownInstances"'),
        (project({"A": 3}), "/tree/A", '"A": 3'),
        (project({"$className": "Folder", "$properties": []}), "/tree/$properties", '"$properties"'),
        ('{"name": "P"}', "/", '"name"'),
        ('{"name": "P", "tree": []}', "/tree", '"tree"'),
        ('[1, 2]', "/", "["),
        (project({"$className": "Folder"}, globIgnorePaths="src/*"), "/globIgnorePaths", '"globIgnorePaths"'),
        (project({"$className": "Folder"}, globIgnorePaths=["src/[oops"]), "/globIgnorePaths/0", '"src/[oops"'),
        (project({"$className": "Folder"}, syncRules=[{"pattern": "*.x", "use": "nope"}]), "/syncRules/0/use", '"use"'),
        (project({"$className": "Folder"}, emitLegacyScripts="no"), "/emitLegacyScripts", '"emitLegacyScripts"'),
    ],
)
def test_wrong_shapes_name_the_pointer_and_line(tmp_path: Path, content: str, pointer: str, marker: str) -> None:
    write(tmp_path, {"default.project.json": content})
    with pytest.raises(ProjectFileError) as exc:
        load_project(tmp_path)
    assert exc.value.message.startswith(pointer + ":"), str(exc.value)
    assert exc.value.line == line_of(content, marker), str(exc.value)
    assert exc.value.column is not None


def test_unknown_fields_warn_but_load(tmp_path: Path) -> None:
    text = project({"$className": "Folder", "$weird": 1}, futureField=True)
    write(tmp_path, {"default.project.json": text})
    index = load_project(tmp_path)
    msgs = [(p.severity, p.message, p.line) for p in index.problems]
    assert any(s == "warning" and "futureField" in m and line == line_of(text, "futureField")
               for s, m, line in msgs), msgs
    assert any(s == "warning" and '"$weird"' in m for s, m, _ in msgs)


# --- nested file errors are problems, not exceptions ------------------------------------------------


def test_bad_nested_project_is_a_problem(tmp_path: Path) -> None:
    write(tmp_path, {
        "default.project.json": project({"$className": "Folder", "Lib": {"$path": "lib"}}),
        "lib/default.project.json": '{"name": "L", "tree": {"$path": 7}}',
    })
    index = load_project(tmp_path)
    lib = index.root.children["Lib"]
    assert lib.is_open
    prob = [p for p in index.problems if p.file == "lib/default.project.json"]
    assert prob and prob[0].severity == "error" and "/tree/$path" in prob[0].message


def test_bad_model_json(tmp_path: Path) -> None:
    write(tmp_path, {
        "default.project.json": project({"$path": "src"}),
        "src/A.model.json": '{"className": "Model", "children": [{"name": "x"}, 5]}',
        "src/B.model.json": "[]",
        "src/C.model.json": b"\x00\x01\xff binary",
    })
    index = load_project(tmp_path)
    a = index.root.children["A"]
    assert a.class_name == "Model"
    msgs = {(p.file, p.message.split(":")[0]) for p in index.problems}
    assert ("src/A.model.json", "/children/0") in msgs
    assert ("src/A.model.json", "/children/1") in msgs
    assert any(p.file == "src/B.model.json" for p in index.problems)
    assert any(p.file == "src/C.model.json" and "UTF-8" in p.message for p in index.problems)


# --- safety: paths outside the root, symlinks, loops, recursion ---------------------------------------


def test_path_outside_root_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(tmp_path, {"outside/secret.luau": "", "outside/data.model.json": '{"className": "Folder"}'})
    write(root, {"default.project.json": project({
        "$className": "DataModel",
        "ReplicatedStorage": {"Up": {"$path": "../outside"}, "Etc": {"$path": "/etc"},
                              "Deep": {"$path": "src/../../outside"}},
    })})
    index = load_project(root)
    rs = index.resolve_path("ReplicatedStorage")
    for name in ("Up", "Etc", "Deep"):
        assert rs.children[name].is_open and not rs.children[name].children
    # Refused, not fatal: the node stays open and the rest of the project is indexed.
    refused = [p for p in index.problems if p.severity == "warning" and "not read" in p.message]
    assert len(refused) == 3 and all("$path" in p.message for p in refused)
    assert not any("outside" in fp or "etc" in fp for fp in index.file_instances)


def test_absolute_path_inside_root_is_fine(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": project({"$className": "Folder", "S": {"$path": str(tmp_path / "src")}}),
                     "src/M.luau": ""})
    index = load_project(tmp_path)
    assert index.root.children["S"].children["M"].file_paths == ["src/M.luau"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinks_escaping_root_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(tmp_path, {"outside/secret.luau": "", "outside/model.model.json": '{"className": "Part"}'})
    write(root, {"default.project.json": project({"$className": "Folder", "Src": {"$path": "src"},
                                                  "Linked": {"$path": "link"}}),
                 "src/ok.luau": ""})
    os.symlink(tmp_path / "outside", root / "src" / "escape")
    os.symlink(tmp_path / "outside" / "model.model.json", root / "src" / "m.model.json")
    os.symlink(tmp_path / "outside", root / "link")
    index = load_project(root)
    src = index.root.children["Src"]
    assert src.children["escape"].is_open and not src.children["escape"].children
    assert src.children["m"].is_open and src.children["m"].class_name == "Folder"  # model not read
    assert index.root.children["Linked"].is_open and not index.root.children["Linked"].children
    assert not any("secret" in fp for fp in index.file_instances)
    assert sum("outside the project root" in p.message for p in index.problems) == 3


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_directory_symlink_loops(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": project({"$path": "src"}), "src/a/x.luau": "", "src/b/y.luau": ""})
    os.symlink(tmp_path / "src", tmp_path / "src" / "a" / "up")  # to an ancestor
    os.symlink(tmp_path / "src" / "b", tmp_path / "src" / "a" / "tob")  # a -> b
    os.symlink(tmp_path / "src" / "a", tmp_path / "src" / "b" / "toa")  # b -> a: mutual
    index = load_project(tmp_path)
    a = index.root.children["a"]
    assert a.children["up"].is_open and "loop" in a.children["up"].open_reason
    # a/tob is followed once (to b); inside it, toa leads back to a: a loop
    assert "y" in a.children["tob"].children
    assert a.children["tob"].children["toa"].is_open
    assert any("loop" in p.message for p in index.problems)
    assert sum(1 for _ in index.root.descendants()) < 50


def test_recursive_project_includes(tmp_path: Path) -> None:
    write(tmp_path, {
        "default.project.json": project({"$className": "Folder", "B": {"$path": "b.project.json"}}),
        "b.project.json": json.dumps({"name": "B", "tree": {"$className": "Folder", "A": {"$path": "."}}}),
    })
    index = load_project(tmp_path)  # "." is the root directory, which holds default.project.json
    recursive = [p for p in index.problems if "recursive project include" in p.message]
    assert recursive
    assert index.root.children["B"].children["A"].is_open


def test_self_including_project(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": project({"$path": "."})})
    index = load_project(tmp_path)
    assert index.root.is_open
    assert any("recursive project include" in p.message for p in index.problems)


def test_deeply_nested_project_json_no_recursion_error(tmp_path: Path) -> None:
    depth = 5000
    text = '{"name": "P", "tree": ' + '{"$className": "Folder", "c": ' * depth + "{}" + "}" * depth + "}"
    write(tmp_path, {"default.project.json": text})
    with pytest.raises(ProjectFileError, match="nested deeper") as exc:
        load_project(tmp_path)
    assert exc.value.line == 1 and exc.value.column is not None


def test_moderately_deep_project_tree_is_capped(tmp_path: Path) -> None:
    depth = 240  # deeper than the node cap (200), shallower than the JSON cap (500)
    text = '{"name": "P", "tree": ' + '{"$className": "Folder", "c": ' * depth + '{"$className": "Folder"}' + "}" * depth + "}"
    write(tmp_path, {"default.project.json": text})
    index = load_project(tmp_path)
    assert any("nested deeper than 200" in p.message for p in index.problems)
    node = index.root
    levels = 0
    while node.children:
        node = node.children["c"]
        levels += 1
    assert levels == 200 and node.is_open


def test_wide_project(tmp_path: Path) -> None:
    tree = {"$className": "Folder", **{f"N{i}": {"$className": "Folder"} for i in range(5000)}}
    write(tmp_path, {"default.project.json": json.dumps({"name": "P", "tree": tree})})
    assert len(load_project(tmp_path).root.children) == 5000


# --- odd files -----------------------------------------------------------------------------------------


def test_binary_files_in_the_tree(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": project({"$path": "src"}),
                     "src/blob.luau": bytes(range(256)) * 10, "src/image.png": b"\x89PNG\r\n\x1a\n\x00",
                     "src/data.txt": b"\xff\xfe\x00"})
    index = load_project(tmp_path)
    assert index.root.children["blob"].class_name == "ModuleScript"
    assert index.root.children["data"].class_name == "StringValue"
    assert "image" not in index.root.children
    assert not index.problems


@pytest.mark.skipif(os.name != "posix", reason="needs byte file names")
def test_non_utf8_file_names(tmp_path: Path) -> None:
    write(tmp_path, {"default.project.json": project({"$path": "src"}), "src/ok.luau": ""})
    try:
        fd = os.open(os.path.join(os.fsencode(tmp_path), b"src", b"bad\xff.luau"), os.O_CREAT | os.O_WRONLY)
        os.close(fd)
        os.mkdir(os.path.join(os.fsencode(tmp_path), b"src", b"dir\xfe"))
    except OSError:
        pytest.skip("file system refuses non-UTF-8 names")
    index = load_project(tmp_path)
    assert set(index.root.children) == {"ok"}
    bad = [p for p in index.problems if "not valid UTF-8" in p.message]
    assert len(bad) == 2 and all(p.severity == "warning" for p in bad)
    str(bad[0])  # printable
    assert "\\x" in bad[0].file or "\\udc" in bad[0].file


def test_script_contents_are_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"default.project.json": project({"$path": "src"}),
                     "src/init.luau": "", "src/a.server.lua": "", "src/b.txt": "", "src/c.csv": "",
                     "src/d.json": "{}", "src/e.rbxm": "x", "src/f.meta.json": "{}", "src/f.luau": ""})
    opened: list[str] = []
    real_open = builtins.open

    def spy(file, *args, **kwargs):
        opened.append(os.fspath(file))
        return real_open(file, *args, **kwargs)

    real_os_open = os.open

    def os_spy(file, *args, **kwargs):  # luaguard.files reads with os.open
        opened.append(os.fspath(file))
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(os, "open", os_spy)
    load_project(tmp_path)
    names = sorted(os.path.basename(p) for p in opened)
    assert names == ["default.project.json", "f.meta.json"]


def test_unreadable_directory_is_a_problem(tmp_path: Path) -> None:
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root can read anything")
    write(tmp_path, {"default.project.json": project({"$path": "src"}), "src/locked/x.luau": ""})
    os.chmod(tmp_path / "src" / "locked", 0)
    try:
        index = load_project(tmp_path)
        assert index.root.children["locked"].is_open
        assert any("cannot list" in p.message for p in index.problems)
    finally:
        os.chmod(tmp_path / "src" / "locked", 0o755)


# --- property tests -------------------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
        st.sampled_from(["name", "tree", "$path", "$className", "$ignoreUnknownInstances", "$properties",
                         "globIgnorePaths", "syncRules", "emitLegacyScripts", "A", "ReplicatedStorage",
                         "className", "children", "properties", "ignoreUnknownInstances"]),
        kids, max_size=5),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(proj=_json_values, meta=_json_values, model=_json_values)
def test_arbitrary_json_never_crashes(tmp_path: Path, proj, meta, model) -> None:
    write(tmp_path, {"default.project.json": json.dumps(proj), "src/M.meta.json": json.dumps(meta),
                     "src/M.luau": "", "src/X.model.json": json.dumps(model), "src/init.meta.json": json.dumps(meta)})
    try:
        index = load_project(tmp_path)
    except ProjectFileError as exc:
        assert exc.file == "default.project.json" and exc.message
    else:
        for p in index.problems:
            assert p.severity in ("error", "warning", "info") and p.message


_ENTRY_NAMES = ["Foo.luau", "Foo.server.luau", "init.luau", "init.client.lua", "Foo.meta.json",
                "init.meta.json", "Bar.model.json", "Note.txt", "sub"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.booleans(), st.sampled_from(["src", "src/sub", "src/sub/sub"]),
                              st.sampled_from(_ENTRY_NAMES)), min_size=1, max_size=12))
def test_incremental_updates_match_a_cold_build(tmp_path: Path, ops) -> None:
    import shutil

    root = tmp_path / "p"
    if root.exists():
        shutil.rmtree(root)
    write(root, {"default.project.json": project({"$className": "DataModel", "ReplicatedStorage": {"$path": "src"}}),
                 "src/Keep.luau": ""})
    index = load_project(root)
    contents = {"Foo.meta.json": '{"ignoreUnknownInstances": true}', "init.meta.json": '{"className": "Configuration"}',
                "Bar.model.json": '{"className": "Model", "children": [{"name": "P", "className": "Part"}]}'}
    for add, folder, name in ops:
        rel = f"{folder}/{name}"
        path = root / rel
        if add:
            if name == "sub":
                path.mkdir(parents=True, exist_ok=True)
            elif not path.is_dir():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(contents.get(name, ""))
            index.apply_file_changes([rel])
        elif path.exists():
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
            index.apply_file_changes([], [rel])

        def sig(ix):
            return sorted((n.path, n.class_name, n.open_reason, tuple(sorted(n.file_paths)))
                          for n in [ix.root, *ix.root.descendants()])

        fresh = load_project(root)
        assert sig(index) == sig(fresh), (add, rel)
        assert sorted(index.file_instances) == sorted(fresh.file_instances)
        assert sorted(map(str, index.problems)) == sorted(map(str, fresh.problems))
