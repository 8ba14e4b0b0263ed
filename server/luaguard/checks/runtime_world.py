"""The run-time world: which instances the project's own scripts create, clone and move,
and where - so that a child missing from the project files is an error only where the
project determines the container's contents.

Roblox's run-time behaviour (create.roblox.com: ``Player``, ``StarterGui``,
``StarterPack``, ``StarterPlayerScripts``, ``StarterCharacterScripts``; the
``Instance.new``, ``Instance:Clone`` and ``Instance.Parent`` reference pages) and what a
script's code does decide a lookup's :class:`Verdict`:

* ``created`` (no finding): a script creates the name *there*: ``Instance.new`` (named
  after its class unless ``.Name`` is set), ``x:Clone()`` (named after the original),
  reparenting a project instance (``x.Parent = y``), renaming one (``x.Name = "N"``), a
  property table with ``Parent`` (``{Name = "N", Parent = y}``, as UI libraries and
  helpers take) - parented to the lookup's container (a clone of it counts: code inside
  a template runs in its clones), or to a value the code cannot tell (a parameter, a
  call's result) when the container is one that code reaches (an instance the file names,
  or a child of one it iterates) or a run-time container (a player, its GUI and
  backpack, a character: instances that only exist at run time).  Under run-time
  containers any name of the pool (:mod:`.runtime_names`) is accepted too: UI libraries
  create children in ways no pattern here follows;
* ``maybe`` (at most ``likely_unknown_instance``, with the evidence): code parents
  instances *named at run time* there (``.Name = expression``, a clone of an unknown
  instance), or moves the script's own ancestors elsewhere (a module cloned into each
  tool: its ``script.Parent`` is the clone's host), or loads code by asset id
  (``require(123)``: that code may create anything under the services), or the file
  checks for the child with ``FindFirstChild`` before using it; under run-time
  containers, any script that parents instances;
* ``None``: nothing may create it - an ``unknown_instance`` error.

Facts come from parsing the scripts that create or move instances (the text scan of
:mod:`.runtime_names` tells which), lazily - only the files that may matter for a given
lookup (those naming the child, or mentioning the container) are parsed, once each.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path

from ..luau import ast as A
from ..project.tree import Instance

CREATED = "created"
MAYBE = "maybe"

_CHILD_LISTS = frozenset({"GetChildren", "GetDescendants"})
_ITERATORS = frozenset({"pairs", "ipairs"})


@dataclass(frozen=True, slots=True)
class Verdict:
    """``status`` is :data:`CREATED` or :data:`MAYBE`; ``evidence`` says why, for the
    message (``"created at run time by src/server/Data.server.luau:12"``)."""

    status: str
    evidence: str


@dataclass(frozen=True, slots=True)
class Creation:
    """One place where code gives a container a child: ``name`` (``None`` when named at
    run time by an expression), ``targets`` (the project nodes it is parented to, as
    origins - ``None`` when the parent is a value the code cannot tell), ``line``
    (1-based), ``how`` (``"Instance.new"``, ``"Clone"``, ``"moved"``, ``"renamed"``,
    ``"property table"``) and ``target_name``: when ``targets`` is ``None``, the name the
    parent expression spells, if any (``x.Parent = self.gui.Frame`` - ``"Frame"``; a
    local initialised so): the parent is an instance of that name."""

    name: str | None
    targets: tuple[Instance, ...] | None
    line: int
    how: str
    target_name: str | None = None

    def may_target(self, node: Instance, loose: bool) -> bool:
        """May the child land in ``node`` (an origin)?  ``loose``: an unknown parent may be
        ``node`` (see :meth:`RuntimeWorld.verdict`)."""
        if self.targets is not None:
            return node in self.targets
        if self.target_name is not None:
            return node.name == self.target_name
        return loose


@dataclass
class FileFacts:
    """What one script does at run time (see the module docstring): ``creations``;
    ``moved``: project nodes the code clones or reparents, by id, with the line;
    ``reach``: ids of the project nodes the code's expressions evaluate to (see also
    ``path``); ``presence``: ``(id(node), name)``
    checked with ``FindFirstChild`` in a condition, with the line; ``rel``: the file's
    project-relative path (for evidence)."""

    rel: str
    creations: list[Creation] = field(default_factory=list)
    #: the file (``None`` for a text being linted): code that reaches an instance by a
    #: path the resolver cannot follow (a table of modules, a dynamic look-up) still names
    #: it - :meth:`RuntimeWorld.mentioning` reads the text for the name
    path: Path | None = None
    moved: dict[int, tuple[Instance, int]] = field(default_factory=dict)
    reach: frozenset[int] = frozenset()
    presence: dict[tuple[int, str], int] = field(default_factory=dict)


def origin(node: Instance) -> Instance:
    """The project node a synthesized copy stands for (the node itself otherwise)."""
    return node.origin or node


class _Handle:
    """An instance the code names, creates or moves: where it comes from (``kind``:
    ``"new"``, ``"clone"``, ``"children"``, ``"value"``, ``"table"``), the project nodes it
    is (``sources``), the names and parents assigned to it."""

    __slots__ = ("kind", "sources", "fresh", "class_name", "names", "parents", "line", "spelt")

    def __init__(self, kind: str, line: int, sources: tuple[Instance, ...] = (), fresh: bool = False,
                 spelt: str | None = None) -> None:
        self.kind = kind
        self.sources = sources
        self.fresh = fresh
        self.class_name: str | None = None
        self.names: list[str | None] = []
        self.parents: list[tuple[A.Expr, int]] = []
        self.line = line
        #: the name the expression spells (``a.b.Frame`` - ``"Frame"``), when the value is
        #: unknown: an instance reached by an indexed name is named so
        self.spelt = spelt


_LOOKUPS = frozenset({"WaitForChild", "FindFirstChild"})


def spelt_name(e: A.Expr, depth: int = 0) -> str | None:
    """The instance name an expression spells: the last index name (``a.b.Frame``,
    ``a["Frame"]``, ``a:WaitForChild("Frame")``), through ``:Clone()`` and through a local
    initialised once with such an expression; ``None`` otherwise."""
    while type(e) is A.ExprGroup:
        e = e.expr
    t = type(e)
    if t is A.ExprIndexName:
        return e.name if e.op == "." and e.name not in ("Parent", "Value") else None
    if t is A.ExprIndexExpr:
        return e.index.value if type(e.index) is A.ExprString else None
    if t is A.ExprCall and e.is_method:
        m = e.method
        if m in _LOOKUPS and e.args and type(e.args[0]) is A.ExprString:
            return e.args[0].value
        if m == "Clone" and depth < 4:
            return spelt_name(e.func.obj, depth + 1)
        return None
    if t is A.ExprLocal and depth < 4:
        local = e.local
        if local.value is not None and not local.assignments:
            return spelt_name(local.value, depth + 1)
    return None


def _call_name(call: A.ExprCall) -> tuple[str, str] | None:
    """``("Instance", "new")`` for ``Instance.new(...)``, ``("", "pairs")`` for a global
    function call, else ``None``."""
    f = call.func
    if type(f) is A.ExprIndexName and f.op == "." and type(f.obj) is A.ExprGlobal:
        return f.obj.name, f.name
    if type(f) is A.ExprGlobal:
        return "", f.name
    return None


def extract_facts(chunk, text: str, resolver, rel: str) -> FileFacts:
    """The :class:`FileFacts` of one parsed file.  ``resolver`` is a
    :class:`~luaguard.checks.resolve.Resolver` for the file that knows no run-time names
    (what the project files alone say)."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = find("\n", i + 1)

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset)

    value = resolver.value
    by_call: dict[int, _Handle] = {}
    by_local: dict[int, _Handle] = {}
    others: list[_Handle] = []
    children_of: list[Instance] = []
    facts = FileFacts(rel)
    # helpers that create an instance from their parameters (``createObject(class, name,
    # parent)``): their call sites in this file give the names and parents
    param_of: dict[int, tuple[A.ExprFunction, int]] = {}
    fn_keys: dict[int, list[tuple]] = {}
    calls: dict[tuple, list[A.ExprCall]] = {}
    # values stored in table fields (``self.gui = script.Parent.Gui``, ``M.root = x``): a
    # field read elsewhere in the file is one of them
    fields: dict[str, list[A.Expr]] = {}

    def call_handle(call: A.ExprCall) -> _Handle | None:
        h = by_call.get(id(call))
        if h is not None:
            return h
        if call.method == "Clone":
            obj = call.func.obj
            src = by_local.get(id(obj.local)) if type(obj) is A.ExprLocal else None
            if src is not None and src.kind in ("children", "clone", "value") and src.sources:
                h = _Handle("clone", line_of(call.start), src.sources)
            else:
                nodes = value(obj).nodes
                h = _Handle("clone", line_of(call.start), nodes, spelt=None if nodes else spelt_name(obj))
        elif not call.is_method and _call_name(call) == ("Instance", "new"):
            h = _Handle("new", line_of(call.start), fresh=True)
            if call.args and type(call.args[0]) is A.ExprString:
                h.class_name = call.args[0].value
            if len(call.args) > 1:
                h.parents.append((call.args[1], line_of(call.args[1].start)))
        else:
            return None
        by_call[id(call)] = h
        return h

    def handle_for(e: A.Expr) -> _Handle:
        while type(e) is A.ExprGroup:
            e = e.expr
        t = type(e)
        if t is A.ExprLocal:
            h = by_local.get(id(e.local))
            if h is None:
                v = resolver.local_value(e.local)
                h = by_local[id(e.local)] = _Handle("value", line_of(e.start), v.nodes, v.fresh,
                                                    None if v.nodes else spelt_name(e))
            return h
        if t is A.ExprCall:
            h = call_handle(e)
            if h is not None:
                return h
        v = value(e)
        h = _Handle("value", line_of(e.start), v.nodes, v.fresh, None if v.nodes else spelt_name(e))
        others.append(h)
        return h

    def presence_checks(cond: A.Expr) -> None:
        for node in A.walk(cond):
            if type(node) is A.ExprCall and node.method == "FindFirstChild" and node.args \
                    and type(node.args[0]) is A.ExprString and node.args[0].value is not None:
                for n in value(node.func.obj).nodes:
                    facts.presence.setdefault((id(origin(n)), node.args[0].value), line_of(node.start))

    def children_sources(e: A.Expr) -> tuple[Instance, ...] | None:
        """``x:GetChildren()`` (or ``pairs``/``ipairs`` of it): the instances a loop over
        it visits (``None`` when ``e`` is no such call)."""
        if type(e) is A.ExprCall and not e.is_method and len(e.args) == 1 and (_call_name(e) or ("", ""))[1] in _ITERATORS:
            e = e.args[0]
        if type(e) is not A.ExprCall or e.method not in _CHILD_LISTS:
            return None
        out: list[Instance] = []
        for n in value(e.func.obj).nodes:
            children_of.append(n)
            if e.method == "GetChildren":
                out.extend(n.all_children())
            else:
                for i, d in enumerate(n.descendants()):
                    if i >= 5000:
                        break
                    out.append(d)
        return tuple(out)

    for node in A.walk(chunk.body):
        t = type(node)
        if t is A.ExprCall:
            call_handle(node)
            key = _callee_key(node)
            if key is not None:
                calls.setdefault(key, []).append(node)
        elif t is A.ExprFunction:
            for i, param in enumerate(node.params):
                param_of[id(param)] = (node, i)
        elif t is A.StatLocalFunction:
            fn_keys.setdefault(id(node.func), []).append(("local", id(node.var)))
        elif t is A.StatFunction:
            key = _callee_key_of(node.name, node.func.self_local is not None)
            if key is not None:
                fn_keys.setdefault(id(node.func), []).append(key)
        elif t is A.StatLocal:
            for var, val in zip(node.vars, node.values):
                if type(val) is A.ExprCall:
                    h = call_handle(val)
                    if h is not None:
                        by_local[id(var)] = h
                elif type(val) is A.ExprFunction:
                    fn_keys.setdefault(id(val), []).append(("local", id(var)))
        elif t is A.StatAssign:
            for target, val in zip(node.targets, node.values):
                if type(target) is A.ExprIndexName and target.op == "." and target.name not in ("Name", "Parent"):
                    fields.setdefault(target.name, []).append(val)
                if type(target) is A.ExprIndexName and target.op == "." and target.name in ("Name", "Parent"):
                    h = handle_for(target.obj)
                    if target.name == "Name":
                        h.names.append(val.value if type(val) is A.ExprString else
                                       (val if type(val) is A.ExprLocal and id(val.local) in param_of else None))
                    else:
                        h.parents.append((val, line_of(node.start)))
        elif t is A.StatForIn:
            if len(node.vars) >= 2 and node.values:
                src = children_sources(node.values[0])
                if src is not None:
                    by_local[id(node.vars[1])] = _Handle("children", line_of(node.start), src)
        elif t is A.StatIf:
            presence_checks(node.condition)
        elif t is A.ExprBinary:
            if node.op == "and":
                presence_checks(node.left)
        elif t is A.ExprTable:
            items = {it.key.value: it.value for it in node.items
                     if it.kind == "record" and type(it.key) is A.ExprString and it.key.value in ("Name", "Parent")}
            parent = items.get("Parent")
            if parent is not None:
                h = _Handle("table", line_of(node.start), fresh=True)
                name = items.get("Name")
                h.names.append(name.value if type(name) is A.ExprString else None)
                h.parents.append((parent, line_of(parent.start)))
                others.append(h)

    def targets_of(e: A.Expr, depth: int = 0):
        """Origins of the nodes ``e`` is, ``"fresh"`` for an instance the code made, else
        the name it spells (a ``str``) or ``None``."""
        while type(e) is A.ExprGroup:
            e = e.expr
        if type(e) is A.ExprIndexName and e.op == "." and e.name in fields and depth < 3 and not value(e).nodes:
            stored = [targets_of(v, depth + 1) for v in fields[e.name][:8]]
            nodes = [n for t in stored if isinstance(t, tuple) for n in t]
            if nodes and all(isinstance(t, tuple) for t in stored):
                return tuple(dict.fromkeys(nodes))
        h = None
        if type(e) is A.ExprLocal:
            h = by_local.get(id(e.local))
        elif type(e) is A.ExprCall:
            h = by_call.get(id(e))
        if h is not None:
            if h.kind == "clone" and h.sources:
                return tuple(dict.fromkeys(origin(n) for n in h.sources))
            if h.kind in ("new", "table"):
                return "fresh"
            if h.kind == "clone":
                return h.spelt
        v = value(e)
        if v.nodes:
            return tuple(dict.fromkeys(origin(n) for n in v.nodes))
        if v.fresh:
            return "fresh"
        return spelt_name(e)

    seen: set[int] = set()
    for h in [*by_call.values(), *by_local.values(), *others]:
        if id(h) in seen:
            continue
        seen.add(id(h))
        if not h.parents:
            if h.names and h.sources and h.kind == "value":
                # a project instance renamed where it stands
                where = tuple(dict.fromkeys(origin(n).parent for n in h.sources if origin(n).parent is not None))
                for name in h.names:
                    facts.creations.append(Creation(name, where or None, h.line, "renamed"))
            continue
        if h.names:
            names: list[str | None] = list(dict.fromkeys(h.names))
        elif h.kind == "new":
            names = [h.class_name]
        elif h.sources:
            names = list(dict.fromkeys(n.name for n in h.sources))
        else:
            names = [h.spelt]
        how = {"new": "Instance.new", "clone": "Clone", "table": "property table"}.get(h.kind, "moved")
        for expr, line in h.parents:
            for name, parent, at in _bind_sites(names, expr, line, param_of, fn_keys, calls, line_of):
                targets = targets_of(parent)
                if targets == "fresh":
                    continue
                if isinstance(targets, str):
                    facts.creations.append(Creation(name, None, at, how, targets))
                else:
                    facts.creations.append(Creation(name, targets, at, how))
            if h.kind != "new":
                for n in h.sources:
                    facts.moved.setdefault(id(origin(n)), (origin(n), line))

    # the nodes the code reaches: every project node an evaluated expression is
    for node in chunk.lookups:
        value(node)
    reach: set[int] = set()
    for v in list(resolver._memo.values()) + list(resolver._locals.values()):
        for n in v.nodes:
            reach.add(id(origin(n)))
    for n in children_of:
        reach.update(id(origin(c)) for c in n.all_children())
    dm = resolver.project.datamodel
    reach.discard(id(dm))
    facts.reach = frozenset(reach)
    return facts


