"""``unknown_class``: a class name that Roblox does not have.

Checked where the name is a string literal: ``Instance.new("Partt")`` (which also needs a
creatable class), ``:IsA("Modle")``, ``:FindFirstChildOfClass(...)``,
``:FindFirstChildWhichIsA(...)``, ``:FindFirstAncestorOfClass(...)`` and
``:FindFirstAncestorWhichIsA(...)``.  Facts come from the shipped Roblox API data.

``IsA`` is not only Instance's: an ``EnumItem`` has ``IsA(enumName)``
(``input.KeyCode:IsA("KeyCode")``) and class libraries give their own tables an ``IsA``
method (``Value:IsA("ReplicatedContainer")``).  So ``x:IsA("Name")`` is an error only
where ``x`` is known to be an Instance (:mod:`luaguard.analysis.resolve`); on any other
receiver a name that is an enum's is fine, and one that is no class is a warning only
when it is a near miss of a class (a likely typo), else nothing.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..fuzzy import best_fix, rank
from ..luau import ast as A
from ..rules.roblox_api.unknown_class import RULE as UNKNOWN_CLASS
from ..rules.wording import did_you_mean, replace_title, string_literal
from .base import CheckContext, api_for, resolver_for

RULE = UNKNOWN_CLASS.id

#: A name this close to a class, on an ``IsA`` whose receiver may not be an Instance, is a
#: likely typo (a warning); farther, it is taken for the receiver's own kind of name.
ISA_TYPO_SCORE = 80.0

def ranked_classes(api, name: str, *, creatable: bool) -> list[tuple[str, float]]:
    """Roblox classes near ``name``, best first, as ``(class, score)`` (:func:`luaguard.fuzzy.rank`):
    among the classes ``Instance.new`` can create (``creatable``) or among all classes.  The
    linter's ``unknown_class`` and the tool-call validator rank with it."""
    return rank(name, sorted(api.creatable) if creatable else api.class_names())


_CLASS_METHODS = frozenset(
    {"IsA", "FindFirstChildOfClass", "FindFirstChildWhichIsA", "FindFirstAncestorOfClass", "FindFirstAncestorWhichIsA"}
)


class UnknownClassCheck:
    rules = {RULE: UNKNOWN_CLASS.severity}

    def check(self, ctx: CheckContext) -> list[Finding]:
        if ctx.ast is None:
            return []
        api = api_for(ctx)
        out = []
        for call in ctx.ast.lookups:
            if type(call) is not A.ExprCall or not call.args or type(call.args[0]) is not A.ExprString:
                continue
            arg = call.args[0]
            name = arg.value
            if name is None:
                continue
            method = call.method
            severity = Severity.ERROR
            if method in _CLASS_METHODS:
                if api.has_class(name):
                    continue
                ranked = ranked_classes(api, name, creatable=False)
                msg = f"'{name}' is not a Roblox class"
                if method == "IsA" and not _instance_receiver(ctx, call):
                    if api.enum_items(name) is not None or not ranked or ranked[0][1] < ISA_TYPO_SCORE:
                        continue  # an EnumItem's IsA, or a table's own IsA
                    severity = Severity.WARNING
            elif method is None and _is_instance_new(call):
                if api.is_creatable(name):
                    continue
                ranked = ranked_classes(api, name, creatable=True)
                if api.has_class(name):
                    msg = f"'{name}' cannot be created with Instance.new"
                else:
                    msg = f"'{name}' is not a Roblox class"
            else:
                continue
            suggestions = [c for c, _ in ranked]
            msg += did_you_mean(suggestions)
            fix = best_fix(ranked)
            out.append(ctx.finding(
                RULE, severity, arg.start, arg.end, msg, suggestions,
                fix_text=string_literal(ctx.text, arg.start, fix) if fix else None, fix_title=replace_title(name, fix),
                # the one clearly best of Roblox's class names, applied unattended only where the
                # finding is certain (an error); a table's own IsA may answer other names
                fix_safe=severity is Severity.ERROR,
            ))
        return out


def _instance_receiver(ctx: CheckContext, call: A.ExprCall) -> bool:
    """Is the receiver of method call ``call`` known to be an Instance (a project node, or
    a value of a known class)?"""
    resolver = resolver_for(ctx)
    if resolver is None:
        return False
    v = resolver.value(call.func.obj)
    return bool(v.nodes) or v.class_name is not None


def _is_instance_new(call: A.ExprCall) -> bool:
    f = call.func
    return (
        type(f) is A.ExprIndexName and f.op == "." and f.name == "new"
        and type(f.obj) is A.ExprGlobal and f.obj.name == "Instance"
    )
