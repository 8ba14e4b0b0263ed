"""How often is ``luaguard check --fix`` right?  Misspell names in public games, let the fixes repair them.

For each game of ``--repos`` (unpacked from ``bench/corpus/manifest.json`` by
``bench/corpus/unpack.py``), each script its project maps that parses and that ``--fix`` would
not change as it is, up to ``--per-file`` names chosen at random (seeded): a name after ``.`` or
``:`` or a string literal argument (``GetService("...")``, ``WaitForChild("...")``,
``Instance.new("...")`` ...) - the spellings the checks read - gets one typo (two inner letters
swapped, one dropped, or one doubled).  The mutated text is linted as that script; when a finding
the original did not have covers the typo (*caught*), :func:`luaguard.fixes.fix_text` runs, with
safe fixes only and then with unsafe ones too, and its result is compared with the original:

* *restored*: the fixes gave the original text back, exactly;
* *wrong*: they changed the text into something else (the figure that must stay near 0 for safe fixes);
* *no fix*: no fix of that kind was offered (no single clearly best name, or an unsafe-only fix).

Printed per game and in total, with the rules of the findings that caught the typos and a few
wrong fixes.  Usage::

    python bench/corpus/unpack.py
    python bench/fix_eval.py [--repos MonzterDev+Roblox-Game-Template,Open-SB+OpenSB,easy-games+chickynoid] \\
        [--per-file 4] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "corpus"))

DEFAULT_REPOS = "MonzterDev+Roblox-Game-Template,Open-SB+OpenSB,easy-games+chickynoid"


def typo(name: str, rng: random.Random) -> str | None:
    """One seeded typo of ``name`` that keeps its first letter, or ``None`` if too short."""
    if len(name) < 4:
        return None
    for _ in range(10):
        i = rng.randrange(1, len(name) - 1)
        kind = rng.choice(("swap", "drop", "double"))
        if kind == "swap":
            out = name[:i] + name[i + 1] + name[i] + name[i + 2:]
        elif kind == "drop":
            out = name[:i] + name[i + 1:]
        else:
            out = name[:i] + name[i] + name[i:]
        if out != name:
            return out
    return None


def targets(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, name)`` of the names the checks read: a name token after ``.``/``:``,
    and the inside of a string literal that is a call's first argument."""
    from luaguard.luau.lexer import NAME, STRING, tokenize

    toks = [t for t in tokenize(text).tokens]
    out = []
    for i, t in enumerate(toks):
        prev = toks[i - 1].kind if i else ""
        if t.kind == NAME and prev in (".", ":"):
            out.append((t.start, t.end, text[t.start:t.end]))
        elif t.kind == STRING and prev == "(" and i + 1 < len(toks) and toks[i + 1].kind == ")":
            inner = text[t.start + 1:t.end - 1]
            if inner.isidentifier():
                out.append((t.start + 1, t.end - 1, inner))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", default=DEFAULT_REPOS, help="comma-separated corpus folders (owner+name)")
    ap.add_argument("--cache", type=Path, default=None, help="the unpacked corpus (default: $LUAGUARD_CORPUS or ~/.cache/luaguard/corpus)")
    ap.add_argument("--per-file", type=int, default=4, help="names misspelt per script (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from unpack import default_cache

    from luaguard.engine import Engine
    from luaguard.fixes import fix_text
    from luaguard.workspace import read_project_settings

    cache = args.cache or default_cache()
    rng = random.Random(args.seed)
    total: Counter = Counter()
    rules: Counter = Counter()
    wrong_examples: list[str] = []
    t0 = time.perf_counter()
    print(f"{'game':<36} {'typos':>6} {'caught':>7} | {'safe: restored':>14} {'wrong':>6} {'no fix':>7} | {'+unsafe: restored':>17} {'wrong':>6} {'no fix':>7}")
    for repo in [r for r in args.repos.split(",") if r]:
        root = cache / repo
        if not root.is_dir():
            print(f"{repo}: not unpacked in {cache} (python bench/corpus/unpack.py)")
            continue
        engine = Engine(root, read_project_settings(root).settings)
        c: Counter = Counter()
        for path in engine.script_files():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            base = engine.analyse(text, path, count=False)
            if not base.parses or fix_text(engine, text, path, unsafe=True, count=False).changed:
                continue  # the file itself has fixes: a restored text could not be told apart
            before = {(f.rule, f.start, f.message) for f in base.findings}
            picks = targets(text)
            rng.shuffle(picks)
            for start, end, name in picks[: args.per_file]:
                bad = typo(name, rng)
                if bad is None:
                    continue
                mutated = text[:start] + bad + text[end:]
                c["typos"] += 1
                found = engine.analyse(mutated, path, count=False).findings
                hit = [f for f in found if (f.rule, f.start, f.message) not in before and f.start < start + len(bad) and f.end > start]
                if not hit:
                    continue
                c["caught"] += 1
                rules[hit[0].rule] += 1
                for label, unsafe in (("safe", False), ("unsafe", True)):
                    result = fix_text(engine, mutated, path, unsafe=unsafe, count=False)
                    if result.text == text:
                        c[f"{label}_restored"] += 1
                    elif result.changed:
                        c[f"{label}_wrong"] += 1
                        if len(wrong_examples) < 8:
                            got = next((f.fix.new_text for f in result.fixed), "?")
                            wrong_examples.append(f"{label}: {repo}/{path.relative_to(root)}: {name} -> {bad} -> {got} ({result.fixed[0].rule})")
                    else:
                        c[f"{label}_none"] += 1
        total.update(c)
        _row(repo, c)
    _row("total", total)
    print(f"caught by rule: {dict(rules.most_common())}")
    for line in wrong_examples:
        print(f"  wrong fix, {line}")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


def _row(name: str, c: Counter) -> None:
    print(f"{name:<36} {c['typos']:>6} {c['caught']:>7} | {c['safe_restored']:>14} {c['safe_wrong']:>6} {c['safe_none']:>7} | "
          f"{c['unsafe_restored']:>17} {c['unsafe_wrong']:>6} {c['unsafe_none']:>7}")


if __name__ == "__main__":
    sys.exit(main())
