"""An honest install: the version comes from one place, and no text or message tells a user
to install luaguard from PyPI, where it is not published (``tests/packaging/run.sh`` builds,
checks and installs the sdist and the wheel; it needs the network, so it is a separate tier)."""

from __future__ import annotations

import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

import luaguard
from luaguard.install import extra_command, source_checkout

ROOT = Path(__file__).resolve().parent.parent

#: ``pip install`` (options) then a requirement that is the bare name ``luaguard``, with or
#: without extras or a URL (``luaguard[mcp]``, ``"luaguard @ git+..."``): what PyPI would answer
_FROM_PYPI = re.compile(r"""pip\s+install\s+(?:--?[\w-]+(?:[ =]\S+)?\s+)*["']?luaguard(?=[\[\s"'`@]|$)""")
_PLACEHOLDER = re.compile(r"<[^<>\n]*(repository URL|URL of this repository)[^<>\n]*>")


def texts() -> list[Path]:
    files = [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", ROOT / "editors" / "vscode" / "README.md",
             ROOT / "editors" / "neovim" / "README.md"]
    files += sorted((ROOT / "server" / "luaguard").rglob("*.py"))
    files += sorted((ROOT / "editors" / "vscode" / "src").rglob("*.ts"))
    files += sorted((ROOT / "editors" / "neovim" / "lua").rglob("*.lua"))
    files += sorted((ROOT / "bench").glob("*.py"))
    return files


def test_the_version_comes_from_one_place():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "luaguard.__version__"}
    assert importlib.metadata.version("luaguard") == luaguard.__version__


@pytest.mark.parametrize("path", texts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_install_line_points_at_pypi(path: Path):
    text = path.read_text(encoding="utf-8")
    bad = [m.group(0) for m in _FROM_PYPI.finditer(text)] + [m.group(0) for m in _PLACEHOLDER.finditer(text)]
    assert bad == [], f"{path.relative_to(ROOT)}: {bad}"


def test_the_pattern_catches_what_it_is_for():
    for line in ("pip install luaguard", "pip install 'luaguard[mcp]'", 'pip install "luaguard @ git+https://x"',
                 "python -m pip install --force-reinstall luaguard`", "pip install -q luaguard\n"):
        assert _FROM_PYPI.search(line), line
    for line in ("pip install /path/to/luaguard", "pip install -e '.[guard]'", "pip install ./tools/luaguard-0.1.0.tar.gz",
                 "pip install 'dist/luaguard-0.1.0.tar.gz[mcp]'", "pip install luaguard-helper"):
        assert not _FROM_PYPI.search(line), line


def test_the_readmes_say_it_is_not_on_pypi():
    for rel in ("README.md", "editors/vscode/README.md", "editors/neovim/README.md"):
        assert "not on PyPI yet" in (ROOT / rel).read_text(encoding="utf-8"), rel


def test_extra_command_works_as_printed(monkeypatch):
    # this test run's luaguard is an editable install of this checkout (the README's set-up)
    assert source_checkout() == ROOT
    assert extra_command("mcp") == f"{sys.executable} -m pip install -e '{ROOT}[mcp]'"
    import luaguard.install as I

    monkeypatch.setattr(I, "source_checkout", lambda: None)  # an install from a wheel
    got = I.extra_command("guard")
    assert got.startswith(f"{sys.executable} -m pip install '/path/to/luaguard[guard]'") and "not on PyPI yet" in got


def test_the_vsix_bundles_every_runtime_dependency():
    """``npm run bundle-python`` installs ``editors/vscode/bundled/requirements.txt`` beside
    the package in the .vsix: a dependency pyproject.toml adds (wcmatch, rich, google-re2,
    pathspec ...) and the pin list forgets leaves the bundled server unable to start."""
    def name(req: str) -> str:
        return re.split(r"[\s<>=!~;\[]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")

    deps = {name(d) for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    pins = {name(line) for line in (ROOT / "editors/vscode/bundled/requirements.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")}
    assert deps - pins == set(), f"add to editors/vscode/bundled/requirements.txt: {sorted(deps - pins)}"
