"""Agent inventions in real games: does what an AI agent invents reach the model through the
Claude Code hooks, while unchanged rewrites of real files stay silent?

For each game of the corpus (``bench/corpus/manifest.json`` entries of kind ``game``,
``nevermore`` and ``ai_written``; ``--kinds``), unpacked by ``bench/corpus/unpack.py``,
``--per-kind`` agent-style ``Write``s of a server script are made: the script's whole text
with one statement added (before the module's final top-level ``return``, else at the end),
sent to ``luaguard hook`` as Claude Code sends them - a ``PreToolUse`` payload; when it is
not denied the file is written (in a copy of the game, never the cache) and a
``PostToolUse`` payload follows.  The invention *reaches the model* when the PreToolUse hook
denies (exit 2, reason on stderr) or the PostToolUse hook answers with feedback (exit 2,
text on stderr: Claude Code feeds both to the model).  *Named*: the text that reached the
model names the invented or misspelt name.

Kinds (``KINDS``), each statement built from the game's own names with a seeded RNG by this
bench's own labeller (``bench/corpus_labels.py``: the game's Rojo project files and text,
not luaguard's resolver); an invented name occurs nowhere in the repository's text (nothing
creates, maps or reads it), a misspelt one is a letter dropped, two swapped or one doubled
and occurs nowhere either:

* ``new_child_open_service``: a new folder and a remote under ReplicatedStorage,
  ``game:GetService("ReplicatedStorage").Remotes.Foo.OnServerEvent:Connect(...)`` (the folder
  a usual remotes name the game does not have, else two of its words);
* ``misspelt_sibling``: ``WaitForChild`` of a misspelt sibling - a child of the script's own
  parent folder (``script.Parent:WaitForChild("Confgi")``), else a child of a service the
  project maps or its code reads (``game:GetService("ReplicatedStorage"):WaitForChild("Sahred")``);
* ``invented_remote``: a RemoteEvent the game does not have, in the folder its remotes live in
  (a child of ReplicatedStorage named like ``Remotes``/``Events``/``Network``, else
  ReplicatedStorage itself): ``...:WaitForChild("CoinReward").OnServerEvent:Connect(...)``;
* ``invented_template``: a template the game does not have, cloned from ServerStorage (in a
  folder the project puts there, if any): ``game:GetService("ServerStorage").Assets.SpikeModel:Clone()``;
* ``service_typo``: ``game:GetService("RepilcatedStorage")``, a misspelling of a service the
  game uses.

Server scripts: files a Rojo project of the game maps under ``ServerScriptService`` (Scripts
and ModuleScripts; not those with ``client`` in their path - Nevermore keeps client modules
there too - nor stories and specs) or ``Script``s under ``Workspace``, that the Luau compiler accepts
(``--compiler``) and that hold no earlier ``-- luaguard:`` suppression.  Each written text is
checked with the compiler too (a case the compiler rejects is dropped and counted).

**Control**: each server script used, rewritten unchanged (``Write`` of its own text,
PreToolUse then PostToolUse): denials and Post feedback must both be 0.

The hook is :func:`luaguard.agents.hook.run_hook`, in process (what ``luaguard hook``
runs, with a new engine per payload as each hook process builds one; ``--timeout`` instead of
the default 5 s so a slow host does not turn a verdict into a fail-open pass);
``--processes N`` also sends the first N cases through ``python -m luaguard hook`` processes
and counts disagreements (should be 0).

Printed: per kind, cases, Pre denials, Post feedback, reached, named; per game; the control;
misses listed.  Raw cases: ``bench/out/agent_inventions.jsonl``.  Usage::

    python bench/corpus/unpack.py
    python bench/agent_inventions.py --compiler PATH/TO/luau-compile [--per-kind 6] [--seed 7] \\
        [--kinds game,nevermore,ai_written] [--repos A,B] [--processes 10]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "corpus"))

from corpus_labels import Labels, api_member_names, api_service_names, read_labels  # noqa: E402
from unpack import default_cache, load_manifest, slug  # noqa: E402

OUT = HERE / "out"
KINDS = ("new_child_open_service", "misspelt_sibling", "invented_remote", "invented_template", "service_typo")
FOLDER_NAMES = ("Remotes", "Events", "RemoteEvents", "Network", "Net", "Signals", "Comms")
#: folder names remotes are kept in (a name like ``SpeedEvent`` is a remote itself, not a folder)
REMOTE_CONTAINER = re.compile(r"^(?:\w*remotes|\w*events|network(?:ing)?|net|signals|comms?|packets|bridges)$", re.I)
EXTRA_WORDS = ("Reward", "Coin", "Round", "Shop", "Pet", "Quest", "Trade", "Spawn", "Upgrade", "Daily", "Boss", "Level")


@dataclass
class Case:
    game: str
    kind: str
    file: str  # relative to the game's root
    statement: str
    name: str  # the invented or misspelt name
    original: str | None = None  # the name it misspells (typo kinds)
    pre_deny: bool = False
    post_feedback: bool = False
    named: bool = False
    said: str = ""
    process_agrees: bool | None = None


# -- names -----------------------------------------------------------------------------------
def _typo(name: str, rng: random.Random) -> str | None:
    if len(name) < 4:
        return None
    kind = rng.choice(("drop", "swap", "double"))
    i = rng.randrange(1, len(name) - 1)
    if kind == "drop":
        out = name[:i] + name[i + 1:]
    elif kind == "swap":
        out = name[:i] + name[i + 1] + name[i] + name[i + 2:]
    else:
        out = name[:i] + name[i] + name[i:]
    return out if out != name else None


def _fresh(labels: Labels, candidates, rng: random.Random) -> str | None:
    """The first candidate (in a seeded order) that occurs nowhere in the game and is no
    API member name."""
    members = api_member_names()
    cands = list(dict.fromkeys(candidates))
    rng.shuffle(cands)
    for c in cands:
        if c.isidentifier() and not labels.occurs(c) and c not in members:
            return c
    return None


def _word_pairs(labels: Labels, rng: random.Random, suffixes=("",), n: int = 40) -> list[str]:
    words = [w for w, _ in labels.words.most_common(200)] or list(EXTRA_WORDS)
    out = []
    for _ in range(n):
        a, b = rng.choice(words), rng.choice(words + list(EXTRA_WORDS))
        if a != b:
            out.append(a + b + rng.choice(suffixes))
    return out


def _misspelt(labels: Labels, name: str, siblings: set[str], rng: random.Random) -> str | None:
    for _ in range(8):
        bad = _typo(name, rng)
        if bad and bad.isidentifier() and bad not in siblings and not re.search(rf"\b{re.escape(bad)}\b",
                                                                                labels.text_lower, re.I):
            return bad
    return None


def _var(name: str) -> str:
    v = re.sub(r"\W", "", name)
    return (v[:1].lower() + v[1:]) if v else "value"


# -- building cases ----------------------------------------------------------------------------
def server_scripts(labels: Labels, compiler: str | None) -> list[tuple[Path, object]]:
    out = []
    for path, maps in sorted(labels.files.items()):
        m = maps[0]
        if not (m.service == "ServerScriptService" or (m.service == "Workspace" and m.class_name == "Script")):
            continue
        rel = path.relative_to(labels.root).as_posix().lower()
        if "client" in rel or ".story." in rel or ".spec." in rel or any("client" in n.lower() for n in m.path):
            continue  # client modules a framework keeps under ServerScriptService, stories, tests
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "luaguard:" in text:
            continue
        if compiler and subprocess.run([compiler, "--null", str(path)], capture_output=True).returncode != 0:
            continue
        out.append((path, m))
    return out


def make_statement(kind: str, labels: Labels, mapped, rng: random.Random) -> tuple[str, str, str | None] | None:
    """``(statement, name, original)`` for one case of ``kind`` in the script ``mapped``
    (``None`` when the game has nothing to build it from)."""
    rs = 'game:GetService("ReplicatedStorage")'
    if kind == "new_child_open_service":
        folder = _fresh(labels, FOLDER_NAMES, rng) or _fresh(labels, _word_pairs(labels, rng, ("Remotes", "Events")), rng)
        name = _fresh(labels, _word_pairs(labels, rng, ("", "Event", "Remote")), rng)
        if not folder or not name:
            return None
        form = rng.randrange(2)
        stmt = (f"{rs}.{folder}.{name}.OnServerEvent:Connect(function(player) end)" if form == 0 else
                f'{rs}:WaitForChild("{folder}"):WaitForChild("{name}").OnServerEvent:Connect(function(player) end)')
        return stmt, folder, None
    if kind == "misspelt_sibling":
        parent = mapped.path[:-1]  # script.Parent (an init script is its folder: the same rule)
        members = api_member_names()
        sibs = {s for s in labels.known_children(parent) if s != mapped.path[-1]} if parent else set()
        sibs = {s for s in sibs if s.isidentifier() and len(s) >= 4 and s not in members}
        if sibs and rng.random() < 0.6:
            orig = rng.choice(sorted(sibs))
            bad = _misspelt(labels, orig, labels.known_children(parent), rng)
            if bad:
                return f'local {_var(orig)} = script.Parent:WaitForChild("{bad}")', bad, orig
        pairs = sorted({(s, c) for s in ("ReplicatedStorage", "ServerStorage", "ServerScriptService", "Workspace")
                        for c in labels.known_children((s,)) if c.isidentifier() and len(c) >= 4})
        if not pairs:
            return None
        service, orig = rng.choice(pairs)
        bad = _misspelt(labels, orig, labels.known_children((service,)), rng)
        if not bad:
            return None
        return f'local {_var(orig)} = game:GetService("{service}"):WaitForChild("{bad}")', bad, orig
    if kind == "invented_remote":
        containers = sorted(c for c in labels.known_children(("ReplicatedStorage",)) if REMOTE_CONTAINER.search(c)
                            and c.isidentifier())
        where = f'{rs}:WaitForChild("{rng.choice(containers)}")' if containers else rs
        name = _fresh(labels, _word_pairs(labels, rng, ("", "Event", "Remote", "Request")), rng)
        if not name:
            return None
        form = rng.randrange(2)
        stmt = (f'{where}:WaitForChild("{name}").OnServerEvent:Connect(function(player) end)' if form == 0 else
                f"{where}.{name}:FireAllClients()")
        return stmt, name, None
    if kind == "invented_template":
        folders = sorted(c for c in labels.known_children(("ServerStorage",)) if c.isidentifier())
        where = 'game:GetService("ServerStorage")' + (f".{rng.choice(folders)}" if folders else "")
        name = _fresh(labels, _word_pairs(labels, rng, ("", "Template", "Model", "Prefab")), rng)
        if not name:
            return None
        return f"local {_var(name)} = {where}.{name}:Clone()", name, None
    if kind == "service_typo":
        services = [s for s, _ in labels.services.most_common() if s in api_service_names() and len(s) >= 5] or [
            "ReplicatedStorage", "Players"]
        orig = rng.choice(services)
        for _ in range(8):
            bad = _typo(orig, rng)
            if bad and bad not in api_service_names() and not labels.occurs(bad):
                return f'local {_var(orig)} = game:GetService("{bad}")', bad, orig
        return None
    raise ValueError(kind)


def insert_statement(text: str, stmt: str) -> str:
    """``stmt`` as a line before the final top-level ``return`` (a ModuleScript), else at the end."""
    lines = text.splitlines(keepends=True)
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if line.startswith("return") and (len(line.rstrip()) == 6 or not (line[6].isalnum() or line[6] == "_")):
            return "".join(lines[:i]) + stmt + "\n\n" + "".join(lines[i:])
    return text + ("" if not text or text.endswith("\n") else "\n") + "\n" + stmt + "\n"


def compiles(compiler: str | None, text: str, workdir: Path) -> bool:
    if not compiler:
        return True
    p = workdir / "probe.luau"
    p.write_text(text, encoding="utf-8")
    return subprocess.run([compiler, "--null", str(p)], capture_output=True).returncode == 0


# -- hook ------------------------------------------------------------------------------------
def payload(event: str, path: Path, content: str, cwd: Path) -> bytes:
    body = {"session_id": "bench-inventions", "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": event, "tool_name": "Write",
            "tool_input": {"file_path": str(path), "content": content}, "tool_use_id": "toolu_bench"}
    if event == "PostToolUse":
        body["tool_response"] = {"filePath": str(path), "success": True}
    return json.dumps(body).encode()


def write_through_hook(path: Path, old: str, new: str, cwd: Path, opts, process: bool = False) -> tuple[bool, bool, str]:
    """PreToolUse; unless denied, the write and PostToolUse.  ``(denied, post feedback, the text
    that reached the model)``.  The file holds ``old`` again afterwards."""
    from luaguard.agents.hook import run_hook

    def hook(data: bytes) -> tuple[int, str]:
        if process:
            proc = subprocess.run([sys.executable, "-m", "luaguard", "hook", "--timeout", str(opts.timeout)], input=data,
                                  capture_output=True, cwd=cwd, timeout=opts.timeout + 60)
            return proc.returncode, proc.stderr.decode("utf-8", "replace")
        resp = run_hook(data, opts)
        return resp.exit_code, resp.stderr

    try:
        code, err = hook(payload("PreToolUse", path, new, cwd))
        if code == 2:
            return True, False, err
        path.write_text(new, encoding="utf-8")
        code, err = hook(payload("PostToolUse", path, new, cwd))
        return False, code == 2, err if code == 2 else ""
    finally:
        path.write_text(old, encoding="utf-8")


# -- main --------------------------------------------------------------------------------------
def _pct(a: int, b: int) -> str:
    return f"{a}/{b} = {100.0 * a / b:.1f}%" if b else "0/0"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", help="luau-compile (server scripts and written texts it rejects are left out)")
    ap.add_argument("--cache", type=Path, default=None, help="the unpacked corpus (default: as unpack.py)")
    ap.add_argument("--kinds", default="game,nevermore,ai_written", help="manifest kinds that are games")
    ap.add_argument("--repos", default="", help="comma-separated owner/name (default: every game)")
    ap.add_argument("--per-kind", type=int, default=6, help="cases per kind of invention per game")
    ap.add_argument("--controls", type=int, default=0, help="unchanged rewrites per game beyond the scripts used (0: those only)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=120.0, help="the hook's time limit per payload (seconds)")
    ap.add_argument("--processes", type=int, default=0, help="also send the first N cases through hook processes")
    ap.add_argument("--show", type=int, default=40, help="misses to list")
    args = ap.parse_args(argv)
    from luaguard.agents.hook import HookOptions

    cache = args.cache or default_cache()
    kinds = {k.strip() for k in args.kinds.split(",") if k.strip()}
    repos = {r.strip() for r in args.repos.split(",") if r.strip()}
    games = [e for e in load_manifest() if e.get("kind") in kinds and (not repos or e["repo"] in repos or slug(e["repo"]) in repos)]
    cases: list[Case] = []
    controls: Counter = Counter()
    control_misses: list[str] = []
    skipped: Counter = Counter()
    t0 = time.perf_counter()
    processes_left = args.processes
    with tempfile.TemporaryDirectory(prefix="luaguard-inventions-") as tmp:
        tmpdir = Path(tmp)
        opts = HookOptions(agent="claude", timeout=args.timeout, stash_dir=tmpdir / "stash")
        for entry in games:
            src = cache / slug(entry["repo"])
            if not src.is_dir():
                print(f"  (not in the cache: {entry['repo']}; run bench/corpus/unpack.py)")
                continue
            work = tmpdir / slug(entry["repo"])
            shutil.copytree(src, work, symlinks=True)
            labels = read_labels(work)
            scripts = server_scripts(labels, args.compiler)
            rng = random.Random(f"{args.seed}:{entry['repo']}")
            if not scripts:
                print(f"  {entry['repo']}: no server script mapped by its project files; skipped")
                skipped["games without server scripts"] += 1
                shutil.rmtree(work, ignore_errors=True)
                continue
            used: dict[Path, str] = {}
            for kind in KINDS:
                made = 0
                for _attempt in range(args.per_kind * 6):
                    if made >= args.per_kind:
                        break
                    path, mapped = rng.choice(scripts)
                    built = make_statement(kind, labels, mapped, rng)
                    if built is None:
                        continue
                    stmt, name, orig = built
                    old = path.read_text(encoding="utf-8")
                    new = insert_statement(old, stmt)
                    if not compiles(args.compiler, new, tmpdir):
                        skipped["written text the compiler rejects"] += 1
                        continue
                    made += 1
                    used[path] = old
                    rel = path.relative_to(work).as_posix()
                    case = Case(entry["repo"], kind, rel, stmt, name, orig)
                    process = processes_left > 0
                    case.pre_deny, case.post_feedback, case.said = write_through_hook(path, old, new, work, opts)
                    case.named = bool(case.said) and name in case.said
                    if process:
                        processes_left -= 1
                        p = write_through_hook(path, old, new, work, opts, process=True)
                        case.process_agrees = (p[0], p[1]) == (case.pre_deny, case.post_feedback)
                    cases.append(case)
                if made < args.per_kind:
                    skipped[f"{kind}: fewer cases than asked (nothing to build from)"] += args.per_kind - made
            extra = [p for p, _m in scripts if p not in used]
            rng.shuffle(extra)
            for p in extra[: args.controls]:
                used[p] = p.read_text(encoding="utf-8")
            for path, old in used.items():
                denied, feedback, said = write_through_hook(path, old, old, work, opts)
                controls["sent"] += 1
                controls["denied"] += denied
                controls["feedback"] += feedback
                if (denied or feedback) and len(control_misses) < args.show:
                    control_misses.append(f"{entry['repo']}/{path.relative_to(work).as_posix()}: "
                                          f"{'denied' if denied else 'Post feedback'}: {said.strip()[:300]}")
            shutil.rmtree(work, ignore_errors=True)
    took = time.perf_counter() - t0
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "agent_inventions.jsonl", "w", encoding="utf-8") as fh:
        for c in cases:
            fh.write(json.dumps(asdict(c), ensure_ascii=False) + "\n")
    ngames = len({c.game for c in cases})
    print(f"agent inventions through the Claude Code hooks: {len(cases)} cases in {ngames} games "
          f"(per kind <= {args.per_kind} per game, seed {args.seed}), {took:.0f} s")
    print(f"{'kind':<24}{'n':>5}{'Pre deny':>16}{'Post feedback':>18}{'reached':>18}{'named':>18}")
    tot = Counter()
    for kind in KINDS:
        cs = [c for c in cases if c.kind == kind]
        c = Counter(n=len(cs), deny=sum(x.pre_deny for x in cs), post=sum(x.post_feedback for x in cs),
                    reached=sum(x.pre_deny or x.post_feedback for x in cs), named=sum(x.named for x in cs))
        tot.update(c)
        print(f"{kind:<24}{c['n']:>5}{_pct(c['deny'], c['n']):>16}{_pct(c['post'], c['n']):>18}"
              f"{_pct(c['reached'], c['n']):>18}{_pct(c['named'], c['n']):>18}")
    print(f"{'all':<24}{tot['n']:>5}{_pct(tot['deny'], tot['n']):>16}{_pct(tot['post'], tot['n']):>18}"
          f"{_pct(tot['reached'], tot['n']):>18}{_pct(tot['named'], tot['n']):>18}")
    print("per game (reached / cases, by kind in the order above):")
    per = defaultdict(lambda: defaultdict(Counter))
    for c in cases:
        per[c.game][c.kind]["n"] += 1
        per[c.game][c.kind]["r"] += c.pre_deny or c.post_feedback
    for game, ks in per.items():
        print(f"  {game:<46}" + "  ".join(f"{ks[k]['r']}/{ks[k]['n']}" for k in KINDS))
    print(f"control, unchanged whole-file rewrites of the scripts used: {controls['sent']} sent, "
          f"{controls['denied']} denied, {controls['feedback']} with Post feedback (target 0 and 0)")
    for m in control_misses:
        print("  control miss: " + m)
    if args.processes:
        checked = [c for c in cases if c.process_agrees is not None]
        print(f"hook processes (python -m luaguard hook) agree with the in-process hook on {sum(c.process_agrees for c in checked)}"
              f" of {len(checked)} cases")
    for why, n in skipped.items():
        print(f"  skipped: {n} {why}")
    misses = [c for c in cases if not (c.pre_deny or c.post_feedback)]
    print(f"misses (nothing reached the model): {len(misses)}; the first {min(len(misses), args.show)}:")
    for c in misses[: args.show]:
        print(f"  {c.kind}: {c.game}/{c.file}: {c.statement}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
