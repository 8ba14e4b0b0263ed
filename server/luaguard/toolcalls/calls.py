"""Per-call checks: tool name, confidence, argument schema, then the roles' semantics.

Order for one :class:`~.model.CallRecord` (each step adds :class:`~.model.Problem` s):

1. reader problems (invalid JSON, unknown shape) end the check;
2. ``low_confidence``: a ``confidence`` below ``min_confidence`` (and ``invalid_argument``
   for a confidence that is not a number in [0, 1]);
3. ``unknown_tool`` with suggestions (alias map first, then fuzzy over the tool names);
4. nesting depth (more than :data:`MAX_DEPTH` levels is one ``invalid_argument``, and
   nothing deeper is looked at: no recursion on hostile input);
5. ``missing_field`` for every required field that is absent, ``null`` or an empty /
   blank string; ``invalid_argument`` for the other JSON Schema errors (``jsonschema``),
   unexpected fields with a "did you mean" among the tool's fields;
6. roles (see :mod:`.schemas`), on fields that passed the schema: paths
   (``unknown_path``/``path_outside_project``), ``unknown_class``, name collisions,
   ``unknown_property``, ``wrong_property_type``, and the Luau content run through every
   code check of the engine as the target script in patch mode (findings keep their rule
   ids: ``placeholder``, ``syntax_error``, ``unknown_instance`` ...);
7. the tool's effect on the batch's :class:`~.overlay.Overlay` (create / delete), so
   later calls of the same sequence or plan see it.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from typing import Any

from ..checks.unknown_class import ranked_classes
from ..findings import Severity
from ..fuzzy import rank
from ..project.rojo import OPEN_DEFAULT_IGNORE
from ..project.tree import Instance
from ..rules.wording import did_you_mean
from . import model as M
from .model import CallRecord, CallResult, Problem
from .overlay import CLASS_SUFFIX, DirMap, Overlay
from .paths import (
    PathError,
    PathRef,
    children_listing,
    display,
    file_rel,
    is_script,
    parse_path,
    scripts_under,
)
from .schemas import SCRIPT_CLASSES, ToolSet, ToolSpec
from .values import check_value

#: Arguments nested deeper than this are rejected without being walked further.
MAX_DEPTH = 64
#: At most this many schema errors are reported per call.
MAX_SCHEMA_ERRORS = 20


@dataclass
class NameIndex:
    """Instance name -> nodes over the whole tree (for "it exists elsewhere" hints);
    rebuilt when the tree is replaced."""

    _map: dict[str, list[Instance]] = field(default_factory=dict)
    _key: tuple | None = None

    def get(self, index, name: str) -> list[Instance]:
        key = (id(index.root), len(index.file_instances))
        if self._key != key:
            m: dict[str, list[Instance]] = {}
            for node in index.root.descendants():
                m.setdefault(node.name, []).append(node)
            self._map, self._key = m, key
        return self._map.get(name, [])


@dataclass
class CallContext:
    """What the checks of one batch share.

    ``project`` is the engine's index (``None`` without a project: path checks are then
    skipped); ``overlay`` is created on first need and lives for the batch.
    """

    engine: Any
    toolset: ToolSet
    project: Any
    min_confidence: float = 0.7
    max_content_bytes: int = 512 * 1024
    dirmap: DirMap = field(default_factory=DirMap)
    names: NameIndex = field(default_factory=NameIndex)
    overlay: Overlay | None = None
    #: instance paths and files deleted earlier in the batch -> who deleted them
    deleted: dict[str, str] = field(default_factory=dict)
    #: how the current call is named in messages ("step 'b'", "call 2")
    label: str = ""
    #: True: a call's effects go to ``CallResult.effects`` for the caller to apply with
    #: :func:`apply_effects` (an MCP proxy, once the upstream carried the call out)
    defer_effects: bool = False

    @property
    def root(self) -> str | None:
        return os.fspath(self.project.root_dir) if self.project is not None else None

    def ensure_overlay(self) -> Overlay:
        if self.overlay is None:
            self.overlay = Overlay(self.project, self.dirmap)
        return self.overlay

    @property
    def index(self):
        """The index lookups go through: the overlay's view once it changed, else the project."""
        if self.overlay is not None and self.overlay.changed:
            return self.overlay.view
        return self.project


@dataclass
class _Target:
    """A resolved script target: the instance(s) and the root-relative file, if any."""

    node: Instance | None = None
    rel: str | None = None
    display: str = ""


@dataclass(slots=True)
class Effect:
    """What one call does to the instance tree (see :mod:`.schemas`, effects).

    ``kind``: ``create`` (``name``/``class_name`` under ``parent``, then ``children``: nested
    ``(name, class, children)`` tuples), ``delete`` / ``rename`` (to ``name``) / ``move``
    (under ``parent``) / ``copy`` (under ``parent``) of ``node``, ``source`` (``node``'s
    script source becomes ``text``), ``forget_source`` (it changed in a way not modelled),
    ``open`` (``node`` may now have children luaguard cannot name; ``name`` says why)."""

    kind: str
    node: Instance | None = None
    parent: Instance | None = None
    name: str = ""
    class_name: str = "Instance"
    guessed: bool = False
    children: tuple = ()
    text: str | None = None
    label: str = ""


def apply_effects(ctx: CallContext, effects: list[Effect]) -> None:
    """Apply ``effects`` to the batch's overlay (created on first need)."""
    for e in effects:
        ov = ctx.ensure_overlay()
        if e.kind == "create" and e.parent is not None:
            node = ov.create(ov.current(e.parent), e.name, e.class_name)
            node.class_guessed = e.guessed
            _create_children(ov, node, e.children)
        elif e.kind == "delete" and e.node is not None:
            node = e.node
            ctx.deleted[display(node)] = e.label
            for n in (node, *node.descendants()):
                for fp in n.file_paths:
                    ctx.deleted[fp] = e.label
            ov.delete(node)
        elif e.kind == "rename" and e.node is not None and ov.is_live(e.node):
            ov.rename(e.node, e.name)
        elif e.kind == "move" and e.node is not None and e.parent is not None and ov.is_live(e.node):
            ov.move(e.node, ov.current(e.parent))
        elif e.kind == "copy" and e.node is not None and e.parent is not None:
            ov.copy(e.node, ov.current(e.parent))
        elif e.kind == "source" and e.node is not None and e.text is not None:
            ov.set_source(e.node, e.text)
        elif e.kind == "forget_source" and e.node is not None:
            ov.set_source(e.node, None)
        elif e.kind == "open" and e.node is not None and ov.is_live(e.node):
            w = ov.writable(e.node)
            w.open_reason = w.open_reason or e.name
            ov.changed = True


