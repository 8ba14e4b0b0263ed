"""``luaguard check`` in CI at scale: ``--since REF`` with real git, ``--diff`` of a diff
already applied to the working tree, ``--format github``'s order, summary line and job
summary, ``--exit-zero`` and ``--max-warnings``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from luaguard.cli import main
from luaguard.output import GITHUB_SHOWN_PER_LEVEL, github_step_summary

from test_fixes import BAD, make_project

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True,
                          text=True).stdout


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def heads(out: str) -> list[str]:
    """The ``path:line:col: severity[rule]`` part of each finding's first line."""
    return [line.split(" ", 2)[0] + " " + line.split(" ", 2)[1] for line in out.splitlines()
            if line and not line.startswith(" ") and "[" in line and not line.startswith(("Found", "No problems", "Findings"))]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository holding the project of test_fixes (5 findings in Main.server.luau)
    committed on ``main``, then a branch ``feature``; the current directory is its root."""
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "game")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    return tmp_path


# -- --since ---------------------------------------------------------------------------
def test_since_reports_what_the_branch_introduced(repo, capsys):
    main_file = repo / "src" / "server" / "Main.server.luau"
    code, out, err = run(capsys, "check", "--since", "main")
    assert code == 0 and "0 of 2 Luau files changed since main" in err
    assert "No problems found in 0 files changed since main." in out

    # commit 1: a bad line added above the old findings (they move, they are not new)
    main_file.write_text('local Light = game:GetService("Lightning")\n' + BAD)
    git(repo, "commit", "-q", "-am", "one")
    # commit 2: a new module with its own mistake
    (repo / "src" / "shared" / "Modules" / "Net.luau").write_text('return game:GetService("RunServise")\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two")
    # REF...: commits that land on main after the branch left it are not the branch's change
    git(repo, "checkout", "-q", "main")
    (repo / "src" / "server" / "Later.server.luau").write_text('local y = game:GetService("Playerz")\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main moves on")
    git(repo, "checkout", "-q", "feature")
    # uncommitted and untracked changes count too
    (repo / "src" / "shared" / "Modules" / "Hitbox.luau").write_text("wait(2)\nreturn {}\n")
    (repo / "src" / "server" / "Extra.server.luau").write_text('local x = Instance.new("Partt")\n')

    code, out, err = run(capsys, "check", "--since", "main")
    assert code == 1
    assert "4 of 4 Luau files changed since main (merge base " in err and "main has moved on since" in err
    assert "Later" not in out
    assert heads(out) == [
        "src/server/Extra.server.luau:1:24: error[unknown_class]",      # untracked: whole file
        "src/server/Main.server.luau:1:31: error[unknown_service]",     # the one new line only
        "src/shared/Modules/Hitbox.luau:1:1: warning[deprecated_api]",  # uncommitted change
        "src/shared/Modules/Net.luau:1:24: error[unknown_service]",     # new file (commit 2)
    ]
    assert "    1 | local Light = game:GetService(\"Lightning\")" in out
    assert out.splitlines()[-1] == ("Found 3 errors, 1 warning in 4 of 4 files changed since main "
                                    "(5 findings from before the change not shown).")
    # paths narrow it down; the machine formats work the same
    code, out, _ = run(capsys, "check", "--since", "main", "src/shared", "--format", "json")
    assert sorted((f["file"], f["code"]) for f in json.loads(out)) == [
        ("src/shared/Modules/Hitbox.luau", "deprecated_api"), ("src/shared/Modules/Net.luau", "unknown_service")]


def test_since_a_removed_declaration_is_introduced_elsewhere(repo, capsys):
    """As ``check --diff`` judges: a finding the change causes on an unchanged line counts."""
    main_file = repo / "src" / "server" / "Main.server.luau"
    main_file.write_text("local count = 1\nprint(count)\n")
    git(repo, "commit", "-q", "-am", "clean")
    git(repo, "checkout", "-q", "-b", "later")
    main_file.write_text("print(count)\n")
    code, out, _ = run(capsys, "check", "--since", "feature")
    assert code == 1 and heads(out) == ["src/server/Main.server.luau:1:7: error[undefined_variable]"]


def test_since_renamed_file_is_judged_against_its_old_text(repo, capsys):
    git(repo, "mv", "src/server/Main.server.luau", "src/server/Game.server.luau")
    code, out, err = run(capsys, "check", "--since", "main")
    assert code == 0 and "1 of 2 Luau files changed" in err
    assert "No problems found in 1 file changed since main (5 findings from before the change not shown)." in out


def test_since_errors(repo, capsys, tmp_path_factory, monkeypatch):
    code, _, err = run(capsys, "check", "--since", "no-such-branch")
    assert code == 2 and "--since no-such-branch: 'no-such-branch' is not a commit of this repository" in err
    code, _, err = run(capsys, "check", "--since=--upload-pack=x")
    assert code == 2 and "is not a revision" in err
    code, _, err = run(capsys, "check", "--since", "main", "--fix")
    assert code == 2 and "cannot be combined with --fix" in err
    code, _, err = run(capsys, "check", "--since", "main", "--baseline", "b.json")
    assert code == 2 and "cannot be combined with --baseline" in err
    # a shallow clone without the revision says how to get it
    shallow = tmp_path_factory.mktemp("shallow")
    git(repo, "commit", "-q", "--allow-empty", "-m", "more")
    git(shallow, "clone", "-q", "--depth", "1", "--no-local", "--branch", "feature", repo.as_uri(), "c")
    monkeypatch.chdir(shallow / "c")
    code, _, err = run(capsys, "check", "--since", "origin/main")
    assert code == 2 and "this clone is shallow" in err and "fetch-depth: 0" in err
    outside = tmp_path_factory.mktemp("nogit")
    make_project(outside)
    monkeypatch.chdir(outside)
    code, _, err = run(capsys, "check", "--since", "main")
    assert code == 2 and "is not inside a git repository" in err


# -- --diff of an applied diff ----------------------------------------------------------
def test_diff_already_applied_to_the_working_tree(repo, capsys):
    main_file = repo / "src" / "server" / "Main.server.luau"
    main_file.write_text(BAD + 'local Again = game:GetService("Lightning")\n')
    (repo / "src" / "server" / "New.server.luau").write_text('local z = Instance.new("Modle")\n')
    git(repo, "add", "-N", "src/server/New.server.luau")  # so that git diff shows it
    diff = git(repo, "diff")
    (repo / "change.diff").write_text(diff)
    code, out, err = run(capsys, "check", "--diff", "change.diff")
    assert code == 1, err
    assert "hunk_does_not_apply" not in out
    assert "the diff is already applied to 2 files on disk" in err
    assert heads(out) == ["src/server/Main.server.luau:7:31: error[unknown_service]",
                          "src/server/New.server.luau:1:24: error[unknown_class]"]
    # the same diff on the tree before the change applies as usual
    git(repo, "rm", "-q", "--cached", "src/server/New.server.luau")
    (repo / "src" / "server" / "New.server.luau").unlink()
    git(repo, "checkout", "-q", "--", "src/server/Main.server.luau")
    code, out2, err = run(capsys, "check", "--diff", "change.diff")
    assert "already applied" not in err and heads(out2) == heads(out)
    # a diff that fits neither side is still reported
    (repo / "stale.diff").write_text(diff.replace("Lightning", "Lightnin").replace("wait(1)", "wait(5)"))
    code, out, _ = run(capsys, "check", "--diff", "stale.diff")
    assert "hunk_does_not_apply" in out


def test_applied_diff_that_only_appends(repo, capsys):
    """A hunk that only adds lines at the end fits both ways: its new side on disk at the
    header's lines decides (applied), rather than adding the lines a second time."""
    main_file = repo / "src" / "server" / "Main.server.luau"
    main_file.write_text(BAD + 'local s = game:GetService("Lightning")\n')
    diff = git(repo, "diff")
    assert diff.count("\n+local") == 1 and "\n wait(1)" in diff
    (repo / "a.diff").write_text(diff)
    code, out, err = run(capsys, "check", "--diff", "a.diff")
    assert "already applied to 1 file" in err
    assert heads(out) == ["src/server/Main.server.luau:7:27: error[unknown_service]"]
    assert "    7 | local s = game:GetService(\"Lightning\")" in out


