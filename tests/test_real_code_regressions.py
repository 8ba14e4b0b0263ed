"""Regression tests for the classes of false findings that public, modern Luau showed
(``bench/real_code.py`` over the corpus of ``bench/corpus/manifest.json``).

Every snippet here is written for this file - none is copied from the corpus - and each
stands for one class of miss: valid code the linter called wrong, prose read as a
placeholder, a template script checked where it does not run, a project layout the file
walk missed.  The guard's side of the same classes is in ``test_guard_real_code.py``,
which reads :data:`VALID` from here.
"""

from __future__ import annotations


import pytest

from luaguard.cli import main
from luaguard.engine import Engine
from luaguard.findings import Severity
from project_files import rojo_project, write_files

#: valid Luau (the reference compiler accepts each) on which neither mode reports anything
VALID: dict[str, str] = {
    # generics before an `if` body: the `>` of a type is no expression preceder
    "generic_method_then_if": (
        "local Store = {}\n"
        "function Store:Read<K>(key: K): Entry<K>\n"
        "\tif self.cache[key] then\n"
        "\t\treturn self.cache[key]\n"
        "\tend\n"
        "\treturn nil\n"
        "end\n"
        "return Store\n"
    ),
    "cast_with_generics_then_if": (
        "local function unwrap<T>(value: any)\n"
        "\tvalue = value :: Box<T>\n"
        "\tif value then\n"
        "\t\tprint(value)\n"
        "\tend\n"
        "end\n"
        "return unwrap\n"
    ),
    "local_annotation_then_if": (
        "local lookup: Map<string, number> = {}\n"
        "if lookup.a then\n"
        "\tprint(lookup.a)\n"
        "end\n"
    ),
    # type packs and varargs in types and parameter lists
    "vararg_function_type_then_typed_vararg": (
        "type Handler = (...any) -> ()\n"
        "local function log(...: string)\n"
        "\tprint(...)\n"
        "end\n"
        "return log\n"
    ),
    "generic_pack_parameter": (
        "local function defer<Args...>(fn: (Args...) -> (), ...: Args...)\n"
        "\ttask.defer(fn, ...)\n"
        "end\n"
        "return defer\n"
    ),
    "nil_first_union_and_read_write_fields": (
        "type Options = {\n"
        "\tlabel: nil | string,\n"
        "\tread size: number,\n"
        "\twrite onChange: ((number) -> ())?,\n"
        "\t[string]: any,\n"
        "}\n"
        "local o: Options = {} :: any\n"
        "return o\n"
    ),
    "typeof_in_type_lists": (
        "local Pool = {}\n"
        "type Maker = (string) -> (typeof(Pool), buffer | string)\n"
        "type Bag = { typeof(Pool) }\n"
        "local function make(): (typeof(setmetatable({}, {})) | false, string?)\n"
        "\treturn false, nil\n"
        "end\n"
        "return make\n"
    ),
    "string_singleton_types": (
        "type Side = \"left\" | \"right\"\n"
        "local side: Side = \"left\"\n"
        "return side\n"
    ),
    "attributes": (
        "@native\n"
        "local function double(n: number): number\n"
        "\treturn n * 2\n"
        "end\n"
        "@[checked, native]\n"
        "function double2(n: number): number\n"
        "\treturn n * 2\n"
        "end\n"
        "return double\n"
    ),
    "integer_literals_and_separators": "local big = 1_000_000\nlocal mask = 0xFF_FF\nlocal bits = 0b1010\nreturn big + mask + bits\n",
    "if_expression_in_call": (
        "local function pick(flag: boolean)\n"
        "\treturn tostring(if flag then \"yes\" else \"no\")\n"
        "end\n"
        "return pick\n"
    ),
    "call_with_table_and_string_arguments": (
        "local function f(t) return t end\n"
        "local a = f{ x = 1 }.x\n"
        "local b = f\"text\"\n"
        "return a, b\n"
    ),
    # comments: doc comments, prose, commented-out code, long comments closed by `--]]`
    "doc_comment_with_class_tag_and_example": (
        "--[=[\n"
        "\t@class Queue\n"
        "\tA first-in first-out list.\n"
        "\n"
        "\t```lua\n"
        "\tqueue:Push(1)\n"
        "\t-- Same as above, but at the front\n"
        "\tqueue:PushFront(1)\n"
        "\t```\n"
        "]=]\n"
        "local Queue = {}\n"
        "return Queue\n"
    ),
    "doc_comment_starting_with_ellipsis": (
        "--- ...then every remaining argument is forwarded to `handler(...)`.\n"
        "local function forward(handler, ...)\n"
        "\treturn handler(...)\n"
        "end\n"
        "return forward\n"
    ),
    "prose_mentioning_implementation": (
        "-- We implement this here because the engine offers no such event.\n"
        "-- These are temporary placeholders until the final art arrives.\n"
        "local colors = { Color3.new(1, 0, 0) }\n"
        "return colors\n"
    ),
    "long_comment_closed_by_dashes": (
        "--[[\n"
        "\tprint(\"disabled for now\")\n"
        "--]]\n"
        "local enabled = false\n"
        "return enabled\n"
    ),
    "comment_paragraph_of_prose": (
        "-- The queue keeps at most 64 entries.\n"
        "-- The rest of the entries are dropped, oldest first,\n"
        "-- so that memory stays bounded.\n"
        "local LIMIT = 64\n"
        "return LIMIT\n"
    ),
    # varargs the parser reads as expressions: never placeholders
    "varargs_everywhere": (
        "local function count(...)\n"
        "\tlocal n = select(\"#\", ...)\n"
        "\tlocal packed = { ... }\n"
        "\treturn n, packed, ...\n"
        "end\n"
        "return count\n"
    ),
    # a service by the instance name it still has ("Run Service" is RunService's)
    "service_instance_name_with_a_space": "local RunService = game[\"Run Service\"]\nreturn RunService.Heartbeat\n",
    # data type members in lower case (Vector3's deprecated aliases still work)
    "datatype_lower_case_alias": "local v = Vector3.new(1, 2, 3)\nlocal m = v.magnitude\nreturn m\n",
    # an ellipsis after code on its line documents that code: prose, not an elision
    "ellipsis_noting_the_code_before_it": (
        "local function tokenOf(s: string): string\n"
        "\tif s == \"...\" then\n"
        "\t\treturn \"VARARG\"   -- ...\n"
        "\telseif s == \"..\" then return \"CONCAT\" -- ..\n"
        "\tend\n"
        "\treturn \"NAME\" -- \u2026 and the rest\n"
        "end\n"
        "return tokenOf\n"
    ),
    # method chains continued line after line, and a long table whose string spans lines:
    # the guard primed at any line reads the statement it is in from its start
    "method_chain_over_lines": (
        "local Steps = {}\n"
        "function Steps.Run(chain)\n"
        "\treturn chain:start()\n"
        "\t\t:andThen(Steps.Wait(1))\n"
        "\t\t:andThen(Steps.Show)\n"
        "\t\t:catch(warn)\n"
        "end\n"
        "return Steps\n"
    ),
    "table_with_a_long_string_then_fields_set": (
        "local info = {\n"
        "\tname = \"x\",\n"
        "\tnotice = [[\n"
        "\t  first line\n"
        "\t  second line\n"
        "\t]],\n"
        "}\n"
        "info.key = setmetatable({}, {__tostring = function() return \"key\" end})\n"
        "return info\n"
    ),
}


