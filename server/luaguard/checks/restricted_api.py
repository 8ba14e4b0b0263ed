"""``restricted_api``: a member the code's security level may not use.

Roblox's API dump gives each member a ``Security`` level (Roblox's "Script capabilities
and security" reference): ``None`` members are for every script; ``PluginSecurity``
members for Studio plugins (and the command bar); ``LocalUserSecurity`` for the command
bar; ``RobloxScriptSecurity`` for Roblox's own core scripts; ``RobloxSecurity`` and
``NotAccessibleSecurity`` for none of them.  Members tagged ``NotScriptable`` are not
reachable from scripts at all.  A game script that calls or reads a member above its
level fails at run time ("The current thread cannot access ..."), so this is a warning:
``game:GetService("Players"):SetChatStyle(...)`` in a game script (``PluginSecurity``).

Plugin code (:mod:`luaguard.project.plugin`: the ``plugin`` setting, a plugin's project
file or folder, or a file that reads the ``plugin`` global) may use ``PluginSecurity``
members: nothing is reported for them there.  Checked where the receiver's class is
known (see :mod:`luaguard.analysis.resolve`); the level to *write* a property
(``Script.Source``) is not checked.  Never where the name reads a child: a ``NotScriptable``
member is invisible to scripts, so ``folder.Attributes`` and ``model.Tags`` read children
of those names, and a name the project maps as a child is that child.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..luau import ast as A
from ..rules.roblox_api.restricted_api import RULE as RESTRICTED_API
from .base import CheckContext, resolver_for

RULE = RESTRICTED_API.id

_WHO = {
    "PluginSecurity": "Studio plugins",
    "LocalUserSecurity": "the Studio command bar",
    "RobloxScriptSecurity": "Roblox's own scripts",
    "RobloxSecurity": "the engine",
    "NotAccessibleSecurity": "the engine",
}


class RestrictedApiCheck:
    """Reports reads and calls of members above the code's security level (see the module
    docstring)."""

    rules = {RULE: RESTRICTED_API.severity}

    def check(self, ctx: CheckContext) -> list[Finding]:
        chunk = ctx.ast
        if chunk is None:
            return []
        resolver = resolver_for(ctx)
        if resolver is None or resolver.api is None:
            return []
        api = resolver.api
        plugin = ctx.plugin or any(g.name == "plugin" for g in chunk.global_reads)
        out: list[Finding] = []
        for node in chunk.lookups:
            if type(node) is A.ExprCall and node.is_method:
                func = node.func
            elif type(node) is A.ExprIndexName and node.op == ".":
                func = node
            else:
                continue
            base = resolver.value(func.obj)
            cls = base.class_name
            if cls is None or any(n.class_guessed for n in base.nodes):
                continue
            member = api.member(cls, func.name)
            if member is None or member.usable(plugin):
                continue
            if func is node and ("NotScriptable" in member.tags or resolver.value(node).nodes):
                continue  # `x.Attributes`: a child of that name (scripts cannot see the member)
            if "NotScriptable" in member.tags and member.read_security in ("None", "PluginSecurity"):
                why = "is not scriptable: scripts cannot use it"
            else:
                level = member.read_security
                why = f"needs {level} (only {_WHO.get(level, level)} may use it)"
                if not plugin and level == "PluginSecurity":
                    why += "; if this is a plugin, set `plugin = true` in luaguard.toml"
            what = "method" if member.kind == "Function" else "member"
            out.append(ctx.finding(RULE, Severity.WARNING, func.name_start, func.name_end,
                                   f"{member.declared_in}.{func.name} is a {what} that {why}"))
        return out
