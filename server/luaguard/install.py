"""How messages tell a user to install one of luaguard's extras.

luaguard is **not on PyPI yet** (the name there is not this project's): it is installed from a
clone of its repository (``pip install /path/to/luaguard``, ``pip install -e .`` in the
clone) or from a wheel or sdist built there (``python -m build``).  So a message never asks
pip for the name ``luaguard`` (that would fetch someone else's package, or nothing): it names
the interpreter luaguard runs in and, for an editable install, the clone it came from, so the
command works as printed; otherwise the clone's path is left for the user to fill in.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def source_checkout() -> Path | None:
    """The clone luaguard runs from when it is installed editable (``pip install -e``): the
    directory holding ``pyproject.toml`` two levels above the package; ``None`` otherwise."""
    root = Path(__file__).resolve().parent.parent.parent
    if (root / "pyproject.toml").is_file() and (root / "server" / "luaguard" / "__init__.py").is_file():
        return root
    return None


def extra_command(extra: str) -> str:
    """A shell command that installs luaguard's ``extra`` (``"mcp"``, ``"guard"``, ...) into
    the running interpreter, e.g. ``/venv/bin/python -m pip install -e '/src/luaguard[mcp]'``,
    or with ``/path/to/luaguard`` and a note when luaguard was not installed from a clone in
    place."""
    clone = source_checkout()
    python = shlex.quote(sys.executable)
    if clone is not None:
        return f"{python} -m pip install -e {shlex.quote(f'{clone}[{extra}]')}"
    return (f"{python} -m pip install '/path/to/luaguard[{extra}]' (the path of a clone of luaguard's repository, "
            f"or a wheel built there: luaguard is not on PyPI yet)")
