"""Tests for the synthetic training corpus of the demonstration model (training/corpus.py,
outside the runtime package)."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from luaguard.completion.context import describe_children, format_prompt_context  # noqa: E402
from training.corpus import (  # noqa: E402
    generate_corpus,
    generate_scripts,
    prompt_context_for,
    random_project_tree,
    sample_sources,
)
from luaguard.project.tree import Instance


def _strip_strings_and_comments(src: str) -> str:
    """Luau source with comments removed and string literals emptied (enough for counting)."""
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("--[[", i):
            j = src.find("]]", i + 4)
            i = n if j < 0 else j + 2
        elif src.startswith("--", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("[[", i):
            j = src.find("]]", i + 2)
            out.append('""')
            i = n if j < 0 else j + 2
        elif c in "\"'`":
            j = i + 1
            while j < n and src[j] != c:
                if src[j] == "\\":
                    j += 1
                elif src[j] == "\n":
                    raise AssertionError(f"unterminated string at offset {i}: {src[i : i + 40]!r}")
                j += 1
            if j >= n:
                raise AssertionError(f"unterminated string at offset {i}")
            out.append('""')
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _assert_balanced(src: str) -> None:
    code = _strip_strings_and_comments(src)
    stack: list[str] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for ch in code:
        if ch in "([{":
            stack.append(ch)
        elif ch in ")]}":
            assert stack and stack[-1] == pairs[ch], f"unbalanced {ch!r} in:\n{src}"
            stack.pop()
    assert not stack, f"unclosed {stack} in:\n{src}"
    words = re.findall(r"\b[A-Za-z_]\w*\b", code)
    openers = sum(1 for w in words if w in ("function", "do", "if"))
    closers = words.count("end")
    assert openers == closers, f"{openers} block openers vs {closers} 'end' in:\n{src}"
    assert words.count("repeat") == words.count("until")


def _walk(tree: Instance, names: tuple[str, ...]) -> Instance | None:
    node: Instance | None = tree
    for name in names:
        node = node.child(name) if node is not None else None
    return node


def test_deterministic_given_seed() -> None:
    a = list(generate_corpus(60, seed=7))
    b = list(generate_corpus(60, seed=7))
    c = list(generate_corpus(60, seed=8))
    assert a == b
    assert a != c
    assert len(a) == 60


def test_trees_vary() -> None:
    rng = random.Random(3)
    shapes = set()
    for _ in range(20):
        tree = random_project_tree(rng)
        shapes.add(tuple(sorted(n.path for n in tree.descendants())))
    assert len(shapes) == 20
    # same seed -> same tree
    t1 = random_project_tree(random.Random(11))
    t2 = random_project_tree(random.Random(11))
    assert [n.path for n in t1.descendants()] == [n.path for n in t2.descendants()]


def test_tree_has_roblox_shape() -> None:
    tree = random_project_tree(random.Random(5))
    assert tree.class_name == "DataModel" and tree.path == "game"
    for service in ("Workspace", "Players", "ReplicatedStorage", "ServerScriptService", "StarterGui", "StarterPlayer"):
        assert tree.child(service) is not None, service
    assert _walk(tree, ("StarterPlayer", "StarterPlayerScripts")) is not None
    classes = {n.class_name for n in tree.descendants()}
    assert {"ModuleScript", "Script", "LocalScript", "RemoteEvent", "Folder", "ScreenGui"} <= classes
    assert tree.child("Players").is_open


def test_every_referenced_path_exists_in_its_tree() -> None:
    count = 0
    for ex in generate_scripts(400, seed=21):
        assert ex.references, ex.source
        for names in ex.references:
            node = _walk(ex.tree, names)
            assert node is not None, f"{'.'.join(names)} missing from tree for:\n{ex.source}"
            # the reference is visible in the text (by name, or via script.Parent for the parent)
            assert node.name in ex.source or "script.Parent" in ex.source, (names, ex.source)
            count += 1
        # services fetched by name are children of the root
        for service in re.findall(r'game:GetService\("([^"]+)"\)', ex.source):
            assert ex.tree.child(service) is not None, service
        # names fetched with WaitForChild are tree names or well-known run-time children
        tree_names = {n.name for n in ex.tree.descendants()}
        runtime = {"Humanoid", "PlayerGui", "HumanoidRootPart", "leaderstats", "Backpack"}
        for name in re.findall(r':WaitForChild\("([^"]+)"\)', ex.source):
            assert name in tree_names or name in runtime, (name, ex.source)
        # the script itself lies in the tree
        assert ex.script in list(ex.tree.descendants())
    assert count > 1000


def test_generated_luau_is_balanced() -> None:
    for ex in generate_scripts(400, seed=4):
        _assert_balanced(ex.text)


def test_balance_checker_catches_a_missing_end() -> None:
    with pytest.raises(AssertionError):
        _assert_balanced("local function f()\n\tif x then\n\t\tprint(1)\n\tend\n")
    with pytest.raises(AssertionError):
        _assert_balanced("print((1)\n")


def test_output_covers_the_idioms() -> None:
    text = "\n".join(generate_corpus(500, seed=1))
    for idiom in (
        'game:GetService("ReplicatedStorage")',
        ':WaitForChild("',
        "require(",
        "script.Parent",
        "workspace",
        "LocalPlayer",
        "PlayerGui",
        ":Connect(function(",
        "task.wait(",
        "TweenService:Create(",
        "Humanoid",
        "elseif ",
        "for _, ",
        "`",
        ": number",
        "return ",
        "-- script: game.",
        "-- siblings: ",
    ):
        assert idiom in text, idiom


def test_header_lines_describe_the_tree() -> None:
    for ex in generate_scripts(200, seed=9):
        header = ex.text[: len(ex.text) - len(ex.source)]
        for line in header.splitlines():
            assert line.startswith("-- ")
            body = line[3:]
            if body.startswith("script: "):
                assert body[8:] == ex.script.path
            elif body.startswith("parent: "):
                assert ex.script.parent is not None and body[8:] == ex.script.parent.path
            elif body.startswith("siblings: "):
                names = body[10:].split(", ")
                for name in names:
                    assert name == "..." or ex.script.parent.child(name) is not None
            else:
                path, _, children = body.partition(": ")
                node = next(n for n in [ex.tree, *ex.tree.descendants()] if n.path == path)
                for name in children.split(", "):
                    assert name == "..." or node.child(name) is not None


def test_format_prompt_context_layout() -> None:
    text = format_prompt_context(
        "game.ServerScriptService.Main",
        ["Util", "Data\nService"],
        "game.ServerScriptService",
        ["game.ReplicatedStorage.Modules: Combat, Util", ""],
    )
    assert text == (
        "-- script: game.ServerScriptService.Main\n"
        "-- parent: game.ServerScriptService\n"
        "-- siblings: Util, Data Service\n"
        "-- game.ReplicatedStorage.Modules: Combat, Util\n"
    )
    assert format_prompt_context("", [], "", []) == ""
    many = format_prompt_context("game.X", [f"N{i}" for i in range(40)], "game", [])
    assert many.splitlines()[-1].endswith("N23, ...")


def test_prompt_context_for_matches_format() -> None:
    game = Instance("game", "DataModel")
    rs = game.add_child(Instance("ReplicatedStorage", "ReplicatedStorage"))
    mods = rs.add_child(Instance("Modules", "Folder"))
    a = mods.add_child(Instance("A", "ModuleScript"))
    mods.add_child(Instance("B", "ModuleScript"))
    rs.add_child(Instance("Empty Folder", "Folder"))
    assert prompt_context_for(a, [rs]) == format_prompt_context(
        "game.ReplicatedStorage.Modules.A",
        ["B"],
        "game.ReplicatedStorage.Modules",
        ["game.ReplicatedStorage: Modules, Empty Folder"],
    )
    assert describe_children(rs.child("Empty Folder")) == 'game.ReplicatedStorage["Empty Folder"]: (empty)'


def test_sample_sources(tmp_path: Path) -> None:
    assert sample_sources(tmp_path / "missing") == []
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.luau").write_text("print(1)\n", encoding="utf-8")
    (tmp_path / "b.lua").write_text("return {}\n", encoding="utf-8")
    (tmp_path / "bad.luau").write_bytes(b"\xff\xfe\x00bad")
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert sample_sources(tmp_path) == [("b.lua", "return {}\n"), ("src/a.luau", "print(1)\n")]
    assert sample_sources(tmp_path, exclude=("src",)) == [("b.lua", "return {}\n")]


def test_negative_count_rejected() -> None:
    with pytest.raises(ValueError):
        list(generate_corpus(-1, seed=0))


def test_deterministic_across_processes() -> None:
    """No dependence on hash randomisation or object ids: another interpreter gives the same text."""
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        f"import hashlib, sys; sys.path.insert(0, {str(ROOT)!r}); from training.corpus import generate_corpus; "
        "print(hashlib.sha256('\\x00'.join(generate_corpus(80, seed=5)).encode()).hexdigest())"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=env)
    here = hashlib.sha256("\x00".join(generate_corpus(80, seed=5)).encode()).hexdigest()
    assert out.stdout.strip() == here


# ----------------------------------------------------------------- the runtime stays apart


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, dotted module)`` of every import in a Python file (relative imports resolved
    against the file's package)."""
    import ast

    pkg = path.relative_to(ROOT / "server").with_suffix("").parts[:-1]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(pkg[: len(pkg) - node.level + 1]) if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out.append((node.lineno, mod))
            out.extend((node.lineno, f"{mod}.{a.name}") for a in node.names)
    return out


def test_the_runtime_imports_nothing_from_the_training_code() -> None:
    package = ROOT / "server" / "luaguard"
    files = sorted(package.rglob("*.py"))
    assert len(files) > 50
    bad = [f"{p.relative_to(ROOT)}:{line}: {mod}" for p in files for line, mod in _imports(p)
           if mod == "training" or mod.startswith("training.") or mod.endswith(".corpus") or ".corpus." in mod]
    assert bad == []
    # the resolver above does see the runtime's own relative imports
    assert any(mod == "luaguard.completion.context" for _, mod in _imports(package / "completion" / "generate.py"))


def test_the_runtime_package_holds_no_training_data_generator() -> None:
    import ast

    generators = {"generate_corpus", "generate_scripts", "random_project_tree", "sample_sources", "GeneratedScript"}
    found = []
    for p in sorted((ROOT / "server" / "luaguard").rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in generators:
                found.append(f"{p.relative_to(ROOT)}: {node.name}")
    assert found == []
    assert not (ROOT / "server" / "luaguard" / "guard" / "corpus.py").exists()
    # and the training code does define them (the names above are the right ones)
    import training.corpus as corpus

    assert generators <= set(dir(corpus))
