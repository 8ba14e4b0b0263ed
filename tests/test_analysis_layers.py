"""The semantic model (``server/luaguard/analysis``) imports in one direction: each module
only those listed above it in the package docstring, and nothing of the checks, the guard,
the tool-call checks, the engine or the front ends that read it."""

from __future__ import annotations

import ast
from pathlib import Path

import luaguard.analysis as analysis

PACKAGE = Path(analysis.__file__).parent
ORDER = ["verdict", "places", "scans", "facts", "frameworks", "resolve", "world", "snapshot"]
READERS = ("checks", "guard", "toolcalls", "engine", "lsp", "agents", "serving", "cli")


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            out.append(("." * node.level) + (node.module or ""))
    return out


def test_the_package_docstring_lists_every_module_in_order():
    listed = [line.split("`")[1].lstrip(".") for line in analysis.__doc__.splitlines()
              if line.startswith("* :mod:`.")]
    assert listed == ORDER
    assert sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__") == sorted(ORDER)


def test_each_module_imports_only_those_above_it():
    for i, name in enumerate(ORDER):
        for imp in _imports(PACKAGE / f"{name}.py"):
            if imp.startswith("..") and not imp.startswith("..."):
                assert imp[2:].split(".")[0] not in READERS, (name, imp)
            else:
                assert imp[1:] in ORDER[:i], f"analysis/{name}.py imports {imp} (not above it)"
