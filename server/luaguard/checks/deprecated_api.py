"""``deprecated_api``: Roblox APIs that still work but are deprecated.

Deprecated globals (``wait`` → ``task.wait``, ``spawn`` → ``task.spawn``, ``delay`` →
``task.delay``, ``Workspace`` → ``workspace`` ...), deprecated members on values of a
known class (``part:Remove()`` → ``Destroy``, ``humanoid:LoadAnimation`` →
``Animator:LoadAnimation``), enum items by a legacy name (``Enum.RaycastFilterType.Whitelist``
→ ``Include``, ``Enum.KeyCode.Unknown`` → ``None``, ``Enum.Font.GothamSemibold`` →
``GothamMedium``: valid, Studio warns) and deprecated enums and enum items, as tagged in
Roblox's API dump (the shipped data).  A warning, with a fix when the replacement is the
same thing renamed: a legacy enum name (a safe fix: the same item), a camelCase alias
(``part:clone()`` → ``Clone``), or a rename the shipped table names (unsafe fixes, applied by
``--unsafe-fixes`` only: the replacement may behave differently - ``task.wait`` does not
throttle, ``Destroy`` locks ``Parent``).
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..luau import ast as A
from ..rules.roblox_api.deprecated_api import RULE as DEPRECATED_API
from .base import CheckContext, api_for, resolver_for

RULE = DEPRECATED_API.id


class DeprecatedApiCheck:
    rules = {RULE: DEPRECATED_API.severity}

    def check(self, ctx: CheckContext) -> list[Finding]:
        chunk = ctx.ast
        if chunk is None:
            return []
        api = api_for(ctx)
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
            enum_item = _enum_item(node, resolver)
            if enum_item is not None:
                f = self._enum(ctx, api, *enum_item)
                if f is not None:
                    out.append(f)
                continue
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
            simple = repl is not None and repl.isidentifier() and (
                repl.lower() == func.name.lower() or (member.declared_in, func.name) in RENAMES)
            msg = f"{member.declared_in}.{func.name} is deprecated" + (f"; use '{repl}'" if repl else "")
            out.append(ctx.finding(RULE, Severity.WARNING, func.name_start, func.name_end, msg,
                                   (repl,) if repl else (), fix_text=repl if simple else None,
                                   fix_title=f"Replace '{func.name}' with '{repl}'" if simple else "", fix_safe=False))
        return out

    def _enum(self, ctx: CheckContext, api, enum: str, item: str, start: int, end: int, quote: str) -> Finding | None:
        """``Enum.<enum>.<item>`` (``item`` ``""``: ``Enum.<enum>`` itself) written at
        ``[start, end)`` (``quote``: the item is a string literal)."""
        new = api.enum_legacy(enum, item) if item else None
        if new is not None:
            text = f"{quote}{new}{quote}"
            return ctx.finding(RULE, Severity.WARNING, start, end,
                               f"{_ref(enum, item)} is a legacy name of {_ref(enum, new)}; use '{new}'", (new,),
                               fix_text=text, fix_title=f"Replace '{item}' with '{new}'", fix_safe=True)
        if api.enum_item_deprecated(enum, item) and not (item and api.enum_item_deprecated(enum, "")):
            return ctx.finding(RULE, Severity.WARNING, start, end, f"{_ref(enum, item)} is deprecated")
        return None


#: Replacements in the shipped data that are the same member renamed (drop-in: a quick fix
#: may apply them); other replacements take other arguments and are only named.
RENAMES = frozenset({("Instance", "Remove"), ("Instance", "remove"), ("Players", "playerFromCharacter"),
                     ("Players", "players"), ("ServiceProvider", "service"), ("Instance", "children"),
                     ("Model", "GetPrimaryPartCFrame"), ("Model", "SetPrimaryPartCFrame"),
                     ("BasePart", "Velocity"), ("BasePart", "RotVelocity"), ("Camera", "CoordinateFrame")})


def _ref(enum: str, item: str) -> str:
    """How a script names the item: ``Enum.KeyCode.None``, ``Enum.Material["Corroded Metal"]``."""
    if not item:
        return f"Enum.{enum}"
    return f"Enum.{enum}.{item}" if item.isidentifier() else f'Enum.{enum}["{item}"]'


def _enum_item(node, resolver) -> tuple[str, str, int, int, str] | None:
    """``(enum, item, start, end, quote)`` when ``node`` reads an item of an enum
    (``Enum.X.Y`` or ``Enum.X["Y"]``) or an enum (``Enum.X``, item ``""``)."""
    t = type(node)
    if t is A.ExprIndexName and node.op == ".":
        base = resolver.value(node.obj)
        if base.enum is None:
            return None
        if base.enum == "":
            return (node.name, "", node.name_start, node.name_end, "")
        return (base.enum, node.name, node.name_start, node.name_end, "")
    if t is A.ExprIndexExpr and type(node.index) is A.ExprString and node.index.value is not None:
        base = resolver.value(node.obj)
        if base.enum:
            idx = node.index
            return (base.enum, idx.value, idx.start, idx.end, idx.quote if idx.quote in "\"'" else '"')
    return None
