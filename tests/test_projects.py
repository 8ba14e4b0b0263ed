"""Several project files in one repository (:mod:`luaguard.projects`): every project file is
read (not Wally's installs), each script is judged under the projects that map it, and a
finding is reported once - an error only where every one of them says so.  Through the
engine-level functions, ``luaguard check``, the agent hook and the MCP server; the
language server's end-to-end test is in tests/test_lsp_e2e.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from luaguard.cli import main
from luaguard.config import Settings
from luaguard.findings import Finding, Fix, Position, Range, Severity
from luaguard.project.discover import find_project_files
from luaguard.projects import ProjectSet, merge_findings, open_projects
from project_files import rojo_project, several_projects

NET = "src/shared/Net.luau"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    return several_projects(tmp_path / "repo")


def loaded(root: Path, settings: Settings | None = None) -> ProjectSet:
    projects = ProjectSet(root, settings or Settings())
    projects.load_others()
    return projects


def judges(projects: ProjectSet, rel: str) -> list[str]:
    out = []
    for e in projects.engines_for(projects.root / rel):
        pf = e.project.project_file if e.project is not None else None
        out.append(pf.relative_to(projects.root).as_posix() if pf is not None else "(none)")
    return out


def check(root: Path, *args: str, capsys) -> tuple[int, str, str]:
    old = os.getcwd()
    os.chdir(root)
    try:
        code = main(["check", *args])
    finally:
        os.chdir(old)
    out = capsys.readouterr()
    return code, out.out, out.err


# -- which projects ----------------------------------------------------------------------------
def test_every_project_file_is_found_but_wally_installs(repo: Path):
    assert find_project_files(repo) == (["default.project.json", "test.project.json", "plugin/default.project.json"], 0)
    assert find_project_files(repo, exclude=["plugin/**"]) == (["default.project.json", "test.project.json"], 0)
    assert find_project_files(repo, limit=1) == (["default.project.json"], 2)


def test_a_project_file_linked_from_outside_the_root_is_not_read(repo: Path, tmp_path: Path):
    outside = tmp_path / "elsewhere.project.json"
    outside.write_text(json.dumps({"name": "x", "tree": {"$path": "."}}))
    (repo / "linked.project.json").symlink_to(outside)
    assert "linked.project.json" not in find_project_files(repo)[0]


def test_each_file_is_judged_by_the_projects_that_map_it(repo: Path):
    projects = loaded(repo)
    assert judges(projects, NET) == ["default.project.json", "test.project.json"]
    assert judges(projects, "tests/Net.spec.luau") == ["test.project.json"]
    assert judges(projects, "plugin/src/init.server.luau") == ["plugin/default.project.json"]
    assert judges(projects, "plugin/src/NotYetWritten.luau") == ["plugin/default.project.json"]  # a synced folder
    assert projects.engines_for(repo / "scripts/build.luau") == [projects.primary]  # outside all: as before
    assert projects.problems == []
    # the plugin's project is a plugin's (its folder is named so), the game's is not
    plugin = projects.engines_for(repo / "plugin/src/init.server.luau")[0]
    assert plugin.plugin_project and not projects.primary.plugin_project


def test_an_open_buffer_reaches_the_run_time_names_of_the_projects_that_run_it(repo: Path, monkeypatch):
    projects = loaded(repo)
    seen = []
    for e in projects.engines:
        name = e.project.project_file.relative_to(repo).as_posix()
        monkeypatch.setattr(e, "set_text", lambda path, text, name=name: seen.append(name))
    projects.set_text(repo / "plugin/src/init.server.luau", "return 1\n")
    # the root's project reads every file under the root, as before; the test place does not run the plugin
    assert seen == ["default.project.json", "plugin/default.project.json"]


def test_a_configured_project_file_pins_one_project(repo: Path):
    projects = loaded(repo, Settings(project_file="test.project.json"))
    assert projects.others == []
    assert judges(projects, "plugin/src/init.server.luau") == ["test.project.json"]


def test_a_broken_project_file_is_named_and_skipped(repo: Path):
    (repo / "plugin" / "default.project.json").write_text('{"name": "Toolbox", "tree": {"$path": ')
    projects = loaded(repo)
    assert len(projects.others) == 1
    [problem] = projects.problems
    assert problem.startswith("plugin/default.project.json:1:") and problem.endswith("(this project is skipped)")
    assert projects.lint_text("return script.Widgt\n", repo / "plugin/src/init.server.luau") == []  # as before: unmapped


# -- one verdict -------------------------------------------------------------------------------
def _finding(rule: str, severity: Severity, col: int = 4, *, fix: str | None = None, safe: bool = False) -> Finding:
    rng = Range(Position(0, col), Position(0, col + 3))
    return Finding(rule, severity, rng, f"{rule} at {col}", fix=Fix(rng, fix, safe=safe) if fix else None)


def test_merge_keeps_what_every_judge_reports_at_the_lowest_severity():
    game = [_finding("unknown_instance", Severity.ERROR, fix="Hit", safe=True), _finding("placeholder", Severity.ERROR, 9)]
    test = [_finding("likely_unknown_instance", Severity.WARNING, fix="Hit"), _finding("placeholder", Severity.ERROR, 9)]
    [name, placeholder] = merge_findings([game, test])
    assert (name.rule, name.severity, name.fix.safe) == ("likely_unknown_instance", Severity.WARNING, False)
    assert (placeholder.rule, placeholder.severity) == ("placeholder", Severity.ERROR)
    # a name one judge accepts is dropped; a member miss and a child miss are the same name
    assert merge_findings([game[:1], []]) == []
    [same] = merge_findings([[_finding("unknown_member", Severity.ERROR)], [_finding("unknown_instance", Severity.HINT)]])
    assert same.rule == "unknown_instance" and same.severity is Severity.HINT
    assert merge_findings([[_finding("unknown_class", Severity.ERROR)], [_finding("unknown_service", Severity.ERROR)]]) == []


def test_merge_needs_every_place_and_a_silent_package_build_lowers_to_a_warning():
    err = _finding("unknown_instance", Severity.ERROR, fix="Signal", safe=True)
    [f] = merge_findings([[err], []], places=[True, False], names=["test.project.json", "default.project.json"])
    assert (f.severity, f.fix.safe) == (Severity.WARNING, False)
    assert f.message.endswith("(a warning, not an error: default.project.json also maps this file, into places "
                              "the repository does not show)")
    [f] = merge_findings([[err], [err]], places=[True, False])  # the package build confirms it
    assert (f.severity, f.fix.safe) == (Severity.ERROR, True)
    assert merge_findings([[], [err]], places=[True, False]) == []  # a place accepts the name
    # package builds only: one that reports it, and one that does not, make a warning
    [f] = merge_findings([[], [err]], places=[False, False])
    assert (f.severity, f.fix.safe) == (Severity.WARNING, False) and "project 1 also maps" in f.message
    assert [f.severity for f in merge_findings([[err], [err]], places=[False, False])] == [Severity.ERROR]
    hint = _finding("likely_unknown_instance", Severity.HINT)
    [f] = merge_findings([[hint], []], places=[True, False])
    assert f.severity is Severity.HINT and f.message == hint.message


def test_merge_keeps_a_safe_fix_only_when_every_judge_offers_it():
    a = _finding("unknown_instance", Severity.ERROR, fix="Config", safe=True)
    b = _finding("unknown_instance", Severity.ERROR, fix="Config", safe=True)
    c = _finding("unknown_instance", Severity.ERROR, fix="Confog", safe=True)
    assert merge_findings([[a], [b]])[0].fix.safe is True
    assert merge_findings([[a], [c]])[0].fix.safe is False
    assert a.fix.safe is True  # the inputs are left alone


def test_merge_keeps_every_internal_error():
    crash = _finding("internal_error", Severity.WARNING, 0)
    [kept] = merge_findings([[], [crash]])
    assert kept is crash


def test_a_name_that_exists_in_one_place_is_not_hallucinated(repo: Path):
    projects = loaded(repo)
    for rel in (NET, "tests/Net.spec.luau", "src/server/Main.server.luau", "plugin/src/init.server.luau"):
        assert projects.lint_file(repo / rel) == [], rel
    # invented in every place that runs the file: one error, with the fix both places agree on
    text = "local c = require(script.Parent.Confg)\nlocal n = script.Parent.Parent.Nothing\nreturn c, n\n"
    found = projects.lint_text(text, repo / NET)
    assert [(f.rule, f.severity, f.range.start.line) for f in found] == [
        ("unknown_instance", Severity.ERROR, 0), ("unknown_instance", Severity.ERROR, 1)]
    assert found[0].fix.new_text == "Config" and found[0].fix.safe
    assert projects.stats["unknown_instance"] == 2  # counted once, not once per project


def test_a_clean_file_is_linted_once(repo: Path, monkeypatch):
    from luaguard.engine import Engine

    projects = loaded(repo)
    game, test = projects.engines_for(repo / NET)
    calls = []
    monkeypatch.setattr(test, "analyse", lambda *a, **k: calls.append(a[0]) or Engine.analyse(test, *a, **k))
    assert projects.lint_text("return 1\n", repo / NET) == []
    assert calls == []  # nothing under the game: nothing the test place could confirm
    assert len(projects.lint_text("return script.Parent.Confg\n", repo / NET)) == 1
    assert calls == ["return script.Parent.Confg\n"]


def test_an_error_in_one_place_and_a_near_miss_in_the_other_is_a_warning(tmp_path: Path):
    # the test place keeps Remotes open (only Hit is known there): 'Hitt' may exist at run time
    root = several_projects(tmp_path, {"test.project.json": rojo_project({
        "ReplicatedStorage": {"$ignoreUnknownInstances": False, "Shared": {"$path": "src/shared"},
                              "Remotes": {"$className": "Folder", "Hit": {"$className": "RemoteEvent"}}},
        "ServerScriptService": {"Tests": {"$path": "tests"}}})})
    projects = loaded(root)
    text = "return script.Parent.Parent.Remotes.Hitt\n"
    assert [f.severity for f in projects.primary.lint_text(text, root / NET)] == [Severity.ERROR]
    [f] = projects.lint_text(text, root / NET)
    assert (f.rule, f.severity, f.fix is None or not f.fix.safe) == ("likely_unknown_instance", Severity.WARNING, True)


LIBRARY = {
    # a library's package build (its src as one ModuleScript) and the place its tests run in
    "default.project.json": json.dumps({"name": "Lib", "tree": {"$path": "src"}}),
    "test.project.json": rojo_project({"ReplicatedStorage": {"$ignoreUnknownInstances": False,
                                                             "Lib": {"$path": "src"}}}),
    "src/init.luau": "return require(script.Util)\n",
    "src/Util.luau": "return {}\n",
}


def test_a_package_build_makes_a_name_outside_the_package_a_warning(tmp_path: Path):
    from project_files import write_files

    write_files(tmp_path, LIBRARY)
    projects = loaded(tmp_path)
    assert judges(projects, "src/Util.luau") == ["default.project.json", "test.project.json"]
    # Signal: missing where the tests run, unknown where the library is inserted (a Wally
    # sibling, say); Utl: missing inside the package, wherever it goes
    text = "local Signal = require(script.Parent.Parent.Signal)\nlocal U = script.Parent.Utl\nreturn Signal, U\n"
    signal, utl = projects.lint_text(text, tmp_path / "src/Util.luau")
    assert (signal.severity, signal.fix) == (Severity.WARNING, None)
    assert "default.project.json also maps this file" in signal.message
    assert (utl.severity, utl.fix.new_text, utl.fix.safe) == (Severity.ERROR, "Util", True)
    # the package build finds nothing here: that alone does not clear what the place finds
    [f] = projects.lint_text("return script.Parent.Parent.Signal\n", tmp_path / "src/Util.luau")
    assert f.severity is Severity.WARNING


def test_a_package_build_is_not_linted_when_it_could_not_change_the_verdict(tmp_path: Path, monkeypatch):
    from luaguard.engine import Engine
    from project_files import write_files

    write_files(tmp_path, LIBRARY)
    projects = loaded(tmp_path)
    package, place = projects.engines_for(tmp_path / "src/Util.luau")
    assert (projects.is_place(package), projects.is_place(place)) == (False, True)
    calls = []
    monkeypatch.setattr(package, "analyse", lambda *a, **k: calls.append(a[0]) or Engine.analyse(package, *a, **k))
    [f] = projects.lint_text("wait(1)\n", tmp_path / "src/Util.luau")  # a warning: nothing to lower
    assert f.severity is Severity.WARNING and calls == []
    projects.lint_text("return script.Parent.Parent.Signal\n", tmp_path / "src/Util.luau")  # an error to confirm
    assert calls == ["return script.Parent.Parent.Signal\n"]


# -- front ends --------------------------------------------------------------------------------
TYPOS = {
    "tests/Bad.spec.luau": "local helper = require(script.Parent.Helpr)\nreturn helper\n",
    "plugin/src/Bad.luau": "return require(script.Parent.Widgt)\n",
}


def test_check_reads_every_project_file(repo: Path, capsys):
    code, out, err = check(repo, ".", capsys=capsys)
    assert (code, out.strip(), err) == (0, "No problems found in 8 files.", "")
    several_projects(repo, TYPOS)
    code, out, _ = check(repo, ".", "--format", "json", capsys=capsys)
    found = {(f["file"], f["code"], f["message"].split(" is not")[0]) for f in json.loads(out)}
    assert code == 1
    assert found == {("tests/Bad.spec.luau", "unknown_instance", "'Helpr'"),
                     ("plugin/src/Bad.luau", "unknown_instance", "'Widgt'")}
    # without PATHS: every project's scripts, the file none maps named
    code, out, err = check(repo, capsys=capsys)
    assert code == 1 and "in 2 of 9 files" in out
    assert "1 Luau file in the project is not mapped by any of its 3 project files" in err


def test_check_with_a_project_file_named_judges_as_before(repo: Path, capsys):
    several_projects(repo, TYPOS)
    code, out, _ = check(repo, ".", "--project-file", "default.project.json", "--format", "json", capsys=capsys)
    found = {(f["file"], f["message"].split(" is not")[0]) for f in json.loads(out)}
    # tests and plugin are unmapped by the game: their typos are unseen, and the test place's
    # Fixtures is reported as missing
    assert code == 1
    assert ("tests/Net.spec.luau", "'Fixtures'") in found
    assert not {f for f, _ in found} & set(TYPOS)


def test_check_fix_applies_what_every_project_agrees_on(repo: Path, capsys):
    net = repo / NET
    net.write_text(net.read_text().replace("script.Parent.Config", "script.Parent.Confg"))
    code, out, _ = check(repo, NET, "--fix", capsys=capsys)
    assert code == 0 and "Fixed 1 problem in 1 file." in out
    assert "require(script.Parent.Config)" in net.read_text()


def test_hook_judges_a_write_under_the_projects_that_map_it(repo: Path):
    from luaguard.agents.hook import HookOptions, run_hook

    def write(rel: str, content: str):
        data = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Write",
                           "tool_input": {"file_path": str(repo / rel), "content": content}}).encode()
        return run_hook(data, HookOptions(stash_dir=repo.parent / "stash"))

    denied = write("tests/New.spec.luau", TYPOS["tests/Bad.spec.luau"])
    assert denied.exit_code == 2 and "Did you mean 'Helper'?" in denied.stderr
    denied = write("plugin/src/New.luau", TYPOS["plugin/src/Bad.luau"])
    assert denied.exit_code == 2 and "Did you mean 'Widget'?" in denied.stderr
    # Fixtures exists where the tests run; Remotes where the game runs
    ok = write("tests/New.spec.luau", "return game:GetService(\"ReplicatedStorage\").Fixtures\n")
    assert (ok.exit_code, ok.stderr) == (0, "")
    ok = write("src/shared/New.luau", "return script.Parent.Parent.Remotes.Hit, script.Parent.Parent.Fixtures\n")
    assert (ok.exit_code, ok.stderr) == (0, "")


def test_mcp_check_luau_judges_under_the_projects_that_map_the_file(repo: Path):
    pytest.importorskip("mcp")
    import asyncio

    from mcp import Client

    from luaguard.agents.mcp_server import build_server

    async def run():
        async with Client(build_server(open_projects(repo))) as c:
            bad = await c.call_tool("check_luau", {"path": "tests/New.spec.luau", "content": TYPOS["tests/Bad.spec.luau"]})
            ok = await c.call_tool("check_luau", {"path": "tests/Net.spec.luau"})
            editor = await c.call_tool("check_luau", {"path": "plugin/src/init.server.luau", "mode": "editor",
                                                      "content": "return require(script.Widgt)\n"})
            return bad.structured_content, ok.structured_content, editor.structured_content

    bad, ok, editor = asyncio.run(run())
    assert bad["valid"] is False and "Helper" in bad["feedback"]
    assert ok["valid"] is True
    assert editor["valid"] is False and [f["code"] for f in editor["findings"]] == ["unknown_instance"]


def test_a_folder_of_projects_without_one_of_its_own(tmp_path: Path, capsys):
    from luaguard.lsp.host import build_engine
    from project_files import write_files

    mono = tmp_path / "mono"
    for game in ("lobby", "arena"):
        write_files(mono / "games" / game, {
            "default.project.json": rojo_project({"ReplicatedStorage": {"$ignoreUnknownInstances": False,
                                                                        "Modules": {"$path": "src"}}}),
            "src/Util.luau": "return {}\n",
            "src/Main.luau": "return require(script.Parent.Utill)\n",
        })
    code, out, _ = check(mono, ".", "--format", "json", capsys=capsys)
    assert code == 1
    assert sorted((f["file"], f["code"]) for f in json.loads(out)) == [
        ("games/arena/src/Main.luau", "unknown_instance"), ("games/lobby/src/Main.luau", "unknown_instance")]
    result = build_engine(mono, Settings())  # the language server's index of the same folder
    assert not result.no_project and len(result.projects.others) == 2 and result.scripts == 4
    [f] = result.projects.lint_file(mono / "games/lobby/src/Main.luau")
    assert "Did you mean 'Util'?" in f.message


def test_a_file_linked_out_of_the_root_is_not_read_through_the_project_set(repo: Path, tmp_path: Path):
    """ProjectSet.lint_file reads as Engine.lint_file does (issue 41's file layer): a script
    linked to a file outside the root is one unreadable_file finding, never its words."""
    secret = tmp_path / "secret.luau"
    secret.write_text("AKIAEXAMPLESECRET = 1\n")
    link = repo / "src" / "shared" / "Linked.luau"
    link.symlink_to(secret)
    findings = loaded(repo).lint_file(link)
    assert [f.rule for f in findings] == ["unreadable_file"]
    assert not any("AKIA" in f.message for f in findings)


def test_the_guard_contract_of_a_file_comes_from_a_project_that_maps_it(repo: Path):
    """The language server's completions take the contract from ProjectSet: a plugin's
    script is guarded by the plugin's project, a game script by the root's."""
    projects = loaded(repo)
    plugin = projects.guard_contract(repo / "plugin/src/init.server.luau", "return 1\n")
    assert plugin.project is projects.engines_for(repo / "plugin/src/init.server.luau")[0].project
    assert plugin.project is not projects.primary.project
    game = projects.guard_contract(repo / NET, "return 1\n")
    assert game.project is projects.primary.project and game.path == NET
