"""What changed since a git revision: the files behind ``luaguard check --since REF``.

``--since REF`` compares the working tree (commits, staged and unstaged changes, and
untracked files that ``.gitignore`` does not ignore) with the **merge base** of ``REF``
and ``HEAD`` - git's ``REF...`` three-dot meaning, what a pull request shows: commits
that landed on ``REF`` after the branch left it are not the branch's change.

Everything comes from the ``git`` program (``rev-parse``, ``merge-base``, ``diff
--name-status``, ``ls-files --others``, ``cat-file``), run in the repository with external
diff drivers, text conversion and the file-system monitor turned off, so nothing the
repository configures is run.  Paths are POSIX, relative to the repository's top level.

Errors: :class:`GitError`, whose ``str()`` says what git said and what to do (a shallow
clone without ``REF``: fetch it, or check out with ``fetch-depth: 0``).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

#: ``git -c`` options for every call: nothing configured in the repository runs
_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.quotepath=false", "-c", "diff.external=")


class GitError(Exception):
    """git is missing, the directory is not in a repository, or a revision is unknown."""


@dataclass(frozen=True, slots=True)
class Change:
    """One changed file: ``status`` is ``"added"`` (new, or untracked) or ``"modified"``
    (``"renamed"`` when ``old_path`` differs); ``old_path`` is its path at the merge base
    (``None`` for an added file)."""

    path: str
    status: str
    old_path: str | None


@dataclass
class Changes:
    """The files changed between ``base`` (the merge base's commit id) and the working
    tree of the repository at ``toplevel``, by path; deleted files are left out."""

    toplevel: Path
    ref: str
    base: str
    ref_commit: str = ""
    files: dict[str, Change] = field(default_factory=dict)

    def old_bytes(self, change: Change) -> bytes | None:
        """The file's content at the merge base (``None`` for an added file)."""
        if change.old_path is None:
            return None
        return _git(self.toplevel, "cat-file", "blob", f"{self.base}:{change.old_path}", binary=True)

    def relative(self, path: str | Path) -> str | None:
        """``path`` as a key of :attr:`files` (``None`` outside the repository)."""
        try:
            return Path(os.path.realpath(path)).relative_to(self.toplevel).as_posix()
        except ValueError:
            return None


def _git(cwd: Path, *args: str, binary: bool = False):
    try:
        proc = subprocess.run(["git", *_SAFE, *args], cwd=cwd, capture_output=True, timeout=120,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"})
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish in 120 s") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {msg[-1] if msg else f'exit status {proc.returncode}'}")
    return proc.stdout if binary else proc.stdout.decode("utf-8", "surrogateescape")


def changes_since(ref: str, cwd: Path) -> Changes:
    """The files changed since the merge base of ``ref`` and ``HEAD`` in the repository
    holding ``cwd`` (see the module docstring).  Raises :class:`GitError`."""
    try:
        top = Path(_git(cwd, "rev-parse", "--show-toplevel").strip())
    except GitError as exc:
        raise GitError(f"{cwd} is not inside a git repository ({exc})") from None
    top = Path(os.path.realpath(top))
    if ref.startswith("-"):
        raise GitError(f"'{ref}' is not a revision")
    try:
        ref_commit = _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").strip()
    except GitError:
        shallow = _git(top, "rev-parse", "--is-shallow-repository").strip() == "true"
        hint = (" (this clone is shallow: fetch it, e.g. `git fetch origin main`, or check out with "
                "actions/checkout's `fetch-depth: 0`)" if shallow else "")
        raise GitError(f"'{ref}' is not a commit of this repository{hint}") from None
    try:
        base = _git(top, "merge-base", "--end-of-options", ref, "HEAD").strip()
    except GitError:
        raise GitError(f"'{ref}' and HEAD have no common ancestor in this clone (a shallow clone: fetch more "
                       f"history, e.g. actions/checkout's `fetch-depth: 0`)") from None
    out = Changes(top, ref, base, ref_commit)
    listed = _git(top, "diff", "--no-ext-diff", "--no-textconv", "--name-status", "-z", "-M", base, "--").split("\0")
    i = 0
    while i < len(listed) and listed[i]:
        status = listed[i]
        if status[:1] in ("R", "C"):
            old, new = listed[i + 1], listed[i + 2]
            i += 3
            if status[0] == "R":
                out.files[new] = Change(new, "renamed", old)
            else:  # a copy is a new file
                out.files[new] = Change(new, "added", None)
            continue
        path = listed[i + 1]
        i += 2
        if status == "D":
            continue
        out.files[path] = Change(path, "added" if status == "A" else "modified", None if status == "A" else path)
    for path in _git(top, "ls-files", "-z", "--others", "--exclude-standard").split("\0"):
        if path and path not in out.files:
            out.files[path] = Change(path, "added", None)
    return out
