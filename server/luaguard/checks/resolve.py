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

Values of a known class come from ``Instance.new("Part")``, ``:Clone()``,
``:FindFirstChildOfClass("Humanoid")``, ``game:GetService("Players")``, what API methods
return (their ``ReturnType`` in Roblox's API dump: ``DataStoreService:GetOrderedDataStore``
gives an ``OrderedDataStore``, ``Players:GetPlayerFromCharacter`` a ``Player``;
``:WaitForChild``/``:FindFirstChild`` give the project's node, or an ``Instance`` where
the project does not know the child), properties typed with a class
(``workspace.CurrentCamera``), parameters and locals annotated with a class, type
assertions ``x :: Part``; data type values from constructors (``Vector3.new``); enums
from ``Enum.X``.  A value's class is *exact* (``Instance.new``, a service, a project
node, ``FindFirstChildOfClass``) or a *bound* (a return type, a property's type, an
annotation, ``FindFirstChildWhichIsA``: the value may be of a subclass).

A name that is no member of the value's class (see :meth:`Resolver._member_miss`): on a
bound, a name some subclass has is fine (the code may know the class better); otherwise
a method call of it is certainly wrong (a child is not a method, and the dump lists every
member, engine-internal ones included), while ``.Name`` may still be a child, so it is a
miss only as a near miss of a member.  A miss is certain (an error) where the class is
exact, for method calls, and on a bound with no subclasses; a dot access on a bound that
has subclasses is a warning.  Suggestions come from the members of the same kind first
(a method for a method).  Data types and enums are complete, so any unknown name there
is a miss; an enum item's legacy name (``Enum.KeyCode.Unknown``) is valid.

