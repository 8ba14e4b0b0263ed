"""Stress test of ``luaguard serve`` over stdio (a real server process, a raw client).

One session against the sample place sends thousands of incremental ``didChange``
notifications (several edits per notification at times, whole-document replacements,
astral characters, versions that go backwards or repeat), interleaved with completion,
codeAction and hover requests, requests cancelled at once, garbage JSON-RPC (bodies that
are not JSON, JSON that is not a message, unknown methods, params of the wrong shape,
notifications for documents never opened, edits with impossible ranges), and a settings
change half way (debounce 150 ms -> 0 ms).  Then it checks that:

* the server is still up and answers ``shutdown`` (exit status 0 after ``exit``);
* every request was answered (a result, or an error such as ``RequestCancelled`` or
  ``MethodNotFound``);
* every publication's ranges fit the text of the version it names;
* the last diagnostics equal a fresh lint of the final text (same engine entry point and
  conversion the server uses, run in this process);
* resident memory grew by less than :data:`RSS_GROWTH_LIMIT_MIB` (printed, with ``-s``).

``LUAGUARD_STRESS_EDITS`` changes the number of edits (default 1,200, which keeps the
suite within CI's time on 2 cores; ``LUAGUARD_STRESS_EDITS=3000`` for the long run).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from raw_lsp import RawLspClient

from luaguard.engine import Engine
from luaguard.lsp.convert import PositionEncoder, findings_to_diagnostics, prepare_text
from luaguard.lsp.host import lint_document
from luaguard.text import LineIndex

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
MAIN = PLACE / "src" / "server" / "Services" / "CombatService.luau"
EDITS = int(os.environ.get("LUAGUARD_STRESS_EDITS", "1200"))
SEED = int(os.environ.get("LUAGUARD_STRESS_SEED", "20240607"))
RSS_GROWTH_LIMIT_MIB = 150

INSERTS = [
    "x", " ", "\n", "\n\t", "end", "end\n", "(", ")", "{", "}", "[", "]", "local a = 1\n", "function f(...)\n",
    "if a then\n", "-- TODO\n", "-- ... rest of code\n", '"', "'", "`{", "--[[", "]]", "😀", "é", "漢字", "\t",
    "game.ReplicatedStorage.Shared.Modulez", 'game:GetService("Playerz")', "script.Parent.DataService",
    "Instance.new(\"Foldr\")", "...", "\r\n", "local s = \"multi\nline\"\n", "return\n",
]

def frame(body: bytes, extra_header: bytes = b"") -> bytes:
    return extra_header + b"Content-Length: %d\r\n\r\n" % len(body) + body


GARBAGE: list[bytes] = [
    frame(b"{garbag"),                      # not JSON
    frame(b"[]"), frame(b"null"), frame(b"12345"), frame(b'"text"'),  # JSON, not a message
    frame(b"{}", b"X-Unknown-Header: 1\r\n"),  # an unknown header
    frame(b'{"jsonrpc":"2.0"}'),           # neither request nor notification
    frame(b'{"jsonrpc":"2.0","id":{"a":1},"method":"textDocument/hover","params":{}}'),  # an id of the wrong type
    frame(b"{}", b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"),
    b"\r\n",                                # an empty header block
    b"not a header at all\r\n",             # a line that is no header (skipped)
    frame(b'{"jsonrpc": "2.0", "method": "$/unknownNotification", "params": 1}'),
    frame(rb'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"x": "\ud800"}}'),  # a lone surrogate
]


def utf16_position(lines: LineIndex, offset: int) -> dict:
    p = lines.position(offset)
    return {"line": p.line, "character": p.character}


def safe_offset(text: str, rng: random.Random) -> int:
    """A random offset not between the two characters of a CRLF (an LSP position cannot
    name that spot)."""
    while True:
        i = rng.randint(0, len(text))
        if not (0 < i < len(text) and text[i - 1] == "\r" and text[i] == "\n"):
            return i


def random_edit(text: str, rng: random.Random) -> tuple[dict, str]:
    """One incremental change (LSP JSON) and the text after it."""
    lines = LineIndex(text)
    start = safe_offset(text, rng)
    end = start
    if rng.random() < 0.45 or len(text) > 20000:
        end = min(len(text), start + rng.randint(1, 12))
        while 0 < end < len(text) and text[end - 1] == "\r" and text[end] == "\n":
            end += 1
    new = rng.choice(INSERTS) if rng.random() < 0.75 else ""
    change = {"range": {"start": utf16_position(lines, start), "end": utf16_position(lines, end)}, "text": new}
    return change, text[:start] + new + text[end:]


def expected_diagnostics(text: str, version: int) -> list[dict]:
    """What the server should publish for ``text``: a fresh engine, the server's own lint
    entry point and conversion."""
    engine = Engine(PLACE)
    text = prepare_text(text)
    findings, errors = lint_document(engine, text, MAIN)
    assert not errors, errors
    from pygls.protocol import default_converter

    conv = default_converter()
    return [conv.unstructure(d) for d in findings_to_diagnostics(findings, PositionEncoder(text, "utf-16"), version)]


def key(d: dict) -> tuple:
    r = d["range"]
    return (r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"], d.get("code"),
            d.get("severity"), d["message"])


def assert_fits(text: str, diagnostics: list[dict], what: str) -> None:
    lines = LineIndex(text)
    for d in diagnostics:
        for end in ("start", "end"):
            p = d["range"][end]
            assert 0 <= p["line"] < lines.line_count, f"{what}: {d['message']!r} on line {p['line']} of {lines.line_count}"
            width = sum(2 if ord(c) > 0xFFFF else 1 for c in lines.line_text(p["line"]))
            assert 0 <= p["character"] <= width, f"{what}: {d['message']!r} at character {p['character']} of {width}"


@pytest.fixture
def client(tmp_path: Path):
    with RawLspClient(PLACE, tmp_path / "server.log") as c:
        c.tmp_path = tmp_path
        yield c


def test_garbage_requests_get_error_responses(client: RawLspClient) -> None:
    """Regression (found by the stress test): pygls 2.1 never answered a request whose
    params did not fit their type, nor one without ``"jsonrpc"``; and objects nested in a
    command's arguments that carry a ``"jsonrpc"`` key were turned into message objects."""
    client.initialize(PLACE)
    bad_params = client.call("textDocument/hover", {"bad": 1}, timeout=10)
    assert bad_params["error"]["code"] == -32602
    client.send({"id": 77, "method": "textDocument/hover", "params": {}})
    assert client.wait_response(77, 10).message["error"]["code"] == -32600
    assert client.call("no/such/method", {}, timeout=10)["error"]["code"] == -32601
    for blob in GARBAGE:
        client.send_bytes(blob)
    mcp = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
           "params": {"name": "read_script", "arguments": {"path": "ServerScriptService.Server.Bootstrp"}}}
    res = client.call("workspace/executeCommand", {"command": "luaguard.validateToolCall", "arguments": [mcp]}, timeout=30)
    [call] = res["result"]
    assert [e["code"] for e in call["errors"]] == ["unknown_path"]
    assert call["errors"][0]["suggestions"][0] == "ServerScriptService.Server.Bootstrap"
    assert client.shutdown() == 0