def _callee_key(call: A.ExprCall) -> tuple | None:
    """How a call names its function: ``("local", id)``, ``("global", name)`` or
    ``("field", name, is_method)``."""
    return _callee_key_of(call.func, call.is_method)


def _callee_key_of(e: A.Expr, method: bool) -> tuple | None:
    t = type(e)
    if t is A.ExprLocal:
        return ("local", id(e.local))
    if t is A.ExprGlobal:
        return ("global", e.name)
    if t is A.ExprIndexName:
        return ("field", e.name, method)
    return None


def _bind_sites(names: list, parent: A.Expr, line: int, param_of, fn_keys, calls, line_of):
    """``(name, parent expression, line)`` for one ``Parent`` assignment: as written, or -
    when the name or the parent is a parameter of the enclosing helper function - once for
    each call of the helper in the file, with that call's arguments (at most 200)."""
    def param(e):
        while type(e) is A.ExprGroup:
            e = e.expr
        return param_of.get(id(e.local)) if type(e) is A.ExprLocal else None

    fn = None
    for e in [parent, *[n for n in names if isinstance(n, A.Expr)]]:
        got = param(e)
        if got is not None:
            fn = got[0]
            break
    if fn is None:
        for n in names:
            yield (n if not isinstance(n, A.Expr) else None), parent, line
        return
    sites = [c for key in fn_keys.get(id(fn), ()) for c in calls.get(key, ())][:200]

    def arg(e, call):
        got = param(e)
        if got is None or got[0] is not fn:
            return e
        return call.args[got[1]] if got[1] < len(call.args) else None

    for call in sites:
        p = arg(parent, call)
        if p is None:
            continue
        for n in names:
            if isinstance(n, A.Expr):
                a = arg(n, call)
                n = a.value if type(a) is A.ExprString else None
            yield n, p, line_of(call.start)


