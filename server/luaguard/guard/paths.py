"""Instance-path facts for the decoding guard: value sets, name tables and bindings.

The guard lets a model spell only names that exist where it is writing a path.  It
evaluates chains exactly as the linter does, through the public steps of the linter's own
:class:`~luaguard.analysis.resolve.Resolver` and the project snapshot's verdicts (members
of the class win over children, ``Parent`` climbs, ``LocalPlayer`` of ``Players`` is the
client player, ``game`` children include every service, a name is refused only where its
:class:`~luaguard.analysis.verdict.Verdict` is an error, ``GetService`` takes service
names), so that every name the guard allows is one the ``unknown_instance``/
``unknown_service`` rules accept.

* A **value** is an ``int``: :data:`NOVAL` (not a known instance), :data:`POISON` (the guard
  cannot tell which instance: indexing it is banned) or the id of an interned tuple of
  instances (:meth:`PathSpace.nodeset`).
* A **name table** (:meth:`PathSpace.table`) holds, for one value and one way of naming a
  child (``.Name``, ``["Name"]``, ``:WaitForChild("Name")``/``:FindFirstChild``,
  ``game:GetService("Name")``, ``:FindFirstAncestor("Name")``), a byte trie of the names
  that resolve and the value each one resolves to; ``free`` is set when any other name is
  also accepted (an open node, a class the API data does not know).
* **Bindings** map variable names to values: ``game``, ``workspace``/``Workspace`` and
  ``script`` (the file's instances, as the resolver maps them), plus the locals of the
  prompt that the resolver binds to chains (``local RS = game:GetService("ReplicatedStorage")``).

Name tries exclude names the guard will not write: non-identifiers after ``.``, and names
holding quotes, backslashes or control characters inside strings.  Names that scripts
create at run time or frameworks link in (:meth:`~luaguard.analysis.snapshot.Snapshot.known_names`
of the snapshot the space's ``runtime_names`` carry, a
:class:`~luaguard.analysis.snapshot.WorldNames`) are accepted exactly where the linter
accepts them - under the instance code parents them to, with an unknown value; a container
where code may create any name is free - so the guard and the linter keep one contract.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis.places import service_names
from ..analysis.resolve import Resolver, Value, scriptable
from ..analysis.snapshot import WorldNames, snapshot_of
from ..project.tree import Instance, is_identifier
from .brackets import NOVAL, POISON, prompt_frames
from .trie import LazyTrie, build_trie

__all__ = [
    "DESC",
    "KIND_ANCESTOR",
    "KIND_BRACKET",
    "KIND_DOT",
    "KIND_FIND",
    "KIND_LOOKUP",
    "KIND_SERVICE",
    "LOOKUP_METHODS",
    "NOVAL",
    "POISON",
    "LocalFact",
    "NameTable",
    "PathSpace",
    "PrefixAnalysis",
    "merge_values",
]

#: positions inside names with more names than this below them are not shared between
#: tables (see PathSpace.canon)
CANON_MAX_NAMES = 512

KIND_DOT = 0  # game.Name
KIND_BRACKET = 1  # game["Name"]
KIND_LOOKUP = 2  # x:WaitForChild("Name") / x:FindFirstChild("Name")
KIND_SERVICE = 3  # game:GetService("Name") / game:FindService("Name")
KIND_ANCESTOR = 4  # x:FindFirstAncestor("Name")
KIND_METHOD = 5  # the lookup method names themselves (results are KIND_* codes)
#: x:FindFirstChild("Name") - a child, or (with a literal ``true`` second argument, the
#: resolver's recursive search) a descendant: descendant-only names have the value DESC
KIND_FIND = 6
#: the value of a name :meth:`FindFirstChild` finds only as a descendant: the call must go
#: on with ``, true`` (the automaton refuses its ``)`` right after the name)
DESC = -8

#: Methods after which the guard constrains the first string argument (the resolver's set).
LOOKUP_METHODS: dict[str, int] = {
    "WaitForChild": KIND_LOOKUP,
    "FindFirstChild": KIND_FIND,
    "GetService": KIND_SERVICE,
    "FindService": KIND_SERVICE,
    "FindFirstAncestor": KIND_ANCESTOR,
}

_SENTINEL = "\x01luaguard-no-such-name\x01"


@dataclass(frozen=True)
class LocalFact:
    """One local name: the declaring statement's offsets (a ``local``'s; a function's for
    its parameters, a loop's for its variables), whether it has values, and the value the
    resolver gives the name (:data:`NOVAL` when not an instance - it still hides an outer
    binding of the name).  ``visible``: the offset from which the name is in scope;
    ``opener``: the offset of the token the linter's frame machine names the enclosing
    block by while inside it (``then``/``else`` of an if-branch, ``do`` of a loop or a
    ``do`` block, ``repeat``, ``function``; -1 for the chunk): the name is in scope at a
    point after ``visible`` exactly while that frame is open there (its block cannot be
    left and re-entered)."""

    start: int
    end: int
    has_values: bool
    name: str
    value: int
    visible: int = 0
    opener: int = -1


@dataclass(frozen=True)
class PrefixAnalysis:
    """What :meth:`PathSpace.analyze` found in a text: its locals and required modules;
    ``text``: the analysed text and ``lex`` its :func:`~luaguard.luau.lexer.tokenize`
    result (the guard's priming reuses it instead of lexing the prompt again; ``None``
    when not kept); the parse's facts the priming needs."""

    locals: list[LocalFact]
    requires: list[Instance]
    lex: Any = None
    text: str | None = None
    #: the parse's facts the guard's priming reads (:class:`~luaguard.luau.ast.Chunk`): the
    #: if-expressions, the functions that declare ``...``, the type regions
    if_expressions: frozenset = frozenset()
    vararg_functions: frozenset = frozenset()
    type_regions: tuple = ()


