"""Security properties, each shown on a hostile workspace:

* nothing from the workspace is ever executed: bait Python modules named after everything
  luaguard imports (and a ``luaguard/`` package) sit in the workspace, which is the
  current directory of the CLI and of the language server; an audit hook
  (:func:`sys.addaudithook`, in a child process) records every process started and every
  piece of code compiled or run from the workspace while luaguard indexes, lints, validates
  tool calls and applies diffs there;
* model checkpoints load only from safetensors with ``trust_remote_code=False``: the
  arguments reach ``from_pretrained``, and a pickle or remote-code file beside the weights
  never runs;
* tool-call and diff paths never escape the project root, symlinks included: every form of
  escape is refused, the secret outside is never opened (audit hook) nor echoed, nothing is
  written;
* hostile project files (huge, deeply nested, ``$path`` to ``/etc``, symlinks to ``/etc``,
  sourcemaps naming ``/etc/passwd``) give a clear error or problem, quickly, and nothing
  under them is read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from raw_lsp import RawLspClient

from luaguard.engine import Engine
from luaguard.project.index import ProjectFileError, load_project
from luaguard.toolcalls.api import validate_calls, validate_patch

REPO = Path(__file__).resolve().parent.parent
SECRET = "TOPSECRET-7f3a9c"

#: Modules luaguard imports (directly or through its dependencies), plus the files Python
#: runs by itself at start-up: each gets a bait file in the workspace.
BAIT_MODULES = ["rapidfuzz", "pygls", "lsprotocol", "jsonschema", "referencing", "cattrs", "attrs", "tomllib", "json",
                "typing_extensions", "sitecustomize", "usercustomize", "torch", "transformers", "safetensors", "hypothesis"]


# -- the hostile workspace --------------------------------------------------------------
def make_workspace(base: Path) -> dict[str, Path]:
    """``base/ws`` (the project), ``base/outside`` (a secret next to it), ``base/markers``
    (where bait code would write)."""
    ws, outside, markers = base / "ws", base / "outside", base / "markers"
    for d in (ws / "src" / "shared", ws / "src" / "server", outside / "dir", markers):
        d.mkdir(parents=True)
    (outside / "secret.luau").write_text(f"return '{SECRET}'\n")
    (outside / "dir" / "Hidden.luau").write_text(f"return '{SECRET}'\n")
    bait = textwrap.dedent("""\
        import os
        open(os.path.join({markers!r}, {name!r}), "w").write("executed")
        raise ImportError("bait module from the workspace")
        """)
    for name in BAIT_MODULES:
        (ws / f"{name}.py").write_text(bait.format(markers=str(markers), name=name))
    (ws / "luaguard").mkdir()
    (ws / "luaguard" / "__init__.py").write_text(bait.format(markers=str(markers), name="luaguard"))
    (ws / "luaguard" / "cli.py").write_text(bait.format(markers=str(markers), name="luaguard.cli"))
    (ws / "setup.py").write_text(bait.format(markers=str(markers), name="setup"))
    (ws / "conftest.py").write_text(bait.format(markers=str(markers), name="conftest"))
    (ws / "evil.pth").write_text(f"import os; open({str(markers / 'pth')!r}, 'w')\n")
    (ws / "package.json").write_text('{"scripts": {"postinstall": "touch %s"}}' % (markers / "npm"))
    (ws / "src" / "shared" / "Module.luau").write_text('os.execute("touch %s")\nreturn {}\n' % (markers / "lua"))
    (ws / "src" / "server" / "Main.server.luau").write_text(
        'local RS = game:GetService("ReplicatedStorage")\nlocal M = require(RS.Shared.Module)\nprint(M)\n')
    os.symlink(outside, ws / "src" / "shared" / "Evil")                    # a directory symlink out of the root
    os.symlink(outside / "secret.luau", ws / "src" / "shared" / "Link.luau")  # a file symlink out of the root
    os.symlink("/etc", ws / "Packages")
    project = {
        "name": "hostile",
        "tree": {
            "$className": "DataModel",
            "ReplicatedStorage": {"Shared": {"$path": "src/shared"}, "Packages": {"$path": "Packages"},
                                  "Etc": {"$path": "/etc"}, "Up": {"$path": "../outside"}},
            "ServerScriptService": {"Server": {"$path": "src/server"}},
        },
    }
    (ws / "default.project.json").write_text(json.dumps(project))
    return {"base": base, "ws": ws, "outside": outside, "markers": markers}


@pytest.fixture
def hostile(tmp_path: Path) -> dict[str, Path]:
    return make_workspace(tmp_path)


def markers_written(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


ESCAPING_PATHS = [
    "../outside/secret.luau", "../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "src/../../outside/secret.luau",
    "src/shared/Evil/secret.luau", "src/shared/Evil/dir/Hidden.luau", "src/shared/Link.luau",
    "src\\..\\..\\outside\\secret.luau", "file:///etc/passwd", "src/shared/Evil/New.luau",
]


def hostile_calls(outside: Path) -> list[dict]:
    calls = []
    for p in [*ESCAPING_PATHS, str(outside / "secret.luau")]:
        calls.append({"name": "read_script", "arguments": {"path": p}})
        calls.append({"name": "patch_script", "arguments": {"path": p, "content": "return {}\n"}})
        calls.append({"name": "delete_script", "arguments": {"path": p}})
        calls.append({"name": "create_script", "arguments": {"path": p, "content": "return {}\n"}})
    return calls


def hostile_diffs(outside: Path) -> list[str]:
    out = []
    # (A diff header is a path, not a URI: "file:///etc/passwd" names root/file:/etc/passwd.)
    for p in [*(p for p in ESCAPING_PATHS if not p.startswith("file:")), str(outside / "secret.luau")]:
        out.append(f"--- a/{p}\n+++ b/{p}\n@@ -1,1 +1,1 @@\n-return '{SECRET}'\n+return 'changed'\n")
        out.append(f"--- /dev/null\n+++ b/{p}\n@@ -0,0 +1,1 @@\n+return 'new'\n")
    return out


# -- 1. nothing from the workspace runs ---------------------------------------------------
AUDIT_SCRIPT = r'''
import contextlib, io, json, os, sys
spec = json.loads(sys.argv[1])
ws = spec["ws"]
events = {"spawn": [], "code": [], "paths": []}
SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn")
PATH_EVENTS = ("open", "os.listdir", "os.scandir", "os.symlink", "os.remove", "os.rename", "shutil.rmtree", "os.mkdir")

def hook(event, args):
    if event in SPAWN:
        events["spawn"].append(f"{event} {args!r}"[:300])
    elif event == "compile" and len(args) > 1 and isinstance(args[1], str) and args[1].startswith(ws):
        events["code"].append(args[1])
    elif event == "exec" and args and getattr(args[0], "co_filename", "").startswith(ws):
        events["code"].append(args[0].co_filename)
    elif event in PATH_EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)):
        mode = args[1] if event == "open" and len(args) > 1 else None
        events["paths"].append([event, os.fsdecode(args[0]), mode if isinstance(mode, str) else None])

sys.addaudithook(hook)
from pathlib import Path
from luaguard.engine import Engine
from luaguard.cli import main
from luaguard.toolcalls.api import validate_calls, validate_patch
root = Path(ws)
engine = Engine(root)
engine.project
for p in sorted(root.rglob("*")):
    if p.is_file() and not p.is_symlink():
        engine.lint_file(p)
results = validate_calls(engine, spec["calls"])
patches = [validate_patch(engine, None, diff=d) for d in spec["diffs"]]
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    codes = [main(["check", "--project", ws]), main(["index", "--project", ws]),
             main(["check", "--project", ws, "--diff", spec["diff_file"]]),
             main(["validate", "--project", ws, spec["calls_file"]])]
print(json.dumps({"events": events, "results": results, "patches": patches, "codes": codes, "cli": out.getvalue()}))
'''


def run_audited(h: dict[str, Path]) -> dict:
    ws, outside = h["ws"], h["outside"]
    calls, diffs = hostile_calls(outside), hostile_diffs(outside)
    calls_file = h["base"] / "calls.json"
    calls_file.write_text(json.dumps(calls))
    diff_file = h["base"] / "all.diff"
    diff_file.write_text("".join(diffs))
    spec = {"ws": str(ws), "calls": calls, "diffs": diffs, "calls_file": str(calls_file), "diff_file": str(diff_file)}
    proc = subprocess.run([sys.executable, "-P", "-c", AUDIT_SCRIPT, json.dumps(spec)], cwd=ws, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_indexing_linting_validating_run_nothing_and_stay_in_the_root(hostile: dict[str, Path]) -> None:
    report = run_audited(hostile)
    ev = report["events"]
    assert ev["spawn"] == [], f"processes started: {ev['spawn']}"
    assert ev["code"] == [], f"workspace code compiled or run: {ev['code']}"
    assert markers_written(hostile["markers"]) == []
    ws = os.path.realpath(hostile["ws"])
    outside = os.path.realpath(hostile["outside"])
    escaped, written = [], []
    for event, path, mode in ev["paths"]:
        full = os.path.realpath(os.path.join(str(hostile["ws"]), path))
        if full == outside or full.startswith(outside + os.sep) or full == "/etc" or full.startswith("/etc/"):
            escaped.append((event, path))
        if full.startswith(ws + os.sep) and (event != "open" or (mode and any(c in mode for c in "wax+"))):
            if event not in ("os.listdir", "os.scandir"):
                written.append((event, path, mode))
    assert escaped == [], f"read outside the root: {escaped[:10]}"
    assert written == [], f"changed the workspace: {written[:10]}"
    # Every escaping tool call and diff was refused, and the secret was never echoed.
    assert SECRET not in json.dumps(report)
    assert all(not r["valid"] for r in report["results"]), [r for r in report["results"] if r["valid"]][:3]
    assert all(not p["valid"] for p in report["patches"])
    assert report["codes"][2] == 1 and report["codes"][3] == 1  # the diff and the calls are invalid


def test_tool_call_paths_never_escape_the_root(hostile: dict[str, Path]) -> None:
    engine = Engine(hostile["ws"])
    results = validate_calls(engine, hostile_calls(hostile["outside"]))
    for call, res in zip(hostile_calls(hostile["outside"]), results):
        codes = {e["code"] for e in res["errors"]}
        assert not res["valid"], call
        assert codes & {"path_outside_project", "unknown_path", "invalid_argument"}, (call, codes)
    # The plain escapes are named as such (not as a merely unknown path).
    by_path = {(c["name"], c["arguments"]["path"]): r for c, r in zip(hostile_calls(hostile["outside"]), results)}
    for p in ["../outside/secret.luau", "/etc/passwd", "src/shared/Evil/secret.luau", "src/shared/Link.luau",
              str(hostile["outside"] / "secret.luau"), "src/shared/Evil/New.luau"]:
        for tool in ("read_script", "create_script"):
            codes = [e["code"] for e in by_path[(tool, p)]["errors"]]
            assert "path_outside_project" in codes, (tool, p, codes)
    assert SECRET not in json.dumps(results)


def test_diff_paths_never_escape_the_root_and_nothing_is_written(hostile: dict[str, Path]) -> None:
    def snapshot() -> dict[str, tuple[int, float]]:
        out = {}
        for top in (hostile["ws"], hostile["outside"]):
            for dirpath, dirnames, filenames in os.walk(top):
                for name in filenames:
                    st = os.lstat(os.path.join(dirpath, name))
                    out[os.path.join(dirpath, name)] = (st.st_size, st.st_mtime)
        return out

    before = snapshot()
    engine = Engine(hostile["ws"])
    for diff in hostile_diffs(hostile["outside"]):
        res = validate_patch(engine, None, diff=diff)
        assert not res["valid"], diff
        assert {e["code"] for e in res["errors"]} & {"path_outside_project", "unknown_path"}, (diff, res["errors"])
        assert SECRET not in json.dumps(res)
    assert snapshot() == before


def _console_script() -> Path | None:
    p = Path(sys.executable).parent / "luaguard"
    return p if p.exists() else None


@pytest.mark.parametrize("launch", ["console-script", "python -P -m"])
def test_cli_and_server_import_nothing_from_the_workspace(hostile: dict[str, Path], launch: str) -> None:
    """The CLI and the server started with the workspace as current directory, the way
    editors start them.  (``python -m`` without ``-P`` puts the current directory first on
    ``sys.path``: never launch it that way, see bench/README.md.)"""
    if launch == "console-script":
        script = _console_script()
        if script is None:
            pytest.skip("the luaguard console script is not installed next to this Python")
        base = [str(script)]
    else:
        base = [sys.executable, "-P", "-m", "luaguard.cli"]
    ws = hostile["ws"]
    for args in (["check", "--project", str(ws)], ["index", "--project", str(ws)]):
        proc = subprocess.run(base + args, cwd=ws, capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
    with RawLspClient(ws, hostile["base"] / "server.log", command=base + ["serve"]) as client:
        client.initialize(ws)
        uri = (ws / "src" / "server" / "Main.server.luau").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "luau", "version": 1,
                                                                "text": "require(game.ReplicatedStorage.Shared.Modul)\n"}})
        pubs = client.wait_for(lambda: client.publications(uri), 30, "diagnostics")
        assert any("Modul" in d["message"] for d in pubs[-1].message["params"]["diagnostics"])
        assert client.shutdown() == 0
    assert markers_written(hostile["markers"]) == []


# -- 2. model checkpoints -------------------------------------------------------------------
def test_model_loading_passes_safetensors_only_and_no_remote_code(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers")
    import transformers

    from luaguard.completion import loading as M

    seen: dict[str, dict] = {}

    class Stop(Exception):
        pass

    def record(name):
        def fake(*args, **kwargs):
            seen[name] = kwargs
            raise Stop(name)
        return fake

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", record("model"))
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", record("tokenizer"))
    M.clear_model_cache()
    try:
        with pytest.raises(M.ModelLoadError):
            M.load_model(None, device="cpu")
    finally:
        M.clear_model_cache()
    assert seen["model"]["use_safetensors"] is True
    assert seen["model"]["trust_remote_code"] is False
    assert seen["model"]["local_files_only"] is True


class _Bait:
    """Unpickling this object runs ``open(path, "w")``: the classic pickle payload."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickles_and_remote_code_beside_the_weights_never_run(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import pickle

    from luaguard.completion.loading import ModelLoadError, clear_model_cache, default_model_path, load_model

    folder = tmp_path / "model"
    shutil.copytree(default_model_path(), folder)
    marker = tmp_path / "pickle-ran"
    for name in ("pytorch_model.bin", "model.pt", "training_args.bin"):
        (folder / name).write_bytes(pickle.dumps(_Bait(str(marker))))
    clear_model_cache()
    loaded = load_model(folder, device="cpu")  # the safetensors weights; the pickles are never opened
    assert loaded.model is not None
    assert not marker.exists()

    # A config asking for custom code: refused before anything is imported from the folder.
    code_marker = tmp_path / "remote-code-ran"
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_evil.EvilModel"}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "modeling_evil.py").write_text(f"open({str(code_marker)!r}, 'w')\nclass EvilModel: pass\n")
    clear_model_cache()
    with pytest.raises(ModelLoadError, match="trust_remote_code=False"):
        load_model(folder, device="cpu")
    assert not code_marker.exists()
    clear_model_cache()