def _create_children(ov: Overlay, parent: Instance, specs: tuple, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        return
    for name, cls, kids in specs:
        node = ov.create(parent, name, cls)
        _create_children(ov, node, kids, depth + 1)


# --------------------------------------------------------------------------------------------
def check_call(ctx: CallContext, rec: CallRecord) -> CallResult:
    """Check one call (and apply its effect to ``ctx.overlay``); never raises on input."""
    name = rec.name if isinstance(rec.name, str) else None
    result = CallResult(rec, name)
    if rec.problems:
        result.errors.extend(rec.problems)
        return result
    problems: list[Problem] = []
    _check_confidence(ctx, rec, problems)
    spec = ctx.toolset.get(name) if name is not None else None
    if spec is None:
        problems.append(_unknown_tool(ctx.toolset, name or ""))
        _split(result, problems)
        return result
    result.tool = spec.name
    args = rec.arguments if isinstance(rec.arguments, dict) else {}
    deep = _too_deep(args)
    if deep is not None:
        problems.append(Problem(M.INVALID_ARGUMENT, f"The arguments are nested more than {MAX_DEPTH} levels deep "
                                                    f"(at '{deep}'); send flat values.", field=deep.split(".")[0]))
        _split(result, problems)
        return result
    bad = _check_schema(spec, args, problems)
    effects = _check_roles(ctx, spec, args, bad, problems)
    _split(result, problems)
    for e in effects:
        e.label = ctx.label
    if ctx.defer_effects:
        result.effects = effects
    else:
        apply_effects(ctx, effects)
    return result


def _split(result: CallResult, problems: list[Problem]) -> None:
    for p in problems:
        (result.errors if p.severity is Severity.ERROR else result.warnings).append(p)


def _check_confidence(ctx: CallContext, rec: CallRecord, problems: list[Problem]) -> None:
    c = rec.confidence
    if c is None:
        return
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not (0.0 <= float(c) <= 1.0):
        problems.append(Problem(M.INVALID_ARGUMENT, f"'confidence' must be a number from 0 to 1, got {c!r}.",
                                field="confidence"))
        return
    if float(c) < ctx.min_confidence:
        problems.append(Problem(M.LOW_CONFIDENCE,
                                f"The call's confidence {float(c):g} is below the required {ctx.min_confidence:g}. "
                                f"Check the project first (read_script, get_project_structure) and call again "
                                f"only when you are sure.", field="confidence"))


def _unknown_tool(toolset: ToolSet, name: str) -> Problem:
    sugg: list[str] = []
    alias = toolset.aliases.get(name) or toolset.aliases.get(name.lower())
    if alias:
        sugg.append(alias)
    if name:
        sugg += [c for c, _ in rank(name, list(toolset.tools), limit=3) if c not in sugg]
        if not sugg:  # "list_project_files" ~ alias "list_files"
            sugg += [toolset.aliases[a] for a, _ in rank(name, list(toolset.aliases), limit=2)
                     if toolset.aliases[a] not in sugg]
    available = ", ".join(sorted(toolset.tools)[:20])
    msg = f"There is no tool named '{name}'." if name else "The call has an empty tool name."
    msg += did_you_mean(sugg, none="", lead=" ")
    return Problem(M.UNKNOWN_TOOL, msg, field="name", suggestions=tuple(sugg[:5]), hint=f"Available tools: {available}.")


def _too_deep(args: dict) -> str | None:
    stack: list[tuple[Any, int, str]] = [(v, 1, str(k)) for k, v in args.items()]
    while stack:
        value, depth, where = stack.pop()
        if depth > MAX_DEPTH:
            return where
        if isinstance(value, dict):
            stack.extend((v, depth + 1, where if depth > 3 else f"{where}.{k}") for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, depth + 1, where if depth > 3 else f"{where}[{i}]") for i, v in enumerate(value))
    return None


# -- schema ---------------------------------------------------------------------------------
def _norm(s: str) -> str:
    return s.replace("_", "").replace("-", "").lower()


def _field_suggestions(extra: str, candidates: list[str]) -> list[str]:
    n = _norm(extra)
    exact = [c for c in candidates if _norm(c) == n]
    if exact:
        return exact
    contained = [c for c in candidates if _norm(c) and (_norm(c) in n or n in _norm(c))]
    return contained + [c for c, _ in rank(extra, candidates, limit=3) if c not in contained]


def _type_words(t: Any) -> str:
    words = {"string": "a string", "number": "a number", "integer": "an integer", "boolean": "a boolean",
             "object": "an object", "array": "an array", "null": "null"}
    if isinstance(t, list):
        return " or ".join(words.get(x, str(x)) for x in t)
    return words.get(t, str(t))


def _got(v: Any) -> str:
    from .values import _describe

    return _describe(v)


