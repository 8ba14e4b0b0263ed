"""``deprecated_api``: Roblox APIs that still work but are deprecated.

Deprecated globals (``wait`` → ``task.wait``, ``spawn`` → ``task.spawn``, ``delay`` →
``task.delay``, ``Workspace`` → ``workspace`` ...) and deprecated members on values of a
certain class (``part:Remove()`` → ``Destroy``, ``humanoid:LoadAnimation`` →
``Animator:LoadAnimation``), as tagged in the shipped Roblox API data.  A warning, with a
fix when the replacement is a plain rename - an unsafe one (``--unsafe-fixes``): the
replacement may behave differently (``task.wait`` does not throttle, ``Destroy`` locks ``Parent``).
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..luau import ast as A
from .base import CheckContext
from .resolve import _default_api, resolver_for

RULE = "deprecated_api"


class DeprecatedApiCheck:
    rules = {RULE: Severity.WARNING}

    def check(self, ctx: CheckContext) -> list[Finding]:
        chunk = ctx.ast
        if chunk is None:
            return []
        api = ctx.project.api if ctx.project is not None else _default_api()
        out = []
        deprecated = api.deprecated_globals
        assigned = chunk.globals_assigned
        for g in chunk.global_reads:
            repl = deprecated.get(g.name)
            if repl is not None and g.name not in assigned:
                out.append(ctx.finding(RULE, Severity.WARNING, g.start, g.end,
                                       f"'{g.name}' is deprecated; use '{repl}'", (repl,), fix_text=repl,
                                       fix_title=f"Replace '{g.name}' with '{repl}'",
                                       fix_safe=False))  # unsafe: the replacement behaves differently (task.wait)
        resolver = resolver_for(ctx)
        if resolver is None:
            return out
        for node in chunk.lookups:
            if type(node) is A.ExprCall and node.is_method:
                func = node.func
                base = resolver.value(func.obj)
            elif type(node) is A.ExprIndexName and node.op == ".":
                func = node
                base = resolver.value(node.obj)
            else:
                continue
            cls = base.class_name
            if cls is None or any(n.class_guessed for n in base.nodes):
                continue
            member = api.member(cls, func.name)
            if member is None or not member.deprecated:
                continue
            repl = member.deprecated_replacement
            simple = repl is not None and repl.isidentifier()
            msg = f"{member.declared_in}.{func.name} is deprecated" + (f"; use '{repl}'" if repl else "")
            out.append(ctx.finding(RULE, Severity.WARNING, func.name_start, func.name_end, msg,
                                   (repl,) if repl else (), fix_text=repl if simple else None,
                                   fix_title=f"Replace '{func.name}' with '{repl}'" if simple else "", fix_safe=False))
        return out
