"""What one script does at run time: the instances it creates, clones, renames and moves,
where it parents them, what it checks for first - read from its parse with the linter's
resolver (:class:`~.resolve.Resolver`, which knows the project tree and Roblox's indexing
rules).  :mod:`.world` asks these facts where a name may exist.

The idioms followed are Roblox's (create.roblox.com reference: ``Instance.new(className,
parent?)``, ``Instance:Clone()``, the ``Name`` and ``Parent`` properties,
``Instance:GetChildren``/``GetDescendants``, ``Instance:FindFirstChild``) and the common
shapes of game code around them: a local holding the new instance, ``x:Clone().Parent =
y``, a loop over a folder's children, a property table passed to a UI library or helper
(``{Name = "N", Parent = y}``), a helper function whose parameters give the name and the
parent (its call sites in the file bind them), a table field holding an instance
(``self.gui = ...``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..luau import ast as A
from ..project.tree import Instance
from ..text import LineIndex
from .places import origin

_CHILD_LISTS = frozenset({"GetChildren", "GetDescendants"})
_ITERATORS = frozenset({"pairs", "ipairs"})


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
        ``node`` (see :meth:`~.world.RuntimeWorld.verdict`)."""
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
    #: it - :meth:`~.world.RuntimeWorld.mentioning` reads the text for the name
    path: Path | None = None
    moved: dict[int, tuple[Instance, int]] = field(default_factory=dict)
    reach: frozenset[int] = frozenset()
    presence: dict[tuple[int, str], int] = field(default_factory=dict)


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
        return e.name if e.op == "." and e.name not in ("Parent", "Value", A.ERROR_NAME) else None
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
    :class:`~.resolve.Resolver` for the file that knows no run-time names
    (what the project files alone say)."""
    lines = LineIndex(text)

    def line_of(offset: int) -> int:  # 1-based
        return lines.line_of(offset) + 1

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

    # locals bound to a ``FindFirstChild`` call (``local x = a:FindFirstChild("N")``, also
    # ``b and b:FindFirstChild("N")``), and the conditions that may test them
    found_by: dict[int, A.ExprCall] = {}
    conditions: list[A.Expr] = []

    def is_found(node) -> bool:
        return type(node) is A.ExprCall and node.method == "FindFirstChild" and bool(node.args) \
            and type(node.args[0]) is A.ExprString and node.args[0].value is not None

    def presence(call: A.ExprCall) -> None:
        for n in value(call.func.obj).nodes:
            facts.presence.setdefault((id(origin(n)), call.args[0].value), line_of(call.start))

    def presence_checks(cond: A.Expr) -> None:
        conditions.append(cond)
        for node in A.walk(cond):
            if is_found(node):
                presence(node)

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
                probe = val.right if type(val) is A.ExprBinary and val.op == "and" else val
                if is_found(probe):
                    found_by[id(var)] = probe
                if type(val) is A.ExprCall:
                    h = call_handle(val)
                    if h is not None:
                        by_local[id(var)] = h
                elif type(val) is A.ExprFunction:
                    fn_keys.setdefault(id(val), []).append(("local", id(var)))
        elif t is A.StatAssign:
            for target, val in zip(node.targets, node.values):
                if type(target) is A.ExprLocal and is_found(val):
                    found_by[id(target.local)] = val
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
        elif t is A.StatIf or t is A.StatWhile or t is A.StatRepeat or t is A.ExprIfElse:
            # (a loop that waits until the child is there too; `if x:FindFirstChild("N") then
            # x.N else nil`, an if-expression)
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

    if found_by:
        # `local x = a:FindFirstChild("N")` ... `if x then`: the code copes with N's absence
        for cond in conditions:
            for node in A.walk(cond):
                if type(node) is A.ExprLocal and id(node.local) in found_by:
                    presence(found_by.pop(id(node.local)))

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
    for v in resolver.evaluated():
        for n in v.nodes:
            reach.add(id(origin(n)))
    for n in children_of:
        reach.update(id(origin(c)) for c in n.all_children())
    dm = resolver.project.datamodel
    reach.discard(id(dm))
    facts.reach = frozenset(reach)
    # (the nested functions refer to one another through closure cells: clearing the cells
    # frees them by reference counting, with no cycle left for the garbage collector)
    line_of = call_handle = handle_for = is_found = presence = presence_checks = None  # type: ignore[assignment]
    children_sources = targets_of = None  # type: ignore[assignment]
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
