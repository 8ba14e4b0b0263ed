"""Roblox API facts: classes, members, services, creatable classes, enums, data types.

The facts come from ``server/luaguard/data/roblox_api.json``, a compact file that
``scripts/build_api_data.py`` derives from Roblox's own API dump (``Full-API-Dump.json``:
classes, members with their security, tags, parameter and return types, enums with their
legacy names) and, for data types and luau-lsp's type spelling, from the shared API facts
(see the file's ``provenance`` field).  Loading takes about 10 ms: the JSON is parsed once
and :class:`Member` objects are built on demand and cached.

Class hierarchy: every instance class descends from ``Instance``, which descends from
``Object`` (Roblox's root class since 2024; a few non-instance engine objects such as
``EditableImage`` also descend from ``Object``).  Data types (``Vector3``, ``CFrame``,
``RBXScriptConnection``, ``Enum`` ...) are kept apart from classes: see
:meth:`RobloxApi.datatype_member`.
"""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ApiDataError", "Member", "RobloxApi", "load_api", "DEFAULT_API_PATH", "GAME_SECURITY", "PLUGIN_SECURITY"]

DEFAULT_API_PATH = Path(__file__).resolve().parent.parent / "data" / "roblox_api.json"

#: The data file format this module reads (see ``scripts/build_api_data.py``).
FORMAT = 2

_KINDS = {"P": "Property", "F": "Function", "E": "Event", "C": "Callback"}


class ApiDataError(Exception):
    """The API data file is missing, unreadable, not JSON, or not in the expected format."""


#: Roblox's script security levels (the dump's ``Security``) a game script may use, and
#: those a Studio plugin may use (Roblox's "Script capabilities and security" reference:
#: plugins run with ``PluginSecurity``; ``LocalUserSecurity`` is the command bar's,
#: ``RobloxScriptSecurity`` Roblox's own core scripts', ``RobloxSecurity`` and
#: ``NotAccessibleSecurity`` nobody's).
GAME_SECURITY = frozenset({"None"})
PLUGIN_SECURITY = frozenset({"None", "PluginSecurity"})


@dataclass(frozen=True, slots=True)
class Member:
    """One member of a class or data type.

    ``kind`` is ``"Property" | "Function" | "Event" | "Callback"``.  ``type`` is the Luau
    type of a property, event (``RBXScriptSignal<...>``) or callback (a function type);
    ``signature`` is a function's ``(params): result`` text and ``returns`` its result type
    (``"OrderedDataStore"``, ``"Instance"``, ``"()"``; both ``None`` for other kinds, and
    for members no script may use, whose types the data leaves out).  ``declared_in`` is
    the class that declares the member (an ancestor of the class asked about, for
    inherited members).  ``tags`` holds ``"Deprecated"`` for deprecated members, in which
    case ``deprecated_replacement`` may name what to use instead (``"Destroy"``,
    ``"Animator:LoadAnimation"``), and ``"NotScriptable"`` for members scripts cannot
    reach.  ``security`` is the dump's level (``"None"``, ``"PluginSecurity"``,
    ``"RobloxScriptSecurity"`` ...; ``"read/write"`` for a property whose levels differ).
    """

    name: str
    kind: str
    type: str | None
    signature: str | None
    declared_in: str
    tags: tuple[str, ...]
    deprecated_replacement: str | None
    security: str = "None"
    returns: str | None = None

    @property
    def deprecated(self) -> bool:
        return "Deprecated" in self.tags

    @property
    def read_security(self) -> str:
        """The level needed to read the member (or call it)."""
        return self.security.split("/", 1)[0]

    @property
    def write_security(self) -> str:
        """The level needed to assign the member (a property)."""
        return self.security.rsplit("/", 1)[-1]

    def usable(self, plugin: bool = False) -> bool:
        """Can a game script (``plugin``: a Studio plugin) read or call this member?"""
        allowed = PLUGIN_SECURITY if plugin else GAME_SECURITY
        return self.read_security in allowed and "NotScriptable" not in self.tags


