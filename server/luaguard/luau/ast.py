"""Typed syntax tree for Luau.

Every node is a slotted class with ``start``/``end`` (Python ``str`` offsets into the
source, half-open).  Node shapes follow the Luau grammar (luau-lang.org/grammar) and the
node set of Luau's ``Ast.h`` (luau-lang/luau), written independently: statements
(``Stat*``), expressions (``Expr*``), types (``Type*``) and type packs (``TypePack*``).

Names are resolved while parsing, as Luau's parser does: a name bound by ``local``, a
parameter or a loop becomes :class:`ExprLocal` pointing at its :class:`Local`; any other
name is :class:`ExprGlobal`.  Each :class:`Local` records where it is assigned after its
declaration (``assignments``, offsets), so a check can tell a constant alias
(``local RS = game:GetService("ReplicatedStorage")``) from a reassigned variable.

:func:`walk` visits a tree iteratively (no recursion limit), :func:`children` lists a
node's direct children.
"""

from __future__ import annotations

from typing import Iterator

#: The name the parser gives an identifier that is missing (``x.`` at the end of a line,
#: ``obj:(``), as Luau's parser does: a syntax error's recovery, never a name in the code,
#: so no check may judge it.
ERROR_NAME = "%error-id%"


class Node:
    """Base of every node.  ``_fields`` names the attributes holding child nodes."""

    __slots__ = ("start", "end")
    _fields: tuple[str, ...] = ()

    def __repr__(self) -> str:
        names = [n for cls in type(self).__mro__ for n in getattr(cls, "__slots__", ())]
        inner = ", ".join(f"{n}={getattr(self, n, None)!r}" for n in names if n not in ("start", "end"))
        return f"{type(self).__name__}({inner})"


class Local:
    """A local variable binding (``local x``, a parameter, a loop variable, ``self``).

    ``start``/``end`` locate the binding name; ``annotation`` is its type annotation;
    ``function_depth`` counts enclosing functions (0 = main chunk); ``shadow`` is the
    binding of the same name it hides; ``assignments`` are the start offsets of the
    :class:`StatAssign` / :class:`StatCompoundAssign` statements that later assign to it
    (offsets, not nodes, so the tree has no reference cycles and is freed by reference
    counting); ``value`` is the expression it was initialised with (``None`` when it
    has none, is a parameter, or is a ``local function``).
    """

    __slots__ = ("name", "start", "end", "annotation", "is_const", "function_depth", "shadow", "assignments", "value", "kind")

    def __init__(self, name: str, start: int, end: int, annotation=None, is_const: bool = False, function_depth: int = 0, shadow=None, kind: str = "local") -> None:
        self.name = name
        self.start = start
        self.end = end
        self.annotation = annotation
        self.is_const = is_const
        self.function_depth = function_depth
        self.shadow = shadow
        self.assignments: list[int] = []
        self.value = None
        self.kind = kind  # "local" | "param" | "for" | "self" | "function"

    def __repr__(self) -> str:
        return f"Local({self.name!r}@{self.start})"


# ---------------------------------------------------------------------------- expressions
class Expr(Node):
    __slots__ = ()


class ExprNil(Expr):
    __slots__ = ()

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


class ExprBool(Expr):
    __slots__ = ("value",)

    def __init__(self, start: int, end: int, value: bool) -> None:
        self.start, self.end, self.value = start, end, value


class ExprNumber(Expr):
    """``text`` is the literal as written (``0x1F``, ``1_000``, ``1e-3``, ``10i``)."""

    __slots__ = ("text",)

    def __init__(self, start: int, end: int, text: str) -> None:
        self.start, self.end, self.text = start, end, text


class ExprString(Expr):
    """A string literal; ``value`` is its decoded content (``None`` if an escape is
    malformed); ``quote`` is ``'"'``, ``"'"``, ``"["`` (long) or ``"`"``."""

    __slots__ = ("value", "quote")

    def __init__(self, start: int, end: int, value: str | None, quote: str) -> None:
        self.start, self.end, self.value, self.quote = start, end, value, quote


class ExprVarargs(Expr):
    __slots__ = ()

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


