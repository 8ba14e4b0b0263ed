"""A bounded fuzz run of the three front ends an agent or an editor feeds (issue 41): the
hook, the MCP server and the language server, with Hypothesis-generated payloads - hook
payloads of every agent's shape with odd values (lone surrogates, huge integers, JSON nested
in strings, paths out of the project), JSON-RPC lines and LSP messages with random methods
and parameters.

Properties: the hook always gives a well-formed answer (exit 0 or 2; stdout empty or one
JSON object in ASCII); every request the servers receive gets exactly one answer, a result or
a JSON-RPC error, and the servers keep serving.  Derandomized and bounded (a few dozen
inputs per target) so CI stays fast; ``LUAGUARD_FUZZ_EXAMPLES`` scales it for a long run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hostile import JsonLines, make_repo, popen_luaguard
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

SCALE = max(1, int(os.environ.get("LUAGUARD_FUZZ_EXAMPLES", "5000")) // 5000)


def _settings(n: int) -> settings:
    return settings(max_examples=n * SCALE, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck),
                    phases=[Phase.explicit, Phase.generate])  # no shrinking: each input is a server session


TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["src/server/Main.server.luau", "src/shared/Util.luau", "../outside/creds.luau", "/etc/passwd",
                     "/dev/zero", "src/../../x.luau", "local x = (\n", "-- TODO\n", "print('\ud800')\n",
                     'local P = game:GetService("Playerz")\n', "*** Begin Patch\n*** End Patch\n", "\x00\x01", ""]),
)
JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12)
TOOLS = st.sampled_from(["Write", "Edit", "MultiEdit", "apply_patch", "str_replace_based_edit_tool", "create", "edit",
                         "mcp__studio__run_code", "mcp__luaguard__check_luau", "MCP:studio:execute_luau", "Bash", ""])


@st.composite
def hook_payloads(draw) -> bytes:
    body = draw(st.dictionaries(st.sampled_from(["cwd", "session_id", "hook_event_name", "tool_response", "toolName",
                                                 "toolArgs", "workspace_roots"]), JSON, max_size=4))
    body["tool_name"] = draw(TOOLS)
    keys = st.sampled_from(["file_path", "path", "content", "file_text", "old_string", "new_string", "edits",
                            "replace_all", "command", "code", "input"])
    tool_input = draw(st.dictionaries(keys, JSON, max_size=5))
    body["tool_input"] = json.dumps(tool_input) if draw(st.booleans()) else tool_input
    data = json.dumps(body).encode()
    how = draw(st.integers(0, 5))
    if how == 1:  # an integer over Python's 4,300-digit limit
        data = data[:-1] + b', "n": ' + b"7" * 4400 + b"}"
    elif how == 2:  # truncated
        data = data[: draw(st.integers(0, len(data)))]
    elif how == 3:  # a lone surrogate escape in a string
        data = data.replace(b'"tool_input"', b'"tool_input\\udc80": 1, "tool_input"', 1)
    return data


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    ws, _ = make_repo(tmp_path_factory.mktemp("fuzz"))
    return ws


def test_the_hook_always_answers(repo: Path, tmp_path_factory) -> None:
    from luaguard.agents.hook import HookOptions, run_hook

    stash = tmp_path_factory.mktemp("stash")

    @_settings(120)
    @given(hook_payloads(), st.sampled_from(["claude", "codex", "cursor", "copilot"]), st.sampled_from(["text", "json"]))
    def run(data: bytes, agent: str, output: str) -> None:
        data = data.replace(b'"cwd": ', b'"cwd_": ', 1)  # a cwd of the payload's choosing is a separate test
        obj = None
        try:
            obj = json.loads(data)
        except ValueError:
            pass
        if isinstance(obj, dict):
            obj["cwd"] = str(repo)
            data = json.dumps(obj).encode()
        resp = run_hook(data, HookOptions(agent=agent, output=output, project=repo, timeout=30, stash_dir=stash))
        assert resp.exit_code in (0, 2)
        if resp.stdout:
            resp.stdout.encode("ascii")
            assert isinstance(json.loads(resp.stdout), dict)
        if resp.exit_code == 2:
            assert resp.stderr.strip()

    run()


@st.composite
def jsonrpc_lines(draw) -> tuple[bytes, int | None]:
    """One line for an MCP server and the id it must answer (``None``: nothing to answer)."""
    rid = draw(st.integers(1, 10**6))
    kind = draw(st.integers(0, 4))
    method = draw(st.sampled_from(["tools/call", "tools/list", "ping", "resources/list", "nope", ""]))
    params = {"name": draw(st.sampled_from(["check_luau", "check_diff", "validate_tool_call", "resolve_path",
                                            "project_tree", "stats", "missing"])),
              "arguments": draw(st.dictionaries(st.sampled_from(["path", "content", "mode", "diff", "call", "root",
                                                                 "depth"]), JSON, max_size=3))}
    msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    line = json.dumps(msg).encode()
    if kind == 1:
        line = line.replace(b'"params"', b'"params\\ud800"', 1)  # a lone surrogate escape
        return line, rid
    if kind == 2:
        return b'{"jsonrpc": "2.0", "method": "notifications/whatever"}', None
    if kind == 3:
        return b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": 5}' % rid, rid
    return line, rid


def test_the_mcp_server_answers_every_request(repo: Path) -> None:
    pytest.importorskip("mcp")

    @_settings(3)
    @given(st.lists(jsonrpc_lines(), min_size=12, max_size=12, unique_by=lambda x: x[1] or 0))
    def run(lines) -> None:
        conv = JsonLines(popen_luaguard(["mcp", "--project", str(repo)], cwd=repo, stderr=subprocess.DEVNULL))
        try:
            conv.initialize()
            want = set()
            for line, rid in lines:
                conv.send_raw(line + b"\n")
                if rid is not None:
                    want.add(rid)
            got = set()
            while got != want:
                msg = conv.read(60)
                if "id" in msg and ("result" in msg or "error" in msg):
                    assert msg["id"] in want, msg
                    got.add(msg["id"])
            conv.send({"jsonrpc": "2.0", "id": 10**7, "method": "ping"})
            assert "result" in conv.answer_to(10**7)
        finally:
            conv.close()

    run()


LSP_METHODS = ["textDocument/hover", "textDocument/completion", "textDocument/codeAction", "textDocument/diagnostic",
               "workspace/executeCommand", "textDocument/didOpen", "textDocument/didChange", "luaguard/unknown",
               "textDocument/inlineCompletion"]


@st.composite
def lsp_messages(draw, uri: str) -> tuple[dict, bool]:
    method = draw(st.sampled_from(LSP_METHODS))
    doc = {"uri": draw(st.sampled_from([uri, "file:///etc/passwd", "untitled:x", 5]))}
    pos = {"line": draw(st.integers(-1, 3)), "character": draw(st.integers(-1, 40))}
    if method == "workspace/executeCommand":
        params: object = {"command": draw(st.sampled_from(["luaguard.validatePatch", "luaguard.validateToolCall",
                                                          "luaguard.stats", "luaguard.nope"])),
                          "arguments": draw(st.lists(JSON, max_size=3))}
    elif method == "textDocument/didOpen":
        params = {"textDocument": {**doc, "languageId": "luau", "version": 1, "text": draw(TEXT)}}
    elif method == "textDocument/didChange":
        params = {"textDocument": {**doc, "version": draw(st.integers(0, 9))},
                  "contentChanges": [{"text": draw(TEXT)}]}
    else:
        params = draw(st.one_of(st.just({"textDocument": doc, "position": pos}),
                                st.just({"textDocument": doc, "range": {"start": pos, "end": pos},
                                         "context": {"diagnostics": []}}), JSON))
    is_request = not method.startswith("textDocument/did")
    return {"jsonrpc": "2.0", "method": method, "params": params}, is_request


def test_the_language_server_answers_every_request(tmp_path: Path, repo: Path) -> None:
    from raw_lsp import RawLspClient

    uri = (repo / "src" / "server" / "Main.server.luau").as_uri()

    @_settings(2)
    @given(st.lists(lsp_messages(uri), min_size=15, max_size=15))
    def run(messages) -> None:
        with RawLspClient(repo, tmp_path / "server.log") as client:
            client.initialize(repo)
            ids = []
            for msg, is_request in messages:
                if is_request:
                    msg = {**msg, "id": client.next_id()}
                    ids.append(msg["id"])
                client.send(msg)
            for rid in ids:
                got = client.wait_response(rid, 120).message
                assert ("result" in got) != ("error" in got), got
                if "error" in got:
                    assert "Traceback" not in json.dumps(got), got
            assert client.shutdown() == 0

    run()