# -- GitHub ----------------------------------------------------------------------------
def many_findings_project(root: Path) -> None:
    lines = [f'local s{i} = game:GetService("Playerz")' for i in range(12)]
    lines += [f"wait({i})" for i in range(13)]
    (root / "src" / "server" / "Main.server.luau").write_text("\n".join(reversed(lines)) + "\n")


def test_github_errors_first_summary_line_and_job_summary(repo, capsys, monkeypatch):
    many_findings_project(repo)
    summary = repo / "summary.md"
    summary.write_text("earlier step output\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "owner/game")
    monkeypatch.setenv("GITHUB_SHA", "abc123")
    code, out, _ = run(capsys, "check", "--format", "github")
    lines = out.splitlines()
    assert code == 1 and len(lines) == 26
    assert all(x.startswith("::error ") for x in lines[:12]) and all(x.startswith("::warning ") for x in lines[12:25])
    assert lines[25] == ("luaguard: 12 errors, 13 warnings in 1 of 2 files. GitHub shows only the first 10 errors and "
                         "warnings of a step as annotations; the job summary lists all of them.")
    md = summary.read_text()
    assert md.startswith("earlier step output\n## luaguard: 12 errors, 13 warnings in 1 of 2 files\n")  # appended
    assert "2 errors and 3 warnings of these 25 findings are not shown on the files" in md
    assert "| error | `unknown_service` | 12 | 12 with `--fix` |" in md
    assert "| warning | `deprecated_api` | 13 | 13 with `--fix --unsafe-fixes` |" in md
    rows = [x for x in md.splitlines() if x.startswith("- **")]
    assert len(rows) == 25 and rows[0].startswith("- **error** `unknown_service` [src/server/Main.server.luau:14:")
    assert rows[-1].startswith("- **warning** `deprecated_api` [src/server/Main.server.luau:13:1]")
    assert "](https://github.com/owner/game/blob/abc123/src/server/Main.server.luau#L14): " in rows[0]
    assert rows[0].endswith("<br>fix: Replace 'Playerz' with 'Players'")
    # without $GITHUB_STEP_SUMMARY the line says where the rest are
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    _, out, _ = run(capsys, "check", "--format", "github")
    assert out.splitlines()[-1].endswith("the step's log shows all of them (and --format sarif).")
    # a clean run says so in one line
    many_findings_project(repo)
    (repo / "src" / "server" / "Main.server.luau").write_text("print(1)\n")
    code, out, _ = run(capsys, "check", "--format", "github")
    assert code == 0 and out == "luaguard: no problems found in 2 files.\n"


def test_step_summary_escapes_and_stays_under_githubs_limit(monkeypatch):
    from luaguard.findings import Finding, Position, Range, Severity
    import luaguard.output as O

    f = Finding("unknown_instance", Severity.ERROR, Range(Position(0, 0), Position(0, 1)),
                "'a|b' <script>x</script> *bold* `code`\nnext", file="x.luau")
    md = github_step_summary([f], lambda f: "src/x y.luau", 1, env={})
    row = md.splitlines()[-1]
    assert row == ("- **error** `unknown_instance` src/x y.luau:1:1: "
                   "'a\\|b' \\<script\\>x\\</script\\> \\*bold\\* \\`code\\`<br>next")
    monkeypatch.setattr(O, "STEP_SUMMARY_BYTES", 2000)
    md = github_step_summary([f] * 50, lambda f: "x.luau", 1, env={})
    assert len(md.encode()) < 2100 and md.rstrip().endswith("or use `--format sarif` for code scanning.")
    assert "... and " in md
    assert GITHUB_SHOWN_PER_LEVEL == 10


# -- exit status -------------------------------------------------------------------------
def test_exit_zero_and_max_warnings(repo, capsys):
    code, _, _ = run(capsys, "check", "--exit-zero")
    assert code == 0
    code, _, err = run(capsys, "check", "--select", "warning")  # 1 deprecated_api warning + likely_unknown
    assert code == 0
    code, _, err = run(capsys, "check", "--select", "warning", "--max-warnings", "1")
    assert code == 1 and "2 warnings, more than --max-warnings 1" in err
    code, _, err = run(capsys, "check", "--select", "warning", "--max-warnings", "2")
    assert code == 0
    code, _, err = run(capsys, "check", "--select", "warning", "--max-warnings", "0", "--exit-zero")
    assert code == 0
    code, _, err = run(capsys, "check", "--max-warnings", "-1")
    assert code == 2 and "expected a number >= 0" in err