def _check_schema(spec: ToolSpec, args: dict, problems: list[Problem]) -> set[str]:
    """Report missing fields and schema errors; return the top-level fields that are bad."""
    bad: set[str] = set()
    for req in spec.required:
        v = args.get(req, None)
        if req not in args or v is None:
            problems.append(Problem(M.MISSING_FIELD, f"Required field '{req}' is missing.", field=req,
                                    hint=_field_doc(spec, req)))
            bad.add(req)
        elif isinstance(v, str) and not v.strip():
            problems.append(Problem(M.MISSING_FIELD, f"Required field '{req}' is empty.", field=req,
                                    hint=_field_doc(spec, req)))
            bad.add(req)
    props = list(spec.properties)
    missing = [r for r in spec.required if r in bad]
    try:
        errors = sorted(spec.validator.iter_errors(args), key=lambda e: (list(map(str, e.path)), e.validator))
    except RecursionError:
        problems.append(Problem(M.INVALID_ARGUMENT, "The arguments are too deeply nested for the tool's schema."))
        return bad | set(args)
    count = 0
    for err in errors:
        path = [str(p) for p in err.path]
        top = path[0] if path else None
        if top in bad:
            continue
        if err.validator == "required" and not path:
            continue  # reported above, one per field
        if count >= MAX_SCHEMA_ERRORS:
            problems.append(Problem(M.INVALID_ARGUMENT, "Further schema errors were not listed."))
            break
        count += 1
        where = ".".join(path) if path else None
        if err.validator == "additionalProperties" and not path:
            allowed = set(props)
            for extra in sorted(k for k in args if k not in allowed):
                sugg = _field_suggestions(extra, missing or props)
                msg = f"Unexpected field '{extra}'."
                msg += did_you_mean(sugg, none="", lead=" ")
                problems.append(Problem(M.INVALID_ARGUMENT, msg, field=extra, suggestions=tuple(sugg[:3]),
                                        hint=f"{spec.name} takes: {', '.join(props) or 'no arguments'}."))
                bad.add(extra)
                for p in problems:
                    if p.code == M.MISSING_FIELD and sugg and p.field == sugg[0] and not p.suggestions:
                        p.message += f" You sent '{extra}' instead: rename it to '{p.field}'."
            continue
        if top is not None:
            bad.add(top)
        if err.validator == "required":
            missing_nested = [r for r in err.validator_value if isinstance(err.instance, dict) and r not in err.instance]
            for r in missing_nested:
                problems.append(Problem(M.MISSING_FIELD, f"Required field '{where}.{r}' is missing.", field=f"{where}.{r}"))
            continue
        if err.validator == "type":
            msg = f"Field '{where}' must be {_type_words(err.validator_value)}, got {_got(err.instance)}."
        elif err.validator == "enum":
            options = [str(o) for o in err.validator_value][:12]
            sugg = [c for c, _ in rank(str(err.instance), options, limit=3)] if isinstance(err.instance, str) else []
            msg = f"Field '{where}' must be one of {', '.join(options)}; got {_got(err.instance)}."
            problems.append(Problem(M.INVALID_ARGUMENT, msg, field=where, suggestions=tuple(sugg)))
            continue
        else:
            text = err.message if len(err.message) <= 200 else err.message[:197] + "..."
            msg = f"Field '{where}': {text}." if where else f"The arguments do not match the tool's schema: {text}."
        problems.append(Problem(M.INVALID_ARGUMENT, msg, field=where))
    return bad


def _field_doc(spec: ToolSpec, name: str) -> str | None:
    props = spec.schema.get("properties") or {}
    p = props.get(name) if isinstance(props, dict) else None
    desc = p.get("description") if isinstance(p, dict) else None
    return f"'{name}': {desc}." if isinstance(desc, str) and desc else None


# -- roles ----------------------------------------------------------------------------------
def _check_roles(ctx: CallContext, spec: ToolSpec, args: dict, bad: set[str], problems: list[Problem]) -> list[Effect]:
    """Check the roles' semantics; returns the call's effects (not applied)."""
    roles = {f: r for f, r in spec.roles.items() if f in args and f not in bad}
    project = ctx.project
    api = project.api if project is not None else _api()
    target: _Target | None = None
    instance: Instance | None = None
    instance_ok = False
    parent: Instance | None = None

    for fname, role in roles.items():
        value = args[fname]
        if role in ("script_path", "new_script_path", "instance_path", "parent_path", "path", "class_name",
                    "known_class", "instance_name", "property", "script_class", "new_name") and not isinstance(value, str):
            problems.append(Problem(M.INVALID_ARGUMENT, f"Field '{fname}' must be a string, got {_got(value)}.", field=fname))
            bad.add(fname)
    roles = {f: r for f, r in roles.items() if f not in bad}

    # paths first: later roles need the nodes
    for fname, role in roles.items():
        value = args[fname]
        if role == "path":
            try:
                parse_path(value, ctx.root, api.services)
            except PathError as exc:
                problems.append(Problem(exc.code, str(exc), field=fname))
        elif project is None:
            continue
        elif role == "script_path":
            target = _resolve_script(ctx, value, fname, problems)
        elif role == "instance_path":
            instance, instance_ok = _resolve_instance(ctx, value, fname, problems, what="instance")
        elif role == "parent_path":
            parent, _ = _resolve_instance(ctx, value, fname, problems, what="parent")
    for fname, role in roles.items():
        if role == "new_script_path" and project is not None:
            cls_field = spec.field_for("script_class")
            cls = args.get(cls_field) if cls_field and cls_field not in bad else None
            target = _create_script(ctx, args[fname], fname, cls if cls in SCRIPT_CLASSES else None, problems)

    # classes, names, properties
    cls_value: str | None = None
    for fname, role in roles.items():
        value = args[fname]
        if role in ("class_name", "known_class"):
            if _check_class(api, value, fname, creatable=(role == "class_name"), problems=problems):
                cls_value = value
            else:
                cls_value = value if api.has_class(value) else None
        elif role == "instance_name" and parent is not None and spec.unique_names:
            existing = parent.child(value)
            if existing is not None and (ctx.overlay is None or ctx.overlay.is_live(existing)):
                problems.append(Problem(
                    M.INVALID_ARGUMENT,
                    f"{display(parent)} already has a child named '{value}' ({existing.class_name}). "
                    f"Pick another name, or modify the existing instance.", field=fname,
                    hint=f"Children of {display(parent)}: {children_listing(parent)}."))
                bad.add(fname)
    prop_field = next((f for f, r in roles.items() if r == "property"), None)
    value_field = next((f for f, r in spec.roles.items() if r == "property_value"), None)
    if prop_field is not None and instance is not None and instance_ok:
        ptype = _check_property(api, instance, args[prop_field], prop_field, problems)
        if ptype is not None and value_field is not None and value_field in args and value_field not in bad:
            vp = check_value(api, ptype, args[value_field], lambda p: _lookup_instance(ctx, p))
            if vp is not None:
                problems.append(Problem(
                    vp.code, f"The value for {instance.class_name}.{args[prop_field]} does not fit: {vp.message}.",
                    field=value_field, suggestions=vp.suggestions))

    # property maps, lists of new instances, instance trees
    created: list[tuple[Instance, str, str, tuple]] = []
    for fname, role in roles.items():
        value = args[fname]
        if role == "properties":
            cls = cls_value if cls_value is not None else (instance.class_name if instance is not None and instance_ok
                                                           and not instance.class_guessed else None)
            _check_property_map(ctx, api, cls, value, fname, problems)
        elif role == "object_list":
            created += _check_object_list(ctx, api, value, fname, problems)
        elif role == "instance_tree":
            tree = _check_instance_tree(ctx, api, value, fname, problems, depth=0)
            if tree is not None and parent is not None:
                created.append((parent, *tree))

    # Luau content
    source: str | None = None
    for fname, role in roles.items():
        if role == "luau":
            replaces = target is not None and any(r == "script_path" for r in roles.values())
            if _check_content(ctx, args[fname], fname, target, problems, replaces=replaces) and replaces:
                source = args[fname]
    edit = {r: f for f, r in roles.items() if r in ("edit_old", "edit_new", "edit_line")}
    if "edit_new" in edit:
        source = _check_script_edit(ctx, target, args, edit, problems)

    # effects
    effects: list[Effect] = []
    if project is None:
        return effects
    if spec.effect == "create_instance" and parent is not None:
        name_field = spec.field_for("instance_name")
        cls_field = spec.field_for("class_name") or spec.field_for("known_class")
        name = args.get(name_field) if name_field else None
        cls = args.get(cls_field) if cls_field else None
        cls = cls if isinstance(cls, str) and cls.strip() else "Instance"
        if name_field not in bad:
            if not (isinstance(name, str) and name.strip()):
                name = cls  # Instance.new names an instance after its class
            effects.append(Effect("create", parent=parent, name=name, class_name=cls, guessed=cls_value is None))
    for p, name, cls, kids in created:
        effects.append(Effect("create", parent=p, name=name, class_name=cls, children=kids))
    node = target.node if target is not None else (instance if instance_ok else None)
    if spec.effect == "adds_children":
        where = parent if parent is not None else (instance.parent if instance is not None and instance_ok else None)
        if where is not None:
            effects.append(Effect("open", node=where, name=f"{spec.name} added instances here in this session"))
    if spec.effect == "delete" and node is not None:
        effects.append(Effect("delete", node=node))
    elif spec.effect in ("rename", "move", "clone") and instance is not None and instance_ok:
        if spec.effect == "rename":
            nf = spec.field_for("new_name")
            new = args.get(nf) if nf and nf not in bad else None
            if isinstance(new, str) and new.strip():
                effects.append(Effect("rename", node=instance, name=new))
        elif parent is not None:
            effects.append(Effect("move" if spec.effect == "move" else "copy", node=instance, parent=parent))
    if prop_field is not None and instance is not None and instance_ok and value_field in args:
        prop, val = args[prop_field], args.get(value_field)
        if prop == "Name" and isinstance(val, str) and val.strip():
            effects.append(Effect("rename", node=instance, name=val))
        elif prop == "Parent" and isinstance(val, str):
            dest = _lookup_instance(ctx, val)
            if dest is not None:
                effects.append(Effect("move", node=instance, parent=dest))
    if target is not None and target.node is not None:
        if source is not None:
            effects.append(Effect("source", node=target.node, text=source))
        elif spec.effect == "edit_source":
            effects.append(Effect("forget_source", node=target.node))
    return effects