@dataclass
class NameTable:
    """A byte trie of names (a :class:`~.trie.LazyTrie`'s nodes, or a list built eagerly).
    Node 0 is the root; ``children[n]`` maps a byte to a node;
    ``result[n]`` is the value (or, for the method table, the ``KIND_*`` code) of the name
    ending at ``n`` (``None`` when no name ends there).  ``free``: names outside the trie
    are accepted too (their value is :data:`NOVAL`).  ``empty``: no name is accepted."""

    kind: int
    children: Sequence[dict[int, int]] | Mapping[int, dict[int, int]]
    result: Sequence[int | None] | Mapping[int, int | None]
    free: bool
    #: the lazy trie behind ``children``/``result`` (``None`` for a table built eagerly);
    #: :meth:`PathSpace.canon` reads its nodes' subtrees
    trie: LazyTrie | None = None

    @property
    def empty(self) -> bool:
        return not self.free and not self.children[0]


_UNSAFE_IN_STRING = re.compile(r"[\"'\\\x00-\x1f\x7f]")


def _string_safe(name: str) -> bool:
    """A name the guard may write inside a quoted string: no quote, backslash or control
    character."""
    return bool(name) and _UNSAFE_IN_STRING.search(name) is None


def merge_values(a: int | None, b: int) -> int:
    """Combine two values a name may hold: equal values stay, :data:`NOVAL` yields to
    the other, different instance values give :data:`POISON`."""
    if a is None or a == NOVAL:
        return b
    if b == NOVAL or a == b:
        return a
    return POISON


