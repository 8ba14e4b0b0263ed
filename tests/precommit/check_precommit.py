"""luaguard's .pre-commit-hooks.yaml under the real pre-commit, in a temporary game repository.

Run by ``tests/precommit/run.sh`` (pre-commit on PATH, network for its pip install); not part
of ``pytest -q`` (the file name does not match ``test_*.py``).

The hooks repository is this checkout's files (committed or not: what would be pushed),
committed to a git repository at ``$LUAGUARD_PRECOMMIT_CACHE/luaguard-src`` with fixed author
and dates, so the commit - and pre-commit's environment for it - stays the same while the
sources do.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("LUAGUARD_PRECOMMIT_CACHE", Path.home() / ".cache" / "luaguard" / "precommit"))
FIXED = {
    "GIT_AUTHOR_NAME": "luaguard", "GIT_AUTHOR_EMAIL": "luaguard@example.invalid",
    "GIT_COMMITTER_NAME": "luaguard", "GIT_COMMITTER_EMAIL": "luaguard@example.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00+0000",
}

BAD = 'local Players = game:GetService("Playerz")\nprint(Players)\n'
CLEAN = 'local Players = game:GetService("Players")\nprint(Players.LocalPlayer)\n'


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **FIXED}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def pre_commit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **FIXED, "PRE_COMMIT_HOME": str(CACHE / "home"), "PRE_COMMIT_COLOR": "never"}
    proc = subprocess.run(["pre-commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    print(f"\n$ pre-commit {' '.join(args)}   (exit {proc.returncode})\n{proc.stdout}{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def hooks_repo() -> tuple[Path, str]:
    """This checkout as a hooks repository: ``(path, commit)``."""
    return snapshot_checkout()


def snapshot_checkout() -> tuple[Path, str]:
    """Commit this checkout's files (committed or not) to ``$LUAGUARD_PRECOMMIT_CACHE/luaguard-src``
    with fixed author and dates; returns ``(path, commit)``."""
    src = CACHE / "luaguard-src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    listed = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, listed):
        f = REPO / rel
        if f.is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, src / rel)
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "luaguard under test")
    return src, git(src, "rev-parse", "HEAD").strip()


def make_game(root: Path, src: Path, rev: str, hooks: list[str]) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "default.project.json").write_text(json.dumps({
        "name": "game", "tree": {"$className": "DataModel", "ServerScriptService": {"Server": {"$path": "src/server"}}}}))
    (root / "src" / "server").mkdir(parents=True)
    (root / "src" / "server" / "Clean.server.luau").write_text(CLEAN)
    (root / "README.md").write_text('game:GetService("Playerz") in a README is not Luau\n')
    config = {"repos": [{"repo": str(src), "rev": rev, "hooks": [{"id": h} for h in hooks]}]}
    (root / ".pre-commit-config.yaml").write_text(json.dumps(config, indent=2) + "\n")  # JSON is YAML
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "game")
    return root


def test_luaguard_hook_on_staged_files_and_all_files(tmp_path, hooks_repo):
    src, rev = hooks_repo
    game = make_game(tmp_path / "game", src, rev, ["luaguard"])
    proc = pre_commit(game, "run", "--all-files")
    assert proc.returncode == 0 and "luaguard" in proc.stdout and "Passed" in proc.stdout

    bad = game / "src" / "server" / "Bad.server.luau"
    bad.write_text(BAD)
    proc = pre_commit(game, "run")  # staged files only: Bad is not staged
    assert proc.returncode == 0, proc.stdout
    git(game, "add", str(bad))
    proc = pre_commit(game, "run")
    assert proc.returncode == 1
    assert "src/server/Bad.server.luau:1:33: error[unknown_service] 'Playerz' is not a Roblox service. Did you mean 'Players'?" in proc.stdout
    assert "Found 1 error in 1 of 1 file." in proc.stdout  # only the staged Luau file; README.md is not passed

    proc = pre_commit(game, "run", "--all-files")
    assert proc.returncode == 1
    assert "Found 1 error in 1 of 2 files." in proc.stdout


def test_local_system_hook_of_the_readme(tmp_path):
    """The README's `repo: local` hook: luaguard from the environment (PATH), no hooks repository."""
    if shutil.which("luaguard") is None:
        pytest.skip("luaguard is not on PATH (run.sh installs it into its venv)")
    game = make_game(tmp_path / "game", Path("unused"), "unused", [])
    config = {"repos": [{"repo": "local", "hooks": [{
        "id": "luaguard", "name": "luaguard", "entry": "luaguard check", "language": "system",
        "files": "\\.luau?$", "require_serial": True}]}]}
    (game / ".pre-commit-config.yaml").write_text(json.dumps(config, indent=2) + "\n")
    bad = game / "src" / "server" / "Bad.server.luau"
    bad.write_text(BAD)
    git(game, "add", "-A")
    proc = pre_commit(game, "run")
    assert proc.returncode == 1
    assert "src/server/Bad.server.luau:1:33: error[unknown_service] 'Playerz' is not a Roblox service." in proc.stdout
    assert "Found 1 error in 1 of 1 file." in proc.stdout
    bad.write_text(BAD.replace("Playerz", "Players"))
    git(game, "add", "-A")
    proc = pre_commit(game, "run")
    assert proc.returncode == 0 and "Passed" in proc.stdout


def test_luaguard_fix_hook_fixes_the_file(tmp_path, hooks_repo):
    src, rev = hooks_repo
    game = make_game(tmp_path / "game", src, rev, ["luaguard-fix"])
    bad = game / "src" / "server" / "Bad.server.luau"
    bad.write_text(BAD)
    git(game, "add", str(bad))
    proc = pre_commit(game, "run", "--all-files")
    assert proc.returncode == 1 and "files were modified by this hook" in proc.stdout
    assert "Fixed 1 problem in 1 file." in proc.stdout
    assert bad.read_text() == BAD.replace("Playerz", "Players")
    git(game, "add", str(bad))
    proc = pre_commit(game, "run", "--all-files")
    assert proc.returncode == 0, proc.stdout
