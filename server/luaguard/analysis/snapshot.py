"""One project's semantic model at one time: the instance tree, what its scripts say and
do, its frameworks - and the public :meth:`Snapshot.verdict` of any name under any
instance.

A :class:`Snapshot` owns every piece of per-project state the checks, the decoding guard
and the tool-call checks read: the :class:`~luaguard.project.index.ProjectIndex`, the text
scans of its scripts (:mod:`.scans`), the run-time world they make (:mod:`.world`), the
synthesized run-time instances (:mod:`.places`), the frameworks (:mod:`.frameworks`), and
:attr:`Snapshot.memo` for what other layers derive from them (the guard's path spaces).
The engine replaces the snapshot when the project is indexed again or its files change on
disk (:meth:`Snapshot.after_changes` keeps the scans of the files that did not change);
nothing about a project is kept anywhere else, so nothing needs invalidating.  Editor
buffers (:meth:`Snapshot.set_text`) update the scans in place.

:meth:`Snapshot.verdict` (see :mod:`.verdict` for the kinds and the severity they earn):

1. the project's child (a service by class name under the ``DataModel``) - in project;
2. what Roblox makes: a character's parts; the ``DataModel``'s children are services
   (create.roblox.com, ``DataModel``); services the engine owns (``RunService``,
   ``TweenService`` ...: no script puts children there) are closed;
3. what frameworks link in - Wally's aliases (a package folder missing before ``wally
   install`` holds exactly its ``wally.toml`` aliases), the dependencies Wally installs
   beside a package, Nevermore's ``loader`` links;
4. under a closed container, what the scripts create there (:class:`~.world.RuntimeWorld`):
   created (file:line), may be created (any name: a template, a name set at run time), a
   path the repository's ``.gitignore`` ignores inside a synced folder (a build's output), or
   nothing - the only error;
5. under an open container (or one where scripts may create any name): *supported* when a
   script creates or names it (the name pool), reads it under an instance of the same name
   (``Remotes.Hit`` in another file), or looks it up by name (``WaitForChild("Hit")``)
   elsewhere; a *near miss* of a name the project knows there (its children, the names
   other scripts read under it) or a name the project has elsewhere in the tree; else
   *possible but unsupported* - what an agent's invented name looks like.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from rapidfuzz.distance import OSA

from ..fuzzy import rank
from ..project.tree import Instance
from .frameworks import NEVERMORE_LINK, NEVERMORE_WHY, Frameworks
from .places import (CHARACTER_PARTS, CHARACTER_REASON, POSSIBLE_CHILD, TEMPLATE_SITE, Places, child_of, origin,
                     service_names)
from .resolve import Resolver
from .scans import NamesView, ProjectScans, created_names
from .verdict import FRAMEWORK, IN_PROJECT, NEAR_MISS, NOTHING, POSSIBLE, ROBLOX, SCRIPT, Verdict
from .world import CREATED, OwnFacts, RuntimeWorld

#: A near miss of a known name scores at least this (see :mod:`luaguard.fuzzy`), or is one
#: edit away (names of three letters or more).
TYPO_SCORE = 80.0

#: Services that hold a game's content (Studio's Explorer lists them; scripts and Studio
#: put instances there).  The engine owns every other service's contents (``Players``
#: holds the players, named after users at run time): a service the project does not
#: describe is open only if it is one of these.
CONTAINER_SERVICES = frozenset({
    "Workspace", "Lighting", "MaterialService", "ReplicatedFirst", "ReplicatedStorage",
    "ServerScriptService", "ServerStorage", "StarterGui", "StarterPack", "StarterPlayer", "Teams",
    "SoundService", "Chat", "TextChatService", "LocalizationService", "TestService", "VoiceChatService",
    "CoreGui",
})
_UNSERVED = "service not described by the project"
_SCRIPTS = frozenset({"ModuleScript", "Script", "LocalScript"})


def near_names(name: str, candidates: Iterable[str]) -> list[tuple[str, float]]:
    """Candidates ``name`` is a near miss of (score :data:`TYPO_SCORE` or more, or one edit
    away for names of three letters or more), best first."""
    ranked = rank(name, candidates)
    low = name.lower()
    return [(c, sc) for c, sc in ranked
            if sc >= TYPO_SCORE or (len(name) >= 3 and OSA.distance(low, c.lower()) <= 1)]


class Snapshot:
    """The semantic model of one project (see the module docstring).

    ``project``: the :class:`~luaguard.project.index.ProjectIndex` (an empty one for text
    that belongs to no project); ``files`` returns the project's script paths (absolute)
    and ``read`` reads one (``None``: unreadable) - both default to none at all (the tree
    alone).  ``api``: the project's Roblox API facts.
    """

    def __init__(self, project, files: Callable[[], Iterable[Path]] | None = None,
                 read: Callable[[Path], str | None] | None = None) -> None:
        self.project = project
        self.api = project.api
        self.generation = getattr(project, "generation", 0)
        self.places = Places(project)
        self._files = files or (lambda: ())
        self._read = read or (lambda _p: None)
        self.scans = ProjectScans(self._files, self._read, self._forget)
        self.frameworks = Frameworks(project, self.scans.lookup_counts, self.scans.bootstrapped)
        self.world = RuntimeWorld(self)
        #: what other layers derive from this snapshot (dies with it): ``{key: value}``
        self.memo: dict = {}
        self._by_name: dict[str, list[Instance]] | None = None

    # -- life cycle ---------------------------------------------------------------------
    def _forget(self, path: Path) -> None:
        self.world.forget(path)

    def after_changes(self, paths: Iterable[Path]) -> "Snapshot":
        """A new snapshot of the same project after the files ``paths`` changed on disk
        (the index already updated): the scans of the other files and the open buffers
        are carried over, everything derived is rebuilt."""
        fresh = Snapshot(self.project, self._files, self._read)
        fresh.scans.adopt(self.scans)
        for p in paths:
            fresh.scans.file_changed(p)
        return fresh

    def set_text(self, path: Path, text: str | None) -> None:
        """An editor buffer for ``path`` (``None``: closed, the file on disk counts again)."""
        self.scans.set_text(path, text)

    # -- what the project knows ---------------------------------------------------------
    def pool(self) -> NamesView:
        """The names the project's scripts name (string literals outside path look-ups)."""
        return NamesView(self.scans.pool())

    def names(self) -> "WorldNames":
        """The name pool as a frozenset that carries this snapshot (what the guard's path
        spaces take: they accept names exactly as the linter's verdicts do)."""
        got = self.memo.get("names")
        if got is None or got[0] != self.scans.version:
            got = self.memo["names"] = (self.scans.version, WorldNames(self.scans.pool(), self))
        return got[1]

    def view(self, text: str | None = None, path: Path | None = None, scripts=(), chunk=None,
             own_names: Iterable[str] | None = None) -> "FileView":
        """The judge for one file's text (:class:`FileView`): ``path`` absolute (``None``:
        loose text), ``scripts`` the instances it maps to, ``chunk`` its parse (or a
        function returning it) when at hand."""
        own = None
        if text is not None:
            names = frozenset(created_names(text) if own_names is None else own_names)
            own = OwnFacts(text, path, scripts, names, chunk)
        return FileView(self, own, path)

    def elsewhere(self, name: str, limit: int = 3) -> list[Instance]:
        """Nodes of the project tree named ``name`` (at most ``limit``)."""
        if self._by_name is None:
            index: dict[str, list[Instance]] = {}
            project = self.project
            roots = [project.datamodel] if project.root is project.datamodel else [project.root, project.datamodel]
            for root in roots:
                for node in root.descendants():
                    index.setdefault(node.name, []).append(node)
            self._by_name = index
        return self._by_name.get(name, [])[:limit]

    def linked_names(self, node: Instance) -> list[str]:
        """Names that exist under ``node`` without a project node: what frameworks link in
        (Wally's aliases and installed dependencies, Nevermore's ``loader``) and the parts
        Roblox gives a character."""
        frameworks = self.frameworks
        out: dict[str, None] = dict.fromkeys(sorted(frameworks.wally_siblings(node)))
        packages = frameworks.wally_packages(node)
        if packages is not None:
            out.update(dict.fromkeys(sorted(packages[0])))
        if frameworks.nevermore_link(node):
            out[NEVERMORE_LINK] = None
        out.update(dict.fromkeys(frameworks.nevermore_replicas(node)))
        if node.open_reason == CHARACTER_REASON:
            out.update(dict.fromkeys(sorted(CHARACTER_PARTS)))
        return list(out)

    def known_names(self, node: Instance, own: OwnFacts | None = None, *, created: bool = True) -> list[str]:
        """Names the project knows under ``node``: its children (services under the
        ``DataModel``), :meth:`linked_names`, and - under a closed node, with ``created`` -
        what scripts create there and what the linted file checks for first (this reads
        the facts of every script that creates instances).  (The guard's name tables list
        these.)"""
        out: dict[str, None] = dict.fromkeys(c.name for c in node.all_children())
        if node is self.project.datamodel:
            out.update(dict.fromkeys(service_names(self.api)))
        out.update(dict.fromkeys(self.linked_names(node)))
        if created and self.open_reason(node) is None:
            out.update(dict.fromkeys(sorted(self.world.names_under(node, own))))
            out.update(dict.fromkeys(sorted(self.world.maybe_names(node, own))))
        return list(out)

    def open_reason(self, node: Instance) -> str | None:
        """Why ``node`` may hold children the project does not show (``None``: closed).
        Services the engine owns are closed even where the project does not describe
        them; a Wally package folder awaiting ``wally install`` is closed by its
        ``wally.toml``."""
        reason = node.open_reason
        if node is self.project.datamodel:
            return None  # (its children are services: create.roblox.com, DataModel)
        if reason is None:
            if node.class_name in _SCRIPTS and node.dir_path is None and not node.children:
                return self._place_children(node)
            return None
        if reason == _UNSERVED and node.class_name not in CONTAINER_SERVICES:
            return None
        if node.missing_path is not None and self.frameworks.wally_packages(node) is not None:
            return None
        return reason

    def _place_children(self, script: Instance) -> str | None:
        """Why a script made from a file may hold children in the place: an ancestor keeps
        instances the project does not describe (a module with a ParticleEmitter made in
        Studio under an open ``ReplicatedStorage``); ``None`` when none does."""
        for a in script.ancestors():
            reason = a.open_reason
            if a is self.project.datamodel:
                return None  # (the DataModel's own children are services)
            if reason is None or reason == CHARACTER_REASON or a.class_name in (TEMPLATE_SITE, POSSIBLE_CHILD):
                continue
            if self.open_reason(a) is not None:
                return f"{a.path} keeps instances the project does not describe ({reason}); the place may give " \
                       f"{script.name} children"
        return None

    # -- verdicts -----------------------------------------------------------------------
    def verdict(self, node: Instance, name: str, own: OwnFacts | None = None, exclude: Path | None = None) -> Verdict:
        """The :class:`~.verdict.Verdict` of a child ``name`` under ``node`` (see the module
        docstring).  ``own``: the linted text's facts (newer than its file on disk);
        ``exclude``: the linted file (what it reads does not back its own names)."""
        project = self.project
        child = child_of(project, node, name)
        if child is not None:
            return Verdict(IN_PROJECT, node=child)
        frameworks = self.frameworks
        if name in frameworks.wally_siblings(node):
            return Verdict(FRAMEWORK, "Wally installs a package's dependencies beside it")
        if name == NEVERMORE_LINK and frameworks.nevermore_link(node):
            return Verdict(FRAMEWORK, f"{NEVERMORE_WHY}; {frameworks.nevermore()}")
        replica = frameworks.nevermore_replica(node, name)
        if replica is not None:
            return Verdict(FRAMEWORK, replica)
        packages = frameworks.wally_packages(node)
        if packages is not None and name in packages[0]:
            return Verdict(FRAMEWORK, packages[1])
        if node.open_reason == CHARACTER_REASON and name in CHARACTER_PARTS:
            return Verdict(ROBLOX, "Roblox creates it in every character")
        reason = self.open_reason(node)
        if reason is None and self.api.has_class(node.class_name):
            found = self.world.verdict(node, name, own)
            if found is not None and found.status != CREATED and node.open_reason == _UNSERVED:
                found = None  # (what may create any child does not reach a service the engine owns)
            elif found is not None and found.status != CREATED and not found.handled and node is project.datamodel:
                # (nor the DataModel's own children - services, beside what a script parents there
                # or this code waits for: code loaded by asset id or names made at run time are no
                # evidence there)
                found = None
            if found is None and node.dir_path is not None:
                ignored = frameworks.ignored_by_git(f"{node.dir_path}/{name}" if node.dir_path else name)
                if ignored is not None:
                    return Verdict(POSSIBLE, f"{ignored} ignores {node.dir_path}/{name}: a build or an install "
                                             "makes it")
                submodule = frameworks.empty_submodule(node.dir_path)
                if submodule is not None:
                    return Verdict(POSSIBLE, f"{submodule} is a git submodule that is not checked out "
                                             "(.gitmodules): what it holds, and the name Rojo gives it, are unknown")
            if found is None:
                if packages is not None:
                    why = packages[1]
                elif node is project.datamodel:
                    why = "the DataModel's children are services"
                elif node.open_reason == _UNSERVED:
                    why = f"the engine owns what {node.name} holds: scripts read its members, not children"
                else:
                    why = ""
                return Verdict(NOTHING, why)
            if found.status == CREATED:
                return Verdict(SCRIPT, found.evidence)
            if found.handled:
                return Verdict(POSSIBLE, found.evidence)
            # (a closed container code may give children: the name pool does not back a name
            # there - what the world found created there would have been a SCRIPT verdict)
            got = self._possible(node, name, found.evidence, own, exclude, pool=False)
            if found.named_at_run_time and (got.kind != POSSIBLE or not got.supported):
                got = replace(got, speculative=True)
            return got
        elif reason is None:
            reason = f"class {node.class_name} is not in the API data"
        return self._possible(node, name, reason, own, exclude)

    def _possible(self, node: Instance, name: str, reason: str, own: OwnFacts | None, exclude: Path | None, *,
                  pool: bool = True) -> Verdict:
        """A name that may exist under ``node`` (``reason``): supported, a near miss, or
        nothing backs it (see the module docstring).  ``pool``: a name some script names
        backs it (under an open container)."""
        backing = self._backing(node, name, own, exclude, pool)
        if backing:
            return Verdict(POSSIBLE, backing)
        there = self.elsewhere(name)
        if not there and self.scans.lookup_counts().get(name, 0) - (name in self.scans.scan(exclude).looked_up) > 0:
            return Verdict(POSSIBLE, f"another script looks '{name}' up by name")
        template = self.places.site_template(node)
        known: list[str]
        if template is not None and template.parent is not None:
            # the template's siblings where it stands travel with it as a rule (a tool's
            # scripts and values are cloned into the tool together)
            known = [c.name for c in template.parent.all_children() if c is not template]
            if name in known:
                return Verdict(POSSIBLE, f"{template.path} is cloned with its siblings")
        else:
            known = self.known_names(node, own, created=False) + self._read_under(node, exclude)
        near = near_names(name, known)
        if near:
            return Verdict(NEAR_MISS, reason, candidates=tuple(c for c, _ in near))
        if there:
            return Verdict(NEAR_MISS, reason, elsewhere=tuple(n.path for n in there))
        unknown_place = self._unknown_place(node)
        if unknown_place:
            return Verdict(POSSIBLE, unknown_place)
        return Verdict(POSSIBLE, reason, supported=False)

    def _parent_keys(self, node: Instance) -> set[str]:
        keys = {node.name.lower(), node.class_name.lower()}
        if node is self.project.datamodel:
            keys.add("game")
        return keys

    def _backing(self, node: Instance, name: str, own: OwnFacts | None, exclude: Path | None, pool: bool = True) -> str:
        """Why the project backs ``name`` under ``node`` (``""``: nothing does)."""
        scans = self.scans
        mine = scans.scan(exclude)
        if own is not None:
            if pool and name in own.names:
                return f"this file names '{name}'"
            facts = own.facts(self.world) if own.may_check_for(name) else None
            line = facts.presence.get((id(origin(node)), name)) if facts is not None else None
            if line is not None:
                return f"the code checks for it with FindFirstChild first (line {line})"
        if pool and scans.pool().get(name, 0) - (name in mine.names) > 0:
            return f"a script names '{name}'"
        under = scans.reads.under(name)
        for key in self._parent_keys(node):
            if under.get(key, set()) - {exclude}:
                return f"another script reads '{name}' under '{node.name}'"
        return ""

    def _unknown_place(self, node: Instance) -> str:
        """Why the place around ``node`` is not known at all (no project file; the DataModel
        a library is used in): nothing there can be verified (``""``: it is known)."""
        project = self.project
        if project.kind == "none":
            return "no project file: the place is not known"
        root = project.root
        if root is project.datamodel:
            return ""
        cur: Instance | None = node
        while cur is not None:
            if cur is root:
                return ""
            cur = cur.parent
        return "a library: the place it is used in is not known"

    def _read_under(self, node: Instance, exclude: Path | None) -> list[str]:
        """Names other scripts read under an instance named like ``node``."""
        out: dict[str, None] = {}
        for key in self._parent_keys(node):
            for child, files in self.scans.reads.children(key).items():
                if files - {exclude}:
                    out[child] = None
        return list(out)

    def mentioned(self, name: str, own: OwnFacts | None = None, exclude: Path | None = None) -> bool:
        """Does a script create or name ``name`` (the pool, the linted text's own names),
        read it as a path step or look it up by name (other files than ``exclude``)?"""
        if own is not None and name in own.names:
            return True
        scans = self.scans
        mine = scans.scan(exclude)
        if scans.pool().get(name, 0) - (name in mine.names) > 0:
            return True
        if scans.lookup_counts().get(name, 0) - (name in mine.looked_up) > 0:
            return True
        return any(files - {exclude} for files in scans.reads.under(name).values())

    # -- resolvers ----------------------------------------------------------------------
    def resolver(self, view: "FileView", scripts, rel: str | None = None, project=None) -> Resolver:
        """A :class:`~.resolve.Resolver` for one file judged by ``view`` (``project``: an
        overlay view of the index, default the snapshot's)."""
        return Resolver(project if project is not None else self.project, list(scripts), view, self.api, rel)


