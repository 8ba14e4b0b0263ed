#!/usr/bin/env python3
"""Derive luaguard's compact shipped Roblox API file from the shared API facts.

Usage::

    python scripts/build_api_data.py [--source ../shared/roblox/roblox-api.json]
                                     [--out server/luaguard/data/roblox_api.json]

The source (``/work/shared/roblox/roblox-api.json``; see its README) lists classes with
``superclass``, ``tags`` and ``members`` (``kind`` Property|Function|Event, ``type`` or
``signature``), plus ``services``, ``creatable`` and ``enums``.  It was built from the
rbx-dom reflection database shipped with Rojo and the luau-lsp Roblox type declarations
(both MIT; facts only).  This script keeps what luaguard's checks need and writes one
minified JSON object (format 1)::

    {
      "format": 1,
      "provenance": {...},                 # where the facts came from, and how they were derived
      "services": [ClassName, ...],        # usable with game:GetService(...)
      "creatable": [ClassName, ...],       # accepted by Instance.new(...)
      "classes": {Name: [superclass|null, [tag, ...], {Member: [k, t, tags?, replacement?]}]},
      "datatypes": {Name: {Member: [k, t, ...]}},   # Vector3, CFrame, Enum, EnumItem ...
      "enums": {EnumName: [ItemName, ...]},
      "deprecated_globals": {name: replacement}
    }

where ``k`` is the member kind (``P`` Property, ``F`` Function, ``E`` Event, ``C``
Callback) and ``t`` is the Luau type (properties, events, callbacks) or the method
signature (functions).

Derivations (each a documented rule, not a guess):

* **Enums.**  The source's ``enums`` lists are empty, but the luau-lsp declarations
  describe every enum as a class ``Enum<Name>_INTERNAL`` (superclass ``Enum``) whose
  ``Property`` members of type ``Enum<Name>`` are the items.  Items are read from there
  and the ``Enum*`` helper classes are dropped from ``classes``.
* **Data types.**  Classes with no superclass that are not ``Object`` (Vector3, CFrame,
  RBXScriptConnection, Enum, EnumItem ...) go to ``datatypes``, so ``classes`` holds only
  the instance hierarchy (rooted at ``Object``, the parent of ``Instance``).
* **Callbacks.**  luau-lsp declares callbacks (``RemoteFunction.OnServerInvoke``...) as
  properties with a function type; those become kind ``C``.
* **Type spelling.**  Properties that only rbx-dom knows carry rbx-dom type names; they are
  rewritten to Luau spelling (``Bool`` -> ``boolean``, ``Int32``/``Int64``/``Float32``/
  ``Float64`` -> ``number``, ``String``/``ProtectedString`` -> ``string``, ``Ref`` ->
  ``Instance?``) and every ``Enum<Name>`` that names a known enum is written
  ``Enum.<Name>`` (the spelling scripts use), in types and signatures alike.
* **Deprecation.**  The source has no member-level deprecation tags (class tags do include
  ``Deprecated``).  Two sources of member deprecation are added:

  1. *camelCase aliases*: on instance classes, a member whose name starts with a lower-case
     letter and whose PascalCase twin (first letter upper-cased) is a member of the same
     class or an ancestor is a deprecated alias of that twin (``Instance:clone`` ->
     ``Clone``, ``Object:isA`` -> ``IsA``, ``Players.localPlayer`` -> ``LocalPlayer``).
     Roblox's API dump tags all of these ``Deprecated``.
  2. the table :data:`KNOWN_DEPRECATED_MEMBERS` below, from the Roblox Creator
     Documentation (create.roblox.com/docs/reference/engine), for members whose
     replacement is not a simple twin.

  Global functions are listed in :data:`DEPRECATED_GLOBALS` (same source; the ``task``
  library replaced ``wait``/``spawn``/``delay`` in 2021).  Entries whose member is not in
  the source data are skipped with a warning, so the table cannot invent members.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "roblox" / "roblox-api.json"
DEFAULT_OUT = REPO_ROOT / "server" / "luaguard" / "data" / "roblox_api.json"

FORMAT = 1

# Well-known deprecated members whose replacement is not their PascalCase twin.
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

_RBX_DOM_TYPES = {
    "Bool": "boolean",
    "Int32": "number",
    "Int64": "number",
    "Float32": "number",
    "Float64": "number",
    "String": "string",
    "ProtectedString": "string",
    "Ref": "Instance?",
}

_KIND_CODE = {"Property": "P", "Function": "F", "Event": "E", "Callback": "C"}
_ENUM_WORD = re.compile(r"\bEnum([A-Z][A-Za-z0-9_]*)\b")


class SourceError(Exception):
    """The source file is missing or does not have the documented shape."""


def _load_source(path: Path) -> dict:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read the API source: {exc.strerror}") from exc
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{path}: not valid JSON: {exc}") from exc
    for key in ("classes", "services", "creatable"):
        if key not in data:
            raise SourceError(f"{path}: missing top-level key {key!r}")
    if not isinstance(data["classes"], dict):
        raise SourceError(f"{path}: 'classes' must be an object")
    return data


def _ancestors(classes: dict, name: str) -> list[str]:
    out = []
    seen = set()
    while name and name in classes and name not in seen:
        seen.add(name)
        out.append(name)
        name = classes[name].get("superclass")
    return out


def build(source: dict, source_path: Path, source_bytes: bytes) -> tuple[dict, list[str]]:
    """Return ``(compact data, warnings)`` for the parsed ``source``."""
    warnings: list[str] = []
    classes_in: dict = source["classes"]

    # --- enums from Enum<Name>_INTERNAL classes -------------------------------------------
    enums: dict[str, list[str]] = {}
    for cname, cls in classes_in.items():
        if cls.get("superclass") == "Enum" and cname.startswith("Enum") and cname.endswith("_INTERNAL"):
            enum_name = cname[len("Enum"):-len("_INTERNAL")]
            item_type = f"Enum{enum_name}"
            items = sorted(
                m for m, info in cls.get("members", {}).items()
                if info.get("kind") == "Property" and info.get("type") == item_type
            )
            enums[enum_name] = items
    for enum_name, items in (source.get("enums") or {}).items():
        if items:  # prefer explicit items when the source has them
            enums[enum_name] = sorted(items)
        else:
            enums.setdefault(enum_name, [])
    enum_names = set(enums)

    def fix_type(text: str | None) -> str | None:
        if text is None:
            return None
        if text in _RBX_DOM_TYPES:
            return _RBX_DOM_TYPES[text]
        return _ENUM_WORD.sub(lambda m: f"Enum.{m.group(1)}" if m.group(1) in enum_names else m.group(0), text)

    def is_enum_helper(cname: str, cls: dict) -> bool:
        return cls.get("superclass") in ("Enum", "EnumItem") and cname.startswith("Enum")

    instance_classes = {
        name for name, cls in classes_in.items()
        if not is_enum_helper(name, cls) and "Object" in _ancestors(classes_in, name)
    }

    # --- deprecation -----------------------------------------------------------------------
    deprecated: dict[tuple[str, str], str] = {}
    for cname in instance_classes:
        inherited = {m for a in _ancestors(classes_in, cname) for m in classes_in[a].get("members", {})}
        for mname in classes_in[cname].get("members", {}):
            if mname[:1].islower():
                twin = mname[0].upper() + mname[1:]
                if twin in inherited:
                    deprecated[(cname, mname)] = twin
    for (cname, mname), repl in KNOWN_DEPRECATED_MEMBERS.items():
        if mname in classes_in.get(cname, {}).get("members", {}):
            deprecated[(cname, mname)] = repl
        else:
            warnings.append(f"deprecated-member table: {cname}.{mname} is not in the source; skipped")

    def pack_members(cname: str, members: dict) -> dict:
        out = {}
        for mname in sorted(members):
            info = members[mname]
            kind = info.get("kind")
            text = info.get("type") if "type" in info else info.get("signature")
            if kind == "Property" and text and text.startswith("(") and "->" in text:
                kind = "Callback"
            code = _KIND_CODE.get(kind)
            if code is None:
                warnings.append(f"{cname}.{mname}: unknown member kind {kind!r}; skipped")
                continue
            entry: list = [code, fix_type(text)]
            repl = deprecated.get((cname, mname))
            if repl is not None:
                entry += [["Deprecated"], repl]
            out[mname] = entry
        return out

    classes_out: dict[str, list] = {}
    datatypes_out: dict[str, dict] = {}
    for cname in sorted(classes_in):
        cls = classes_in[cname]
        if is_enum_helper(cname, cls):
            continue
        members = pack_members(cname, cls.get("members", {}))
        if cname in instance_classes:
            classes_out[cname] = [cls.get("superclass"), sorted(cls.get("tags", [])), members]
        else:
            datatypes_out[cname] = members

    services = sorted(s for s in source["services"] if s in classes_out)
    creatable = sorted(c for c in source["creatable"] if c in classes_out)
    for missing in sorted(set(source["services"]) - set(services)):
        warnings.append(f"service {missing} has no class entry; dropped")

    provenance = {
        "derived_from": str(source_path.name),
        "derived_from_sha256": hashlib.sha256(source_bytes).hexdigest(),
        "upstream": source.get("source", {}),
        "generated_by": "scripts/build_api_data.py",
        "notes": (
            "Facts only (class/member/enum names, types, tags). Enum items derived from "
            "luau-lsp Enum*_INTERNAL declarations; member deprecation derived from camelCase "
            "aliases plus a documented table (see scripts/build_api_data.py)."
        ),
    }
    out = {
        "format": FORMAT,
        "provenance": provenance,
        "services": services,
        "creatable": creatable,
        "classes": classes_out,
        "datatypes": datatypes_out,
        "enums": {k: enums[k] for k in sorted(enums)},
        "deprecated_globals": dict(sorted(DEPRECATED_GLOBALS.items())),
    }
    return out, warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--gzip", action="store_true", help="also write <out>.gz")
    args = parser.parse_args(argv)
    try:
        source_bytes = args.source.read_bytes() if args.source.exists() else b""
        source = _load_source(args.source)
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    data, warnings = build(source, args.source, source_bytes)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=False)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    size = len(text.encode("utf-8"))
    msg = (
        f"wrote {args.out} ({size:,} bytes; {len(data['classes'])} classes, "
        f"{len(data['datatypes'])} data types, {len(data['enums'])} enums, "
        f"{len(data['services'])} services, {len(data['creatable'])} creatable)"
    )
    if args.gzip:
        gz = args.out.with_suffix(args.out.suffix + ".gz")
        gz.write_bytes(gzip.compress(text.encode("utf-8"), 9, mtime=0))
        msg += f"; {gz.name} {gz.stat().st_size:,} bytes"
    print(msg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