class ExprLocal(Expr):
    """A read of a local; ``upvalue`` when the local belongs to an enclosing function."""

    __slots__ = ("local", "upvalue")

    def __init__(self, start: int, end: int, local: Local, upvalue: bool) -> None:
        self.start, self.end, self.local, self.upvalue = start, end, local, upvalue

    @property
    def name(self) -> str:
        return self.local.name


class ExprGlobal(Expr):
    __slots__ = ("name",)

    def __init__(self, start: int, end: int, name: str) -> None:
        self.start, self.end, self.name = start, end, name


class ExprIndexName(Expr):
    """``obj.name`` (``op == "."``) or the callee of a method call ``obj:name`` (``":"``);
    ``name_start``/``name_end`` locate the name."""

    __slots__ = ("obj", "name", "name_start", "name_end", "op")
    _fields = ("obj",)

    def __init__(self, start: int, end: int, obj: Expr, name: str, name_start: int, name_end: int, op: str) -> None:
        self.start, self.end = start, end
        self.obj, self.name, self.name_start, self.name_end, self.op = obj, name, name_start, name_end, op


class ExprIndexExpr(Expr):
    """``obj[index]``."""

    __slots__ = ("obj", "index")
    _fields = ("obj", "index")

    def __init__(self, start: int, end: int, obj: Expr, index: Expr) -> None:
        self.start, self.end, self.obj, self.index = start, end, obj, index


class ExprCall(Expr):
    """``func(args)``; for a method call ``func`` is an :class:`ExprIndexName` with
    ``op == ":"`` and ``is_method`` is true.  ``type_args`` holds explicit type
    instantiation ``f<<T>>(x)`` when present."""

    __slots__ = ("func", "args", "is_method", "args_start", "args_end", "type_args")
    _fields = ("func", "args", "type_args")

    def __init__(self, start: int, end: int, func: Expr, args: list, is_method: bool, args_start: int, args_end: int) -> None:
        self.start, self.end = start, end
        self.func, self.args, self.is_method = func, args, is_method
        self.args_start, self.args_end = args_start, args_end
        self.type_args: list = []

    @property
    def method(self) -> str | None:
        """The method name of ``obj:Name(...)``, else ``None``."""
        return self.func.name if self.is_method and isinstance(self.func, ExprIndexName) else None


class Attribute(Node):
    """``@native`` / ``@[checked, deprecated{...}]``."""

    __slots__ = ("name", "args")
    _fields = ("args",)

    def __init__(self, start: int, end: int, name: str, args: list) -> None:
        self.start, self.end, self.name, self.args = start, end, name, args


class GenericType(Node):
    """A generic parameter ``T`` (``pack`` for ``T...``) with an optional default."""

    __slots__ = ("name", "pack", "default")
    _fields = ("default",)

    def __init__(self, start: int, end: int, name: str, pack: bool, default=None) -> None:
        self.start, self.end, self.name, self.pack, self.default = start, end, name, pack, default


class ExprFunction(Expr):
    """A function body: ``params`` are :class:`Local` s, ``self_local`` is set for
    ``function a:b()``; ``vararg`` when it takes ``...``; ``name`` is a debug name."""

    __slots__ = ("attributes", "generics", "self_local", "params", "vararg", "vararg_annotation", "return_type", "body", "name", "function_depth", "own_local")
    _fields = ("attributes", "generics", "vararg_annotation", "return_type", "body")

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end
        self.attributes: list = []
        self.generics: list = []
        self.self_local: Local | None = None
        self.params: list[Local] = []
        self.vararg = False
        self.vararg_annotation = None
        self.return_type = None
        self.body: Block | None = None
        self.name = ""
        self.function_depth = 0
        self.own_local: Local | None = None  # the local a `local function` binds


class TableItem(Node):
    """One table constructor field: ``kind`` is ``"list"`` (``v``), ``"record"``
    (``name = v``; ``key`` is an :class:`ExprString`) or ``"general"`` (``[k] = v``)."""

    __slots__ = ("kind", "key", "value")
    _fields = ("key", "value")

    def __init__(self, start: int, end: int, kind: str, key, value) -> None:
        self.start, self.end, self.kind, self.key, self.value = start, end, kind, key, value


