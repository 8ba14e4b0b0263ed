"""The file-access layer itself (:mod:`luaguard.files`): what every reader and writer of
luaguard goes through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from luaguard.files import (
    CHANGED, NOT_REGULAR, OUTSIDE, TOO_LARGE, Refused, read_bytes, read_stamped, stamp_of, write_atomic,
)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (root / "src" / "a.luau").write_text("print(1)\n")
    return root, outside


def _reason(fn, *args, **kwargs) -> str:
    with pytest.raises(Refused) as info:
        fn(*args, **kwargs)
    return info.value.reason


def test_reads_stay_inside_the_root(tree) -> None:
    root, outside = tree
    os.symlink(outside / "secret.txt", root / "src" / "link.luau")
    os.symlink(outside, root / "src" / "dir")
    assert read_bytes(root / "src" / "a.luau", root=root) == b"print(1)\n"
    for path in (root / "src" / "link.luau", root / "src" / "dir" / "secret.txt", root / ".." / "outside" / "secret.txt",
                 outside / "secret.txt"):
        assert _reason(read_bytes, path, root=root) == OUTSIDE
    os.symlink(root / "src" / "a.luau", root / "src" / "inner.luau")  # a link that stays inside is followed
    assert read_bytes(root / "src" / "inner.luau", root=root) == b"print(1)\n"


def test_only_regular_files_are_read(tree) -> None:
    root, _ = tree
    os.mkfifo(root / "src" / "pipe.luau")
    assert _reason(read_bytes, root / "src" / "pipe.luau", root=root) == NOT_REGULAR  # no writer: open would block
    assert _reason(read_bytes, "/dev/zero") == NOT_REGULAR
    assert _reason(read_bytes, root / "src", root=root) == NOT_REGULAR  # a directory


def test_the_size_limit_holds_while_reading(tree) -> None:
    root, _ = tree
    big = root / "src" / "big.luau"
    with open(big, "wb") as fh:
        fh.truncate(10 * 1024 ** 3)  # sparse: 10 GiB claimed, nothing allocated
    assert _reason(read_bytes, big, root=root, limit=1024) == TOO_LARGE
    big.write_bytes(b"x" * 1025)
    assert _reason(read_bytes, big, root=root, limit=1024) == TOO_LARGE
    assert read_bytes(big, root=root, limit=1025) == b"x" * 1025


def test_writes_stay_inside_and_follow_only_inner_links(tree) -> None:
    root, outside = tree
    os.symlink(outside / "secret.txt", root / "src" / "link.luau")
    assert _reason(write_atomic, root / "src" / "link.luau", b"pwned\n", root=root) == OUTSIDE
    assert (outside / "secret.txt").read_text() == "secret\n"
    os.symlink(root / "src" / "a.luau", root / "src" / "inner.luau")
    write_atomic(root / "src" / "inner.luau", b"print(2)\n", root=root)
    assert (root / "src" / "inner.luau").is_symlink() and (root / "src" / "a.luau").read_bytes() == b"print(2)\n"
    os.mkfifo(root / "src" / "pipe.luau")
    assert _reason(write_atomic, root / "src" / "pipe.luau", b"x", root=root) == NOT_REGULAR


def test_a_write_happens_only_over_the_text_it_was_computed_from(tree) -> None:
    root, _ = tree
    path = root / "src" / "a.luau"
    data, stamp = read_stamped(path, root=root)
    path.write_text("print(1)\nprint('saved meanwhile')\n")
    assert _reason(write_atomic, path, b"fixed\n", root=root, expect=stamp) == CHANGED
    assert "saved meanwhile" in path.read_text()
    write_atomic(path, b"fixed\n", root=root, expect=stamp_of(path.read_bytes()))
    assert path.read_bytes() == b"fixed\n"
    assert sorted(p.name for p in (root / "src").iterdir()) == ["a.luau"]  # no temporary file left
    assert data == b"print(1)\n"
