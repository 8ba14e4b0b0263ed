""""Did you mean" ranking over names, built on rapidfuzz.

Scores are rapidfuzz's normalized optimal-string-alignment similarity (edit distance
with substitutions and adjacent transpositions, 0–100) on case-folded names.  Ties are
broken by the smaller length difference, then by case-sensitive similarity, so
``modules`` ranks ``Modules`` first and ``Modulez`` ranks ``Modules`` above ``Module``.
"""

from __future__ import annotations

from typing import Iterable

from rapidfuzz import process
from rapidfuzz.distance import OSA

#: Below this score a candidate is not offered at all.
MIN_SCORE = 60.0
#: A fix is offered only when the best candidate scores at least this ...
FIX_SCORE = 70.0
#: ... and beats the runner-up by this margin.
FIX_MARGIN = 8.0


def rank(name: str, candidates: Iterable[str], *, limit: int = 5, min_score: float = MIN_SCORE) -> list[tuple[str, float]]:
    """Candidates similar to ``name``, best first, as ``(candidate, score)``.

    ``name`` itself is never returned.  Duplicates in ``candidates`` are ignored.
    """
    choices = [c for c in dict.fromkeys(candidates) if c != name]
    if not choices:
        return []
    found = process.extract(
        name.lower(), choices, scorer=OSA.normalized_similarity, processor=str.lower,
        limit=max(limit * 3, 10), score_cutoff=min_score / 100.0,
    )
    ranked = sorted(
        found,
        key=lambda item: (-round(item[1], 6), abs(len(item[0]) - len(name)), -OSA.normalized_similarity(name, item[0]), item[0]),
    )
    return [(c, round(float(s) * 100.0, 1)) for c, s, _ in ranked[:limit]]


def best_fix(ranked: list[tuple[str, float]]) -> str | None:
    """The candidate to offer as a quick fix, or ``None`` when no candidate is clearly best."""
    if not ranked:
        return None
    best, score = ranked[0]
    if score < FIX_SCORE:
        return None
    if len(ranked) > 1 and score - ranked[1][1] < FIX_MARGIN:
        return None
    return best