Every step that names something that cannot exist is recorded as a :class:`Miss`; the
step's value is then unknown, so one mistake is reported once.  A name is not a miss
when the parent is open, or when the project's scripts create it there at run time; it
is an ``open_child`` miss (a warning at most, with the evidence) where they may (see
:mod:`luaguard.checks.runtime_world`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..fuzzy import rank
from ..luau import ast as A
from ..project.tree import Instance

_CHILD_LOOKUPS = frozenset({"WaitForChild", "FindFirstChild"})
_SERVICE_LOOKUPS = frozenset({"GetService", "FindService"})
_ALIAS_GLOBALS = {"workspace": "Workspace", "Workspace": "Workspace"}


_SUGGESTIBLE: dict[int, tuple[dict, tuple[str, ...]]] = {}


def _suggestible(members: dict) -> tuple[str, ...]:
    """Member names worth suggesting: not deprecated, and not rbx-dom's lower-case
    serialization aliases (``siz``, ``shap``) that the API data lists untagged.  Cached per
    members dict (``RobloxApi.members`` caches one per class; the check is quadratic in the
    class's member count)."""
    got = _SUGGESTIBLE.get(id(members))
    if got is not None and got[0] is members:
        return got[1]
    result = _suggestible_uncached(members)
    if len(_SUGGESTIBLE) > 4096:
        _SUGGESTIBLE.clear()
    _SUGGESTIBLE[id(members)] = (members, result)
    return result


def _suggestible_uncached(members: dict) -> tuple[str, ...]:
    out = []
    lowered = {n.lower() for n in members if n[:1].isupper()}
    for name, m in members.items():
        if m.deprecated:
            continue
        if name[:1].islower() and any(u.startswith(name.lower()) for u in lowered):
            continue
        out.append(name)
    return tuple(out)


_CANDIDATES: dict[tuple, tuple[str, ...]] = {}


def _member_candidates(api, cls: str, bound: bool, method: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(same kind, all)``: member names to suggest for a miss on a value of class
    ``cls`` (with its subclasses' methods for a method call on a bound) - usable by scripts, not deprecated
    - of the kind the code used (functions for a method call, other members for a
    ``.name``), and of every kind.  Cached per ``(api, cls, bound, method)``."""
    key = (id(api), cls, bound, method)
    got = _CANDIDATES.get(key)
    if got is None:
        members = dict(api.members(cls))
        if bound and method:  # a `.name` on a bound is a child more often than a subclass's member
            members.update(api.subclass_members(cls))
        names = tuple(n for n in _suggestible(members) if members[n].usable(plugin=True))
        got = (tuple(n for n in names if (members[n].kind == "Function") == method), names)
        if len(_CANDIDATES) > 4096:
            _CANDIDATES.clear()
        _CANDIDATES[key] = got
    return got


def near_member(name: str, api, cls: str, bound: bool, method: bool) -> tuple[tuple[str, ...], float]:
    """``(candidates, best score)`` for a name missing from class ``cls``: the members
    of the kind the code used when one of them is a near miss (``IsGamepadConnected`` ->
    the method ``GetGamepadConnected``, not the event ``GamepadConnected``), else every
    member (see :func:`_member_candidates`)."""
    same, every = _member_candidates(api, cls, bound, method)
    ranked = rank(name, same, limit=1)
    if ranked and ranked[0][1] >= MEMBER_TYPO_SCORE:
        return same, ranked[0][1]
    ranked = rank(name, every, limit=1)
    return every, (ranked[0][1] if ranked else 0.0)


def _nodes_value(nodes: tuple[Instance, ...]) -> Value:
    cls = nodes[0].class_name if all(n.class_name == nodes[0].class_name for n in nodes) else None
    return Value(nodes, cls)


@dataclass(frozen=True, slots=True)
class Value:
    """An abstract value.

    ``nodes``: project tree nodes the expression certainly is one of (all of them are
    checked; a child is missing only if it is missing under every one).
    ``class_name``: the certain class of the instance (the nodes' class, or e.g.
    ``"Part"`` for ``Instance.new("Part")`` or a parameter annotated ``: Part``).
    ``fresh``: a new instance this code made (``Instance.new``, ``:Clone()``): it has no
    children but those the code adds.  ``bound``: ``class_name`` is an upper bound (a
    method's return type, a property's type, an annotation): the value may be of a
    subclass.  ``engine``: the instance is one the engine made or handed out
    (``Instance.new``, what an API method or property gives, reached from such a value or
    a project node): not a project node, whose class a script may change by cloning a
    template elsewhere, nor a value only annotated with a class (a wrapper table may
    stand behind it).  ``datatype``: a Roblox data type value
    (``Vector3.new(...)``).  ``enum``: ``""`` for the ``Enum`` global, ``"Material"``
    for ``Enum.Material``.
    """

    nodes: tuple[Instance, ...] = ()
    class_name: str | None = None
    fresh: bool = False
    bound: bool = False
    engine: bool = False
    datatype: str | None = None
    enum: str | None = None

    @property
    def known(self) -> bool:
        return bool(self.nodes) or self.class_name is not None or self.datatype is not None or self.enum is not None


UNKNOWN = Value()


@dataclass(frozen=True, slots=True)
class Miss:
    """A step that names something that does not exist.

    ``kind``:

    * ``"child"`` — no such child under a closed node (``unknown_instance``);
    * ``"open_child"`` — not in the project under an open node, or under a closed node
      where the project's scripts may create it (``evidence`` says how), so it may exist
      at run time (reported only when it looks like a typo);
    * ``"service"`` — ``GetService`` of a name that is no service (``unknown_service``);
    * ``"member"`` — no such property, method or event on a value of a certain class
      or data type (``unknown_member``); ``owner`` names the class;
    * ``"enum"`` / ``"enum_item"`` — ``Enum.X`` / ``Enum.X.Y`` that does not exist.

    ``parents`` are the nodes searched; ``name`` what was asked for; ``start``/``end``
    the offsets of the name as written (the identifier, or the string literal *including*
    its quotes); ``form`` is ``"dot"``, ``"bracket"``, ``"call"`` (an argument of
    ``WaitForChild``/``FindFirstChild``/``GetService``) or ``"method"``; ``dot_start`` is
    the offset of the ``.`` for the dot form; ``lookup`` names the method for call forms;
    ``descendant`` is set for ``FindFirstChild(name, true)``, ``ancestor`` for
    ``FindFirstAncestor``; ``candidates`` are the names a suggestion is chosen from when
    they are not the parents' children (members, enum items); ``certain`` is False for a
    member miss on a value whose class is only a bound (a subclass could have the name:
    a warning, not an error).
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
    owner: str = ""
    candidates: tuple[str, ...] = ()
    certain: bool = True
    #: for ``open_child`` misses of a closed node: why the child may exist at run time
    #: (:class:`~luaguard.checks.runtime_world.Verdict` evidence)
    evidence: str = ""


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


#: Where each kind of script runs (Roblox's "Script types and locations" and LocalScript
#: reference pages): an ancestor of one of these classes (after :func:`runtime_node`
#: moved the script to where the engine copies it).  ``Client`` and ``Server`` run
#: contexts run outside the server-only containers; ``Server`` outside ``ServerStorage``.
_LOCAL_SCRIPT_HOMES = frozenset({"PlayerGui", "PlayerScripts", "Backpack", "ReplicatedFirst"})
_LEGACY_SCRIPT_HOMES = frozenset({"Workspace", "ServerScriptService"})


def runs_in_place(node: Instance) -> bool:
    """Does the engine run the script ``node`` where it stands (``node`` as
    :func:`runtime_node` returns it)?  A ``LocalScript`` runs under a player's
    ``PlayerGui``, ``PlayerScripts`` or ``Backpack``, in the character, or in
    ``ReplicatedFirst``; a ``Script`` with the ``Legacy`` run context under ``Workspace``
    or ``ServerScriptService``; with ``Client``, anywhere but ``ServerScriptService`` and
    ``ServerStorage``; with ``Server``, anywhere but ``ServerStorage``.  Module scripts and
    plugin scripts run where they are required or loaded: True.  A script that does not
    run in place is a template that code clones elsewhere (a character script kept in
    ``ServerStorage``, a ``.client.luau`` under ``ServerScriptService``, a script whose
    ``Disabled`` property is set in its ``.meta.json``)."""
    cls = node.class_name
    if node.disabled and cls in ("Script", "LocalScript"):
        return False  # disabled: a template that code clones and enables elsewhere
    if cls == "LocalScript":
        homes: frozenset[str] | None = _LOCAL_SCRIPT_HOMES
    elif cls == "Script":
        rc = node.run_context or "Legacy"
        if rc == "Legacy":
            homes = _LEGACY_SCRIPT_HOMES
        elif rc in ("Client", "Server"):
            banned = ("ServerScriptService", "ServerStorage") if rc == "Client" else ("ServerStorage",)
            return not any(a.class_name in banned for a in node.ancestors())
        else:
            return True
    else:
        return True
    for a in node.ancestors():
        if a.class_name in homes or (cls == "LocalScript" and a.open_reason == _CHARACTER_REASON):
            return True
    return False


_SCRIPT_CLASSES = frozenset({"Script", "LocalScript", "ModuleScript"})


def template_of(node: Instance) -> Instance | None:
    """The node whose ``Parent`` is not where the project puts it, for code of the script
    ``node`` (as :func:`runtime_node` returns it), or ``None``: ``node`` or its nearest
    ancestor script that does not run in place (:func:`runs_in_place`: a template cloned
    elsewhere; a module inside such a script shares its fate), or - for a module - the
    module itself when its parent is a container (a ``Tool``, a ``Model``, not a script
    and not a service) that holds a script which does not run where it stands because of
    where it is: the container is a template whose scripts code clones into a host, and
    the module runs in that host."""
    cur: Instance | None = node
    while cur is not None and cur.class_name in _SCRIPT_CLASSES:
        if not runs_in_place(cur):
            return cur
        cur = cur.parent
    if node.class_name != "ModuleScript":
        return None
    parent = node.parent
    if parent is None or parent.class_name in _SCRIPT_CLASSES or parent.parent is None or parent.parent.parent is None:
        return None
    for sib in parent.all_children():
        if sib is not node and sib.class_name in ("Script", "LocalScript") and not sib.disabled and not runs_in_place(sib):
            return node
    return None


_CHARACTERS: "dict[int, tuple[Instance, Instance]]" = {}
_CHARACTER_REASON = "a player's character: its parts are created at run time"


def _character(project, scripts: Instance) -> Instance:
    """A synthesized character model holding copies of ``StarterCharacterScripts``."""
    cached = _CHARACTERS.get(id(scripts))
    if cached is not None and cached[0] is scripts:
        return cached[1]
    character = Instance("Character", "Model", open_reason=_CHARACTER_REASON)
    for child in scripts.all_children():
        character.add_child(child.copy_tree())
    workspace = project.service("Workspace")
    character.parent = workspace
    if len(_CHARACTERS) > 64:
        _CHARACTERS.clear()
    _CHARACTERS[id(scripts)] = (scripts, character)
    return character


#: Data types whose ``X.new(...)`` (and these other constructors) certainly return an X.
_DATATYPE_CONSTRUCTORS = {
    "Color3": ("new", "fromRGB", "fromHSV", "fromHex"),
    "CFrame": ("new", "Angles", "lookAt", "fromEulerAnglesXYZ", "fromEulerAnglesYXZ", "fromOrientation", "fromAxisAngle", "fromMatrix"),
    "UDim2": ("new", "fromScale", "fromOffset"),
}
#: A near miss of a member scores at least this (see :mod:`luaguard.fuzzy`).
MEMBER_TYPO_SCORE = 75.0


@dataclass
class Resolver:
    """Evaluates the expressions of one file.

    ``project`` is the :class:`~luaguard.project.index.ProjectIndex` (``None`` for a
    loose file: only class-level facts are known); ``api`` the Roblox API facts;
    ``scripts`` the instances the file maps to; ``runtime_names`` names created at run
    time: the linter's :class:`~luaguard.checks.runtime_names.NamesView` (or
    :class:`~luaguard.checks.runtime_names.WorldNames`), whose ``verdict`` scopes each name
    to where code may create it; a plain set is accepted everywhere.  Results are
    memoised per node; :attr:`misses` collects the missing steps in evaluation order.
    """

    project: object
    scripts: list[Instance]
    runtime_names: frozenset[str] = frozenset()
    api: object = None
    misses: list[Miss] = field(default_factory=list)
    _memo: dict[int, Value] = field(default_factory=dict)
    _locals: dict[int, Value] = field(default_factory=dict)
    _in_progress: set[int] = field(default_factory=set)
    #: ids of the file's script nodes that do not run where the project puts them
    #: (:func:`runs_in_place`): their parent is wherever code clones them to
    _templates: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.api is None and self.project is not None:
            self.api = self.project.api

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
        reassigned (a parameter or local annotated with a class is of that class), else
        unknown."""
        key = id(local)
        v = self._locals.get(key)
        if v is not None:
            return v
        v = UNKNOWN
        if not local.assignments and key not in self._in_progress:
            if local.annotation is not None:
                # The developer's annotation wins: `: Part` is a Part, `: any` opts out.
                if local.kind in ("local", "param"):
                    v = self._annotated(local.annotation)
            elif local.kind == "local" and local.value is not None:
                self._in_progress.add(key)
                v = self.value(local.value)
                self._in_progress.discard(key)
        self._locals[key] = v
        return v

    def _annotated(self, annotation) -> Value:
        """The value an annotation certainly describes: ``Part`` (not ``Part?``) is a Part."""
        if type(annotation) is A.TypeReference and annotation.prefix is None and not annotation.has_params:
            name = annotation.name
            if self.api is not None and self.api.has_class(name):
                return Value(class_name=name, bound=True)
        return UNKNOWN

    # -- evaluation --------------------------------------------------------------------
    def _eval(self, expr: A.Expr) -> Value:
        t = type(expr)
        if t is A.ExprIndexName:
            if expr.op != ".":
                return UNKNOWN  # a method reference without a call
            base = self.value(expr.obj)
            if not base.known:
                return UNKNOWN
            return self._index(base, expr.name, expr.name_start, expr.name_end, "dot", expr.name_start - 1)
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
            inner = self.value(expr.expr)
            if inner.nodes:
                return inner  # a cast does not move an instance in the tree
            return self._annotated(expr.annotation)  # `:: Part` is a Part, `:: any` opts out
        return UNKNOWN

    def _global(self, name: str) -> Value:
        if name == "Enum":
            return Value(enum="")
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
            if project.root is project.datamodel:  # a place: where each script runs is known
                for n in nodes:
                    t = template_of(n)
                    if t is not None:
                        self._templates.add(id(t))
            return _nodes_value(nodes)
        return UNKNOWN

    def _index(self, base: Value, name: str, start: int, end: int, form: str, dot_start: int) -> Value:
        """``base.name``: a child, a member, an enum or an enum item."""
        if base.nodes:
            return self._child(base, name, start, end, form, dot_start=dot_start)
        api = self.api
        if base.enum is not None:
            if base.enum == "":
                if api.enum_items(name) is not None:
                    return Value(enum=name)
                if name in ("GetEnums",):
                    return UNKNOWN
                self.misses.append(Miss("enum", (), name, start, end, form, dot_start=dot_start, owner="Enum",
                                        candidates=tuple(api.enums)))
                return UNKNOWN
            items = api.enum_items(base.enum) or ()
            if (items and name not in items and name not in ("GetEnumItems", "FromName", "FromValue")
                    and api.enum_legacy(base.enum, name) is None):
                self.misses.append(Miss("enum_item", (), name, start, end, form, dot_start=dot_start,
                                        owner=f"Enum.{base.enum}", candidates=tuple(items)))
            return UNKNOWN
        if base.datatype is not None:
            if api.datatype_member(base.datatype, name) is None and api.datatype_members(base.datatype):
                self.misses.append(Miss("member", (), name, start, end, form, dot_start=dot_start, owner=base.datatype,
                                        candidates=tuple(api.datatype_members(base.datatype))))
            return UNKNOWN
        if base.class_name is not None:
            member = api.member(base.class_name, name)
            if member is not None:
                return self._member_value(member, base)
            if name in self.runtime_names:
                return UNKNOWN
            self._member_miss(base, name, start, end, form, dot_start)
        return UNKNOWN

    def _member_value(self, member, base: Value) -> Value:
        """The value of a property whose type is an instance class (``Camera``, ``Model?``),
        or of a method call whose return type is one: of that class or a subclass (made
        by the engine when ``base`` is a real instance: a project node or such a value)."""
        text = member.returns if member.kind == "Function" else member.type if member.kind == "Property" else None
        if text:
            cls = text[:-1] if text.endswith("?") else text
            if self.api.has_class(cls):
                return Value(class_name=cls, bound=True, engine=base.engine or bool(base.nodes))
        return UNKNOWN

    def _member_miss(self, base: Value, name: str, start: int, end: int, form: str, dot_start: int) -> None:
        """Record ``name`` missing from the members of ``base``'s class (see the module
        docstring): nothing when a subclass of a bound has it; a method call of it is a
        miss; ``.name`` is one only as a near miss of a member (a child may have the name).
        """
        api = self.api
        cls = base.class_name
        if not api.members(cls):
            return  # a class the data does not know
        if base.bound and name in api.subclass_members(cls):
            return
        candidates, score = near_member(name, api, cls, base.bound, form == "method")
        if score < MEMBER_TYPO_SCORE and (form != "method" or not (base.engine or self._services(base))):
            return  # not a near miss: a child (`.name`), or a class a script may change
        open_ended = base.bound and bool(api.subclasses(cls))
        certain = not open_ended or form == "method"
        self.misses.append(Miss("member", base.nodes, name, start, end, form, dot_start=dot_start,
                                owner=f"any {cls}" if open_ended else cls, candidates=candidates, certain=certain))

    def _call(self, call: A.ExprCall) -> Value:
        method = call.method
        args = call.args
        first = args[0] if args else None
        literal = first.value if type(first) is A.ExprString else None
        if method is None:
            return self._function_call(call, literal)
        base = self.value(call.func.obj)
        if not base.known:
            return UNKNOWN
        cls = base.class_name
        member = None
        if cls is not None and not any(n.class_guessed for n in base.nodes):
            # Methods are members: `part:Destory()` is certainly wrong.
            member = self.api.member(cls, method)
            if member is None and self.api.members(cls):
                f = call.func
                self._member_miss(base, method, f.name_start, f.name_end, "method", -1)
                return UNKNOWN
        if base.datatype is not None:
            api = self.api
            if api.datatype_member(base.datatype, method) is None and api.datatype_members(base.datatype):
                f = call.func
                self.misses.append(Miss("member", (), method, f.name_start, f.name_end, "method",
                                        owner=base.datatype, candidates=tuple(api.datatype_members(base.datatype))))
            return UNKNOWN
        if method == "Clone" and cls is not None:
            return Value(class_name=cls, fresh=True, bound=base.bound, engine=base.engine or bool(base.nodes))
        if method in ("FindFirstChildOfClass", "FindFirstChildWhichIsA", "FindFirstAncestorOfClass", "FindFirstAncestorWhichIsA"):
            if literal is not None and self.api.has_class(literal):
                return Value(class_name=literal, bound=method.endswith("WhichIsA"), engine=base.engine or bool(base.nodes))
            return self._returned(member, base)
        if literal is None or not base.nodes:
            return self._returned(member, base)
        name = literal
        misses = len(self.misses)
        if method in _CHILD_LOOKUPS:
            recursive = (
                method == "FindFirstChild" and len(args) > 1 and type(args[1]) is A.ExprBool and args[1].value
            )
            if recursive:
                got = self._descendant(base, name, first)
            else:
                got = self._child(base, name, first.start, first.end, "call", lookup=method, via_lookup=True)
        elif method in _SERVICE_LOOKUPS:
            if not any(n is self.project.datamodel for n in base.nodes):
                return self._returned(member, base)
            service = self.project.service(name)
            if service is None:
                self.misses.append(Miss("service", base.nodes, name, first.start, first.end, "call", lookup=method))
                return UNKNOWN
            return Value((service,), service.class_name)
        elif method == "FindFirstAncestor":
            got = self._ancestor(base, name, first.start, first.end)
        else:
            return self._returned(member, base)
        if got.known or any(m.kind != "open_child" for m in self.misses[misses:]):
            return got  # the project's node; or a certain miss, reported once
        return self._returned(member, base)  # a child the project does not know: an Instance

    def _services(self, base: Value) -> bool:
        """Is ``base`` the DataModel or services (whose class no script changes)?"""
        dm = self.project.datamodel if self.project is not None else None
        return bool(base.nodes) and all(n is dm or n.parent is dm for n in base.nodes)

    def _returned(self, member, base: Value) -> Value:
        """What a call of API method ``member`` on ``base`` returns, when its return type
        is a class."""
        if member is None or member.kind != "Function":
            return UNKNOWN
        return self._member_value(member, base)

    def _function_call(self, call: A.ExprCall, literal: str | None) -> Value:
        """``Instance.new("Part")`` and data type constructors such as ``Vector3.new``."""
        func = call.func
        if type(func) is not A.ExprIndexName or func.op != "." or type(func.obj) is not A.ExprGlobal:
            return UNKNOWN
        owner, name = func.obj.name, func.name
        api = self.api
        if api is None:
            return UNKNOWN
        if owner == "Instance" and name == "new":
            if literal is not None and api.is_creatable(literal):
                return Value(class_name=literal, fresh=True, engine=True)
            return UNKNOWN
        if api.has_datatype(owner) and (name == "new" or name in _DATATYPE_CONSTRUCTORS.get(owner, ())):
            return Value(datatype=owner)
        return UNKNOWN

    def _child(self, base: Value, name: str, start: int, end: int, form: str, *, dot_start: int = -1, lookup: str = "", via_lookup: bool = False) -> Value:
        """Step from ``base`` to its child ``name`` (see the module docstring for the rules)."""
        project = self.project
        api = project.api
        found: list[Instance] = []
        unknown = False  # a member, or a class the API data does not know
        open_parent = False
        member_value: Value | None = None
        for node in base.nodes:
            if not via_lookup:
                # Members win over children on a live Instance.
                if name == "Parent":
                    if node.parent is None:
                        unknown = True
                    elif id(node) in self._templates:
                        found.append(_clone_site(node))  # a template: its parent is not this one
                    else:
                        found.append(node.parent)
                    continue
                if name == "LocalPlayer" and node.class_name == "Players":
                    found.append(project.local_player())
                    continue
                member = api.member(node.class_name, name)
                if member is not None:
                    unknown = True
                    member_value = self._member_value(member, base)
                    continue
            child = node.child(name)
            if child is None and node is project.datamodel:
                # a service by its class name, or by the instance name some services still
                # have (RunService is named "Run Service")
                child = project.service(name) or (project.service(name.replace(" ", "")) if " " in name else None)
            if child is not None:
                found.append(child)
            elif node.is_open:
                open_parent = True  # children may exist at run time
            elif not api.has_class(node.class_name):
                unknown = True
        if found and not unknown and not open_parent:
            return _nodes_value(tuple(dict.fromkeys(found)))
        if not found and not unknown and any(name in project.wally_siblings(n) for n in base.nodes):
            unknown = True  # a Wally dependency installed beside a package
        evidence = ""
        if not found and not unknown:
            if open_parent:
                if name in self.runtime_names:
                    unknown = True  # created at run time somewhere; the node is open anyway
            else:
                verdict = self._runtime_verdict(base.nodes, name)
                if verdict is not None:
                    if verdict.status == "created":
                        unknown = True
                    else:
                        open_parent, evidence = True, verdict.evidence
        if not found and not unknown:
            kind = "open_child" if open_parent else "child"
            cls = base.class_name
            if not via_lookup and cls is not None and not any(n.class_guessed for n in base.nodes):
                # A near miss of a member, closer than any child: `workspace.CurrentCamra`.
                members, score = near_member(name, api, cls, False, False)
                if score >= MEMBER_TYPO_SCORE:
                    children = [c.name for n in base.nodes for c in n.all_children()]
                    ranked_c = rank(name, children, limit=1)
                    if not ranked_c or ranked_c[0][1] < score:
                        self.misses.append(Miss("member", base.nodes, name, start, end, form, dot_start=dot_start,
                                                owner=cls, candidates=members))
                        return UNKNOWN
            self.misses.append(Miss(kind, base.nodes, name, start, end, form, dot_start=dot_start, lookup=lookup,
                                    evidence=evidence))
        if member_value is not None and not found:
            return member_value
        return UNKNOWN

    def _runtime_verdict(self, nodes: tuple[Instance, ...], name: str):
        """What the run-time world says of ``name`` under the closed ``nodes``
        (:meth:`~luaguard.checks.runtime_world.RuntimeWorld.verdict`): ``created`` under
        any of them wins, else the first ``maybe``, else ``None``."""
        from .runtime_names import scoped_verdict

        maybe = None
        for n in nodes:
            v = scoped_verdict(self.runtime_names, n, name)
            if v is not None:
                if v.status == "created":
                    return v
                maybe = maybe or v
        return maybe

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

    def _ancestor(self, base: Value, name: str, start: int, end: int) -> Value:
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
        self.misses.append(Miss("child", base.nodes, name, start, end, "call", lookup="FindFirstAncestor", ancestor=True))
        return UNKNOWN


_CLONE_SITES: "dict[int, tuple[Instance, Instance]]" = {}


def _clone_site(script: Instance) -> Instance:
    """An open instance of unknown class standing for wherever a template script is
    cloned to at run time: ``script.Parent`` of a script that does not run in place.
    Nothing under it is certain (no class members are known, every child may exist)."""
    got = _CLONE_SITES.get(id(script))
    if got is not None and got[0] is script:
        return got[1]
    site = Instance(f"<where {script.name} is cloned to>", "<template site>",
                    open_reason="a template script's parent is wherever code clones it to", class_guessed=True)
    if len(_CLONE_SITES) > 256:
        _CLONE_SITES.clear()
    _CLONE_SITES[id(script)] = (script, site)
    return site


def clone_site_template(site: Instance) -> Instance | None:
    """The template script whose clone site ``site`` is (see :func:`_clone_site`), or
    ``None`` for any other node."""
    if site.class_name != "<template site>":
        return None
    for script, known in _CLONE_SITES.values():
        if known is site:
            return script
    return None


def resolver_for(ctx) -> Resolver | None:
    """The file's :class:`Resolver`, built once per lint run and shared by the checks
    (``None`` when the file has no AST).  Every path look-up of the file is evaluated,
    so :attr:`Resolver.misses` is complete."""
    if ctx.ast is None:
        return None
    cached = ctx.options.get("_resolver")
    if cached is None:
        if ctx.project is not None:
            cached = Resolver(ctx.project, ctx.scripts, ctx.runtime_names(), ctx.project.api)
        else:  # loose text: an empty open DataModel - services and the API are still known
            cached = Resolver(_loose_project(), [], frozenset())
        value = cached.value
        for node in ctx.ast.lookups:
            value(node)
        ctx.options["_resolver"] = cached
    return cached


def _default_api():
    from ..project.api import load_api

    return load_api()


_LOOSE: list = []


def _loose_project():
    """The shared :func:`~luaguard.project.index.empty_project` for text with no project."""
    if not _LOOSE:
        from ..project.index import empty_project

        _LOOSE.append(empty_project())
    return _LOOSE[0]
