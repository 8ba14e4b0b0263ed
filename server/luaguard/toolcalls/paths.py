"""Paths in tool calls: instance form or file form, kept inside the project root.

Two forms are accepted and mapped onto each other through the index:

* **instance form** — ``ServerScriptService.Server.Bootstrap``,
  ``game.ServerScriptService.Server.Bootstrap``, ``workspace.Map``,
  ``StarterGui.MainHud["Round Info"]`` (any syntax
  :meth:`~luaguard.project.index.ProjectIndex.resolve_partial` reads); a
  ``/``-separated path that starts with ``game`` or a service name and has no file
  extension (``ServerScriptService/Server/Bootstrap``) is read as instance form too;
* **file form** — a path relative to the project root, ``/`` or ``\\`` separated
  (``src/server/Bootstrap.server.luau``), or an absolute path inside the root.

``path_outside_project``: a file path that, after normalisation, leaves the root
(``../x``, an absolute path elsewhere, ``~``), or whose real path (symlinks resolved with
``os.path.realpath``) lies outside the root's real path.  Nothing outside the root is
ever read.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass

from ..project.tree import Instance

_FILE_EXT = re.compile(r"\.(luau|lua|json|jsonc|txt|csv|toml|yaml|yml|rbxm|rbxmx|model\.json|meta\.json)$", re.I)
_WINDOWS_ABS = re.compile(r"^[A-Za-z]:[\\/]")
#: Longest path string looked at (longer ones are invalid arguments).
MAX_PATH_CHARS = 1024


@dataclass(frozen=True, slots=True)
class PathRef:
    """A parsed path: ``form`` is ``"instance"`` or ``"file"``; ``text`` is the instance
    path (instance form) or the normalised root-relative POSIX path (file form)."""

    raw: str
    form: str
    text: str


class PathError(Exception):
    """A path that cannot be used: ``code`` is ``path_outside_project`` or
    ``invalid_argument``; ``str()`` is the message for the model."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def parse_path(raw: str, root: str | None, services: frozenset[str] | set[str]) -> PathRef:
    """Classify and normalise ``raw`` (see the module docstring).

    ``root`` is the absolute project root (``None``: file paths are only normalised).
    Raises :class:`PathError`.
    """
    text = raw.strip()
    if not text:
        raise PathError("invalid_argument", "The path is empty.")
    if len(text) > MAX_PATH_CHARS:
        raise PathError("invalid_argument", f"The path is {len(text):,} characters long; paths are at most {MAX_PATH_CHARS}.")
    if "\x00" in text:
        raise PathError("invalid_argument", "The path contains a NUL character.")
    slashy = "/" in text or "\\" in text
    if slashy and not text.startswith(("/", "\\", "~")) and not _WINDOWS_ABS.match(text) and not _FILE_EXT.search(text):
        first = re.split(r"[\\/]", text, maxsplit=1)[0]
        if first == "game" or first in services or first == "workspace":
            parts = [p for p in re.split(r"[\\/]", text) if p]
            return PathRef(raw, "instance", ".".join(parts))
    if not slashy and not _FILE_EXT.search(text):
        return PathRef(raw, "instance", text)
    return PathRef(raw, "file", _file_rel(text, root))


def _outside(raw: str, root: str | None) -> PathError:
    where = f" {root}" if root else ""
    return PathError("path_outside_project",
                     f"Path '{raw}' is outside the project root{where}. Use a path relative to the project root, "
                     f"such as 'src/server/Main.server.luau', or an instance path such as 'ServerScriptService.Main'.")


def _file_rel(raw: str, root: str | None) -> str:
    text = raw.replace("\\", "/")
    if text.startswith("~"):
        raise _outside(raw, root)
    if text.startswith("/") or _WINDOWS_ABS.match(raw):
        if root is None:
            raise _outside(raw, root)
        norm = posixpath.normpath(text)
        r = root.replace("\\", "/").rstrip("/")
        if norm == r:
            raise PathError("invalid_argument", f"Path '{raw}' is the project root itself, not a file.")
        if not norm.startswith(r + "/"):
            raise _outside(raw, root)
        rel = norm[len(r) + 1:]
    else:
        rel = posixpath.normpath(text)
        if rel == ".":
            raise PathError("invalid_argument", f"Path '{raw}' is the project root itself, not a file.")
        if rel == ".." or rel.startswith("../"):
            raise _outside(raw, root)
    if root is not None:
        real_root = os.path.realpath(root)
        real = os.path.realpath(os.path.join(root, rel))
        if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
            raise PathError("path_outside_project",
                            f"Path '{raw}' resolves (through a symbolic link) to {real}, outside the project root. "
                            f"Only files inside the project can be used.")
    return rel


def file_rel(raw: str, root: str | None) -> str:
    """The root-relative POSIX form of a file path; raises :class:`PathError`
    (``path_outside_project``) for a path that leaves the root, symlinks included."""
    return _file_rel(raw, root)


def display(node: Instance) -> str:
    """``ServerScriptService.Server.Main`` for a node (its path without ``game.``)."""
    p = node.path
    return p[5:] if p.startswith("game.") else p


def is_script(api, node: Instance) -> bool:
    return api.is_a(node.class_name, "LuaSourceContainer") or node.class_name in ("Script", "LocalScript", "ModuleScript")


def scripts_under(api, node: Instance, limit: int = 12) -> tuple[list[str], int]:
    """Names (relative to ``node``) of up to ``limit`` scripts below ``node`` and the total
    count, breadth first."""
    out: list[str] = []
    total = 0
    queue: list[tuple[Instance, str]] = [(c, c.name) for c in node.all_children()]
    i = 0
    while i < len(queue) and i < 20000:
        cur, rel = queue[i]
        i += 1
        if is_script(api, cur):
            total += 1
            if len(out) < limit:
                out.append(rel)
        queue.extend((c, f"{rel}.{c.name}") for c in cur.all_children())
    return out, total


def children_listing(node: Instance, limit: int = 12) -> str:
    """``"A (Folder), B (Script), … and 7 more"`` for ``node``'s children."""
    kids = node.all_children()
    parts = [f"{c.name} ({c.class_name})" for c in kids[:limit]]
    if len(kids) > limit:
        parts.append(f"… and {len(kids) - limit} more")
    return ", ".join(parts) if parts else "(none)"
