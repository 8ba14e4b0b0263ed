"""Seeded token-level mutations of Luau source, for syntax-error experiments.

Used by ``bench/syntax_oracle.py`` (agreement with the reference compiler), by the
hallucination benchmark and by tests.  A mutation deletes, duplicates or swaps tokens
of the lexer's token list, or deletes one closer (``)`` ``]`` ``}`` ``end`` ``until``);
the rest of the text (comments, spacing) is kept.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .lexer import EOF, tokenize

CLOSERS = frozenset({")", "]", "}", "end", "until"})


@dataclass(frozen=True, slots=True)
class Mutation:
    """``kind`` is ``delete``/``duplicate``/``swap``/``delete_closer``; ``offset`` is where
    the change happened in the original text; ``edit`` is ``(start, end, replacement)``
    on the original text; ``text`` the mutated source."""

    kind: str
    offset: int
    token: str
    edit: tuple[int, int, str]
    text: str


def apply_edit(text: str, edit: tuple[int, int, str]) -> str:
    """Apply a ``(start, end, replacement)`` edit."""
    start, end, new = edit
    return text[:start] + new + text[end:]


def _make(kind: str, text: str, token: str, edit: tuple[int, int, str]) -> Mutation:
    return Mutation(kind, edit[0], token, edit, apply_edit(text, edit))


def mutate(text: str, rng: random.Random, kinds: tuple[str, ...] = ("delete", "duplicate", "swap")) -> Mutation | None:
    """One random mutation of ``text`` (``None`` when it has no suitable token)."""
    toks = [t for t in tokenize(text).tokens if t.kind != EOF]
    if not toks:
        return None
    kind = rng.choice(kinds)
    if kind == "delete_closer":
        closers = [t for t in toks if t.kind in CLOSERS]
        if not closers:
            return None
        t = rng.choice(closers)
        return _make(kind, text, t.text, (t.start, t.end, ""))
    i = rng.randrange(len(toks))
    t = toks[i]
    if kind == "delete":
        return _make(kind, text, t.text, (t.start, t.end, ""))
    if kind == "duplicate":
        return _make(kind, text, t.text, (t.end, t.end, " " + t.text))
    if i + 1 >= len(toks):
        return None
    u = toks[i + 1]
    between = text[t.end: u.start]
    return _make(kind, text, t.text, (t.start, u.end, u.text + between + t.text))
