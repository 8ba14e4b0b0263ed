"""Tool-call validation: reader shapes, bad input, schemas, paths, plans, overlay, feedback,
stats and the ``luaguard validate`` command."""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

import pytest
from luaguard import cli
from luaguard.config import ToolCallSettings, settings_from_mapping
from luaguard.engine import Engine
from luaguard.project import to_json
from luaguard.toolcalls import api
from luaguard.toolcalls.feedback import MAX_CHARS
from luaguard.toolcalls.overlay import Overlay
from luaguard.toolcalls.reader import read_calls
from luaguard.toolcalls.schemas import (
    ToolSchemaError,
    build_toolset,
    load_tool_definitions,
)

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
SAMPLES = ROOT / "samples" / "toolcalls"


@pytest.fixture(scope="module")
def engine() -> Engine:
    e = Engine(PLACE)
    e.reload_project(strict=True)
    return e


def one(engine: Engine, data) -> dict:
    results = api.validate_calls(engine, data)
    assert len(results) == 1, results
    return results[0]


def codes(result: dict) -> list[str]:
    return sorted({e["code"] for e in result["errors"]})


def call(tool: str, **args) -> dict:
    return {"name": tool, "arguments": args}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


SMALL_PROJECT = {
    "default.project.json": json.dumps({"name": "Small", "tree": {
        "$className": "DataModel",
        "ServerScriptService": {"$className": "ServerScriptService", "Server": {"$path": "src/server"}},
        "ReplicatedStorage": {"$className": "ReplicatedStorage", "Shared": {"$path": "src/shared"}},
    }}),
    "src/server/Main.server.luau": "print('main')\n",
    "src/shared/Util.luau": "return {}\n",
}


# -- reader ------------------------------------------------------------------------------------
def test_bad_input_sample_reports_line_and_column_and_goes_on(engine: Engine) -> None:
    expect = json.loads((SAMPLES / "bad_input.expect.json").read_text())
    results = api.validate_calls(engine, (SAMPLES / "bad_input.jsonl").read_bytes())
    assert [r["line"] for r in results] == [e["line"] for e in expect]
    for r, e in zip(results, expect):
        assert r["valid"] is e["valid"], r
        assert codes(r) == e["codes"], r
        if "message_contains" in e:
            assert e["message_contains"] in r["errors"][0]["message"]
        if "error_count" in e:
            assert len(r["errors"]) == e["error_count"]


def test_jsonl_error_keeps_the_next_line(engine: Engine) -> None:
    text = '{"name": "read_script", "arguments": {"path": "src/shared/Types.luau"\n' \
           + json.dumps(call("read_script", path="src/shared/Types.luau")) + "\n"
    results = api.validate_calls(engine, text)
    assert [(r["line"], r["valid"]) for r in results] == [(1, False), (2, True)]
    assert results[0]["errors"][0]["code"] == "invalid_json"
    assert "line 1, column" in results[0]["errors"][0]["message"]


def test_pretty_printed_values_one_after_another(engine: Engine) -> None:
    a = json.dumps(call("read_script", path="src/shared/Types.luau"), indent=2)
    b = json.dumps(call("read_script", path="src/shared/Typez.luau"), indent=2)
    results = api.validate_calls(engine, a + "\n" + b + "\n")
    assert [r["valid"] for r in results] == [True, False]
    assert results[1]["line"] == a.count("\n") + 2


def test_pretty_printed_document_with_an_error_is_one_problem(engine: Engine) -> None:
    doc = '{\n  "name": "read_script",\n  "arguments": {\n    "path": \n  }\n}\n'
    results = api.validate_calls(engine, doc)
    assert len(results) == 1 and codes(results[0]) == ["invalid_json"]
    assert "line 5, column 3" in results[0]["errors"][0]["message"]


