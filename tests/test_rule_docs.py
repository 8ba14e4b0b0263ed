"""The rules' documentation is generated from the rule modules and kept current."""

from __future__ import annotations

from pathlib import Path

from luaguard.cli import main
from luaguard.rules.docs import rule_page, stale_files
from luaguard.rules.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent


def test_generated_docs_are_current():
    """docs/rules/ID.md and the README's rule table are what scripts/gen_rule_docs.py writes."""
    stale = stale_files(ROOT)
    assert stale == [], f"run `python scripts/gen_rule_docs.py`: stale {[str(p.relative_to(ROOT)) for p in stale]}"


def test_rule_command_prints_the_page(capsys):
    assert main(["rule", "unknown_class"]) == 0
    out = capsys.readouterr().out
    assert out == rule_page(all_rules()["unknown_class"])
    assert "# unknown_class" in out and "| fix | safe" in out and "Instance.new(\"Partt\")" in out


def test_rule_command_lists_and_refuses(capsys):
    assert main(["rule"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == sorted(all_rules())
    assert main(["rule", "instance_typo"]) == 2
    assert "unknown rule id 'instance_typo'" in capsys.readouterr().err
