"""Agents' file edits applied in memory: Claude Code's ``Edit``/``MultiEdit`` string
replacements and OpenAI Codex's ``apply_patch`` envelope.

Nothing here touches the disk except to read the file an edit applies to.  Each function
returns :class:`FileChange` records (the file's text before and after) or raises
:class:`EditError` with a message an agent can act on ("old_string not found in
src/server/Main.server.luau", "... found 3 times; pass replace_all or add context").

``apply_patch`` grammar (openai/codex ``codex-rs/apply-patch``, read for the format only)::

    *** Begin Patch
    *** Add File: PATH          then lines starting with '+'
    *** Delete File: PATH
    *** Update File: PATH       optionally '*** Move to: PATH', then chunks:
    @@ [context line]           lines ' ctx', '-old', '+new'; '*** End of File' optional
    *** End Patch
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

#: Reads a file's text, or ``None`` when it does not exist (raises ``OSError`` otherwise).
Reader = Callable[[Path], "str | None"]


class EditError(ValueError):
    """An edit that cannot be applied; ``str()`` says which file and why."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's change: ``old`` is ``None`` for a new file, ``new`` is ``None`` for a
    deleted one; ``path`` is as the agent gave it (absolute or relative to its cwd)."""

    path: str
    old: str | None
    new: str | None


@dataclass(frozen=True, slots=True)
class StringEdit:
    """One ``old_string`` -> ``new_string`` replacement (``replace_all``: every occurrence)."""

    old: str
    new: str
    replace_all: bool = False


def unified_diff(rel: str, old: str | None, new: str | None) -> str:
    """A unified diff (``a/``/``b/`` headers, 3 lines of context) that turns ``old`` into
    ``new`` for the project file ``rel`` - what ``luaguard check --diff`` reads; ``None``:
    the file does not exist on that side (``/dev/null``).  A last line without a newline
    gets one (the diff applier compares whole lines)."""
    a_lines = (old or "").splitlines(keepends=True)
    b_lines = (new or "").splitlines(keepends=True)
    for seq in (a_lines, b_lines):
        if seq and not seq[-1].endswith("\n"):
            seq[-1] += "\n"
    a = f"a/{rel}" if old is not None else "/dev/null"
    b = f"b/{rel}" if new is not None else "/dev/null"
    return "".join(difflib.unified_diff(a_lines, b_lines, a, b, n=3))


def read_text(path: Path) -> str | None:
    """The file's text (UTF-8, invalid bytes replaced), ``None`` if it does not exist.  Only a
    regular file within the size limit is read (:func:`luaguard.files.read_bytes`: raises
    :class:`~luaguard.files.Refused` otherwise)."""
    from ..files import read_bytes

    try:
        return read_bytes(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None


def apply_string_edits(path: str, text: str | None, edits: Sequence[StringEdit]) -> FileChange:
    """Apply ``edits`` in order to ``text`` (the file's current content).

    As Claude Code does: an edit whose ``old`` is empty creates the file (only allowed when
    it does not exist); otherwise ``old`` must occur exactly once unless ``replace_all``.
    Raises :class:`EditError` naming ``path`` and the edit's number when one does not apply.
    """
    if not edits:
        raise EditError(f"{path}: no edits given")
    current = text
    for i, e in enumerate(edits, 1):
        which = f"edit {i} of {len(edits)}" if len(edits) > 1 else "the edit"
        if e.old == "":
            if current not in (None, ""):
                raise EditError(f"{path}: {which} has an empty old_string, but the file already exists and is not empty")
            current = e.new
            continue
        if current is None:
            raise EditError(f"{path}: {which} replaces text in a file that does not exist")
        count = current.count(e.old)
        if count == 0:
            raise EditError(f"{path}: {which}: old_string not found in the file: {_short(e.old)}")
        if count > 1 and not e.replace_all:
            raise EditError(f"{path}: {which}: old_string found {count} times; pass replace_all or "
                            f"add surrounding lines so it is unique: {_short(e.old)}")
        current = current.replace(e.old, e.new) if e.replace_all else current.replace(e.old, e.new, 1)
    return FileChange(path, text, current)


def _short(s: str, limit: int = 80) -> str:
    one = s.strip().replace("\n", "\\n")
    return repr(one if len(one) <= limit else one[: limit - 3] + "...")


BEGIN, END = "*** Begin Patch", "*** End Patch"


def is_patch_envelope(text: str) -> bool:
    """Whether ``text`` holds an ``apply_patch`` envelope."""
    return BEGIN in text


def apply_patch_envelope(envelope: str, base: Path, read: Reader = read_text) -> list[FileChange]:
    """The changes an ``apply_patch`` envelope makes, relative paths taken from ``base``.

    Raises :class:`EditError` for an envelope without ``*** Begin Patch``/``*** End Patch``,
    an unknown ``***`` line, an ``Add File`` line without ``+``, or a chunk whose lines are
    not in the file (naming the file and the patch line).
    """
    lines = envelope.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == BEGIN)
    except StopIteration:
        raise EditError("apply_patch: no '*** Begin Patch' line") from None
    end = next((i for i in range(len(lines) - 1, start, -1) if lines[i].strip() == END), None)
    if end is None:
        raise EditError("apply_patch: no '*** End Patch' line")
    changes: list[FileChange] = []
    i = start + 1
    while i < end:
        ln = lines[i]
        if ln.startswith("*** Add File: "):
            path = ln[len("*** Add File: "):].strip()
            body, i = _collect(lines, i + 1, end)
            out = []
            for n, b in body:
                if not b.startswith("+"):
                    raise EditError(f"apply_patch line {n + 1}: every line of an added file starts with '+' ({path})")
                out.append(b[1:])
            changes.append(FileChange(path, read(_join(base, path)), "\n".join(out) + ("\n" if out else "")))
        elif ln.startswith("*** Delete File: "):
            path = ln[len("*** Delete File: "):].strip()
            changes.append(FileChange(path, read(_join(base, path)), None))
            i += 1
        elif ln.startswith("*** Update File: "):
            path = ln[len("*** Update File: "):].strip()
            i += 1
            move = None
            if i < end and lines[i].startswith("*** Move to: "):
                move = lines[i][len("*** Move to: "):].strip()
                i += 1
            body, i = _collect(lines, i, end)
            old = read(_join(base, path))
            if old is None:
                raise EditError(f"apply_patch: Update File {path}: the file does not exist")
            new = _apply_chunks(path, old, body)
            if move is not None:
                changes.append(FileChange(path, old, None))
                changes.append(FileChange(move, read(_join(base, move)), new))
            else:
                changes.append(FileChange(path, old, new))
        elif ln.strip() == "":
            i += 1
        else:
            raise EditError(f"apply_patch line {i + 1}: expected '*** Add File:', '*** Update File:' or "
                            f"'*** Delete File:', got {_short(ln)}")
    return changes


def patch_paths(envelope: str) -> list[tuple[str, str]]:
    """The files an ``apply_patch`` envelope names, in order, as ``(path, kind)`` with kind
    ``"add"``, ``"update"`` (an ``Update File``, or the target of its ``Move to``) or
    ``"delete"`` (a deleted file, or the source of a move).  Never raises."""
    out: list[tuple[str, str]] = []
    for ln in envelope.splitlines():
        for prefix, kind in (("*** Add File: ", "add"), ("*** Update File: ", "update"),
                             ("*** Delete File: ", "delete"), ("*** Move to: ", "update")):
            if ln.startswith(prefix) and ln[len(prefix):].strip():
                if prefix == "*** Move to: " and out:
                    out[-1] = (out[-1][0], "delete")
                out.append((ln[len(prefix):].strip(), kind))
    return out


def _join(base: Path, path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else base / p


def _collect(lines: list[str], i: int, end: int) -> tuple[list[tuple[int, str]], int]:
    body = []
    while i < end and not (lines[i].startswith("*** ") and lines[i].strip() != "*** End of File"):
        body.append((i, lines[i]))
        i += 1
    return body, i


def _apply_chunks(path: str, text: str, body: list[tuple[int, str]]) -> str:
    """Apply an ``Update File`` body's ``@@`` chunks in order (each found at or after the
    previous one; exact lines first, then with trailing whitespace ignored)."""
    had_nl = text.endswith("\n")
    file_lines = text.split("\n")
    if had_nl:
        file_lines.pop()
    chunks: list[tuple[int, str | None, list[str], list[str]]] = []
    cur: tuple[int, str | None, list[str], list[str]] | None = None
    for n, b in body:
        if b.startswith("@@"):
            cur = (n, b[2:].strip() or None, [], [])
            chunks.append(cur)
            continue
        if b.strip() == "*** End of File":
            continue
        if cur is None:
            cur = (n, None, [], [])
            chunks.append(cur)
        tag, rest = (b[:1], b[1:]) if b else (" ", "")
        if tag == " ":
            cur[2].append(rest)
            cur[3].append(rest)
        elif tag == "-":
            cur[2].append(rest)
        elif tag == "+":
            cur[3].append(rest)
        else:
            raise EditError(f"apply_patch line {n + 1}: a chunk line starts with ' ', '-' or '+' ({path}), got {_short(b)}")
    pos = 0
    for n, anchor, old, new in chunks:
        if anchor is not None:
            at = _find(file_lines, [anchor], pos)
            if at is not None:
                pos = at + 1
        if not old:
            file_lines[pos:pos] = new  # pure insertion after the anchor
            pos += len(new)
            continue
        at = _find(file_lines, old, pos)
        if at is None:
            raise EditError(f"apply_patch line {n + 1}: {path}: these lines are not in the file: {_short(chr(10).join(old))}")
        file_lines[at:at + len(old)] = new
        pos = at + len(new)
    return "\n".join(file_lines) + ("\n" if had_nl else "")


def _find(hay: list[str], needle: list[str], start: int) -> int | None:
    for strip in (False, True):
        want = [s.rstrip() for s in needle] if strip else needle
        for i in range(start, len(hay) - len(needle) + 1):
            window = hay[i:i + len(needle)]
            if (([s.rstrip() for s in window]) if strip else window) == want:
                return i
    return None
