"""Every file luaguard reads or writes goes through here: the one file-access layer, and
which files ``luaguard check`` lints.

**Reading and writing** (:func:`read_bytes`, :func:`read_text`, :func:`read_stamped`,
:func:`write_atomic`).  A repository is untrusted input: a file in it may be a symbolic link
to ``/etc/passwd`` or ``/dev/zero``, a FIFO, or a sparse file of 64 GiB.  So:

* with a ``root`` (the project's), the path is resolved (links followed) and refused when
  its real path is outside the root's real path (:data:`OUTSIDE`);
* only regular files are read or replaced (:data:`NOT_REGULAR`): a FIFO, a device or a
  socket is never opened for reading (opened non-blocking, checked with ``fstat``);
* the size limit is enforced while reading (:data:`TOO_LARGE`): at most ``limit + 1``
  bytes are ever read, whatever the file claims;
* a write replaces a regular file atomically, inside the root, and - given the
  :class:`Stamp` of the text it was computed from - only if the file still has that text
  (:data:`CHANGED`): a line saved meanwhile is never lost.

Each refusal is a :class:`Refused` (an ``OSError``) naming the path and the reason; front
ends say it once (the CLI gathers them into one line, the language server shows each kind
once).

**Which files ``luaguard check`` lints**: the directory walk and what it leaves out.

Every ``.lua``/``.luau`` file is linted wherever it lives (a project's own code may sit in
``src/ReplicatedFirst/Packages/MyGame/`` or a dot-folder such as ``.lune/``), except:

* third-party code a package manager installs and owns: Wally's managed index
  (``_Index`` inside ``Packages``, ``DevPackages`` or ``ServerPackages``), any other
  ``_Index`` tree (Wally packages vendored elsewhere: ``Submodules/Foo/Packages/_Index``,
  ``vendor/_Index``) and npm's ``node_modules``;
* version-control metadata (``.git``, ``.hg``, ``.svn``);
* what git leaves out - paths ``.gitignore`` ignores and git submodules - and the ``exclude`` /
  ``extend-exclude`` patterns of ``luaguard.toml`` (``.gitignore`` semantics, relative to the
  project root): :mod:`luaguard.ignores`;
* files that are not Luau (another extension): skipped with a note when named on the
  command line.

:func:`select_files` returns the files and, per reason, how many were skipped, for the
CLI's ``--stats`` and its "0 files" message.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

# wcmatch and tempfile are imported where they are used: the hook and the servers read files
# through this module and do not pay for them

LUAU_SUFFIXES = (".lua", ".luau")

SKIP_WALLY = "Wally's managed packages (Packages/_Index)"
SKIP_NPM = "npm packages (node_modules)"
SKIP_INDEX = "vendored packages (an _Index tree)"
SKIP_EXCLUDED = "excluded by luaguard.toml's exclude / extend-exclude"
SKIP_NOT_LUAU = "not a Luau file (.lua/.luau)"
SKIP_UNMAPPED = "not mapped by the project file (pass PATHS, e.g. `luaguard check .`, to check them)"
SKIP_OUTSIDE = "links to files outside the project root (not read)"
SKIP_NOT_REGULAR = "not a regular file (a FIFO, device or socket; not read)"

#: :class:`Refused` reasons
OUTSIDE, NOT_REGULAR, TOO_LARGE, CHANGED = "outside_root", "not_regular", "too_large", "changed"
#: what a read returns at most, by default (bytes): the linter's own limit
MAX_READ_BYTES = 16 * 1024 * 1024
_CHUNK = 1 << 20


class Refused(OSError):
    """A read or write the file layer would not do.  ``reason``: :data:`OUTSIDE`,
    :data:`NOT_REGULAR`, :data:`TOO_LARGE` or :data:`CHANGED`; ``path``: as given;
    ``str()``: ``"<path>: <why>"``."""

    def __init__(self, path: str | os.PathLike, reason: str, message: str) -> None:
        super().__init__(f"{os.fspath(path)}: {message}")
        self.path = os.fspath(path)
        self.reason = reason
        self.why = message


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a file held when it was read: its size in bytes, modification time (ns) and the
    SHA-256 of its bytes.  :func:`write_atomic` compares the content hash (equal sizes and
    times alone do not prove equal content)."""

    size: int
    mtime_ns: int
    sha256: str


def inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Is the real path of ``path`` (links resolved) the real path of ``root`` or under it?"""
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def lexically_inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Is ``path`` spelled inside ``root`` (absolute, ``..`` folded, no link resolved), as
    the root is given or as its real path?"""
    p = os.path.normpath(os.path.abspath(path))
    for r in {os.path.normpath(os.path.abspath(root)), os.path.realpath(root)}:
        if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
            return True
    return False


def confine(path: str | os.PathLike, root: str | os.PathLike) -> str:
    """The real path of ``path``; raises :class:`Refused` (:data:`OUTSIDE`) when it is not
    inside ``root`` (a ``..``, an absolute path elsewhere, or a link leading out)."""
    real = os.path.realpath(path)
    real_root = os.path.realpath(root)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        linked = lexically_inside(path, root)
        raise Refused(path, OUTSIDE, "a link to a file outside the project root; not read" if linked
                      else "outside the project root; not read")
    return real


def read_stamped(path: str | os.PathLike, *, root: str | os.PathLike | None = None,
                 limit: int = MAX_READ_BYTES) -> tuple[bytes, Stamp]:
    """The bytes of the regular file ``path`` (at most ``limit``) and its :class:`Stamp`.

    ``root``: refuse a file whose real path is outside it.  Raises :class:`Refused`
    (outside the root, not a regular file, over ``limit`` - found while reading, never by
    reading it all first) or ``OSError`` (``FileNotFoundError`` ...)."""
    real = confine(path, root) if root is not None else os.fspath(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if root is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)  # the path is resolved: a link now is a swap
    fd = os.open(real, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(path, NOT_REGULAR, "not a regular file; not read")
        if st.st_size > limit:
            raise Refused(path, TOO_LARGE, f"file is {st.st_size:,} bytes, over the {limit:,}-byte limit; not read")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise Refused(path, TOO_LARGE, f"file is over the {limit:,}-byte limit; not read")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data, Stamp(len(data), st.st_mtime_ns, hashlib.sha256(data).hexdigest())


def read_bytes(path: str | os.PathLike, *, root: str | os.PathLike | None = None, limit: int = MAX_READ_BYTES) -> bytes:
    """:func:`read_stamped` without the stamp."""
    return read_stamped(path, root=root, limit=limit)[0]


def read_text(path: str | os.PathLike, *, root: str | os.PathLike | None = None, limit: int = MAX_READ_BYTES,
              errors: str = "replace") -> str:
    """:func:`read_bytes` decoded as UTF-8 (a byte-order mark dropped; ``errors`` as for
    ``bytes.decode``)."""
    return read_bytes(path, root=root, limit=limit).decode("utf-8-sig", errors)


def stamp_of(data: bytes) -> Stamp:
    """A :class:`Stamp` of content only (no size or time on disk), for :func:`write_atomic`."""
    return Stamp(len(data), 0, hashlib.sha256(data).hexdigest())


def _still(real: str | os.PathLike, expect: Stamp, shown: str | os.PathLike) -> None:
    try:
        data = read_bytes(real, limit=max(expect.size, 0))
    except FileNotFoundError:
        raise Refused(shown, CHANGED, "the file was deleted while it was being checked; not written") from None
    except Refused:
        data = None
    if data is None or hashlib.sha256(data).hexdigest() != expect.sha256:
        raise Refused(shown, CHANGED, "the file changed while it was being checked; not fixed")


def read_small_text(path: str | os.PathLike, root: str | os.PathLike, limit: int = 1_000_000) -> str | None:
    """A small configuration file's text (``.gitignore``, ``.gitmodules``): ``None`` when
    it is not a regular file, lies (through links) outside ``root``, is over ``limit``
    bytes or cannot be read."""
    try:
        if not regular_file(path):
            return None
        return read_text(path, root=root, limit=limit)
    except (OSError, ValueError):
        return None


def regular_file(path: str | os.PathLike) -> bool:
    """Is ``path`` (links followed) a regular file?  (``False`` when it does not exist.)"""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False

_VCS_DIRS = frozenset({".git", ".hg", ".svn"})
_WALLY_FOLDERS = frozenset({"Packages", "DevPackages", "ServerPackages"})


@dataclass
class FileSelection:
    """The files to lint (in order, no duplicates), how many were skipped per reason (the
    ``SKIP_*`` strings), one note per file named on the command line that was skipped,
    ``refused``: per reason (:data:`SKIP_OUTSIDE`, :data:`SKIP_NOT_REGULAR`) the files left
    out (for one message per reason), and ``roots``: per file, the root its reads and writes
    are confined to (``None``: a file named on the command line outside any project)."""

    files: list[Path] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    refused: dict[str, list[Path]] = field(default_factory=dict)
    roots: dict[Path, Path | None] = field(default_factory=dict)

    def refuse(self, reason: str, path: Path) -> None:
        self.skipped[reason] += 1
        self.refused.setdefault(reason, []).append(path)


def is_managed_dir(parent: str, name: str) -> str | None:
    """The skip reason of directory ``name`` inside ``parent`` (names only), or ``None``."""
    if name == "_Index":
        return SKIP_WALLY if parent in _WALLY_FOLDERS else SKIP_INDEX
    if name == "node_modules":
        return SKIP_NPM
    return None


def excluded(rel: str, patterns: Sequence[str], *, is_dir: bool = False) -> bool:
    """Does an ``exclude`` / ``extend-exclude`` pattern (``.gitignore`` semantics, relative to
    the project root) leave out the root-relative POSIX path ``rel`` or a directory above it?"""
    if not patterns:
        return False
    from .ignores import exclude_spec, matches

    spec = exclude_spec(patterns)
    if spec is None:
        return False
    parts = rel.split("/")
    for end in range(1, len(parts)):
        if matches(spec, "/".join(parts[:end]), True):
            return True
    return bool(matches(spec, rel, is_dir))


def select_files(paths: Iterable[str | Path], *, root: Path | None = None, exclude: Sequence[str] = (),
                 respect_gitignore: bool = True) -> FileSelection:
    """Expand ``paths`` (files and directories) to the files to lint (see the module
    docstring); ``root`` is the project root the ``exclude`` patterns and ``.gitignore``
    files are read from (a directory outside any project: itself); ``respect_gitignore``:
    leave out what ``.gitignore`` ignores and git submodules (:mod:`luaguard.ignores`).
    Raises ``FileNotFoundError`` naming a path that does not exist."""
    from .ignores import IgnoreRules, count_luau

    out = FileSelection()
    seen: set[Path] = set()
    rules: dict[Path, IgnoreRules] = {}

    def add(p: Path, boundary: Path | None) -> None:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            out.files.append(p)
            out.roots[p] = boundary

    def rel_of(p: Path) -> str | None:
        if root is None:
            return None
        try:
            return p.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return None

    def refused(p: Path, boundary: Path | None) -> str | None:
        """The reason ``p`` is not read (a link out of ``boundary``, not a regular file), or None."""
        if boundary is not None and not inside(p, boundary):
            return SKIP_OUTSIDE
        if os.path.lexists(p) and os.path.exists(p) and not regular_file(p):
            return SKIP_NOT_REGULAR
        return None

    for raw in paths:
        p = Path(raw)
        # reads stay inside the project when the path is spelled inside it (a link in the
        # project leading out is refused), else inside the directory named
        in_project = root is not None and (lexically_inside(p, root) or inside(p, root))
        if p.is_dir():
            boundary = root if in_project else p
            base_dir = Path(os.path.abspath(boundary))
            ignore = rules.get(base_dir)
            if ignore is None:
                ignore = rules[base_dir] = IgnoreRules(base_dir, respect_gitignore=respect_gitignore, read=read_small_text)
            for dirpath, dirnames, filenames in os.walk(p):
                base = os.path.basename(dirpath)
                here = Path(os.path.relpath(os.path.abspath(dirpath), base_dir)).as_posix()
                here = "" if here == "." else here
                keep = []
                for d in sorted(dirnames):
                    if d in _VCS_DIRS or d == "__pycache__":
                        continue
                    drel = f"{here}/{d}" if here else d
                    reason = is_managed_dir(base, d)
                    if reason is None and in_project and excluded(drel, exclude, is_dir=True):
                        reason = SKIP_EXCLUDED
                    if reason is None and not drel.startswith("../"):
                        reason = ignore.reason(drel, is_dir=True)
                    if reason is not None:
                        n = count_luau(os.path.join(dirpath, d))
                        if n:  # (an empty submodule checkout is no news)
                            out.skipped[reason] += n
                        continue
                    keep.append(d)
                dirnames[:] = keep
                for name in sorted(filenames):
                    if not name.endswith(LUAU_SUFFIXES):
                        continue
                    f = Path(dirpath) / name
                    rel = rel_of(f)
                    if rel is not None and excluded(rel, exclude):
                        out.skipped[SKIP_EXCLUDED] += 1
                        continue
                    frel = f"{here}/{name}" if here else name
                    why_ignored = ignore.reason(frel) if not frel.startswith("../") else None
                    if why_ignored is not None:
                        out.skipped[why_ignored] += 1
                        continue
                    why = refused(f, boundary)
                    if why is not None:
                        out.refuse(why, f)
                        continue
                    add(f, boundary)
        elif os.path.lexists(p):
            boundary = root if in_project else None
            rel = rel_of(p)
            why = refused(p, boundary)
            if not p.name.endswith(LUAU_SUFFIXES):
                out.skipped[SKIP_NOT_LUAU] += 1
                out.notes.append(f"{raw}: skipped: {SKIP_NOT_LUAU}")
            elif why is not None:
                out.refuse(why, p)
            elif rel is not None and excluded(rel, exclude):
                out.skipped[SKIP_EXCLUDED] += 1
                out.notes.append(f"{raw}: skipped: {SKIP_EXCLUDED}")
            else:
                add(p, boundary)
        else:
            raise FileNotFoundError(str(raw))
    return out


def filter_project_files(files: Iterable[Path], *, root: Path, exclude: Sequence[str] = (),
                         respect_gitignore: bool = True) -> FileSelection:
    """The project's own script files (``luaguard check`` without PATHS) minus package
    managers' installs and ``_Index`` trees, the ``exclude`` patterns and (``respect_gitignore``)
    what ``.gitignore`` ignores and git submodules."""
    from .ignores import IgnoreRules

    ignore = IgnoreRules(root, respect_gitignore=respect_gitignore, read=read_small_text)
    out = FileSelection()
    for f in files:
        try:
            rel = f.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = f.as_posix()
        parts = rel.split("/")
        reason = next((r for a, b in zip(parts, parts[1:]) if (r := is_managed_dir(a, b)) is not None), None)
        if reason is None and parts and parts[0] == "node_modules":
            reason = SKIP_NPM
        if reason is None and not rel.startswith("../"):
            reason = SKIP_EXCLUDED if excluded(rel, exclude) else ignore.reason_with_parents(rel)
        if reason is not None:
            out.skipped[reason] += 1
        elif not inside(f, root):
            out.refuse(SKIP_OUTSIDE, f)
        elif os.path.exists(f) and not regular_file(f):
            out.refuse(SKIP_NOT_REGULAR, f)
        else:
            out.files.append(f)
            out.roots[f] = root
    return out


def write_atomic(path: str | Path, data: bytes, *, root: str | Path | None = None,
                 expect: Stamp | None = None) -> None:
    """Replace the file at ``path`` with ``data``: written to a temporary file in the same
    directory, flushed to disk, given the old file's permission bits (a new file: 0666 less
    the umask), then moved over the old one with ``os.replace`` - a reader sees the old or
    the new file, never half of one.

    A symbolic link is resolved and its target written (the link stays), but with ``root``
    the target must be inside it (:func:`confine`).  Only a regular file is replaced (or a
    new file created).  ``expect``: the :class:`Stamp` of the text the new data was computed
    from; the file is replaced only if it still has that content (checked once more just
    before the replace), else :class:`Refused` (``CHANGED``) and nothing is written.
    Raises :class:`Refused` or ``OSError`` (the temporary file is removed)."""
    import tempfile

    target = Path(confine(path, root) if root is not None else os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise Refused(path, NOT_REGULAR, "not a regular file; not written")
    if expect is not None:
        _still(target, expect, path)
    if st is not None:
        mode = stat.S_IMODE(st.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if expect is not None:
            _still(target, expect, path)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def unmapped_files(root: Path, mapped: Iterable[Path], *, exclude: Sequence[str] = (),
                   respect_gitignore: bool = True) -> list[Path]:
    """The ``.lua``/``.luau`` files under ``root`` (the walk of :func:`select_files`:
    package managers' installs, VCS folders, ``exclude`` and what git leaves out left out)
    that are not in ``mapped`` - what ``luaguard check`` without PATHS does not lint."""
    keys = {p.resolve() for p in mapped}
    return [p for p in select_files([root], root=root, exclude=exclude, respect_gitignore=respect_gitignore).files
            if p.resolve() not in keys]
