"""luaguard on real, public, modern Luau: false errors of the linter and refusals of the guard.

The corpus is ``bench/corpus/manifest.json`` (public repositories at fixed commits),
unpacked by ``bench/corpus/unpack.py`` into a cache outside the repository; nothing of it
is committed.  The syntax oracle is the Luau reference compiler, ``luau-compile`` built
locally from a fetched luau-lang/luau (``--compiler``; not committed): a file is *valid*
when ``luau-compile --null FILE`` accepts it.  Each file is linted as ``luaguard check``
run at its repository's root would lint it: the project root found from there
(``luaguard.toml``, ``*.project.json`` or ``sourcemap.json``) and its settings, every
project file under it (:mod:`luaguard.projects`), the file judged under the projects that
map it (outside all of them: the root's own project).  A folder with its own
``luaguard.toml`` (the manifest's ``luaguard_toml``: globals a test harness defines for the
code in it) is checked as ``luaguard check`` run there would: as its own root.

Printed first, (p): how many valid files each number of projects judges.

Printed, for the valid files:

* (a) files with a false syntax finding (``syntax_error``, ``unbalanced_bracket``,
  ``unclosed_block``);
* (b) files with any error-severity finding in editor mode, and those findings by rule, by
  corpus kind (the manifest's ``kind``: libraries, ``game``, ``nevermore``, ``ai_written`` ...);
  every such file is listed with its first error (``--show``), and every error of every file
  goes to ``bench/out/real_code_errors.txt``, to be judged by hand;
* (c) files with a patch-mode error finding other than a TODO/FIXME comment, by rule;
* (d) with ``--guard``: the guard replay - each valid file fed token by token through the
  guard of its own project (``script`` bound to the file's instances), primed with its first
  line and again from a random line, for each tokenizer of ``--tokenizers`` (``default``:
  the shipped model's; ``byte_level`` and ``metaspace``: the byte-level BPE and the
  SentencePiece-style tokenizers the tests train on the samples; ``qwen2.5``, ``qwen3.6``,
  ``deepseek``: the real production tokenizers of tests/real_tokenizers.py, at their models'
  logits widths).  The guard is the one every front end builds
  (:func:`~luaguard.guard.matcher.project_guard` of the engine's ``guard_contract``).  A refusal is a *miss*
  when the patch-mode linter reports no error on the lines of the refused token; after a
  refusal the replay goes on from the next line.  Every ``--mask-every``-th token is also
  checked against the guard's mask for its position (what a decoding loop applies): a mask
  that bans the file's own token, or allows one the matcher refuses, is a miss too.  Files
  with a miss are counted and the first few listed;
* (e) with ``--mutants N``: N mutated copies of valid files (half with one ``)``/``]``/
  ``}``/``end``/``until`` deleted, half with one token deleted, duplicated or swapped,
  seeded): agreement with the compiler on "has a syntax error" and on the first error's
  line;
* (f) with ``--typo-mutants N``: N copies of valid files with one name misspelt (a letter
  dropped, two swapped, one doubled, the first letter's case flipped), at sites where the
  original name is a real one luaguard resolves: a member of a value of known class
  (``part.Anchored``, ``remote:FireServer``), a service (``GetService("Players")``), a
  child of a project node after ``script``/``game`` chains (``script.Parent.Config``,
  ``:WaitForChild("Remotes")``).  A mutant is *flagged* when the mutated file has a new
  ``unknown_member`` / ``unknown_service`` / ``unknown_instance`` /
  ``likely_unknown_instance`` / ``unverified_instance`` finding on the misspelt name (``--typo-any-rule``: a new finding
  of any rule covering it); printed per site kind and per corpus kind, four figures:
  *flagged*; *at error*; *at error in the DataModel* - among the mutants in files a Rojo
  project file of their repository maps into a DataModel (read by the benches' own labeller,
  ``bench/corpus_labels.py``, not by luaguard: a file mapped only by ``test.project.json`` is
  in the DataModel too); *best suggestion = original* (among the flagged).  The sites are
  chosen with luaguard's resolver of the code being measured, so another branch picks other
  sites: ``--typo-save FILE`` writes the mutants (file, offsets, original and misspelt name,
  site kind) and ``--typo-load FILE`` replays exactly those (a file whose text changed is
  skipped), which gives before/after figures on one mutant set.  ``--typo-picker own`` chooses
  the sites without luaguard (:func:`own_typo_sites`: ``script.Parent.X``,
  ``WaitForChild("X")``, ``GetService("X")`` names the repository's Rojo project files map),
  so any branch picks the same ones.

Never crashes on a file: an exception inside luaguard is counted and listed as such.
Usage::

    python bench/corpus/unpack.py
    python bench/real_code.py --compiler /path/to/luau-compile [--guard] [--mutants 2000] \\
        [--typo-mutants 2000 [--typo-save F | --typo-load F]] [--tokenizers default,byte_level,metaspace] \\
        [--jobs 2] [--repos NAME,...] [--kinds KIND,...] [--limit N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "corpus"))
sys.path.insert(0, str(ROOT / "tests"))

from unpack import default_cache, load_manifest, slug  # noqa: E402

SYNTAX_RULES = {"syntax_error", "unbalanced_bracket", "unclosed_block"}
OUT = ROOT / "bench" / "out"


# -- corpus ------------------------------------------------------------------------------------
def corpus_files(cache: Path, repos: set[str] | None, kinds: set[str] | None = None) -> list[tuple[str, Path]]:
    """``(repo, path)`` of every ``.lua``/``.luau`` file of the unpacked corpus (of the
    manifest's ``kinds``, ``library`` for entries without one, when given)."""
    out = []
    for entry in load_manifest():
        if repos and entry["repo"] not in repos and slug(entry["repo"]) not in repos:
            continue
        if kinds and entry.get("kind", "library") not in kinds:
            continue
        base = cache / slug(entry["repo"])
        if not base.is_dir():
            print(f"missing from the cache: {entry['repo']} (run bench/corpus/unpack.py)", file=sys.stderr)
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            for name in sorted(filenames):
                if name.endswith((".lua", ".luau")):
                    out.append((entry["repo"], Path(dirpath) / name))
    return out


def repo_kinds() -> dict[str, str]:
    """``owner/name`` -> the manifest's ``kind`` (``library`` where it gives none)."""
    return {e["repo"]: e.get("kind", "library") for e in load_manifest()}


def compiler_accepts(compiler: str, paths: list[Path], cache_file: Path) -> dict[str, bool]:
    """``sha1 -> accepted`` for each file (cached across runs by content hash)."""
    try:
        known = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        known = {}
    key = f"{compiler}:{os.path.getmtime(compiler)}"
    if known.get("_compiler") != key:
        known = {"_compiler": key}
    out = {}
    for p in paths:
        h = hashlib.sha1(p.read_bytes()).hexdigest()
        if h not in known:
            proc = subprocess.run([compiler, "--null", str(p)], capture_output=True)
            known[h] = proc.returncode == 0
        out[str(p)] = known[h]
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    cache_file.write_text(json.dumps(known))
    return out


# -- per-process state ---------------------------------------------------------------------------
_PROJECTS: dict = {}
_TOKENIZERS: dict = {}
_CACHE: list[Path] = []


def set_cache(cache: str) -> None:
    """The unpacked corpus's folder (each repository is a folder in it); set in every process."""
    _CACHE[:] = [Path(cache)]


def repo_dir(path: Path) -> Path:
    """The folder of the corpus repository holding ``path``."""
    cache = _CACHE[0]
    return cache / Path(path).relative_to(cache).parts[0]


def projects_for(path: Path):
    """The :class:`~luaguard.projects.ProjectSet` ``luaguard check .`` at the root of the
    repository holding ``path`` lints with (the project root found from that folder, every
    project file under it); in a folder with its own ``luaguard.toml``, ``luaguard check .``
    run in that folder."""
    from luaguard.config import CONFIG_FILE
    from luaguard.engine import Engine
    from luaguard.projects import ProjectSet
    from luaguard.workspace import find_project_root, read_project_settings

    repo = repo_dir(path)
    start = repo
    for d in Path(path).parents:
        if d == repo or repo not in d.parents:
            break
        if (d / CONFIG_FILE).is_file():
            start = d
            break
    projects = _PROJECTS.get(start)
    if projects is None:
        root = find_project_root(start)
        projects = _PROJECTS[start] = ProjectSet(primary=Engine(root, read_project_settings(root).settings))
        projects.load_others()
    return projects


def engine_for(path: Path):
    """The engine of the first project that judges ``path`` (the root's own when it maps
    it): the one whose resolver finds typo sites and whose contract builds the guard."""
    return projects_for(path).engines_for(path)[0]


def judged_by(path: Path) -> list[str]:
    """The project files (root-relative) that judge ``path``; ``[]``: none maps it."""
    projects = projects_for(path)
    out = []
    for e in projects.engines_for(path):
        project = e.project
        if project is not None and project.project_file is not None and project.maps_path(projects.relpath(path) or ""):
            out.append(projects.relpath(project.project_file) or str(project.project_file))
    return out


def tokenizer(name: str):
    tok = _TOKENIZERS.get(name)
    if tok is None:
        if name == "default":
            from luaguard.completion.loading import _load_tokenizer, default_model_path

            tok = _load_tokenizer(default_model_path())
        elif name == "byte_level":
            from guard_support import byte_level_tokenizer

            tok = byte_level_tokenizer()
        elif name == "metaspace":
            from guard_support import metaspace_tokenizer

            tok = metaspace_tokenizer()
        else:
            from real_tokenizers import WIDTHS, real_tokenizer

            if name not in WIDTHS:
                raise SystemExit(f"unknown tokenizer {name!r} (default, byte_level, metaspace, {', '.join(WIDTHS)})")
            tok = real_tokenizer(name)
        from luaguard.guard.table_cache import token_table
        from real_tokenizers import WIDTHS

        _TOKENIZERS[name] = tok = (tok, token_table(tok, WIDTHS.get(name)))
    return tok


# -- one file ----------------------------------------------------------------------------------
def _error_lines(findings) -> set[int]:
    lines: set[int] = set()
    for f in findings:
        if f.severity.label == "error":
            lines.update(range(f.range.start.line, f.range.end.line + 1))
    return lines


def lint_file(path_str: str) -> dict:
    """Editor- and patch-mode findings of one file, summarised."""
    path = Path(path_str)
    out: dict = {"file": path_str}
    try:
        eng = projects_for(path)
        out["judges"] = judged_by(path)
        data = path.read_bytes()
        t0 = time.perf_counter()
        editor = eng.lint_bytes(data, path)
        out["seconds"] = time.perf_counter() - t0
        text = data.decode("utf-8", "replace")
        patch = eng.lint_text(text, path, mode="patch")
        out["editor"] = [(f.rule, f.severity.label, f.range.start.line + 1, f.message) for f in editor]
        out["patch"] = [(f.rule, f.severity.label, f.range.start.line + 1, f.message) for f in patch]
        out["internal"] = [m for r, _s, _l, m in out["editor"] + out["patch"] if r == "internal_error"]
    except Exception:  # noqa: BLE001 - a bench never stops on one file
        out["crash"] = traceback.format_exc()
    return out


def replay_file(args: tuple[str, list[str], int, int]) -> dict:
    """The guard replay of one valid file for each tokenizer (see the module docstring)."""
    path_str, tokenizers, seed, mask_every = args
    from guard_support import replay
    from luaguard.guard.matcher import project_guard

    path = Path(path_str)
    out: dict = {"file": path_str, "runs": {}}
    try:
        eng = engine_for(path)
        # (a file that is not valid UTF-8 is read as the linter and an editor read it: with
        # replacement characters)
        text = path.read_bytes().decode("utf-8", "replace")
        data = text.encode("utf-8")
        error_lines = _error_lines(projects_for(path).lint_text(text, path, mode="patch"))
        # the guard every front end builds: the linter's contract for this file
        contract = eng.guard_contract(path, text)
        scripts = contract.scripts
        line_starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A and i + 1 < len(data)]
        rng = random.Random(f"{seed}:{path_str}")
        primes = {"first_line": line_starts[1] if len(line_starts) > 1 else len(data),
                  "random_line": rng.choice(line_starts)}
        for name in tokenizers:
            tok, table = tokenizer(name)
            guard = project_guard(table, contract)
            for how, start in primes.items():
                misses, refusals, tokens, masks, note = replay(guard, tok, table, data, start, scripts=scripts,
                                                               error_lines=error_lines, mask_every=mask_every)
                out["runs"][f"{name}/{how}"] = {"misses": misses, "refusals": refusals, "tokens": tokens,
                                                "masks": masks, "note": note}
    except Exception:  # noqa: BLE001
        out["crash"] = traceback.format_exc()
    return out


