"""``unknown_instance``, ``unknown_service`` and ``instance_typo``: paths into the
DataModel that do not exist.

Chains are resolved on the AST with real scopes by :class:`~.resolve.Resolver`
(shadowing, parameters, upvalues and reassigned aliases included).  Rules:

* ``unknown_instance`` (error): a child that does not exist under a **closed** node —
  ``'Modulez' is not a child of game.ReplicatedStorage.Shared (Folder). Did you mean
  'Modules'?`` — with ranked suggestions from the parent's children and, when the name
  exists elsewhere in the tree, where it is;
* ``unknown_service`` (error): ``game:GetService("ReplicatedStorag")`` names no service;
* ``likely_unknown_instance`` (warning): under an **open** node (children may exist at
  run time), or a closed one where the project's scripts may create children at run time
  (:mod:`.runtime_world`: the message gives the evidence), a name that is not in the
  project but is a near miss of a child that is (one edit, or a score of 80 or more), or
  that the project has under another parent: most likely a typo or a wrong parent, but
  not certainly wrong.

A fix is attached when one candidate is clearly best (:func:`luaguard.fuzzy.best_fix`),
written in the form the code used: ``.Name``, ``["Name With Space"]``, or inside the
string of ``WaitForChild``/``FindFirstChild``/``GetService``.
"""

from __future__ import annotations

from rapidfuzz.distance import OSA

from ..findings import Finding, Severity
from ..fuzzy import best_fix, rank
from ..project.tree import Instance, is_identifier
from .base import CheckContext
from .resolve import Miss, clone_site_template, resolver_for

UNKNOWN_INSTANCE = "unknown_instance"
UNKNOWN_SERVICE = "unknown_service"
LIKELY_UNKNOWN_INSTANCE = "likely_unknown_instance"

TYPO_SCORE = 80.0
_MAX_LISTED = 8

class InstancePathCheck:
    """Reports the misses the resolver found (see the module docstring)."""

    rules = {UNKNOWN_INSTANCE: Severity.ERROR, UNKNOWN_SERVICE: Severity.ERROR, LIKELY_UNKNOWN_INSTANCE: Severity.WARNING}

    def check(self, ctx: CheckContext) -> list[Finding]:
        resolver = resolver_for(ctx)
        if resolver is None:
            return []
        out: list[Finding] = []
        for miss in resolver.misses:
            if miss.kind not in ("child", "open_child", "service"):
                continue  # members and enums: unknown_member
            f = self._finding(ctx, resolver.project, miss)
            if f is not None:
                out.append(f)
        return out

    def _finding(self, ctx: CheckContext, project, miss: Miss) -> Finding | None:
        if miss.kind == "service":
            ranked = rank(miss.name, project.api.services)
            msg = f"'{miss.name}' is not a Roblox service"
            return self._emit(ctx, UNKNOWN_SERVICE, Severity.ERROR, miss, msg, ranked, listing="")

        parent = miss.parents[0]
        candidates = _child_names(parent, project) if not miss.ancestor else [a.name for a in parent.ancestors()]
        if miss.descendant:
            candidates = [d.name for d in parent.descendants()]
        ranked = rank(miss.name, candidates)
        where = _describe(parent)
        if miss.kind == "open_child":
            template = clone_site_template(parent)
            if template is not None and template.parent is not None:
                # the template's siblings where it stands travel with it as a rule (a tool's
                # scripts and values are cloned into the tool together)
                siblings = [c.name for c in template.parent.all_children() if c is not template]
                if miss.name in siblings:
                    return None
                ranked = rank(miss.name, siblings)
            near = [(c, sc) for c, sc in ranked if sc >= TYPO_SCORE or (len(miss.name) >= 3 and OSA.distance(miss.name.lower(), c.lower()) <= 1)]
            listing = ""
            if not near:
                elsewhere = _find_elsewhere(project, miss.name)
                if not elsewhere:
                    return None
                listing = f" '{miss.name}' exists at {elsewhere[0].path}."
            if miss.evidence:
                msg = f"'{miss.name}' is not in the project under {where}; it exists only if created at run time ({miss.evidence})"
            else:
                msg = (
                    f"'{miss.name}' is not in the project under {where}; it exists only if created in Studio "
                    "or at run time"
                )
            return self._emit(ctx, LIKELY_UNKNOWN_INSTANCE, Severity.WARNING, miss, msg, near, listing=listing)
        relation = "an ancestor" if miss.ancestor else ("a descendant" if miss.descendant else "a child")
        msg = f"'{miss.name}' is not {relation} of {where}"
        listing = ""
        if not ranked:
            elsewhere = _find_elsewhere(project, miss.name)
            if elsewhere:
                listing = f" '{miss.name}' exists at {elsewhere[0].path}."
            elif candidates and not miss.ancestor:
                shown = ", ".join(sorted(candidates)[:_MAX_LISTED])
                more = len(candidates) - _MAX_LISTED
                listing = f" Children of {parent.path}: {shown}" + (f" (and {more} more)." if more > 0 else ".")
            elif not candidates:
                listing = f" {parent.path} has no children in the project."
        return self._emit(ctx, UNKNOWN_INSTANCE, Severity.ERROR, miss, msg, ranked, listing)

    def _emit(self, ctx: CheckContext, rule: str, severity: Severity, miss: Miss, msg: str, ranked, listing: str) -> Finding:
        suggestions = [c for c, _ in ranked]
        if suggestions:
            msg += f". Did you mean '{suggestions[0]}'?"
        else:
            msg += "."
        msg += listing
        fix_name = best_fix(ranked)
        fix_text = fix_start = None
        if fix_name is not None:
            fix_text, fix_start = _fix_text(ctx.text, miss, fix_name)
        f = ctx.finding(
            rule, severity, miss.start, miss.end, msg, suggestions,
            fix_text=fix_text, fix_title=f"Replace '{miss.name}' with '{fix_name}'" if fix_name else "",
            fix_start=fix_start,
            # safe: the one clearly best name under a closed node, or a service name; a near
            # miss under an open node may be a child created in Studio or at run time
            fix_safe=rule != LIKELY_UNKNOWN_INSTANCE,
        )
        f.data["name"] = miss.name
        return f


def _describe(node: Instance) -> str:
    return f"{node.path} ({node.class_name})"


def _child_names(parent: Instance, project) -> list[str]:
    names = [c.name for c in parent.all_children()]
    if parent is project.datamodel:
        names.extend(sorted(project.api.services))
    return names


def _find_elsewhere(project, name: str, limit: int = 3) -> list[Instance]:
    out = []
    roots = [project.datamodel] if project.root is project.datamodel else [project.root, project.datamodel]
    for root in roots:
        for node in root.descendants():
            if node.name == name:
                out.append(node)
                if len(out) >= limit:
                    return out
    return out


def _fix_text(text: str, miss: Miss, new: str) -> tuple[str, int | None]:
    """Replacement text (and start offset when it differs from the miss's) for ``new``."""
    if miss.form == "dot":
        if is_identifier(new):
            return new, None
        return f'["{_escape(new)}"]', miss.dot_start
    quote = text[miss.start] if miss.start < len(text) and text[miss.start] in "\"'" else '"'
    return f"{quote}{_escape(new, quote)}{quote}", None


def _escape(name: str, quote: str = '"') -> str:
    return name.replace("\\", "\\\\").replace(quote, "\\" + quote)
