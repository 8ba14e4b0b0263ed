"""``unknown_member``: a property, method or event that the value's class does not have.

Reported where the value's class is known and no child can have the name (see
:mod:`luaguard.analysis.resolve`): a new instance (``Instance.new("Part").Sizee``), a
method call on a known instance (``part:Destory()``) or on what an API method returns
(``DataStoreService:GetOrderedDataStore("x"):GetSortedAsyncc()``), an assignment to a
name that is no property (``part.Anchord = true``: Roblox sets properties, never
children), a data type value (``Vector3.new(1, 2, 3).Magnitud``), an enum
(``Enum.Materal``, ``Enum.Material.Plastik``), and near misses of a member on a closed
project node where nothing creates a child of that name (``script.Parent.Touchd`` on a
Part).  On an instance, a name that is no member reads a child: under an open container
(``game.ReplicatedStorage.InventoryChanged``) or on a value whose children are not known
(``shopFrame.Close``) it is never a member miss (see ``unverified_instance``).  An error
where the class is certain (also outside the project's DataModel for a method call: it
fails in any host); a warning where the value may be of a subclass that could have the
name.  The fix is safe only for an error with one clearly best member.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..fuzzy import best_fix, rank
from ..rules.roblox_api.unknown_member import RULE as UNKNOWN_MEMBER
from ..rules.wording import did_you_mean, replace_title, string_literal
from .base import CheckContext, resolver_for

RULE = UNKNOWN_MEMBER.id


class UnknownMemberCheck:
    rules = {RULE: UNKNOWN_MEMBER.severity}

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
            elif miss.form == "assign":
                msg = f"'{miss.name}' is not a property of {miss.owner}: assigning it fails at run time"
            else:
                what = "method" if miss.form == "method" else "member"
                msg = f"'{miss.name}' is not a {what} of {miss.owner}"
            msg += did_you_mean(suggestions)
            fix = best_fix(ranked) if miss.same_kind else None  # (an event is no fix for a method call)
            fix_text = fix_start = None
            if fix is not None:
                if miss.form in ("dot", "method", "assign"):
                    fix_text = fix
                else:
                    fix_text = string_literal(ctx.text, miss.start, fix)
            severity = Severity.ERROR if miss.certain else Severity.WARNING
            f = ctx.finding(RULE, severity, miss.start, miss.end, msg, suggestions, fix_text=fix_text,
                            fix_title=replace_title(miss.name, fix), fix_start=fix_start,
                            fix_safe=miss.certain)  # the class is certain: its one clearly best member
            f.data["name"] = miss.name
            if miss.impossible:
                f.data["impossible"] = True
            out.append(f)
        return out
