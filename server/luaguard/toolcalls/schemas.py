"""Tool schemas: the built-in Roblox tool set, and loading tools in the formats agents use.

Built-in tools (JSON Schema draft 2020-12, ``additionalProperties: false``)::

    read_script{path}                  delete_script{path}
    patch_script{path, content}        create_script{path, content, className?}
    create_instance{className, parent, name}
    modify_property{instancePath, property, value}
    get_project_structure{}

User tools add to (or, with ``toolcalls.replace_builtin = true``, replace) the built-ins,
from ``[[toolcalls.tools]]`` tables in ``luaguard.toml`` or from ``toolcalls.tools_file``
(relative to the project root).  Accepted shapes, per tool or as a list / wrapper:

* OpenAI function calling: ``{"type": "function", "function": {"name", "description",
  "parameters"}}``, the bare ``{"name", "parameters"}`` form, a ``{"tools": [...]}`` or
  legacy ``{"functions": [...]}`` wrapper;
* MCP ``tools/list`` results: ``{"tools": [{"name", "description", "inputSchema"}]}``,
  also inside a JSON-RPC response (``{"result": {"tools": [...]}}``);
* Anthropic tools: ``{"name", "input_schema"}``.

Semantic checks beyond the schema come from **roles**: a property schema may carry
``"x-luaguard": "<role>"`` and a tool (or its parameters schema) may carry
``"x-luaguard": {"effect": ..., "unique_names": bool}``.  Roles: ``script_path`` (an
existing script), ``new_script_path`` (a script to create), ``instance_path`` (an existing
instance), ``parent_path`` (the existing parent of a new instance), ``path`` (any path:
only checked to stay inside the project), ``class_name`` (a creatable class),
``known_class`` (any class), ``instance_name`` (the new instance's name), ``property``,
``property_value``, ``luau`` (content linted as the script the path names),
``script_class``, ``properties`` (an object of property names to values, checked against the
new instance's class or the instance's), ``object_list`` (a list of new instances: class,
parent, properties), ``instance_tree`` (a new instance with ``children``, recursively),
``edit_old``/``edit_new``/``edit_line`` (an edit of the script the ``script_path`` names:
replace ``edit_old`` by ``edit_new``, or insert ``edit_new`` after line ``edit_line``; the
edited source is linted), ``new_name`` (the instance's new name).  Effects (what later
calls of a plan, a sequence or an MCP proxy session see): ``create_instance`` (the new
instance of ``class_name``/``instance_name`` under ``parent_path``; without a name it is
named after its class, as ``Instance.new`` does), ``create_script``, ``delete``, ``rename``
(``instance_path`` gets ``new_name``), ``move`` (``instance_path`` goes under
``parent_path``), ``clone`` (a copy of ``instance_path``'s subtree under ``parent_path``),
``edit_source`` (the script's source changes in a way luaguard does not model),
``adds_children`` (instances luaguard cannot name are added under ``parent_path``, or beside
``instance_path``: that node is open from then on - an inserted asset, a duplicate).  The
items of an ``object_list`` and the nodes of an ``instance_tree`` are always created;
``set_property`` of ``Name`` or ``Parent`` renames or moves; ``luau`` content and edits
of a ``script_path`` become that script's source.  A user tool without annotations that has a built-in's
name inherits that built-in's roles for properties of the same name; otherwise
``instancePath`` is an ``instance_path``, ``path``/``filePath``/``scriptPath`` a ``path``
and ``className`` a ``known_class``.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

# jsonschema and referencing are imported when a tool is first compiled (a hook process
# that judges a file edit never needs them: tens of milliseconds of start-up saved)

ROLES = frozenset({
    "script_path", "new_script_path", "instance_path", "parent_path", "path", "class_name",
    "known_class", "instance_name", "property", "property_value", "luau", "script_class",
    "properties", "object_list", "instance_tree", "edit_old", "edit_new", "edit_line", "new_name",
})
EFFECTS = frozenset({"create_instance", "create_script", "delete", "rename", "move", "clone", "edit_source",
                     "adds_children"})
SCRIPT_CLASSES = ("Script", "LocalScript", "ModuleScript")


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _s(role: str, description: str) -> dict[str, Any]:
    return {"type": "string", "description": description, "x-luaguard": role}


_PATH_DOC = ("Script path: instance form (ServerScriptService.Server.Main) or file form "
             "relative to the project root (src/server/Main.server.luau)")

#: The built-in Roblox tool set as OpenAI-style definitions (name, description, parameters, x-luaguard).
BUILTIN_TOOLS: tuple[dict[str, Any], ...] = (
    {"name": "read_script", "description": "Read the source of a script.",
     "parameters": _obj({"path": _s("script_path", _PATH_DOC)}, ["path"])},
    {"name": "patch_script", "description": "Replace the source of an existing script.",
     "parameters": _obj({"path": _s("script_path", _PATH_DOC),
                         "content": _s("luau", "The complete new Luau source")}, ["path", "content"])},
    {"name": "create_script", "description": "Create a new script.",
     "parameters": _obj({"path": _s("new_script_path", _PATH_DOC),
                         "content": _s("luau", "The Luau source"),
                         "className": {"type": "string", "enum": list(SCRIPT_CLASSES), "x-luaguard": "script_class",
                                       "description": "Script class for instance-form paths (default ModuleScript)"}},
                        ["path", "content"]),
     "x-luaguard": {"effect": "create_script"}},
    {"name": "delete_script", "description": "Delete a script.",
     "parameters": _obj({"path": _s("script_path", _PATH_DOC)}, ["path"]),
     "x-luaguard": {"effect": "delete"}},
    {"name": "create_instance", "description": "Create an instance (Instance.new) under a parent.",
     "parameters": _obj({"className": _s("class_name", "A creatable Roblox class, e.g. Folder, Part"),
                         "parent": _s("parent_path", "Instance path of the parent, e.g. ServerStorage.Maps"),
                         "name": _s("instance_name", "Name of the new instance")},
                        ["className", "parent", "name"]),
     "x-luaguard": {"effect": "create_instance", "unique_names": True}},
    {"name": "modify_property", "description": "Set a property of an instance.",
     "parameters": _obj({"instancePath": _s("instance_path", "Instance path, e.g. Workspace.SpawnLocation"),
                         "property": _s("property", "Property name, e.g. Anchored"),
                         "value": {"description": "New value: number, string, boolean, [x,y,z] for Vector3, "
                                                  "[r,g,b] for Color3, [[xs,xo],[ys,yo]] for UDim2, an Enum item name",
                                   "x-luaguard": "property_value"}},
                        ["instancePath", "property", "value"])},
    {"name": "get_project_structure", "description": "List the project's instance tree.",
     "parameters": _obj({}, [])},
)

#: Names agents often invent, mapped to the built-in tool they meant.
DEFAULT_ALIASES: dict[str, str] = {
    "list_files": "get_project_structure", "list_directory": "get_project_structure",
    "get_tree": "get_project_structure", "get_file_tree": "get_project_structure",
    "list_scripts": "get_project_structure", "get_structure": "get_project_structure",
    "read_file": "read_script", "get_script": "read_script", "open_file": "read_script",
    "get_file": "read_script", "view_file": "read_script",
    "write_file": "patch_script", "edit_file": "patch_script", "update_script": "patch_script",
    "edit_script": "patch_script", "modify_script": "patch_script", "apply_patch": "patch_script",
    "replace_script": "patch_script", "write_script": "patch_script",
    "create_file": "create_script", "new_script": "create_script", "add_script": "create_script",
    "delete_file": "delete_script", "remove_script": "delete_script", "remove_file": "delete_script",
    "create_folder": "create_instance", "new_instance": "create_instance", "add_instance": "create_instance",
    "insert_instance": "create_instance", "instance_new": "create_instance", "create_part": "create_instance",
    "set_property": "modify_property", "update_property": "modify_property",
    "change_property": "modify_property", "set_properties": "modify_property",
}

_HEURISTIC_ROLES = {
    "instancepath": "instance_path", "path": "path", "filepath": "path", "scriptpath": "path",
    "classname": "known_class",
}


class ToolSchemaError(Exception):
    """A tools file that cannot be read at all (missing, not JSON).  ``str()`` names the file
    (and line/column for JSON errors)."""


@dataclass(slots=True)
class ToolSpec:
    """One tool: ``schema`` is the JSON Schema of its arguments (compiled in ``validator``);
    ``roles`` maps property names to roles (see the module docstring); ``effect`` is
    ``None`` or one of :data:`EFFECTS`; ``source`` says where it was defined."""

    name: str
    description: str
    schema: dict[str, Any]
    validator: Any
    roles: dict[str, str] = field(default_factory=dict)
    effect: str | None = None
    unique_names: bool = False
    source: str = "built-in"
    #: what was skipped when the tool was loaded (a ``pattern`` RE2 cannot run), to say once
    notes: tuple[str, ...] = ()

    @property
    def properties(self) -> tuple[str, ...]:
        props = self.schema.get("properties")
        return tuple(props) if isinstance(props, dict) else ()

    @property
    def required(self) -> tuple[str, ...]:
        req = self.schema.get("required")
        return tuple(r for r in req if isinstance(r, str)) if isinstance(req, list) else ()

    def field_for(self, role: str) -> str | None:
        """The first property with ``role`` (``None`` if the tool has none)."""
        for name, r in self.roles.items():
            if r == role:
                return name
        return None


@dataclass(slots=True)
class ToolSet:
    """The tools a project's calls are checked against, plus the alias map
    (invented name -> real tool) used for "did you mean"; ``problems`` lists tool
    definitions that were skipped and why (``"file: tools[2]: ..."``)."""

    tools: dict[str, ToolSpec]
    aliases: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> ToolSpec | None:
        """The tool ``name``; also accepts namespaced forms agents emit
        (``functions.read_script``, ``mcp__roblox__read_script``)."""
        spec = self.tools.get(name)
        if spec is not None:
            return spec
        for sep in ("__", ".", "/", ":"):
            if sep in name:
                spec = self.tools.get(name.rsplit(sep, 1)[1])
                if spec is not None:
                    return spec
        return None


def _validator_for(schema: dict[str, Any]):
    """A validator that never retrieves anything: ``$ref`` resolves only inside the
    schema itself (an empty ``referencing`` registry; jsonschema's automatic retrieval
    of ``file://`` and ``http://`` references is off).  An unresolvable reference is a
    :class:`SchemaError`-like ``ValueError`` raised here, not at validation time."""
    import jsonschema

    from .patterns import linear_validator_class

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema, format_checker=None)  # (Python's re is not asked to judge any pattern)
    validator = linear_validator_class(cls)(schema, registry=_no_retrieval_registry())
    _check_refs(validator, schema)
    return validator


def _no_retrieval(uri: str):
    import referencing.exceptions

    raise referencing.exceptions.NoSuchResource(ref=uri)


_REGISTRY: list = []


def _no_retrieval_registry():
    if not _REGISTRY:
        import referencing

        _REGISTRY.append(referencing.Registry(retrieve=_no_retrieval))
    return _REGISTRY[0]


def _check_refs(validator, schema: Any) -> None:
    """Resolve every ``$ref`` once, so a reference to anything outside the schema is
    refused when the tool is loaded."""
    import referencing.exceptions
    from jsonschema.exceptions import SchemaError

    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                try:
                    validator._resolver.lookup(ref)
                except referencing.exceptions.Unresolvable:
                    raise SchemaError(f"$ref {ref!r} does not resolve inside the schema (references are never fetched)") from None
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _annotation(obj: Any) -> dict[str, Any]:
    ann = obj.get("x-luaguard") if isinstance(obj, dict) else None
    return ann if isinstance(ann, dict) else {}


def make_tool(definition: dict[str, Any], source: str, builtin: dict[str, ToolSpec] | None = None) -> ToolSpec:
    """Build a :class:`ToolSpec` from one tool definition (any accepted shape).

    Raises ``ValueError`` with a readable reason for a definition that is not a tool
    (no name, a schema that is not an object or not valid JSON Schema).
    """
    if not isinstance(definition, dict):
        raise ValueError(f"expected a tool object, got {type(definition).__name__}")
    outer = definition
    fn = definition.get("function")
    if isinstance(fn, dict):
        definition = fn
    name = definition.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("tool has no 'name' string")
    schema: Any = None
    for key in ("parameters", "inputSchema", "input_schema"):
        if key in definition:
            schema = definition[key]
            break
    if schema is None:
        schema = {"type": "object"}
    if not isinstance(schema, dict):
        raise ValueError(f"tool {name!r}: the parameters schema must be an object, got {type(schema).__name__}")
    from jsonschema.exceptions import SchemaError

    try:
        validator = _validator_for(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "<root>"
        raise ValueError(f"tool {name!r}: invalid JSON Schema at {where}: {exc.message}") from None
    ann = {**_annotation(schema), **_annotation(outer), **_annotation(definition)}
    roles: dict[str, str] = {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    annotated = False
    for pname, pschema in props.items():
        role = pschema.get("x-luaguard") if isinstance(pschema, dict) else None
        if isinstance(role, str):
            annotated = True
            if role not in ROLES:
                raise ValueError(f"tool {name!r}: property {pname!r}: unknown x-luaguard role {role!r} "
                                 f"(known: {', '.join(sorted(ROLES))})")
            roles[pname] = role
    effect = ann.get("effect")
    unique = ann.get("unique_names", False)
    base = (builtin or {}).get(name)
    if not annotated and base is not None:
        roles = {p: r for p, r in base.roles.items() if p in props}
        if "effect" not in ann:
            effect = base.effect
        if "unique_names" not in ann:
            unique = base.unique_names
    elif not annotated:
        for pname in props:
            role = _HEURISTIC_ROLES.get(pname.replace("_", "").replace("-", "").lower())
            if role is not None:
                roles[pname] = role
    if effect is not None and effect not in EFFECTS:
        raise ValueError(f"tool {name!r}: unknown x-luaguard effect {effect!r} (known: {', '.join(sorted(EFFECTS))})")
    desc = definition.get("description")
    from .patterns import unsupported_patterns

    notes = tuple(f"tool {name!r}: pattern {p!r} is not supported by the linear-time matcher (RE2: {why}); "
                  f"it is not checked" for p, why in unsupported_patterns(schema))
    return ToolSpec(name=name.strip(), description=desc if isinstance(desc, str) else "", schema=schema,
                    validator=validator, roles=roles, effect=effect, unique_names=bool(unique), source=source,
                    notes=notes)


def _tool_list(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if isinstance(data.get("result"), dict):  # JSON-RPC response to tools/list
            return _tool_list(data["result"])
        for key in ("tools", "functions"):
            if isinstance(data.get(key), list):
                return data[key]
        if "name" in data or "function" in data:
            return [data]
    return None


def load_tool_definitions(data: Any, source: str, builtin: dict[str, ToolSpec] | None = None) -> tuple[list[ToolSpec], list[str]]:
    """Tools from parsed JSON in any accepted shape: ``(tools, problems)``.

    A definition that is not a valid tool is skipped with a problem naming
    ``source`` and its index (``"tools.json: tools[2]: tool has no 'name' string"``).
    Never raises.
    """
    items = _tool_list(data)
    if items is None:
        return [], [f"{source}: expected a list of tools, an object with 'tools' (OpenAI or MCP tools/list) "
                    f"or 'functions', or one tool object; got {type(data).__name__}"]
    tools: list[ToolSpec] = []
    problems: list[str] = []
    for i, item in enumerate(items):
        try:
            spec = make_tool(item, source, builtin)
            tools.append(spec)
            problems.extend(f"{source}: tools[{i}]: {note}" for note in spec.notes)
        except ValueError as exc:
            problems.append(f"{source}: tools[{i}]: {exc}; skipped")
        except RecursionError:
            problems.append(f"{source}: tools[{i}]: schema nested too deeply; skipped")
    return tools, problems


def read_tools_file(path: Path) -> Any:
    """Parse a tools JSON file.  Raises :class:`ToolSchemaError` naming the file, and the
    line and column of a JSON syntax error."""
    from ..files import Refused, read_bytes

    try:
        raw = read_bytes(path)
    except Refused as exc:
        raise ToolSchemaError(f"{path}: cannot read tools file: {exc.why}") from None
    except OSError as exc:
        raise ToolSchemaError(f"{path}: cannot read tools file: {exc.strerror or exc}") from None
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ToolSchemaError(f"{path}: tools file is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ToolSchemaError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON in tools file: {exc.msg}") from None
    except RecursionError:
        raise ToolSchemaError(f"{path}: tools file is nested too deeply") from None


_BUILTIN_CACHE: dict[str, ToolSpec] | None = None


def builtin_tools() -> dict[str, ToolSpec]:
    """The built-in tools by name (compiled once; callers get a fresh dict)."""
    global _BUILTIN_CACHE
    if _BUILTIN_CACHE is None:
        specs = [make_tool(copy.deepcopy(d), "built-in") for d in BUILTIN_TOOLS]
        _BUILTIN_CACHE = {s.name: s for s in specs}
    return dict(_BUILTIN_CACHE)


def _inside(path: Path, root: Path) -> bool:
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def build_toolset(settings: Any, root: Path | None, extra_files: Iterable[Path] = ()) -> ToolSet:
    """The tool set for ``settings`` (a :class:`~luaguard.config.ToolCallSettings`).

    Order: built-ins (unless ``replace_builtin``), then ``tools`` from ``luaguard.toml``,
    then ``tools_file`` (relative to ``root``), then ``extra_files`` (the CLI's
    ``--tools``); a later definition of the same name replaces an earlier one.  Aliases:
    :data:`DEFAULT_ALIASES` then ``settings.aliases``; an alias whose target is not a
    tool is dropped with a problem.  Raises :class:`ToolSchemaError` when a tools file
    cannot be read or is not JSON; bad definitions inside it become ``problems``.
    """
    builtin = builtin_tools()
    tools: dict[str, ToolSpec] = {} if getattr(settings, "replace_builtin", False) else dict(builtin)
    problems: list[str] = []
    inline = getattr(settings, "tools", ())
    if inline:
        found, probs = load_tool_definitions(list(inline), "luaguard.toml [toolcalls.tools]", builtin)
        problems += probs
        tools.update((t.name, t) for t in found)
    files: list[Path] = []
    tools_file = getattr(settings, "tools_file", None)
    if tools_file:
        p = Path(tools_file)
        if not p.is_absolute() and root is not None:
            p = root / p
        # luaguard.toml belongs to the workspace: its tools file must stay inside the
        # project (symlinks resolved).  Files named on the command line are the user's.
        if root is not None and not _inside(p, root):
            problems.append(f"toolcalls.tools_file: {tools_file!r} is outside the project root; not read")
        else:
            files.append(p)
    files.extend(extra_files)
    for p in files:
        found, probs = load_tool_definitions(read_tools_file(p), os.fspath(p), builtin)
        problems += probs
        tools.update((t.name, t) for t in found)
    aliases: dict[str, str] = {}
    for alias, target in [*DEFAULT_ALIASES.items(), *dict(getattr(settings, "aliases", ())).items()]:
        if target in tools:
            aliases[alias] = target
        elif alias in dict(getattr(settings, "aliases", ())):
            problems.append(f"toolcalls.aliases: {alias!r} -> {target!r}: no tool named {target!r}; ignored")
    return ToolSet(tools, aliases, problems)


def annotate(definitions: list[dict[str, Any]], annotations: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``definitions`` (tools in any accepted shape, e.g. an upstream MCP server's
    ``tools/list``) with the ``x-luaguard`` roles of ``annotations`` (tool definitions of the
    same names, like the shipped ``toolcalls/servers/*.json``) copied onto properties of the
    same names, and the tool-level annotation.  A definition's own roles are kept; tools and
    properties the annotations do not name are left as they are."""
    by_name: dict[str, dict[str, Any]] = {}
    for a in annotations:
        if isinstance(a, dict) and isinstance(a.get("name"), str):
            by_name[a["name"]] = a
    out = []
    for d in definitions:
        d = copy.deepcopy(d)
        ann = by_name.get(d.get("name")) if isinstance(d, dict) else None
        if ann is None:
            out.append(d)
            continue
        a_schema = next((ann[k] for k in ("inputSchema", "parameters", "input_schema") if isinstance(ann.get(k), dict)), {})
        key = next((k for k in ("inputSchema", "parameters", "input_schema") if isinstance(d.get(k), dict)), None)
        if key is None:
            d["inputSchema"] = copy.deepcopy(a_schema) or {"type": "object"}
        else:
            props = d[key].get("properties")
            a_props = a_schema.get("properties") if isinstance(a_schema.get("properties"), dict) else {}
            if isinstance(props, dict):
                for pname, pschema in props.items():
                    role = a_props.get(pname, {}).get("x-luaguard") if isinstance(a_props.get(pname), dict) else None
                    if isinstance(pschema, dict) and role is not None and "x-luaguard" not in pschema:
                        pschema["x-luaguard"] = role
        if "x-luaguard" in ann and "x-luaguard" not in d:
            d["x-luaguard"] = copy.deepcopy(ann["x-luaguard"])
        out.append(d)
    return out
