"""Protocol conformance under malformed input (issue 41, "protocol edges"): the language
server's framing errors are reported and the stream resynchronised (it never goes on
swallowing messages), requests
after ``shutdown`` get ``InvalidRequest``, a command's bad arguments a one-line error; the MCP
server and the proxy answer malformed requests with JSON-RPC errors, and the proxy survives a
client line over 64 MB."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import REPO, JsonLines, make_repo, popen_luaguard
from raw_lsp import RawLspClient

STAND_IN = [sys.executable, str(REPO / "tests" / "fixtures" / "stand_in_mcp_server.py")]


@pytest.fixture
def lsp(tmp_path: Path):
    ws, _ = make_repo(tmp_path)
    with RawLspClient(ws, tmp_path / "server.log") as client:
        client.initialize(ws)
        yield client, tmp_path / "server.log"


def test_a_content_length_too_large_is_reported_and_the_stream_resynchronised(lsp) -> None:
    client, log = lsp
    body = json.dumps({"jsonrpc": "2.0", "id": 900, "method": "luaguard/none"}).encode()
    client.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(body) + 40) + body)  # claims 40 bytes more
    rid = client.request("workspace/executeCommand", {"command": "luaguard.stats", "arguments": []})
    assert "result" in client.wait_response(rid, 60).message  # the next message is not swallowed
    assert "error" in client.wait_response(900, 60).message  # nor the first (an unknown method)
    assert "Content-Length" in log.read_text()
    assert client.shutdown() == 0


def test_a_content_length_too_small_is_reported_and_the_stream_resynchronised(lsp) -> None:
    client, log = lsp
    body = json.dumps({"jsonrpc": "2.0", "id": 901, "method": "luaguard/none"}).encode()
    client.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body)
    got = client.call("workspace/executeCommand", {"command": "luaguard.stats", "arguments": []}, 60)
    assert "result" in got
    assert client.responses[None].message["error"]["code"] == -32700  # the cut body: a parse error
    assert "Content-Length" in log.read_text()
    assert client.shutdown() == 0


def test_a_header_block_without_a_length_is_reported_and_skipped(lsp) -> None:
    client, log = lsp
    client.send_bytes(b"Content-Type: application/json\r\n\r\n{}\r\n")
    assert client.call("shutdown", None, 60).get("error") is None
    client.notify("exit")
    assert client.proc.wait(30) == 0
    assert "without a Content-Length" in log.read_text()


def test_a_body_that_is_not_json_gets_a_parse_error_and_the_server_goes_on(lsp) -> None:
    client, _ = lsp
    client.send_bytes(b"Content-Length: 9\r\n\r\n{not json")
    got = client.wait_for(lambda: client.responses.get(None), 30, "the parse error")
    assert got.message["error"]["code"] == -32700
    assert client.shutdown() == 0


def test_requests_after_shutdown_get_invalid_request(lsp) -> None:
    client, _ = lsp
    assert "error" not in client.call("shutdown")
    got = client.call("textDocument/hover", {"textDocument": {"uri": "file:///x.luau"},
                                             "position": {"line": 0, "character": 0}}, 30)
    assert got["error"]["code"] == -32600
    client.notify("exit")
    assert client.proc.wait(30) == 0


def test_validate_patch_with_bad_arguments_is_a_one_line_error(lsp) -> None:
    client, _ = lsp
    for args in ([123], [{"uri": 123, "content": "x"}], ["file:///a.luau", 5], ["file:///a.luau", None, ["diff"]]):
        got = client.call("workspace/executeCommand", {"command": "luaguard.validatePatch", "arguments": args}, 60)
        err = got.get("error")
        assert err is not None and err["code"] == -32602, got
        assert "\n" not in err["message"] and "Traceback" not in json.dumps(got), got


@pytest.mark.parametrize("which", ["mcp", "mcp-proxy"])
def test_mcp_servers_answer_a_lone_surrogate_escape_with_an_error(tmp_path: Path, which: str) -> None:
    pytest.importorskip("mcp")
    ws, _ = make_repo(tmp_path)
    args = ["mcp", "--project", str(ws)] if which == "mcp" else ["mcp-proxy", "--project", str(ws), "--", *STAND_IN]
    conv = JsonLines(popen_luaguard(args, cwd=ws, stderr=subprocess.DEVNULL))
    try:
        conv.initialize()
        tool = "check_luau" if which == "mcp" else "run_code"
        key = "content" if which == "mcp" else "command"
        conv.send_raw(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"%s","arguments":{"path":"a.luau",'
                      b'"%s":"print(\\ud800)"}}}\n' % (tool.encode(), key.encode()))
        got = conv.answer_to(7, 60)
        assert got["error"]["code"] in (-32700, -32600, -32602), got
        conv.send({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
        assert "result" in conv.answer_to(8, 60)
    finally:
        conv.close()


def test_the_proxy_survives_a_line_over_64_mb(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    ws, _ = make_repo(tmp_path)
    conv = JsonLines(popen_luaguard(["mcp-proxy", "--project", str(ws), "--", *STAND_IN], cwd=ws,
                                    stderr=subprocess.DEVNULL))
    try:
        conv.initialize()
        head = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_code","arguments":{"command":"'
        chunk = b"x" * (1 << 20)
        conv.proc.stdin.write(head)
        for _ in range(66):
            conv.proc.stdin.write(chunk)
        conv.send_raw(b'"}}}\n')
        got = conv.read(120)
        assert "error" in got and got["error"]["code"] == -32600, str(got)[:300]
        conv.send({"jsonrpc": "2.0", "id": 10, "method": "tools/list"})
        assert "result" in conv.answer_to(10, 60)
    finally:
        conv.close()
