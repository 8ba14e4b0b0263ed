"""What an expression refers to in the DataModel: the abstract evaluation the path
checks, the semantic checks and the decoding guard share.

:class:`Resolver` evaluates expressions of one file to a :class:`Value`: the project
tree nodes it certainly is (``game.ReplicatedStorage.Modules``), or an instance of a
certainly known class (``Instance.new("Part")``), or nothing (``UNKNOWN``).  Evaluation
follows Roblox's indexing rules:

* ``game``, ``workspace``/``Workspace``, ``script`` (the file's own instance), and locals
  bound once to such chains (``local RS = game:GetService("ReplicatedStorage")``) - a
  local that is ever reassigned, a parameter, or a loop variable is unknown;
* ``.Name`` / ``["Name"]`` on an instance: a scriptable member of its class (property,
  method, event) wins; any other name reads a **child** (``ReplicatedStorage.Inventory
  Changed`` is a RemoteEvent, ``shopFrame.Close`` a button): a name that is no member is a
  child access, never a misspelt member to "fix".  Members tagged ``NotScriptable``
  (``Attributes``, ``Tags``) are invisible to scripts: the name reads a child.
  ``Parent`` climbs; ``LocalPlayer`` of ``Players`` is the synthesized client player;
* ``:WaitForChild("Name"[, timeout])``, ``:FindFirstChild("Name")``,
  ``:FindFirstChild("Name", true)`` (breadth-first descendant search),
  ``:FindFirstAncestor("Name")``, ``game:GetService("Service")`` / ``FindService``;
* ``require("./x")``, ``require("../x")``, ``require("@self/x")``,
  ``require("@alias/x")`` (Luau's string requires, :mod:`.frameworks`): each component
  is a child step, judged like a path.

A child step asks the file's judge for the name's
:class:`~luaguard.analysis.verdict.Verdict` (:meth:`luaguard.analysis.snapshot.Snapshot.verdict`;
:class:`TreeJudge` when only the project tree counts).  A name that may exist in the place
and that the project backs (another script reads or creates it) becomes a *possible
child* (:meth:`~.places.Places.possible_child`), so a path through it is still judged:
``Remotes.Foo`` after a ``Remotes`` the game's scripts read.

Values of a known class come from ``Instance.new("Part")``, ``:Clone()``,
``:FindFirstChildOfClass("Humanoid")``, ``game:GetService("Players")``, what API methods
return (their ``ReturnType`` in Roblox's API dump), properties typed with a class
(``workspace.CurrentCamera``), parameters and locals annotated with a class, type
assertions ``x :: Part``; data type values from constructors (``Vector3.new``); enums
from ``Enum.X``.  A value's class is *exact* (``Instance.new``, a service, a project
node, ``FindFirstChildOfClass``) or a *bound* (a return type, a property's type, an
annotation, ``FindFirstChildWhichIsA``: the value may be of a subclass).

A name that is no member of the value's class:

* a method call of it (``part:Destory()``) is certainly wrong (a child is not a method,
  and the dump lists every member) - unless a subclass of a bound has it;
* an assignment to it (``part.Anchord = true``) is wrong: Roblox sets properties, never
  children - certainly so where the instance is real (a project node, what the engine made or
  handed out), a warning where only an annotation or a cast claims the class;
* a read (``x.Name``) is a child access: a ``"member"`` miss (``unknown_member``) only where
  no child can exist - a closed project node where nothing creates the child, a new
  instance (``Instance.new``) - and the name is a near miss of a member.  Elsewhere a near
  miss of a member is reported as a child the project does not back (a hint in editor
  mode, a warning in patch mode), the member named in the message.

Data types and enums are complete, so any unknown name there is a miss; an enum item's
legacy name (``Enum.KeyCode.Unknown``) is valid.  Every step that names something that
cannot exist is recorded as a :class:`Miss`; the step's value is then unknown, so one
mistake is reported once.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from ..fuzzy import rank
from ..luau import ast as A
from ..project.tree import Instance
from .frameworks import require_path
from .places import Places, child_of, template_of
from .verdict import IN_PROJECT, NOTHING, POSSIBLE, Verdict, weakest

_CHILD_LOOKUPS = frozenset({"WaitForChild", "FindFirstChild"})
_SERVICE_LOOKUPS = frozenset({"GetService", "FindService"})
_ALIAS_GLOBALS = {"workspace": "Workspace", "Workspace": "Workspace"}

#: A near miss of a member scores at least this (see :mod:`luaguard.fuzzy`).
MEMBER_TYPO_SCORE = 75.0

#: Data types whose ``X.new(...)`` (and these other constructors) certainly return an X.
_DATATYPE_CONSTRUCTORS = {
    "Color3": ("new", "fromRGB", "fromHSV", "fromHex"),
    "CFrame": ("new", "Angles", "lookAt", "fromEulerAnglesXYZ", "fromEulerAnglesYXZ", "fromOrientation", "fromAxisAngle", "fromMatrix"),
    "UDim2": ("new", "fromScale", "fromOffset"),
}


def near_member(name: str, api, cls: str, bound: bool, method: bool) -> tuple[tuple[str, ...], float]:
    """``(candidates, best score)`` for a name missing from class ``cls``: the members
    of the kind the code used when one of them is a near miss (``IsGamepadConnected`` ->
    the method ``GetGamepadConnected``, not the event ``GamepadConnected``), else every
    member (:meth:`~luaguard.project.api.RobloxApi.suggestions`)."""
    same, every = api.suggestions(cls, bound=bound, method=method)
    ranked = rank(name, same, limit=1)
    if ranked and ranked[0][1] >= MEMBER_TYPO_SCORE:
        return same, ranked[0][1]
    ranked = rank(name, every, limit=1)
    return every, (ranked[0][1] if ranked else 0.0)


def scriptable(member) -> bool:
    """Can a script see ``member`` at all (not tagged ``NotScriptable``)?  A name whose
    member is invisible reads a child."""
    return "NotScriptable" not in member.tags


def _nodes_value(nodes: tuple[Instance, ...]) -> "Value":
    cls = nodes[0].class_name if all(n.class_name == nodes[0].class_name for n in nodes) else None
    return Value(nodes, cls)


@dataclass(frozen=True, slots=True)
class Value:
    """An abstract value.

    ``nodes``: project tree nodes the expression certainly is one of (all of them are
    checked; a child is missing only if it is missing under every one).
    ``class_name``: the certain class of the instance (the nodes' class, or e.g.
    ``"Part"`` for ``Instance.new("Part")`` or a parameter annotated ``: Part``).
    ``fresh``: a new instance this code made (``Instance.new``, ``:Clone()``).
    ``childless``: made by ``Instance.new`` here: it has no children but those code adds.
    ``bound``: ``class_name`` is an upper bound (a method's return type, a property's
    type, an annotation): the value may be of a subclass.  ``engine``: the instance is one
    the engine made or handed out (``Instance.new``, what an API method or property gives,
    reached from such a value or a project node): not a project node, whose class a script
    may change by cloning a template elsewhere, nor a value only annotated with a class (a
    wrapper table may stand behind it).  ``datatype``: a Roblox data type value
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
    childless: bool = False

    @property
    def known(self) -> bool:
        return bool(self.nodes) or self.class_name is not None or self.datatype is not None or self.enum is not None