def lint(src: str, mode: str, path: str = "x.luau", engine: Engine | None = None):
    return (engine or Engine()).lint_text(src, path, mode=mode)


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_modern_luau_gets_no_finding(name):
    for mode in ("editor", "patch"):
        found = lint(VALID[name], mode)
        assert found == [], (mode, [(f.rule, f.range.start.line + 1, f.message) for f in found])


@pytest.mark.parametrize(
    "src",
    [
        "local x = 1\n-- ... rest of code\n",
        "local function f()\n\t...\nend\n",
        "-- your code here\n",
        "-- implement this\n",
        "--[=[\n\tDoes things.\n]=]\nlocal function f()\n\t-- rest of the function stays the same\nend\n",
    ],
)
def test_truncation_markers_keep_their_recall(src):
    found = [f for f in lint(src, "editor") if f.rule == "placeholder"]
    assert len(found) == 1 and found[0].severity is Severity.ERROR


def test_placeholder_finding_names_and_covers_only_the_phrase():
    """In a paragraph of comment lines, the finding quotes the phrase that matched and its
    range covers that phrase only, not the paragraph."""
    src = "local x = 1\n" + "".join(f"-- line {i} of a long note\n" for i in range(18)) + "-- ... rest of the handlers\n"
    (f,) = [f for f in lint(src, "editor") if f.rule == "placeholder"]
    assert "'... rest'" in f.message and "line 0" not in f.message
    assert f.range.start.line == f.range.end.line == 19
    line = src.splitlines()[19]
    assert line[f.range.start.character:f.range.end.character] == "... rest"


