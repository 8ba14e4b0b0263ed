"""Read a ``sourcemap.json`` (as ``rojo sourcemap`` writes it) into the instance tree.

Format (Rojo's ``src/cli/sourcemap.rs``): one JSON object per instance with ``name``,
``className``, optional ``filePaths`` (paths of existing files that define the instance,
relative to the folder Rojo ran in, or absolute with ``--absolute``) and optional
``children``.

Open-ness.  A sourcemap does not say which instances Rojo would leave alone, and without
``--include-non-scripts`` it lists only scripts and their ancestors, so:

* **Scripts-only sourcemaps** (detected: every leaf is a ``Script``, ``LocalScript`` or
  ``ModuleScript``): every node is open with the reason :data:`SCRIPTS_ONLY_REASON`, since
  any non-script child may exist.  Scripts themselves are complete, so a check may still
  report a ``require`` of a missing *script* below a node whose ``open_reason`` is exactly
  that constant (``ProjectIndex.scripts_only`` is True).
* **Complete sourcemaps** (some leaf is not a script): the ``DataModel`` root and its
  direct children (services: Rojo serves them with ``$ignoreUnknownInstances`` on by
  default, and the place itself adds instances) are open, as is ``Workspace``; deeper
  nodes are closed.
* Services the sourcemap does not list are open (``ProjectIndex.service``).

``Script`` nodes get a ``run_context`` from their file name (``.client`` -> Client,
``.server`` -> Server, ``.plugin`` -> Plugin, otherwise Legacy); sourcemaps carry no
properties.
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

from .rojo import (
    IndexProblem,
    JsonError,
    ProjectFileError,
    _decode_text,
    _valid_utf8,
    _pointer_str,
    parse_jsonc,
    pointer_position,
)
from .tree import Instance

__all__ = ["SCRIPTS_ONLY_REASON", "SourcemapResult", "read_sourcemap"]

SCRIPTS_ONLY_REASON = "sourcemap lists scripts only (made without --include-non-scripts): non-script children unknown"
_SERVICE_REASON = "service in a sourcemap: Rojo keeps instances the place itself adds"
_SCRIPT_CLASSES = frozenset({"Script", "LocalScript", "ModuleScript"})


class SourcemapResult:
    """What :func:`read_sourcemap` returns: ``root``, ``file_instances``, ``problems``, ``scripts_only``."""

    __slots__ = ("root", "file_instances", "problems", "scripts_only")

    def __init__(self, root: Instance, file_instances: dict[str, list[Instance]],
                 problems: list[IndexProblem], scripts_only: bool) -> None:
        self.root = root
        self.file_instances = file_instances
        self.problems = problems
        self.scripts_only = scripts_only


def _run_context_for(path: str) -> str:
    base = posixpath.basename(path)
    for marker, rc in ((".client.", "Client"), (".server.", "Server"), (".plugin.", "Plugin")):
        if marker in base:
            return rc
    return "Legacy"


def read_sourcemap(root_dir: str, rel: str) -> SourcemapResult:
    """Read sourcemap ``rel`` (root-relative POSIX path) under absolute ``root_dir``.

    Raises :class:`ProjectFileError` (with line/column) when the file cannot be read, is
    not JSON, or does not have the sourcemap shape.  File paths are made root-relative;
    paths outside the root are left out of the file map (reported once as ``info``).
    """
    from .rojo import read_project_file

    raw = read_project_file(os.path.join(root_dir, rel), os.path.realpath(root_dir), rel, "sourcemap")
    try:
        data, text = parse_jsonc(_decode_text(raw))
    except JsonError as exc:
        raise ProjectFileError(rel, exc.line, exc.column, exc.message) from None

    def fail(parts: list[str | int], message: str) -> None:
        line, col = pointer_position(text, parts)
        raise ProjectFileError(rel, line, col, f"{_pointer_str(parts)}: {message}")

    folder = posixpath.dirname(rel)
    root_abs = os.path.abspath(root_dir)
    root_real = os.path.realpath(root_abs)
    problems: list[IndexProblem] = []
    file_instances: dict[str, list[Instance]] = {}
    outside: list[str] = []
    invalid: list[str] = []

    def norm(fp: str) -> str | None:
        fp = fp.replace("\\", "/")
        if fp.startswith("/") or (len(fp) > 2 and fp[1] == ":" and fp[2] == "/"):
            ap = posixpath.normpath(fp)
            for base in (root_abs, root_real):
                if ap.startswith(base.rstrip("/") + "/"):
                    return ap[len(base.rstrip("/")) + 1:]
            return None
        r = posixpath.normpath(posixpath.join(folder, fp)) if folder else posixpath.normpath(fp)
        if r == ".." or r.startswith("../") or r == ".":
            return None
        return r

    root: Instance | None = None
    any_non_script_leaf = False
    stack: list[tuple[Any, Instance | None, list[str | int]]] = [(data, None, [])]
    while stack:
        obj, parent, ptr = stack.pop()
        if not isinstance(obj, dict):
            fail(ptr, "a sourcemap node must be an object")
        name, cls = obj.get("name"), obj.get("className")
        if not isinstance(name, str):
            fail(ptr + ["name"] if "name" in obj else ptr, 'missing or non-string "name"')
        if not isinstance(cls, str):
            fail(ptr + ["className"] if "className" in obj else ptr, 'missing or non-string "className"')
        inst = Instance(name, cls)
        fps = obj.get("filePaths", [])
        if not isinstance(fps, list):
            fail(ptr + ["filePaths"], '"filePaths" must be a list of strings')
        for i, fp in enumerate(fps):
            if not isinstance(fp, str):
                fail(ptr + ["filePaths", i], "file path must be a string")
            if "\x00" in fp or not _valid_utf8(fp):
                invalid.append(fp)  # no file can have this name (and os calls would raise)
                continue
            r = norm(fp)
            if r is None:
                outside.append(fp)
                continue
            inst.file_paths.append(r)
            file_instances.setdefault(r, []).append(inst)
        if cls == "Script":
            src = next((f for f in inst.file_paths if not f.endswith((".json", ".jsonc"))), None)
            inst.run_context = _run_context_for(src) if src else "Legacy"
        if parent is None:
            root = inst
        else:
            parent.add_child(inst)
        kids = obj.get("children", [])
        if not isinstance(kids, list):
            fail(ptr + ["children"], '"children" must be a list')
        if not kids and cls not in _SCRIPT_CLASSES:
            any_non_script_leaf = True
        for i in range(len(kids) - 1, -1, -1):
            stack.append((kids[i], inst, ptr + ["children", i]))
    assert root is not None

    scripts_only = not any_non_script_leaf
    if scripts_only:
        root.open_reason = SCRIPTS_ONLY_REASON
        for node in root.descendants():
            node.open_reason = SCRIPTS_ONLY_REASON
    elif root.class_name == "DataModel":
        root.open_reason = "services the sourcemap does not list are created on demand"
        for svc in root.all_children():
            svc.open_reason = _SERVICE_REASON
    for node in [root, *root.descendants()]:
        if node.class_name == "Workspace" and node.open_reason is None:
            node.open_reason = "Workspace holds parts, terrain and characters from the place itself"
    if outside:
        problems.append(IndexProblem(
            rel, None, None,
            f"{len(outside)} file path(s) lie outside the index root and are not mapped "
            f"(first: {outside[0]})", "info"))
    if invalid:
        problems.append(IndexProblem(
            rel, None, None,
            f"{len(invalid)} file path(s) are not valid file names (a NUL character or an unpaired surrogate) "
            f"and are not mapped (first: {invalid[0]!r})", "warning"))
    return SourcemapResult(root, file_instances, problems, scripts_only)
