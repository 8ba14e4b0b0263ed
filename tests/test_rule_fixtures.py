"""Rule fixtures (selene's ``tests/lints/<lint>/<case>.lua`` + ``.stderr``, ruff's snapshots).

``tests/rules/<rule id>/<case>.luau`` is linted as the content of
``src/server/Main.server.luau`` of the small Rojo project ``tests/rules/_project`` (a case
named ``<file>@<case>.luau`` names another file of it, ``/`` written as ``+``: the
``gui+Hud+Controller.client.luau@x.luau`` case is ``src/gui/Hud/Controller.client.luau``), in
editor mode (``patch_*`` cases: patch mode), its bytes decoded as ``luaguard check`` decodes a
file.  ``<case>.expected`` beside it holds every finding of every rule, one block each::

    3:12-3:19 error[unknown_instance] 'Modulez' is not a child of ... Did you mean 'Modules'?
        suggestions: Modules
        fix safe 3:12-3:19: 'Modules'

Every rule has a case that reports it and an ``ok_*`` (or ``patch_ok_*``) case that must not;
every fix is as safe as its rule's :class:`~luaguard.rules.base.FixSafety` says.
``pytest tests/test_rule_fixtures.py --update-rule-fixtures`` rewrites the expected files
(review the diff: it is the behaviour change).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from luaguard.engine import Engine
from luaguard.findings import Finding
from luaguard.rules.base import FixSafety
from luaguard.rules.registry import all_rules

RULES_DIR = Path(__file__).resolve().parent / "rules"
PROJECT = RULES_DIR / "_project"
DEFAULT_FILE = "src/server/Main.server.luau"
#: rules no fixture can make: a failure of luaguard itself (no text makes one on purpose)
NO_FIXTURE = {"internal_error"}

CASES = sorted(p for p in RULES_DIR.glob("*/*.luau") if not p.parent.name.startswith("_"))


def _pos(p) -> str:
    return f"{p.line + 1}:{p.character + 1}"


def render(findings: list[Finding]) -> str:
    """The expected-file text of ``findings`` (positions 1-based, ``line:column``)."""
    out = []
    for f in findings:
        out.append(f"{_pos(f.range.start)}-{_pos(f.range.end)} {f.severity.label}[{f.rule}] {f.message}")
        if f.suggestions:
            out.append("    suggestions: " + ", ".join(f.suggestions))
        if f.fix is not None:
            out.append(f"    fix {'safe' if f.fix.safe else 'unsafe'} {_pos(f.fix.range.start)}-{_pos(f.fix.range.end)}: "
                       f"{f.fix.new_text!r}")
    return "".join(line + "\n" for line in out)


_ENGINE: Engine | None = None


def lint_case(case: Path) -> list[Finding]:
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = Engine(PROJECT)
    name = case.stem
    file, _, name = name.rpartition("@")
    target = PROJECT / ("src/" + file.replace("+", "/") if file else DEFAULT_FILE)
    data = case.read_bytes()
    if name.startswith("patch_"):
        return _ENGINE.lint_text(data.decode("utf-8"), target, mode="patch", count=False)
    return _ENGINE.lint_bytes(data, target, count=False)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.stem}" for c in CASES])
def test_rule_fixture(case: Path, request: pytest.FixtureRequest):
    findings = lint_case(case)
    rules = all_rules()
    for f in findings:  # a fix is as safe as its rule says (luaguard.rules.base.FixSafety)
        safety = rules[f.rule].fix
        assert not (safety is FixSafety.NONE and f.fix is not None), f
        assert not (safety is FixSafety.SAFE and f.fix is not None and not f.fix.safe), f
        assert not (safety is FixSafety.UNSAFE and f.fix is not None and f.fix.safe), f
    got = render(findings)
    expected = case.with_suffix(".expected")
    if request.config.getoption("--update-rule-fixtures"):
        expected.write_text(got, encoding="utf-8")
        return
    assert expected.is_file(), f"{expected} is missing: run pytest {__file__} --update-rule-fixtures"
    assert got == expected.read_text(encoding="utf-8")


def test_every_rule_has_fixtures_that_find_it_and_that_must_not():
    """A folder per rule id, none for an id no rule has; in it a case whose expected
    findings hold the rule and an ``ok_*`` case whose expected findings do not."""
    rules = set(all_rules())
    folders = {p.name for p in RULES_DIR.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert folders <= rules, folders - rules
    assert rules - NO_FIXTURE <= folders, rules - NO_FIXTURE - folders
    for rule in sorted(folders):
        finds = ok = False
        for case in sorted((RULES_DIR / rule).glob("*.luau")):
            exp = case.with_suffix(".expected")
            text = exp.read_text(encoding="utf-8") if exp.is_file() else ""
            has = f"[{rule}]" in text
            if case.stem.rpartition("@")[2].removeprefix("patch_").startswith("ok_"):
                assert not has, f"{case}: an ok_ case must not report {rule}"
                ok = True
            elif has:
                finds = True
        assert finds and ok, f"tests/rules/{rule}: needs a case that reports it ({finds}) and an ok_ case ({ok})"