# -- mutants -------------------------------------------------------------------------------------
def mutants(valid: list[Path], compiler: str, n: int, seed: int) -> dict:
    from luaguard.engine import Engine
    from luaguard.luau.mutate import mutate
    from syntax_oracle import compiler_verdict, luaguard_verdict

    engine = Engine()
    rng = random.Random(seed)
    workdir = tempfile.mkdtemp(prefix="luaguard-real-code-")
    agree_has = agree_line = both = total = 0
    shown = []
    texts: dict[Path, str] = {}
    while total < n and valid:
        path = rng.choice(valid)
        text = texts.get(path)
        if text is None:
            text = texts[path] = path.read_bytes().decode("utf-8", "replace")
        kinds = ("delete_closer",) if total % 2 == 0 else ("delete", "duplicate", "swap")
        m = mutate(text, rng, kinds)
        if m is None:
            continue
        total += 1
        c_has, c_line, c_msg = compiler_verdict(compiler, m.text, workdir)
        l_has, l_line, l_msg = luaguard_verdict(engine, m.text)
        ok_has = c_has == l_has
        agree_has += ok_has
        if c_has and l_has:
            both += 1
            agree_line += c_line == l_line
        if (not ok_has or (c_has and l_has and c_line != l_line)) and len(shown) < 12:
            shown.append(f"{path.name} {m.kind} {m.token!r}@{m.offset}: luau={c_has}:{c_line} {c_msg[:60]!r} | "
                         f"luaguard={l_has}:{l_line} {l_msg[:60]!r}")
    return {"total": total, "agree_has": agree_has, "both": both, "agree_line": agree_line, "shown": shown}


