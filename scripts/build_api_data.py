#!/usr/bin/env python3
"""Derive luaguard's compact shipped Roblox API file from Roblox's own API dump.

Usage::

    python scripts/build_api_data.py [--dump ../shared/roblox/Full-API-Dump.json]
                                     [--source ../shared/roblox/roblox-api.json]
                                     [--out server/luaguard/data/roblox_api.json]

**Sources** (see ``../shared/roblox/README.md``):

* ``Full-API-Dump.json`` - the API dump the Roblox client writes about itself
  (``{"Classes": [{"Name", "Superclass", "Tags", "Members": [...]}], "Enums": [{"Name",
  "Items": [{"Name", "Value", "Tags"?, "LegacyNames"?}]}]}``).  It is the primary source:
  every instance class, its tags (``Service``, ``NotCreatable``, ``Deprecated``), every member
  with its kind, ``Security``, ``Tags``, parameter types and ``ReturnType``, every enum item
  with its ``LegacyNames``.
* ``roblox-api.json`` - facts read from rbx-dom's reflection database and the luau-lsp
  Roblox type declarations (both MIT).  Used only for what the dump lacks: the members of
  *data types* (``Vector3``, ``CFrame``, ``RBXScriptConnection`` ...: the dump describes
  instances only), the Luau spelling luau-lsp gives member types and signatures (kept where
  luau-lsp declares the member, so the types tool-call checks read stay as they were),
  members luau-lsp or rbx-dom declare that the dump does not list (engine children such as
  ``TextChatService.ChatWindowConfiguration``, serialised-only properties) and enum items
  the dump lacks.  Nothing valid in either source is dropped.

**Output** (format 2, one minified JSON object)::

    {
      "format": 2,
      "provenance": {...},                 # the sources, their SHA-256 and the Roblox version
      "services": [ClassName, ...],        # classes tagged Service: game:GetService(...)
      "creatable": [ClassName, ...],       # classes not tagged NotCreatable: Instance.new(...)
      "classes": {Name: [superclass|null, [tag, ...], {Member: entry}]},
      "datatypes": {Name: {Member: entry}},
      "enums": {EnumName: [ItemName, ...]},          # current names
      "enum_legacy_names": {EnumName: {Old: New}},   # LegacyNames: still valid, deprecated
      "enum_deprecated": {EnumName: [ItemName, ...]},# items tagged Deprecated ("" = the enum)
      "deprecated_globals": {name: replacement}
    }

A member ``entry`` is ``[k, security, text, returns, tags, replacement]`` with trailing
empty fields left out: ``k`` is the kind (``P`` Property, ``F`` Function, ``E`` Event,
``C`` Callback); ``security`` the dump's ``Security`` (``""`` for ``None``, else e.g.
``"PluginSecurity"``; for a property whose read and write levels differ, ``"read/write"``,
e.g. ``"None/PluginSecurity"``); ``text`` the Luau type of a property, event or callback,
or a function's parameter list ``(name: type, ...)``; ``returns`` a function's return type
in Luau spelling (``"OrderedDataStore"``, ``"Instance"``); ``tags`` those of
``Deprecated``/``NotScriptable`` the member has; ``replacement`` what to use instead of a
deprecated member.  Members no game script or plugin may use (a level above
``PluginSecurity``) keep kind, security, tags and replacement only: nothing reads their
types.

**Rules** (each documented, none guessed):

* *Type spelling* (dump -> Luau): ``bool`` -> ``boolean``; ``int``, ``int64``, ``float``,
  ``double`` -> ``number``; ``null`` -> ``()`` as a return; enums ``Enum.<Name>``; classes
  and data types by name; ``Instances``/``Objects`` -> ``{Instance}``; groups ``Tuple`` ->
  ``...any``, ``Variant`` -> ``any``, ``Array`` -> ``{any}``, ``Dictionary``/``Map`` ->
  ``{[any]: any}``, ``Function`` -> ``(...any) -> ...any``.
* *Deprecation*: the dump's ``Deprecated`` tag; the replacement is, in order, the table
  :data:`KNOWN_DEPRECATED_MEMBERS` (Roblox Creator Documentation, for replacements that are
  not a rename: ``Remove`` -> ``Destroy``), or the dump's ``PreferredDescriptorName``
  (``clone`` -> ``Clone``) when it names another member of the same class (it sometimes
  names a member of another class: ``PhysicsService.SetPartCollisionGroup`` ->
  ``CollisionGroup``, a ``BasePart`` property; then no replacement is given), followed
  while the replacement is itself deprecated.
* *Legacy enum names*: an item's ``LegacyNames`` are valid in scripts (Roblox resolves
  them to the item; Studio shows a deprecation warning): kept apart from the items, so
  suggestions never propose them.
* *Global functions*: :data:`DEPRECATED_GLOBALS` (the ``task`` library replaced
  ``wait``/``spawn``/``delay`` in 2021).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared" / "roblox"
DEFAULT_DUMP = SHARED / "Full-API-Dump.json"
DEFAULT_SOURCE = SHARED / "roblox-api.json"
DEFAULT_OUT = REPO_ROOT / "server" / "luaguard" / "data" / "roblox_api.json"

FORMAT = 2

# Deprecated members whose replacement is not the dump's PreferredDescriptorName.
# Source: Roblox Creator Documentation, engine API reference pages (each member is marked
# "Deprecated" there, with the replacement named in its description).  Facts only.
KNOWN_DEPRECATED_MEMBERS: dict[tuple[str, str], str] = {
    ("Instance", "Remove"): "Destroy",
    ("Instance", "remove"): "Destroy",
    ("Instance", "children"): "GetChildren",
    ("ServiceProvider", "service"): "GetService",
    ("Players", "playerFromCharacter"): "GetPlayerFromCharacter",
    ("Players", "players"): "GetPlayers",
    ("Humanoid", "LoadAnimation"): "Animator:LoadAnimation",
    ("Humanoid", "loadAnimation"): "Animator:LoadAnimation",
    ("AnimationController", "LoadAnimation"): "Animator:LoadAnimation",
    ("WorldRoot", "FindPartOnRay"): "Raycast",
    ("WorldRoot", "findPartOnRay"): "Raycast",
    ("WorldRoot", "FindPartOnRayWithIgnoreList"): "Raycast",
    ("WorldRoot", "FindPartOnRayWithWhitelist"): "Raycast",
    ("WorldRoot", "FindPartsInRegion3"): "GetPartBoundsInBox",
    ("WorldRoot", "findPartsInRegion3"): "GetPartBoundsInBox",
    ("WorldRoot", "FindPartsInRegion3WithIgnoreList"): "GetPartBoundsInBox",
    ("WorldRoot", "FindPartsInRegion3WithWhiteList"): "GetPartBoundsInBox",
    ("Model", "SetPrimaryPartCFrame"): "PivotTo",
    ("Model", "GetPrimaryPartCFrame"): "GetPivot",
    ("Model", "GetModelCFrame"): "GetPivot",
    ("Model", "GetModelSize"): "GetExtentsSize",
    ("BasePart", "Velocity"): "AssemblyLinearVelocity",
    ("BasePart", "RotVelocity"): "AssemblyAngularVelocity",
    ("Camera", "CoordinateFrame"): "CFrame",
}

# Deprecated global functions/values -> replacement (Roblox Creator Documentation, "Luau
# globals" reference; the task library announcement, 2021).  Facts only.
DEPRECATED_GLOBALS: dict[str, str] = {
    "wait": "task.wait",
    "Wait": "task.wait",
    "spawn": "task.spawn",
    "Spawn": "task.spawn",
    "delay": "task.delay",
    "Delay": "task.delay",
    "Game": "game",
    "Workspace": "workspace",
    "Version": "version",
    "ypcall": "pcall",
}

#: Security levels a game script or a plugin may use (Roblox's script security contexts):
#: members at other levels keep no type text.
USABLE_SECURITY = frozenset({"None", "PluginSecurity"})
#: Member tags the shipped file keeps (what the checks read).
KEPT_MEMBER_TAGS = ("Deprecated", "NotScriptable")
#: Class tags the shipped file keeps.
KEPT_CLASS_TAGS = ("Deprecated", "NotCreatable", "Service")

_RBX_DOM_TYPES = {
    "Bool": "boolean", "Int32": "number", "Int64": "number", "Float32": "number", "Float64": "number",
    "String": "string", "ProtectedString": "string", "Ref": "Instance?",
}
_PRIMITIVES = {"bool": "boolean", "int": "number", "int64": "number", "float": "number", "double": "number",
               "string": "string", "null": "nil"}
_GROUPS = {"Tuple": "...any", "Variant": "any", "Array": "{any}", "Dictionary": "{[any]: any}",
           "Map": "{[any]: any}", "Function": "(...any) -> ...any"}
_DATATYPE_SPELLING = {"Instances": "{Instance}", "Objects": "{Instance}"}
_KIND_CODE = {"Property": "P", "Function": "F", "Event": "E", "Callback": "C"}
_ENUM_WORD = re.compile(r"\bEnum([A-Z][A-Za-z0-9_]*)\b")


class SourceError(Exception):
    """A source file is missing or does not have the documented shape."""


def _load_json(path: Path, what: str) -> tuple[dict, bytes]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read the {what}: {exc.strerror}") from exc
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SourceError(f"{path}: the {what} must be a JSON object")
    return data, raw


def load_dump(path: Path) -> tuple[dict, bytes]:
    """Read ``Full-API-Dump.json``; raises :class:`SourceError` naming the file."""
    data, raw = _load_json(path, "API dump")
    for key in ("Classes", "Enums"):
        if not isinstance(data.get(key), list):
            raise SourceError(f"{path}: missing top-level list {key!r} (not a Roblox API dump)")
    return data, raw


def load_source(path: Path) -> tuple[dict, bytes]:
    """Read ``roblox-api.json``; raises :class:`SourceError` naming the file."""
    data, raw = _load_json(path, "API source")
    if not isinstance(data.get("classes"), dict):
        raise SourceError(f"{path}: missing top-level key 'classes' (an object)")
    return data, raw


# -- type spelling --------------------------------------------------------------------------------
def luau_type(t: dict | list | None) -> str:
    """A dump type (``{"Category", "Name"}``, or a list for several returns) in Luau spelling."""
    if t is None:
        return "()"
    if isinstance(t, list):
        return "(" + ", ".join(luau_type(x) for x in t) + ")"
    name = str(t.get("Name", "any"))
    optional = name.endswith("?")
    base = name[:-1] if optional else name
    cat = t.get("Category")
    if cat == "Primitive":
        out = _PRIMITIVES.get(base, base)
        if base == "null":
            return "nil"
    elif cat == "Enum":
        out = f"Enum.{base}"
    elif cat == "Group":
        out = _GROUPS.get(base, "any")
    elif cat == "DataType":
        out = _DATATYPE_SPELLING.get(base, base)
    else:  # Class
        out = base
    return out + "?" if optional and not out.endswith("?") else out


def _params(params: list) -> str:
    out = []
    for p in params or []:
        t = luau_type(p.get("Type"))
        if "Default" in p and not t.endswith("?") and not t.startswith("..."):
            t += "?"
        out.append(f"{t}" if t.startswith("...") else f"{p.get('Name', '_')}: {t}")
    return ", ".join(out)


def _returns(m: dict) -> str:
    rt = m.get("ReturnType")
    if rt is None or (isinstance(rt, dict) and rt.get("Name") == "null"):
        return "()"
    return luau_type(rt)


def _dump_text(m: dict) -> str:
    kind = m["MemberType"]
    if kind == "Property":
        return luau_type(m.get("ValueType"))
    if kind == "Event":
        types = [luau_type(p.get("Type")) for p in m.get("Parameters") or []]
        return f"RBXScriptSignal<{', '.join(types)}>" if types else "RBXScriptSignal<>"
    if kind == "Callback":
        return f"({_params(m.get('Parameters'))}) -> {_returns(m)}"
    return f"({_params(m.get('Parameters'))}): {_returns(m)}"


def _security(m: dict) -> str:
    sec = m.get("Security", "None")
    if isinstance(sec, dict):
        read, write = sec.get("Read", "None"), sec.get("Write", "None")
        return read if read == write else f"{read}/{write}"
    return str(sec)


def _usable(security: str) -> bool:
    return security.split("/")[0] in USABLE_SECURITY


def _fix_lsp_type(text: str | None, enum_names: set[str]) -> str | None:
    if text is None:
        return None
    if text in _RBX_DOM_TYPES:
        return _RBX_DOM_TYPES[text]
    return _ENUM_WORD.sub(lambda m: f"Enum.{m.group(1)}" if m.group(1) in enum_names else m.group(0), text)


def _lsp_kind(info: dict) -> str | None:
    kind = info.get("kind")
    text = info.get("type") if "type" in info else info.get("signature")
    if kind == "Property" and text and text.startswith("(") and "->" in text:
        kind = "Callback"
    return _KIND_CODE.get(kind)


def _lsp_entry(code: str, text: str | None) -> list:
    """An entry from a luau-lsp declaration: a function's ``(params): result`` signature is
    split at its top-level ``:`` into parameters and result."""
    if code == "F" and text and text.startswith("("):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch in "({[<"
            depth -= ch in ")}]>"
            if depth == 0:
                rest = text[i + 1:].lstrip()
                if rest.startswith(":"):
                    return [code, "", text[:i + 1], rest[1:].strip()]
                break
    return [code, "", text]


def _pack(entry: list) -> list:
    while len(entry) > 1 and entry[-1] in (None, "", [], ()):
        entry.pop()
    return entry


# -- the build ------------------------------------------------------------------------------------
def build(dump: dict, source: dict | None, provenance: dict) -> tuple[dict, list[str]]:
    """Return ``(compact data, warnings)`` from the parsed dump and (optional) source."""
    warnings: list[str] = []
    source = source or {"classes": {}}
    lsp_classes: dict = source.get("classes", {})

    # --- enums --------------------------------------------------------------------------------
    enums: dict[str, list[str]] = {}
    legacy: dict[str, dict[str, str]] = {}
    deprecated_items: dict[str, list[str]] = {}
    for e in dump["Enums"]:
        name = e["Name"]
        items = []
        for item in e.get("Items", []):
            items.append(item["Name"])
            if "Deprecated" in (item.get("Tags") or []):
                deprecated_items.setdefault(name, []).append(item["Name"])
            for old in item.get("LegacyNames") or []:
                legacy.setdefault(name, {})[old] = item["Name"]
        if "Deprecated" in (e.get("Tags") or []):
            deprecated_items.setdefault(name, []).append("")
        enums[name] = items
    # luau-lsp's enums (declared as Enum<Name>_INTERNAL classes): items the dump lacks
    for cname, cls in lsp_classes.items():
        if cls.get("superclass") == "Enum" and cname.startswith("Enum") and cname.endswith("_INTERNAL"):
            ename = cname[len("Enum"):-len("_INTERNAL")]
            item_type = f"Enum{ename}"
            extra = [m for m, info in cls.get("members", {}).items()
                     if info.get("kind") == "Property" and info.get("type") == item_type]
            have = set(enums.get(ename, ())) | set(legacy.get(ename, {}))
            enums.setdefault(ename, []).extend(m for m in extra if m not in have)
    enum_names = set(enums)

    # --- classes ------------------------------------------------------------------------------
    dump_classes = {c["Name"]: c for c in dump["Classes"]}
    classes_out: dict[str, list] = {}
    for cname in sorted(dump_classes):
        c = dump_classes[cname]
        sup = c.get("Superclass")
        if sup in (None, "<<<ROOT>>>") or sup not in dump_classes:
            sup = None
        tags = sorted(t for t in c.get("Tags") or [] if isinstance(t, str) and t in KEPT_CLASS_TAGS)
        classes_out[cname] = [sup, tags, {}]

    deprecated: dict[tuple[str, str], str | None] = {}
    for cname, c in dump_classes.items():
        for m in c.get("Members", []):
            tags = m.get("Tags") or []
            if "Deprecated" not in tags:
                continue
            preferred = next((t["PreferredDescriptorName"] for t in tags
                              if isinstance(t, dict) and "PreferredDescriptorName" in t), None)
            deprecated[(cname, m["Name"])] = KNOWN_DEPRECATED_MEMBERS.get((cname, m["Name"]), preferred)
    dump_names = {cname: {m["Name"] for m in c.get("Members", [])} for cname, c in dump_classes.items()}
    for key in KNOWN_DEPRECATED_MEMBERS:
        if key not in deprecated:
            warnings.append(f"deprecated-member table: {key[0]}.{key[1]} is not tagged Deprecated in the dump")

    def ancestors(name: str) -> list[str]:
        out: list[str] = []
        while name is not None and name in classes_out and name not in out:
            out.append(name)
            name = classes_out[name][0]
        return out

    def replacement(cname: str, mname: str) -> str | None:
        repl = deprecated.get((cname, mname))
        if (repl is not None and (cname, mname) not in KNOWN_DEPRECATED_MEMBERS
                and (repl == mname or not any(repl in dump_names[a] for a in ancestors(cname)))):
            return None  # a member of another class (UserInputService.GetUserCFrame -> VRService's)
        seen = {mname}
        while repl is not None and repl.isidentifier() and repl not in seen:
            seen.add(repl)
            nxt = next((deprecated[(a, repl)] for a in ancestors(cname) if (a, repl) in deprecated), None)
            if nxt is None:
                break
            repl = nxt
        return repl

    for cname, c in dump_classes.items():
        lsp_members = lsp_classes.get(cname, {}).get("members", {})
        members = classes_out[cname][2]
        for m in c.get("Members", []):
            mname = m["Name"]
            code = _KIND_CODE.get(m.get("MemberType"))
            if code is None:
                warnings.append(f"{cname}.{mname}: unknown member kind {m.get('MemberType')!r}; skipped")
                continue
            security = _security(m)
            tags = [t for t in KEPT_MEMBER_TAGS if t in (m.get("Tags") or [])]
            repl = replacement(cname, mname) if "Deprecated" in tags else None
            sec = "" if security == "None" else security
            if not _usable(security):
                members[mname] = _pack([code, sec, None, None, tags, repl])
                continue
            lsp = lsp_members.get(mname)
            text = returns = None
            if code == "F":
                text, returns = f"({_params(m.get('Parameters'))})", _returns(m)
            elif lsp is not None and _lsp_kind(lsp) == code:
                text = _fix_lsp_type(lsp.get("type"), enum_names)
            if text is None:
                text = _dump_text(m)
            members[mname] = _pack([code, sec, text, returns, tags, repl])
        # members luau-lsp / rbx-dom declare that the dump lacks (engine children declared as
        # properties, serialised-only properties): kept, so nothing valid becomes unknown
        inherited = {n for a in ancestors(cname) for n in (m["Name"] for m in dump_classes[a].get("Members", []))}
        for mname, info in lsp_members.items():
            if mname in inherited:
                continue
            code = _lsp_kind(info)
            if code is None:
                continue
            text = _fix_lsp_type(info.get("type") if "type" in info else info.get("signature"), enum_names)
            members[mname] = _pack(_lsp_entry(code, text))
        classes_out[cname][2] = dict(sorted(members.items()))
    for cname in sorted(set(lsp_classes) - set(dump_classes)):
        cls = lsp_classes[cname]
        if cls.get("superclass") is not None and cls.get("superclass") in dump_classes:
            warnings.append(f"class {cname} is in the API source but not in the dump; left out")

    # --- data types (the dump describes instances only) --------------------------------------
    datatypes_out: dict[str, dict] = {}
    for cname in sorted(lsp_classes):
        cls = lsp_classes[cname]
        if cname in dump_classes or cls.get("superclass") is not None or cname == "Object":
            continue
        if cname.startswith("Enum") and cname not in ("Enum", "EnumItem", "Enums"):
            continue
        members = {}
        for mname in sorted(cls.get("members", {})):
            info = cls["members"][mname]
            code = _lsp_kind(info)
            if code is None:
                continue
            text = _fix_lsp_type(info.get("type") if "type" in info else info.get("signature"), enum_names)
            members[mname] = _pack(_lsp_entry(code, text))
        datatypes_out[cname] = members

    services = sorted(n for n, c in classes_out.items() if "Service" in c[1])
    creatable = sorted(n for n, c in classes_out.items() if "NotCreatable" not in c[1])
    out = {
        "format": FORMAT,
        "provenance": provenance,
        "services": services,
        "creatable": creatable,
        "classes": classes_out,
        "datatypes": datatypes_out,
        "enums": {k: enums[k] for k in sorted(enums)},
        "enum_legacy_names": {k: dict(sorted(legacy[k].items())) for k in sorted(legacy)},
        "enum_deprecated": {k: deprecated_items[k] for k in sorted(deprecated_items)},
        "deprecated_globals": dict(sorted(DEPRECATED_GLOBALS.items())),
    }
    return out, warnings


def _roblox_version(dump_path: Path) -> str | None:
    """The Roblox version the dump was written by, as its README beside it states it."""
    try:
        text = (dump_path.parent / "README.md").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"version (\d+\.\d+\.\d+\.\d+)", text)
    return m.group(1) if m else None


def provenance_for(dump_path: Path, dump_raw: bytes, source_path: Path | None, source: dict | None,
                   source_raw: bytes | None) -> dict:
    """The shipped file's ``provenance``: the script, the dump's name, SHA-256 and Roblox
    version, and (when given) the API source's name, SHA-256 and upstream."""
    prov: dict = {
        "generated_by": "scripts/build_api_data.py",
        "dump": {"file": dump_path.name, "sha256": hashlib.sha256(dump_raw).hexdigest(),
                 "roblox_version": _roblox_version(dump_path),
                 "origin": "Roblox client API dump, as republished by the apiRBX/RCT client tracker"},
        "notes": ("Facts only (class, member and enum names, types, tags, security). Classes, members, "
                  "enums, legacy enum names, deprecation and security from Roblox's API dump; data type "
                  "members, luau-lsp's type spelling and members the dump lacks from the API source."),
    }
    if source_path is not None and source_raw is not None:
        prov["source"] = {"file": source_path.name, "sha256": hashlib.sha256(source_raw).hexdigest(),
                          "upstream": (source or {}).get("source", {})}
    return prov


def render(data: dict) -> str:
    """The shipped file's text (minified, key order as built: deterministic)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, default=DEFAULT_DUMP, help="Roblox's Full-API-Dump.json")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                        help="roblox-api.json (data types, luau-lsp spelling); 'none' to go without")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it (exit 1 if it differs)")
    args = parser.parse_args(argv)
    try:
        dump, dump_raw = load_dump(args.dump)
        source = source_raw = None
        source_path = None if str(args.source) == "none" else args.source
        if source_path is not None:
            source, source_raw = load_source(source_path)
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    prov = provenance_for(args.dump, dump_raw, source_path, source, source_raw)
    data, warnings = build(dump, source, prov)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    text = render(data)
    if args.check:
        try:
            current = args.out.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != text:
            print(f"{args.out} differs from what the sources give; regenerate it with {Path(__file__).name}",
                  file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text.encode('utf-8')):,} bytes; {len(data['classes'])} classes, "
          f"{len(data['datatypes'])} data types, {len(data['enums'])} enums, {len(data['services'])} services, "
          f"{len(data['creatable'])} creatable)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