def _api():
    from ..project.api import load_api

    return load_api()


# -- paths ----------------------------------------------------------------------------------
def _parse(ctx: CallContext, value: str, fname: str, problems: list[Problem]) -> PathRef | None:
    try:
        ref = parse_path(value, ctx.root, ctx.project.api.services)
    except PathError as exc:
        problems.append(Problem(exc.code, str(exc), field=fname))
        return None
    if ref.form != "file" and ("/" in value or "\\" in value):
        # Read as an instance path, but a harness may still use it as a file path: it
        # must not lead out of the root either (symlinked directories included).
        try:
            file_rel(value, ctx.root)
        except PathError as exc:
            if exc.code == "path_outside_project":
                problems.append(Problem(exc.code, str(exc), field=fname))
                return None
    return ref


def _lookup_instance(ctx: CallContext, text: str) -> Instance | None:
    try:
        ref = parse_path(text, ctx.root, ctx.project.api.services)
    except PathError:
        return None
    if ref.form == "file":
        found = _file_nodes(ctx, ref.text)
        return found[0] if found else None
    node, rest = ctx.index.resolve_partial(ref.text)
    return node if node is not None and not rest else None


def _file_nodes(ctx: CallContext, rel: str) -> list[Instance]:
    if ctx.overlay is not None:
        return ctx.overlay.instances_for_file(rel)
    return list(ctx.project.file_instances.get(rel, ()))


def _strict(ctx: CallContext, node: Instance) -> bool:
    """True when a missing child of ``node`` is certainly absent for a tool acting on the
    place in Studio (no script runs there yet): the project snapshot says the node is closed
    (:meth:`~luaguard.analysis.snapshot.Snapshot.open_reason`: a service the engine owns
    too), or it is open only by Rojo's default ``$ignoreUnknownInstances``."""
    reason = ctx.engine.snapshot.open_reason(node) if ctx.engine is not None else node.open_reason
    return reason is None or reason == OPEN_DEFAULT_IGNORE


def _linked(ctx: CallContext, node: Instance, name: str) -> bool:
    """Does a framework or package manager link ``name`` into ``node`` (the snapshot's
    verdict: Wally's packages before ``wally install``, Nevermore's loader links)?"""
    if ctx.engine is None:
        return False
    from ..analysis.verdict import FRAMEWORK

    return ctx.engine.snapshot.verdict(node, name).kind == FRAMEWORK


def _resolve_instance(ctx: CallContext, value: str, fname: str, problems: list[Problem], *,
                      what: str) -> tuple[Instance | None, bool]:
    """``(node, known)``: ``known`` is False when the path lies under an open node (a
    warning was added, the node returned is the deepest existing one)."""
    ref = _parse(ctx, value, fname, problems)
    if ref is None:
        return None, False
    if ref.form == "file":
        nodes = _file_nodes(ctx, ref.text)
        if nodes:
            return nodes[0], True
        problems.append(_unknown_file(ctx, ref, fname, want_script=False))
        return None, False
    node, rest = ctx.index.resolve_partial(ref.text)
    if node is not None and not rest:
        return node, True
    if node is not None and _linked(ctx, node, rest[0]):
        return None, False  # a package's link: its contents are not known here
    problem = _unknown_instance(ctx, ref, node, rest, fname, scripts=False)
    if node is not None and not _strict(ctx, node):
        problem.severity = Severity.WARNING
        problem.message += f" It may exist at run time ({node.open_reason}), so this is not an error."
        problems.append(problem)
        return None, False
    problems.append(problem)
    return None, False