# -- typo mutants ---------------------------------------------------------------------------------
TYPO_RULES = {"unknown_member", "unknown_service", "unknown_instance", "likely_unknown_instance", "unverified_instance"}
_CHILD_CALLS = ("WaitForChild", "FindFirstChild")


def typo_sites(path: Path, text: str) -> tuple[bool, list[tuple[str, int, int, str, frozenset]]]:
    """Whether the file is in its project's DataModel, and ``(kind, start, end, name,
    taken)`` of the names in ``text`` a typo can be made in: the name's offsets (inside the
    quotes for a string argument), its site kind (``member``, ``service``,
    ``script_path``, ``child_call``, ``path``) and the names that are valid there (a
    mutant that spells one of them is no typo: ``getService`` is a deprecated alias)."""
    try:
        from luaguard.checks.base import resolver_for
    except ImportError as exc:  # another branch's code: replay a saved set instead
        raise ImportError(f"choosing typo sites needs luaguard.checks.base.resolver_for ({exc}); replay a saved set with "
                          f"--typo-load FILE (written by --typo-save FILE on the code that has it)") from exc
    from luaguard.luau import ast as A

    eng = engine_for(path)
    ctx = eng.make_context(text, path)
    resolver = resolver_for(ctx)
    if resolver is None or resolver.api is None:
        return ctx.in_datamodel, []
    api = resolver.api
    out = []

    def taken(cls, nodes=()) -> frozenset:
        names = set(api.members(cls)) if cls else set()
        for n in nodes:
            names.update(c.name for c in n.all_children())
        return frozenset(names)

    def root_is_script(expr) -> bool:
        while type(expr) in (A.ExprIndexName, A.ExprCall, A.ExprIndexExpr):
            expr = expr.func.obj if type(expr) is A.ExprCall and expr.is_method else (
                expr.func if type(expr) is A.ExprCall else expr.obj)
        return type(expr) is A.ExprGlobal and expr.name == "script"

    for node in ctx.ast.lookups:
        if type(node) is A.ExprIndexName and node.op == ".":
            base = resolver.value(node.obj)
            name = node.name
            if not name.isidentifier() or len(name) < 3:
                continue
            if base.nodes:
                member = api.member(base.class_name, name) if base.class_name else None
                if member is not None:
                    if member.usable(True) and not member.deprecated and name not in ("Parent",):
                        out.append(("member", node.name_start, node.name_end, name, taken(base.class_name, base.nodes)))
                elif all(n.child(name) is not None for n in base.nodes):
                    kind = "script_path" if root_is_script(node.obj) else "path"
                    out.append((kind, node.name_start, node.name_end, name, taken(base.class_name, base.nodes)))
            elif base.class_name is not None and not base.bound:
                member = api.member(base.class_name, name)
                if member is not None and member.usable(True) and not member.deprecated:
                    out.append(("member", node.name_start, node.name_end, name, taken(base.class_name)))
        elif type(node) is A.ExprCall and node.is_method:
            base = resolver.value(node.func.obj)
            method = node.method
            if base.class_name is not None and len(method) >= 3:
                member = api.member(base.class_name, method)
                if member is not None and member.usable(True) and not member.deprecated:
                    out.append(("member", node.func.name_start, node.func.name_end, method,
                                taken(base.class_name, base.nodes)))
            arg = node.args[0] if node.args else None
            if type(arg) is not A.ExprString or arg.value is None or len(arg.value) < 3 or arg.quote not in "\"'":
                continue
            if method == "GetService" and api.is_service(arg.value) and base.class_name == "DataModel":
                out.append(("service", arg.start + 1, arg.end - 1, arg.value, frozenset(api.services)))
            elif method in _CHILD_CALLS and base.nodes and len(node.args) == 1 and all(
                    n.child(arg.value) is not None for n in base.nodes):
                out.append(("child_call", arg.start + 1, arg.end - 1, arg.value, taken(None, base.nodes)))
    return ctx.in_datamodel, out


