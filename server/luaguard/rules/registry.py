"""Every rule, found by walking :mod:`luaguard.rules`' family packages (no hand list).

A rule module is any module of a family package (``luaguard/rules/<family>/<id>.py``); it
defines ``RULE``, a :class:`~luaguard.rules.base.Rule` whose ``id`` is the module's name
(:func:`all_rules` raises ``RuntimeError`` otherwise, so a renamed file cannot drift from
its id).  Rules are listed sorted by id.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from ..findings import Severity
from .base import Rule

_FAMILIES = ("syntax", "completeness", "instances", "roblox_api", "file_problems", "suppressions")


@lru_cache(maxsize=None)
def _load() -> tuple[Rule, ...]:
    found: list[Rule] = []
    for family in _FAMILIES:
        pkg = importlib.import_module(f"{__package__}.{family}")
        for info in pkgutil.iter_modules(pkg.__path__):
            module = importlib.import_module(f"{pkg.__name__}.{info.name}")
            rule = getattr(module, "RULE", None)
            if not isinstance(rule, Rule) or rule.id != info.name:
                raise RuntimeError(f"{module.__name__}: RULE must be a Rule whose id is {info.name!r}")
            found.append(rule)
    return tuple(sorted(found, key=lambda r: r.id))


def all_rules() -> dict[str, Rule]:
    """Every rule by id, sorted by id."""
    return {r.id: r for r in _load()}


def get_rule(rule_id: str) -> Rule | None:
    """The :class:`Rule` of ``rule_id``, or ``None`` for an id no rule module defines."""
    return all_rules().get(rule_id)


def check_rule_ids() -> dict[str, Severity]:
    """The ids the checks report (every rule but the file rules) with their default severity."""
    return {r.id: r.severity for r in _load() if not r.file_rule}


def all_rule_ids() -> dict[str, Severity]:
    """Every rule id ``luaguard check`` can report on a file, with its default severity:
    the ids ``--select``/``--ignore`` and ``luaguard.toml``'s ``select``/``ignore`` accept."""
    return {r.id: r.severity for r in _load()}


def roblox_api_rules() -> frozenset[str]:
    """The ids of the rules that assume the file runs in Roblox (:attr:`Rule.roblox_api`)."""
    return frozenset(r.id for r in _load() if r.roblox_api)
