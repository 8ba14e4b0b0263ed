"""The list of checks the engine runs, and the rule ids they emit."""

from __future__ import annotations

from dataclasses import dataclass

from ..findings import Severity


def all_checks() -> list:
    """A fresh instance of every check, in reporting order."""
    from .placeholders import PlaceholderCheck
    from .structure import LexicalCheck, StructureCheck
    from .syntax import SyntaxCheck

    from .deprecated_api import DeprecatedApiCheck
    from .instance_paths import InstancePathCheck
    from .restricted_api import RestrictedApiCheck
    from .undefined_variable import UndefinedVariableCheck
    from .unknown_class import UnknownClassCheck
    from .unknown_member import UnknownMemberCheck

    return [
        LexicalCheck(), StructureCheck(), SyntaxCheck(), PlaceholderCheck(), InstancePathCheck(),
        UndefinedVariableCheck(), UnknownClassCheck(), UnknownMemberCheck(), DeprecatedApiCheck(),
        RestrictedApiCheck(),
    ]


def rule_ids() -> dict[str, Severity]:
    """Every rule id with its default severity."""
    out: dict[str, Severity] = {}
    for check in all_checks():
        out.update(check.rules)
    return out


#: Rules the engine reports about a file as a whole rather than a check (see
#: :mod:`luaguard.engine`), with their default severity.
FILE_RULES: dict[str, Severity] = {
    "unreadable_file": Severity.ERROR,
    "invalid_utf8": Severity.WARNING,
    "internal_error": Severity.ERROR,
    # luaguard's own suppression comments (luaguard.suppressions)
    "unknown_suppression": Severity.WARNING,
    "unused_suppression": Severity.WARNING,
}


@dataclass(frozen=True, slots=True)
class RuleHelp:
    """What a rule reports (``short``, one line) and what to do about it (``help``), for
    people and for SARIF's ``shortDescription``/``help`` of a rule."""

    short: str
    help: str