def own_typo_sites(path: Path, text: str, labels) -> list[tuple[str, int, int, str, frozenset]]:
    """The same ``(kind, start, end, name, taken)`` as :func:`typo_sites`, chosen without
    luaguard's resolver (``--typo-picker own``): the names a script reads through
    ``script.Parent.X`` / ``script.Parent:WaitForChild("X")`` (``own_script_parent``),
    ``script.X`` / ``script:WaitForChild("X")`` (``own_script_child``),
    ``GetService("X")`` (``own_service``: a service of Roblox's API dump) and
    ``game:GetService("S")``/``game.S``/a local bound to ``GetService("S")`` followed by
    ``.X`` or ``:WaitForChild("X")`` (``own_service_child``), where ``X`` is a child that the
    repository's Rojo project files map there (``bench/corpus_labels.py``).  Tokens come from
    luaguard's lexer (comments and strings are not sites); ``taken``: the parent's mapped
    children and every member name of the API dump (a typo that spells one is skipped)."""
    from corpus_labels import api_member_names, api_service_names

    from luaguard.luau import lexer as L

    maps = labels.mapped(path)
    if not maps:
        return []
    me = maps[0].path
    members = api_member_names()
    toks = L.tokenize(text).tokens
    toks = toks + [toks[-1]] * 8 if toks else []
    aliases = {}
    for m in re.finditer(r"""\blocal\s+([A-Za-z_]\w*)\s*=\s*game\s*:\s*GetService\(\s*["'](\w+)["']\s*\)""", text):
        aliases[m.group(1)] = m.group(2)
    out = []

    def child_at(i: int, parent: tuple[str, ...], kind: str) -> None:
        """A child name read at token ``i`` (``.X`` or ``:WaitForChild("X")``) of ``parent``."""
        kids = labels.children.get(parent, set())
        if not kids:
            return
        t = toks[i]
        if t.kind == "." and toks[i + 1].kind == L.NAME and toks[i + 1].text in kids and toks[i + 1].text not in members:
            n = toks[i + 1]
            out.append((kind, n.start, n.end, n.text, frozenset(kids) | members))
        elif (t.kind == ":" and toks[i + 1].text in _CHILD_CALLS and toks[i + 2].kind == "("
              and toks[i + 3].kind == L.STRING and toks[i + 4].kind == ")"):
            s = toks[i + 3]
            name = s.text[1:-1]
            if name in kids:
                out.append((kind, s.start + 1, s.end - 1, name, frozenset(kids) | members))

    for i, t in enumerate(toks[:-8]):
        if t.kind != L.NAME or (i and toks[i - 1].kind in (".", ":")):
            continue
        if t.text == "script":
            if toks[i + 1].kind == "." and toks[i + 2].text == "Parent":
                child_at(i + 3, me[:-1], "own_script_parent")
            else:
                child_at(i + 1, me, "own_script_child")
        elif t.text == "game" and toks[i + 1].kind == ":" and toks[i + 2].text == "GetService" \
                and toks[i + 3].kind == "(" and toks[i + 4].kind == L.STRING and toks[i + 5].kind == ")":
            s = toks[i + 4]
            service = s.text[1:-1]
            if service in api_service_names() and len(service) >= 3:
                out.append(("own_service", s.start + 1, s.end - 1, service, api_service_names() | members))
                child_at(i + 6, (service,), "own_service_child")
        elif t.text == "game" and toks[i + 1].kind == "." and toks[i + 2].kind == L.NAME \
                and toks[i + 2].text in api_service_names():
            child_at(i + 3, (toks[i + 2].text,), "own_service_child")
        elif t.text in aliases and toks[i + 1].kind in (".", ":"):
            child_at(i + 1, (aliases[t.text],), "own_service_child")
    return [o for o in out if len(o[3]) >= 3]