def _resolve_script(ctx: CallContext, value: str, fname: str, problems: list[Problem]) -> _Target | None:
    ref = _parse(ctx, value, fname, problems)
    if ref is None:
        return None
    api = ctx.project.api
    if ref.form == "file":
        nodes = _file_nodes(ctx, ref.text)
        scripts = [n for n in nodes if is_script(api, n)]
        if scripts:
            return _Target(scripts[0], ref.text, ref.text)
        if nodes:
            problems.append(Problem(M.INVALID_ARGUMENT, f"'{ref.raw}' defines {display(nodes[0])} "
                                                        f"({nodes[0].class_name}), which is not a script.", field=fname))
            return None
        problems.append(_unknown_file(ctx, ref, fname, want_script=True))
        return None
    node, rest = ctx.index.resolve_partial(ref.text)
    if node is None or rest:
        problems.append(_unknown_instance(ctx, ref, node, rest, fname, scripts=True))
        return None
    if not is_script(api, node):
        names, total = scripts_under(api, node)
        hint = (f"Scripts under {display(node)}: {', '.join(names)}" + (f" … ({total} in all)" if total > len(names) else "") + "."
                if names else None)
        problems.append(Problem(M.INVALID_ARGUMENT, f"'{ref.raw}' is a {node.class_name}, not a script.", field=fname,
                                suggestions=tuple(f"{display(node)}.{n}" for n in names[:3]), hint=hint))
        return None
    rel = ctx.project.file_for_instance(node) if node.file_paths else None
    return _Target(node, rel, display(node))


def _unknown_instance(ctx: CallContext, ref: PathRef, node: Instance | None, rest: list[str], fname: str,
                      *, scripts: bool) -> Problem:
    api = ctx.project.api
    index = ctx.index
    kind = "Script" if scripts else "Path"
    if node is None:
        first = rest[0] if rest else ref.text
        if not rest:
            return Problem(M.INVALID_ARGUMENT, f"'{ref.raw}' is not a valid instance path "
                                               f"(write it as ServerScriptService.Folder.Name).", field=fname)
        names = [c.name for c in index.datamodel.all_children()] + sorted(api.services)
        ranked = [c for c, _ in rank(first, names, limit=5)]
        sugg = [".".join([c, *rest[1:]]) for c in ranked]
        msg = f"{kind} '{ref.raw}' does not exist: '{first}' is not a service or a top-level instance of the game."
        msg += did_you_mean(sugg, none="", lead=" ")
        top = ", ".join(c.name for c in index.datamodel.all_children()[:15])
        return Problem(M.UNKNOWN_PATH, msg, field=fname, suggestions=tuple(sugg), hint=f"Top-level services in the project: {top}.")
    missing = rest[0]
    base = display(node)
    children = [c.name for c in node.all_children()]
    ranked = [c for c, _ in rank(missing, children, limit=5)]
    sugg: list[str] = []
    for cand in ranked:
        full = ".".join([base, cand, *rest[1:]]) if base != "game" else ".".join([cand, *rest[1:]])
        if len(rest) == 1 or _resolves(index, full):
            sugg.append(full)
    if not sugg and scripts and len(rest) == 1:
        # a script deeper down (``ServerScriptService.Bootstrp`` -> ``...Server.Bootstrap``)
        names, _ = scripts_under(api, node, limit=2000)
        by_last: dict[str, str] = {}
        for n in names:
            by_last.setdefault(n.rsplit(".", 1)[-1], n)
        close = ([missing] if missing in by_last else []) + [c for c, _ in rank(missing, list(by_last), limit=3)]
        sugg = [f"{base}.{by_last[c]}" if base != "game" else by_last[c] for c in close]
    if not sugg and len(rest) == 1:
        # the name exists elsewhere (wrong parent)?
        last = rest[-1]
        for other in ctx.names.get(ctx.project, last)[:3]:
            if ctx.overlay is None or ctx.overlay.is_live(other):
                sugg.append(display(other))
    full_missing = ref.raw.strip()
    msg = f"{kind} '{full_missing}' does not exist: {base} has no child '{missing}'."
    gone = _deleted_by(ctx, [base, *rest] if base != "game" else list(rest))
    if gone:
        msg = f"{kind} '{full_missing}' does not exist any more: {gone}."
    msg += did_you_mean(sugg, none="", lead=" ")
    if scripts:
        names, total = scripts_under(api, node)
        hint = (f"Scripts under {base}: {', '.join(names)}" + (f" … ({total} in all)" if total > len(names) else "") + "."
                if names else f"There are no scripts under {base}; its children: {children_listing(node)}.")
    else:
        hint = f"Children of {base}: {children_listing(node)}."
    return Problem(M.UNKNOWN_PATH, msg, field=fname, suggestions=tuple(dict.fromkeys(sugg)), hint=hint)


def _deleted_by(ctx: CallContext, parts: list[str]) -> str | None:
    if not ctx.deleted:
        return None
    for k in range(len(parts), 0, -1):
        path = ".".join(parts[:k])
        who = ctx.deleted.get(path)
        if who is not None:
            return f"{path} was deleted by {who}"
    return None


def _resolves(index, dotted: str) -> bool:
    node, rest = index.resolve_partial(dotted)
    return node is not None and not rest


