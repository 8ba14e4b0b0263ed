"""``undefined_variable``: reading a global that nothing defines.

A global read is reported when the name is neither a Luau builtin nor a Roblox global
(:mod:`luaguard.project.globals`), nor assigned anywhere in the file (``x = 1``,
``function x() end``), nor listed in the ``extra_globals`` setting.  selene's lint of
the same name is the model.  A file that changes its environment (``getfenv`` /
``setfenv``) is skipped: its globals are not knowable.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..fuzzy import best_fix, rank
from ..project.globals import ALL_GLOBALS
from ..rules.roblox_api.undefined_variable import RULE as UNDEFINED_VARIABLE
from ..rules.wording import did_you_mean, replace_title
from .base import CheckContext

RULE = UNDEFINED_VARIABLE.id


class UndefinedVariableCheck:
    rules = {RULE: UNDEFINED_VARIABLE.severity}

    def check(self, ctx: CheckContext) -> list[Finding]:
        chunk = ctx.ast
        if chunk is None:
            return []
        extra = set(ctx.options.get("extra_globals", ()))
        defined = chunk.globals_assigned
        reads = [g for g in chunk.global_reads if g.name not in ALL_GLOBALS and g.name not in defined and g.name not in extra]
        if not reads or any(g.name in ("getfenv", "setfenv") for g in chunk.global_reads):
            return []
        candidates = sorted(ALL_GLOBALS | defined | chunk.local_names | extra)
        out = []
        for g in reads:
            ranked = rank(g.name, candidates)
            suggestions = [c for c, _ in ranked]
            msg = f"'{g.name}' is not defined"
            msg += did_you_mean(suggestions, " (not a Luau or Roblox global, and never assigned in this file).")
            fix = best_fix(ranked)
            out.append(ctx.finding(RULE, Severity.ERROR, g.start, g.end, msg, suggestions, fix_text=fix,
                                   fix_title=replace_title(g.name, fix),
                                   # unsafe: the name may be meant as a global or local not written yet
                                   fix_safe=False))
        return out