def test_reader_shapes() -> None:
    shapes = [
        (call("read_script", path="x"), 1, "single"),
        ([call("read_script", path="x"), call("read_script", path="y")], 2, "sequence"),
        ({"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                                               "function": {"name": "read_script", "arguments": '{"path": "x"}'}}]}, 1, "sequence"),
        ({"type": "tool_use", "id": "t", "name": "read_script", "input": {"path": "x"}}, 1, "single"),
        ({"steps": [{"id": "a", "name": "read_script", "arguments": {"path": "x"}}]}, 1, "plan"),
        ({"case": "wrapped", "call": call("read_script", path="x"), "expect": {}}, 1, "single"),
        ([{"id": 1, "depends_on": [], "call": call("read_script", path="x")}], 1, "plan"),
    ]
    for data, n, kind in shapes:
        batches = read_calls(data)
        assert len(batches) == 1 and batches[0].kind == kind, data
        recs = batches[0].calls
        assert len(recs) == n and all(r.name == "read_script" and not r.problems for r in recs), data
        assert recs[0].arguments == {"path": "x"}


def test_arguments_string_and_confidence_placement() -> None:
    rec = read_calls({"name": "read_script", "arguments": '{"path": "a", "confidence": 0.3}'})[0].calls[0]
    assert rec.arguments == {"path": "a"} and rec.confidence == 0.3
    rec = read_calls({"name": "read_script", "arguments": "", "confidence": 0.9})[0].calls[0]
    assert rec.arguments == {} and rec.confidence == 0.9


@pytest.mark.parametrize("data", [None, 3.5, True, "", "   ", [], {}, {"tool_calls": 5}, {"steps": "x"},
                                  {"name": ["read_script"]}, {"name": "read_script", "arguments": 7},
                                  {"function": {"name": None}}, b"\xff\xfe\x00garbage", "[[[[", "{\"a\":" * 50])
def test_unknown_shapes_never_crash(engine: Engine, data) -> None:
    results = api.validate_calls(engine, data)
    assert results and all(not r["valid"] for r in results)
    for r in results:
        assert r["errors"][0]["code"] in ("invalid_call", "invalid_json", "invalid_argument", "unknown_tool")
        assert r["feedback"]


def test_deeply_nested_json_text_is_a_clear_error(engine: Engine) -> None:
    depth = 100_000
    text = '{"name": "read_script", "arguments": {"path": ' + "[" * depth + "]" * depth + "}}"
    r = one(engine, text)
    assert codes(r) == ["invalid_json"]
    assert "nested too deeply" in r["errors"][0]["message"] and "line 1" in r["errors"][0]["message"]
    inner = json.dumps({"path": "x"})[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"
    r = one(engine, {"name": "read_script", "arguments": inner})  # the arguments string is too deep
    assert codes(r) == ["invalid_argument"] and "nested too deeply" in r["errors"][0]["message"]


def test_deeply_nested_arguments_object_is_a_clear_error(engine: Engine) -> None:
    value: object = "leaf"
    for _ in range(50_000):  # built iteratively: a Python object deeper than the recursion limit
        value = {"x": value}
    r = one(engine, {"name": "modify_property", "arguments": {
        "instancePath": "Workspace.SpawnLocation", "property": "Anchored", "value": value}})
    assert codes(r) == ["invalid_argument"]
    assert "nested more than" in r["errors"][0]["message"] and r["errors"][0]["field"] == "value"


def test_five_megabyte_content_is_rejected_quickly(engine: Engine) -> None:
    content = "local x = 1\n" * (5 * 1024 * 1024 // 12)
    text = json.dumps(call("patch_script", path="src/shared/Types.luau", content=content))
    t0 = time.perf_counter()
    r = one(engine, text)
    elapsed = time.perf_counter() - t0
    assert codes(r) == ["invalid_argument"] and r["errors"][0]["field"] == "content"
    assert "limit" in r["errors"][0]["message"]
    assert elapsed < 5  # not linted: parsing 5 MB of JSON only


def test_non_string_fields(engine: Engine) -> None:
    r = one(engine, call("modify_property", instancePath=["Workspace"], property=None, value=1))
    assert codes(r) == ["invalid_argument", "missing_field"]
    fields = {e["field"]: e["code"] for e in r["errors"]}
    assert fields == {"instancePath": "invalid_argument", "property": "missing_field"}


# -- per-call semantics ----------------------------------------------------------------------
def test_unknown_path_feedback_names_what_exists(engine: Engine) -> None:
    r = one(engine, call("patch_script", path="ServerScriptService.Server.Bootstrp", content="print(1)\n"))
    assert r["errors"][0]["suggestions"][0] == "ServerScriptService.Server.Bootstrap"
    fb = r["feedback"]
    assert "Script 'ServerScriptService.Server.Bootstrp' does not exist" in fb
    assert "Did you mean 'ServerScriptService.Server.Bootstrap'?" in fb
    assert "Scripts under ServerScriptService.Server: Bootstrap, Services.AbilityService" in fb


def test_all_missing_fields_are_listed(engine: Engine) -> None:
    r = one(engine, call("modify_property"))
    assert [e["field"] for e in r["errors"]] == ["instancePath", "property", "value"]
    assert all(e["code"] == "missing_field" for e in r["errors"])


def test_enum_items_are_checked(engine: Engine) -> None:
    apiobj = engine.project.api
    if not apiobj.enum_items("Material"):
        pytest.skip("the shipped API data lists no Enum.Material items (data bug); nothing to check against")
    bad = one(engine, call("modify_property", instancePath="Workspace.SpawnLocation", property="Material", value="Plastc"))
    assert codes(bad) == ["wrong_property_type"] and bad["errors"][0]["suggestions"][0] == "Plastic"
    ok = one(engine, call("modify_property", instancePath="Workspace.SpawnLocation", property="Material", value="Plastic"))
    assert ok["valid"]


def test_enum_without_items_accepts_any_name(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(engine.project.api.enums, "Material", ())
    r = one(engine, call("modify_property", instancePath="Workspace.SpawnLocation", property="Material", value="Plastc"))
    assert r["valid"], r
    wrong_enum = one(engine, call("modify_property", instancePath="Workspace.SpawnLocation", property="Material",
                                  value="Enum.PartType.Ball"))
    assert codes(wrong_enum) == ["wrong_property_type"]


def test_local_player_paths_resolve(engine: Engine) -> None:
    r = one(engine, call("modify_property", instancePath="Players.LocalPlayer.PlayerGui.MainHud.Currency",
                         property="Text", value="100"))
    assert r["valid"], r


def test_backslash_file_paths_and_slash_instance_paths(engine: Engine) -> None:
    assert one(engine, call("read_script", path="src\\server\\Bootstrap.server.luau"))["valid"]
    assert one(engine, call("read_script", path="ServerScriptService/Server/Bootstrap"))["valid"]
    r = one(engine, call("read_script", path="ServerScriptService/Server/Bootstrp"))
    assert r["errors"][0]["suggestions"][0] == "ServerScriptService.Server.Bootstrap"


def test_absolute_path_inside_root_is_accepted(engine: Engine) -> None:
    r = one(engine, call("read_script", path=str(PLACE / "src" / "shared" / "Types.luau")))
    assert r["valid"], r


def test_symlink_escaping_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.luau").write_text("return 'secret'\n")
    root = write(tmp_path / "proj", SMALL_PROJECT)
    os.symlink(outside, root / "src" / "shared" / "link")
    e = Engine(root)
    for path in ("src/shared/link/secret.luau", "src/shared/link/new.luau"):
        r = one(e, call("create_script", path=path, content="return nil\n"))
        assert codes(r) == ["path_outside_project"], r
        assert "symbolic link" in r["errors"][0]["message"]


def test_create_script_in_new_subdirectory_resolves_script(tmp_path: Path) -> None:
    root = write(tmp_path / "proj", SMALL_PROJECT)
    e = Engine(root)
    ok = one(e, call("create_script", path="src/shared/Deep/Er/Mod.luau",
                     content="local Util = require(script.Parent.Parent.Parent.Util)\nreturn Util\n"))
    assert ok["valid"], ok
    bad = one(e, call("create_script", path="src/shared/Deep/Mod.luau",
                      content="local Util = require(script.Parent.Parent.Utill)\nreturn Util\n"))
    assert codes(bad) == ["unknown_instance"]
    assert bad["errors"][0]["range"]["start"]["line"] == 0


def test_no_project_still_checks_schema_and_content(tmp_path: Path) -> None:
    e = Engine(None)
    r = one(e, call("patch_script", path="x.luau", content="-- TODO\n"))
    assert codes(r) == ["placeholder"]
    assert codes(one(e, call("read_script"))) == ["missing_field"]


# -- schemas -----------------------------------------------------------------------------------
TOOL_PARAMS = {"type": "object", "properties": {
    "parent": {"type": "string", "x-luaguard": "parent_path"},
    "kind": {"type": "string", "enum": ["Zombie", "Knight"]},
}, "required": ["parent", "kind"], "additionalProperties": False}


def test_openai_and_mcp_tool_files(engine: Engine, tmp_path: Path) -> None:
    openai = tmp_path / "openai.json"
    openai.write_text(json.dumps({"tools": [{"type": "function", "function": {
        "name": "spawn_npc", "description": "Spawn an NPC", "parameters": TOOL_PARAMS}}]}))
    mcp = tmp_path / "mcp.json"
    mcp.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "run_tests", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                                               "required": ["path"]}}]}}))
    data = [call("spawn_npc", parent="Workspace", kind="Knight"),
            call("spawn_npc", parent="Workspace.Mapp", kind="Knigt"),
            call("run_tests", path="../x"),
            call("run_tests", path="src/shared/Types.luau")]
    results = api.validate_calls(engine, data, extra_tool_files=[openai, mcp])
    assert [r["valid"] for r in results] == [True, False, False, True]
    assert codes(results[1]) == ["invalid_argument", "unknown_path"]
    by_field = {e["field"]: e for e in results[1]["errors"]}
    assert by_field["kind"]["suggestions"] == ["Knight"]
    assert by_field["parent"]["suggestions"][0] == "Workspace.Map"
    assert codes(results[2]) == ["path_outside_project"]  # heuristic role for a field named path


