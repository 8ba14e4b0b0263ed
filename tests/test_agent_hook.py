"""``luaguard hook``: real-shaped payloads of each agent against samples/place (bad path,
placeholder, broken syntax, clean change, non-Luau file), bad input, and the edit
machinery (Edit/MultiEdit string replacement, Codex's apply_patch envelope)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from luaguard.agents.edits import EditError, StringEdit, apply_patch_envelope, apply_string_edits
from luaguard.agents.hook import HookOptions, run_hook
from luaguard.agents.payloads import PayloadError, parse_payload

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
AGENTS = ROOT / "samples" / "agents"
SHOP = "src/server/Services/ShopService.luau"


@pytest.fixture()
def place(tmp_path: Path) -> Path:
    """A copy of samples/place (tests may write into it)."""
    dst = tmp_path / "place"
    shutil.copytree(PLACE, dst)
    return dst


def claude(tool: str, tool_input, cwd: Path) -> bytes:
    return json.dumps({"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": tool_input, "tool_use_id": "toolu_1"}).encode()


def hook(data: bytes, **kw):
    return run_hook(data, HookOptions(**kw))


# -- the shipped samples ----------------------------------------------------------------------
EXPECTED = {
    "claude/write_bad_path.json": ("deny", "'Modulez' is not a child"),
    "claude/write_clean.json": ("pass", None),
    "claude/edit_bad_path.json": ("deny", "Did you mean 'Modules'?"),
    "claude/edit_placeholder.json": ("deny", "Placeholder comment"),
    "claude/multiedit_broken_syntax.json": ("deny", "Expected ')' (to close '(' at line 22)"),
    "claude/edit_clean.json": ("pass", None),
    "claude/write_readme.json": ("pass", None),
    "claude/mcp_set_property_bad.json": ("deny", "Did you mean 'Workspace.Map.Lobby.ShopPad'?"),
    "claude/mcp_run_code_placeholder.json": ("deny", "TODO"),
    "codex/apply_patch_bad_path.json": ("deny", "Did you mean 'Config'?"),
    "codex/apply_patch_clean.json": ("pass", None),
    "codex/apply_patch_broken_syntax.json": ("deny", "Expected ')'"),
    "codex/apply_patch_placeholder.json": ("deny", "Placeholder comment"),
    "codex/apply_patch_non_luau.json": ("pass", None),
    "cursor/pretooluse_write_non_luau.json": ("pass", None),
    "cursor/pretooluse_edit_clean.json": ("pass", None),
    "copilot/edit_broken_syntax.json": ("deny", "Expected ')'"),
    "copilot/edit_bad_path.json": ("deny", "Did you mean 'Config'?"),
    "cursor/pretooluse_edit_bad_path.json": ("deny", "Did you mean 'Modules'?"),
    "cursor/before_mcp_run_code_bad_path.json": ("deny", "'Modulez' is not a child"),
    "copilot/edit_placeholder.json": ("deny", "TODO comment in a patch"),
    "copilot/create_clean.json": ("pass", None),
}


def test_every_sample_payload_has_an_expectation():
    shipped = {p.relative_to(AGENTS).as_posix() for p in AGENTS.glob("*/*.json")}
    assert shipped == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_payloads_in_each_agents_protocol(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # the samples' cwd is samples/place, relative to the repository
    agent = name.split("/")[0]
    want, text = EXPECTED[name]
    resp = hook((AGENTS / name).read_bytes(), agent=agent)
    if agent in ("claude", "codex"):
        assert resp.exit_code == (2 if want == "deny" else 0)
        assert resp.stdout == ""
        if want == "deny":
            assert text in resp.stderr
        else:
            assert resp.stderr == ""
    elif agent == "cursor":
        assert resp.exit_code == 0
        body = json.loads(resp.stdout)
        assert body["permission"] == want.replace("pass", "allow")
        if want == "deny":
            assert text in body["agent_message"]
    else:
        assert resp.exit_code == 0
        body = json.loads(resp.stdout)
        if want == "deny":
            assert body["permissionDecision"] == "deny" and text in body["permissionDecisionReason"]
        else:
            assert "permissionDecision" not in body


def test_claude_json_output_denies_with_a_decision_and_passes_warnings_as_context(place):
    bad = claude("Edit", {"file_path": str(place / SHOP),
                          "old_string": "local Inventory = require(ReplicatedStorage.Shared.Modules.Inventory)",
                          "new_string": "local Inventory = require(ReplicatedStorage.Shared.Modulez.Inventory)"}, place)
    resp = hook(bad, output="json")
    assert resp.exit_code == 0
    out = json.loads(resp.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    assert "Did you mean 'Modules'?" in out["permissionDecisionReason"]
    # a missing child under an open node is a warning: the call passes, with context
    warn = claude("Edit", {"file_path": str(place / SHOP),
                           "old_string": "local SwordTemplate = ServerStorage.Templates.Sword",
                           "new_string": "local SwordTemplate = ServerStorage.Templatez.Sword"}, place)
    resp = hook(warn, output="json")
    out = json.loads(resp.stdout)["hookSpecificOutput"]
    assert "permissionDecision" not in out  # never "allow": that would skip the user's prompt
    assert "Did you mean 'Templates'?" in out["additionalContext"]
    assert hook(warn).exit_code == 0


def test_edit_reports_only_what_the_change_causes(place):
    # an existing problem elsewhere in the file is not the change's fault
    target = place / SHOP
    text = target.read_text()
    target.write_text(text.replace("local ShopPad = workspace.Map.Lobby.ShopPad",
                                   "local ShopPad = workspace.Map.Lobby.ShopPad\n-- TODO: tidy up"))
    ok = claude("Edit", {"file_path": str(target), "old_string": "local Notify = Remotes:WaitForChild(\"Notify\")",
                         "new_string": "local Notify = Remotes:WaitForChild(\"Notify\")"}, place)
    assert hook(ok).exit_code == 0


def test_edit_that_does_not_apply_is_denied_with_the_reason(place):
    missing = claude("Edit", {"file_path": str(place / SHOP), "old_string": "local Nope = 1", "new_string": "x"}, place)
    resp = hook(missing)
    assert resp.exit_code == 2 and "old_string not found" in resp.stderr and SHOP.split("/")[-1] in resp.stderr
    twice = claude("Edit", {"file_path": str(place / SHOP), "old_string": "local ", "new_string": "local "}, place)
    resp = hook(twice)
    assert resp.exit_code == 2 and "replace_all" in resp.stderr


def test_files_luaguard_has_nothing_to_say_about_pass(place, tmp_path):
    outside = tmp_path / "elsewhere" / "x.luau"
    for payload in (
        claude("Write", {"file_path": str(place / "notes.md"), "content": "local x = ("}, place),
        claude("Write", {"file_path": str(outside), "content": "local x = ("}, place),
        claude("Bash", {"command": "ls"}, place),
        claude("mcp__other__search", {"query": "x"}, place),
        claude("Edit", {"file_path": str(outside), "old_string": "a", "new_string": "b"}, place),
    ):
        resp = hook(payload)
        assert (resp.exit_code, resp.stdout) == (0, ""), payload


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_write_through_a_symlink_leaving_the_project_is_denied(place, tmp_path):
    away = tmp_path / "away"
    away.mkdir()
    (place / "src" / "link").symlink_to(away, target_is_directory=True)
    resp = hook(claude("Write", {"file_path": str(place / "src" / "link" / "x.luau"), "content": "return 1\n"}, place))
    assert resp.exit_code == 2 and "outside it" in resp.stderr
    # `..` that leaves the project lexically is outside: not luaguard's business
    resp = hook(claude("Write", {"file_path": str(place / "src" / ".." / ".." / "y.luau"), "content": "local x = ("}, place))
    assert resp.exit_code == 0


@pytest.mark.parametrize("data", [b"", b"{", b"[1, 2]", b"\xff\xfe\x00binary", b'{"tool_name": 3}',
                                  b'{"tool_name": "Write", "tool_input": {"file_path": "a.luau"}}',
                                  b'{"tool_name": "Edit", "tool_input": "{not json"}',
                                  b"[" * 100000 + b"]" * 100000])
@pytest.mark.parametrize("agent", ["claude", "cursor", "copilot"])
def test_malformed_stdin_passes_with_a_note(data, agent):
    resp = hook(data, agent=agent)
    assert resp.exit_code == 0
    assert "not checked" in resp.stderr
    if agent == "cursor":
        assert json.loads(resp.stdout) == {"permission": "allow"}


def test_huge_and_binary_content_pass_unchecked(place):
    big = "local x = 1\n" * (1024 * 1024)  # 12 MiB
    resp = hook(claude("Write", {"file_path": str(place / "src" / "Big.luau"), "content": big}, place))
    assert resp.exit_code == 0 and "not checked" in resp.stderr
    resp = hook(claude("Write", {"file_path": str(place / "src" / "Bin.luau"), "content": "a\x00b"}, place))
    assert resp.exit_code == 0 and "binary" in resp.stderr


def test_a_slow_check_passes_after_the_timeout(place, monkeypatch):
    import time

    import luaguard.agents.hook as H

    monkeypatch.setattr(H, "evaluate", lambda use, options: time.sleep(5))
    t0 = time.perf_counter()
    resp = hook(claude("Write", {"file_path": str(place / "src" / "A.luau"), "content": "x"}, place), timeout=0.3)
    assert time.perf_counter() - t0 < 2
    assert resp.exit_code == 0 and "no answer within 0.3 s" in resp.stderr


def test_an_internal_error_passes_with_a_note(place, monkeypatch):
    import luaguard.agents.hook as H

    def boom(use, options):
        raise RuntimeError("bug")

    monkeypatch.setattr(H, "evaluate", boom)
    resp = hook(claude("Write", {"file_path": str(place / "src" / "A.luau"), "content": "x"}, place))
    assert resp.exit_code == 0 and "internal error" in resp.stderr


def test_broken_project_file_passes_with_a_note(place):
    (place / "default.project.json").write_text("{ not json")
    resp = hook(claude("Write", {"file_path": str(place / SHOP), "content": "local x = ("}, place))
    assert resp.exit_code == 0 and "cannot be read" in resp.stderr


def test_cli_process_end_to_end(place):
    payload = claude("Write", {"file_path": str(place / "src" / "server" / "X.server.luau"),
                               "content": "local x = game.ReplicatedStorage.Shared.Modulez\n"}, place)
    exe = [sys.executable, "-m", "luaguard", "hook"]
    p = subprocess.run(exe, input=payload, capture_output=True, timeout=60)
    assert p.returncode == 2 and b"Did you mean 'Modules'?" in p.stderr
    p = subprocess.run(exe + ["--agent", "cursor"], input=payload, capture_output=True, timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout)["permission"] == "deny"


# -- edits ------------------------------------------------------------------------------------
def test_string_edits_follow_claude_codes_rules():
    ch = apply_string_edits("f.luau", "a b a", [StringEdit("a", "c", replace_all=True)])
    assert ch.new == "c b c" and ch.old == "a b a"
    ch = apply_string_edits("f.luau", "one two", [StringEdit("one", "1"), StringEdit("two", "2")])
    assert ch.new == "1 2"
    assert apply_string_edits("new.luau", None, [StringEdit("", "return 1\n")]).new == "return 1\n"
    with pytest.raises(EditError, match="edit 2 of 2: old_string not found"):
        apply_string_edits("f.luau", "one two", [StringEdit("one", "1"), StringEdit("one", "x")])
    with pytest.raises(EditError, match="found 2 times"):
        apply_string_edits("f.luau", "a a", [StringEdit("a", "b")])
    with pytest.raises(EditError, match="does not exist"):
        apply_string_edits("f.luau", None, [StringEdit("a", "b")])


def test_apply_patch_envelope(tmp_path):
    (tmp_path / "a.luau").write_text("local x = 1\nlocal y = 2\nreturn x + y\n")
    (tmp_path / "gone.luau").write_text("return 0\n")
    env = ("*** Begin Patch\n*** Update File: a.luau\n@@ local x = 1\n-local y = 2\n+local y = 3\n"
           "*** Add File: b.luau\n+return 2\n*** Delete File: gone.luau\n*** End Patch\n")
    changes = apply_patch_envelope(env, tmp_path)
    assert [(c.path, c.new) for c in changes] == [("a.luau", "local x = 1\nlocal y = 3\nreturn x + y\n"),
                                                 ("b.luau", "return 2\n"), ("gone.luau", None)]
    with pytest.raises(EditError, match="not in the file"):
        apply_patch_envelope("*** Begin Patch\n*** Update File: a.luau\n@@\n-nope\n+x\n*** End Patch", tmp_path)
    with pytest.raises(EditError, match="End Patch"):
        apply_patch_envelope("*** Begin Patch\n*** Add File: c.luau\n+x\n", tmp_path)
    with pytest.raises(EditError, match="starts with '\\+'"):
        apply_patch_envelope("*** Begin Patch\n*** Add File: c.luau\nx\n*** End Patch", tmp_path)


def test_payload_shapes():
    u = parse_payload({"tool_name": "MultiEdit", "tool_input": {"file_path": "a.luau", "edits": [
        {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d", "replace_all": True}]}})
    assert u.kind == "edit" and [e.replace_all for e in u.edits] == [False, True]
    u = parse_payload({"toolName": "edit", "toolArgs": '{"path": "a.luau", "old_str": "a", "new_str": "b"}',
                       "cwd": "/x"}, "copilot")
    assert (u.kind, u.file_path, u.cwd) == ("edit", "a.luau", Path("/x"))
    u = parse_payload({"tool_name": "mcp__studio__run_code", "tool_input": {"command": "print(1)"}})
    assert (u.kind, u.mcp_server, u.mcp_tool) == ("mcp", "studio", "run_code")
    u = parse_payload({"tool_name": "apply_patch", "tool_input": {"input": "*** Begin Patch\n*** End Patch"}})
    assert u.kind == "patch"
    with pytest.raises(PayloadError, match="content"):
        parse_payload({"tool_name": "Write", "tool_input": {"file_path": "a.luau"}})
