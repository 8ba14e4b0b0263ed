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
    from ..analysis.snapshot import FileView, Snapshot
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
    to them); ``snapshot`` is the project's semantic model
    (:class:`~luaguard.analysis.snapshot.Snapshot`) and ``view`` returns the file's judge
    in it (:class:`~luaguard.analysis.snapshot.FileView`: the file's own text counted);
    ``rel``: the project-relative path when the file is inside the project root;
    ``in_datamodel`` (see below).
    """

    text: str
    lines: LineIndex
    lex: LexResult
    mode: str = "editor"
    path: str | None = None
    ast: "Chunk | None" = None
    project: "ProjectIndex | None" = None
    scripts: list["Instance"] = field(default_factory=list)
    snapshot: "Snapshot | None" = None
    view: "Callable[[], FileView] | None" = None
    rel: str | None = None
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


def resolver_for(ctx: CheckContext):
    """The file's :class:`~luaguard.analysis.resolve.Resolver`, built once per lint run and
    shared by the checks (``None`` when the file has no AST).  Every path look-up of the
    file is evaluated, so :attr:`~luaguard.analysis.resolve.Resolver.misses` is complete."""
    if ctx.ast is None:
        return None
    cached = ctx.options.get("_resolver")
    if cached is None:
        from ..analysis.snapshot import Snapshot

        snapshot = ctx.snapshot
        if snapshot is None:  # (a context made by hand, with no engine: the tree alone)
            from ..project.index import empty_project

            snapshot = ctx.snapshot = Snapshot(ctx.project if ctx.project is not None else empty_project())
        view = ctx.view() if ctx.view is not None else snapshot.view()
        project = ctx.project if ctx.project is not None else snapshot.project
        cached = snapshot.resolver(view, ctx.scripts, ctx.rel, project)
        cached.evaluate(ctx.ast)
        ctx.options["_resolver"] = cached
    return cached


def api_for(ctx: CheckContext):
    """The Roblox API facts a check reads: the project's, else the shipped data."""
    if ctx.project is not None:
        return ctx.project.api
    if ctx.snapshot is not None:
        return ctx.snapshot.api
    from ..project.api import load_api

    return load_api()


class Check(Protocol):
    """A lint: ``rules`` maps each rule id it emits to its default severity."""

    rules: dict[str, Severity]

    def check(self, ctx: CheckContext) -> list[Finding]:
        ...
