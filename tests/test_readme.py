"""Every shell command block of README.md runs as written from a fresh clone.

The blocks are fenced ``sh``, ``bash``, ``shell`` or ``console``.  A block whose fence is
preceded, on the line just before it, by ``<!-- readme-test: skip REASON -->`` is not run
(it needs the network, a GPU, an editor ...); REASON may not be empty.

The repository's files (tracked, and untracked ones git does not ignore: what a clone would
have once committed) are copied to a temporary directory, with ``.venv`` pointing at the
Python running the tests (the README's set-up creates it), and each block runs there in one
``bash``, from the repository root, with this Python's ``bin`` first on ``PATH``:

* ``console``: each ``$ command`` (with ``\\``-continued lines) runs in turn, and its output
  (stdout and stderr together, unbuffered) must be the lines shown under it; a line ``...``
  stands for any number of lines;
* ``sh`` and the others: the block runs as a script and every command must exit 0, or 1 -
  luaguard's "found problems" (anything else, "command not found" included, fails).

Blocks run without network (proxies point at a closed port) and with pip in dry-run mode.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SHELL = {"sh", "bash", "shell", "console", "shell-session"}
SKIP = re.compile(r"^<!--\s*readme-test:\s*skip\b\s*(.*?)\s*-->\s*$")
SEP = "@@README-TEST-SEP"


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    body: list[str]
    skip: str | None  # the reason, when marked

    @property
    def id(self) -> str:
        return f"README.md:{self.line}"


def shell_blocks(text: str) -> list[Block]:
    """The shell blocks of a Markdown text, with their skip markers (see the module docstring)."""
    lines = text.splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+|~~~+)\s*([\w+-]*)", lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[:3]):
            j += 1
        if lang in SHELL:
            marker = SKIP.match(lines[i - 1].strip()) if i > 0 else None
            out.append(Block(i + 1, lang, lines[i + 1:j], marker.group(1) if marker else None))
        i = j + 1
    return out


def console_steps(body: list[str]) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of a console block."""
    steps: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(body):
        line = body[i]
        if not line.startswith("$ "):
            if steps:
                steps[-1][1].append(line)
            i += 1
            continue
        cmd = [line[2:]]
        while cmd[-1].endswith("\\") and i + 1 < len(body):
            i += 1
            nxt = body[i]
            cmd.append(nxt[2:] if nxt.startswith("> ") else nxt)
        steps.append(("\n".join(cmd), []))
        i += 1
    return steps


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` lines fit ``expected``, where a line ``...`` matches any run of lines."""
    if not expected:
        return not actual
    if expected[0].strip() == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0].rstrip() == actual[0].rstrip() and matches(expected[1:], actual[1:])


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return lines


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the repository's files, as a fresh clone would have them."""
    dest = tmp_path_factory.mktemp("clone")
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: cannot tell which files a clone has")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    return dest


def environment() -> dict[str, str]:
    """The blocks' environment: this Python first on PATH, no network (every proxy is a
    closed port), and pip in dry-run mode - a block that slipped through unmarked can
    neither download nor change the environment the tests run in."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "github_workspace")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as in a terminal
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env[var] = "http://127.0.0.1:9"
    env["PIP_DRY_RUN"] = "1"
    env["PIP_NO_INDEX"] = "1"
    env["HF_HUB_OFFLINE"] = "1"
    return env


BLOCKS = shell_blocks(README.read_text(encoding="utf-8"))


def test_markers_name_a_reason():
    text = README.read_text(encoding="utf-8")
    for n, line in enumerate(text.splitlines(), 1):
        m = SKIP.match(line.strip())
        if m:
            assert m.group(1), f"README.md:{n}: a readme-test skip marker needs a reason"
    assert any(b.skip is None for b in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_block(block: Block, clone: Path):
    if block.skip is not None:
        pytest.skip(f"marked: {block.skip}")
    if block.lang == "console":
        steps = console_steps(block.body)
        assert steps, f"{block.id}: a console block without a '$ ' command"
        script = "".join(f"{cmd}\n__rc=$?; printf '\\n{SEP}\\n'; (exit $__rc)\n" for cmd, _ in steps)
    else:
        script = ("trap 'rc=$?; if [ $rc -gt 1 ]; then echo \"" + SEP + " failed with exit $rc: $BASH_COMMAND\"; exit $rc; fi' ERR\n"
                  + "\n".join(block.body) + "\n")
    proc = subprocess.run(["bash", "-c", script], cwd=clone, env=environment(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=120)
    output = proc.stdout.decode("utf-8", "replace")
    if block.lang != "console":
        assert SEP not in output and proc.returncode in (0, 1), f"{block.id}:\n{output[-3000:]}"
        return
    parts = output.split(SEP)
    assert len(parts) == len(steps) + 1, f"{block.id}: the block stopped early:\n{output[-3000:]}"
    for (cmd, expected), got in zip(steps, parts):
        actual = _trim(got.lstrip("\n").split("\n"))
        want = _trim(expected)
        assert matches(want, actual), (
            f"{block.id}: `{cmd}` printed\n" + "\n".join(actual) + "\n\nbut the README shows\n" + "\n".join(want))