def _unknown_file(ctx: CallContext, ref: PathRef, fname: str, *, want_script: bool) -> Problem:
    rel = ref.text
    directory, base = posixpath.split(rel)
    suffixes = (".luau", ".lua") if want_script else ("",)
    holder = ctx.ensure_overlay().dir_instance(directory) if ctx.overlay is not None \
        else ctx.dirmap.get(ctx.project, directory)
    same_dir: list[str] = []
    nearby: list[str] = []  # same directory, plus the init files of its subdirectories
    if holder is not None:
        for child in holder.all_children():
            for fp in child.file_paths:
                if fp.endswith(suffixes):
                    nearby.append(fp)
                    if fp.rsplit("/", 1)[0] == directory if "/" in fp else not directory:
                        same_dir.append(fp)
    ranked = _rank_files(base, nearby, 5)
    if not ranked:
        files = ctx.overlay.file_paths() if ctx.overlay is not None else ctx.project.file_instances
        ranked = _rank_files(base, [f for f in files if f.endswith(suffixes)], 3)
    msg = f"File '{ref.raw}' is not a {'script ' if want_script else ''}file of the project."
    root = ctx.root
    if rel in ctx.deleted:
        msg = f"File '{ref.raw}' does not exist any more: it was deleted by {ctx.deleted[rel]}."
    elif root is not None and os.path.isfile(os.path.join(root, rel)):
        msg = f"File '{ref.raw}' exists but the project does not sync it into the game (ignored or outside every $path)."
    msg += did_you_mean(ranked, none="", lead=" ")
    listing = [posixpath.basename(f) for f in sorted(same_dir)][:12]
    hint = (f"Scripts in {directory or 'the project root'}/: {', '.join(listing)}"
            + (f" … ({len(same_dir)} in all)" if len(same_dir) > 12 else "") + "." if listing else None)
    return Problem(M.UNKNOWN_PATH, msg, field=fname, suggestions=tuple(ranked), hint=hint)


def _stem(name: str) -> str:
    return name.split(".", 1)[0]


def _rank_files(base: str, files: list[str], limit: int) -> list[str]:
    """Files whose name stem (``Bootstrap`` of ``Bootstrap.server.luau``) equals or is
    close to ``base``'s, best first."""
    by_stem: dict[str, list[str]] = {}
    for f in files:
        stem = _stem(posixpath.basename(f))
        if stem == "init":  # src/shared/Config/init.luau is the module 'Config'
            stem = posixpath.basename(posixpath.dirname(f)) or stem
        by_stem.setdefault(stem, []).append(f)
    want = _stem(base)
    out = [f for f in by_stem.get(want, []) if posixpath.basename(f) != base]
    for stem, _ in rank(want, [s for s in by_stem if s != want], limit=limit):
        out.extend(by_stem[stem])
    return out[:limit]


def _create_script(ctx: CallContext, value: str, fname: str, cls: str | None, problems: list[Problem]) -> _Target | None:
    ref = _parse(ctx, value, fname, problems)
    if ref is None:
        return None
    ov = ctx.ensure_overlay()
    if ref.form == "file":
        existing = ov.instances_for_file(ref.text)
        if existing:
            problems.append(Problem(M.INVALID_ARGUMENT, f"'{ref.raw}' already exists ({display(existing[0])}); "
                                                        f"use patch_script to change it.", field=fname,
                                    suggestions=("patch_script",)))
            return _Target(existing[0], ref.text, ref.text)
        # an instance of the same name in the directory's instance?
        directory = posixpath.dirname(ref.text)
        from .overlay import script_file_rule

        rule = script_file_rule(posixpath.basename(ref.text))
        holder = ov.dir_instance(directory)
        if rule is not None and holder is not None and holder.child(rule[1]) is not None \
                and not posixpath.basename(ref.text).startswith("init."):
            other = holder.child(rule[1])
            problems.append(Problem(M.INVALID_ARGUMENT, f"{display(holder)} already has a child named '{rule[1]}' "
                                                        f"({other.class_name}); a new '{posixpath.basename(ref.text)}' "
                                                        f"would collide with it.", field=fname))
            return None
        node, reason = ov.place_file(ref.text)
        if node is None:
            dirs = [f"{d or '.'}/ ({display(n)})" for d, n in ov.synced_dirs() if n.class_name == "Folder"
                    or d.count("/") <= 1][:10]
            problems.append(Problem(M.UNKNOWN_PATH, f"Cannot create '{ref.raw}': {reason}.", field=fname,
                                    hint=f"Synced directories: {', '.join(dirs)}." if dirs else None))
            return None
        return _Target(node, ref.text, ref.text)
    node, rest = ctx.index.resolve_partial(ref.text)
    if node is not None and not rest:
        problems.append(Problem(M.INVALID_ARGUMENT, f"'{ref.raw}' already exists ({node.class_name}); use patch_script "
                                                    f"to change it.", field=fname, suggestions=("patch_script",)))
        return _Target(node, None, display(node))
    if node is None or len(rest) > 1:
        problems.append(_unknown_instance(ctx, ref, node, rest[:-1] if len(rest) > 1 else rest, fname, scripts=False))
        return None
    name = rest[0]
    cls = cls or "ModuleScript"
    rel = f"{node.dir_path}/{name}{CLASS_SUFFIX[cls]}" if node.dir_path else None
    if node.dir_path == "":
        rel = f"{name}{CLASS_SUFFIX[cls]}"
    if rel is not None:
        # The file a harness would write for this instance must stay inside the project
        # too (a synced directory may be a symbolic link out of the root).
        try:
            rel = file_rel(rel, ctx.root)
        except PathError as exc:
            problems.append(Problem(exc.code, f"Cannot create '{ref.raw}': {exc}", field=fname))
            return None
    created = ov.create(node, name, cls, file=rel)
    return _Target(created, rel, display(created))


# -- classes and properties ------------------------------------------------------------------
def _check_class(api, value: str, fname: str, *, creatable: bool, problems: list[Problem]) -> bool:
    if creatable and api.is_creatable(value):
        return True
    if not creatable and api.has_class(value):
        return True
    sugg = [c for c, _ in ranked_classes(api, value, creatable=creatable)]
    if api.has_class(value):
        if api.is_service(value):
            msg = f"'{value}' is a service: it already exists (game:GetService(\"{value}\")) and cannot be created."
        else:
            msg = f"Class '{value}' cannot be created with Instance.new (it is abstract or engine-made)."
            subs = [c for c in api.creatable if api.is_a(c, value)]
            sugg = sorted(subs, key=len)[:5] or sugg
    else:
        msg = f"There is no Roblox class named '{value}'."
    msg += did_you_mean(sugg, none="", lead=" ")
    problems.append(Problem(M.UNKNOWN_CLASS, msg, field=fname, suggestions=tuple(sugg)))
    return False