class OwnFacts:
    """The linted text's own run-time facts (it may be newer than the file on disk):
    ``names`` (its pool names), ``path`` (absolute, or ``None``), ``scripts`` (the
    instances the file maps to); :meth:`facts` parses lazily (``chunk`` returns the
    linter's parse when there is one)."""

    __slots__ = ("names", "path", "scripts", "_text", "_chunk", "_facts")

    def __init__(self, text: str, path: Path | None, scripts, names=None, chunk=None) -> None:
        from .runtime_names import created_names

        self._text = text
        self.path = path
        self.scripts = list(scripts)
        self.names = frozenset(created_names(text) if names is None else names)
        self._chunk = chunk
        self._facts: FileFacts | None = None

    def facts(self, world: "RuntimeWorld") -> FileFacts | None:
        if self._facts is None:
            chunk = self._chunk() if callable(self._chunk) else self._chunk
            self._facts = world.facts_for_text(self._text, self.path, self.scripts, chunk)
        return self._facts


class RuntimeWorld:
    """Answers "may code create this child here?" for one project (see the module
    docstring), from :class:`~.runtime_names.RuntimeNames`' scans and the facts of the
    files they point at (parsed lazily, cached until the file changes)."""

    def __init__(self, names) -> None:
        self._names = names
        self._facts: dict[Path, FileFacts | None] = {}
        self._version = -1
        self._by_name: dict[str, list[Path]] = {}
        self._by_mention: dict[str, frozenset[Path]] = {}
        self._naming: dict[str, frozenset[Path]] = {}
        self._texts: dict[Path, str] = {}
        self._text_bytes = 0
        self._creators: list[Path] = []
        self._verdicts: dict[tuple, Verdict | None] = {}
        self._maybes: dict[int, Verdict | None] = {}
        self._under: dict[tuple, frozenset[str]] = {}
        self._near: dict[int, list[Path]] = {}

    # -- bookkeeping ---------------------------------------------------------------------
    def forget(self, path: Path) -> None:
        """``path`` changed: drop what was learnt from it."""
        self._facts.pop(path, None)
        self._version = -1

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
        self._by_mention = {}
        self._naming = {}
        self._texts = {}
        self._text_bytes = 0
        self._verdicts = {}
        self._maybes = {}
        self._under = {}
        self._near = {}
        self._version = self._names.version

    def _project(self):
        return self._names.project()

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
            got = frozenset(p for p in self._creators if name in text(p) and search(text(p)))
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
                     if naming.search(text(p)) or _DYNAMIC_NAME.search(text(p))}
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
            got = self.facts_for_text(text, path, project.instances_for_file(path), None)
        self._facts[path] = got
        return got

    def facts_for_text(self, text: str, path: Path | None, scripts, chunk) -> FileFacts | None:
        """Facts of ``text`` (``chunk``: its parse, when at hand)."""
        project = self._project()
        if project is None:
            return None
        from .resolve import Resolver

        if chunk is None:
            from ..luau.lexer import tokenize
            from ..luau.parser import parse

            try:
                chunk = parse(text, tokenize(text))
            except RecursionError:  # pragma: no cover - the parser has its own depth limit
                return None
        resolver = Resolver(project, list(scripts), frozenset(), project.api)
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

    def verdict(self, node: Instance, name: str, own: OwnFacts | None = None) -> Verdict | None:
        """May ``name`` be a child of ``node`` (a closed node without that child in the
        project) at run time?  See the module docstring; ``own``: the linted text's facts
        (they replace the file's on disk).  ``created`` beats ``maybe``; cheap checks first:
        each file read here is parsed once per project."""
        project = self._project()
        if project is None:
            return None
        self._sync()
        ox = origin(node)
        runtime = runtime_container(project, node)
        # a template script: code clones it, and may give the clone children
        from .resolve import runs_in_place, runtime_node

        if ox.class_name in ("Script", "LocalScript") and project.root is project.datamodel \
                and not runs_in_place(runtime_node(project, ox)):
            how = "is disabled" if ox.disabled else "does not run where it stands"
            return Verdict(MAYBE, f"{ox.path} {how}: a template that code clones, and may give children")
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
                return Verdict(MAYBE, f"the code checks for it with FindFirstChild first (line {f.presence[(id(ox), name)]})")
            if name in CHARACTER_PARTS and _script_ancestor(project, node, own):
                return Verdict(MAYBE, f"Roblox creates '{name}' in every character; a script looking it up from its "
                                      "parent runs in a character (a template cloned into one)")
        maybe = self._maybes.get(id(node), False)
        if maybe is False:
            maybe = self._maybes[id(node)] = self._maybe(project, node, ox, runtime, None)
        if maybe is not None:
            return maybe
        if own is not None:
            return self._maybe(project, node, ox, runtime, own)
        return None

    def _created(self, project, ox: Instance, name: str, runtime: bool, own: OwnFacts | None) -> Verdict | None:
        """Code creates this very name there: the project's scripts (``own`` ``None``) or
        the linted text (``own``)."""
        if own is None:
            if runtime and name in self._names.pool():
                return Verdict(CREATED, "a script names it, and scripts add children here at run time")
            files = self._files(sorted(self.naming_files(name)))
        else:
            if runtime and name in own.names:
                return Verdict(CREATED, "a script names it, and scripts add children here at run time")
            f = own.facts(self)
            files = [f] if f is not None else []
        for f in files:
            for c in f.creations:
                if c.name == name and c.may_target(ox, runtime or self._reaches(f, ox)):
                    return Verdict(CREATED, f"{f.rel}:{c.line} creates it at run time ({c.how})")
        return None

    def _maybe(self, project, node: Instance, ox: Instance, runtime: bool, own: OwnFacts | None) -> Verdict | None:
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
                    return Verdict(MAYBE, f"scripts add children to players at run time "
                                          f"(e.g. {self._rel(path)}:{scan.parent_line})")
        # code loaded by asset id may create anything under the services
        for path, scan in scans.items():
            if not scan.assets:
                continue
            loaders = project.instances_for_file(path)
            if ox.parent is project.datamodel or any(ox is a or any(ox is b for b in a.ancestors()) for a in loaders):
                line, asset = scan.assets[0]
                return Verdict(MAYBE, f"{self._rel(path)}:{line} loads code by asset id ({asset}), which may create it")
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
    def _named_at_run_time(f: FileFacts, ox: Instance, runtime: bool) -> Verdict | None:
        for c in f.creations:
            # (an unknown parent, with an unknown name: only a run-time container)
            if c.name is None and c.may_target(ox, runtime):
                return Verdict(MAYBE, f"{f.rel}:{c.line} parents instances named at run time here")
        return None

    def _moved_chain(self, project, node: Instance, own: OwnFacts) -> Verdict | None:
        """``node`` is an ancestor of the linted script and code clones or moves a node
        between them elsewhere: ``node`` is not the script's ancestor at run time."""
        from .resolve import runtime_node

        for script in own.scripts:
            chain: list[Instance] = []
            cur: Instance | None = runtime_node(project, script)
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
                        return Verdict(MAYBE, f"{f.rel}:{hit[1]} clones or moves {on.path} elsewhere at run time")
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
        if _script_ancestor(project, node, own):
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
        runtime = runtime_container(project, node)
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


