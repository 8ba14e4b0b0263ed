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

from luaguard.agents.edits import EditError, StringEdit, apply_patch_envelope, apply_string_edits, patch_paths
from luaguard.agents.hook import HookOptions, run_hook
from luaguard.agents.payloads import PayloadError, parse_payload

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
AGENTS = ROOT / "samples" / "agents"
SHOP = "src/server/Services/ShopService.luau"


@pytest.fixture(autouse=True)
def own_temp_dir(tmp_path, monkeypatch):
    """The before-hook keeps old texts in the temporary directory: one per test."""
    import tempfile

    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))


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
        if want == "deny":
            body = json.loads(resp.stdout)
            assert body["permission"] == "deny" and text in body["agent_message"]
        else:
            assert resp.stdout == ""  # never "allow": Cursor's own approval settings decide
    else:
        assert resp.exit_code == 0
        body = json.loads(resp.stdout)
        if want == "deny":
            assert body["permissionDecision"] == "deny" and text in body["permissionDecisionReason"]
        else:
            assert "permissionDecision" not in body


def test_claude_json_output_denies_with_a_decision_and_never_allows(place):
    bad = claude("Edit", {"file_path": str(place / SHOP),
                          "old_string": "local Inventory = require(ReplicatedStorage.Shared.Modules.Inventory)",
                          "new_string": "local Inventory = require(ReplicatedStorage.Shared.Modulez.Inventory)"}, place)
    resp = hook(bad, output="json")
    assert resp.exit_code == 0
    out = json.loads(resp.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    assert "Did you mean 'Modules'?" in out["permissionDecisionReason"]
    # a missing child under an open node is a warning: the call passes with no decision at all
    # ("allow" would skip the user's prompt); the warning is told after the write (PostToolUse)
    warn = claude("Edit", {"file_path": str(place / SHOP),
                           "old_string": "local SwordTemplate = ServerStorage.Templates.Sword",
                           "new_string": "local SwordTemplate = ServerStorage.Templatez.Sword"}, place)
    assert hook(warn, output="json") == hook(warn) == type(hook(warn))(0, "", "")


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
        assert resp.stdout == ""


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


# -- the change is what is judged -------------------------------------------------------------
PERSON_NOTE = "-- TODO(bob): migrate to ProfileStore\n"


def test_a_whole_file_write_is_judged_on_what_it_adds(place):
    """A person's TODO already in the file never denies a rewrite; a new one does; a new file
    is judged whole."""
    target = place / SHOP
    target.write_text(PERSON_NOTE + target.read_text())
    old = target.read_text()
    same = hook(claude("Write", {"file_path": str(target), "content": old}, place))
    assert (same.exit_code, same.stderr) == (0, "")
    appended = hook(claude("Write", {"file_path": str(target), "content": old + "-- sold items are logged by the server\n"}, place))
    assert (appended.exit_code, appended.stderr) == (0, "")
    # the person's TODO moved down by the agent's new header: still not the agent's
    moved = hook(claude("Write", {"file_path": str(target), "content": "--!strict\n" + old}, place))
    assert moved.exit_code == 0, moved.stderr
    todo = hook(claude("Write", {"file_path": str(target), "content": old + "-- TODO: finish the shop\n"}, place))
    assert todo.exit_code == 2 and "TODO: finish the shop" in todo.stderr and "ProfileStore" not in todo.stderr
    stray = hook(claude("Write", {"file_path": str(target), "content": old + "end\n"}, place))
    assert stray.exit_code == 2
    path = hook(claude("Write", {"file_path": str(target),
                                 "content": old + "local X = game.ReplicatedStorage.Shared.Modulez\n"}, place))
    assert path.exit_code == 2 and "Did you mean 'Modules'?" in path.stderr
    new = place / "src" / "server" / "Services" / "Fresh.luau"
    fresh = hook(claude("Write", {"file_path": str(new), "content": PERSON_NOTE + "return {}\n"}, place))
    assert fresh.exit_code == 2 and "ProfileStore" in fresh.stderr


def test_multiedit_and_apply_patch_are_judged_on_what_they_add(place):
    target = place / SHOP
    target.write_text(PERSON_NOTE + target.read_text())
    first_line = target.read_text().splitlines()[1]
    multi = {"file_path": str(target), "edits": [{"old_string": first_line, "new_string": first_line + " -- keep"}]}
    assert hook(claude("MultiEdit", multi, place)).exit_code == 0
    envelope = (f"*** Begin Patch\n*** Update File: {SHOP}\n@@\n {first_line}\n+local _unused = 2\n*** End Patch\n")
    codex = json.loads(claude("apply_patch", {"command": ["apply_patch", envelope]}, place))
    assert hook(json.dumps(codex).encode(), agent="codex").exit_code == 0
    bad = envelope.replace("+local _unused = 2", "+-- TODO: later")
    codex["tool_input"] = {"command": ["apply_patch", bad]}
    resp = hook(json.dumps(codex).encode(), agent="codex")
    assert resp.exit_code == 2 and "TODO: later" in resp.stderr


# -- after the tool ran: what the model reads -------------------------------------------------
def post(payload: bytes, response=None) -> bytes:
    data = json.loads(payload)
    data["hook_event_name"] = "PostToolUse"
    data["tool_response"] = response if response is not None else {"filePath": data["tool_input"].get("file_path"),
                                                                    "success": True}
    return json.dumps(data).encode()


WARN_EDIT = {"old_string": "local SwordTemplate = ServerStorage.Templates.Sword",
             "new_string": "local SwordTemplate = ServerStorage.Templatez.Sword"}


def run_tool(payload: bytes) -> None:
    """Do what the agent's tool does: apply the Write/Edit to the file."""
    data = json.loads(payload)
    args, path = data["tool_input"], Path(data["tool_input"]["file_path"])
    if data["tool_name"] == "Write":
        path.write_text(args["content"])
    else:
        path.write_text(path.read_text().replace(args["old_string"], args["new_string"], 1))


def test_posttooluse_tells_claude_the_warnings_the_write_introduced(place):
    pre = claude("Edit", {"file_path": str(place / SHOP), **WARN_EDIT}, place)
    assert hook(pre) == type(hook(pre))(0, "", "")  # passes, silently
    run_tool(pre)
    resp = hook(post(pre))  # text output: exit 2 + stderr, which Claude Code feeds to the model
    assert resp.exit_code == 2 and resp.stdout == ""
    assert "Did you mean 'Templates'?" in resp.stderr and "just written" in resp.stderr
    # the same in JSON: {"decision": "block", "reason"} on stdout, exit 0
    (place / SHOP).write_text((place / SHOP).read_text().replace(WARN_EDIT["new_string"], WARN_EDIT["old_string"]))
    hook(pre)
    run_tool(pre)
    resp = hook(post(pre), output="json")
    body = json.loads(resp.stdout)
    assert resp.exit_code == 0 and body["decision"] == "block" and "Did you mean 'Templates'?" in body["reason"]


def test_posttooluse_prints_nothing_when_nothing_is_new(place):
    target = place / SHOP
    target.write_text(PERSON_NOTE + target.read_text())
    old = target.read_text()
    pre = claude("Write", {"file_path": str(target), "content": old + "-- sold items are logged by the server\n"}, place)
    assert hook(pre).exit_code == 0
    run_tool(pre)
    assert hook(post(pre)) == type(hook(pre))(0, "", "")
    assert hook(post(pre), output="json").stdout == ""


def test_posttooluse_without_the_before_record(place):
    """No PreToolUse configured: an Edit is reversed on the file; Claude Code's
    ``originalFile`` serves a Write; with neither the change is not judged (a note)."""
    edit = claude("Edit", {"file_path": str(place / SHOP), **WARN_EDIT}, place)
    run_tool(edit)
    resp = hook(post(edit))
    assert resp.exit_code == 2 and "Did you mean 'Templates'?" in resp.stderr
    target = place / SHOP
    before = target.read_text()
    write = claude("Write", {"file_path": str(target), "content": before + "-- TODO: later\n"}, place)
    run_tool(write)
    resp = hook(post(write, {"type": "update", "filePath": str(target), "content": "...", "originalFile": before}))
    assert resp.exit_code == 2 and "TODO: later" in resp.stderr and "Templatez" not in resp.stderr
    resp = hook(post(write))
    assert resp.exit_code == 0 and "no record" in resp.stderr


def test_posttooluse_for_an_mcp_call_reports_its_warnings(place):
    call = claude("mcp__studio__run_code", {"command": "print(game.ServerStorage.Templatez)"}, place)
    assert hook(call).exit_code == 0
    resp = hook(post(call, {"content": [{"type": "text", "text": "ok"}]}))
    assert resp.exit_code == 2 and "run_code call that just ran" in resp.stderr and "Templates" in resp.stderr


# -- Cursor and Copilot ----------------------------------------------------------------------
def cursor(event: str, tool: str, tool_input, place: Path, **extra) -> bytes:
    return json.dumps({"conversation_id": "c", "generation_id": "g", "hook_event_name": event,
                       "workspace_roots": [str(place)], "tool_name": tool, "tool_input": tool_input, **extra}).encode()


def test_cursor_never_approves_what_luaguard_did_not_judge_or_found_clean(place):
    for payload in (cursor("preToolUse", "Shell", {"command": "rm -rf /"}, place),
                    cursor("beforeMCPExecution", "delete_everything", {"confirm": True}, place, command="npx other"),
                    cursor("preToolUse", "MCP:studio:delete_object", {"instancePath": "game.Workspace.Map"}, place),
                    cursor("preToolUse", "Edit", {"file_path": str(place / SHOP), **WARN_EDIT}, place),
                    cursor("preToolUse", "Write", {"file_path": str(place / "README.md"), "contents": "x"}, place),
                    b"{broken"):
        resp = hook(payload, agent="cursor")
        assert (resp.exit_code, resp.stdout) == (0, ""), payload
        assert "allow" not in resp.stdout
    denied = hook(cursor("preToolUse", "MCP:studio:delete_object", {"instancePath": "game.Workspace.Mapp"}, place),
                  agent="cursor")
    assert json.loads(denied.stdout)["permission"] == "deny"


def test_cursor_posttooluse_answers_additional_context(place):
    pre = cursor("preToolUse", "Edit", {"file_path": str(place / SHOP), **WARN_EDIT}, place)
    assert hook(pre, agent="cursor").stdout == ""
    run_tool(pre)
    after = cursor("postToolUse", "Edit", {"file_path": str(place / SHOP), **WARN_EDIT}, place, tool_output="{}")
    body = json.loads(hook(after, agent="cursor").stdout)
    assert "Did you mean 'Templates'?" in body["additional_context"]
    again = hook(after, agent="cursor")  # nothing on record any more, the edit is reversed: same finding
    assert "Templates" in json.loads(again.stdout)["additional_context"]
    edited = json.dumps({"conversation_id": "c", "hook_event_name": "afterFileEdit", "workspace_roots": [str(place)],
                         "file_path": str(place / SHOP), "edits": [WARN_EDIT]}).encode()
    assert hook(edited, agent="cursor") == type(hook(edited))(0, "", "")  # afterFileEdit cannot answer


def test_copilot_posttooluse_answers_additional_context(place):
    args = {"path": str(place / SHOP), "old_str": WARN_EDIT["old_string"], "new_str": WARN_EDIT["new_string"]}
    pre = json.dumps({"timestamp": 1, "cwd": str(place), "toolName": "edit", "toolArgs": args}).encode()
    assert json.loads(hook(pre, agent="copilot").stdout) == {}
    (place / SHOP).write_text((place / SHOP).read_text().replace(args["old_str"], args["new_str"]))
    after = json.dumps({"timestamp": 2, "cwd": str(place), "toolName": "edit", "toolArgs": args,
                        "toolResult": {"resultType": "success"}}).encode()
    body = json.loads(hook(after, agent="copilot").stdout)
    assert "Did you mean 'Templates'?" in body["additionalContext"]


def test_codex_posttooluse_after_apply_patch(place):
    line = "local SwordTemplate = ServerStorage.Templates.Sword"
    envelope = (f"*** Begin Patch\n*** Update File: {SHOP}\n@@\n-{line}\n+{WARN_EDIT['new_string']}\n"
                f"*** Add File: src/server/Services/Extra.luau\n+return ServerStorage\n*** End Patch\n")
    pre = claude("apply_patch", {"command": ["apply_patch", envelope]}, place)
    resp = hook(pre, agent="codex")
    assert resp.exit_code == 2 and "ServerStorage" in resp.stderr  # the new file uses an undefined global
    envelope = envelope.replace("+return ServerStorage", "+return {}")
    pre = claude("apply_patch", {"command": ["apply_patch", envelope]}, place)
    assert hook(pre, agent="codex").exit_code == 0
    for ch in apply_patch_envelope(envelope, place):
        (place / ch.path).write_text(ch.new)
    assert [k for _, k in patch_paths(envelope)] == ["update", "add"]
    resp = hook(post(pre, {"output": "Success"}), agent="codex")
    assert resp.exit_code == 2 and "Did you mean 'Templates'?" in resp.stderr and "Extra.luau" not in resp.stderr