def _check_property(api, node: Instance, prop: str, fname: str, problems: list[Problem]) -> str | None:
    """The property's type, or ``None`` after reporting (or when the class is unknown)."""
    cls = node.class_name
    if node.class_guessed or not api.has_class(cls):
        return None
    member = api.member(cls, prop)
    if member is not None and member.kind == "Property":
        if member.deprecated:
            repl = f" Use '{member.deprecated_replacement}' instead." if member.deprecated_replacement else ""
            problems.append(Problem(M.DEPRECATED_PROPERTY, f"{cls}.{prop} is deprecated.{repl}", field=fname,
                                    severity=Severity.WARNING,
                                    suggestions=(member.deprecated_replacement,) if member.deprecated_replacement else ()))
        return member.type
    # lower-case names in the API data are legacy serialization aliases (``siz``), not API;
    # members above PluginSecurity (Studio tools run as plugins) are Roblox's own
    props = [n for n, m in api.members(cls).items() if m.kind == "Property" and not m.deprecated and n[:1].isupper()
             and m.usable(plugin=True)]
    sugg = [c for c, _ in rank(prop, props, limit=5)]
    if member is not None:
        msg = f"'{prop}' is a{'n' if member.kind[0] in 'AEIOU' else ''} {member.kind.lower()} of {cls}, not a property."
    else:
        msg = f"{cls} ({display(node)}) has no property '{prop}'."
    msg += did_you_mean(sugg, none="", lead=" ")
    common = ", ".join(sorted(props, key=lambda p: (len(p), p))[:15])
    problems.append(Problem(M.UNKNOWN_PROPERTY, msg, field=fname, suggestions=tuple(sugg),
                            hint=f"Some properties of {cls}: {common}."))
    return None


# -- property maps, instance lists and trees, script edits -------------------------------------
def _check_property_map(ctx: CallContext, api, cls: str | None, value: Any, fname: str, problems: list[Problem]) -> None:
    """``{"Property": value, ...}`` for an instance of class ``cls`` (``None``: unknown, only
    the shape is checked)."""
    if value is None:
        return
    if not isinstance(value, dict):
        problems.append(Problem(M.INVALID_ARGUMENT, f"Field '{fname}' must be an object of property names to values, "
                                                    f"got {_got(value)}.", field=fname))
        return
    if cls is None or not api.has_class(cls):
        return
    probe = Instance(cls, cls)
    for prop, pval in value.items():
        where = f"{fname}.{prop}"
        ptype = _check_property(api, probe, str(prop), where, problems)
        if ptype is None:
            continue
        vp = check_value(api, ptype, pval, lambda p: _lookup_instance(ctx, p))
        if vp is not None:
            problems.append(Problem(vp.code, f"The value for {cls}.{prop} does not fit: {vp.message}.", field=where,
                                    suggestions=vp.suggestions))


def _check_new_instance(ctx: CallContext, api, item: Any, where: str, problems: list[Problem], *,
                        class_keys=("className", "class", "ClassName"), prop_keys=("properties", "props")) -> str | None:
    """One new instance's class and property map; its class when known."""
    if not isinstance(item, dict):
        problems.append(Problem(M.INVALID_ARGUMENT, f"'{where}' must be an object describing an instance, got {_got(item)}.",
                                field=where))
        return None
    ckey = next((k for k in class_keys if k in item), None)
    cls = item.get(ckey) if ckey else None
    known = None
    if isinstance(cls, str):
        if _check_class(api, cls, f"{where}.{ckey}", creatable=True, problems=problems):
            known = cls
    pkey = next((k for k in prop_keys if k in item), None)
    if pkey is not None:
        _check_property_map(ctx, api, known, item[pkey], f"{where}.{pkey}", problems)
    return known


def _check_object_list(ctx: CallContext, api, value: Any, fname: str,
                       problems: list[Problem]) -> list[tuple[Instance, str, str, tuple]]:
    """A list of new instances (robloxstudio-mcp's ``mass_create_objects``): each item's
    class, parent (an existing instance) and property map.  Returns ``(parent, name,
    class, ())`` for the items that would be created (parent known, class a string;
    unnamed ones named after their class)."""
    out: list[tuple[Instance, str, str, tuple]] = []
    if not isinstance(value, list):
        problems.append(Problem(M.INVALID_ARGUMENT, f"Field '{fname}' must be a list of objects, got {_got(value)}.",
                                field=fname))
        return out
    for i, item in enumerate(value[:500]):
        where = f"{fname}[{i}]"
        _check_new_instance(ctx, api, item, where, problems)
        parent = item.get("parent") if isinstance(item, dict) else None
        if isinstance(parent, str) and ctx.project is not None:
            node, known = _resolve_instance(ctx, parent, f"{where}.parent", problems, what="parent")
            cls, name = _class_and_name(item)
            if node is not None and known and cls is not None:
                out.append((node, name or cls, cls, ()))
    return out


def _class_and_name(item: Any) -> tuple[str | None, str | None]:
    if not isinstance(item, dict):
        return None, None
    cls = next((item[k] for k in ("className", "class", "ClassName") if isinstance(item.get(k), str)), None)
    name = item.get("name") if isinstance(item.get("name"), str) and item.get("name").strip() else None
    return cls, name


def _check_instance_tree(ctx: CallContext, api, value: Any, fname: str, problems: list[Problem], *,
                         depth: int) -> tuple[str, str, tuple] | None:
    """A tree of new instances (``{className, name?, properties?, children?: [...]}``, as
    robloxstudio-mcp's ``create_ui_tree`` takes it): every node's class and properties.
    Returns the tree as nested ``(name, class, children)`` (unnamed nodes named after their
    class), or ``None`` when the root is not an object with a class."""
    if depth > 64:
        problems.append(Problem(M.INVALID_ARGUMENT, f"'{fname}' is nested more than 64 levels deep.", field=fname))
        return None
    _check_new_instance(ctx, api, value, fname, problems)
    cls, name = _class_and_name(value)
    kids = value.get("children") if isinstance(value, dict) else None
    built: list[tuple[str, str, tuple]] = []
    if kids is not None and not isinstance(kids, list):
        problems.append(Problem(M.INVALID_ARGUMENT, f"'{fname}.children' must be a list, got {_got(kids)}.",
                                field=f"{fname}.children"))
    elif kids is not None:
        for i, child in enumerate(kids[:500]):
            sub = _check_instance_tree(ctx, api, child, f"{fname}.children[{i}]", problems, depth=depth + 1)
            if sub is not None:
                built.append(sub)
    return (name or cls, cls, tuple(built)) if cls is not None else None


