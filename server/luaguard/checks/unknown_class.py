"""``unknown_class``: a class name that Roblox does not have.

Checked where the name is a string literal: ``Instance.new("Partt")`` (which also needs a
creatable class), ``:IsA("Modle")``, ``:FindFirstChildOfClass(...)``,
``:FindFirstChildWhichIsA(...)``, ``:FindFirstAncestorOfClass(...)`` and
``:FindFirstAncestorWhichIsA(...)``.  Facts come from the shipped Roblox API data.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..fuzzy import best_fix, rank
from ..luau import ast as A
from .base import CheckContext
from .resolve import _default_api

RULE = "unknown_class"

_CLASS_METHODS = frozenset(
    {"IsA", "FindFirstChildOfClass", "FindFirstChildWhichIsA", "FindFirstAncestorOfClass", "FindFirstAncestorWhichIsA"}
)


class UnknownClassCheck:
    rules = {RULE: Severity.ERROR}

    def check(self, ctx: CheckContext) -> list[Finding]:
        if ctx.ast is None:
            return []
        api = ctx.project.api if ctx.project is not None else _default_api()
        out = []
        for call in ctx.ast.lookups:
            if type(call) is not A.ExprCall or not call.args or type(call.args[0]) is not A.ExprString:
                continue
            arg = call.args[0]
            name = arg.value
            if name is None:
                continue
            method = call.method
            if method in _CLASS_METHODS:
                if api.has_class(name):
                    continue
                ranked = rank(name, api.class_names())
                msg = f"'{name}' is not a Roblox class"
            elif method is None and _is_instance_new(call):
                if api.is_creatable(name):
                    continue
                ranked = rank(name, sorted(api.creatable))
                if api.has_class(name):
                    msg = f"'{name}' cannot be created with Instance.new"
                else:
                    msg = f"'{name}' is not a Roblox class"
            else:
                continue
            suggestions = [c for c, _ in ranked]
            msg += f". Did you mean '{suggestions[0]}'?" if suggestions else "."
            fix = best_fix(ranked)
            quote = ctx.text[arg.start] if ctx.text[arg.start] in "\"'" else '"'
            out.append(ctx.finding(
                RULE, Severity.ERROR, arg.start, arg.end, msg, suggestions,
                fix_text=f"{quote}{fix}{quote}" if fix else None, fix_title=f"Replace '{name}' with '{fix}'" if fix else "",
                fix_safe=True,  # the one clearly best of Roblox's class names
            ))
        return out


def _is_instance_new(call: A.ExprCall) -> bool:
    f = call.func
    return (
        type(f) is A.ExprIndexName and f.op == "." and f.name == "new"
        and type(f.obj) is A.ExprGlobal and f.obj.name == "Instance"
    )
