"""Every case in samples/toolcalls/*.jsonl, validated against the sample place.

A case is ``{"case", "call" | "plan", "expect"}``; ``expect`` is one
``{"valid", "codes", ...}`` when the case yields one result, or a list of them (one per
call or plan step).  ``codes`` are the error codes exactly (as a set); optional keys:
``warnings`` (warning codes), ``suggestion`` (the best suggestion of the first error that
has suggestions),
``error_count``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from luaguard.engine import Engine
from luaguard.toolcalls import model as M
from luaguard.toolcalls.api import validate_calls

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"
CASES = ROOT / "samples" / "toolcalls"


def load_cases(name: str) -> list[dict]:
    out = []
    with open(CASES / name, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                case = json.loads(line)
                case["_where"] = f"{name}:{n}"
                out.append(case)
    return out


ALL = [c for f in ("calls.jsonl", "plans.jsonl", "messages.jsonl") for c in load_cases(f)]


@pytest.fixture(scope="module")
def engine() -> Engine:
    e = Engine(PLACE)
    e.reload_project(strict=True)
    return e


def _input(case: dict):
    if "plan" in case:
        return {"plan": case["plan"]}
    return {"call": case["call"]}


@pytest.mark.parametrize("case", ALL, ids=[f"{c['_where']} {c['case']}" for c in ALL])
def test_sample_case(engine: Engine, case: dict) -> None:
    results = validate_calls(engine, _input(case))
    expects = case["expect"] if isinstance(case["expect"], list) else [case["expect"]]
    assert len(results) == len(expects), results
    for res, exp in zip(results, expects):
        codes = sorted({e["code"] for e in res["errors"]})
        assert res["valid"] is exp["valid"], res
        assert codes == sorted(exp["codes"]), res
        if "warnings" in exp:
            assert sorted({w["code"] for w in res["warnings"]}) == sorted(exp["warnings"]), res
        if "suggestion" in exp:  # the best suggestion of the first error that has any
            first = next(e["suggestions"] for e in res["errors"] if e["suggestions"])
            assert first[0] == exp["suggestion"], res
        if "error_count" in exp:
            assert len(res["errors"]) == exp["error_count"], res
        # every result carries one bounded message for the model
        assert 0 < len(res["feedback"]) <= 1500
        assert ("rejected" in res["feedback"]) is (not res["valid"])
        if res["errors"]:  # the feedback leads with the first problem
            assert res["errors"][0]["message"][:100] in res["feedback"]


def test_samples_cover_every_code() -> None:
    seen: set[str] = set()
    valid_seen = False
    for case in ALL:
        for exp in case["expect"] if isinstance(case["expect"], list) else [case["expect"]]:
            seen.update(exp["codes"])
            valid_seen |= exp["valid"]
    issue_codes = {
        M.UNKNOWN_TOOL, M.MISSING_FIELD, M.INVALID_ARGUMENT, M.UNKNOWN_PATH, M.PATH_OUTSIDE_PROJECT,
        M.UNKNOWN_CLASS, M.UNKNOWN_PROPERTY, M.WRONG_PROPERTY_TYPE, M.LOW_CONFIDENCE, M.UNKNOWN_DEPENDENCY,
        M.SELF_DEPENDENCY, M.FORWARD_DEPENDENCY, M.DEPENDENCY_CYCLE,
    }
    # every rule of the code checks shows up on some call's content (errors or warnings)
    from luaguard.checks.registry import rule_ids

    for case in ALL:
        for exp in case["expect"] if isinstance(case["expect"], list) else [case["expect"]]:
            seen.update(exp.get("warnings", ()))
    assert issue_codes <= seen, issue_codes - seen
    assert set(rule_ids()) <= seen, set(rule_ids()) - seen
    assert valid_seen


def test_validating_samples_leaves_the_index_untouched(engine: Engine) -> None:
    from luaguard.project import to_json

    before = json.dumps(to_json(engine.project), sort_keys=True)
    files_before = dict(engine.project.file_instances)
    for case in ALL:
        validate_calls(engine, _input(case))
    assert json.dumps(to_json(engine.project), sort_keys=True) == before
    assert engine.project.file_instances == files_before
