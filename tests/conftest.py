"""Every test runs without the developer's own luaguard settings: no user config file
(``$LUAGUARD_USER_CONFIG`` points at a file that does not exist) and no
``LUAGUARD_COMPLETION_*`` variables - the user's layer of :func:`luaguard.workspace.read_project_settings`
is what a test sets itself."""

from __future__ import annotations

import pytest

#: luaguard.config.ENV_SETTINGS (spelt out: this file imports nothing from luaguard)
ENV_SETTINGS = ("LUAGUARD_COMPLETION_ENDPOINT", "LUAGUARD_COMPLETION_ENDPOINT_MODEL",
                "LUAGUARD_COMPLETION_ENDPOINT_PROJECT", "LUAGUARD_COMPLETION_MODEL")


@pytest.fixture(autouse=True)
def _no_user_settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LUAGUARD_USER_CONFIG", str(tmp_path_factory.getbasetemp() / "no-user-config.toml"))
    for name in ENV_SETTINGS:
        monkeypatch.delenv(name, raising=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-rule-fixtures", action="store_true", default=False,
                     help="rewrite the expected findings of tests/rules/<rule>/<case>.luau (tests/test_rule_fixtures.py)")