def test_tool_definition_problems_are_reported_not_fatal() -> None:
    tools, problems = load_tool_definitions([
        {"name": "ok", "parameters": {"type": "object"}},
        {"parameters": {}},
        {"name": "bad_schema", "parameters": {"type": 5}},
        {"name": "bad_role", "parameters": {"type": "object", "properties": {"p": {"x-luaguard": "nonsense"}}}},
        "not a tool",
    ], "tools.json")
    assert [t.name for t in tools] == ["ok"]
    assert len(problems) == 4 and all(p.startswith("tools.json: tools[") for p in problems)
    assert "invalid JSON Schema" in problems[1]


def test_unreadable_tools_file_names_file_line_column(tmp_path: Path) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text('{"tools": [\n  {"name": }\n]}')
    with pytest.raises(ToolSchemaError, match=r"tools.json:2:12: invalid JSON"):
        build_toolset(ToolCallSettings(), tmp_path, [bad])
    with pytest.raises(ToolSchemaError, match="cannot read"):
        build_toolset(ToolCallSettings(tools_file="missing.json"), tmp_path)


def test_settings_tools_aliases_and_replace_builtin(tmp_path: Path) -> None:
    settings, problems = settings_from_mapping({"toolcalls": {
        "tools": [{"name": "spawn_npc", "parameters": TOOL_PARAMS}],
        "aliases": {"make_npc": "spawn_npc", "ghost": "nope"},
        "replace_builtin": True, "min_confidence": 0.5, "max_content_bytes": 1000,
    }}, "luaguard.toml")
    assert problems == []
    ts = build_toolset(settings.toolcalls, tmp_path)
    assert list(ts.tools) == ["spawn_npc"]
    assert ts.aliases == {"make_npc": "spawn_npc"}
    assert any("ghost" in p for p in ts.problems)
    _, problems = settings_from_mapping({"toolcalls": {"tools": "x", "max_content_bytes": -1}}, "t")
    assert {p.key for p in problems} == {"toolcalls.tools", "toolcalls.max_content_bytes"}