class ExprTable(Expr):
    __slots__ = ("items",)
    _fields = ("items",)

    def __init__(self, start: int, end: int, items: list[TableItem]) -> None:
        self.start, self.end, self.items = start, end, items


class ExprUnary(Expr):
    """``op`` is ``"not"``, ``"-"`` or ``"#"``."""

    __slots__ = ("op", "operand")
    _fields = ("operand",)

    def __init__(self, start: int, end: int, op: str, operand: Expr) -> None:
        self.start, self.end, self.op, self.operand = start, end, op, operand


class ExprBinary(Expr):
    """``op`` is the operator text (``"+"``, ``".."``, ``"and"`` ...)."""

    __slots__ = ("op", "left", "right")
    _fields = ("left", "right")

    def __init__(self, start: int, end: int, op: str, left: Expr, right: Expr) -> None:
        self.start, self.end, self.op, self.left, self.right = start, end, op, left, right


class ExprGroup(Expr):
    """``(expr)`` (which also truncates a multi-value expression to one value)."""

    __slots__ = ("expr",)
    _fields = ("expr",)

    def __init__(self, start: int, end: int, expr: Expr) -> None:
        self.start, self.end, self.expr = start, end, expr


class ExprIfElse(Expr):
    """``if cond then a else b`` (an ``elseif`` chain nests in ``false_expr``)."""

    __slots__ = ("condition", "true_expr", "false_expr")
    _fields = ("condition", "true_expr", "false_expr")

    def __init__(self, start: int, end: int, condition: Expr, true_expr: Expr, false_expr: Expr) -> None:
        self.start, self.end = start, end
        self.condition, self.true_expr, self.false_expr = condition, true_expr, false_expr


class ExprInterpString(Expr):
    """`` `a {x} b` ``: ``strings`` has one more item than ``exprs``."""

    __slots__ = ("strings", "exprs")
    _fields = ("exprs",)

    def __init__(self, start: int, end: int, strings: list[str], exprs: list[Expr]) -> None:
        self.start, self.end, self.strings, self.exprs = start, end, strings, exprs


class ExprTypeAssertion(Expr):
    """``expr :: Type``."""

    __slots__ = ("expr", "annotation")
    _fields = ("expr", "annotation")

    def __init__(self, start: int, end: int, expr: Expr, annotation) -> None:
        self.start, self.end, self.expr, self.annotation = start, end, expr, annotation


class ExprInstantiate(Expr):
    """Explicit type instantiation ``f<<number>>``."""

    __slots__ = ("expr", "types")
    _fields = ("expr", "types")

    def __init__(self, start: int, end: int, expr: Expr, types: list) -> None:
        self.start, self.end, self.expr, self.types = start, end, expr, types


class ExprError(Expr):
    """Stands where an expression could not be parsed; keeps the pieces it did parse."""

    __slots__ = ("exprs",)
    _fields = ("exprs",)

    def __init__(self, start: int, end: int, exprs: list) -> None:
        self.start, self.end, self.exprs = start, end, exprs


# ----------------------------------------------------------------------------- statements
class Stat(Node):
    __slots__ = ()


class Block(Stat):
    __slots__ = ("body",)
    _fields = ("body",)

    def __init__(self, start: int, end: int, body: list[Stat]) -> None:
        self.start, self.end, self.body = start, end, body


class StatIf(Stat):
    """``else_body`` is a :class:`Block`, a nested :class:`StatIf` (``elseif``) or ``None``."""

    __slots__ = ("condition", "then_body", "else_body")
    _fields = ("condition", "then_body", "else_body")

    def __init__(self, start: int, end: int, condition: Expr, then_body: Block, else_body) -> None:
        self.start, self.end = start, end
        self.condition, self.then_body, self.else_body = condition, then_body, else_body


class StatWhile(Stat):
    __slots__ = ("condition", "body")
    _fields = ("condition", "body")

    def __init__(self, start: int, end: int, condition: Expr, body: Block) -> None:
        self.start, self.end, self.condition, self.body = start, end, condition, body


class StatRepeat(Stat):
    __slots__ = ("body", "condition")
    _fields = ("body", "condition")

    def __init__(self, start: int, end: int, body: Block, condition: Expr) -> None:
        self.start, self.end, self.body, self.condition = start, end, body, condition


