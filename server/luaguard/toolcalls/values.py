"""Does a JSON value fit a Roblox property type?  (``wrong_property_type``)

Checked types (the property's Luau type from the API data; a trailing ``?`` also allows
``null``):

=============================  ==========================================================
``number``                     a JSON number, or a numeric string (``"0.5"``)
``string``, ``ContentId`` ...  a string
``boolean``                    ``true``/``false``, or the strings ``"true"``/``"false"``
``Vector3`` / ``Vector2``      ``[x, y, z]``, ``{"x": .., "y": .., "z": ..}`` (any case),
                               ``"1, 2, 3"`` or ``"Vector3.new(1, 2, 3)"``
``Color3``                     ``[r, g, b]``, ``{"r", "g", "b"}``, ``"r, g, b"``,
                               ``"#rrggbb"``, ``"Color3.fromRGB(...)"``; components 0–255
``UDim2`` / ``UDim``           ``[[xs, xo], [ys, yo]]`` (Rojo's form), ``[xs, xo, ys, yo]``,
                               ``{"X": {"Scale", "Offset"}, "Y": ...}``, ``"0.5, 0, 0.5, 0"``,
                               ``"UDim2.new(...)"``/``fromScale``/``fromOffset``
``CFrame``                     3 (position) or 12 numbers, or ``{"position": [...]}``
``BrickColor``                 a name string or a number
``Enum.<Name>``                an item name (``"Plastic"``), ``"Enum.Material.Plastic"``,
                               or the item's number; when the API data lists no items for
                               the enum any name is accepted
an instance class (``BasePart``) an instance path that exists and ``IsA`` the class
=============================  ==========================================================

Other data types (``NumberSequence``, ``Rect``, ``Font`` ...) are not checked (accepted).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..fuzzy import rank

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUM_RE = re.compile(_NUMBER)
_CTOR = re.compile(r"^\s*(?:[A-Za-z0-9]+\s*\.\s*(?:new|fromRGB|fromScale|fromOffset|fromHex)\s*)?\(?(.*?)\)?\s*$", re.S)
_HEX = re.compile(r"^#?([0-9a-fA-F]{6})$")

_STRINGISH = frozenset({"string", "ContentId", "Content", "BinaryString", "ProtectedString", "SharedString"})
_VECTORS = {"Vector3": 3, "Vector2": 2, "Vector3int16": 3, "Vector2int16": 2}


@dataclass(frozen=True, slots=True)
class ValueProblem:
    """Why a value does not fit: ``message`` for the model, ranked ``suggestions``,
    ``code`` (``wrong_property_type`` or ``unknown_path`` for a missing instance)."""

    message: str
    suggestions: tuple[str, ...] = ()
    code: str = "wrong_property_type"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, list):
        if len(value) <= 6 and all(isinstance(v, (int, float, str, bool)) or v is None for v in value):
            text = json.dumps(value)
            if len(text) <= 60:
                return f"the array {text}"
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object with keys " + ", ".join(sorted(map(str, value))[:6])
    return type(value).__name__


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _numbers_from_string(s: str) -> list[float] | None:
    m = _CTOR.match(s)
    inner = m.group(1) if m else s
    inner = inner.replace("{", " ").replace("}", " ").replace("(", " ").replace(")", " ")
    pieces = [p for p in re.split(r"[,\s]+", inner.strip()) if p]
    if not pieces:
        return None
    out = []
    for p in pieces:
        if not re.fullmatch(_NUMBER, p):
            return None
        out.append(float(p))
    return out


def _flat_numbers(value: Any, depth: int = 0) -> list[float] | None:
    """Numbers of a flat or once-nested array, a string of numbers, or an object whose
    values are numbers (or objects of numbers); ``None`` if anything else is inside."""
    if isinstance(value, str):
        return _numbers_from_string(value)
    if depth > 2:
        return None
    if isinstance(value, list):
        out: list[float] = []
        for item in value:
            if _is_num(item):
                out.append(float(item))
            elif isinstance(item, (list, dict)):
                sub = _flat_numbers(item, depth + 1)
                if sub is None:
                    return None
                out.extend(sub)
            else:
                return None
        return out
    return None


def _keyed(value: dict, keys: tuple[str, ...]) -> list[float] | None:
    low = {str(k).lower(): v for k, v in value.items()}
    out = []
    for k in keys:
        v = low.get(k)
        if not _is_num(v):
            return None
        out.append(float(v))
    return out


def _udim_pair(v: Any) -> list[float] | None:
    if isinstance(v, dict):
        return _keyed(v, ("scale", "offset"))
    if isinstance(v, list) and len(v) == 2 and all(_is_num(x) for x in v):
        return [float(x) for x in v]
    return None


def check_value(api, type_name: str, value: Any, resolve_instance: Callable[[str], Any] | None = None) -> ValueProblem | None:
    """``None`` when ``value`` fits the Luau type ``type_name``, else a :class:`ValueProblem`.

    ``resolve_instance(path)`` returns the instance at an instance path or ``None`` (used
    for instance-typed properties; without it such values are only checked to be strings).
    """
    optional = type_name.endswith("?")
    base = type_name.rstrip("?")
    if value is None:
        return None if optional else ValueProblem(f"it is a {base} and cannot be null")
    got = _describe(value)
    if base in ("number", "int", "int64", "float", "double"):
        if _is_num(value):
            return None
        if isinstance(value, str):
            try:
                if math.isfinite(float(value)):
                    return None
            except ValueError:
                pass
        return ValueProblem(f"it is a number; got {got}")
    if base in _STRINGISH:
        kind = "a string" if base == "string" else f"a {base} (a string)"
        return None if isinstance(value, str) else ValueProblem(f"it is {kind}; got {got}")
    if base == "boolean":
        if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in ("true", "false")):
            return None
        return ValueProblem(f"it is a boolean (true or false); got {got}")
    if base in _VECTORS:
        n = _VECTORS[base]
        nums = _keyed(value, ("x", "y", "z")[:n]) if isinstance(value, dict) else _flat_numbers(value)
        if nums is not None and len(nums) == n:
            return None
        example = "[4, 1, 2]" if n == 3 else "[0.5, 0.5]"
        return ValueProblem(f"it is a {base}: send {n} numbers such as {example} or \"{example[1:-1]}\"; got {got}")
    if base in ("Color3", "Color3uint8"):
        nums: list[float] | None = None
        if isinstance(value, str) and _HEX.match(value.strip()):
            return None
        if isinstance(value, dict):
            nums = _keyed(value, ("r", "g", "b"))
        else:
            nums = _flat_numbers(value)
        if nums is not None and len(nums) == 3 and all(0 <= x <= 255 for x in nums):
            return None
        return ValueProblem(f"it is a Color3: send [r, g, b] with components 0–1 (or 0–255), or \"#rrggbb\"; got {got}")
    if base in ("UDim2", "UDim"):
        want = 4 if base == "UDim2" else 2
        nums = None
        if isinstance(value, dict):
            low = {str(k).lower(): v for k, v in value.items()}
            if base == "UDim2" and "x" in low and "y" in low:
                a, b = _udim_pair(low["x"]), _udim_pair(low["y"])
                nums = a + b if a is not None and b is not None else None
            elif base == "UDim2":
                nums = _keyed(value, ("xscale", "xoffset", "yscale", "yoffset"))
            else:
                nums = _udim_pair(value)
        elif isinstance(value, str) and re.search(r"fromScale|fromOffset", value):
            two = _numbers_from_string(value)
            nums = two + two if two is not None and len(two) == 2 else None
        else:
            nums = _flat_numbers(value)
        if nums is not None and len(nums) == want:
            return None
        example = "[[0.5, 0], [0.5, 0]]" if base == "UDim2" else "[0.5, 0]"
        return ValueProblem(f"it is a {base}: send {example} (scale, offset per axis) or "
                            f"\"{'0.5, 0, 0.5, 0' if want == 4 else '0.5, 0'}\"; got {got}")
    if base == "CFrame":
        if isinstance(value, dict):
            low = {str(k).lower(): v for k, v in value.items()}
            pos = low.get("position", low.get("pos"))
            nums = _flat_numbers(pos) if pos is not None else None
            if nums is not None and len(nums) == 3:
                return None
        else:
            nums = _flat_numbers(value)
            if nums is not None and len(nums) in (3, 12):
                return None
        return ValueProblem(f"it is a CFrame: send a position [x, y, z], 12 numbers, or "
                            f"{{\"position\": [x, y, z]}}; got {got}")
    if base == "BrickColor":
        if isinstance(value, str) or _is_num(value):
            return None
        return ValueProblem(f"it is a BrickColor: send a color name such as \"Bright red\"; got {got}")
    if base.startswith("Enum."):
        return _check_enum(api, base[5:], value, got)
    if api.has_class(base):
        if not isinstance(value, str):
            return ValueProblem(f"it refers to a {base}: send the instance path as a string; got {got}")
        if resolve_instance is None:
            return None
        node = resolve_instance(value)
        if node is None:
            return ValueProblem(f"it refers to a {base}, and no instance exists at '{value}'", code="unknown_path")
        if not api.is_a(node.class_name, base) and not node.class_guessed:
            return ValueProblem(f"it refers to a {base}, but '{value}' is a {node.class_name}")
        return None
    return None


def _check_enum(api, enum: str, value: Any, got: str) -> ValueProblem | None:
    items = api.enum_items(enum)
    if _is_num(value) and float(value).is_integer():
        return None
    if isinstance(value, dict) and "Enum" in value:  # Rojo's explicit {"Enum": ...} form
        value = value["Enum"]
        if _is_num(value):
            return None
    if not isinstance(value, str):
        return ValueProblem(f"it is an Enum.{enum}: send an item name such as "
                            f"\"{items[0] if items else 'ItemName'}\"; got {got}")
    name = value.strip()
    m = re.fullmatch(r"(?:Enum\.)?([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)", name)
    if m:
        if m.group(1) != enum:
            return ValueProblem(f"it is an Enum.{enum}, not an Enum.{m.group(1)}; got {got}",
                                tuple(f"Enum.{enum}.{i}" for i, _ in rank(m.group(2), items or ())[:3]))
        name = m.group(2)
    if not items:  # the API data lists no items for this enum: accept any name
        return None
    if name in items:
        return None
    ranked = [c for c, _ in rank(name, items, limit=5)]
    listing = ", ".join(items[:12]) + (f", … ({len(items)} items)" if len(items) > 12 else "")
    return ValueProblem(f"Enum.{enum} has no item '{name}' (items: {listing})", tuple(ranked))
