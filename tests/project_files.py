"""Writing small Rojo projects for tests: files from a dict, and a ``default.project.json``
body for a DataModel tree."""

from __future__ import annotations

import json
from pathlib import Path


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path relative to ``root`` -> UTF-8 text), making folders as needed."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def rojo_project(tree: dict) -> str:
    """A Rojo project file's JSON text named ``game`` whose tree is a DataModel holding ``tree``
    (service name -> Rojo node)."""
    return json.dumps({"name": "game", "tree": {"$className": "DataModel", **tree}})
