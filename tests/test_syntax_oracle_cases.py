"""Replays mutated samples whose verdict was recorded from the reference Luau compiler
(``bench/syntax_oracle.py --write-cases``): luaguard must agree on whether each has a
syntax error, and on the first error's line for almost all of them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from luaguard.engine import Engine
from luaguard.luau.mutate import apply_edit
from luaguard.luau.parser import parse
from luaguard.luau.lexer import tokenize
from luaguard.text import LineIndex

ROOT = Path(__file__).resolve().parent.parent
CASES = [json.loads(line) for line in (ROOT / "tests" / "data" / "syntax_cases.jsonl").read_text().splitlines() if line]
SYNTAX_RULES = {"syntax_error", "unbalanced_bracket", "unclosed_block"}


def first_error_line(text: str) -> int | None:
    lex = tokenize(text)
    chunk = parse(text, lex)
    first = (chunk.errors[0].start,) if chunk.errors else None
    for e in lex.errors:
        if first is None or e.start < first[0]:
            first = (e.start,)
            break
    return None if first is None else LineIndex(text).position(first[0]).line + 1


def test_cases_match_the_compiler():
    assert len(CASES) >= 200
    engine = Engine()
    has_agree = line_agree = both = 0
    for case in CASES:
        original = (ROOT / case["file"]).read_text(encoding="utf-8")
        digest = hashlib.sha1(original.encode("utf-8")).hexdigest()
        assert digest == case["sha1"], f"{case['file']} changed: regenerate tests/data/syntax_cases.jsonl with bench/syntax_oracle.py"
        text = apply_edit(original, tuple(case["edit"]))
        mine = any(f.rule in SYNTAX_RULES for f in engine.lint_text(text, "case.luau"))
        has_agree += mine == case["has_error"]
        if mine and case["has_error"] and case["line"]:
            both += 1
            line_agree += first_error_line(text) == case["line"]
    assert has_agree / len(CASES) >= 0.995
    assert line_agree / both >= 0.95