def _typo(name: str, rng: random.Random) -> str | None:
    kind = rng.choice(("drop", "swap", "double", "case"))
    if kind == "drop":
        i = rng.randrange(1, len(name))
        new = name[:i] + name[i + 1:]
    elif kind == "swap":
        pairs = [j for j in range(len(name) - 1) if name[j] != name[j + 1]]
        if not pairs:
            return None
        j = rng.choice(pairs)
        new = name[:j] + name[j + 1] + name[j] + name[j + 2:]
    elif kind == "double":
        k = rng.randrange(1, len(name))
        new = name[:k] + name[k] + name[k:]
    else:
        new = name[0].swapcase() + name[1:]
    return new if new != name else None


def _labels_for(path: Path, cache: Path, memo: dict) -> tuple[str, object]:
    """``(repository folder, its corpus_labels.Labels)`` of a corpus file (read once per repository)."""
    from corpus_labels import read_labels

    rel = path.resolve().relative_to(cache.resolve())
    repo = rel.parts[0]
    if repo not in memo:
        memo[repo] = read_labels(cache / repo)
    return repo, memo[repo]


def make_typo_mutants(valid: list[Path], n: int, seed: int, cache: Path, picker: str = "resolver") -> list[dict]:
    """``n`` one-name typos in valid files, at sites luaguard's resolver reads (see the module
    docstring): ``{"file" (relative to the cache), "sha1", "start", "end", "name", "new",
    "site", "in_dm"}``."""
    rng = random.Random(seed)
    sites_cache: dict[Path, list] = {}
    labels: dict = {}
    order = list(valid)
    rng.shuffle(order)
    out: list[dict] = []
    tries = 0
    while len(out) < n and tries < n * 20 and order:
        tries += 1
        path = order[tries % len(order)]
        data = path.read_bytes()
        text = data.decode("utf-8", "replace")
        got = sites_cache.get(path)
        if got is None:
            try:
                if picker == "own":
                    got = sites_cache[path] = own_typo_sites(path, text, _labels_for(path, cache, labels)[1])
                else:
                    got = sites_cache[path] = typo_sites(path, text)[1]
            except ImportError:
                raise
            except Exception:  # noqa: BLE001 - a bench never stops on one file
                got = sites_cache[path] = []
        if not got:
            continue
        if picker == "own":  # a site kind first (GetService is in nearly every file), then a site of it
            kind = rng.choice(sorted({g[0] for g in got}))
            kind, start, end, name, valid_names = rng.choice([g for g in got if g[0] == kind])
        else:
            kind, start, end, name, valid_names = rng.choice(got)
        new = _typo(name, rng)
        if new is None or new in valid_names:
            continue
        _repo, lab = _labels_for(path, cache, labels)
        out.append({"file": path.resolve().relative_to(cache.resolve()).as_posix(),
                    "sha1": hashlib.sha1(data).hexdigest(), "start": start, "end": end, "name": name, "new": new,
                    "site": kind, "in_dm": lab.in_datamodel(path)})
    return out


