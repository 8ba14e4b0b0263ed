"""What to lint: .gitignore (git's semantics), _Index trees anywhere, git submodules, and
luaguard.toml's exclude / extend-exclude with .gitignore semantics; --stats says why."""

from __future__ import annotations

import json
from pathlib import Path

from luaguard.config import settings_from_mapping
from luaguard.files import (SKIP_EXCLUDED, SKIP_INDEX, SKIP_WALLY, excluded, filter_project_files,
                            select_files)
from luaguard.files import read_small_text
from luaguard.ignores import SKIP_GITIGNORE, SKIP_SUBMODULE, IgnoreRules

FILES = {
    ".gitignore": "build/\n*.gen.luau\n!keep.gen.luau\n/rootonly.luau\n",
    "src/.gitignore": "local/\n",
    "src/main.luau": "print(1)\n",
    "src/a.gen.luau": "print(1)\n",
    "src/keep.gen.luau": "print(1)\n",
    "src/local/x.luau": "print(1)\n",
    "src/rootonly.luau": "print(1)\n",
    "rootonly.luau": "print(1)\n",
    "build/out.luau": "print(1)\n",
    "Submodules/React/Packages/_Index/react/init.luau": "-- TODO\n",
    "Submodules/React/Packages/_Index/react/b.luau": "-- TODO\n",
    "vendor/_Index/x.luau": "print(1)\n",
    "Packages/_Index/y.luau": "print(1)\n",
    ".gitmodules": '[submodule "lib/thing"]\n\tpath = lib/thing\n\turl = https://example.invalid/thing.git\n',
    "lib/thing/t.luau": "print(1)\n",
    "gen/skip.luau": "print(1)\n",
    "gen/Keep.luau": "print(1)\n",
    "x.bench.luau": "print(1)\n",
}


def tree(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def rels(root: Path, files) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in files)


def test_walk_respects_gitignore_index_trees_submodules_and_exclude(tmp_path: Path):
    root = tree(tmp_path)
    sel = select_files([root], root=root, exclude=("gen/*", "!gen/Keep.luau", "*.bench.luau"))
    assert rels(root, sel.files) == ["gen/Keep.luau", "src/keep.gen.luau", "src/main.luau", "src/rootonly.luau"]
    assert sel.skipped == {SKIP_GITIGNORE: 4, SKIP_INDEX: 1, SKIP_WALLY: 3, SKIP_SUBMODULE: 1, SKIP_EXCLUDED: 2}
    # off: only package managers' trees and exclude are left out
    sel = select_files([root], root=root, respect_gitignore=False)
    assert "build/out.luau" in rels(root, sel.files) and "lib/thing/t.luau" in rels(root, sel.files)
    assert SKIP_GITIGNORE not in sel.skipped and sel.skipped[SKIP_INDEX] == 1


def test_walk_below_the_root_reads_the_gitignore_files_above(tmp_path: Path):
    root = tree(tmp_path)
    sel = select_files([root / "src"], root=root)
    assert rels(root, sel.files) == ["src/keep.gen.luau", "src/main.luau", "src/rootonly.luau"]
    # a file named on the command line is linted (ruff's rule): only exclude leaves it out
    sel = select_files([root / "build" / "out.luau"], root=root)
    assert rels(root, sel.files) == ["build/out.luau"]


def test_project_files_are_filtered_the_same_way(tmp_path: Path):
    root = tree(tmp_path)
    files = [root / r for r in FILES if r.endswith(".luau")]
    sel = filter_project_files(files, root=root, exclude=("x.bench.luau",))
    assert rels(root, sel.files) == ["gen/Keep.luau", "gen/skip.luau", "src/keep.gen.luau", "src/main.luau",
                                     "src/rootonly.luau"]
    assert sel.skipped[SKIP_GITIGNORE] == 4 and sel.skipped[SKIP_SUBMODULE] == 1


def test_gitignore_semantics_of_the_rules():
    assert excluded("a/b/c.luau", ["b/"]) and not excluded("a/bc.luau", ["b/"])
    assert excluded("src/Generated/x/y.luau", ["src/Generated/**"])
    assert excluded("deep/x.spec.luau", ["*.spec.luau"])  # no slash: any depth (gitignore)
    assert not excluded("src/x.luau", ["/x.luau"])


def test_ignore_rules_never_read_a_link_out_of_the_root(tmp_path: Path):
    outside = tmp_path / "outside.txt"
    outside.write_text("*.luau\n")
    root = tmp_path / "game"
    root.mkdir()
    try:
        (root / ".gitignore").symlink_to(outside)
    except OSError:
        return
    assert IgnoreRules(root, read=read_small_text).reason("a.luau") is None


def test_exclude_and_extend_exclude_settings():
    s, problems = settings_from_mapping({"exclude": ["a/"], "extend-exclude": ["b/"], "respect-gitignore": False}, "t")
    assert problems == [] and s.excludes == ("a/", "b/") and s.respect_gitignore is False
    s2, _ = settings_from_mapping({"extend_exclude": ["c/"]}, "t", s)
    assert s2.excludes == ("a/", "b/", "c/")


def test_stats_says_how_many_files_were_skipped_and_why(tmp_path: Path, capsys):
    from luaguard.cli import main

    root = tree(tmp_path)
    (root / "default.project.json").write_text(json.dumps({"name": "g", "tree": {"$path": "src"}}))
    (root / "luaguard.toml").write_text('extend-exclude = ["*.bench.luau"]\n')
    main(["check", "--stats", str(root)])
    out = capsys.readouterr().out
    assert "files skipped:" in out
    for reason, n in ((SKIP_GITIGNORE, 4), (SKIP_INDEX, 1), (SKIP_WALLY, 3), (SKIP_SUBMODULE, 1), (SKIP_EXCLUDED, 1)):
        assert f"{n:>5}  {reason}" in out, out
