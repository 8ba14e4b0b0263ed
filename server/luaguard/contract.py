"""The linter's promise to the decoding guard, as plain data: :class:`GuardContract`.

Made by :meth:`luaguard.engine.Engine.guard_contract`, read by
:func:`luaguard.guard.matcher.project_guard`: the guard takes what it needs about a file
through this, never by importing the engine or the checks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GuardContract:
    """What the linter accepts in one file, as the decoding guard needs it (made by
    :meth:`Engine.guard_contract`; :func:`luaguard.guard.matcher.project_guard` builds the
    guard from it).

    ``project``: the index (``None``: no project, paths checked against the Roblox services
    only); ``runtime_names``: the project's name pool carrying its
    :class:`~luaguard.analysis.snapshot.Snapshot` (and the file's own text), whose verdicts
    the guard reads (:class:`~luaguard.analysis.snapshot.WorldNames`); ``path``: the
    project-relative file (``None``: not known); ``scripts``: its instances (``script``
    resolves to them); ``services``: whether service names are checked (they are in every
    file: ``GetService`` of a non-service fails in any host).  Wally dependencies and
    package folders, Nevermore's loader links come with the snapshot (the same verdicts).
    Immutable: safe to hand to another thread."""

    project: object = None
    runtime_names: frozenset[str] = frozenset()
    path: str | None = None
    scripts: tuple = ()
    services: bool = True