# -- 3. hostile project files ---------------------------------------------------------------
def _load_quickly(root: Path, **kwargs):
    t0 = time.perf_counter()
    try:
        return load_project(root, **kwargs), time.perf_counter() - t0
    except ProjectFileError as exc:
        return exc, time.perf_counter() - t0


def test_huge_project_file_is_refused_quickly(tmp_path: Path) -> None:
    with open(tmp_path / "default.project.json", "wb") as fh:
        fh.write(b'{"name": "huge", "tree": {"$className": "DataModel", "x": "')
        fh.write(b"a" * (20 * 1024 * 1024))
        fh.write(b'"}}')
    result, dt = _load_quickly(tmp_path)
    assert isinstance(result, ProjectFileError) and "large" in str(result), result
    assert dt < 5.0


def test_deeply_nested_project_files_are_errors_not_crashes(tmp_path: Path) -> None:
    (tmp_path / "default.project.json").write_text('{"name": "deep", "tree": ' + "[" * 200_000 + "]" * 200_000 + "}")
    result, dt = _load_quickly(tmp_path)
    assert isinstance(result, ProjectFileError) and "deep" in str(result).lower(), result
    # Valid JSON, nested past the node limit: loads, with a problem, in bounded time.
    tree: dict = {"$className": "DataModel"}
    node = tree.setdefault("ReplicatedStorage", {})
    for i in range(450):
        node = node.setdefault(f"F{i}", {"$className": "Folder"})
    (tmp_path / "default.project.json").write_text(json.dumps({"name": "deep", "tree": tree}))
    index, dt = _load_quickly(tmp_path)
    assert not isinstance(index, ProjectFileError), index
    assert index.problems and dt < 5.0