class StatBreak(Stat):
    __slots__ = ()

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


class StatContinue(Stat):
    __slots__ = ()

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


class StatReturn(Stat):
    __slots__ = ("values",)
    _fields = ("values",)

    def __init__(self, start: int, end: int, values: list[Expr]) -> None:
        self.start, self.end, self.values = start, end, values


class StatExpr(Stat):
    """An expression statement (a call)."""

    __slots__ = ("expr",)
    _fields = ("expr",)

    def __init__(self, start: int, end: int, expr: Expr) -> None:
        self.start, self.end, self.expr = start, end, expr


class StatLocal(Stat):
    """``local a: T, b = x, y`` (``is_const`` for ``const``)."""

    __slots__ = ("vars", "values", "is_const", "attributes")
    _fields = ("values",)

    def __init__(self, start: int, end: int, vars: list[Local], values: list[Expr], is_const: bool = False) -> None:
        self.start, self.end, self.vars, self.values, self.is_const = start, end, vars, values, is_const
        self.attributes: list = []


class StatFor(Stat):
    """Numeric ``for var = from, to[, step] do body end``."""

    __slots__ = ("var", "from_", "to", "step", "body")
    _fields = ("from_", "to", "step", "body")

    def __init__(self, start: int, end: int, var: Local, from_: Expr, to: Expr, step, body: Block) -> None:
        self.start, self.end = start, end
        self.var, self.from_, self.to, self.step, self.body = var, from_, to, step, body


class StatForIn(Stat):
    """Generic ``for a, b in values do body end``."""

    __slots__ = ("vars", "values", "body")
    _fields = ("values", "body")

    def __init__(self, start: int, end: int, vars: list[Local], values: list[Expr], body: Block) -> None:
        self.start, self.end, self.vars, self.values, self.body = start, end, vars, values, body


class StatAssign(Stat):
    __slots__ = ("targets", "values")
    _fields = ("targets", "values")

    def __init__(self, start: int, end: int, targets: list[Expr], values: list[Expr]) -> None:
        self.start, self.end, self.targets, self.values = start, end, targets, values


class StatCompoundAssign(Stat):
    """``target op= value`` (``op`` without ``=``: ``"+"``, ``".."`` ...)."""

    __slots__ = ("op", "target", "value")
    _fields = ("target", "value")

    def __init__(self, start: int, end: int, op: str, target: Expr, value: Expr) -> None:
        self.start, self.end, self.op, self.target, self.value = start, end, op, target, value


class StatFunction(Stat):
    """``function a.b:c() end``: ``name`` is the target expression."""

    __slots__ = ("name", "func")
    _fields = ("name", "func")

    def __init__(self, start: int, end: int, name: Expr, func: ExprFunction) -> None:
        self.start, self.end, self.name, self.func = start, end, name, func


class StatLocalFunction(Stat):
    __slots__ = ("var", "func", "is_const")
    _fields = ("func",)

    def __init__(self, start: int, end: int, var: Local, func: ExprFunction, is_const: bool = False) -> None:
        self.start, self.end, self.var, self.func, self.is_const = start, end, var, func, is_const


class StatTypeAlias(Stat):
    """``[export] type Name<generics> = Type``."""

    __slots__ = ("name", "name_start", "generics", "type", "exported")
    _fields = ("generics", "type")

    def __init__(self, start: int, end: int, name: str, name_start: int, generics: list, type_, exported: bool) -> None:
        self.start, self.end = start, end
        self.name, self.name_start, self.generics, self.type, self.exported = name, name_start, generics, type_, exported


class StatTypeFunction(Stat):
    """``[export] type function Name(...) ... end``."""

    __slots__ = ("name", "func", "exported")
    _fields = ("func",)

    def __init__(self, start: int, end: int, name: str, func: ExprFunction, exported: bool) -> None:
        self.start, self.end, self.name, self.func, self.exported = start, end, name, func, exported


class StatDeclare(Stat):
    """A declaration of a definition file (``declare function``/``declare class``/
    ``declare name: T``), kept as parsed pieces."""

    __slots__ = ("name", "parts")
    _fields = ("parts",)

    def __init__(self, start: int, end: int, name: str, parts: list) -> None:
        self.start, self.end, self.name, self.parts = start, end, name, parts