def test_settings_drive_validation(tmp_path: Path) -> None:
    root = write(tmp_path / "proj", {**SMALL_PROJECT, "luaguard.toml": (
        '[toolcalls]\nmin_confidence = 0.9\nmax_content_bytes = 64\naliases = { fetch_code = "read_script" }\n')})
    out = io.StringIO()
    sys_stdout = sys.stdout
    try:
        sys.stdout = out
        rc = cli.main(["validate", "--project", str(root), "--format", "json", str(_write_calls(tmp_path, [
            {**call("read_script", path="src/shared/Util.luau"), "confidence": 0.8},
            call("fetch_code", path="src/shared/Util.luau"),
            call("patch_script", path="src/shared/Util.luau", content="-- " + "x" * 100 + "\nreturn {}\n"),
        ]))])
    finally:
        sys.stdout = sys_stdout
    results = json.loads(out.getvalue())
    assert rc == 1
    assert [codes(r) for r in results] == [["low_confidence"], ["unknown_tool"], ["invalid_argument"]]
    assert results[1]["errors"][0]["suggestions"][0] == "read_script"


def _write_calls(tmp_path: Path, calls: list) -> Path:
    p = tmp_path / "calls.jsonl"
    p.write_text("".join(json.dumps(c) + "\n" for c in calls))
    return p