#: what Roblox puts into every player character (create.roblox.com, "Characters"; the R6
#: and R15 rigs): the ``Humanoid``, its root part and body parts, the default ``Animate``
#: and ``Health`` scripts
CHARACTER_PARTS = frozenset({
    "Humanoid", "HumanoidRootPart", "Head", "Animate", "Health", "Body Colors",
    "Torso", "Left Arm", "Right Arm", "Left Leg", "Right Leg",
    "UpperTorso", "LowerTorso", "LeftUpperArm", "LeftLowerArm", "LeftHand", "RightUpperArm",
    "RightLowerArm", "RightHand", "LeftUpperLeg", "LeftLowerLeg", "LeftFoot", "RightUpperLeg",
    "RightLowerLeg", "RightFoot",
})


def _naming_pattern(name: str):
    """Text that names an instance ``name`` where it is created: ``Name = "name"`` (a
    property or a property table) or ``Instance.new("name")``."""
    import re

    q = re.escape(name)
    return re.compile(rf"""(?:\bName\s*=\s*|Instance\.new\s*\(\s*)(["']){q}\1""")


#: a ``Name`` set from an expression (a helper's parameter): the literal may be an argument
_DYNAMIC_NAME = __import__("re").compile(r"""\bName\s*=\s*(?!["'\s])""")