#: One entry per rule id of :func:`all_rule_ids`, in the words of the README's "What it
#: checks" table.  A rule missing here still reports; its SARIF entry gets a generic text.
RULE_HELP: dict[str, RuleHelp] = {
    "syntax_error": RuleHelp(
        "Luau's parser rejects the code",
        "The message and position are those of Luau's own parser. Fix the syntax first: a file with a "
        "syntax error is never changed by `luaguard check --fix`."),
    "unbalanced_bracket": RuleHelp(
        "A bracket ( [ { or an interpolation brace is not closed, or a closer has nothing to close",
        "Reported at the opener that is left open (or the stray closer), only where Luau's parser also fails."),
    "unclosed_block": RuleHelp(
        "function/if/do/while/for/repeat without its end/until",
        "Reported at the keyword that opens the block, only where Luau's parser also fails."),
    "placeholder": RuleHelp(
        "Code was left out: a truncation marker, '...' as a statement, or TODO/FIXME",
        "Truncation markers ('-- ... rest of code', 'your code here') are always errors; TODO/FIXME are "
        "warnings in editor mode and errors in patch mode (--patch). Write the missing code."),
    "unknown_instance": RuleHelp(
        "A child nothing could create: under a closed node of the project's instance tree, or a string require's "
        "component that is no module",
        "The project maps this part of the DataModel completely (Rojo $path, a Wally package folder read from "
        "wally.toml, a service the engine owns) and no script creates the name there, so it cannot exist at run "
        "time. The fix (safe) replaces a misspelt name with the one clearly best existing name."),
    "likely_unknown_instance": RuleHelp(
        "Under an open node, a near miss of a name the project knows there, or a name the project has elsewhere",
        "The node may get children in Studio or at run time, so this is a warning; its fix is unsafe "
        "(--unsafe-fixes). Silence it with `-- luaguard: allow(likely_unknown_instance)` if the child is real."),
    "unverified_instance": RuleHelp(
        "Under an open node, a name nothing in the project creates, names or reads anywhere else",
        "A warning in patch mode (an agent's invented path reaches the model), a hint in editor mode (a real game "
        "keeps children in its place file that no script mentions). No fix is offered: the name may be real. Read "
        "or create the name elsewhere, or silence it with `-- luaguard: allow(unverified_instance)`."),
    "unknown_service": RuleHelp(
        "GetService with a name that is not a Roblox service",
        "Service names come from Roblox's API dump; a near miss of a service is an error in every file (it fails in "
        "any host). The fix (safe) replaces the name with the one clearly best service."),
    "undefined_variable": RuleHelp(
        "A global that is neither a Luau nor a Roblox global nor assigned in the file",
        "Declare it (local), add it to extra_globals in luaguard.toml, or list it in a selene std or a luau-lsp "
        "definition file. Its fix is unsafe: the name may be meant as a new variable."),
    "unknown_class": RuleHelp(
        "A class name Roblox does not have (Instance.new, IsA, FindFirstChildOfClass ...)",
        "Class names come from Roblox's API dump. The fix (safe) replaces the name with the one clearly best class."),
    "unknown_member": RuleHelp(
        "A property, method, event, enum or enum item that a value of certain class does not have, where no child "
        "can have the name",
        "An error where the value's class is certain, a warning where a subclass could add the member. A name that "
        "is no member of an instance reads a child, so it is reported here only where no child can exist (a new "
        "instance, a method call, an assignment, a closed node). The fix replaces the name with the one clearly "
        "best member of that class (safe only where the class is certain)."),
    "deprecated_api": RuleHelp(
        "A Roblox API that still works but is deprecated (wait -> task.wait, :Remove() -> :Destroy())",
        "A legacy enum name's fix is safe (the same item, renamed); the others are unsafe (--unsafe-fixes): the "
        "replacement may behave differently; review it."),
    "restricted_api": RuleHelp(
        "A member above the code's security level (PluginSecurity or RobloxScriptSecurity in a game script)",
        "Roblox's API dump gives each member a security level; a game script calling a plugin-only or "
        "Roblox-only member fails at run time. Plugin code may call PluginSecurity members (set `plugin = true` "
        "in luaguard.toml where luaguard cannot tell)."),
    "unreadable_file": RuleHelp(
        "A file that could not be read or is not text (binary, over the size limit)",
        "Nothing in the file was checked."),
    "invalid_utf8": RuleHelp(
        "A file that is not valid UTF-8",
        "Invalid bytes were read as U+FFFD; findings after them may be off. `--fix` does not change such a file."),
    "unknown_suppression": RuleHelp(
        "A `luaguard: allow(...)` comment names no luaguard rule (a typo: `undefined-variable`)",
        "The comment silences nothing. The fix (safe) puts in the one clearly best rule id; with no clear "
        "candidate it removes the name (unsafe: review it). selene's and Luau's names belong in their own "
        "comments (`-- selene: allow(...)`, `--!nolint Name`)."),
    "unused_suppression": RuleHelp(
        "A `luaguard: allow(rule)` comment silences no finding (ruff's RUF100)",
        "The rule ran and found nothing where the comment applies, so the comment only hides a future finding. "
        "The fix (safe) removes the rule from the comment, or the whole comment."),
    "internal_error": RuleHelp(
        "luaguard failed on this file (a bug)",
        "The other checks still ran. Please report the file that triggers it."),
}


def all_rule_ids() -> dict[str, Severity]:
    """Every rule id ``luaguard check`` can report on a file (the checks' and
    :data:`FILE_RULES`), with its default severity: the ids ``--select``/``--ignore`` and
    ``luaguard.toml``'s ``select``/``ignore`` accept."""
    return {**rule_ids(), **FILE_RULES}


def rule_help(rule: str) -> RuleHelp:
    """The :class:`RuleHelp` of ``rule`` (a generic text for an id without an entry)."""
    return RULE_HELP.get(rule) or RuleHelp(f"luaguard rule {rule}", "See the message of each finding.")