class StatError(Stat):
    """Stands where a statement could not be parsed; keeps the parsed pieces."""

    __slots__ = ("exprs", "stats")
    _fields = ("exprs", "stats")

    def __init__(self, start: int, end: int, exprs: list, stats: list) -> None:
        self.start, self.end, self.exprs, self.stats = start, end, exprs, stats


# ---------------------------------------------------------------------------------- types
class Type(Node):
    __slots__ = ()


class TypeReference(Type):
    """``prefix.Name<params>``; ``prefix`` is ``None`` for a plain name."""

    __slots__ = ("prefix", "name", "params", "has_params")
    _fields = ("params",)

    def __init__(self, start: int, end: int, prefix: str | None, name: str, params: list, has_params: bool) -> None:
        self.start, self.end, self.prefix, self.name, self.params, self.has_params = start, end, prefix, name, params, has_params


class TableProp(Node):
    """``[read|write] name: Type`` in a table type (``access`` is ``""`` for both)."""

    __slots__ = ("name", "type", "access")
    _fields = ("type",)

    def __init__(self, start: int, end: int, name: str, type_, access: str) -> None:
        self.start, self.end, self.name, self.type, self.access = start, end, name, type_, access


class TableIndexer(Node):
    __slots__ = ("key", "value", "access")
    _fields = ("key", "value")

    def __init__(self, start: int, end: int, key, value, access: str) -> None:
        self.start, self.end, self.key, self.value, self.access = start, end, key, value, access


class TypeTable(Type):
    __slots__ = ("props", "indexer")
    _fields = ("props", "indexer")

    def __init__(self, start: int, end: int, props: list[TableProp], indexer) -> None:
        self.start, self.end, self.props, self.indexer = start, end, props, indexer


class TypeFunction(Type):
    """``<generics>(params) -> returns``; ``params`` and ``returns`` are type packs."""

    __slots__ = ("attributes", "generics", "params", "param_names", "returns")
    _fields = ("attributes", "generics", "params", "returns")

    def __init__(self, start: int, end: int, generics: list, params, param_names: list, returns) -> None:
        self.start, self.end = start, end
        self.attributes: list = []
        self.generics, self.params, self.param_names, self.returns = generics, params, param_names, returns


class TypeTypeof(Type):
    __slots__ = ("expr",)
    _fields = ("expr",)

    def __init__(self, start: int, end: int, expr: Expr) -> None:
        self.start, self.end, self.expr = start, end, expr


class TypeUnion(Type):
    __slots__ = ("types",)
    _fields = ("types",)

    def __init__(self, start: int, end: int, types: list) -> None:
        self.start, self.end, self.types = start, end, types


class TypeIntersection(Type):
    __slots__ = ("types",)
    _fields = ("types",)

    def __init__(self, start: int, end: int, types: list) -> None:
        self.start, self.end, self.types = start, end, types


class TypeOptional(Type):
    """The ``?`` of ``T?`` (a union member standing for ``nil``)."""

    __slots__ = ()

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


class TypeSingletonBool(Type):
    __slots__ = ("value",)

    def __init__(self, start: int, end: int, value: bool) -> None:
        self.start, self.end, self.value = start, end, value


class TypeSingletonString(Type):
    __slots__ = ("value",)

    def __init__(self, start: int, end: int, value: str | None) -> None:
        self.start, self.end, self.value = start, end, value


class TypeGroup(Type):
    __slots__ = ("type",)
    _fields = ("type",)

    def __init__(self, start: int, end: int, type_) -> None:
        self.start, self.end, self.type = start, end, type_


class TypeError_(Type):
    """Stands where a type could not be parsed."""

    __slots__ = ("types",)
    _fields = ("types",)

    def __init__(self, start: int, end: int, types: list) -> None:
        self.start, self.end, self.types = start, end, types


class TypePack(Node):
    __slots__ = ()


class TypePackExplicit(TypePack):
    """``(A, B, ...C)``: ``types`` and an optional variadic/generic ``tail``."""

    __slots__ = ("types", "tail")
    _fields = ("types", "tail")

    def __init__(self, start: int, end: int, types: list, tail) -> None:
        self.start, self.end, self.types, self.tail = start, end, types, tail


