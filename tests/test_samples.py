"""The bundled samples: the place is clean, each patch gets exactly its findings, and
every quick fix clears what it fixes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from luaguard.engine import Engine
from luaguard.findings import Severity
from luaguard.text import LineIndex

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
PATCHES = ROOT / "samples" / "patches"
MANIFEST = json.loads((PATCHES / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(PLACE)


def test_place_has_no_error_findings(engine):
    files = engine.script_files()
    assert len(files) >= 20
    for f in files:
        errors = [x for x in engine.lint_file(f) if x.severity is Severity.ERROR]
        assert errors == [], (f, [x.message for x in errors])


def test_manifest_covers_every_rule_and_clean_patches():
    rules = {e["rule"] for case in MANIFEST for e in case["expect"]}
    assert {"unknown_instance", "unknown_service", "placeholder", "unbalanced_bracket", "unclosed_block", "syntax_error"} <= rules
    assert sum(1 for case in MANIFEST if not case["expect"]) >= 6


@pytest.mark.parametrize("case", MANIFEST, ids=[c["patch"] for c in MANIFEST])
def test_patch_gets_exactly_its_findings(engine, case):
    text = (PATCHES / case["patch"]).read_text(encoding="utf-8")
    found = engine.lint_text(text, PLACE / case["target"], mode="patch")
    got = sorted((f.rule, f.range.start.line + 1) for f in found)
    want = sorted((e["rule"], e["line"]) for e in case["expect"])
    assert got == want, [f.message for f in found]
    for e in case["expect"]:
        if "suggestion" in e:
            f = next(f for f in found if f.rule == e["rule"] and f.range.start.line + 1 == e["line"])
            assert f.suggestions and f.suggestions[0] == e["suggestion"], f.message


def apply_fix(text: str, fix) -> str:
    lines = LineIndex(text)
    start, end = lines.offset(fix.range.start), lines.offset(fix.range.end)
    return text[:start] + fix.new_text + text[end:]


def test_every_quick_fix_clears_its_finding(engine):
    fixed_any = 0
    for case in MANIFEST:
        text = (PATCHES / case["patch"]).read_text(encoding="utf-8")
        target = PLACE / case["target"]
        for f in engine.lint_text(text, target, mode="patch"):
            if f.fix is None:
                continue
            fixed_any += 1
            after = engine.lint_text(apply_fix(text, f.fix), target, mode="patch")
            # The same mistake is gone (a fix may reveal the next wrong segment of a path).
            same = [
                g for g in after
                if g.rule == f.rule and g.range.start.line == f.range.start.line and g.data.get("name") == f.data.get("name")
            ]
            assert same == [], (case["patch"], f.message, [g.message for g in same])
    assert fixed_any >= 8
