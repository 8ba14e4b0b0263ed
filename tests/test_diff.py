"""Unified diffs applied in memory: the sample diffs, hunk matching, changed regions,
``validate_patch`` and ``luaguard check --diff``."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from luaguard import cli
from luaguard.engine import Engine
from luaguard.project import to_json
from luaguard.toolcalls import api
from luaguard.toolcalls.diffs import (
    FilePatch,
    apply_hunks,
    check_diff,
    parse_unified_diff,
)

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
DIFFS = ROOT / "samples" / "toolcalls" / "diffs"
MANIFEST = json.loads((DIFFS / "manifest.json").read_text())


@pytest.fixture(scope="module")
def engine() -> Engine:
    e = Engine(PLACE)
    e.reload_project(strict=True)
    return e


@pytest.mark.parametrize("entry", MANIFEST, ids=[m["diff"] for m in MANIFEST])
def test_sample_diff(engine: Engine, entry: dict) -> None:
    before = json.dumps(to_json(engine.project), sort_keys=True)
    report = check_diff(engine, (DIFFS / entry["diff"]).read_text())
    got = sorted((f.rule, f.file, f.range.start.line + 1) for f in report.findings)
    want = sorted((e["rule"], e["file"], e["line"]) for e in entry["expect"])
    assert got == want, [f.message for f in report.findings]
    assert json.dumps(to_json(engine.project), sort_keys=True) == before  # nothing written, index untouched


def test_stale_hunk_message_names_hunk_header_and_lines(engine: Engine) -> None:
    report = check_diff(engine, (DIFFS / "stale_hunk.diff").read_text())
    msg = next(f.message for f in report.problems if f.rule == "hunk_does_not_apply")
    assert msg.startswith("Hunk 1 of src/server/Services/CombatService.luau (@@ -17,6 +17,7 @@, diff line 3) does not apply")
    assert "line 19 of the file is 'local DataService = require(script.Parent.DataService)'" in msg
    assert "expects 'local DataService = require(script.Parent.DataServices)'" in msg


# -- the applier -----------------------------------------------------------------------------
OLD = "a\nb\nc\nd\ne\nf\ng\n"


def fp(diff: str) -> FilePatch:
    patches, problems = parse_unified_diff(diff, "x.luau")
    assert not problems
    return patches[0]


def test_apply_exact_offset_and_trailing_whitespace() -> None:
    new, changed, line_map, probs = apply_hunks(OLD, fp("@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"), "x.luau")
    assert (new, changed, probs) == ("a\nb\nC\nd\ne\nf\ng\n", {2}, [])
    assert line_map == [0, 1, -1, 3, 4, 5, 6]
    # header off by 3, context found at the nearest place
    new, _, _, probs = apply_hunks(OLD, fp("@@ -5,3 +5,3 @@\n b\n-c\n+C\n d\n"), "x.luau")
    assert new == "a\nb\nC\nd\ne\nf\ng\n" and probs == []
    # the diff's context lost trailing spaces the file has
    new, _, _, probs = apply_hunks("a  \nb\n", fp("@@ -1,2 +1,2 @@\n a\n-b\n+B\n"), "x.luau")
    assert new == "a  \nB\n" and probs == []


def test_pure_deletion_marks_the_line_after() -> None:
    new, changed, _, _ = apply_hunks(OLD, fp("@@ -3,3 +3,2 @@\n c\n-d\n e\n"), "x.luau")
    assert new == "a\nb\nc\ne\nf\ng\n" and changed == {3}


def test_hunk_that_matches_nowhere_is_reported_and_others_apply() -> None:
    diff = "@@ -1,2 +1,2 @@\n a\n-X\n+Y\n@@ -6,2 +6,2 @@\n f\n-g\n+G\n"
    new, _, _, probs = apply_hunks(OLD, fp(diff), "x.luau")
    assert new == "a\nb\nc\nd\ne\nf\nG\n"
    assert len(probs) == 1 and probs[0].rule == "hunk_does_not_apply"
    assert "Hunk 1 of x.luau (@@ -1,2 +1,2 @@, diff line 1)" in probs[0].message
    assert "line 2 of the file is 'b' but the hunk expects 'X'" in probs[0].message
    assert probs[0].range.start.line == 1


def test_hunk_past_the_end_and_malformed_hunks() -> None:
    _, _, _, probs = apply_hunks(OLD, fp("@@ -40,1 +40,1 @@\n-zz\n+yy\n"), "x.luau")
    assert "the file has only 7 lines" in probs[0].message
    _, _, _, probs = apply_hunks(OLD, fp("@@ -1,5 +1,5 @@\n a\n-b\n+B\n"), "x.luau")
    assert "malformed" in probs[0].message and "announces 5 old and 5 new lines" in probs[0].message


def test_crlf_and_no_newline_marker() -> None:
    diff = "--- a/x.luau\n+++ b/x.luau\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+B\n\\ No newline at end of file\n"
    patches, problems = parse_unified_diff(diff)
    assert not problems and patches[0].new_path == "x.luau"
    new, _, _, probs = apply_hunks("a\r\nb", patches[0], "x.luau")
    assert new == "a\r\nB" and not probs


def test_parse_headers_and_problems() -> None:
    patches, _ = parse_unified_diff("--- a/src/x.luau\t2024-01-01\n+++ b/src/x.luau\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n")
    assert (patches[0].old_path, patches[0].new_path) == ("src/x.luau", "src/x.luau")
    patches, _ = parse_unified_diff("--- /dev/null\n+++ b/new.luau\n@@ -0,0 +1,1 @@\n+x\n")
    assert patches[0].old_path is None and patches[0].new_path == "new.luau"
    _, problems = parse_unified_diff("@@ -1 +1 @@\n-a\n+b\n")
    assert problems[0].rule == "invalid_diff" and "no target file" in problems[0].message
    _, problems = parse_unified_diff("--- a/x\n+++ b/x\n@@ garbage @@\n")
    assert "malformed hunk header" in problems[0].message
    _, problems = parse_unified_diff("just some text\n")
    assert problems[0].rule == "invalid_diff"


# -- changed regions -------------------------------------------------------------------------
def small_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    files = {
        "default.project.json": json.dumps({"name": "P", "tree": {"$className": "DataModel",
                                            "ReplicatedStorage": {"$className": "ReplicatedStorage",
                                                                  "Shared": {"$path": "src/shared"}}}}),
        "src/shared/Util.luau": "return {}\n",
        # a pre-existing problem on line 1 and a pre-existing unclosed block at line 7
        "src/shared/Old.luau": "local bad = game.ReplicatedStorage.Shared.Nope\nlocal a = 1\nlocal b = 2\nlocal c = 3\n"
                               "local d = 4\nreturn a\n",
        "src/shared/Broken.luau": "local x = 1\nlocal y = 2\nlocal z = 3\nlocal w = 4\nlocal v = 5\n"
                                  "local q = 6\nfunction f()\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_only_changed_regions_are_reported(tmp_path: Path) -> None:
    e = Engine(small_project(tmp_path))
    diff = ("--- a/src/shared/Old.luau\n+++ b/src/shared/Old.luau\n@@ -4,2 +4,2 @@\n local c = 3\n"
            "-local d = 4\n+local d = game.ReplicatedStorage.Shared.Utill\n")
    report = check_diff(e, diff)
    got = [(f.rule, f.range.start.line + 1) for f in report.findings]
    assert got == [("unknown_instance", 5)]  # the untouched line-1 problem is not reported
    assert api.stats(e)["rules"] == {"unknown_instance": 1}  # only reported findings are counted


def test_structure_errors_outside_changes_reported_only_when_new(tmp_path: Path) -> None:
    e = Engine(small_project(tmp_path))
    # Broken.luau already lacks an `end`: changing line 2 must not report it again
    diff = "--- a/src/shared/Broken.luau\n+++ b/src/shared/Broken.luau\n@@ -2 +2 @@\n-local y = 2\n+local y = 22\n"
    assert check_diff(e, diff).findings == []
    # deleting line 6 of Old.luau (`return a`) is fine; adding `do` on line 2 breaks line 2+ (reported)
    diff = "--- a/src/shared/Old.luau\n+++ b/src/shared/Old.luau\n@@ -2 +2 @@\n-local a = 1\n+do local a = 1\n"
    rules = [f.rule for f in check_diff(e, diff).findings]
    assert rules == ["unclosed_block"]


def test_headerless_diff_for_a_uri(engine: Engine) -> None:
    target = PLACE / "src" / "shared" / "Util" / "Spring.luau"
    first = target.read_text().splitlines()[0]
    diff = f"@@ -1,1 +1,2 @@\n {first}\n+-- TODO: tune\n"
    res = api.validate_patch(engine, target.as_uri(), diff=diff)
    assert res["valid"] is False
    assert [e["code"] for e in res["errors"]] == ["placeholder"]
    assert res["errors"][0]["file"] == "src/shared/Util/Spring.luau" and res["errors"][0]["range"]["start"]["line"] == 1
    assert res["files"] == [{"path": "src/shared/Util/Spring.luau", "status": "modified",
                             "findings": [res["files"][0]["findings"][0]]}]
    assert res["files"][0]["findings"][0]["code"] == "placeholder"
    assert "rejected" in res["feedback"]


def test_validate_patch_full_content_new_file(engine: Engine) -> None:
    res = api.validate_patch(engine, "src/shared/Util/Timer.luau",
                             content="local Signal = require(script.Parent.Signal)\nreturn Signal\n")
    assert res["valid"] and res["files"][0]["status"] == "added"
    res = api.validate_patch(engine, "src/shared/Util/Timer.luau",
                             content="local Signal = require(script.Parent.Signl)\nreturn Signal\n")
    assert [e["code"] for e in res["errors"]] == ["unknown_instance"]
    assert res["errors"][0]["suggestions"][0] == "Signal"


def test_validate_patch_errors(engine: Engine) -> None:
    res = api.validate_patch(engine, "../outside.luau", content="return 1\n")
    assert [e["code"] for e in res["errors"]] == ["path_outside_project"]
    res = api.validate_patch(engine, "src/shared/Nope.luau")
    assert [e["code"] for e in res["errors"]] == ["unknown_path"]
    res = api.validate_patch(engine, None)
    assert [e["code"] for e in res["errors"]] == ["invalid_argument"]
    res = api.validate_patch(engine, "src/shared/Types.luau")  # the file on disk, patch mode
    assert res["valid"], res


def test_diff_for_a_missing_file_and_existing_new_file(engine: Engine) -> None:
    report = check_diff(engine, "--- a/src/shared/Gone.luau\n+++ b/src/shared/Gone.luau\n@@ -1 +1 @@\n-a\n+b\n")
    assert [(f.rule, f.file) for f in report.problems] == [("unknown_path", "src/shared/Gone.luau")]
    report = check_diff(engine, "--- /dev/null\n+++ b/src/shared/Types.luau\n@@ -0,0 +1 @@\n+return 1\n")
    assert report.problems[0].rule == "invalid_diff" and "already exists" in report.problems[0].message


# -- CLI ---------------------------------------------------------------------------------------
def run_cli(args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
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


def test_cli_check_diff_file_stdin_json_and_stats() -> None:
    rc, out, _ = run_cli(["check", "--project", str(PLACE), "--diff", str(DIFFS / "bad_require.diff")])
    assert rc == 1
    assert "src/server/Services/CombatService.luau:13:56: error[unknown_instance] 'Pary'" in out
    assert out.strip().endswith("Found 1 error in 1 of 1 file.")
    rc, out, _ = run_cli(["check", "--project", str(PLACE), "--diff", "-", "--stats"],
                         stdin=(DIFFS / "new_module_required.diff").read_text())
    assert rc == 0 and "No problems found in 2 files." in out and "findings by rule:" in out
    rc, out, _ = run_cli(["check", "--project", str(PLACE), "--diff", str(DIFFS / "stale_hunk.diff"), "--format", "json"])
    assert rc == 1 and [f["code"] for f in json.loads(out)] == ["hunk_does_not_apply", "placeholder"]


def test_cli_check_diff_usage_errors(tmp_path: Path) -> None:
    rc, _, err = run_cli(["check", "--project", str(PLACE), "--diff", str(tmp_path / "none.diff")])
    assert rc == 2 and "cannot read diff" in err
    rc, _, err = run_cli(["check", "--project", str(PLACE), "--diff", "-", "x.luau"], stdin="")
    assert rc == 2 and "--diff takes no PATHS" in err
