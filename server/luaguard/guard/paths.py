"""Instance-path facts for the decoding guard: value sets, name tables and bindings.

The guard lets a model spell only names that exist where it is writing a path.  It
evaluates chains exactly as the linter does, by calling the linter's own
:class:`~luaguard.checks.resolve.Resolver` (members of the class win over children,
``Parent`` climbs, ``LocalPlayer`` of ``Players`` is the client player, ``game`` children
include every service, open nodes accept any name, ``GetService`` takes service names), so
that every name the guard allows is one the ``unknown_instance``/``unknown_service`` rules
accept.

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
create at run time (the linter's ``runtime_names``) are not offered: the guard only
proposes names the project tree shows.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..checks.resolve import Resolver, Value
from ..project.tree import Instance, is_identifier
from .trie import LazyTrie, build_trie

__all__ = [
    "KIND_ANCESTOR",
    "KIND_BRACKET",
    "KIND_DOT",
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

NOVAL = -2
POISON = -1
#: positions inside names with more names than this below them are not shared between
#: tables (see PathSpace.canon)
CANON_MAX_NAMES = 512

KIND_DOT = 0  # game.Name
KIND_BRACKET = 1  # game["Name"]
KIND_LOOKUP = 2  # x:WaitForChild("Name") / x:FindFirstChild("Name")
KIND_SERVICE = 3  # game:GetService("Name") / game:FindService("Name")
KIND_ANCESTOR = 4  # x:FindFirstAncestor("Name")
KIND_METHOD = 5  # the lookup method names themselves (results are KIND_* codes)

#: Methods after which the guard constrains the first string argument (the resolver's set).
LOOKUP_METHODS: dict[str, int] = {
    "WaitForChild": KIND_LOOKUP,
    "FindFirstChild": KIND_LOOKUP,
    "GetService": KIND_SERVICE,
    "FindService": KIND_SERVICE,
    "FindFirstAncestor": KIND_ANCESTOR,
}

_SENTINEL = "\x01luaguard-no-such-name\x01"


@dataclass(frozen=True)
class LocalFact:
    """One name of a ``local`` declaration: the statement's offsets, whether it has values,
    and the value the resolver gives the name (:data:`NOVAL` when not an instance)."""

    start: int
    end: int
    has_values: bool
    name: str
    value: int


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
    still checked).  Build a new space after the project changes.  Thread-safe.
    """

    def __init__(self, project=None) -> None:
        if project is None:
            project = _empty_project()
        self.project = project
        self._resolver = Resolver(project, [], frozenset())
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
        nodes = self.nodes(value)
        names: dict[str, int] = {}
        members: set[str] = set()
        if kind in (KIND_DOT, KIND_BRACKET):
            # a member of the class wins over a child (the resolver's rule): its value is unknown
            for n in nodes:
                members.update(self.project.api.members(n.class_name))
            members.discard("Parent")
            members.discard("LocalPlayer")
        for name in self._candidates(nodes, kind):
            if name in members:
                names[name] = NOVAL
                continue
            ok, res = self.evaluate(value, kind, name)
            if ok:
                names[name] = res
        free = self.evaluate(value, kind, _SENTINEL)[0]
        ok = is_identifier if kind == KIND_DOT else _string_safe
        trie = LazyTrie((name.encode("utf-8"), res) for name, res in names.items() if ok(name))
        return NameTable(kind, trie.children, trie.values, free, trie)

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
            if n is project.datamodel:
                out.update(dict.fromkeys(sorted(project.api.services)))
            if kind in (KIND_DOT, KIND_BRACKET):
                out.update(dict.fromkeys(project.api.members(n.class_name)))
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
            return (svc is not None), (self.nodeset((svc,)) if svc is not None else NOVAL)
        r = self._resolver
        with self._lock:
            before = len(r.misses)
            cls = nodes[0].class_name if all(n.class_name == nodes[0].class_name for n in nodes) else None
            if kind == KIND_ANCESTOR:
                v = r._ancestor(Value(nodes, cls), name, 0, 0)
            else:
                v = r._child(Value(nodes, cls), name, 0, 0, "dot" if kind == KIND_DOT else "bracket",
                             via_lookup=(kind == KIND_LOOKUP))
            new = r.misses[before:]
            del r.misses[before:]
        ok = not any(m.kind in ("child", "service") for m in new)
        return ok, self._value(v)

    # -- bindings ----------------------------------------------------------------------------
    def root_bindings(self, scripts: list[Instance]) -> dict[str, int]:
        """Values of the globals ``game``, ``workspace``, ``Workspace`` and ``script`` (the
        latter only when the file maps to instances), as the resolver evaluates them."""
        r = Resolver(self.project, list(scripts), frozenset())
        out: dict[str, int] = {}
        for name in ("game", "workspace", "Workspace", "script"):
            v = self._value(r._global(name))
            if v != NOVAL:
                out[name] = v
        return out

    def analyze(self, text: str, scripts: list[Instance]) -> PrefixAnalysis:
        """Parse ``text`` once and collect what the guard and the prompt builder need: every
        ``local`` declaration's names with the value the resolver gives them, and the
        modules passed to ``require``.  Never raises on any text."""
        from ..luau import ast as A
        from ..luau.parser import parse

        locals_: list[LocalFact] = []
        requires: list[Instance] = []
        from ..luau.lexer import tokenize

        lex = tokenize(text)
        try:
            chunk = parse(text, lex)
        except RecursionError:  # pragma: no cover - the parser has its own depth limit
            return PrefixAnalysis(locals_, requires, lex, text)
        r = Resolver(self.project, list(scripts), frozenset())
        for node in A.walk(chunk.body):
            t = type(node)
            if t is A.StatLocal:
                for var in node.vars:
                    v = self._value(r.local_value(var)) if var.kind == "local" else NOVAL
                    locals_.append(LocalFact(node.start, node.end, bool(node.values), var.name, v))
            elif t is A.ExprCall and node.method is None and node.args:
                f = node.func
                if type(f) is A.ExprGlobal and f.name == "require":
                    requires.extend(r.value(node.args[0]).nodes)
        return PrefixAnalysis(locals_, requires, lex, text, chunk.if_expressions, chunk.vararg_functions,
                              tuple(chunk.type_regions))

    def bindings(self, analysis: PrefixAnalysis, scripts: list[Instance], *, before: int | None = None,
                 shift: int = 0) -> dict[str, int]:
        """The prompt's bindings: :meth:`root_bindings` merged (:func:`merge_values`) with the
        locals of ``analysis`` bound to instance values.

        Offsets of ``analysis`` are shifted by ``shift`` (text put in front of the analysed
        one).  Declarations starting at or after ``before`` are left out (the guard's
        automaton reads those itself); names of a declaration that starts before ``before``
        and reaches it are :data:`POISON` (the value may still grow).
        """
        out = self.root_bindings(scripts)
        for fact in analysis.locals:
            start, end = fact.start + shift, fact.end + shift
            if before is not None and start >= before:
                continue
            if before is not None and fact.has_values and end > before:
                out[fact.name] = POISON
                continue
            if fact.value == NOVAL and fact.name not in out:
                continue
            out[fact.name] = merge_values(out.get(fact.name), fact.value)
        return out

    def prompt_bindings(self, text: str, scripts: list[Instance], *, before: int | None = None) -> dict[str, int]:
        """:meth:`bindings` of :meth:`analyze` of ``text``."""
        return self.bindings(self.analyze(text, scripts), scripts, before=before)


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