class TypePackVariadic(TypePack):
    """``...T``."""

    __slots__ = ("type",)
    _fields = ("type",)

    def __init__(self, start: int, end: int, type_) -> None:
        self.start, self.end, self.type = start, end, type_


class TypePackGeneric(TypePack):
    """``T...``."""

    __slots__ = ("name",)

    def __init__(self, start: int, end: int, name: str) -> None:
        self.start, self.end, self.name = start, end, name


# ----------------------------------------------------------------------------------- root
class ParseError:
    """A syntax error at ``[start, end)`` with a Luau-style message."""

    __slots__ = ("start", "end", "message")

    def __init__(self, start: int, end: int, message: str) -> None:
        self.start, self.end, self.message = start, end, message

    def __repr__(self) -> str:
        return f"ParseError({self.start}, {self.end}, {self.message!r})"


class Chunk:
    """The parse result: the main ``body``, syntax ``errors`` (in report order),
    ``hot_comments`` (``--!strict`` ...), globals assigned anywhere, and the facts
    collected while parsing (``lookups``, ``varargs``, ``if_expressions``,
    ``table_types`` ...)."""

    __slots__ = ("body", "errors", "hot_comments", "globals_assigned", "lookups", "varargs", "global_reads", "local_names",
                 "if_expressions", "table_types", "vararg_functions", "type_regions", "assigned", "type_names")

    def __init__(self, body: Block, errors: list[ParseError], hot_comments: list[str]) -> None:
        self.body = body
        self.errors = errors
        self.hot_comments = hot_comments
        self.globals_assigned: set[str] = set()
        #: Every ExprIndexName / ExprIndexExpr / ExprCall, collected while parsing so
        #: checks need not walk the tree to find them.
        self.lookups: list[Expr] = []
        #: ``(offset, declared)`` for every ``...`` expression: ``declared`` when the
        #: enclosing function declares ``...`` (the main chunk does not count).
        self.varargs: list[tuple[int, bool]] = []
        #: Reads (and plain assignment targets) of globals outside type functions.
        self.global_reads: list[ExprGlobal] = []
        #: Every name bound as a local somewhere in the file.
        self.local_names: set[str] = set()
        #: Offsets of the ``if`` tokens parsed as if-then-else *expressions* (no ``end``):
        #: the structure analysis takes this decision from here, not from the tokens.
        self.if_expressions: frozenset[int] = frozenset()
        #: ``(start, end)`` of every table type ``{ ... }`` (in a type annotation, alias or
        #: assertion), sorted by start.
        self.table_types: list[tuple[int, int]] = []
        #: offsets of the ``function`` tokens of functions that declare ``...``
        self.vararg_functions: frozenset[int] = frozenset()
        #: ``(start, end)`` of the stretches a reader must take as a whole to know it reads a
        #: type: every annotation (from its ``:`` or ``::``), type alias and function header
        #: (from ``function`` to its return type), sorted by start
        self.type_regions: list[tuple[int, int]] = []
        #: ``id()`` of every index expression assigned to (``part.Anchored = true``,
        #: ``x.Size += 1``): Roblox sets a property there, never reads a child
        self.assigned: set[int] = set()
        #: names of the type aliases and type functions the file declares (they hide Roblox
        #: class names: ``type Object = {...}``)
        self.type_names: set[str] = set()


def children(node: Node) -> Iterator[Node]:
    """Direct child nodes of ``node`` in source order (lists flattened, ``None`` skipped)."""
    for name in _field_names(type(node)):
        value = getattr(node, name, None)
        if value is None:
            continue
        if isinstance(value, list):
            for item in value:
                if isinstance(item, Node):
                    yield item
        elif isinstance(value, Node):
            yield value


_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_CACHE.get(cls)
    if names is None:
        names = _FIELD_CACHE[cls] = cls._fields
    return names


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree rooted at ``node``, parents before children, in source
    order.  Iterative, so arbitrarily deep trees are fine."""
    stack = [node]
    pop, extend = stack.pop, stack.extend
    while stack:
        n = pop()
        yield n
        kids = list(children(n))
        kids.reverse()
        extend(kids)
