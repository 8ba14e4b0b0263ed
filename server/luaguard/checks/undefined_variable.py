"""``undefined_variable``: reading a global that nothing defines.

A global read is reported when the name is neither a Luau builtin nor a Roblox global
(:mod:`luaguard.project.globals`), nor assigned anywhere in the file (``x = 1``,
``function x() end``), nor listed in the ``extra_globals`` setting.  selene's lint of
the same name is the model.  A file that changes its environment (``getfenv`` /
``setfenv``) is skipped: its globals are not knowable.

Severity follows the evidence: a global the code itself tests for (a whole condition,
``X and ...``, ``X or default``, ``X == nil``) and that is near no name the file knows is
a warning - a host or test harness may define it (``if __LEMUR__ then``); a near miss
stays an error with its suggestion (``if plaer then`` beside ``local player``).
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..fuzzy import best_fix, rank
from ..project.globals import ALL_GLOBALS
from ..luau import ast as A
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
        tested = _tested_names(chunk, {g.name for g in reads})
        out = []
        for g in reads:
            ranked = rank(g.name, candidates)
            if g.name in tested and not ranked:
                # the code tests whether the global is set (`if __HARNESS__ then`, `x == nil`,
                # `x or default`) and it is near no name the file knows (no typo): it copes
                # with its absence, so a missing one is a warning
                msg = f"'{g.name}' is not defined (not a Luau or Roblox global, and never assigned in this file); " \
                      "the code tests whether it is set, so a host may define it"
                out.append(ctx.finding(RULE, Severity.WARNING, g.start, g.end, msg, []))
                continue
            suggestions = [c for c, _ in ranked]
            msg = f"'{g.name}' is not defined"
            msg += did_you_mean(suggestions, " (not a Luau or Roblox global, and never assigned in this file).")
            fix = best_fix(ranked)
            out.append(ctx.finding(RULE, Severity.ERROR, g.start, g.end, msg, suggestions, fix_text=fix,
                                   fix_title=replace_title(g.name, fix),
                                   # unsafe: the name may be meant as a global or local not written yet
                                   fix_safe=False))
        return out


def _tested_names(chunk, names: set[str]) -> set[str]:
    """Of ``names`` (globals read and defined nowhere), those the code tests for presence
    somewhere: a whole condition (``if X then``, ``while not X do``, ``if X then .. else ..``
    as an expression), the left side of ``and``/``or`` (``X and X.y``, ``X or fallback``), or
    compared with ``nil``."""
    out: set[str] = set()

    def bare(e) -> str | None:
        while type(e) is A.ExprGroup:
            e = e.expr
        if type(e) is A.ExprUnary and e.op == "not":
            return bare(e.operand)
        return e.name if type(e) is A.ExprGlobal and e.name in names else None

    for node in A.walk(chunk.body):
        t = type(node)
        got = None
        if t is A.StatIf or t is A.StatWhile or t is A.StatRepeat or t is A.ExprIfElse:
            got = bare(node.condition)
        elif t is A.ExprBinary:
            if node.op in ("and", "or"):
                got = bare(node.left)
            elif node.op in ("==", "~="):
                if type(node.right) is A.ExprNil:
                    got = bare(node.left)
                elif type(node.left) is A.ExprNil:
                    got = bare(node.right)
        if got is not None:
            out.add(got)
    return out
