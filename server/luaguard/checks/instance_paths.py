"""``unknown_instance``, ``unknown_service``, ``likely_unknown_instance`` and
``unverified_instance``: paths into the DataModel, judged by the evidence for each name.

Chains are resolved on the AST with real scopes by :class:`~luaguard.analysis.resolve.Resolver`
(shadowing, parameters, upvalues and reassigned aliases included); each missing step gets
a :class:`~luaguard.analysis.verdict.Verdict` from the project's snapshot, and the
severity follows it:

* ``unknown_instance`` (error): nothing could create the child - a **closed** node (Rojo
  ``$path``, a Wally package folder read from ``wally.toml``, a service the engine owns)
  where no script creates it: ``'Modulez' is not a child of game.ReplicatedStorage.Shared
  (Folder). Did you mean 'Modules'?``; also a string require's component
  (``require("./Utill")``) that is no child there (a require of a file the project does not
  map is navigated on disk: a missing component there is a ``likely_unknown_instance``
  warning, as a build or an install may make it);
* ``unknown_service`` (error): ``game:GetService("ReplicatedStorag")`` names no service -
  in any file when the name is a near miss of a service (a typo fails in any host; outside
  the project's DataModel a name far from every service is a warning: a test runner's host
  may add services the API dump does not list);
* ``likely_unknown_instance`` (warning): under an **open** node, or a closed one where the
  project's scripts may create children at run time, a name that is a near miss of a name
  the project knows there (its children, what other scripts read there: one edit, or a
  score of 80 or more), or that the project has under another parent;
* ``unverified_instance`` (a warning in patch mode, a hint in editor mode): under such a
  node, a name nothing in the project creates, names or reads anywhere else - an agent's
  invented ``game.ReplicatedStorage.Remotes.Foo`` reaches the model; a child a real game
  keeps in its place file is only a hint.  The message says what was looked for.

A fix is attached when one candidate is clearly best (:func:`luaguard.fuzzy.best_fix`),
written in the form the code used: ``.Name``, ``["Name With Space"]``, or inside the
string of ``WaitForChild``/``FindFirstChild``/``GetService``/``require``.  It is safe
only for an error (the finding is certain); ``unverified_instance`` offers none.
"""

from __future__ import annotations

from ..analysis.places import POSSIBLE_CHILD, TEMPLATE_SITE
from ..analysis.resolve import Miss
from ..analysis.snapshot import near_names
from ..analysis.verdict import NEAR_MISS, POSSIBLE
from ..findings import Finding, Severity
from ..fuzzy import best_fix, rank
from ..project.tree import Instance, is_identifier
from ..rules.instances import likely_unknown_instance, unknown_instance, unknown_service, unverified_instance
from ..rules.wording import did_you_mean, replace_title, string_literal
from .base import CheckContext, resolver_for

UNKNOWN_INSTANCE = unknown_instance.RULE.id
UNKNOWN_SERVICE = unknown_service.RULE.id
LIKELY_UNKNOWN_INSTANCE = likely_unknown_instance.RULE.id
UNVERIFIED_INSTANCE = unverified_instance.RULE.id

_MAX_LISTED = 8


