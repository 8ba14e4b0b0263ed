"""Fuzzing tool-call input (bounded, in CI): the tool-call reader with every check behind
it (``validate_calls``), and the unified-diff parser and applier with the lint behind it
(``check_diff``).

Tool calls are JSON built from the shapes agents send (OpenAI messages with
``tool_calls``, Anthropic ``tool_use`` blocks, MCP ``tools/call``, plans with
``depends_on``, bare calls) and the built-in tools' fields, with values that are real
project paths, near misses, ``..``, absolute paths, odd types and Luau content; sent as
text (JSON, JSONL, damaged) or as parsed values.  Diffs are built from the sample place's
own files: real context lines at right or wrong line numbers, added and removed lines,
hostile file headers, CRLF, ``\\ No newline`` markers and garbage lines.

Properties: nothing raises; no input takes longer than the bound; results are JSON-able
and say valid/invalid; feedback stays within its 1,500-character budget; every file
finding lies inside the new text of its file.
"""

from __future__ import annotations

import json

import pytest
from fuzz_helpers import (
    LUAU_FRAGMENTS, SAMPLE_PLACE, ByteReader, assert_findings_inside, json_text, json_value,
    mutate_from_bytes, run_fuzz,
)

from luaguard.engine import Engine
from luaguard.toolcalls.api import patch_report, validate_calls
from luaguard.toolcalls.diffs import apply_hunks, parse_unified_diff

pytestmark = pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")

ENGINE = Engine(SAMPLE_PLACE)
FILES = sorted(p.relative_to(SAMPLE_PLACE).as_posix() for p in SAMPLE_PLACE.rglob("*.luau"))

CALL_KEYS = [
    "name", "arguments", "input", "function", "type", "id", "tool_calls", "role", "content", "steps", "depends_on",
    "dependsOn", "method", "params", "jsonrpc", "tool_use", "path", "content", "className", "parent", "instancePath",
    "property", "value", "confidence", "tool", "args", "parameters", "call", "calls", "messages", "choices", "message",
]
CALL_STRINGS = [
    "read_script", "patch_script", "create_script", "delete_script", "create_instance", "modify_property",
    "get_project_structure", "read_scrpt", "list_files", "execute_lua", "function", "tool_use", "tools/call",
    "assistant", "ServerScriptService.Server.Bootstrap", "game.ReplicatedStorage.Shared.Modules.Combat",
    "ReplicatedStorage.Shared.Modulez.Combat", "src/server/Services/CombatService.luau", "src/shared/Util/New.luau",
    "../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "C:\\Windows\\system32", "src/../../x.luau", "Workspace.SpawnLocation",
    "Workspace", "Anchored", "Size", "Colour", "Folder", "Part", "Foldr", "RemoteEvent", "Enum.Material.Neon", "Neon",
    "local x = 1\n", "-- TODO\n", "local RS = game:GetService('ReplicatedStorage')\nreturn RS.Shared.Modulez\n",
    "{\"name\": \"read_script\"}", "[1, 2, 3]", "a", "b", "step1", "💥", "", 0.5, 0.1, 7, True, None, [1, 2, 3], [4, 1, 2],
    {"x": 1}, "1, 2, 3",
]


def decode_call_input(data: bytes):
    r = ByteReader(data)
    value = json_value(r, CALL_KEYS, CALL_STRINGS, max_depth=5)
    if r.chance(2):  # a call of a real tool with its own fields, values fuzzed
        tool = r.choice(list(TOOL_FIELDS))
        args = {f: r.choice(CALL_STRINGS) for f in TOOL_FIELDS[tool] if not r.chance(6)}
        if "content" in args and r.chance(2):
            args["content"] = mutate_from_bytes(data[r.i:r.i + 16])
        value = {"name": tool if not r.chance(6) else r.choice(CALL_STRINGS[:12]), "arguments": args}
        if r.chance(4):
            value = {"steps": [dict(value, id="s1"), dict(value, id="s2", depends_on=[r.choice(["s1", "s2", "s3"])])]}
    form = r.int(4)
    if form == 0:
        return value
    if form == 1:
        return json_text(value, r).decode("utf-8", errors="replace")
    if form == 2:
        return "\n".join(json.dumps(v) for v in (value, value, "x"))
    return json.dumps({"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": r.choice(CALL_STRINGS[:8]), "arguments": json.dumps(value)}}]})