def _moving_pattern(name: str):
    """A line that names ``name`` (an identifier, or a string) and clones or reparents
    something: where code may clone or move a node so named."""
    import re

    q = re.escape(name)
    return re.compile(rf"""^[^\n]*(?:\b{q}\b|(["']){q}\1)[^\n]*(?::\s*Clone\s*\(|\bParent\s*=(?!=))""", re.M)


def _parenting_pattern(name: str):
    """A line that names ``name`` and sets a ``Parent`` (or creates with a parent)."""
    import re

    q = re.escape(name)
    return re.compile(rf"""^[^\n]*(?:\bParent\s*=(?!=)|Instance\.new\s*\()[^\n]*\b{q}\b""", re.M)


def _script_ancestor(project, node: Instance, own: OwnFacts) -> bool:
    """Is ``node`` an ancestor of the linted script (where the script runs)?"""
    from .resolve import runtime_node

    for script in own.scripts:
        cur = runtime_node(project, script).parent
        while cur is not None:
            if cur is node:
                return True
            cur = cur.parent
    return False


def _mention_pattern(name: str):
    """``name`` as a whole identifier, or as a whole string."""
    import re

    q = re.escape(name)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return re.compile(rf"(?<![A-Za-z0-9_]){q}(?![A-Za-z0-9_])")
    return re.compile(rf"""(["']){q}\1""")


def runtime_container(project, node: Instance) -> bool:
    """Is ``node`` a container that exists only at run time, where scripts put instances
    they cannot name a project path for: the local player and the containers Roblox gives
    it (``PlayerGui``, ``Backpack``, ``PlayerScripts``, ``StarterGear``), a character and
    what it holds, a template's clone site?  (What the player's containers copy from
    ``StarterGui`` and ``StarterPlayerScripts`` is as closed as the original.)"""
    from .resolve import _CHARACTER_REASON

    player = project.local_player()
    if node is player or node.parent is player:
        return True
    cur: Instance | None = node
    while cur is not None:
        if cur.open_reason == _CHARACTER_REASON or cur.class_name == "<template site>":
            return True
        cur = cur.parent
    return False