def _old_source(ctx: CallContext, target: _Target | None) -> str | None:
    """The script's source before this call: what the batch (or proxy session) last gave it,
    else its file on disk; ``None`` when there is none (a new script)."""
    if target is None or target.node is None:
        return None
    if ctx.overlay is not None:
        known = ctx.overlay.source_of(target.node)
        if known is not None:
            return known
    if target.rel is None or ctx.root is None:
        return None
    from ..files import read_bytes

    try:
        data = read_bytes(os.path.join(ctx.root, target.rel), root=ctx.root)
    except (OSError, ValueError):
        return None
    from ..text import decode_source

    return decode_source(data).text


def _check_script_edit(ctx: CallContext, target: _Target | None, args: dict, fields: dict[str, str],
                       problems: list[Problem]) -> str | None:
    """An edit of an existing script (``edit_old`` replaced by ``edit_new``, or ``edit_new``
    inserted after line ``edit_line``), applied to the script's source (:func:`_old_source`)
    and linted: the findings the edit introduced (:func:`lint_change`).  Returns the edited
    source, or ``None`` when the edit could not be applied."""
    old_text = _old_source(ctx, target)
    if old_text is None or target is None:
        return None
    new_part = args.get(fields["edit_new"])
    if not isinstance(new_part, str):
        return None
    if "edit_old" in fields:
        old_part = args.get(fields["edit_old"])
        if not isinstance(old_part, str) or not old_part:
            return None
        at = old_text.find(old_part)
        if at < 0:
            problems.append(Problem(M.INVALID_ARGUMENT, f"The text of '{fields['edit_old']}' is not in {target.display}.",
                                    field=fields["edit_old"]))
            return None
        new_text = old_text[:at] + new_part + old_text[at + len(old_part):]
    else:
        after = args.get(fields.get("edit_line", ""), None)
        lines = old_text.splitlines(keepends=True)
        if isinstance(after, float) and after.is_integer():
            after = int(after)
        n = after if isinstance(after, int) and not isinstance(after, bool) and 0 <= after <= len(lines) else len(lines)
        if lines and n == len(lines) and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        block = new_part if new_part.endswith("\n") else new_part + "\n"
        new_text = "".join(lines[:n]) + block + "".join(lines[n:])
    fname = fields["edit_new"]
    for f in lint_change(ctx.engine, old_text, new_text, target.node, target.rel, target.display, ctx.overlay):
        sev = Severity.ERROR if f.severity is Severity.ERROR else Severity.WARNING
        problems.append(Problem(f.rule, f"{target.display} line {f.range.start.line + 1}: {f.message}", field=fname,
                                suggestions=tuple(f.suggestions), severity=sev, from_content=True))
    return new_text


# -- content ----------------------------------------------------------------------------------
def _check_content(ctx: CallContext, content: Any, fname: str, target: _Target | None, problems: list[Problem],
                   *, replaces: bool = False) -> bool:
    """Lint Luau ``content`` as the target script (``None``: code run on its own).  With
    ``replaces`` (the content becomes an existing script's whole source) only what it
    introduces over the old source counts.  Returns whether the content was checked."""
    if not isinstance(content, str):
        problems.append(Problem(M.INVALID_ARGUMENT, f"Field '{fname}' must be a string of Luau source, got {_got(content)}.",
                                field=fname))
        return False
    size = len(content.encode("utf-8", errors="surrogatepass"))
    if size > ctx.max_content_bytes:
        problems.append(Problem(M.INVALID_ARGUMENT, f"Field '{fname}' is {size:,} bytes, over the {ctx.max_content_bytes:,}-byte "
                                                    f"limit for one script; it was not checked. Split the script into "
                                                    f"modules.", field=fname))
        return False
    node = target.node if target is not None else None
    rel = target.rel if target is not None else None
    shown = (target.display if target is not None else None) or "<content>"
    old_text = _old_source(ctx, target) if replaces else None
    findings = lint_change(ctx.engine, old_text, content, node, rel, shown, ctx.overlay)
    for f in findings:
        sev = Severity.ERROR if f.severity is Severity.ERROR else Severity.WARNING
        problems.append(Problem(f.rule, f"Line {f.range.start.line + 1}: {f.message}", field=fname,
                                suggestions=tuple(f.suggestions), severity=sev, range=f.range.to_json(),
                                from_content=True))
    return True


def lint_as(engine, text: str, node: Instance | None, rel: str | None, shown: str, overlay: Overlay | None,
            *, count: bool = True) -> list:
    """Every code check of ``engine`` on ``text`` as the content of script ``node`` (file
    ``rel``), in patch mode, against ``overlay``'s view when it changed.  Findings'
    ``file`` is ``shown``.  With ``count`` False the engine's stats are left as they were."""
    ctx = engine.make_context(text, None, mode="patch")
    ctx.path = rel or shown
    ctx.rel = rel
    if overlay is not None and overlay.changed:
        ctx.project = overlay.view
    ctx.scripts = [node] if node is not None else []
    if count:
        return engine.run_checks(ctx, display_path=shown)
    saved = engine.stats.copy()
    try:
        return engine.run_checks(ctx, display_path=shown)
    finally:
        engine.stats.clear()
        engine.stats.update(saved)


def lint_change(engine, old_text: str | None, new_text: str, node: Instance | None, rel: str | None, shown: str,
                overlay: Overlay | None, *, changed: set[int] | None = None, count: bool = True) -> list:
    """The findings ``new_text`` has that ``old_text`` did not (the rule "judge what the agent
    wrote": :func:`luaguard.introduced.introduced_findings`, a line-insensitive key), both
    linted as the script ``node`` (file ``rel``) in patch mode.  ``old_text`` ``None``: a new
    file, every finding counts.  ``new_text`` sees ``overlay``'s view (instances and files
    the same batch created); ``old_text`` the project as it is.  ``changed``: the 0-based
    lines of ``new_text`` the change touched, when known (a diff's hunks).  With ``count``
    the introduced findings are added to the engine's stats."""
    from ..engine import _gc_paused
    from ..introduced import introduced_findings

    with _gc_paused():  # as Engine.analyse: the tokens and trees are freed by reference counting
        found = lint_as(engine, new_text, node, rel, shown, overlay, count=False)
        if old_text is not None and found:
            before = lint_as(engine, old_text, node, rel, shown, None, count=False)
            found = introduced_findings(before, old_text, found, new_text, changed=changed)
    if count:
        for f in found:
            engine.stats[f.rule] += 1
    return found
