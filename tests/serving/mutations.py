"""The serving tier's mutation pass: does each check fail when the feature it checks is
absent?  Each mutation removes one feature from a copy of ``server/`` (a textual edit of the
source; a mutation whose text no longer matches is reported, not skipped silently), the tier
(``check_vllm.py``) runs against that copy (``PYTHONPATH`` comes before the editable install,
and vLLM's engine and server processes inherit it), and the checks that failed are listed.

    tests/serving/mutations.py [--only NAME,...] [--sections llm,rest,v2] [--out FILE]

Run it inside the serving venv (``tests/serving/run.sh`` builds it), under the machine's heavy
lock: each mutation is one whole tier run.  ``--baseline`` also runs the unmutated tree first.
Prints a table (mutation -> failed checks) and writes it as JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: name -> (what is removed, [(file under server/luaguard, old text, new text)])
MUTATIONS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "mask_off": ("the processor's mask (apply returns the logits untouched)", [
        ("serving/vllm.py", "        if not self.rows or self.duplicate or self.v2:\n            return logits\n        try:",
         "        if True:\n            return logits\n        try:")]),
    "scripts_dropped": ("the file's scripts in the served guard (script does not resolve)", [
        ("serving/vllm.py", "return guard, guard.start(text, scripts=list(contract.scripts))",
         "return guard, guard.start(text, scripts=[])")]),
    "paths_from_cwd": ("root-relative resolution (luaguard_file read against the working directory)", [
        ("engine.py", "    full = p if p.is_absolute() else root / p", "    full = p if p.is_absolute() else Path.cwd() / p")]),
    "reload_off": ("the watcher thread (no reload after start-up)", [
        ("serving/registry.py", "        if self._watcher is not None or not self.projects:",
         "        if True:")]),
    "warn_every_pass": ("one warning per change (a failed reload retried and logged on every pass)", [
        ("serving/registry.py", "            if self._tried and signature == self._signature:",
         "            if self._tried and signature == self._signature and self._error is None:")]),
    "trim_off": ("prompt trimming (the whole luaguard_prompt reaches the engine and is primed)", [
        ("serving/registry.py", "    limit = max(1, tokens) * CHARS_PER_TOKEN\n    if len(text) <= limit:",
         "    limit = max(1, tokens) * CHARS_PER_TOKEN\n    if True:"),
        ("serving/registry.py", "    text = bound_prompt(text, tokens)\n", "    return text\n")]),
    "no_index_accepted": ("refusing a root with no project file (open_engine(require_index=True) passes)", [
        ("engine.py", '    if require_index and (project is None or project.kind == "none"):', "    if False:")]),
    "keys_exact": ("key validation by similarity and case (only exact lower-case 'luaguard*' keys checked)", [
        ("serving/registry.py", "        near = _near_key(k)", "        near = None"),
        ("serving/registry.py", '        if k.lower().startswith("luaguard"):', '        if k.startswith("luaguard"):')]),
    "types_as_missing": ("type errors named as such (a non-string project is 'required')", [
        ("serving/registry.py", '        raise XArgsError(f"{key!r} must be a string ({what}), got {_kind(v)}: {v!r}"[:300])',
         "        return None")]),
    "v2_silent": ("the start-up failure under Model Runner V2 when luaguard was asked for", [
        ("serving/vllm.py", "        if named or configured:\n            raise RuntimeError(message)",
         "        if False:\n            raise RuntimeError(message)")]),
}


def mutated_tree(name: str, dest: Path) -> Path:
    """A copy of ``server/`` with mutation ``name`` applied; raises ``SystemExit`` when its
    text is not found (the source moved on: update the mutation)."""
    src = dest / "server"
    shutil.copytree(REPO / "server", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for rel, old, new in MUTATIONS[name][1]:
        path = src / "luaguard" / rel
        text = path.read_text()
        if text.count(old) != 1:
            raise SystemExit(f"mutation {name}: {rel}: the text to replace occurs {text.count(old)} times")
        path.write_text(text.replace(old, new))
    return src


def run_tier(pythonpath: Path | None, sections: str, log: Path) -> tuple[list[str], list[str], float]:
    """(failed checks, passed checks, seconds) of one tier run."""
    env = dict(os.environ, SERVING_SECTIONS=sections, VLLM_USE_V2_MODEL_RUNNER="0")
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    t0 = time.time()
    with open(log, "w") as out:
        subprocess.run([sys.executable, str(REPO / "tests" / "serving" / "check_vllm.py")], env=env, stdout=out,
                       stderr=subprocess.STDOUT, timeout=3600)
    # (a check's line may follow a progress bar's last redraw on the same line)
    found = [m.groups() for m in re.finditer(r"(?:^|\]|\r)(PASS|FAIL) ([^:\n]*)", log.read_text(errors="replace"),
                                             re.M)]
    failed = [name for what, name in found if what == "FAIL"]
    passed = [name for what, name in found if what == "PASS"]
    return failed, passed, time.time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated mutation names (default: all)")
    ap.add_argument("--sections", default="llm,rest,v2")
    ap.add_argument("--baseline", action="store_true", help="run the unmutated tree first")
    ap.add_argument("--out", default="", help="write the table as JSON here")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(MUTATIONS)
    work = Path(tempfile.mkdtemp(prefix="luaguard-mutations-"))
    table = {}
    runs = (["baseline"] if args.baseline else []) + names
    for name in runs:
        tree = None if name == "baseline" else mutated_tree(name, work / name)
        failed, passed, secs = run_tier(tree, args.sections, work / f"{name}.log")
        table[name] = {"removed": MUTATIONS[name][0] if name in MUTATIONS else "nothing", "failed": failed,
                       "passed": len(passed), "seconds": round(secs), "log": str(work / f"{name}.log")}
        print(f"{name}: {len(failed)} failed, {len(passed)} passed ({secs:.0f} s): {'; '.join(failed) or '-'}",
              flush=True)
        if args.out:
            Path(args.out).write_text(json.dumps(table, indent=2))
    caught = [n for n in names if table[n]["failed"]]
    print(f"{len(caught)}/{len(names)} mutations caught")
    return 0 if len(caught) == len(names) else 1


if __name__ == "__main__":
    raise SystemExit(main())