class PathSpace:
    """Interned value sets and name tables for one project index.

    ``project`` is a :class:`~luaguard.project.index.ProjectIndex` (``None`` gives an open
    ``DataModel`` with the shipped API data: every child name is accepted, service names are
    still checked); ``runtime_names``: the project's name pool carrying its snapshot and
    the file's own text (:class:`~luaguard.analysis.snapshot.WorldNames`, from
    :meth:`luaguard.engine.Engine.guard_contract`), whose verdicts decide what is accepted
    (anything else: the snapshot of the index alone); ``services``: check service names
    (``False``: any name is a service).  Build a new space after the project or those names
    change.  Thread-safe.
    """

    def __init__(self, project=None, runtime_names: frozenset[str] = frozenset(), *, services: bool = True) -> None:
        if project is None:
            project = _empty_project()
        self.project = project
        # (a WorldNames keeps its snapshot: it is a frozenset already)
        self.runtime_names = runtime_names if isinstance(runtime_names, frozenset) else frozenset(runtime_names)
        self.services = services
        if isinstance(self.runtime_names, WorldNames) and self.runtime_names.snapshot is not None:
            self.snapshot = self.runtime_names.snapshot
            self._judge = self.runtime_names.view()
        else:
            self.snapshot = snapshot_of(project)
            self._judge = self.snapshot.view(own_names=self.runtime_names, text="") if self.runtime_names \
                else self.snapshot.view()
        #: guards built on this space (:func:`~.matcher.guard_for`), by token table and options
        self.guards: dict = {}
        self._resolver = self.snapshot.resolver(self._judge, [], None, project)
        self._sets: list[tuple[Instance, ...]] = []
        self._set_ids: dict[tuple[int, ...], int] = {}
        self._tables: list[NameTable] = []
        self._table_ids: dict[tuple[int, int], int] = {}
        self._canon: dict[tuple[int, int], tuple[int, int]] = {}
        self._canon_by_sig: dict[tuple, tuple[int, int]] = {}
        self._lock = threading.RLock()
        self.method_table = self._add_table(_method_table())
        self.datamodel = self.nodeset((project.datamodel,))

    # -- values -----------------------------------------------------------------------------
    def nodeset(self, nodes: Iterable[Instance]) -> int:
        """The value id of a tuple of instances (interned; order kept, duplicates dropped)."""
        nodes = tuple(dict.fromkeys(nodes))
        if not nodes:
            return NOVAL
        key = tuple(id(n) for n in nodes)
        with self._lock:
            got = self._set_ids.get(key)
            if got is None:
                got = len(self._sets)
                self._sets.append(nodes)
                self._set_ids[key] = got
            return got

    def nodes(self, value: int) -> tuple[Instance, ...]:
        """The instances of a value id (``()`` for :data:`NOVAL`/:data:`POISON`)."""
        return self._sets[value] if value >= 0 else ()

    def describe(self, value: int) -> str:
        if value == NOVAL:
            return "?"
        if value == POISON:
            return "<poison>"
        return " | ".join(n.path for n in self.nodes(value))

    def _value(self, v: Value) -> int:
        return self.nodeset(v.nodes) if v.nodes else NOVAL

    # -- name tables -------------------------------------------------------------------------
    def table(self, value: int, kind: int) -> int:
        """The id of the name table for ``value`` and ``kind`` (built on first use)."""
        key = (value, kind)
        got = self._table_ids.get(key)
        if got is not None:
            return got
        with self._lock:
            got = self._table_ids.get(key)
            if got is None:
                got = self._add_table(self._build(value, kind))
                self._table_ids[key] = got
            return got

    def get_table(self, table_id: int) -> NameTable:
        return self._tables[table_id]

    def canon(self, table: int, node: int) -> tuple[int, int]:
        """The first ``(table, node)`` seen whose subtree holds the same names with the same
        values, in a table of the same kind and freedom (``(table, node)`` itself when it is
        the first, or its table was built eagerly).

        The automaton keeps the position inside a name as ``(table, node)`` and reads nothing
        of it but that subtree and the table's kind and freedom, so two positions with equal
        subtrees behave alike byte for byte.  Name tables of instances of one class share
        most of their names (the class members), so after the first byte of a name most
        positions of one table are positions of another: canonical positions make them one
        automaton state, and the mask walk's memo then serves every such table from the
        first one walked (measured over guard_eval's replay at a 152k vocabulary, together
        with the automaton dropping the value a non-method name is read on: trie nodes
        walked 64,850 -> 49,302).  A position with more than :data:`CANON_MAX_NAMES` names
        below is its own canonical position: comparing it would cost time and memory in
        proportion to its names (a folder of thousands of children), and such subtrees are
        not what tables share (class members sit below their first letters in dozens)."""
        key = (table, node)
        got = self._canon.get(key)
        if got is None:
            t = self._tables[table]
            if t.trie is None or t.trie.count(node) > CANON_MAX_NAMES:
                got = key
            else:
                sig = (t.kind, t.free, t.trie.subtree(node))
                got = self._canon_by_sig.setdefault(sig, key)
            self._canon[key] = got
        return got

    def _add_table(self, table: NameTable) -> int:
        self._tables.append(table)
        return len(self._tables) - 1

    def _build(self, value: int, kind: int) -> NameTable:
        if kind == KIND_FIND:
            return self._build_find(value)
        nodes = self.nodes(value)
        names: dict[str, int] = {}
        members: set[str] = set()
        if kind in (KIND_DOT, KIND_BRACKET):
            # a member of the class wins over a child (the resolver's rule): its value is unknown
            for n in nodes:
                members.update(m for m, info in self.project.api.members(n.class_name).items() if scriptable(info))
            members.discard("Parent")
            members.discard("LocalPlayer")
        candidates = self._candidates(nodes, kind)
        for name in candidates:
            if name in members:
                names[name] = NOVAL
                continue
            ok, res = self.evaluate(value, kind, name)
            if ok:
                names[name] = res
        free = self.evaluate(value, kind, _SENTINEL)[0]
        if not free and kind != KIND_SERVICE:
            # names the snapshot knows there without a node of their own (created by scripts,
            # linked by frameworks, checked for first): accepted, their value unknown
            own = getattr(self.runtime_names, "own", None)
            known = set(candidates)
            for n in nodes:
                for name in self.snapshot.known_names(n, own):
                    if name not in known and name not in names:
                        names[name] = NOVAL
        ok = is_identifier if kind == KIND_DOT else _string_safe
        trie = LazyTrie((name.encode("utf-8"), res) for name, res in names.items() if ok(name))
        return NameTable(kind, trie.children, trie.values, free, trie)

    def _build_find(self, value: int) -> NameTable:
        """The table of ``:FindFirstChild("Name"...)``: :data:`KIND_LOOKUP`'s names, and -
        where the resolver's recursive search (``FindFirstChild(name, true)``) would find
        more - each descendant's name with the value :data:`DESC`; free wherever the
        search could find any name (an open node or descendant: the resolver's rule)."""
        lookup = self.get_table(self.table(value, KIND_LOOKUP))
        if lookup.free:
            return NameTable(KIND_FIND, lookup.children, lookup.result, True, lookup.trie)
        nodes = self.nodes(value)
        names: dict[bytes, int] = dict(lookup.trie.items()) if lookup.trie is not None else {}
        if any(n.is_open or n.has_open_descendant() for n in nodes):
            free = True
        else:
            free = False
            for n in nodes:
                for d in n.descendants():
                    raw = d.name.encode("utf-8")
                    if raw not in names and _string_safe(d.name):
                        names[raw] = DESC
        trie = LazyTrie(names.items())
        return NameTable(KIND_FIND, trie.children, trie.values, free, trie)

    def _candidates(self, nodes: tuple[Instance, ...], kind: int) -> list[str]:
        project = self.project
        out: dict[str, None] = {}
        if kind == KIND_SERVICE:
            if any(n is project.datamodel for n in nodes):
                out.update(dict.fromkeys(sorted(project.api.services)))
            return list(out)
        if kind == KIND_ANCESTOR:
            for n in nodes:
                for a in n.ancestors():
                    out[a.name] = None
            return list(out)
        for n in nodes:
            for ch in n.all_children():
                out[ch.name] = None
            # what frameworks link in (the verdicts' rule)
            out.update(dict.fromkeys(self.snapshot.linked_names(n)))
            if n is project.datamodel:
                out.update(dict.fromkeys(service_names(project.api)))
            if kind in (KIND_DOT, KIND_BRACKET):
                out.update(dict.fromkeys(m for m, info in project.api.members(n.class_name).items() if scriptable(info)))
                out["Parent"] = None
                if n.class_name == "Players":
                    out["LocalPlayer"] = None
        return list(out)

    def evaluate(self, value: int, kind: int, name: str) -> tuple[bool, int]:
        """Whether ``name`` resolves without an ``unknown_instance``/``unknown_service``
        error under ``value`` written as ``kind``, and the value it resolves to."""
        nodes = self.nodes(value)
        if not nodes:
            return True, NOVAL
        project = self.project
        if kind == KIND_SERVICE:
            if not any(n is project.datamodel for n in nodes):
                return True, NOVAL
            svc = project.service(name)
            if svc is None and not self.services:
                return True, NOVAL
            return (svc is not None), (self.nodeset((svc,)) if svc is not None else NOVAL)
        r = self._resolver
        how = {KIND_ANCESTOR: "ancestor", KIND_DOT: "dot", KIND_LOOKUP: "call"}.get(kind, "bracket")
        with self._lock:
            cls = nodes[0].class_name if all(n.class_name == nodes[0].class_name for n in nodes) else None
            v, new = r.lookup(Value(nodes, cls), name, how)
        ok = not any(m.kind in ("child", "service") for m in new)
        return ok, self._value(v)

    # -- bindings ----------------------------------------------------------------------------
    def root_bindings(self, scripts: list[Instance]) -> dict[str, int]:
        """Values of the globals ``game``, ``workspace``, ``Workspace`` and ``script`` (the
        latter only when the file maps to instances), as the resolver evaluates them."""
        r = self.snapshot.resolver(self._judge, scripts, None, self.project)
        out: dict[str, int] = {}
        for name in ("game", "workspace", "Workspace", "script"):
            v = self._value(r.global_value(name))
            if v != NOVAL:
                out[name] = v
        new = r.templates - self._resolver.templates
        if new:
            # a script that does not run where the project puts it (a template, or a module
            # inside one): its `Parent` is wherever it is cloned to, as for the linter (the
            # same node reached by its full path gets that open parent too - the lenient side)
            with self._lock:
                self._resolver.templates.update(new)
                for s in self.nodes(out["script"]):
                    n: Instance | None = s
                    while n is not None:
                        if id(n) in new:
                            v = self.nodeset((n,))
                            for kind in (KIND_DOT, KIND_BRACKET):
                                self._table_ids.pop((v, kind), None)
                        n = n.parent
                self._table_ids.pop((out["script"], KIND_DOT), None)
                self._table_ids.pop((out["script"], KIND_BRACKET), None)
        return out

    def analyze(self, text: str, scripts: list[Instance]) -> PrefixAnalysis:
        """Parse ``text`` once and collect what the guard and the prompt builder need: every
        local name (``local`` declarations with the value the resolver gives them;
        parameters, loop variables and local functions, which hide outer names) with its
        scope (:class:`LocalFact`), and the modules passed to ``require``.  Never raises on
        any text."""
        from ..luau.lexer import tokenize
        from ..luau.parser import parse

        lex = tokenize(text)
        try:
            chunk = parse(text, lex)
        except RecursionError:  # pragma: no cover - the parser has its own depth limit
            return PrefixAnalysis([], [], lex, text)
        r = self.snapshot.resolver(self._judge, scripts, None, self.project)
        r.declare_types(chunk.type_names)
        locals_, requires = _scoped_locals(chunk, lex.tokens, r, self._value)
        return PrefixAnalysis(locals_, requires, lex, text, chunk.if_expressions, chunk.vararg_functions,
                              tuple(chunk.type_regions))

    def bindings(self, analysis: PrefixAnalysis, scripts: list[Instance], *, before: int | None = None,
                 shift: int = 0, openers: Sequence[int] | None = None) -> dict[str, int]:
        """The prompt's bindings at offset ``before`` (default: the end of the analysed
        text): :meth:`root_bindings` with the locals of ``analysis`` in scope there, the
        innermost declaration of a name winning (one whose value is not an instance hides
        the name) - see :meth:`scoped_bindings`."""
        return self.scoped_bindings(analysis, scripts, before=before, shift=shift, openers=openers)[0]

    def scoped_bindings(self, analysis: PrefixAnalysis, scripts: list[Instance], *, before: int | None = None,
                        shift: int = 0, openers: Sequence[int] | None = None
                        ) -> tuple[dict[str, int], tuple[tuple[int, str, int | None], ...]]:
        """``(bindings, scopes)`` at offset ``before`` of the prompt (default: the end of the
        analysed text).

        Offsets of ``analysis`` are shifted by ``shift`` (text put in front of the analysed
        one).  A local is in scope where the linter's resolver would find it: declared
        before ``before`` (declarations starting at or after it are left out: the guard's
        automaton reads those itself) in a block open there - ``openers`` are the opener
        offsets of the frames open at ``before``, as
        :func:`~.brackets.prompt_frames` returns them (computed here when ``None``).  Names
        of a declaration that starts before ``before`` and reaches it are :data:`POISON`
        (the value may still grow).  ``scopes`` lists ``(depth, name, value before)`` for
        each such local inside a block (``depth``: the number of frames open down to that
        block's), in order of depth: when the frame stack falls below ``depth``, the name's
        binding goes back to ``value before`` (``None``: unbound).
        """
        text_end = len(analysis.text) + shift if analysis.text is not None else None
        at = before if before is not None else text_end
        if openers is None:
            lex = analysis.lex
            tokens = lex.tokens[:-1] if lex is not None else []
            n = len(tokens) if at is None else bisect.bisect_left(tokens, at - shift, key=_tok_start)
            openers = prompt_frames(tokens, n, analysis.if_expressions, analysis.vararg_functions)[3]
        depth_of = {o + shift: i + 1 for i, o in enumerate(openers)}
        out = self.root_bindings(scripts)
        layers: list[tuple[int, int, str, int]] = []  # (visible, depth, name, value)
        for fact in analysis.locals:
            start, end = fact.start + shift, fact.end + shift
            if at is not None and start >= at:
                continue
            if fact.opener < 0:
                depth = 0
            else:
                depth = depth_of.get(fact.opener + shift, -1)
                if depth < 0:
                    continue  # its block is closed at `at`
            value = fact.value
            visible = fact.visible + shift
            if at is not None and fact.has_values and end > at:
                value, visible = POISON, start
            elif at is not None and visible > at:
                continue
            layers.append((visible, depth, fact.name, value))
        layers.sort()
        log: list[tuple[int, str, int | None]] = []
        for _visible, depth, name, value in layers:
            if depth:
                log.append((depth, name, out.get(name)))
            if value == NOVAL:
                out.pop(name, None)
            else:
                out[name] = value
        log.sort(key=lambda e: e[0])  # (stable: a name's entries keep their order)
        return out, tuple(log)

    def prompt_bindings(self, text: str, scripts: list[Instance], *, before: int | None = None) -> dict[str, int]:
        """:meth:`bindings` of :meth:`analyze` of ``text``."""
        return self.bindings(self.analyze(text, scripts), scripts, before=before)


