"""The interface every check implements, and the context it receives.

A check is a small object with an ``id`` (or several, for one rule family), a default
severity per id and ``check(ctx) -> list[Finding]`` (selene's lint shape).  Checks read
the :class:`CheckContext` and never touch I/O: the engine prepares tokens, the AST and
the project index once and hands them to every check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Protocol

from ..findings import Finding, Fix, Severity
from ..luau.lexer import LexResult
from ..text import LineIndex

if TYPE_CHECKING:
    from ..luau.ast import Chunk
    from ..project.index import ProjectIndex
    from ..project.tree import Instance

#: ``editor``: code a person is editing (TODO/FIXME are warnings).
#: ``patch``: code an AI proposes (every placeholder is an error).
MODES = ("editor", "patch")


@dataclass
class CheckContext:
    """Everything a check may read about one text being linted.

    ``path`` is the project-root-relative POSIX path the text belongs to (``None`` for
    loose text); ``scripts`` are the instances that file maps to (``script`` resolves
    to them); ``runtime_names`` returns names created at run time somewhere in the
    project (string literals outside path look-ups); ``in_datamodel`` (see below).
    """

    text: str
    lines: LineIndex
    lex: LexResult
    mode: str = "editor"
    path: str | None = None
    ast: "Chunk | None" = None
    project: "ProjectIndex | None" = None
    scripts: list["Instance"] = field(default_factory=list)
    runtime_names: Callable[[], frozenset[str]] = lambda: frozenset()
    options: dict = field(default_factory=dict)
    #: False for a file of a project that the project does not map into its DataModel (a
    #: test runner, a build or Lune script): its host's globals and API are not known to
    #: be Roblox's, so the engine reports Roblox API findings there as warnings.
    in_datamodel: bool = True
    #: True for a Studio plugin's code (:func:`luaguard.project.plugin.is_plugin_project`):
    #: ``PluginSecurity`` members are allowed there.
    plugin: bool = False

    def finding(
        self,
        rule: str,
        severity: Severity,
        start: int,
        end: int,
        message: str,
        suggestions: Iterable[str] = (),
        fix_text: str | None = None,
        fix_title: str = "",
        fix_start: int | None = None,
        fix_end: int | None = None,
        fix_safe: bool = False,
    ) -> Finding:
        """Build a :class:`Finding` at offsets ``[start, end)``.

        When ``fix_text`` is given, the fix replaces ``[fix_start, fix_end)`` (default:
        the finding's own range) with it; ``fix_safe``: the fix is safe to apply without a
        person looking (:attr:`luaguard.findings.Fix.safe`).
        """
        rng = self.lines.range(start, end)
        fix = None
        if fix_text is not None:
            fs = start if fix_start is None else fix_start
            fe = end if fix_end is None else fix_end
            fix = Fix(self.lines.range(fs, fe), fix_text, fix_title or f"Replace with '{fix_text}'", fix_safe)
        return Finding(rule, severity, rng, message, tuple(suggestions), fix, self.path, start, end)


class Check(Protocol):
    """A lint: ``rules`` maps each rule id it emits to its default severity."""

    rules: dict[str, Severity]

    def check(self, ctx: CheckContext) -> list[Finding]:
        ...
