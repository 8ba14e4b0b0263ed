"""What an expression refers to in the DataModel: the abstract evaluation the path
checks (and the semantic checks) share.

:class:`Resolver` evaluates expressions of one file to a :class:`Value`: the project
tree nodes it certainly is (``game.ReplicatedStorage.Modules``), or an instance of a
certainly known class (``Instance.new("Part")``), or nothing (``UNKNOWN``).  Evaluation
follows Roblox's indexing rules:

* ``game``, ``workspace``/``Workspace``, ``script`` (the file's own instance), and locals
  bound once to such chains (``local RS = game:GetService("ReplicatedStorage")``) — a
  local that is ever reassigned, a parameter, or a loop variable is unknown;
* ``.Name`` / ``["Name"]``: a member of the class (property, method, event) wins over a
  child with that name, as on a live Instance; ``Parent`` climbs; ``LocalPlayer`` of
  ``Players`` is the synthesized client player;
* ``:WaitForChild("Name"[, timeout])``, ``:FindFirstChild("Name")``,
  ``:FindFirstChild("Name", true)`` (breadth-first descendant search),
  ``:FindFirstAncestor("Name")``, ``game:GetService("Service")`` / ``FindService``.

Every step that names a child that cannot exist is recorded as a :class:`Miss`; the
step's value is then unknown, so one mistake is reported once.  A name is not a miss
when the parent is open, or when the project creates it at run time (see
:mod:`luaguard.checks.runtime_names`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..luau import ast as A
from ..project.tree import Instance

_CHILD_LOOKUPS = frozenset({"WaitForChild", "FindFirstChild"})
_SERVICE_LOOKUPS = frozenset({"GetService", "FindService"})
_ALIAS_GLOBALS = {"workspace": "Workspace", "Workspace": "Workspace"}


@dataclass(frozen=True, slots=True)
class Value:
    """An abstract value.

    ``nodes``: project tree nodes the expression certainly is one of (all of them are
    checked; a child is missing only if it is missing under every one).
    ``class_name``: the certain class of the instance when known (the nodes' class, or
    e.g. ``"Part"`` for ``Instance.new("Part")``).
    """

    nodes: tuple[Instance, ...] = ()
    class_name: str | None = None

    @property
    def known(self) -> bool:
        return bool(self.nodes) or self.class_name is not None


UNKNOWN = Value()


@dataclass(frozen=True, slots=True)
class Miss:
    """A path step that names something that does not exist.

    ``kind`` is ``"child"`` (``unknown_instance``: the parent is closed), ``"open_child"``
    (the parent is open, so the name may exist at run time: reported only as a likely
    typo) or ``"service"`` (``unknown_service``).  ``parents`` are the nodes searched; ``name`` what was asked
    for; ``start``/``end`` the offsets of the name as written (the identifier, or the
    string literal *including* its quotes); ``form`` is ``"dot"``, ``"bracket"``,
    ``"call"`` (an argument of ``WaitForChild``/``FindFirstChild``/``GetService``);
    ``dot_start`` is the offset of the ``.`` for the dot form (so a fix can switch to
    ``["..."]``); ``lookup`` names the method for call forms; ``descendant`` is set for
    ``FindFirstChild(name, true)`` and ``ancestor`` for ``FindFirstAncestor``.
    """

    kind: str
    parents: tuple[Instance, ...]
    name: str
    start: int
    end: int
    form: str
    dot_start: int = -1
    lookup: str = ""
    descendant: bool = False
    ancestor: bool = False


#: Containers whose contents the engine copies to each player or character at run time,
#: and where the copies live.
_RUNTIME_HOMES = {
    "StarterGui": "PlayerGui",
    "StarterPlayerScripts": "PlayerScripts",
    "StarterPack": "Backpack",
}


def runtime_node(project, node: Instance) -> Instance:
    """Where a script of the project tree runs: scripts under ``StarterGui``,
    ``StarterPlayer.StarterPlayerScripts`` and ``StarterPack`` run from the copies in the
    local player's ``PlayerGui``/``PlayerScripts``/``Backpack``; scripts under
    ``StarterCharacterScripts`` run inside the character (an open ``Model`` in
    ``Workspace``).  Other nodes are returned unchanged.
    """
    names: list[str] = []
    cur: Instance | None = node
    while cur is not None and cur.parent is not None:
        home = _RUNTIME_HOMES.get(cur.class_name)
        if home is not None and cur.class_name in ("StarterGui", "StarterPack") and cur.parent is not project.datamodel:
            home = None
        if home is not None:
            target: Instance | None = project.local_player().child(home)
            for name in reversed(names):
                target = target.child(name) if target is not None else None
            return target if target is not None else node
        if cur.class_name == "StarterCharacterScripts":
            character = _character(project, cur)
            target = character
            for name in reversed(names):
                target = target.child(name) if target is not None else None
            return target if target is not None else node
        names.append(cur.name)
        cur = cur.parent
    return node


_CHARACTERS: "dict[int, tuple[Instance, Instance]]" = {}


def _character(project, scripts: Instance) -> Instance:
    """A synthesized character model holding copies of ``StarterCharacterScripts``."""
    cached = _CHARACTERS.get(id(scripts))
    if cached is not None and cached[0] is scripts:
        return cached[1]
    character = Instance("Character", "Model", open_reason="a player's character: its parts are created at run time")
    for child in scripts.all_children():
        character.add_child(child.copy_tree())
    workspace = project.service("Workspace")
    character.parent = workspace
    if len(_CHARACTERS) > 64:
        _CHARACTERS.clear()
    _CHARACTERS[id(scripts)] = (scripts, character)
    return character


@dataclass
class Resolver:
    """Evaluates the expressions of one file against a project index.

    ``project`` is the :class:`~luaguard.project.index.ProjectIndex`; ``scripts`` the
    instances the file maps to; ``runtime_names`` names created at run time.  Results
    are memoised per node; :attr:`misses` collects the missing steps in evaluation order.
    """

    project: object
    scripts: list[Instance]
    runtime_names: frozenset[str] = frozenset()
    misses: list[Miss] = field(default_factory=list)
    _memo: dict[int, Value] = field(default_factory=dict)
    _locals: dict[int, Value] = field(default_factory=dict)
    _in_progress: set[int] = field(default_factory=set)

    # -- entry points ------------------------------------------------------------------
    def value(self, expr: A.Expr) -> Value:
        """The abstract value of ``expr`` (memoised; records misses on first evaluation)."""
        key = id(expr)
        v = self._memo.get(key)
        if v is None:
            v = self._memo[key] = self._eval(expr)
        return v

    def local_value(self, local: A.Local) -> Value:
        """The value a local certainly holds: its initial value when it is never
        reassigned, else unknown."""
        key = id(local)
        v = self._locals.get(key)
        if v is not None:
            return v
        if local.assignments or local.value is None or local.kind not in ("local",) or key in self._in_progress:
            v = UNKNOWN
        else:
            self._in_progress.add(key)
            v = self.value(local.value)
            self._in_progress.discard(key)
        self._locals[key] = v
        return v

    # -- evaluation --------------------------------------------------------------------
    def _eval(self, expr: A.Expr) -> Value:
        t = type(expr)
        if t is A.ExprIndexName:
            if expr.op != ".":
                return UNKNOWN  # a method reference without a call
            base = self.value(expr.obj)
            if not base.nodes:
                return UNKNOWN
            return self._child(base, expr.name, expr.name_start, expr.name_end, "dot", dot_start=expr.name_start - 1)
        if t is A.ExprGlobal:
            return self._global(expr.name)
        if t is A.ExprLocal:
            return self.local_value(expr.local)
        if t is A.ExprCall:
            return self._call(expr)
        if t is A.ExprIndexExpr:
            base = self.value(expr.obj)
            index = expr.index
            if base.nodes and type(index) is A.ExprString and index.value is not None:
                return self._child(base, index.value, index.start, index.end, "bracket")
            return UNKNOWN
        if t is A.ExprGroup:
            return self.value(expr.expr)
        if t is A.ExprTypeAssertion:
            return self.value(expr.expr)
        return UNKNOWN

    def _global(self, name: str) -> Value:
        project = self.project
        if project is None:
            return UNKNOWN
        if name == "game":
            dm = project.datamodel
            return Value((dm,), "DataModel")
        if name in _ALIAS_GLOBALS:
            ws = project.service("Workspace")
            return Value((ws,), "Workspace") if ws is not None else UNKNOWN
        if name == "script" and self.scripts:
            nodes = tuple(runtime_node(project, n) for n in self.scripts)
            cls = nodes[0].class_name if all(n.class_name == nodes[0].class_name for n in nodes) else None
            return Value(nodes, cls)
        return UNKNOWN

    def _call(self, call: A.ExprCall) -> Value:
        method = call.method
        if method is None:
            return UNKNOWN
        base = self.value(call.func.obj)
        if not base.nodes:
            return UNKNOWN
        args = call.args
        first = args[0] if args else None
        if type(first) is not A.ExprString or first.value is None:
            return UNKNOWN
        name = first.value
        if method in _CHILD_LOOKUPS:
            recursive = (
                method == "FindFirstChild" and len(args) > 1 and type(args[1]) is A.ExprBool and args[1].value
            )
            if recursive:
                return self._descendant(base, name, first)
            return self._child(base, name, first.start, first.end, "call", lookup=method, via_lookup=True)
        if method in _SERVICE_LOOKUPS:
            if not any(n is self.project.datamodel for n in base.nodes):
                return UNKNOWN
            service = self.project.service(name)
            if service is None:
                self.misses.append(Miss("service", base.nodes, name, first.start, first.end, "call", lookup=method))
                return UNKNOWN
            return Value((service,), service.class_name)
        if method == "FindFirstAncestor":
            return self._ancestor(base, name, first)
        return UNKNOWN

    def _child(self, base: Value, name: str, start: int, end: int, form: str, *, dot_start: int = -1, lookup: str = "", via_lookup: bool = False) -> Value:
        """Step from ``base`` to its child ``name`` (see the module docstring for the rules)."""
        project = self.project
        api = project.api
        found: list[Instance] = []
        unknown = False  # a member, or a class the API data does not know
        open_parent = False
        for node in base.nodes:
            if not via_lookup:
                # Members win over children on a live Instance.
                if name == "Parent":
                    if node.parent is None:
                        unknown = True
                    else:
                        found.append(node.parent)
                    continue
                if name == "LocalPlayer" and node.class_name == "Players":
                    found.append(project.local_player())
                    continue
                if api.member(node.class_name, name) is not None:
                    unknown = True
                    continue
            child = node.child(name)
            if child is None and node is project.datamodel:
                child = project.service(name)
            if child is not None:
                found.append(child)
            elif node.is_open:
                open_parent = True  # children may exist at run time
            elif not api.has_class(node.class_name):
                unknown = True
        if found and not unknown and not open_parent:
            nodes = tuple(dict.fromkeys(found))
            cls = nodes[0].class_name if all(n.class_name == nodes[0].class_name for n in nodes) else None
            return Value(nodes, cls)
        if not found and not unknown and name not in self.runtime_names:
            kind = "open_child" if open_parent else "child"
            self.misses.append(Miss(kind, base.nodes, name, start, end, form, dot_start=dot_start, lookup=lookup))
        return UNKNOWN

    def _descendant(self, base: Value, name: str, arg: A.ExprString) -> Value:
        found = []
        for node in base.nodes:
            hit = node.find_first_descendant(name)
            if hit is not None:
                found.append(hit)
            elif node.is_open or node.has_open_descendant():
                return UNKNOWN
        if found:
            return Value((found[0],), found[0].class_name)
        if name in self.runtime_names:
            return UNKNOWN
        self.misses.append(Miss("child", base.nodes, name, arg.start, arg.end, "call", lookup="FindFirstChild", descendant=True))
        return UNKNOWN

    def _ancestor(self, base: Value, name: str, arg: A.ExprString) -> Value:
        found = []
        for node in base.nodes:
            hit = node.find_first_ancestor(name)
            if hit is not None:
                found.append(hit)
                continue
            top = node
            while top.parent is not None:
                top = top.parent
            if top is not self.project.datamodel:
                return UNKNOWN  # the chain leaves what the project knows (a library root)
        if found:
            return Value((found[0],), found[0].class_name)
        if name in self.runtime_names:
            return UNKNOWN
        self.misses.append(Miss("child", base.nodes, name, arg.start, arg.end, "call", lookup="FindFirstAncestor", ancestor=True))
        return UNKNOWN