def test_project_paths_to_etc_are_refused_and_never_read(hostile: dict[str, Path]) -> None:
    index = load_project(hostile["ws"])
    texts = " ".join(str(p) for p in index.problems)
    for pointer in ("/tree/ReplicatedStorage/Etc/$path", "/tree/ReplicatedStorage/Packages/$path",
                    "/tree/ReplicatedStorage/Up/$path"):
        assert pointer in texts, texts
    assert "src/shared/Evil" in texts and "src/shared/Link.luau" in texts, texts
    for rel in index.file_instances:
        full = os.path.realpath(hostile["ws"] / rel)
        assert full.startswith(os.path.realpath(hostile["ws"]) + os.sep), rel
    names = {n.name for n in index.root.descendants()}
    assert "passwd" not in names and "secret" not in names and "Hidden" not in names
    rs = index.datamodel.child("ReplicatedStorage")
    # A script symlinked from outside keeps its instance (Rojo would sync it) but not its file.
    link = rs.child("Shared").child("Link")
    assert link is not None and link.class_name == "ModuleScript" and not link.file_paths
    for child in ("Packages", "Etc", "Up"):
        node = rs.child(child)
        assert node is None or (node.is_open and not node.children), (child, node)


def test_sourcemap_naming_etc_passwd(tmp_path: Path) -> None:
    sm = {"name": "game", "className": "DataModel", "children": [
        {"name": "ReplicatedStorage", "className": "ReplicatedStorage", "children": [
            {"name": "Passwd", "className": "ModuleScript", "filePaths": ["/etc/passwd"]},
            {"name": "Up", "className": "ModuleScript", "filePaths": ["../../../../etc/shadow"]},
            {"name": "Ok", "className": "ModuleScript", "filePaths": ["src/Ok.luau"]}]}]}
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "Ok.luau").write_text("return {}\n")
    (tmp_path / "sourcemap.json").write_text(json.dumps(sm))
    index = load_project(tmp_path)
    assert set(index.file_instances) == {"src/Ok.luau"}
    engine = Engine(tmp_path, project=index)
    assert [p.name for p in engine.script_files()] == ["Ok.luau"]