def typo_mutants(muts: list[dict], cache: Path, show: int, any_rule: bool = False) -> dict:
    """(f): lint each mutant, per site kind and per corpus kind (see the module docstring)."""
    kinds = repo_kinds()
    by_slug = {slug(r): k for r, k in kinds.items()}
    per: dict[str, Counter] = defaultdict(Counter)
    per_corpus: dict[str, Counter] = defaultdict(Counter)
    rules: Counter = Counter()
    shown: list[str] = []
    stale = 0
    for m in muts:
        path = cache / m["file"]
        try:
            data = path.read_bytes()
        except OSError:
            stale += 1
            continue
        if hashlib.sha1(data).hexdigest() != m["sha1"]:
            stale += 1
            continue
        text = data.decode("utf-8", "replace")
        start, name, new, kind, in_dm = m["start"], m["name"], m["new"], m["site"], m["in_dm"]
        mutated = text[:start] + new + text[m["end"]:]
        eng = projects_for(path)

        def counted(f) -> bool:
            return any_rule or f.rule in TYPO_RULES

        before = {(f.rule, f.start) for f in eng.lint_text(text, path, count=False) if counted(f)}
        found = [f for f in eng.lint_text(mutated, path, count=False)
                 if counted(f) and (f.rule, f.start) not in before
                 and f.start <= start + len(new) and f.end >= start]
        for c in (per[kind], per_corpus[by_slug.get(m["file"].split("/")[0], "library")]):
            c["n"] += 1
            c["n_dm"] += in_dm
            if found:
                c["flagged"] += 1
                err = any(f.severity.label == "error" for f in found)
                c["error"] += err
                c["error_dm"] += err and in_dm
                best = next((f for f in found if f.suggestions), None)
                c["with_suggestion"] += best is not None
                c["top1"] += best is not None and best.suggestions[0] == name
        if found:
            rules[found[0].rule] += 1
            best = next((f for f in found if f.suggestions), None)
            err = any(f.severity.label == "error" for f in found)
            if best is not None and best.suggestions[0] != name and len(shown) < show:
                shown.append(f"{m['file']}: {kind} {name!r} -> {new!r}: best {best.suggestions[0]!r} ({best.rule})")
            elif not err and in_dm and len(shown) < show:
                shown.append(f"{m['file']}: {kind} {name!r} -> {new!r}: in the DataModel, not at error "
                             f"({found[0].rule} {found[0].severity.label}: {found[0].message[:90]})")
        elif len(shown) < show:
            shown.append(f"{m['file']}: {kind} {name!r} -> {new!r}: not flagged" + (" (in the DataModel)" if in_dm else ""))
    return {"per": {k: dict(v) for k, v in per.items()}, "per_corpus": {k: dict(v) for k, v in per_corpus.items()},
            "rules": dict(rules), "shown": shown, "stale": stale}