class InstancePathCheck:
    """Reports the misses the resolver found (see the module docstring)."""

    rules = {r.RULE.id: r.RULE.severity
             for r in (unknown_instance, unknown_service, likely_unknown_instance, unverified_instance)}

    def check(self, ctx: CheckContext) -> list[Finding]:
        resolver = resolver_for(ctx)
        if resolver is None:
            return []
        out: list[Finding] = []
        for miss in resolver.misses:
            if miss.kind not in ("child", "open_child", "service", "module"):
                continue  # members and enums: unknown_member
            f = self._finding(ctx, resolver.project, miss)
            if f is not None:
                out.append(f)
        return out

    def _finding(self, ctx: CheckContext, project, miss: Miss) -> Finding | None:
        if miss.kind == "service":
            ranked = rank(miss.name, project.api.services)
            msg = f"'{miss.name}' is not a Roblox service"
            f = self._emit(ctx, UNKNOWN_SERVICE, Severity.ERROR, miss, msg, ranked, listing="")
            # a misspelt service fails in any host; a name far from every service may be one a
            # special host adds (a test runner's ProcessService): outside the DataModel, a warning
            if near_names(miss.name, project.api.services):
                f.data["impossible"] = True
            return f
        if miss.kind == "module":
            # on disk, outside the instance tree: a folder a build or an install makes may be
            # missing from the checkout - a warning
            ranked = rank(miss.name, miss.candidates)
            msg = (f"require({miss.path!r}): '{miss.name}' is no module or folder in {miss.owner}/ (unless a "
                   "build or an install makes it)")
            listing = "" if ranked else _listing(miss.candidates, miss.owner + "/")
            return self._emit(ctx, LIKELY_UNKNOWN_INSTANCE, Severity.WARNING, miss, msg, ranked, listing)

        parent = miss.parents[0] if miss.parents else None
        where = _describe(parent) if parent is not None else f"a {miss.owner}"
        verdict = miss.verdict
        if miss.kind == "open_child":
            assert verdict is not None
            if verdict.kind == NEAR_MISS:
                if verdict.candidates:
                    ranked = rank(miss.name, verdict.candidates)
                    listing = ""
                else:
                    ranked = []
                    listing = f" '{miss.name}' exists at {verdict.elsewhere[0]}."
                msg = (f"'{miss.name}' is not in the project under {where}; it exists only if created in Studio "
                       f"or at run time ({verdict.evidence})" if verdict.evidence else
                       f"'{miss.name}' is not in the project under {where}; it exists only if created in Studio "
                       "or at run time")
                return self._emit(ctx, LIKELY_UNKNOWN_INSTANCE, Severity.WARNING, miss, msg, ranked, listing)
            if verdict.kind == POSSIBLE and not verdict.supported:
                severity = verdict.severity(ctx.mode)
                if severity is None:
                    return None
                if miss.member_hint and not miss.parents:
                    msg = f"'{miss.name}' is no member of {miss.owner}: it reads a child, and nothing in the project " \
                          "names such a child"
                else:
                    msg = (f"'{miss.name}' is not in the project under {where}, and no script creates, names or reads "
                           f"it: it exists only if made in Studio ({verdict.evidence})")
                if miss.member_hint:
                    if miss.parents:
                        msg += f"; it is no member of {miss.owner} either"
                    msg += f". Did you mean the member '{miss.member_hint[0]}'?"
                else:
                    msg += "."
                f = ctx.finding(UNVERIFIED_INSTANCE, severity, miss.start, miss.end, msg, miss.member_hint)
                f.data["name"] = miss.name
                return f
            return None

        assert parent is not None
        candidates = _child_names(parent, project, ctx) if not miss.ancestor else [a.name for a in parent.ancestors()]
        if miss.descendant:
            candidates = [d.name for d in parent.descendants()]
        ranked = rank(miss.name, candidates)
        relation = "an ancestor" if miss.ancestor else ("a descendant" if miss.descendant else "a child")
        msg = f"'{miss.name}' is not {relation} of {where}"
        if miss.form == "require":
            msg = f"require({miss.path!r}): " + msg
        if verdict is not None and verdict.evidence:
            msg += f" ({verdict.evidence})"
        listing = ""
        if not ranked:
            elsewhere = ctx.snapshot.elsewhere(miss.name) if ctx.snapshot is not None else []
            if elsewhere:
                listing = f" '{miss.name}' exists at {elsewhere[0].path}."
            elif candidates and not miss.ancestor and parent is not project.datamodel:
                listing = _listing(candidates, parent.path)
            elif not candidates:
                listing = f" {parent.path} has no children in the project."
        return self._emit(ctx, UNKNOWN_INSTANCE, Severity.ERROR, miss, msg, ranked, listing)

    def _emit(self, ctx: CheckContext, rule: str, severity: Severity, miss: Miss, msg: str, ranked, listing: str) -> Finding:
        suggestions = [c for c, _ in ranked]
        msg += did_you_mean(suggestions)
        msg += listing
        fix_name = best_fix(ranked)
        fix_text = fix_start = None
        if fix_name is not None:
            fix_text, fix_start = _fix_text(ctx.text, miss, fix_name)
        f = ctx.finding(
            rule, severity, miss.start, miss.end, msg, suggestions,
            fix_text=fix_text, fix_title=replace_title(miss.name, fix_name),
            fix_start=fix_start,
            # safe: the one clearly best name where nothing could create the name, or a
            # service name; a near miss under an open node may be a child made in Studio
            fix_safe=severity is Severity.ERROR,
        )
        f.data["name"] = miss.name
        return f


def _describe(node: Instance) -> str:
    if node.class_name == POSSIBLE_CHILD:
        return f"{node.path} (a child the project does not map)"
    if node.class_name == TEMPLATE_SITE:
        return node.name.strip("<>")
    return f"{node.path} ({node.class_name})"


def _listing(candidates, where: str) -> str:
    shown = ", ".join(sorted(candidates)[:_MAX_LISTED])
    more = len(candidates) - _MAX_LISTED
    return f" Children of {where}: {shown}" + (f" (and {more} more)." if more > 0 else ".")


def _child_names(parent: Instance, project, ctx: CheckContext) -> list[str]:
    if ctx.snapshot is not None:
        return ctx.snapshot.known_names(parent, created=False)
    names = [c.name for c in parent.all_children()]
    if parent is project.datamodel:
        names.extend(sorted(project.api.services))
    return names


def _fix_text(text: str, miss: Miss, new: str) -> tuple[str, int | None]:
    """Replacement text (and start offset when it differs from the miss's) for ``new``."""
    if miss.form == "dot":
        if is_identifier(new):
            return new, None
        return f'[{string_literal("", 0, new)}]', miss.dot_start
    if miss.form == "require":
        return new, None
    return string_literal(text, miss.start, new), None