def check_calls(data) -> None:
    results = validate_calls(ENGINE, data)
    json.dumps(results)
    for res in results:
        assert isinstance(res["valid"], bool)
        assert res["valid"] == (not res["errors"])
        assert len(res["feedback"]) <= 1500, f"feedback of {len(res['feedback'])} characters"
        for p in (*res["errors"], *res["warnings"]):
            assert p["code"] and p["message"]
            rng = p.get("range")
            if rng is not None:
                s, e = rng["start"], rng["end"]
                assert 0 <= s["line"] and 0 <= s["character"] and 0 <= e["line"] and 0 <= e["character"]
                assert (s["line"], s["character"]) <= (e["line"], e["character"])


TOOL_FIELDS = {
    "read_script": ["path"], "patch_script": ["path", "content"], "create_script": ["path", "content", "className"],
    "delete_script": ["path"], "create_instance": ["className", "parent", "name"],
    "modify_property": ["instancePath", "property", "value"], "get_project_structure": [],
}

HEADERS = ["src/server/Services/CombatService.luau", "a/src/shared/Util/Signal.luau", "/dev/null", "../../etc/passwd",
           "/etc/passwd", "src/escape/../../x.luau", "ServerScriptService.Server.Bootstrap", "\"quoted name.luau\"",
           "src/shared/Util/New.luau", "", "b/src/client/Main.client.luau\t2024-01-01 00:00:00"]


def decode_diff(data: bytes) -> tuple[str, str]:
    """(original file text, unified diff) from bytes: hunks made of the file's own lines."""
    r = ByteReader(data)
    rel = r.choice(FILES)
    old = (SAMPLE_PLACE / rel).read_text(encoding="utf-8")
    lines = old.splitlines()
    out = []
    if not r.chance(4):
        old_h = rel if not r.chance(4) else r.choice(HEADERS)
        new_h = rel if not r.chance(4) else r.choice(HEADERS)
        out += [f"--- {'a/' if r.chance(2) else ''}{old_h}", f"+++ {'b/' if r.chance(2) else ''}{new_h}"]
    for _ in range(1 + r.int(3)):
        at = r.int(len(lines) + 2)
        ctx = lines[at:at + r.int(6)]
        body = []
        for line in ctx:
            op = r.int(8)
            if op == 0:
                body.append("-" + line)
            elif op == 1:
                body.append("+" + r.choice(LUAU_FRAGMENTS) + line)
            elif op == 2:
                body.append(line)  # no prefix: malformed
            else:
                body.append(" " + line)
        if r.chance(3):
            body.insert(r.int(len(body) + 1), "+" + r.choice(["end", "local x = (", "-- ... rest of code", "return {}"]))
        if r.chance(8):
            body.append("\\ No newline at end of file")
        n_old = sum(1 for b in body if b[:1] in (" ", "-"))
        n_new = sum(1 for b in body if b[:1] in (" ", "+"))
        start = at + 1 + (r.int(7) - 3 if r.chance(3) else 0)
        header = f"@@ -{start},{n_old} +{start},{n_new} @@" if not r.chance(10) else r.choice(["@@ -x +y @@", "@@ -1 +1 @@", "@@"])
        out.append(header)
        out += body
    if r.chance(10):
        out.insert(r.int(len(out) + 1), r.choice(["garbage", "diff --git a/x b/x", "index 0000..1111", "+++", "---"]))
    sep = "\r\n" if r.chance(6) else "\n"
    return old, sep.join(out) + sep


def check_diff_input(pair: tuple[str, str]) -> None:
    old, diff = pair
    patches, problems = parse_unified_diff(diff, "src/shared/Util/Signal.luau")
    for fp in patches:
        new_text, changed, line_map, probs = apply_hunks(old, fp, "x.luau")
        n_new = len(new_text.splitlines()) or 1
        assert all(0 <= c < max(n_new, 1) for c in changed), f"changed lines {sorted(changed)} outside {n_new} lines"
        assert len(line_map) == len(old.splitlines())
        assert all(-1 <= m < max(n_new, 1) for m in line_map)
    report = patch_report(ENGINE, "src/shared/Util/Signal.luau", diff=diff)
    for f in report.problems:
        assert f.message
    for fr in report.files:
        assert fr.status in ("modified", "added", "deleted")
        if fr.text is not None:
            assert_findings_inside(fr.text, fr.findings)


def test_fuzz_toolcall_reader_and_checks() -> None:
    run_fuzz(decode_call_input, check_calls, max_bytes=120, name="tool calls")


def test_fuzz_diff_parser_and_applier() -> None:
    run_fuzz(decode_diff, check_diff_input, max_bytes=80, name="diffs")
