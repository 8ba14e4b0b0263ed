"""``unknown_member``: a property, method or event that the value's class does not have.

Reported where the value's class is known (see :mod:`luaguard.checks.resolve`): a new
instance (``Instance.new("Part").Sizee``), a method call on a known instance
(``part:Destory()``) or on what an API method returns
(``DataStoreService:GetOrderedDataStore("x"):GetSortedAsyncc()``), a data type value
(``Vector3.new(1, 2, 3).Magnitud``), an enum (``Enum.Materal``, ``Enum.Material.Plastik``),
and near misses of a member on instances of a known class
(``game:GetService("Players").LocalPlayr``, ``workspace.CurrentCamra``).  An error where
the class is certain; a warning where the value may be of a subclass that could have
the name (``.name`` on what ``WaitForChild`` returns).  Unknown names on instances of the
project tree that are not near misses of a member stay ``unknown_instance``.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..fuzzy import best_fix, rank
from .base import CheckContext
from .resolve import resolver_for

RULE = "unknown_member"


class UnknownMemberCheck:
    rules = {RULE: Severity.ERROR}

    def check(self, ctx: CheckContext) -> list[Finding]:
        resolver = resolver_for(ctx)
        if resolver is None:
            return []
        out = []
        for miss in resolver.misses:
            if miss.kind not in ("member", "enum", "enum_item"):
                continue
            ranked = rank(miss.name, miss.candidates)
            suggestions = [c for c, _ in ranked]
            if miss.kind == "enum":
                msg = f"'{miss.name}' is not a Roblox enum"
            elif miss.kind == "enum_item":
                msg = f"'{miss.name}' is not an item of {miss.owner}"
            else:
                what = "method" if miss.form == "method" else "member"
                msg = f"'{miss.name}' is not a {what} of {miss.owner}"
            msg += f". Did you mean '{suggestions[0]}'?" if suggestions else "."
            fix = best_fix(ranked)
            fix_text = fix_start = None
            if fix is not None:
                if miss.form in ("dot", "method"):
                    fix_text = fix
                else:
                    quote = ctx.text[miss.start] if ctx.text[miss.start] in "\"'" else '"'
                    fix_text = f"{quote}{fix}{quote}"
            severity = Severity.ERROR if miss.certain else Severity.WARNING
            f = ctx.finding(RULE, severity, miss.start, miss.end, msg, suggestions, fix_text=fix_text,
                            fix_title=f"Replace '{miss.name}' with '{fix}'" if fix else "", fix_start=fix_start,
                            fix_safe=miss.certain)  # the class is certain: its one clearly best member
            f.data["name"] = miss.name
            out.append(f)
        return out
