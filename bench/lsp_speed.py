"""Language server latency on a real game: keystroke -> diagnostics, and the first diagnostics.

Usage::

    python bench/lsp_speed.py [--repo Epix-Incorporated+Adonis] [--file REL] [--keystrokes 120]
                              [--json FILE]

Runs ``luaguard serve`` (this checkout's) over stdio in a repository of the unpacked
real-code corpus (``~/.cache/luaguard/corpus``; default the Adonis admin system, 458
scripts under one ``default.project.json``), with ``debounceMs`` 0, and prints:

* **initialize + index**: from ``initialize`` to the end of the first indexing progress;
* **first diagnostics**: from ``didOpen`` of ``--file`` to its first
  ``publishDiagnostics`` (the project's scripts are read and scanned for the first time
  here: the run-time world is built once per snapshot);
* **keystroke -> diagnostics**: one ``didChange`` per typed character - a statement typed
  on a new line in the middle of the file, character by character, then deleted one
  character at a time - timed from writing the notification to reading the publication of
  that version; p50, p95 and max in milliseconds (target: p50 <= 10 ms, p95 <= 25 ms on a
  500-file game);
* the server's resident memory at the end and its peak (``VmHWM``).

The shared machine's load average is printed too: on a busy machine the figures include
waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

CORPUS = Path(os.environ.get("LUAGUARD_CACHE", Path.home() / ".cache" / "luaguard")) / "corpus"
DEFAULT_FILE = {
    "Epix-Incorporated+Adonis": "MainModule/Client/Core/Anti.luau",
    "RoVSRG+robeats-cs": None,
}
TYPED = 'local hitPart = workspace:FindFirstChild("Arena")'


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "luaguard"
    if script.exists():
        return [str(script), "serve"]
    return [sys.executable, "-c", "import sys; from luaguard.cli import main; sys.exit(main(['serve']))"]


def proc_status(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def main(argv: list[str] | None = None) -> int:
    from raw_lsp import RawLspClient

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default="Epix-Incorporated+Adonis", help="a corpus folder (<owner>+<name>)")
    ap.add_argument("--file", default=None, help="the file edited, relative to the repository")
    ap.add_argument("--keystrokes", type=int, default=120)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    root = (CORPUS / args.repo).resolve()
    if not root.is_dir():
        print(f"{root}: not unpacked (bench/corpus/unpack.py)", file=sys.stderr)
        return 2
    scripts = sorted(p for p in root.rglob("*") if p.suffix in (".lua", ".luau") and p.is_file())
    rel = args.file or DEFAULT_FILE.get(args.repo)
    if rel is None:  # the script nearest 400 lines
        rel = min(scripts, key=lambda p: abs(p.read_text(errors="replace").count("\n") - 400)).relative_to(root).as_posix()
    path = root / rel
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    at = len(lines) // 2
    uri = path.as_uri()
    load0 = os.getloadavg()
    print(f"{args.repo}: {len(scripts)} scripts; editing {rel} ({len(lines)} lines) at line {at + 1}; "
          f"load average {load0[0]:.2f}")
    log = Path(tempfile.mkdtemp(prefix="luaguard-lsp-speed-")) / "server.log"
    with RawLspClient(root, log, command=server_command(), settings={"debounceMs": 0}) as client:
        t0 = time.perf_counter()
        client.initialize(root, {"debounceMs": 0}, timeout=300)
        init_s = time.perf_counter() - t0
        sent = client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "luau", "version": 1,
                                                                       "text": text}})
        first = client.wait_for(lambda: client.publications(uri), 300, "the first diagnostics")
        first_s = first[0].at - sent
        first_n = len(first[0].message["params"]["diagnostics"])
        # a new line to type on
        version = 2
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
            {"range": {"start": {"line": at, "character": 0}, "end": {"line": at, "character": 0}}, "text": "\n"}]})
        client.wait_for(lambda: [p for p in client.publications(uri) if p.message["params"].get("version") == 2], 60, "v2")
        latencies: list[float] = []
        typed = TYPED * (1 + args.keystrokes // (2 * len(TYPED)))
        n_type = args.keystrokes // 2
        steps = [("type", i) for i in range(n_type)] + [("delete", i) for i in range(n_type - 1, -1, -1)]
        for kind, i in steps:
            version += 1
            if kind == "type":
                change = {"range": {"start": {"line": at, "character": i}, "end": {"line": at, "character": i}},
                          "text": typed[i]}
            else:
                change = {"range": {"start": {"line": at, "character": i}, "end": {"line": at, "character": i + 1}},
                          "text": ""}
            v = version
            sent = client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                                            "contentChanges": [change]})
            pub = client.wait_for(lambda: [p for p in client.publications(uri)
                                           if p.message["params"].get("version") == v], 60, f"version {v}")
            latencies.append(pub[0].at - sent)
            time.sleep(0.03)  # (a fast typist: ~30 characters a second)
        rss = proc_status(client.proc.pid, "VmRSS")
        peak = proc_status(client.proc.pid, "VmHWM")
        client.shutdown()
    ms = [x * 1000 for x in latencies]
    load1 = os.getloadavg()
    result = {"repo": args.repo, "scripts": len(scripts), "file": rel, "lines": len(lines), "init_s": init_s,
              "first_diagnostics_s": first_s, "first_findings": first_n, "keystrokes": len(ms),
              "p50_ms": pct(ms, 50), "p95_ms": pct(ms, 95), "max_ms": max(ms), "mean_ms": statistics.mean(ms),
              "latencies_ms": [round(x, 2) for x in ms],
              "rss_mib": (rss or 0) / 1024, "peak_rss_mib": (peak or 0) / 1024, "load_before": load0,
              "load_after": load1}
    print(f"initialize + index {init_s:.2f} s; first diagnostics {first_s * 1000:.0f} ms after didOpen "
          f"({first_n} findings)")
    print(f"keystroke -> diagnostics ({len(ms)} didChange, debounce 0): p50 {result['p50_ms']:.1f} ms, "
          f"p95 {result['p95_ms']:.1f} ms, max {result['max_ms']:.1f} ms")
    print(f"server RSS {result['rss_mib']:.0f} MiB, peak {result['peak_rss_mib']:.0f} MiB; "
          f"load average after {load1[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
