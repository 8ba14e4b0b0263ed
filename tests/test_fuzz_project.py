"""Fuzzing the project readers (bounded, in CI): Rojo project files (and the ``.meta.json``
and ``.model.json`` files they pull in) and ``sourcemap.json``.

Inputs are JSON documents built from Rojo's and the sourcemap format's own vocabulary
(``$path``, ``$className``, ``$properties``, ``filePaths`` ... with values that point at real
files, missing files, directories, ``..``, ``/etc`` and odd names), then sometimes damaged
(cut off, JSONC comments, a BOM, invalid UTF-8, deep nesting).  Properties: loading either
succeeds or raises :class:`~luaguard.project.ProjectFileError` with a message; nothing
else escapes; no input takes longer than the bound; the index stays consistent (parent
links, files inside the root) and prints.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fuzz_helpers import ByteReader, json_text, json_value, run_fuzz

from luaguard.engine import Engine
from luaguard.project import load_api
from luaguard.project.index import ProjectFileError, format_tree, load_project, to_json

from fuzz_helpers import assert_findings_inside

pytestmark = pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")

API = load_api()

ROJO_KEYS = [
    "name", "tree", "$className", "$path", "$properties", "$attributes", "$ignoreUnknownInstances", "globIgnorePaths",
    "emitLegacyScripts", "servePort", "servePlaceIds", "syncRules", "pattern", "use", "exclude", "suffix", "optional",
    "ReplicatedStorage", "ServerScriptService", "Workspace", "StarterPlayer", "StarterPlayerScripts", "Shared", "Folder",
    "Children", "Name", "ClassName", "Properties", "ignoreUnknownInstances", "className", "properties", "Value", "Size",
]
ROJO_STRINGS = [
    "src", "src/shared", "src/shared/Module.luau", "src/server", "nested", "nested/default.project.json", "missing",
    "Packages", "../outside", "../../..", "/etc", "/etc/passwd", "/", ".", "", "src/shared/model.model.json",
    "src/shared/init.meta.json", "**/*.spec.luau", "!*.luau", "[", "*", "Folder", "Part", "DataModel", "ModuleScript",
    "Script", "NotAClass", "ReplicatedStorage", "Workspace", "Model", "StringValue", "💥", "a" * 500, "x\u0000y",
    "src\\shared", "C:\\Windows", "~", "file:///etc/passwd", 1, True, None, [1, 2, 3], {"optional": "src"},
    "src\ud800", {"optional": "a\u0000b"},
]
SOURCEMAP_KEYS = ["name", "className", "filePaths", "children", "pluginChildren"]
SOURCEMAP_STRINGS = [
    "game", "DataModel", "ReplicatedStorage", "Folder", "ModuleScript", "Script", "LocalScript", "Part", "Shared",
    "src/shared/Module.luau", "src/shared/init.meta.json", "/etc/passwd", "../outside.luau", "missing.luau", "",
    "src\\shared\\Module.luau", "💥", "Workspace", ["src/shared/Module.luau"], ["/etc/passwd", 1], [], 0, None,
    "a\u0000b.luau", "a\ud800b.luau", ["src/shared/\u0000.luau"],
]


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Path:
    """A small project tree the fuzzed project files point into (plus a file outside it)."""
    base = tmp_path_factory.mktemp("fuzzproj")
    (base / "outside").mkdir()
    (base / "outside" / "secret.luau").write_text("return 'secret'\n")
    root = base / "root"
    (root / "src" / "shared" / "Sub").mkdir(parents=True)
    (root / "src" / "server").mkdir(parents=True)
    (root / "src" / "shared" / "Module.luau").write_text("return {}\n")
    (root / "src" / "shared" / "Sub" / "init.luau").write_text("return {}\n")
    (root / "src" / "server" / "Main.server.luau").write_text("print('hi')\n")
    (root / "src" / "shared" / "init.meta.json").write_text('{"className": "Folder"}')
    (root / "src" / "shared" / "model.model.json").write_text('{"ClassName": "Folder", "Children": []}')
    (root / "nested").mkdir()
    (root / "nested" / "default.project.json").write_text('{"name": "n", "tree": {"$path": "../src/shared"}}')
    try:
        os.symlink(base / "outside", root / "src" / "escape")
    except OSError:
        pass
    return root


def check_index(index) -> None:
    """Consistency of a loaded index: parent links, root-relative file paths, printable."""
    seen = 0
    for node in [index.root, *index.root.descendants()]:
        for child in node.all_children():
            assert child.parent is node, f"{child!r} has parent {child.parent!r}, expected {node!r}"
        seen += 1
        assert seen < 1_000_000
    for rel in index.file_instances:
        assert not os.path.isabs(rel) and not rel.startswith("../") and rel != "..", f"file map entry {rel!r} leaves the root"
    for p in index.problems:
        assert str(p)
    format_tree(index)
    to_json(index)


def make_check(root: Path, which: str):
    def check(data: bytes) -> None:
        r = ByteReader(data)
        if which == "rojo":
            target = r.choice(["default.project.json"] * 4 + ["src/shared/init.meta.json", "src/shared/model.model.json",
                                                             "nested/default.project.json"])
            value = json_value(r, ROJO_KEYS, ROJO_STRINGS)
            if target == "default.project.json" and not r.chance(4):
                value = {"name": "fuzz", "tree": value if isinstance(value, dict) else {"$path": value}}
            (root / target).write_bytes(json_text(value, r))
            kwargs = {}
        else:
            target = "sourcemap.json"
            value = json_value(r, SOURCEMAP_KEYS, SOURCEMAP_STRINGS)
            (root / target).write_bytes(json_text(value, r))
            kwargs = {"sourcemap_file": "sourcemap.json"}
        try:
            index = load_project(root, api=API, **kwargs)
        except ProjectFileError as exc:
            assert str(exc)
            return
        check_index(index)
        if r.chance(8):  # now and then, lint a script against the fuzzed index
            text = 'local RS = game:GetService("ReplicatedStorage")\nlocal M = require(RS.Shared.Module)\nlocal x = script.Parent.Sub\n'
            engine = Engine(root, project=index)
            assert_findings_inside(text, engine.lint_text(text, root / "src" / "shared" / "Module.luau"))
    return check


def test_fuzz_rojo_project_reader(place: Path) -> None:
    (place / "sourcemap.json").unlink(missing_ok=True)
    run_fuzz(lambda b: b, make_check(place, "rojo"), max_bytes=120, name="project files")


def test_fuzz_sourcemap_reader(place: Path) -> None:
    run_fuzz(lambda b: b, make_check(place, "sourcemap"), max_bytes=120, name="sourcemap")


def test_fuzz_runtime_names_stay_equal_to_a_fresh_scan(tmp_path: Path) -> None:
    """The incrementally counted run-time names (what every lint consults) always equal a
    scan from scratch, whatever sequence of disk changes and open buffers came before.
    (The counts replaced a full union rebuild per keystroke; see bench/README.md.)"""
    from luaguard.analysis.scans import NamesView, ProjectScans

    files = [tmp_path / f"F{i}.luau" for i in range(4)]
    words = ["Arena", "Lobby", "Coins", "Arena2", "x"]

    def read(p: Path):
        return p.read_text() if p.exists() else None

    def text_for(r: ByteReader) -> str:
        return "\n".join(f'local v = "{r.choice(words)}"' if not r.chance(4) else f'x:WaitForChild("{r.choice(words)}")'
                         if not r.chance(3) else f"x.{r.choice(words)}.Value = 1" for _ in range(r.int(4)))

    def check(data: bytes) -> None:
        for f in files:
            f.unlink(missing_ok=True)
        rn = ProjectScans(lambda: files, read)
        buffers: dict[Path, str] = {}
        r = ByteReader(data)
        while r.left:
            f = r.choice(files)
            op = r.int(4)
            if op == 0:
                f.write_text(text_for(r))
                rn.file_changed(f)
            elif op == 1:
                f.unlink(missing_ok=True)
                rn.file_changed(f)
            elif op == 2:
                buffers[f] = text_for(r)
                rn.set_text(f, buffers[f])
            else:
                buffers.pop(f, None)
                rn.set_text(f, None)
            if r.chance(3):
                rn.pool()  # materialize the counts at random points
            fresh = ProjectScans(lambda: files, read)
            for p, t in buffers.items():
                fresh.set_text(p, t)
            want = frozenset(fresh.pool())
            assert frozenset(rn.pool()) == want
            assert rn.lookup_counts() == fresh.lookup_counts()
            for w in words:  # (the steps read from the current texts: buffers replacing files)
                assert rn.reads.under(w) == fresh.reads.under(w)
            assert rn.reads.children("x") == fresh.reads.children("x")
            view = NamesView(rn.pool())
            assert {w for w in words if w in view} == {w for w in words if w in want}
            assert set(view) == set(want) and len(view) == len(want)

    run_fuzz(lambda b: b, check, examples=1000, max_bytes=40, name="runtime names")


def test_fuzz_regressions_bad_file_names(tmp_path: Path) -> None:
    """Found by bench/fuzz_long.py: a ``$path`` or a sourcemap ``filePaths`` entry holding a
    NUL character or an unpaired surrogate (both possible in JSON) made ``os`` calls raise
    ValueError / UnicodeEncodeError out of ``load_project`` and out of the run-time-name
    scan.  Now the path is refused with a problem."""
    import json

    for bad in ("a\u0000b", "a\ud800b"):
        (tmp_path / "sourcemap.json").unlink(missing_ok=True)
        (tmp_path / "default.project.json").write_text(json.dumps(
            {"name": "x", "tree": {"$className": "DataModel", "RS": {"$path": bad}}}))
        index = load_project(tmp_path, api=API)
        assert any("not a valid file name" in str(p) for p in index.problems)
        (tmp_path / "default.project.json").unlink()
        (tmp_path / "sourcemap.json").write_text(json.dumps(
            {"name": "game", "className": "DataModel",
             "children": [{"name": "M", "className": "ModuleScript", "filePaths": [bad + ".luau"]}]}))
        index = load_project(tmp_path, api=API)
        assert index.file_instances == {} and any("not valid file names" in str(p) for p in index.problems)
        engine = Engine(tmp_path, project=index)
        assert engine.snapshot.names() == frozenset()
        assert_findings_inside("local x = 1\n", engine.lint_text("local x = 1\n", tmp_path / "M.luau"))