def test_structure_findings_only_where_the_parser_errs():
    """A structure finding always comes with a parser error (one source of truth)."""
    broken = "local function f()\n\tif x then\n\t\tprint(x)\nend\n"
    rules = {f.rule for f in lint(broken, "editor")}
    assert rules & {"unclosed_block", "syntax_error"}
    for src in VALID.values():
        assert not {f.rule for f in lint(src, "editor")} & {"unclosed_block", "unbalanced_bracket", "syntax_error"}


def test_service_names_are_checked_without_a_project():
    found = lint('local P = game:GetService("Playerz")\n', "editor")
    assert [(f.rule, f.severity) for f in found] == [("unknown_service", Severity.ERROR)]
    assert "Players" in found[0].message


# -- projects ------------------------------------------------------------------------------
def test_template_scripts_leave_script_parent_open(tmp_path):
    """Roblox does not run a LocalScript under ServerScriptService, nor a Script with the
    Legacy run context under ServerStorage: such scripts are templates cloned elsewhere."""
    write_files(tmp_path, {
        "default.project.json": rojo_project({
            "ServerScriptService": {"$path": "src/server"},
            "ServerStorage": {"$path": "src/storage"},
        }),
        "src/server/Spin.client.luau": "local v = script.Parent.AssemblyLinearVelocity\nlocal n = script.Parent.Neck\n",
        "src/storage/Templates/Regen.server.luau": "local h = script.Parent:WaitForChild(\"Humanoid\")\n",
        "src/server/Main.server.luau": "local x = script.Parent.Nope\n",
    })
    engine = Engine(tmp_path)
    for rel in ("src/server/Spin.client.luau", "src/storage/Templates/Regen.server.luau"):
        text = (tmp_path / rel).read_text()
        errors = [f for f in engine.lint_text(text, tmp_path / rel, mode="patch") if f.severity is Severity.ERROR]
        assert errors == [], rel
    main_text = (tmp_path / "src/server/Main.server.luau").read_text()
    assert [f.rule for f in engine.lint_text(main_text, tmp_path / "src/server/Main.server.luau")] == ["unknown_instance"]


def test_wally_dependencies_are_open_names_beside_the_package(tmp_path):
    write_files(tmp_path, {
        "default.project.json": rojo_project({"ReplicatedStorage": {"Packages": {"$path": "Packages"}}}),
        "Packages/Net/init.luau": "local Signal = require(script.Parent.Signal)\nlocal Bad = require(script.Parent.Nope)\n",
        "Packages/Net/wally.toml": "[package]\nname = \"me/net\"\n\n[dependencies]\nSignal = \"me/signal@1.0.0\"\n",
    })
    engine = Engine(tmp_path)
    path = tmp_path / "Packages/Net/init.luau"
    found = engine.lint_text(path.read_text(), path)
    assert [(f.rule, f.range.start.line) for f in found] == [("unknown_instance", 1)]