# -- main ----------------------------------------------------------------------------------------
def _pct(a: int, b: int) -> str:
    return f"{a}/{b} = {100.0 * a / b:.2f}%" if b else f"{a}/0"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", required=True, help="luau-compile built from luau-lang/luau")
    ap.add_argument("--cache", type=Path, default=None, help="the unpacked corpus (default: as unpack.py)")
    ap.add_argument("--repos", default="", help="comma-separated owner/name (default: the whole manifest)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many files (a quick run)")
    ap.add_argument("--guard", action="store_true", help="run the guard replay (d)")
    ap.add_argument("--tokenizers", default="default,byte_level,metaspace")
    ap.add_argument("--mask-every", type=int, default=8,
                    help="check the mask at every N-th token of the replay (0: never)")
    ap.add_argument("--mutants", type=int, default=0, help="mutated copies for (e)")
    ap.add_argument("--typo-mutants", type=int, default=0, help="one-name typos for (f)")
    ap.add_argument("--typo-save", type=Path, help="write the typo mutants chosen for (f) to this JSON file")
    ap.add_argument("--typo-load", type=Path, help="replay the typo mutants of this JSON file for (f) (no new ones)")
    ap.add_argument("--typo-picker", choices=("resolver", "own"), default="resolver",
                    help="(f): sites luaguard's resolver reads (default) or the benches' own labeller's")
    ap.add_argument("--typo-any-rule", action="store_true",
                    help="(f): a new finding of any rule on the misspelt name counts as flagged")
    ap.add_argument("--skip-lint", action="store_true", help="leave out (a) (b) (c) (for a run of (d) (e) (f) alone)")
    ap.add_argument("--kinds", default="", help="only manifest entries of these kinds (library = entries without one)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--show", type=int, default=12, help="list this many files per problem (the (b) list: all)")
    args = ap.parse_args(argv)
    if not os.path.isfile(args.compiler):
        print(f"--compiler {args.compiler}: no such file", file=sys.stderr)
        return 2
    cache = args.cache or default_cache()
    set_cache(str(cache))
    repos = {r.strip() for r in args.repos.split(",") if r.strip()} or None
    kinds_wanted = {k.strip() for k in args.kinds.split(",") if k.strip()} or None
    files = corpus_files(cache, repos, kinds_wanted)
    if args.limit:
        files = random.Random(args.seed).sample(files, min(args.limit, len(files)))
    size = sum(p.stat().st_size for _r, p in files)
    print(f"corpus: {len(files)} files, {size / 1e6:.2f} MB, {len({r for r, _p in files})} repositories ({cache})")
    t0 = time.perf_counter()
    accepted = compiler_accepts(args.compiler, [p for _r, p in files], OUT / "real_code_compiler.json")
    valid = [p for _r, p in files if accepted[str(p)]]
    valid_mb = sum(p.stat().st_size for p in valid) / 1e6
    print(f"valid (the compiler accepts): {len(valid)} files, {valid_mb:.2f} MB; rejected: {len(files) - len(valid)}"
          f" ({time.perf_counter() - t0:.1f} s)")

    # (a) (b) (c) ------------------------------------------------------------------------------
    summary = {"files": len(files), "mb": size / 1e6, "valid": len(valid)}
    if not args.skip_lint:
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.jobs, initializer=set_cache, initargs=(str(cache),)) as pool:
            results = list(pool.map(lint_file, [str(p) for p in valid], chunksize=8))
        wall = time.perf_counter() - t0
        lint_s = sum(r.get("seconds", 0.0) for r in results)
        crashes = [r for r in results if "crash" in r]
        internal = [r for r in results if r.get("internal")]
        ok = [r for r in results if "crash" not in r]
        a = [r for r in ok if any(f[0] in SYNTAX_RULES for f in r["editor"])]
        b = [r for r in ok if any(f[1] == "error" for f in r["editor"])]
        b_rules = Counter(f[0] for r in ok for f in r["editor"] if f[1] == "error")

        def todo(f) -> bool:
            return f[0] == "placeholder" and f[3].startswith(("TODO comment", "FIXME comment"))

        c = [r for r in ok if any(f[1] == "error" and not todo(f) for f in r["patch"])]
        c_rules = Counter(f[0] for r in ok for f in r["patch"] if f[1] == "error" and not todo(f))
        n = len(valid)
        per_count = Counter(len(r["judges"]) for r in ok)
        print(f"(p) valid files judged by 0 projects (none maps them: the root's project, as a loose file) / 1 / more: "
              f"{per_count.get(0, 0)} / {per_count.get(1, 0)} / {sum(v for k, v in per_count.items() if k > 1)}"
              + (f" (at most {max(per_count)})" if per_count else ""))
        print(f"linting: {wall:.1f} s wall for editor + patch mode, {lint_s:.1f} s in the editor-mode lints "
              f"({valid_mb / lint_s:.2f} MB/s per core)" if lint_s else "")
        print(f"crashes: {len(crashes)}   internal_error findings: {len(internal)}")
        for r in (crashes + internal)[: args.show]:
            print(f"  {r['file']}: {(r.get('crash') or r['internal'][0]).strip().splitlines()[-1]}")
        print(f"(a) valid files with a false syntax finding: {_pct(len(a), n)}")
        for r in a[: args.show]:
            f = next(f for f in r["editor"] if f[0] in SYNTAX_RULES)
            print(f"  {r['file']}:{f[2]}: {f[0]} {f[3]}")
        print(f"(b) valid files with an error-severity finding (editor mode): {_pct(len(b), n)}; by rule: {dict(b_rules)}")
        kind_of = repo_kinds()
        repo_of = {str(p): r for r, p in files}
        valid_by_kind = Counter(kind_of.get(repo_of[str(p)], "library") for p in valid)
        b_by_kind = Counter(kind_of.get(repo_of[r["file"]], "library") for r in b)
        print("    by corpus kind: " + ", ".join(f"{k} {_pct(b_by_kind[k], valid_by_kind[k])}" for k in sorted(valid_by_kind)))
        errors_out = []
        for r in sorted(b, key=lambda r: (kind_of.get(repo_of[r["file"]], "library"), r["file"])):
            errs = [f for f in r["editor"] if f[1] == "error"]
            rel = os.path.relpath(r["file"], cache)
            print(f"  [{kind_of.get(repo_of[r['file']], 'library')}] {rel}:{errs[0][2]}: {errs[0][0]} {errs[0][3][:140]}"
                  + (f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""))
            errors_out += [f"{rel}:{f[2]}: {f[0]} {f[3]}" for f in errs]
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "real_code_errors.txt").write_text("\n".join(errors_out) + "\n")
        print(f"(c) valid files with a patch-mode error other than TODO/FIXME: {_pct(len(c), n)}; by rule: {dict(c_rules)}")
        for r in c[: args.show]:
            f = next(f for f in r["patch"] if f[1] == "error" and not todo(f))
            print(f"  {r['file']}:{f[2]}: {f[0]} {f[3][:110]}")
        summary.update({"files": len(files), "mb": size / 1e6, "valid": n, "a": len(a), "b": len(b), "c": len(c),
                        "judges": {r["file"]: r["judges"] for r in ok},
                        "b_rules": b_rules, "c_rules": c_rules, "crashes": len(crashes), "internal": len(internal)})

    # (d) --------------------------------------------------------------------------------------
    if args.guard:
        toks = [t.strip() for t in args.tokenizers.split(",") if t.strip()]
        t0 = time.perf_counter()
        # group a repository's files so a worker reuses its engines and guards
        jobs = [(str(p), toks, args.seed, args.mask_every) for p in sorted(valid, key=lambda p: (find_root_key(p), str(p)))]
        with ProcessPoolExecutor(args.jobs, initializer=set_cache, initargs=(str(cache),)) as pool:
            reps = list(pool.map(replay_file, jobs, chunksize=16))
        wall = time.perf_counter() - t0
        g_crash = [r for r in reps if "crash" in r]
        total_tokens = sum(run["tokens"] for r in reps for run in r["runs"].values())
        total_masks = sum(run["masks"] for r in reps for run in r["runs"].values())
        print(f"(d) guard replay: {len(reps)} files x {len(toks)} tokenizers x 2 primings, {total_tokens:,} tokens "
              f"({total_masks:,} of them checked against the mask) in {wall:.0f} s; crashes: {len(g_crash)}")
        for r in g_crash[: args.show]:
            print(f"  CRASH {r['file']}: {r['crash'].strip().splitlines()[-1]}")
        per: dict[str, list] = defaultdict(list)
        notes = Counter()
        for r in reps:
            for key, run in r["runs"].items():
                if run["misses"]:
                    per[key].append((r["file"], run["misses"]))
                if run["note"]:
                    notes[key] += 1
        for name in toks:
            files_missed = {f for key in (f"{name}/first_line", f"{name}/random_line") for f, _m in per[key]}
            print(f"  {name}: files where the guard refuses a token the patch-mode linter accepts: "
                  f"{_pct(len(files_missed), len(reps))} (first line {len(per[name + '/first_line'])}, "
                  f"random line {len(per[name + '/random_line'])}); not replayed (tokenizer mismatch): "
                  f"{notes[name + '/first_line']}")
            for how in ("first_line", "random_line"):
                for f, misses in per[f"{name}/{how}"][: args.show]:
                    line, piece, text = misses[0]
                    print(f"    {f}:{line} ({how.replace('_', ' ')}): refused {piece!r} in {text!r}"
                          + (f" (+{len(misses) - 1} more)" if len(misses) > 1 else ""))
        summary["guard"] = {name: len({f for key in (f"{name}/first_line", f"{name}/random_line") for f, _m in per[key]})
                            for name in toks}

    # (e) --------------------------------------------------------------------------------------
    if args.mutants:
        t0 = time.perf_counter()
        res = mutants(sorted(valid), args.compiler, args.mutants, args.seed)
        print(f"(e) mutants: {res['total']} ({time.perf_counter() - t0:.0f} s): 'has a syntax error' agrees "
              f"{_pct(res['agree_has'], res['total'])}; first error line {_pct(res['agree_line'], res['both'])}")
        for line in res["shown"]:
            print(f"  {line}")
        summary["mutants"] = {k: v for k, v in res.items() if k != "shown"}

    # (f) --------------------------------------------------------------------------------------
    if args.typo_mutants or args.typo_load:
        t0 = time.perf_counter()
        if args.typo_load:
            muts = json.loads(args.typo_load.read_text())["mutants"]
            if repos or kinds_wanted:
                keep = {slug(r) for r, _p in files}
                muts = [m for m in muts if m["file"].split("/")[0] in keep]
        else:
            muts = make_typo_mutants(sorted(valid), args.typo_mutants, args.seed, cache, args.typo_picker)
        if args.typo_save:
            args.typo_save.parent.mkdir(parents=True, exist_ok=True)
            args.typo_save.write_text(json.dumps({"seed": args.seed, "about": "bench/real_code.py typo mutants",
                                                  "mutants": muts}, indent=0))
        res = typo_mutants(muts, cache, args.show, any_rule=args.typo_any_rule)
        tot: Counter = Counter()
        for c in res["per"].values():
            tot.update(c)
        print(f"(f) typo mutants: {tot['n']} ({time.perf_counter() - t0:.0f} s"
              + (f"; {res['stale']} of the loaded set skipped: file changed" if res["stale"] else "")
              + "); flagged / at error / at error in the DataModel (files a Rojo project file of their repository "
                "maps into a DataModel) / best suggestion = the original (of those flagged):")

        def row(label: str, c) -> str:
            return (f"  {label:14s} n={c.get('n', 0):5d}  flagged {_pct(c.get('flagged', 0), c.get('n', 0))}  "
                    f"at error {_pct(c.get('error', 0), c.get('n', 0))}  in the DataModel "
                    f"{_pct(c.get('error_dm', 0), c.get('n_dm', 0))}  top-1 {_pct(c.get('top1', 0), c.get('flagged', 0))}")

        for kind in sorted(res["per"]):
            print(row(kind, res["per"][kind]))
        print(row("all", tot))
        print("  by corpus kind:")
        for kind in sorted(res["per_corpus"]):
            print(row(kind, res["per_corpus"][kind]))
        print(f"  first rule of the findings that flagged them: {res['rules']}")
        for line in res["shown"]:
            print(f"  {line}")
        summary["typo_mutants"] = res["per"]
        summary["typo_mutants_by_corpus_kind"] = res["per_corpus"]

    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "real_code.json").write_text(json.dumps(summary, indent=2, default=dict))
    return 0


def find_root_key(p: Path) -> str:
    return str(repo_dir(p))


if __name__ == "__main__":
    sys.exit(main())