def test_cli_reports_hostile_project_files_without_traceback(tmp_path: Path) -> None:
    cases = {
        "nested": '{"tree": ' + "{\"a\": " * 5000 + "1" + "}" * 5000 + "}",
        "binary": "\x00\x01\x02",
        "not-an-object": "[1, 2, 3]",
    }
    for name, content in cases.items():
        root = tmp_path / name
        root.mkdir()
        (root / "default.project.json").write_text(content)
        proc = subprocess.run([sys.executable, "-P", "-m", "luaguard.cli", "index", "--project", str(root)],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        assert "default.project.json" in proc.stderr and "Traceback" not in proc.stderr, (name, proc.stderr)


# -- 4. tool calls: workspace-controlled files and schemas never reach outside ---------------------------------------------
def test_tools_file_outside_the_root_is_refused(tmp_path: Path) -> None:
    from luaguard.toolcalls.api import toolset
    from luaguard.workspace import read_project_settings

    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"tools": [{"name": "leak", "inputSchema": {"type": "object"}}]}))
    root = tmp_path / "ws"
    root.mkdir()
    (root / "luaguard.toml").write_text(f'[toolcalls]\ntools_file = "{outside}"\n')
    engine = Engine(root, read_project_settings(root).settings)
    try:
        names = set(toolset(engine).tools)
    except Exception:  # noqa: BLE001 - a refusal is fine
        return
    assert "leak" not in names


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_schema_refs_are_never_retrieved(tmp_path: Path) -> None:
    outside = tmp_path / "schema.json"
    outside.write_text('{"type": "integer"}')
    (tmp_path / "ws").mkdir()
    root = tmp_path / "ws"
    tools = {"tools": [{"name": "ref_tool", "inputSchema": {"type": "object", "required": ["b"],
                                                           "properties": {"b": {"$ref": outside.as_uri()}}}}]}
    (root / "tools.json").write_text(json.dumps(tools))
    (root / "luaguard.toml").write_text('[toolcalls]\ntools_file = "tools.json"\n')
    from luaguard.workspace import read_project_settings

    engine = Engine(root, read_project_settings(root).settings)
    results = validate_calls(engine, [{"name": "ref_tool", "arguments": {"b": "not an integer"}}])
    # Had the file been read, its schema ("integer") would reject the string.
    assert not any("integer" in e["message"] for r in results for e in r["errors"])


def test_new_file_through_a_root_level_symlink_is_refused(hostile: dict[str, Path]) -> None:
    [res] = validate_calls(Engine(hostile["ws"]), [{"name": "create_script",
                                                   "arguments": {"path": "Packages/passwd", "content": "return {}\n"}}])
    assert not res["valid"]
