"""Tool-schema ``pattern``s run on a linear-time engine (RE2): a catastrophic pattern from a
repository's ``luaguard.toml``, a ``--tools`` file or a proxied server's ``tools/list`` never
hangs validation; an unsupported pattern is reported once and skipped (issue 41,
"catastrophic regex")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hostile import REPO, JsonLines, make_repo, out_text, popen_luaguard, run_luaguard

EVIL = "^(a+)+$"
SLOW_INPUT = "a" * 48 + "!"  # Python's backtracking re takes years on this
TOOL = {"name": "tag", "parameters": {"type": "object", "required": ["label"],
                                     "properties": {"label": {"type": "string", "pattern": EVIL}}}}
CALL = {"name": "tag", "arguments": {"label": SLOW_INPUT}}


def _toml_tool(pattern: str) -> str:
    return ("[[toolcalls.tools]]\nname = \"tag\"\n"
            f"parameters = {{ type = \"object\", required = [\"label\"], properties = {{ label = {{ type = \"string\", "
            f"pattern = {json.dumps(pattern)} }} }} }}\n")


def test_a_catastrophic_pattern_in_luaguard_toml_does_not_hang_validate(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    (ws / "luaguard.toml").write_text(_toml_tool(EVIL))
    (ws / "call.json").write_text(json.dumps(CALL))
    proc = run_luaguard(["validate", "call.json", "--format", "json"], cwd=ws, timeout=60)
    [res] = json.loads(proc.stdout)
    assert proc.returncode == 1 and not res["valid"], out_text(proc)
    assert any("pattern" in e["message"] or "does not match" in e["message"] for e in res["errors"]), res


def test_a_catastrophic_pattern_in_a_tools_file_does_not_hang_validate(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    (tmp_path / "tools.json").write_text(json.dumps({"tools": [TOOL]}))
    (ws / "call.json").write_text(json.dumps(CALL))
    proc = run_luaguard(["validate", "call.json", "--tools", str(tmp_path / "tools.json")], cwd=ws, timeout=60)
    assert proc.returncode == 1 and '"valid": false' in proc.stdout.decode(), out_text(proc)
    ok = dict(CALL, arguments={"label": "aaaa"})
    (ws / "call.json").write_text(json.dumps(ok))
    proc = run_luaguard(["validate", "call.json", "--tools", str(tmp_path / "tools.json")], cwd=ws, timeout=60)
    assert proc.returncode == 0, out_text(proc)


def test_patterns_keep_json_schema_semantics() -> None:
    """ECMA-262 as JSON Schema asks: unanchored search, ``$`` only at the end of the text
    (Python's ``$`` also matches before a final newline), ``\\d`` ASCII digits only."""
    from luaguard.toolcalls.schemas import make_tool

    def valid(pattern: str, value: str) -> bool:
        spec = make_tool({"name": "t", "parameters": {"type": "object", "properties": {
            "v": {"type": "string", "pattern": pattern}}}}, "test")
        return not list(spec.validator.iter_errors({"v": value}))

    assert valid("b", "abc")              # a search, not a match
    assert not valid("^a$", "a\n")        # no match before a trailing newline
    assert not valid("^\\d+$", "\u0663")  # ARABIC-INDIC DIGIT THREE is no \d
    assert valid("^\\d+$", "123")


def test_an_unsupported_pattern_is_reported_once_and_skipped(tmp_path: Path) -> None:
    ws, _ = make_repo(tmp_path)
    (ws / "luaguard.toml").write_text(_toml_tool("^(a)\\1(?=b)"))  # a backreference and a lookahead: not RE2
    calls = [{"name": "tag", "arguments": {"label": "zz"}}, {"name": "tag", "arguments": {"label": "yy"}}]
    (ws / "calls.json").write_text(json.dumps(calls))
    proc = run_luaguard(["validate", "calls.json"], cwd=ws, timeout=60)
    text = out_text(proc)
    assert proc.returncode == 0, text  # skipped: the calls are judged without it
    assert text.count("not supported") == 1, text


def test_a_proxied_servers_catastrophic_pattern_does_not_hang_the_proxy(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    ws, _ = make_repo(tmp_path)
    upstream = tmp_path / "upstream.py"
    upstream.write_text(
        "from typing import Annotated\nfrom pydantic import Field\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "server = MCPServer('evil')\n"
        "@server.tool()\n"
        f"def tag(label: Annotated[str, Field(pattern={EVIL!r})]) -> str:\n    return 'tagged'\n"
        "server.run()\n")
    conv = JsonLines(popen_luaguard(["mcp-proxy", "--project", str(ws), "--", sys.executable, str(upstream)], cwd=REPO))
    try:
        conv.initialize()
        got = conv.call(1, "tag", {"label": SLOW_INPUT}, timeout=60)
        assert got["result"]["isError"], got
        got = conv.call(2, "tag", {"label": "aaa"}, timeout=60)
        assert not got["result"].get("isError"), got
    finally:
        conv.close()
