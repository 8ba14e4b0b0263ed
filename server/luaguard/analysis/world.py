"""The run-time world: which instances the project's own scripts create, clone and move,
and where - so that a child missing from the project files is an error only where the
project determines the container's contents (an error is a claim of certainty).

Roblox's run-time behaviour (create.roblox.com: ``Player``, ``StarterGui``,
``StarterPack``, ``StarterPlayerScripts``, ``StarterCharacterScripts``, the R6 and R15
character rigs; the ``Instance.new``, ``Instance:Clone`` and ``Instance.Parent`` reference
pages) and what the scripts do (:mod:`.facts`) decide a lookup's :class:`Found` for a
closed container without that child (the snapshot turns it into a
:class:`~.verdict.Verdict`):

* ``created`` (no finding): a script creates that very name there - parented to the
  container (or to a clone of it: code inside a template runs in its clones), to an
  instance of the container's name (``x.Parent = self.gui.Frame``), or to a value the code
  cannot tell (a parameter) when the code evaluates or names the container, or the
  container exists only at run time (:meth:`~.places.Places.runtime_container`: a player and the
  containers Roblox gives it, a character, a template's clone site).  Under those run-time
  containers any name of the pool (:mod:`.scans`) counts: UI libraries create
  children in ways no pattern follows;
* ``maybe`` (the child may exist: a warning or hint at most, with the evidence): a
  template script (code clones it and may give the clone children); code parents
  instances *named at run time* there (``.Name = expression``, a clone of an instance it
  cannot tell); code clones or moves the linted script's ancestors elsewhere; any script
  parents instances, under a run-time container; code loaded by asset id
  (``require(123)``) may create any child of a service.  ``handled`` (nothing to report)
  where the linted file checks for the child with ``FindFirstChild`` first, or the name is
  a part Roblox gives every character, looked up from a script's parent;
* ``None``: nothing may create it - an ``unknown_instance`` error.

Files are parsed lazily, once per project: only those that may matter for a given lookup
(with the child's name where a name is given, or naming the container, or standing beside
it).  The guard reads the same answers (:meth:`RuntimeWorld.names_under`,
:meth:`RuntimeWorld.maybe_names`), so it accepts exactly what the linter accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..luau import ast as A
from ..project.tree import Instance
from .facts import FileFacts, extract_facts
from .places import CHARACTER_PARTS, origin, runs_in_place
from .resolve import Resolver, TreeJudge
from .scans import created_names

CREATED = "created"
MAYBE = "maybe"


@dataclass(frozen=True, slots=True)
class Found:
    """``status`` is :data:`CREATED` or :data:`MAYBE`; ``evidence`` says why, for the
    message (``"src/server/Data.server.luau:12 creates it at run time (Instance.new)"``);
    ``handled``: the code copes with the child's absence or Roblox provides it (nothing to
    report); ``named_at_run_time`` (see below)."""

    status: str
    evidence: str
    handled: bool = False
    #: the container stays where it is and only code that names instances at run time (by
    #: expressions) may add children: a name no script spells is unlikely there
    named_at_run_time: bool = False


class OwnFacts:
    """The linted text's own run-time facts (it may be newer than the file on disk):
    ``names`` (its pool names), ``path`` (absolute, or ``None``), ``scripts`` (the
    instances the file maps to); :meth:`facts` parses lazily (``chunk`` returns the
    linter's parse when there is one)."""

    __slots__ = ("names", "path", "scripts", "_text", "_chunk", "_facts", "_found")

    def __init__(self, text: str, path: Path | None, scripts, names=None, chunk=None) -> None:
        self._text = text
        self.path = path
        self.scripts = list(scripts)
        self.names = frozenset(created_names(text) if names is None else names)
        self._chunk = chunk
        self._facts: FileFacts | None = None
        self._found: frozenset[str] | None = None

    def may_check_for(self, name: str) -> bool:
        """Might :meth:`facts`' ``presence`` hold ``name``?  False only when the text has
        no ``:FindFirstChild("name")`` call (every method call of a parse is among its
        ``lookups``): then the facts need not be extracted to know it does not."""
        found = self._found
        if found is None:
            if self._facts is not None:
                return True
            chunk = self._chunk() if callable(self._chunk) else self._chunk
            if chunk is None:
                return True
            found = self._found = frozenset(
                c.args[0].value for c in chunk.lookups
                if type(c) is A.ExprCall and c.is_method and c.args and type(c.args[0]) is A.ExprString
                and c.method == "FindFirstChild")
        return name in found

    def facts(self, world: "RuntimeWorld") -> FileFacts | None:
        if self._facts is None:
            got = world.same_facts(self.path, self._text, self.scripts)
            if got is None:
                chunk = self._chunk() if callable(self._chunk) else self._chunk
                got = world.facts_for_text(self._text, self.path, self.scripts, chunk)
                world.offer_facts(self.path, self._text, self.scripts, got)
            self._facts = got[0] if isinstance(got, tuple) else got
        return self._facts


class RuntimeWorld:
    """Answers "may code create this child here?" for one project (see the module
    docstring), from the snapshot's text scans (:class:`~.scans.ProjectScans`) and the
    facts of the files they point at (parsed lazily, kept until the file changes).
    ``snapshot`` is the :class:`~.snapshot.Snapshot` that owns this world."""

    def __init__(self, snapshot) -> None:
        self._snapshot = snapshot
        self._names = snapshot.scans
        self._facts: dict[Path, FileFacts | None] = {}
        self._version = -1
        self._by_name: dict[str, list[Path]] = {}
        self._by_mention: dict[str, frozenset[Path]] = {}
        self._naming: dict[str, frozenset[Path]] = {}
        self._texts: dict[Path, str] = {}
        self._text_bytes = 0
        self._creators: list[Path] = []
        self._verdicts: dict[tuple, Found | None] = {}
        self._maybes: dict[int, Found | None] = {}
        self._under: dict[tuple, frozenset[str]] = {}
        self._near: dict[int, list[Path]] = {}
        self._last_own: tuple | None = None
        self._changed: set[Path] = set()
        self._pending = 0

    # -- bookkeeping ---------------------------------------------------------------------
    def forget(self, path: Path) -> None:
        """``path`` changed (the scans' version was bumped once): drop what was learnt
        from it."""
        self._facts.pop(path, None)
        self._changed.add(path)
        self._pending += 1

    def _sync(self) -> None:
        if self._version == self._names.version:
            return
        by_name: dict[str, list[Path]] = {}
        creators: list[Path] = []
        for path, scan in self._names.scans().items():
            if not scan.creates:
                continue
            creators.append(path)
            for n in scan.names:
                by_name.setdefault(n, []).append(path)
        self._by_name, self._creators = by_name, creators
        changed = self._changed
        if self._version >= 0 and self._version + self._pending == self._names.version:
            # only these files changed (an editor buffer at each keystroke): the text searches
            # are redone for them alone - the same sets as searching every file again
            for path in changed:
                old = self._texts.pop(path, None)
                if old is not None:
                    self._text_bytes -= len(old)
            makers = set(creators)
            texts = {path: (self._text(path) if path in makers else "") for path in changed}

            def mentions(path: Path, name: str) -> bool:
                t = texts[path]
                return bool(t) and name in t and _mention_pattern(name).search(t) is not None

            for name, paths in list(self._by_mention.items()):
                now = set(paths) - changed
                now.update(path for path in changed if mentions(path, name))
                self._by_mention[name] = frozenset(now)
            for name, paths in list(self._naming.items()):
                now = set(paths) - changed
                naming, moving = _naming_pattern(name), _moving_pattern(name)
                named = by_name.get(name, ())
                for path in changed:
                    t = texts[path]
                    if not t:
                        continue
                    if (path in named and (naming.search(t) or _DYNAMIC_NAME.search(t))) \
                            or (mentions(path, name) and moving.search(t)):
                        now.add(path)
                self._naming[name] = frozenset(now)
        else:
            self._by_mention = {}
            self._naming = {}
            self._texts = {}
            self._text_bytes = 0
        self._changed = set()
        self._pending = 0
        self._verdicts = {}
        self._maybes = {}
        self._under = {}
        self._near = {}
        self._version = self._names.version

    def _project(self):
        return self._snapshot.project

    def _rel(self, path: Path | None) -> str:
        project = self._project()
        if path is None:
            return "this file"
        return project._rel(path) if project is not None else str(path)

    #: texts of scripts that create instances kept in memory for the name searches, up to
    #: this many characters in all (beyond, they are read again when needed)
    TEXT_BUDGET = 64_000_000

    def _text(self, path: Path) -> str:
        got = self._texts.get(path)
        if got is None:
            got = self._names.text(path) or ""
            if self._text_bytes + len(got) <= self.TEXT_BUDGET:
                self._texts[path] = got
                self._text_bytes += len(got)
        return got

    def mentioning(self, name: str) -> frozenset[Path]:
        """The scripts that create instances and name ``name`` (as an identifier or in a
        string): the code that may reach an instance so named."""
        self._sync()
        got = self._by_mention.get(name)
        if got is None:
            search = _mention_pattern(name).search
            text = self._text
            got = frozenset(p for p in self._creators if name in (t := text(p)) and search(t))
            self._by_mention[name] = got
        return got

    def naming_files(self, name: str) -> frozenset[Path]:
        """The scripts that may create an instance named ``name``: those with the string
        where a name is given (``Name = "name"``, ``Instance.new("name")``, or a helper's
        argument where the helper sets ``Name`` from an expression), and those that clone or
        reparent, on a line naming it, a node so named."""
        self._sync()
        got = self._naming.get(name)
        if got is None:
            naming = _naming_pattern(name)
            moving = _moving_pattern(name)
            text = self._text
            paths = {p for p in self._by_name.get(name, ())
                     if naming.search(t := text(p)) or _DYNAMIC_NAME.search(t)}
            paths.update(p for p in self.mentioning(name) if moving.search(text(p)))
            got = self._naming[name] = frozenset(paths)
        return got

    def facts(self, path: Path) -> FileFacts | None:
        """The facts of the project file ``path`` (``None`` when unreadable)."""
        if path in self._facts:
            return self._facts[path]
        project = self._project()
        text = self._names.text(path)
        got = None
        if text and project is not None:
            scripts = project.instances_for_file(path)
            shared = self.same_facts(path, text, scripts)
            got = shared[0] if shared is not None else self.facts_for_text(text, path, scripts, None)
        self._facts[path] = got
        return got

    # the facts of one text, extracted once: the linted file's own (an editor buffer is also
    # the project's current text of that file) and the project file's are the same facts
    def same_facts(self, path: Path | None, text: str, scripts) -> tuple | None:
        """``(facts,)`` already extracted from exactly ``text`` as the file ``path`` with the
        instances ``scripts`` (the linted text's, or the project file's), else ``None``."""
        if path is None:
            return None
        last = self._last_own
        if last is not None and last[0] == path and last[1] == text and last[2] == tuple(map(id, scripts)):
            return (last[3],)
        if path in self._facts and self._names.text(path) == text:
            project = self._project()
            if project is not None and tuple(map(id, project.instances_for_file(path))) == tuple(map(id, scripts)):
                return (self._facts[path],)
        return None

    def offer_facts(self, path: Path | None, text: str, scripts, facts: FileFacts | None) -> None:
        """Remember the linted text's facts for :meth:`same_facts` (the last one only)."""
        if path is not None:
            self._last_own = (path, text, tuple(map(id, scripts)), facts)

    def facts_for_text(self, text: str, path: Path | None, scripts, chunk) -> FileFacts | None:
        """Facts of ``text`` (``chunk``: its parse, when at hand)."""
        project = self._project()
        if project is None:
            return None
        if chunk is None:
            from ..luau.parsed import parsed

            try:
                chunk = parsed(text, keep=True)[2]  # (kept for this file's own lint, in a batch run)
            except RecursionError:  # pragma: no cover - the parser has its own depth limit
                return None
        resolver = Resolver(project, list(scripts), TreeJudge(project, self._snapshot.places), project.api)
        resolver.declare_types(chunk.type_names)
        try:
            facts = extract_facts(chunk, text, resolver, self._rel(path))
        except RecursionError:  # pragma: no cover - deeply nested expressions
            return None
        facts.path = path
        return facts

    # -- queries ---------------------------------------------------------------------------
    def _files(self, paths):
        """Facts of the project files ``paths`` (unreadable ones left out)."""
        for p in paths:
            f = self.facts(p)
            if f is not None:
                yield f

    def _near_files(self, node: Instance) -> list[Path]:
        """Scripts that create instances and stand at ``node``, beside it or up to two
        levels below it: code that reaches it through ``script.Parent``."""
        got = self._near.get(id(node))
        if got is not None:
            return got
        project = self._project()
        near: list[Instance] = [node]
        if node.parent is not None and node.parent.parent is not None:
            near.extend(node.parent.all_children())
        for child in node.all_children():
            near.append(child)
            near.extend(child.all_children())
        creators = set(self._creators)
        out: list[Path] = []
        for n in dict.fromkeys(near):
            for fp in n.file_paths:
                p = project.root_dir / fp
                if p in creators:
                    out.append(p)
        self._near[id(node)] = out
        return out

    def verdict(self, node: Instance, name: str, own: OwnFacts | None = None) -> Found | None:
        """May ``name`` be a child of ``node`` (a closed node without that child in the
        project) at run time?  See the module docstring; ``own``: the linted text's facts
        (they replace the file's on disk).  ``created`` beats ``maybe``; cheap checks first:
        each file read here is parsed once per project."""
        project = self._project()
        if project is None:
            return None
        self._sync()
        places = self._snapshot.places
        ox = origin(node)
        runtime = places.runtime_container(node)
        # a template script: code clones it, and may give the clone children
        if ox.class_name in ("Script", "LocalScript") and project.root is project.datamodel \
                and not runs_in_place(places.runtime_node(ox)):
            how = "is disabled" if ox.disabled else "does not run where it stands"
            return Found(MAYBE, f"{ox.path} {how}: a template that code clones, and may give children")
        key = (id(node), name)
        created = self._verdicts.get(key, False)
        if created is False:
            if len(self._verdicts) > 65536:
                self._verdicts.clear()
            created = self._verdicts[key] = self._created(project, ox, name, runtime, None)
        if created is not None:
            return created
        if own is not None:
            got = self._created(project, ox, name, runtime, own)
            if got is not None:
                return got
            f = own.facts(self)
            if f is not None and (id(ox), name) in f.presence:
                return Found(MAYBE, f"the code checks for it with FindFirstChild first (line {f.presence[(id(ox), name)]})",
                             handled=True)
            if name in CHARACTER_PARTS and _script_ancestor(places, node, own):
                return Found(MAYBE, f"Roblox creates '{name}' in every character; a script looking it up from its "
                                    "parent runs in a character (a template cloned into one)", handled=True)
        maybe = self._maybes.get(id(node), False)
        if maybe is False:
            maybe = self._maybes[id(node)] = self._maybe(project, node, ox, runtime, None)
        if maybe is not None:
            return maybe
        if own is not None:
            return self._maybe(project, node, ox, runtime, own)
        return None

    def _created(self, project, ox: Instance, name: str, runtime: bool, own: OwnFacts | None) -> Found | None:
        """Code creates this very name there: the project's scripts (``own`` ``None``) or
        the linted text (``own``)."""
        if own is None:
            if runtime and name in self._names.pool():
                return Found(CREATED, "a script names it, and scripts add children here at run time")
            files = self._files(sorted(self.naming_files(name)))
        else:
            if runtime and name in own.names:
                return Found(CREATED, "a script names it, and scripts add children here at run time")
            f = own.facts(self)
            files = [f] if f is not None else []
        for f in files:
            for c in f.creations:
                if c.name == name and c.may_target(ox, runtime or self._reaches(f, ox)):
                    return Found(CREATED, f"{f.rel}:{c.line} creates it at run time ({c.how})")
        return None

    def _maybe(self, project, node: Instance, ox: Instance, runtime: bool, own: OwnFacts | None) -> Found | None:
        """Code may create any name there: the project's scripts (``own`` ``None``), or the
        linted text (``own``)."""
        if own is not None:
            f = own.facts(self)
            if f is not None:
                got = self._named_at_run_time(f, ox, runtime)
                if got is not None:
                    return got
            # the script's own ancestors are moved or cloned elsewhere by code
            return self._moved_chain(project, node, own)
        scans = self._names.scans()
        if runtime:
            # a player's or a character's children: any script that parents instances
            for path in self._creators:
                scan = scans.get(path)
                if scan is not None and scan.parent_line:
                    return Found(MAYBE, f"scripts add children to players at run time "
                                        f"(e.g. {self._rel(path)}:{scan.parent_line})", named_at_run_time=True)
        # code loaded by asset id may create anything under the services
        for path, scan in scans.items():
            if not scan.assets:
                continue
            loaders = project.instances_for_file(path)
            if ox.parent is project.datamodel or any(ox is a or any(ox is b for b in a.ancestors()) for a in loaders):
                line, asset = scan.assets[0]
                return Found(MAYBE, f"{self._rel(path)}:{line} loads code by asset id ({asset}), which may create it")
        # the code that may evaluate a parent expression to the container: code naming it
        # (or an alias of it), and scripts beside or below it (``script.Parent``); a service
        # is named by nearly every script - there, only code that names it where it parents
        near = set(self.mentioning(ox.name))
        if ox.parent is project.datamodel:
            parenting = _parenting_pattern(ox.name)
            near = {p for p in near if parenting.search(self._text(p))}
        near.update(self._near_files(ox))
        for f in self._files(sorted(near)):
            got = self._named_at_run_time(f, ox, runtime)
            if got is not None:
                return got
        return None

    @staticmethod
    def _named_at_run_time(f: FileFacts, ox: Instance, runtime: bool) -> Found | None:
        for c in f.creations:
            # (an unknown parent, with an unknown name: only a run-time container)
            if c.name is None and c.may_target(ox, runtime):
                return Found(MAYBE, f"{f.rel}:{c.line} parents instances named at run time here",
                             named_at_run_time=True)
        return None

    def _moved_chain(self, project, node: Instance, own: OwnFacts) -> Found | None:
        """``node`` is an ancestor of the linted script and code clones or moves a node
        between them elsewhere: ``node`` is not the script's ancestor at run time."""
        for script in own.scripts:
            chain: list[Instance] = []
            cur: Instance | None = self._snapshot.places.runtime_node(script)
            while cur is not None and cur is not node:
                chain.append(cur)
                cur = cur.parent
            if cur is None:
                continue
            for n in chain:
                on = origin(n)
                paths = set(self.mentioning(on.name))
                if on.parent is not None:
                    paths.update(self.mentioning(on.parent.name))
                for f in self._files(sorted(paths)):
                    hit = f.moved.get(id(on))
                    if hit is not None:
                        return Found(MAYBE, f"{f.rel}:{hit[1]} clones or moves {on.path} elsewhere at run time")
        return None

    def _reaches(self, f: FileFacts, node: Instance) -> bool:
        """May the code of ``f`` put an instance into ``node`` through a value it cannot
        tell (a parameter, a call's result)?  When it evaluates some expression to ``node``,
        or names it (a path through tables of modules, a dynamic look-up)."""
        if id(node) in f.reach:
            return True
        if f.path is None:
            return False
        return f.path in self.mentioning(node.name)

    def maybe_names(self, node: Instance, own: OwnFacts | None = None) -> frozenset[str]:
        """Names :meth:`verdict` may call ``maybe`` under ``node`` one by one (not any
        name): those the linted file checks for with ``FindFirstChild`` first, and the parts
        Roblox puts in a character when ``node`` is an ancestor of the linted script."""
        project = self._project()
        if project is None or own is None:
            return frozenset()
        out: set[str] = set()
        f = own.facts(self)
        ox = origin(node)
        if f is not None:
            out.update(name for (nid, name) in f.presence if nid == id(ox))
        if _script_ancestor(self._snapshot.places, node, own):
            out.update(CHARACTER_PARTS)
        return frozenset(out)

    def names_under(self, node: Instance, own: OwnFacts | None = None) -> frozenset[str]:
        """Every name :meth:`verdict` calls ``created`` under ``node`` (for the guard's
        name tables): literal creations parented there, and the pool under run-time
        containers.  Reads the facts of every script that creates instances."""
        project = self._project()
        if project is None:
            return frozenset()
        self._sync()
        ox = origin(node)
        runtime = self._snapshot.places.runtime_container(node)
        got = self._under.get(id(node))
        if got is None:
            out: set[str] = set()
            for f in self._files(self._creators):
                for c in f.creations:
                    if c.name is not None and c.may_target(ox, runtime or self._reaches(f, ox)) \
                            and f.path in self.naming_files(c.name):
                        out.add(c.name)
            if runtime:
                out.update(self._names.pool())
            got = self._under[id(node)] = frozenset(out)
        if own is None:
            return got
        extra: set[str] = set()
        f = own.facts(self)
        if f is not None:
            for c in f.creations:
                if c.name is not None and c.may_target(ox, runtime or self._reaches(f, ox)):
                    extra.add(c.name)
        if runtime:
            extra.update(own.names)
        return got | extra if extra else got


@lru_cache(maxsize=4096)
def _naming_pattern(name: str):
    """Text that names an instance ``name`` where it is created: ``Name = "name"`` (a
    property or a property table) or ``Instance.new("name")``."""
    q = re.escape(name)
    return re.compile(rf"""(?:\bName\s*=\s*|Instance\.new\s*\(\s*)(["']){q}\1""")


#: a ``Name`` set from an expression (a helper's parameter): the literal may be an argument
_DYNAMIC_NAME = re.compile(r"""\bName\s*=\s*(?!["'\s])""")


@lru_cache(maxsize=4096)
def _moving_pattern(name: str):
    """A line that names ``name`` (an identifier, or a string) and clones or reparents
    something: where code may clone or move a node so named."""
    q = re.escape(name)
    return re.compile(rf"""^[^\n]*(?:\b{q}\b|(["']){q}\1)[^\n]*(?::\s*Clone\s*\(|\bParent\s*=(?!=))""", re.M)


@lru_cache(maxsize=4096)
def _parenting_pattern(name: str):
    """A line that names ``name`` and sets a ``Parent`` (or creates with a parent)."""
    q = re.escape(name)
    return re.compile(rf"""^[^\n]*(?:\bParent\s*=(?!=)|Instance\.new\s*\()[^\n]*\b{q}\b""", re.M)


def _script_ancestor(places, node: Instance, own: OwnFacts) -> bool:
    """Is ``node`` an ancestor of the linted script (where the script runs)?"""
    for script in own.scripts:
        cur = places.runtime_node(script).parent
        while cur is not None:
            if cur is node:
                return True
            cur = cur.parent
    return False


@lru_cache(maxsize=4096)
def _mention_pattern(name: str):
    """``name`` as a whole identifier, or as a whole string."""
    q = re.escape(name)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return re.compile(rf"(?<![A-Za-z0-9_]){q}(?![A-Za-z0-9_])")
    return re.compile(rf"""(["']){q}\1""")