# -- plans and the overlay ---------------------------------------------------------------------
def test_cycle_is_spelled_out(engine: Engine) -> None:
    plan = {"steps": [
        {"id": "a", "depends_on": ["c"], **call("get_project_structure")},
        {"id": "b", "depends_on": ["a"], **call("get_project_structure")},
        {"id": "c", "depends_on": ["b"], **call("get_project_structure")},
    ]}
    results = api.validate_calls(engine, plan)
    for r in results:
        assert codes(r) == ["dependency_cycle"]
        assert "a → c → b → a" in r["errors"][0]["message"]
    assert [r["step"] for r in results] == ["a", "b", "c"]


def test_long_plan_without_recursion_limits(engine: Engine) -> None:
    n = 3000
    steps = [{"id": f"s{i}", "depends_on": [f"s{i + 1}"] if i < n - 1 else ["s0"], **call("get_project_structure")}
             for i in range(n)]
    results = api.validate_calls(engine, {"steps": steps})
    assert len(results) == n and all(codes(r) == ["dependency_cycle"] for r in results)


def test_overlay_never_mutates_the_index(engine: Engine) -> None:
    project = engine.project
    before = json.dumps(to_json(project), sort_keys=True)
    ov = Overlay(project)
    folder, _ = project.resolve_partial("ReplicatedStorage.Shared.Modules")
    created = ov.create(folder, "Parry", "ModuleScript", file="src/shared/Modules/Parry.luau")
    combat = project.resolve_path("ReplicatedStorage.Shared.Modules.Combat")
    ov.delete(combat)
    node, rest = ov.resolve_partial("ReplicatedStorage.Shared.Modules.Parry")
    assert node is created and not rest
    assert ov.resolve_partial("ReplicatedStorage.Shared.Modules.Combat")[1] == ["Combat"]
    assert ov.instances_for_file("src/shared/Modules/Combat.luau") == []
    assert ov.instances_for_file("src/shared/Modules/Parry.luau") == [created]
    assert json.dumps(to_json(project), sort_keys=True) == before
    assert project.resolve_path("ReplicatedStorage.Shared.Modules.Combat") is combat
    assert "src/shared/Modules/Parry.luau" not in project.file_instances


def test_jsonl_lines_are_independent_but_a_message_is_a_sequence(engine: Engine) -> None:
    create = call("create_instance", className="Folder", parent="ServerStorage", name="Loot")
    use = call("create_instance", className="Part", parent="ServerStorage.Loot", name="Gem")
    lines = json.dumps(create) + "\n" + json.dumps(use) + "\n"
    assert [r["valid"] for r in api.validate_calls(engine, lines)] == [True, False]
    assert [r["valid"] for r in api.validate_calls(engine, [create, use])] == [True, True]


def test_deleted_then_used_names_the_deleting_step(engine: Engine) -> None:
    results = api.validate_calls(engine, {"steps": [
        {"id": "rm", **call("delete_script", path="ReplicatedStorage.Shared.Util.Maid")},
        {"id": "use", "depends_on": ["rm"], **call("read_script", path="src/shared/Util/Maid.luau")},
    ]})
    assert results[0]["valid"] and codes(results[1]) == ["unknown_path"]
    assert "deleted by step 'rm'" in results[1]["errors"][0]["message"]