UNKNOWN = Value()


@dataclass(frozen=True, slots=True)
class Miss:
    """A step that names something that does not exist, or that nothing backs.

    ``kind``:

    * ``"child"`` - nothing could create the child (``unknown_instance``; ``verdict`` is
      the :data:`~.verdict.NOTHING` verdict, or ``None`` for descendant/ancestor searches);
    * ``"open_child"`` - the child may exist at run time but is a near miss of a name the
      project knows, or nothing in the project backs it (``verdict`` says which);
    * ``"service"`` - ``GetService`` of a name that is no service (``unknown_service``);
    * ``"member"`` - no such property, method or event on a value of a certain class
      or data type (``unknown_member``); ``owner`` names the class;
    * ``"enum"`` / ``"enum_item"`` - ``Enum.X`` / ``Enum.X.Y`` that does not exist;
    * ``"module"`` - a string require's component that is no file or directory on disk
      (``candidates``: the directory's modules).

    ``parents`` are the nodes searched; ``name`` what was asked for; ``start``/``end``
    the offsets of the name as written (the identifier, or the string literal *including*
    its quotes; for ``"require"`` the component inside the string); ``form`` is ``"dot"``,
    ``"bracket"``, ``"call"`` (an argument of ``WaitForChild``/``FindFirstChild``/
    ``GetService``), ``"method"``, ``"assign"`` (an assigned ``.name``) or ``"require"``;
    ``dot_start`` is the offset of the ``.`` for the dot form; ``lookup`` names the method
    for call forms; ``descendant`` is set for ``FindFirstChild(name, true)``, ``ancestor``
    for ``FindFirstAncestor``; ``candidates`` are the names a suggestion is chosen from when
    they are not the parents' children (members, enum items); ``certain`` is False for a
    member miss on a value whose class is only a bound (a subclass could have the name: a
    warning, not an error); ``member_hint``: for a child miss, the members the name is a
    near miss of (the message names them; no fix); ``impossible``: the name cannot work in
    any host that runs the code (a non-service in ``GetService``, a method missing from a
    certain class): an error even outside the project's DataModel.
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
    verdict: Verdict | None = None
    member_hint: tuple[str, ...] = ()
    impossible: bool = False
    #: for ``"require"`` misses: the require path as written
    path: str = ""
    #: for member misses: ``candidates`` are of the kind the code used (a method for a
    #: method call, a property for an assignment) - only then may a fix be offered
    same_kind: bool = True


class TreeJudge:
    """Verdicts from the project tree alone: a child the project has, a possible child
    under an open node (every name backed: nothing is reported there), nothing under a
    closed one.  What the run-time facts of the scripts are read with (they must not
    depend on themselves), and what text with no snapshot gets."""

    def __init__(self, project, places: Places | None = None) -> None:
        self.project = project
        self.places = places if places is not None else Places(project)
        self.frameworks = None

    def verdict(self, node: Instance, name: str) -> Verdict:
        child = child_of(self.project, node, name)
        if child is not None:
            return Verdict(IN_PROJECT, node=child)
        if node.is_open or not self.project.api.has_class(node.class_name):
            return Verdict(POSSIBLE, node.open_reason or f"class {node.class_name} is not in the API data")
        return Verdict(NOTHING)

    def mentioned(self, name: str) -> bool:
        return False


@dataclass
class Resolver:
    """Evaluates the expressions of one file.

    ``project`` is the :class:`~luaguard.project.index.ProjectIndex` (or an overlay view
    of one); ``scripts`` the instances the file maps to; ``judge`` answers child verdicts
    (the snapshot's :class:`~luaguard.analysis.snapshot.FileView` for the file, or a
    :class:`TreeJudge`); ``api`` the Roblox API facts (default: the project's); ``rel``
    the file's project-relative path (for string requires of files the project does not
    map).  Results are memoised per node; :attr:`misses` collects the missing steps in
    evaluation order.
    """

    project: object
    scripts: list[Instance]
    judge: object = None
    api: object = None
    rel: str | None = None
    misses: list[Miss] = field(default_factory=list)
    #: the file's script nodes that do not run where the project puts them
    #: (:func:`~.places.template_of`): their parent is wherever code clones them to
    templates: set[int] = field(default_factory=set)
    _memo: dict[int, Value] = field(default_factory=dict)
    _locals: dict[int, Value] = field(default_factory=dict)
    _in_progress: set[int] = field(default_factory=set)
    _assigned: set[int] = field(default_factory=set)
    _type_names: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.api is None and self.project is not None:
            self.api = self.project.api
        if self.judge is None:
            self.judge = TreeJudge(self.project)
        self.places: Places = self.judge.places if getattr(self.judge.places, "project", None) is self.project \
            else Places(self.project)

    # -- entry points ------------------------------------------------------------------
    def declare_types(self, names) -> None:
        """The type names the file declares (``type Object = {...}``): an annotation naming
        one of them is the file's type, not a Roblox class."""
        self._type_names = names

    def evaluate(self, chunk) -> None:
        """Evaluate every path look-up of a parsed file (so :attr:`misses` is complete)."""
        self._assigned = chunk.assigned
        self._type_names = chunk.type_names
        value = self.value
        for node in chunk.lookups:
            value(node)

    def value(self, expr: A.Expr) -> Value:
        """The abstract value of ``expr`` (memoised; records misses on first evaluation)."""
        key = id(expr)
        v = self._memo.get(key)
        if v is None:
            v = self._memo[key] = self._eval(expr)
        return v

    def evaluated(self) -> list[Value]:
        """Every value evaluated so far (expressions and locals)."""
        return [*self._memo.values(), *self._locals.values()]

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

    def global_value(self, name: str) -> Value:
        """The value of the global ``name`` (``game``, ``workspace``, ``script`` ...)."""
        return self._global(name)

    def lookup(self, base: Value, name: str, how: str) -> tuple[Value, list[Miss]]:
        """One step from ``base`` to ``name`` written ``how`` (``"dot"``, ``"bracket"``,
        ``"call"``: ``WaitForChild``/``FindFirstChild``, ``"ancestor"``:
        ``FindFirstAncestor``): its value and the misses it makes (not recorded in
        :attr:`misses`)."""
        before = len(self.misses)
        if how == "ancestor":
            v = self._ancestor(base, name, 0, 0)
        else:
            v = self._child(base, name, 0, 0, "dot" if how == "dot" else "bracket", via_lookup=how == "call")
        new = self.misses[before:]
        del self.misses[before:]
        return v, new

    def _annotated(self, annotation) -> Value:
        """The value an annotation certainly describes: ``Part`` (not ``Part?``) is a Part."""
        if type(annotation) is A.TypeReference and annotation.prefix is None and not annotation.has_params:
            name = annotation.name
            if name in self._type_names:
                return UNKNOWN  # the file's own type of that name (`type Object = {...}`)
            if self.api is not None and self.api.has_class(name):
                return Value(class_name=name, bound=True)
        return UNKNOWN

    # -- evaluation --------------------------------------------------------------------
    def _eval(self, expr: A.Expr) -> Value:
        t = type(expr)
        if t is A.ExprIndexName:
            if expr.op != "." or expr.name == A.ERROR_NAME:
                return UNKNOWN  # a method reference without a call; a syntax error's missing name
            base = self.value(expr.obj)
            if not base.known:
                return UNKNOWN
            if id(expr) in self._assigned:
                return self._assign(base, expr)
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
            if base.nodes and type(index) is A.ExprString and index.value is not None and id(expr) not in self._assigned:
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
            nodes = tuple(self.places.runtime_node(n) for n in self.scripts)
            if project.root is project.datamodel:  # a place: where each script runs is known
                for n in nodes:
                    t = template_of(n)
                    if t is not None:
                        self.templates.add(id(t))
            return _nodes_value(nodes)
        return UNKNOWN

    def _class_known(self, base: Value) -> bool:
        return base.class_name is not None and not any(n.class_guessed for n in base.nodes)

    def _assign(self, base: Value, expr: A.ExprIndexName) -> Value:
        """``base.name = value``: Roblox sets a property; a name that is no (scriptable)
        property of a certain class is an error whatever children the instance has."""
        name = expr.name
        if base.datatype is not None or base.enum is not None or not self._class_known(base):
            return UNKNOWN
        api = self.api
        cls = base.class_name
        if not api.members(cls):
            return UNKNOWN
        member = api.member(cls, name)
        if member is not None and scriptable(member):
            return UNKNOWN
        if base.bound and name in api.subclass_members(cls):
            return UNKNOWN
        _same, every = api.suggestions(cls, bound=base.bound, method=False)
        members = api.members(cls)
        candidates = tuple(n for n in every if n in members and members[n].kind == "Property")
        open_ended = base.bound and bool(api.subclasses(cls))
        # certain where the instance is real (a project node, what the engine made or handed
        # out); a class only claimed by an annotation or a cast may be wrong (`x :: Frame` on
        # what is at times a ScreenGui): a warning
        real = bool(base.nodes) or base.engine
        self.misses.append(Miss("member", base.nodes, name, expr.name_start, expr.name_end, "assign",
                                dot_start=expr.name_start - 1, owner=f"any {cls}" if open_ended else cls,
                                candidates=candidates, certain=real and not open_ended))
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
            if member is not None and scriptable(member):
                return self._member_value(member, base)
            if base.childless:
                if not self.judge.mentioned(name):  # (code may give the new instance a child so named)
                    self._member_miss(base, name, start, end, form, dot_start)
            else:
                self._unbacked_member(base, name, start, end, form, dot_start)
        return UNKNOWN

    def _unbacked_member(self, base: Value, name: str, start: int, end: int, form: str, dot_start: int) -> None:
        """``x.name`` on an instance of a known class whose children are not known: a child
        read.  Reported (as a child nothing backs) only as a near miss of a member that no
        script of the project names."""
        api = self.api
        cls = base.class_name
        if not api.members(cls) or (base.bound and name in api.subclass_members(cls)):
            return
        candidates, score = near_member(name, api, cls, base.bound, False)
        if score < MEMBER_TYPO_SCORE or self.judge.mentioned(name):
            return
        ranked = tuple(c for c, _ in rank(name, candidates, limit=3))
        why = f"{name!r} is no member of {cls}, so it reads a child, and nothing in the project names such a child"
        self.misses.append(Miss("open_child", base.nodes, name, start, end, form, dot_start=dot_start,
                                owner=cls, verdict=Verdict(POSSIBLE, why, supported=False), member_hint=ranked))

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
        """Record ``name`` missing from the members of ``base``'s class where no child can
        have the name (a method call; a read on a new instance): nothing when a subclass of
        a bound has it; a read is reported only as a near miss of a member."""
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
        same = candidates is api.suggestions(cls, bound=base.bound, method=form == "method")[0]
        self.misses.append(Miss("member", base.nodes, name, start, end, form, dot_start=dot_start,
                                owner=f"any {cls}" if open_ended else cls, candidates=candidates, certain=certain,
                                impossible=certain and form == "method", same_kind=same))

    def _call(self, call: A.ExprCall) -> Value:
        method = call.method
        args = call.args
        first = args[0] if args else None
        literal = first.value if type(first) is A.ExprString else None
        if method is None:
            return self._function_call(call, literal)
        if method == A.ERROR_NAME:
            return UNKNOWN  # `obj:(`: the parser's stand-in for a missing name
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
                                        owner=base.datatype, candidates=tuple(api.datatype_members(base.datatype)),
                                        impossible=True))
            return UNKNOWN
        if method == "Clone" and cls is not None:
            if any(n.class_guessed for n in base.nodes):
                return UNKNOWN  # a copy of a model file's instance: its class is a guess
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
                self.misses.append(Miss("service", base.nodes, name, first.start, first.end, "call", lookup=method,
                                        impossible=True))
                return UNKNOWN
            # GetService's argument is the service's class: a project node that a `$path` to a
            # folder with an init script made a script is still the service to scripts
            return Value((service,), name)
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
        """``Instance.new("Part")``, data type constructors such as ``Vector3.new``, and
        ``require`` of a string path."""
        func = call.func
        if type(func) is A.ExprGlobal:
            if func.name == "require" and literal is not None:
                return self._require(call.args[0], literal)
            return UNKNOWN
        if type(func) is not A.ExprIndexName or func.op != "." or type(func.obj) is not A.ExprGlobal:
            return UNKNOWN
        owner, name = func.obj.name, func.name
        api = self.api
        if api is None:
            return UNKNOWN
        if owner == "Instance" and name == "new":
            if literal is not None and api.is_creatable(literal):
                return Value(class_name=literal, fresh=True, engine=True, childless=True)
            return UNKNOWN
        if api.has_datatype(owner) and (name == "new" or name in _DATATYPE_CONSTRUCTORS.get(owner, ())):
            return Value(datatype=owner)
        return UNKNOWN

    # -- string requires ---------------------------------------------------------------
    def _require(self, arg: A.ExprString, text: str) -> Value:
        """``require("./x")`` and the other string requires (see :mod:`.frameworks`): each
        component a child step from the module's parent (``./``, ``../``), the module
        (``@self``) or an alias's target; where the project maps no instance there, the
        files on disk are navigated instead."""
        parsed = require_path(text)
        if parsed is None:
            return UNKNOWN
        head, parts = parsed
        quote = 1  # the string's opening quote (only plain one-line strings are read)
        if arg.end - arg.start != len(text) + 2:
            return UNKNOWN  # an escape or a long string: offsets inside it are not the text's
        origin = arg.start + quote
        frameworks = getattr(self.judge, "frameworks", None)
        mode, sources = frameworks.require_mode() if frameworks is not None else ("luau", {})
        if parts and parts[-1][0] in ("init", "init.lua", "init.luau"):
            parts = parts[:-1]  # (a folder's init module is the folder)
        if parts:
            last, at = parts[-1]
            for suffix in _MODULE_FILE_SUFFIXES:
                if last.endswith(suffix) and len(last) > len(suffix):
                    parts = [*parts[:-1], (last[: -len(suffix)], at)]  # (the file's name: its module)
                    break
        if head == ".":
            # Luau: from the module's parent; darklua's path mode: from the file's directory.
            # They differ only for an init file (its own folder): the project's mode first,
            # and a path either reading reaches is no mistake
            init = _is_init(self.rel)
            miss = self._relative(frameworks, mode == "path" and init, parts, origin, text)
            if miss is not None and init and self._relative(frameworks, mode != "path", parts, origin, text) is None:
                miss = None
            if miss is not None:
                self.misses.append(miss)
            return UNKNOWN
        if head == "@self":
            if self.scripts:
                return self._require_nodes(tuple(n.origin or n for n in self.scripts), parts, origin, text)
            file_dir = self._file_module()
            if file_dir is None or frameworks is None:
                return UNKNOWN
            return self._require_files(frameworks, file_dir, parts, origin, text)
        if frameworks is None or self.rel is None:
            return UNKNOWN
        if mode == "path" and head[1:] in sources:
            path = sources[head[1:]]
        else:
            target = frameworks.luaurc_aliases(posixpath.dirname(self.rel)).get(head[1:])
            if target is None:
                return UNKNOWN  # an alias the host defines (Lune's @lune) or none: not judged
            path = target[0]
        mapped = self._mapped(path)
        if mapped:
            return self._require_nodes(mapped, parts, origin, text)
        return self._require_files(frameworks, path, parts, origin, text)

    def _relative(self, frameworks, own_folder: bool, parts, origin: int, text: str) -> Miss | None:
        """Navigate a ``./``/``../`` require from the module's parent (``own_folder``: from
        the file's own folder); the miss it makes (not recorded), or ``None``."""
        before = len(self.misses)
        start_nodes = tuple(n.origin or n for n in self.scripts)
        nodes = start_nodes if own_folder else tuple(n.parent for n in start_nodes if n.parent is not None)
        if start_nodes and len(nodes) == len(start_nodes) and not self._climbs_out(nodes, parts):
            self._require_nodes(nodes, parts, origin, text)
        else:
            # no instance, or a path that climbs out of the places the project maps (to the
            # DataModel, above a library's root): written for the files on disk
            file_dir = self._file_module()
            if file_dir is not None and frameworks is not None:
                self._require_files(frameworks, file_dir if own_folder else _parent_dir(file_dir), parts, origin, text)
        new = self.misses[before:]
        del self.misses[before:]
        return new[0] if new else None

    def _climbs_out(self, nodes: tuple[Instance, ...], parts) -> bool:
        """Do the leading ``..`` of ``parts`` climb from ``nodes`` to the DataModel (or past a
        library's root) with components left to find?"""
        ups = 0
        for name, _at in parts:
            if name != "..":
                break
            ups += 1
        if not ups or ups == len(parts):
            return False
        dm = self.project.datamodel
        for n in nodes:
            cur: Instance | None = n
            for _ in range(ups):
                cur = cur.parent if cur is not None else None
            if cur is None or cur is dm:
                return True
        return False

    def _file_module(self) -> str | None:
        """The file's module path on disk (``a/b`` for ``a/b.luau`` and ``a/b/init.luau``)."""
        rel = self.rel
        if not rel:
            return None
        if _is_init(rel):
            return posixpath.dirname(rel)
        for suffix in (".luau", ".lua"):
            if rel.endswith(suffix):
                stem = rel[: -len(suffix)]
                for kind in (".server", ".client", ".plugin"):
                    if stem.endswith(kind):
                        stem = stem[: -len(kind)]
                return stem
        return None

    def _mapped(self, path: str) -> tuple[Instance, ...]:
        """The instances the project makes from the root-relative ``path`` (a module file
        or a directory)."""
        project = self.project
        out: list[Instance] = []
        for suffix in (".luau", ".lua", "/init.luau", "/init.lua"):
            out.extend(project.instances_for_file(path + suffix))
        if not out:
            for node in (project.root, *project.root.descendants()):
                if node.dir_path == path:
                    out.append(node)
                    break
        return tuple(dict.fromkeys(out))

    def _require_nodes(self, nodes: tuple[Instance, ...], parts, origin: int, text: str) -> Value:
        value = _nodes_value(nodes)
        for name, offset in parts:
            if name == "..":
                parents = tuple(n.parent for n in value.nodes if n.parent is not None)
                if len(parents) != len(value.nodes) or not parents:
                    return UNKNOWN
                value = _nodes_value(tuple(dict.fromkeys(parents)))
                continue
            before = len(self.misses)
            value = self._child(value, name, origin + offset, origin + offset + len(name), "require", via_lookup=True)
            if len(self.misses) > before:
                miss = self.misses[-1]
                self.misses[-1] = Miss(miss.kind, miss.parents, miss.name, miss.start, miss.end, "require",
                                       lookup="require", verdict=miss.verdict, path=text)
                return UNKNOWN
            if not value.nodes:
                return UNKNOWN
        return UNKNOWN  # (a module's value is what it returns, not an instance)

    def _require_files(self, frameworks, directory: str, parts, origin: int, text: str) -> Value:
        """Navigate a require through the files on disk (a file the project does not map).
        A component missing there is a warning: a folder a build or an install makes (Wally's
        ``Packages``, a code generator's output) may not be in the checkout."""
        cur = directory
        for name, offset in parts:
            if name == "..":
                if not cur or cur == ".":
                    return UNKNOWN  # leaves the project root: not read
                cur = _parent_dir(cur)
                continue
            nxt = frameworks.file_child(cur, name)
            if nxt is None and frameworks.file_named(cur, name):
                return UNKNOWN  # a file named with its suffix (a data module, a bundler's input)
            if nxt is None:
                if not frameworks.is_dir(cur):
                    return UNKNOWN
                self.misses.append(Miss("module", (), name, origin + offset, origin + offset + len(name), "require",
                                        lookup="require", candidates=tuple(frameworks.dir_entries(cur)),
                                        owner=cur or ".", path=text))
                return UNKNOWN
            cur = posixpath.normpath(nxt)
        return UNKNOWN

    # -- child steps ---------------------------------------------------------------------
    def _child(self, base: Value, name: str, start: int, end: int, form: str, *, dot_start: int = -1, lookup: str = "", via_lookup: bool = False) -> Value:
        """Step from ``base`` to its child ``name`` (see the module docstring for the rules)."""
        project = self.project
        api = project.api
        judge = self.judge
        found: list[Instance] = []
        exists = False  # a member, or a child that exists without a node
        member_value: Value | None = None
        missing: list[Verdict] = []
        for node in base.nodes:
            if not via_lookup:
                # Members win over children on a live Instance.
                if name == "Parent":
                    if node.parent is None:
                        exists = True
                    elif id(node) in self.templates:
                        found.append(self.places.clone_site(node))  # a template: its parent is not this one
                    else:
                        found.append(node.parent)
                    continue
                if name == "LocalPlayer" and node.class_name == "Players":
                    found.append(project.local_player())
                    continue
                if node.class_guessed or not api.has_class(node.class_name):
                    if name in api.member_names():
                        exists = True  # any class's member: the class is not known
                        continue
                else:
                    member = api.member(node.class_name, name)
                    if member is not None and scriptable(member):
                        exists = True
                        member_value = self._member_value(member, base)
                        continue
            v = judge.verdict(node, name)
            if v.node is not None:
                found.append(v.node)
            elif v.exists:
                exists = True
            else:
                missing.append(v)
        if found and not exists and not missing:
            return _nodes_value(tuple(dict.fromkeys(found)))
        if found or exists:
            return member_value if member_value is not None and not found else UNKNOWN
        if not missing:
            return UNKNOWN
        verdict = weakest(missing)
        cls = base.class_name
        certain_class = not via_lookup and cls is not None and not any(n.class_guessed for n in base.nodes)
        if verdict.kind == POSSIBLE and verdict.supported and certain_class and not self.judge.mentioned(name):
            # possible where nothing is known of the place (no project, a library's DataModel),
            # but a near miss of a member no script names: the member is more likely meant
            members, score = near_member(name, api, cls, False, False)
            if score >= MEMBER_TYPO_SCORE:
                why = f"{verdict.evidence}; '{name}' is no member of {cls}, so it reads a child"
                self.misses.append(Miss("open_child", base.nodes, name, start, end, form, dot_start=dot_start,
                                        verdict=Verdict(POSSIBLE, why, supported=False), owner=cls,
                                        member_hint=tuple(c for c, _ in rank(name, members, limit=3))))
                return UNKNOWN
        if verdict.kind == POSSIBLE and verdict.supported:
            # a child the place may hold and the project backs: follow the path through it
            parent = base.nodes[0]
            child = self.places.possible_child(parent, name, f"'{name}' may exist in the place under {parent.path}")
            return Value((child,), "Instance", bound=True, engine=True)  # (some Instance: its class is not known)
        if verdict.kind == NOTHING or verdict.speculative:
            if certain_class:
                # no child can have the name: a near miss of a member, closer than any child
                # (`workspace.CurrentCamra` where Workspace is closed), is a member miss
                members, score = near_member(name, api, cls, False, False)
                if score >= MEMBER_TYPO_SCORE:
                    children = [c.name for n in base.nodes for c in n.all_children()]
                    ranked_c = rank(name, children, limit=1)
                    if not ranked_c or ranked_c[0][1] < score:
                        self.misses.append(Miss("member", base.nodes, name, start, end, form, dot_start=dot_start,
                                                owner=cls, candidates=members))
                        return UNKNOWN
        if verdict.kind == NOTHING:
            self.misses.append(Miss("child", base.nodes, name, start, end, form, dot_start=dot_start, lookup=lookup,
                                    verdict=verdict))
            return UNKNOWN
        hint: tuple[str, ...] = ()
        if certain_class and verdict.kind == POSSIBLE:
            members, score = near_member(name, api, cls, False, False)
            if score >= MEMBER_TYPO_SCORE:
                hint = tuple(c for c, _ in rank(name, members, limit=3))
        self.misses.append(Miss("open_child", base.nodes, name, start, end, form, dot_start=dot_start, lookup=lookup,
                                verdict=verdict, member_hint=hint, owner=cls or ""))
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
        if self.judge.mentioned(name):
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
        if self.judge.mentioned(name):
            return UNKNOWN
        self.misses.append(Miss("child", base.nodes, name, start, end, "call", lookup="FindFirstAncestor", ancestor=True))
        return UNKNOWN


def _parent_dir(path: str) -> str:
    return posixpath.dirname(path)


#: files Rojo turns into modules (the instance is named without the suffix): a require may
#: name one with its suffix
_MODULE_FILE_SUFFIXES = (".luau", ".lua", ".jsonc", ".json", ".toml", ".yaml", ".yml")


def _is_init(rel: str | None) -> bool:
    """Is the file a folder's init script (``init.luau``; Rojo's ``init.server.luau`` and
    ``init.client.luau`` too): the module is the folder?"""
    base = posixpath.basename(rel or "")
    return base.startswith("init.") and base.endswith((".luau", ".lua")) and base.count(".") <= 2