def _tok_start(t) -> int:
    return t.start


def _scoped_locals(chunk, tokens, resolver: Resolver, value_of) -> tuple[list[LocalFact], list[Instance]]:
    """The :class:`LocalFact` s of a parsed chunk (in source order) and the instances passed
    to ``require``; ``tokens``: the lexer's tokens of the text (to find the ``then``,
    ``else``, ``do`` and ``function`` tokens that name blocks)."""
    from ..luau import ast as A

    starts = [t.start for t in tokens]

    def token_at_or_after(kind: str, offset: int, limit: int) -> int:
        i = bisect.bisect_left(starts, offset)
        while i < len(tokens) and tokens[i].start < limit:
            if tokens[i].kind == kind:
                return tokens[i].start
            i += 1
        return -2  # (no such token: broken code; an opener no frame has)

    def token_before(kind: str, offset: int, floor: int) -> int:
        i = bisect.bisect_left(starts, offset) - 1
        while i >= 0 and tokens[i].start >= floor:
            if tokens[i].kind == kind:
                return tokens[i].start
            i -= 1
        return -2

    facts: list[LocalFact] = []
    requires: list[Instance] = []
    # (node, opener of the enclosing block); blocks are pushed as their statements
    work: list[tuple[Any, int]] = [(st, -1) for st in reversed(chunk.body.body)]
    push = work.append
    while work:
        node, opener = work.pop()
        t = type(node)
        if t is A.StatLocal:
            for var in node.vars:
                v = value_of(resolver.local_value(var)) if var.kind == "local" else NOVAL
                facts.append(LocalFact(node.start, node.end, bool(node.values), var.name, v, node.end, opener))
            for e in reversed(node.values):
                push((e, opener))
            continue
        if t is A.StatLocalFunction:
            facts.append(LocalFact(node.start, node.end, False, node.var.name, NOVAL, node.start, opener))
            push((node.func, opener))
            continue
        if t is A.ExprFunction:
            body = node.body
            fn = token_at_or_after("function", node.start, body.start if body is not None else node.end)
            params = list(node.params)
            if node.self_local is not None:
                params.append(node.self_local)
            for var in params:
                facts.append(LocalFact(node.start, node.end, False, var.name, NOVAL, node.start, fn))
            if body is not None:
                for st in reversed(body.body):
                    push((st, fn))
            continue
        if t is A.StatIf:
            branch = node
            kids: list[tuple[Any, int]] = []
            while True:
                kids.append((branch.condition, opener))
                then = token_at_or_after("then", branch.condition.end, branch.then_body.start + 1)
                kids.extend((st, then) for st in branch.then_body.body)
                other = branch.else_body
                if type(other) is A.StatIf:
                    branch = other
                    continue
                if other is not None:
                    els = token_before("else", other.start + 1, branch.then_body.start)
                    kids.extend((st, els) for st in other.body)
                break
            for k in reversed(kids):
                push(k)
            continue
        if t is A.StatWhile or t is A.StatFor or t is A.StatForIn:
            body = node.body
            do = token_at_or_after("do", _head_end(node), body.start + 1)
            if t is A.StatFor:
                names, exprs = [node.var], [node.from_, node.to] + ([node.step] if node.step is not None else [])
            elif t is A.StatForIn:
                names, exprs = node.vars, node.values
            else:
                names, exprs = [], [node.condition]
            for var in names:
                facts.append(LocalFact(node.start, node.end, False, var.name, NOVAL, node.start, do))
            for st in reversed(body.body):
                push((st, do))
            for e in reversed(exprs):
                push((e, opener))
            continue
        if t is A.StatRepeat:
            push((node.condition, node.start))
            for st in reversed(node.body.body):
                push((st, node.start))
            continue
        if t is A.Block:  # a `do ... end` statement (its start is the `do`)
            for st in reversed(node.body):
                push((st, node.start))
            continue
        if t is A.ExprCall and node.method is None and node.args:
            f = node.func
            if type(f) is A.ExprGlobal and f.name == "require":
                requires.extend(resolver.value(node.args[0]).nodes)
        kids = list(A.children(node))
        for k in reversed(kids):
            push((k, opener))
    facts.sort(key=lambda f: (f.visible, f.start))
    return facts, requires


def _head_end(node) -> int:
    """Where a loop's header ends (the ``do`` comes after): its last expression's end."""
    from ..luau import ast as A

    t = type(node)
    if t is A.StatWhile:
        return node.condition.end
    if t is A.StatFor:
        return (node.step or node.to).end
    return node.values[-1].end if node.values else node.start


def _method_table() -> NameTable:
    children, result = build_trie((name.encode(), kind) for name, kind in LOOKUP_METHODS.items())
    return NameTable(KIND_METHOD, children, result, True)


def _empty_project():
    """An index of no project: an open ``DataModel`` with the shipped API data."""
    from pathlib import Path

    from ..project.api import load_api
    from ..project.index import NO_PROJECT_REASON, ProjectIndex

    dm = Instance("game", "DataModel", open_reason=NO_PROJECT_REASON)
    return ProjectIndex(root_dir=Path("."), project_file=None, kind="none", root=dm, datamodel=dm,
                        file_instances={}, problems=[], api=load_api())