# -- feedback and stats -------------------------------------------------------------------------
def test_feedback_is_bounded(engine: Engine) -> None:
    content = "".join(f"local v{i} = game.ReplicatedStorage.Shared.Nope{i}\n" for i in range(300))
    r = one(engine, call("patch_script", path="src/shared/Types.luau", content=content))
    assert len(r["errors"]) == 300
    assert len(r["feedback"]) <= MAX_CHARS
    assert "more problems" in r["feedback"]


def test_stats_count_calls_and_codes(tmp_path: Path) -> None:
    root = write(tmp_path / "proj", SMALL_PROJECT)
    e = Engine(root)
    api.validate_calls(e, [call("read_scrpt", path="x"), call("read_script", path="src/shared/Util.luau"),
                           call("patch_script", path="src/shared/Util.luau", content="-- TODO\nreturn {}\n")])
    api.validate_patch(e, "src/shared/Util.luau", content="return {\n")
    s = api.stats(e)
    assert s["toolcalls"] == {"calls": 3, "valid": 1, "invalid": 2, "patches": 1, "invalid_patches": 1}
    assert s["rules"]["unknown_tool"] == 1 and s["rules"]["placeholder"] == 1
    # a content finding whose rule id is also a call code is counted once
    before = api.stats(e)["rules"].get("unknown_class", 0)
    r = one(e, call("patch_script", path="src/shared/Util.luau", content='local p = Instance.new("Prat")\nreturn p\n'))
    assert codes(r) == ["unknown_class"] and r["errors"][0]["field"] == "content"
    assert api.stats(e)["rules"]["unknown_class"] == before + 1
    assert s["rules"].get("unbalanced_bracket", 0) + s["rules"].get("syntax_error", 0) >= 1


# -- CLI -------------------------------------------------------------------------------------------
def run_cli(args: list[str], stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr, sys.stdin
    try:
        sys.stdout, sys.stderr = out, err
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
        rc = cli.main(args)
    finally:
        sys.stdout, sys.stderr, sys.stdin = old
    return rc, out.getvalue(), err.getvalue()


def test_cli_validate_jsonl_and_exit_codes() -> None:
    good = json.dumps(call("read_script", path="src/shared/Types.luau"))
    rc, out, _ = run_cli(["validate", "--project", str(PLACE)], stdin=good + "\n")
    assert rc == 0 and json.loads(out)["valid"] is True
    rc, out, err = run_cli(["validate", "--project", str(PLACE), "--stats"],
                           stdin=good + "\n" + json.dumps(call("list_files")) + "\n")
    lines = [json.loads(x) for x in out.splitlines()]
    assert rc == 1 and [x["valid"] for x in lines] == [True, False]
    assert set(lines[1]) >= {"valid", "errors", "feedback"}
    assert set(lines[1]["errors"][0]) >= {"code", "message", "field", "suggestions"}
    assert "calls: 2 (1 valid, 1 invalid)" in err and "unknown_tool" in err


def test_cli_validate_usage_errors(tmp_path: Path) -> None:
    rc, _, err = run_cli(["validate", "--project", str(PLACE), str(tmp_path / "nope.jsonl")])
    assert rc == 2 and "nope.jsonl: cannot read" in err
    bad = tmp_path / "tools.json"
    bad.write_text("{")
    rc, _, err = run_cli(["validate", "--project", str(PLACE), "--tools", str(bad)], stdin="{}")
    assert rc == 2 and "tools.json:1:2: invalid JSON" in err


def test_cli_validate_text_format() -> None:
    rc, out, _ = run_cli(["validate", "--project", str(PLACE), "--format", "text"],
                         stdin=json.dumps(call("create_instance", className="Prat", parent="Workspace", name="B")))
    assert rc == 1
    assert "error[unknown_class] className: There is no Roblox class named 'Prat'. Did you mean 'Part'?" in out