class FileView:
    """The judge of one file (what a :class:`~.resolve.Resolver` asks): the snapshot's
    verdicts with the file's own text counted (``own``) and its file on disk left out of
    the evidence (``path``)."""

    __slots__ = ("snapshot", "own", "path", "places", "frameworks", "project")

    def __init__(self, snapshot: Snapshot, own: OwnFacts | None, path: Path | None) -> None:
        self.snapshot = snapshot
        self.own = own
        self.path = path
        self.places = snapshot.places
        self.frameworks = snapshot.frameworks
        self.project = snapshot.project

    def verdict(self, node: Instance, name: str) -> Verdict:
        """:meth:`Snapshot.verdict` for this file."""
        return self.snapshot.verdict(node, name, self.own, self.path)

    def mentioned(self, name: str) -> bool:
        """:meth:`Snapshot.mentioned` for this file."""
        return self.snapshot.mentioned(name, self.own, self.path)


class WorldNames(frozenset):
    """The name pool as a frozenset (``in``, iteration, set algebra) carrying the snapshot
    it came from (``snapshot``) and a file's own text (``own``: an
    :class:`~.world.OwnFacts` or ``None``).  Equal only to another :class:`WorldNames` of
    the same snapshot, own text and names (a guard built before a buffer changed keeps its
    name tables until the pool changes); against a plain set, equal when the names are."""

    def __new__(cls, names: Iterable[str], snapshot=None, own=None):
        obj = super().__new__(cls, names)
        obj.snapshot = snapshot
        obj.own = own
        return obj

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WorldNames):
            return self.snapshot is other.snapshot and self.own is other.own and frozenset.__eq__(self, other)
        return frozenset.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = frozenset.__hash__

    def with_own(self, own: OwnFacts | None) -> "WorldNames":
        """These names plus the file's own text ``own`` (its literal names included)."""
        extra = own.names if own is not None else frozenset()
        return WorldNames(frozenset.union(self, extra), self.snapshot, own)

    def view(self) -> FileView:
        """The :class:`FileView` these names stand for."""
        return FileView(self.snapshot, self.own, self.own.path if self.own is not None else None)


def snapshot_of(project) -> Snapshot:
    """The snapshot of a bare :class:`~luaguard.project.index.ProjectIndex` (its tree alone,
    no scripts read), kept on the index for its current generation: what callers that hold
    an index but no engine get (the guard built for an index, tools)."""
    got = getattr(project, "_snapshot", None)
    if got is None or got.generation != getattr(project, "generation", 0):
        got = Snapshot(project)
        try:
            project._snapshot = got
        except AttributeError:  # pragma: no cover - an index type without the slot
            pass
    return got