def _make_member(name: str, raw: list, declared_in: str) -> Member:
    """A :class:`Member` from a format-2 entry ``[k, security, text, returns, tags,
    replacement]`` (trailing empty fields left out; see ``scripts/build_api_data.py``)."""
    n = len(raw)
    kind = _KINDS.get(raw[0], raw[0])
    security = (raw[1] if n > 1 else "") or "None"
    text = raw[2] if n > 2 else None
    returns = raw[3] if n > 3 else None
    tags = tuple(raw[4]) if n > 4 and raw[4] else ()
    repl = raw[5] if n > 5 else None
    if kind == "Function":
        sig = f"{text}: {returns}" if text is not None and returns is not None else text
        return Member(name, kind, None, sig, declared_in, tags, repl, security, returns)
    return Member(name, kind, text, None, declared_in, tags, repl, security)


class RobloxApi:
    """Queries over the Roblox API facts.

    Attributes: ``services`` (class names valid for ``game:GetService``), ``creatable``
    (class names valid for ``Instance.new``), ``enums`` (``{"Material": ("Air", ...)}``,
    current item names), ``enum_legacy_names`` (``{"KeyCode": {"Unknown": "None"}}``: old
    names that still work), ``enum_deprecated`` (``{"KeyCode": frozenset({"World0", ...})}``;
    ``""`` in the set: the enum itself), ``deprecated_globals`` (``{"wait": "task.wait",
    ...}``), ``provenance`` (dict).
    Lookups are case-sensitive, as Roblox's are.  Results of :meth:`member` and
    :meth:`members` are cached per instance.
    """

    __slots__ = (
        "services", "creatable", "enums", "enum_legacy_names", "enum_deprecated", "deprecated_globals",
        "provenance", "_classes", "_datatypes", "_class_names", "_supers", "_members_cache", "_dt_cache",
        "_subclasses", "_subclass_members", "_suggest", "_member_names",
    )

    def __init__(self, data: dict[str, Any]) -> None:
        """Build from the parsed compact data (see ``scripts/build_api_data.py``).

        Raises :class:`ApiDataError` when required keys are missing.
        """
        try:
            self._classes: dict[str, list] = data["classes"]
            self.services: frozenset[str] = frozenset(data["services"])
            self.creatable: frozenset[str] = frozenset(data["creatable"])
            self.enums: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in data["enums"].items()}
        except (KeyError, TypeError, AttributeError) as exc:
            raise ApiDataError(f"API data lacks or mistypes a required field: {exc}") from exc
        self.enum_legacy_names: dict[str, dict[str, str]] = dict(data.get("enum_legacy_names", {}))
        self.enum_deprecated: dict[str, frozenset[str]] = {
            k: frozenset(v) for k, v in data.get("enum_deprecated", {}).items()}
        self._datatypes: dict[str, dict] = data.get("datatypes", {})
        self.deprecated_globals: dict[str, str] = dict(data.get("deprecated_globals", {}))
        self.provenance: dict = data.get("provenance", {})
        self._class_names: tuple[str, ...] | None = None
        self._supers: dict[str, tuple[str, ...]] = {}
        self._members_cache: dict[str, dict[str, Member]] = {}
        self._dt_cache: dict[str, dict[str, Member]] = {}
        self._subclasses: dict[str, tuple[str, ...]] | None = None
        self._subclass_members: dict[str, dict[str, Member]] = {}
        self._suggest: dict[tuple, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._member_names: frozenset[str] | None = None

    # --- classes ------------------------------------------------------------------------------
    def has_class(self, name: str) -> bool:
        """True for an instance class name (``"Part"``); data types and enums are not classes."""
        return name in self._classes

    def class_names(self) -> tuple[str, ...]:
        """All class names, sorted (for fuzzy "did you mean" suggestions)."""
        if self._class_names is None:
            self._class_names = tuple(sorted(self._classes))
        return self._class_names

    def class_tags(self, name: str) -> tuple[str, ...]:
        """The class's tags (``"Service"``, ``"NotCreatable"``, ``"Deprecated"`` ...); () if unknown."""
        entry = self._classes.get(name)
        return tuple(entry[1]) if entry else ()

    def superclasses(self, name: str) -> tuple[str, ...]:
        """``name`` first, then its parent class ... up to ``Instance`` and ``Object``.

        ``()`` for an unknown class.
        """
        cached = self._supers.get(name)
        if cached is not None:
            return cached
        chain: list[str] = []
        cur: str | None = name
        while cur is not None and cur in self._classes and cur not in chain:
            chain.append(cur)
            cur = self._classes[cur][0]
        result = tuple(chain)
        self._supers[name] = result
        return result

    def is_a(self, class_name: str, base: str) -> bool:
        """``Instance:IsA`` semantics: ``class_name`` is ``base`` or inherits from it."""
        return base in self.superclasses(class_name)

    def subclasses(self, name: str) -> tuple[str, ...]:
        """Every class that inherits from ``name``, at any depth (not ``name`` itself;
        sorted; ``()`` for a leaf or an unknown class)."""
        if self._subclasses is None:
            children: dict[str, list[str]] = {}
            for cls, entry in self._classes.items():
                if entry[0] is not None:
                    children.setdefault(entry[0], []).append(cls)
            out: dict[str, tuple[str, ...]] = {}

            def walk(c: str) -> tuple[str, ...]:
                got = out.get(c)
                if got is None:
                    acc: list[str] = []
                    for k in children.get(c, ()):
                        acc.append(k)
                        acc.extend(walk(k))
                    got = out[c] = tuple(sorted(set(acc)))
                return got

            for c in self._classes:
                walk(c)
            self._subclasses = out
        return self._subclasses.get(name, ())

    def subclass_members(self, class_name: str) -> dict[str, Member]:
        """Members that some subclass of ``class_name`` declares and ``class_name`` itself
        does not have (``{name: member}``, the first declaring class in name order): what
        a value only known to be *a* ``class_name`` may also have.  Cached; do not mutate."""
        got = self._subclass_members.get(class_name)
        if got is None:
            own = self.members(class_name)
            got = {}
            for sub in self.subclasses(class_name):
                for mname, raw in self._classes[sub][2].items():
                    if mname not in own and mname not in got:
                        got[mname] = _make_member(mname, raw, sub)
            self._subclass_members[class_name] = got
        return got

    def is_service(self, name: str) -> bool:
        return name in self.services

    def is_creatable(self, name: str) -> bool:
        return name in self.creatable

    # --- members ------------------------------------------------------------------------------
    def members(self, class_name: str) -> dict[str, Member]:
        """All members of ``class_name`` including inherited ones (``{}`` for unknown classes).

        A member a subclass re-declares shadows the ancestor's.  Do not mutate the result
        (it is cached).
        """
        cached = self._members_cache.get(class_name)
        if cached is not None:
            return cached
        result: dict[str, Member] = {}
        for cls in reversed(self.superclasses(class_name)):
            for mname, raw in self._classes[cls][2].items():
                result[mname] = _make_member(mname, raw, cls)
        self._members_cache[class_name] = result
        return result

    def member(self, class_name: str, name: str) -> Member | None:
        """The member ``name`` of ``class_name`` (walking inheritance), or ``None``."""
        return self.members(class_name).get(name)

    def member_names(self) -> frozenset[str]:
        """Every member name of every class: what a script may mean by ``x.Name`` on an
        instance whose class is not known."""
        if self._member_names is None:
            names: set[str] = set()
            for entry in self._classes.values():
                names.update(entry[2])
            self._member_names = frozenset(names)
        return self._member_names

    def suggestions(self, class_name: str, *, bound: bool, method: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(same kind, all)``: member names worth suggesting for a name missing from a
        value of class ``class_name`` - usable by scripts, not deprecated, not rbx-dom's
        lower-case serialization aliases (``siz``, ``shap``, listed untagged) - of the kind
        the code used (functions for a method call, other members for a ``.name``) and of
        every kind; with ``bound`` and ``method``, subclasses' methods too (the value may be
        of a subclass).  Cached per arguments."""
        key = (class_name, bound, method)
        got = self._suggest.get(key)
        if got is None:
            members = dict(self.members(class_name))
            if bound and method:  # (a `.name` on a bound is a child more often than a subclass's member)
                members.update(self.subclass_members(class_name))
            lowered = {n.lower() for n in members if n[:1].isupper()}
            names = []
            for name, m in members.items():
                if m.deprecated or not m.usable(plugin=True):
                    continue
                if name[:1].islower() and any(u.startswith(name.lower()) for u in lowered):
                    continue
                names.append(name)
            got = (tuple(n for n in names if (members[n].kind == "Function") == method), tuple(names))
            self._suggest[key] = got
        return got

    def property_type(self, class_name: str, prop: str) -> str | None:
        """The Luau type of property ``prop`` (``"number"``, ``"Enum.Material"``), or ``None``
        when it is not a property of the class."""
        m = self.member(class_name, prop)
        if m is None or m.kind != "Property":
            return None
        return m.type

    # --- data types and enums ----------------------------------------------------------------
    def has_datatype(self, name: str) -> bool:
        """True for a data type such as ``Vector3``, ``CFrame``, ``RBXScriptConnection``."""
        return name in self._datatypes

    def datatype_names(self) -> tuple[str, ...]:
        return tuple(sorted(self._datatypes))

    def datatype_members(self, name: str) -> dict[str, Member]:
        """Members of a data type (``Vector3.Magnitude``, ``CFrame:Inverse``); ``{}`` if unknown."""
        cached = self._dt_cache.get(name)
        if cached is None:
            cached = {m: _make_member(m, raw, name) for m, raw in self._datatypes.get(name, {}).items()}
            self._dt_cache[name] = cached
        return cached

    def datatype_member(self, name: str, member: str) -> Member | None:
        """Member ``member`` of data type ``name``, or ``None``.  Roblox still accepts the
        lower-case spellings its data types had before the API was capitalised
        (``cframe.lookVector``, ``v.magnitude``, ``cframe.p`` for ``Position``): such an
        alias gives the member it stands for (the API data lists the current names only).
        """
        members = self.datatype_members(name)
        got = members.get(member)
        if got is None and member:
            alias = _DATATYPE_ALIASES.get((name, member))
            if alias is None and member[0].islower():
                alias = member[0].upper() + member[1:]
            if alias is not None:
                got = members.get(alias)
        return got

    def enum_items(self, enum_name: str) -> tuple[str, ...] | None:
        """Items of ``Enum.<enum_name>`` (current names) or ``None`` when there is no such enum."""
        return self.enums.get(enum_name)

    def enum_legacy(self, enum_name: str, item: str) -> str | None:
        """The current name of ``item`` when it is a legacy name of an item of
        ``Enum.<enum_name>`` (``("RaycastFilterType", "Whitelist")`` -> ``"Include"``);
        ``None`` otherwise.  Legacy names still work in scripts."""
        names = self.enum_legacy_names.get(enum_name)
        return names.get(item) if names else None

    def enum_item_deprecated(self, enum_name: str, item: str) -> bool:
        """Is ``Enum.<enum_name>.<item>`` tagged ``Deprecated`` (``item`` ``""``: the enum)?"""
        items = self.enum_deprecated.get(enum_name)
        return bool(items) and item in items


#: Deprecated data type members that are not a lower-case spelling of the current one.
_DATATYPE_ALIASES = {("CFrame", "p"): "Position"}


def _read_api_file(path: Path) -> RobloxApi:
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise ApiDataError(
            f"{path}: Roblox API data file not found (regenerate it with scripts/build_api_data.py)"
        ) from exc
    except OSError as exc:
        raise ApiDataError(f"{path}: cannot read Roblox API data: {exc.strerror}") from exc
    try:
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        data = json.loads(raw)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiDataError(f"{path}: Roblox API data is corrupt: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ApiDataError(f"{path}: not a luaguard Roblox API data file (format {FORMAT} expected)")
    try:
        return RobloxApi(data)
    except ApiDataError as exc:
        raise ApiDataError(f"{path}: {exc}") from exc


@functools.cache
def _load_cached(path: Path) -> RobloxApi:
    return _read_api_file(path)


def load_api(path: Path | None = None) -> RobloxApi:
    """Load the Roblox API facts (default: the shipped file); cached per path.

    ``path`` may name a ``.json`` or a gzip-compressed ``.json.gz`` file in the format
    written by ``scripts/build_api_data.py``.  Raises :class:`ApiDataError` naming the file
    when it is missing, unreadable, corrupt or of another format.
    """
    resolved = (path or DEFAULT_API_PATH).resolve()
    return _load_cached(resolved)