def test_files_outside_the_datamodel_get_api_findings_as_warnings(tmp_path):
    write_files(tmp_path, {
        "default.project.json": rojo_project({"ServerScriptService": {"$path": "src/server"}}),
        "src/server/Main.server.luau": "local x = 1\n",
        "scripts/build.luau": 'local v = Vectr3.new(1, 2, 3)\nlocal c = Instance.new("FileHandle")\n',
    })
    engine = Engine(tmp_path)
    path = tmp_path / "scripts/build.luau"
    found = engine.lint_text(path.read_text(), path)
    assert [(f.rule, f.severity) for f in found] == [("undefined_variable", Severity.WARNING),
                                                       ("unknown_class", Severity.WARNING)]


def test_impossible_api_names_are_errors_outside_the_datamodel_too(tmp_path):
    # GetService of a name that is no service fails in every host that has `game`; so does a
    # method a certain class does not have
    write_files(tmp_path, {
        "default.project.json": rojo_project({"ServerScriptService": {"$path": "src/server"}}),
        "src/server/Main.server.luau": "local x = 1\n",
        "tests/run.luau": ('local rs = game:GetService("ReplicatedSttorage")\n'
                           'local p = Instance.new("Part")\np:Destory()\n'),
    })
    engine = Engine(tmp_path)
    path = tmp_path / "tests/run.luau"
    found = engine.lint_text(path.read_text(), path)
    assert [(f.rule, f.severity, f.range.start.line) for f in found] == [
        ("unknown_service", Severity.ERROR, 0), ("unknown_member", Severity.ERROR, 2)]
    assert found[0].suggestions[0] == "ReplicatedStorage" and found[0].fix.safe


def test_file_walk_checks_mapped_packages_folders_and_skips_wally_and_npm(tmp_path, capsys):
    write_files(tmp_path, {
        "default.project.json": rojo_project({
            "ReplicatedFirst": {"$path": "src/first"},
            "ReplicatedStorage": {"Packages": {"$path": "Packages"}},
        }),
        "src/first/Packages/Game/init.luau": "local x = game.ReplicatedFirst.Nope\nreturn x\n",
        "src/first/.hidden/Thing.luau": "local y = game.ReplicatedFirst.Nope2\nreturn y\n",
        "Packages/_Index/dep/init.luau": "local z = game.Nope\n",
        "node_modules/pkg/init.luau": "local z = game.Nope\n",
        "src/first/Generated/Out.luau": "local z = game.Nope\n",
        "luaguard.toml": "exclude = [\"src/first/Generated/**\"]\n",
        "README.md": "# not Luau\n",
    })
    code = main(["check", str(tmp_path), "--stats"])
    out = capsys.readouterr().out
    assert code == 1
    assert "src/first/Packages/Game/init.luau:1" in out
    assert "src/first/.hidden/Thing.luau:1" in out
    assert "_Index" not in out.split("files skipped")[0] and "node_modules" not in out.split("files skipped")[0]
    assert "Generated/Out.luau" not in out
    skipped = out.split("files skipped:")[1]
    assert "Packages/_Index" in skipped and "node_modules" in skipped and "exclude" in skipped
    # a file named on the command line inside such a folder is still checked
    code = main(["check", str(tmp_path / "src/first/Packages/Game/init.luau")])
    assert code == 1 and "Nope" in capsys.readouterr().out


def test_zero_files_is_said_and_non_luau_files_are_skipped_with_a_note(tmp_path, capsys, monkeypatch):
    write_files(tmp_path, {"default.project.json": rojo_project({}), "README.md": "# hello\n"})
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert "no Luau files to check" in err and "maps no .lua/.luau file" in err
    code = main(["check", "README.md"])
    captured = capsys.readouterr()
    assert code == 0
    assert "README.md: skipped: not a Luau file" in captured.err
    assert "error" not in captured.out