def test_stress_incremental_edits_requests_and_garbage(client: RawLspClient) -> None:
    rng = random.Random(SEED)
    client.initialize(PLACE)  # debounce: the default 150 ms
    uri = MAIN.as_uri()
    text = MAIN.read_text(encoding="utf-8")
    version = 1
    texts: dict[int, str | None] = {1: text}  # None: the version was sent twice (ambiguous)
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "luau", "version": 1, "text": text}})
    scratch = "untitled:Scratch.luau"
    client.notify("textDocument/didOpen", {"textDocument": {"uri": scratch, "languageId": "luau", "version": 1, "text": "local x = 1\n"}})
    client.wait_for(lambda: client.publications(uri), 30, "the first diagnostics")
    # One completion first: it loads the completion model (torch and the weights), a
    # one-time cost that must not count as growth.
    client.wait_response(client.request("textDocument/completion", {"textDocument": {"uri": scratch},
                                                                    "position": {"line": 0, "character": 11}}), 120)

    requests: list[int] = []
    cancelled: set[int] = set()
    sent_versions = 0
    rss_start = None
    t_start = time.perf_counter()
    for i in range(EDITS):
        # -- the edit (sometimes several in one notification, or the whole text) --------
        if rng.random() < 0.01:
            text = MAIN.read_text(encoding="utf-8")[: rng.randint(0, 8000)]
            changes = [{"text": text}]
        else:
            changes = []
            for _ in range(1 if rng.random() < 0.8 else rng.randint(2, 4)):
                change, text = random_edit(text, rng)
                changes.append(change)
        if rng.random() < 0.02:  # out of order: an old or repeated version number
            v = max(1, version - rng.randint(0, 5))
        else:
            version += 1
            v = version
        texts[v] = None if v in texts else text
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v}, "contentChanges": changes})
        sent_versions += 1

        # -- interleaved requests ----------------------------------------------------------
        if i % 7 == 3:
            lines = LineIndex(text)
            pos = utf16_position(lines, safe_offset(text, rng))
            kind = rng.choice(["completion", "codeAction", "hover", "cancel", "cancel_unknown"])
            if kind == "completion":
                requests.append(client.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": pos}))
            elif kind == "codeAction":
                pubs = client.publications(uri)
                diags = pubs[-1].message["params"]["diagnostics"][:5] if pubs else []
                end = utf16_position(lines, safe_offset(text, rng))
                if (end["line"], end["character"]) < (pos["line"], pos["character"]):
                    pos, end = end, pos
                requests.append(client.request("textDocument/codeAction", {
                    "textDocument": {"uri": uri}, "range": {"start": pos, "end": end}, "context": {"diagnostics": diags}}))
            elif kind == "hover":
                requests.append(client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos}))
            elif kind == "cancel":
                # Requests that wait on the engine worker, cancelled at once.
                if rng.random() < 0.5:
                    rid = client.request("workspace/executeCommand", {
                        "command": "luaguard.validateToolCall",
                        "arguments": [{"name": "patch_script", "arguments": {"path": "src/server/Services/CombatService.luau",
                                                                             "content": text}}]})
                else:
                    pubs = client.publications(uri)
                    diags = pubs[-1].message["params"]["diagnostics"][:20] if pubs else []
                    rid = client.request("textDocument/codeAction", {
                        "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": pos},
                        "context": {"diagnostics": diags}})
                client.notify("$/cancelRequest", {"id": rid})
                requests.append(rid)
                cancelled.add(rid)
            else:
                client.notify("$/cancelRequest", {"id": 10_000_000 + i})

        # -- garbage and odd notifications -------------------------------------------------
        if i % 250 == 125:
            client.send_bytes(rng.choice(GARBAGE))
            requests.append(client.request("textDocument/hover", {"nonsense": True}))
            requests.append(client.request("luaguard/noSuchRequest", [1, 2, 3]))
            client.notify("textDocument/didChange", {"textDocument": {"uri": "file:///never/opened.luau", "version": 3},
                                                     "contentChanges": [{"text": "x"}]})
            client.notify("textDocument/didChange", {"textDocument": {"uri": scratch, "version": 2 + i},
                                                     "contentChanges": [{"range": {"start": {"line": 999, "character": 5},
                                                                                   "end": {"line": 1000, "character": 0}},
                                                                         "text": "y"}]})
            client.notify("textDocument/didClose", {"textDocument": {"uri": "file:///never/opened.luau"}})

        # -- the settings change half way: debounce 150 ms -> 0 ms -----------------------------
        if i == EDITS // 2:
            client.settings = {"debounceMs": 0}
            client.notify("workspace/didChangeConfiguration", {"settings": {"luaguard": {"debounceMs": 0}}})

        # -- pacing: let the server catch up now and then ------------------------------------
        if i % 100 == 99 and requests:
            client.wait_response(requests[-1], 60)
            if rss_start is None and i >= 299:
                rss_start = client.rss_kib()
    elapsed = time.perf_counter() - t_start

    # The final edit, in order, so the last publication has a version of its own.
    version += 1
    change, text = random_edit(text, rng)
    text += "\nlocal Final = game:GetService(\"ReplicatedStorage\").Shared.Modulez\n"
    lines = LineIndex(text)
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})
    texts[version] = text

    final = client.wait_for(lambda: [p for p in client.publications(uri) if p.message["params"].get("version") == version],
                            60, "diagnostics for the final version")
    time.sleep(0.5)  # nothing newer may follow
    last = client.publications(uri)[-1].message["params"]
    assert last["version"] == version and final[-1].message["params"] == last

    # Every request answered (a result or an error), cancelled ones included.
    client.wait_for(lambda: all(r in client.responses for r in requests), 60, "every request to be answered")
    outcome = {"result": 0, "cancelled": 0, "error": 0}
    for rid in requests:
        msg = client.responses[rid].message
        if "error" in msg:
            outcome["cancelled" if msg["error"]["code"] == -32800 else "error"] += 1
        else:
            outcome["result"] += 1

    # Every publication fits the text of the version it names.
    publications = client.publications(uri)
    checked = 0
    for p in publications:
        params = p.message["params"]
        t = texts.get(params.get("version"))
        if t is not None:
            try:
                assert_fits(t, params["diagnostics"], f"version {params.get('version')}")
            except AssertionError:
                dump = client.tmp_path / f"version-{params.get('version')}.luau"
                dump.write_text(t, encoding="utf-8", newline="")
                print(f"text of the failing version written to {dump}")
                raise
            checked += 1

    # The final diagnostics equal a fresh lint of the final text.
    want = expected_diagnostics(text, version)
    got = last["diagnostics"]
    if sorted(map(key, got)) != sorted(map(key, want)):
        import json

        (client.tmp_path / "final.luau").write_text(text, encoding="utf-8", newline="")
        (client.tmp_path / "final.json").write_text(json.dumps({"got": got, "want": want}, indent=1))
        print(f"final text and diagnostics written to {client.tmp_path}")
    assert sorted(map(key, got)) == sorted(map(key, want))
    assert [d.get("data") for d in sorted(got, key=key)] == [d.get("data") for d in sorted(want, key=key)]

    rss_end = client.rss_kib()
    alive = client.proc.poll() is None
    status = client.shutdown()
    print(f"\nstress: {sent_versions} didChange in {elapsed:.1f} s, {len(requests)} requests "
          f"({outcome['result']} results, {outcome['error']} errors, {outcome['cancelled']} cancelled of "
          f"{len(cancelled)} cancel attempts), {len(publications)} publications ({checked} checked against "
          f"their version's text), final {len(got)} diagnostics, RSS {rss_start} KiB -> {rss_end} KiB")
    assert alive and status == 0
    if rss_start is not None and rss_end is not None:
        assert (rss_end - rss_start) / 1024 < RSS_GROWTH_LIMIT_MIB, f"RSS grew from {rss_start} to {rss_end} KiB"
