"""Roblox API facts: the shipped data file, RobloxApi queries, and the build script."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from luaguard.project.api import ApiDataError, Member, RobloxApi, load_api

REPO = Path(__file__).resolve().parent.parent


def _build_module():
    spec = importlib.util.spec_from_file_location("build_api_data", REPO / "scripts" / "build_api_data.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def api() -> RobloxApi:
    return load_api()


def test_load_api_is_cached(api: RobloxApi) -> None:
    assert load_api() is api


def test_services_and_creatable(api: RobloxApi) -> None:
    assert api.is_service("ReplicatedStorage")
    assert api.is_service("Players")
    assert not api.is_service("ReplicatedStorag")
    assert not api.is_service("Part")
    assert api.is_creatable("Part")
    assert api.is_creatable("Folder")
    assert not api.is_creatable("Players")  # services are not Instance.new-able
    assert "Workspace" in api.services


def test_superclasses_and_is_a(api: RobloxApi) -> None:
    chain = api.superclasses("Part")
    assert chain[0] == "Part"
    assert "BasePart" in chain and "Instance" in chain
    assert chain.index("BasePart") < chain.index("Instance")
    assert api.is_a("Part", "BasePart")
    assert api.is_a("Part", "Part")
    assert not api.is_a("Folder", "BasePart")
    assert api.superclasses("NoSuchClass") == ()


def test_class_names_sorted_and_excludes_datatypes(api: RobloxApi) -> None:
    names = api.class_names()
    assert list(names) == sorted(names)
    assert "Humanoid" in names
    assert "Vector3" not in names and not api.has_class("Vector3")
    assert not any(n.startswith("Enum") and n.endswith("_INTERNAL") for n in names)
    assert api.has_datatype("Vector3")


def test_member_lookup_walks_inheritance(api: RobloxApi) -> None:
    size = api.member("Part", "Size")
    assert size is not None and size.kind == "Property" and size.type == "Vector3"
    assert size.declared_in == "BasePart"
    ffc = api.member("Part", "FindFirstChild")
    assert ffc is not None and ffc.kind == "Function" and ffc.signature and "name: string" in ffc.signature
    assert ffc.type is None
    touched = api.member("Part", "Touched")
    assert touched is not None and touched.kind == "Event"
    assert api.member("Part", "WalkSpeed") is None
    assert api.member("NoSuchClass", "Name") is None


def test_members_includes_inherited_and_is_cached(api: RobloxApi) -> None:
    ms = api.members("Humanoid")
    assert "WalkSpeed" in ms and "Destroy" in ms and "Name" in ms
    assert api.members("Humanoid") is ms
    assert isinstance(ms["WalkSpeed"], Member)


def test_property_type(api: RobloxApi) -> None:
    assert api.property_type("Humanoid", "WalkSpeed") == "number"
    assert api.property_type("Humanoid", "Destroy") is None  # a function, not a property
    # rbx-dom type names are rewritten to Luau spelling; enums are written Enum.X
    assert api.property_type("BasePart", "Material") == "Enum.Material"


def test_callbacks_are_their_own_kind(api: RobloxApi) -> None:
    cb = api.member("RemoteFunction", "OnServerInvoke")
    assert cb is not None and cb.kind == "Callback" and cb.type and "->" in cb.type


def test_deprecated_members(api: RobloxApi) -> None:
    clone = api.member("Part", "clone")
    assert clone is not None and clone.deprecated and clone.deprecated_replacement == "Clone"
    remove = api.member("Model", "Remove")
    assert remove is not None and remove.deprecated_replacement == "Destroy"
    assert api.member("Model", "remove").deprecated_replacement == "Destroy"
    assert api.member("Folder", "children").deprecated_replacement == "GetChildren"
    assert api.member("Folder", "isA").deprecated_replacement == "IsA"
    assert api.member("Humanoid", "LoadAnimation").deprecated_replacement == "Animator:LoadAnimation"
    fresh = api.member("Part", "Clone")
    assert fresh is not None and not fresh.deprecated and fresh.deprecated_replacement is None


def test_deprecated_globals(api: RobloxApi) -> None:
    assert api.deprecated_globals["wait"] == "task.wait"
    assert api.deprecated_globals["spawn"] == "task.spawn"
    assert api.deprecated_globals["delay"] == "task.delay"
    assert api.deprecated_globals["Game"] == "game"
    assert "print" not in api.deprecated_globals


def test_enums(api: RobloxApi) -> None:
    assert "Plastic" in api.enums["Material"]
    assert "W" in api.enum_items("KeyCode")
    assert api.enum_items("NoSuchEnum") is None
    assert "FromName" not in api.enums["Material"]  # methods are not items


def test_datatype_members(api: RobloxApi) -> None:
    mag = api.datatype_member("Vector3", "Magnitude")
    assert mag is not None and mag.type == "number"
    assert api.datatype_member("Vector3", "Nope") is None


def test_provenance_recorded(api: RobloxApi) -> None:
    prov = api.provenance
    assert prov["dump"]["file"] == "Full-API-Dump.json"
    assert len(prov["dump"]["sha256"]) == 64 and prov["dump"]["roblox_version"].startswith("0.")
    up = prov["source"]["upstream"]
    assert "rbx_dom_database" in up and "luau_lsp_global_types" in up


def test_members_from_the_dump_carry_security_and_returns(api: RobloxApi) -> None:
    gods = api.member("DataStoreService", "GetOrderedDataStore")
    assert gods.returns == "OrderedDataStore" and gods.security == "None"
    assert gods.signature == "(name: string, scope: string?): OrderedDataStore"
    assert api.member("Workspace", "FindFirstChild").returns == "Instance"
    # a member only Roblox's own scripts may use, and one only plugins may use
    core = next(m for m in api.members("Players").values() if m.security == "RobloxScriptSecurity")
    assert not core.usable() and not core.usable(plugin=True)
    plug = api.member("Players", "SetChatStyle")
    assert plug.security == "PluginSecurity" and not plug.usable() and plug.usable(plugin=True)
    assert api.member("Part", "Anchored").usable()
    # a property readable by anyone but written by plugins only
    split = next(m for c in ("Script", "ModuleScript") for m in api.members(c).values()
                 if m.security == "None/PluginSecurity")
    assert split.read_security == "None" and split.write_security == "PluginSecurity"


def test_legacy_enum_names_and_deprecated_items(api: RobloxApi) -> None:
    assert api.enum_legacy("RaycastFilterType", "Whitelist") == "Include"
    assert api.enum_legacy("RaycastFilterType", "Blacklist") == "Exclude"
    assert api.enum_legacy("KeyCode", "Unknown") == "None"
    assert api.enum_legacy("Font", "GothamSemibold") == "GothamMedium"
    assert api.enum_legacy("KeyCode", "W") is None
    assert "Whitelist" not in api.enum_items("RaycastFilterType")  # never suggested
    assert api.enum_item_deprecated("KeyCode", "World0")
    assert not api.enum_item_deprecated("KeyCode", "W")


def test_subclasses_and_their_members(api: RobloxApi) -> None:
    subs = api.subclasses("BasePart")
    assert "Part" in subs and "MeshPart" in subs and "BasePart" not in subs
    assert "SpawnLocation" in api.subclasses("Part") and api.subclasses("SpawnLocation") == ()
    extra = api.subclass_members("Instance")
    assert "FireServer" in extra and "WalkSpeed" in extra and "Name" not in extra
    assert api.subclass_members("OrderedDataStore") == {}


def test_load_api_errors(tmp_path: Path) -> None:
    with pytest.raises(ApiDataError, match="not found"):
        load_api(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ApiDataError, match="corrupt"):
        load_api(bad)
    other = tmp_path / "other.json"
    other.write_text('{"format": 1}')
    with pytest.raises(ApiDataError, match="format 2"):
        load_api(other)
    badgz = tmp_path / "bad.json.gz"
    badgz.write_bytes(b"not gzip")
    with pytest.raises(ApiDataError, match="corrupt"):
        load_api(badgz)


def test_load_api_reads_gzip(tmp_path: Path) -> None:
    data = {"format": 2, "services": ["Svc"], "creatable": [], "enums": {}, "classes": {
        "Instance": [None, [], {"Name": ["P", "", "string"]}],
        "Svc": ["Instance", ["Service"], {}],
    }}
    path = tmp_path / "mini.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    api = load_api(path)
    assert api.is_service("Svc")
    assert api.member("Svc", "Name").declared_in == "Instance"


# --- the build script ----------------------------------------------------------------------------

def _t(cat: str, name: str) -> dict:
    return {"Category": cat, "Name": name}


SYNTHETIC_DUMP = {
    "Version": 1,
    "Classes": [
        {"Name": "Object", "Superclass": "<<<ROOT>>>", "Tags": ["NotCreatable"], "Members": [
            {"MemberType": "Function", "Name": "IsA", "Parameters": [{"Name": "className", "Type": _t("Primitive", "string")}],
             "ReturnType": _t("Primitive", "bool"), "Security": "None"},
            {"MemberType": "Function", "Name": "isA", "Parameters": [{"Name": "className", "Type": _t("Primitive", "string")}],
             "ReturnType": _t("Primitive", "bool"), "Security": "None",
             "Tags": ["Deprecated", {"PreferredDescriptorName": "IsA", "ThreadSafety": "Safe"}]},
        ]},
        {"Name": "Instance", "Superclass": "Object", "Tags": ["NotCreatable", "NotReplicated"], "Members": [
            {"MemberType": "Property", "Name": "Name", "ValueType": _t("Primitive", "string"),
             "Security": {"Read": "None", "Write": "None"}},
            {"MemberType": "Function", "Name": "Remove", "Parameters": [], "ReturnType": _t("Primitive", "null"),
             "Security": "None", "Tags": ["Deprecated"]},
            {"MemberType": "Function", "Name": "remove", "Parameters": [], "ReturnType": _t("Primitive", "null"),
             "Security": "None", "Tags": ["Deprecated", {"PreferredDescriptorName": "Remove"}]},
            {"MemberType": "Function", "Name": "Destroy", "Parameters": [], "ReturnType": _t("Primitive", "null"),
             "Security": "None"},
            {"MemberType": "Function", "Name": "FindFirstChild", "Parameters": [
                {"Name": "name", "Type": _t("Primitive", "string")},
                {"Default": "false", "Name": "recursive", "Type": _t("Primitive", "bool")}],
             "ReturnType": _t("Class", "Instance"), "Security": "None"},
            {"MemberType": "Event", "Name": "Changed", "Parameters": [{"Name": "p", "Type": _t("Primitive", "string")}],
             "Security": "None"},
            {"MemberType": "Function", "Name": "CoreOnly", "Parameters": [], "ReturnType": _t("Primitive", "null"),
             "Security": "RobloxScriptSecurity"},
        ]},
        {"Name": "Part", "Superclass": "Instance", "Tags": [], "Members": [
            {"MemberType": "Property", "Name": "Material", "ValueType": _t("Enum", "Material"),
             "Security": {"Read": "None", "Write": "PluginSecurity"}},
            {"MemberType": "Callback", "Name": "OnThing", "Parameters": [{"Name": "x", "Type": _t("Primitive", "int")}],
             "ReturnType": _t("Group", "Tuple"), "Security": "None"},
        ]},
        {"Name": "Workspace", "Superclass": "Instance", "Tags": ["NotCreatable", "Service"], "Members": []},
    ],
    "Enums": [
        {"Name": "Material", "Items": [{"Name": "Plastic", "Value": 256}, {"Name": "Wood", "Value": 512},
                                       {"Name": "CorrodedMetal", "Value": 1040, "LegacyNames": ["Corroded Metal"]},
                                       {"Name": "Old", "Value": 1, "Tags": ["Deprecated"]}]},
        {"Name": "Gone", "Tags": ["Deprecated"], "Items": [{"Name": "A", "Value": 0}]},
    ],
}

SYNTHETIC_SOURCE = {
    "source": {"test": "synthetic"},
    "classes": {
        "Part": {"superclass": "Instance", "tags": [], "members": {
            "Material": {"kind": "Property", "type": "EnumMaterial"},
            "Engine": {"kind": "Property", "type": "Configuration"},  # a member the dump lacks
        }},
        "Vector3": {"superclass": None, "tags": [], "members": {
            "X": {"kind": "Property", "type": "number"},
            "Dot": {"kind": "Function", "signature": "(self, other: Vector3): number"}}},
        "EnumMaterial_INTERNAL": {"superclass": "Enum", "tags": [], "members": {
            "Plastic": {"kind": "Property", "type": "EnumMaterial"},
            "Marble": {"kind": "Property", "type": "EnumMaterial"},  # an item the dump lacks
        }},
        "Enum": {"superclass": None, "tags": [], "members": {}},
    },
}


def _build(tmp_path: Path, dump: dict = SYNTHETIC_DUMP, source: dict | None = SYNTHETIC_SOURCE) -> dict:
    mod = _build_module()
    d = tmp_path / "dump.json"
    d.write_text(json.dumps(dump))
    args = ["--dump", str(d), "--out", str(tmp_path / "out.json")]
    if source is not None:
        s = tmp_path / "src.json"
        s.write_text(json.dumps(source))
        args += ["--source", str(s)]
    else:
        args += ["--source", "none"]
    assert mod.main(args) == 0
    text = (tmp_path / "out.json").read_text()
    assert "\n" not in text  # minified
    return json.loads(text)


def test_build_script_derivations(tmp_path: Path) -> None:
    data = _build(tmp_path)
    api = RobloxApi(data)
    assert data["format"] == 2
    assert data["services"] == ["Workspace"] and data["creatable"] == ["Part"]
    assert api.superclasses("Part") == ("Part", "Instance", "Object")
    # enums: dump items, luau-lsp's extra item, legacy names kept apart, deprecated items
    assert data["enums"]["Material"] == ["Plastic", "Wood", "CorrodedMetal", "Old", "Marble"]
    assert api.enum_legacy("Material", "Corroded Metal") == "CorrodedMetal"
    assert api.enum_item_deprecated("Material", "Old") and api.enum_item_deprecated("Gone", "")
    # types: luau-lsp spelling where it declares the member, the dump's otherwise
    assert api.property_type("Part", "Material") == "Enum.Material"
    assert api.member("Part", "Material").security == "None/PluginSecurity"
    assert api.member("Part", "OnThing").kind == "Callback"
    assert api.member("Part", "OnThing").type == "(x: number) -> ...any"
    ffc = api.member("Part", "FindFirstChild")
    assert ffc.returns == "Instance" and ffc.signature == "(name: string, recursive: boolean?): Instance"
    assert api.member("Part", "Changed").type == "RBXScriptSignal<string>"
    assert api.member("Part", "Engine").kind == "Property"  # kept from the source
    # deprecation: the table wins over PreferredDescriptorName, chains are followed
    assert api.member("Part", "isA").deprecated_replacement == "IsA"
    assert api.member("Part", "Remove").deprecated_replacement == "Destroy"
    assert api.member("Part", "remove").deprecated_replacement == "Destroy"
    assert not api.member("Part", "Destroy").deprecated
    # a member nobody's scripts may use keeps its security, not its types
    core = api.member("Part", "CoreOnly")
    assert core.security == "RobloxScriptSecurity" and core.signature is None and not core.usable(plugin=True)
    # data types from the source
    assert api.datatype_member("Vector3", "X").type == "number"
    assert api.datatype_member("Vector3", "Dot").kind == "Function"
    assert data["provenance"]["source"]["upstream"] == {"test": "synthetic"}
    assert len(data["provenance"]["dump"]["sha256"]) == 64


def test_build_script_without_the_source(tmp_path: Path) -> None:
    data = _build(tmp_path, source=None)
    assert data["datatypes"] == {} and "source" not in data["provenance"]
    assert data["enums"]["Material"] == ["Plastic", "Wood", "CorrodedMetal", "Old"]


def test_build_script_reports_bad_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _build_module()
    dump = tmp_path / "dump.json"
    dump.write_text('{"Classes": []}')
    assert mod.main(["--dump", str(dump), "--source", "none", "--out", str(tmp_path / "o.json")]) == 2
    assert "'Enums'" in capsys.readouterr().err
    assert mod.main(["--dump", str(tmp_path / "nope.json"), "--out", str(tmp_path / "o.json")]) == 2
    assert "nope.json" in capsys.readouterr().err
    dump.write_text(json.dumps(SYNTHETIC_DUMP))
    src = tmp_path / "src.json"
    src.write_text("[1, 2")
    assert mod.main(["--dump", str(dump), "--source", str(src), "--out", str(tmp_path / "o.json")]) == 2
    assert "src.json: not valid JSON" in capsys.readouterr().err


def test_shipped_file_is_what_the_build_script_makes() -> None:
    """Regenerate the shipped data from ../shared/roblox and compare it byte for byte
    (CI clones the repository beside ``shared``)."""
    mod = _build_module()
    if not mod.DEFAULT_DUMP.exists() or not mod.DEFAULT_SOURCE.exists():
        pytest.skip(f"the shared API sources are not beside the checkout ({mod.SHARED})")
    dump, dump_raw = mod.load_dump(mod.DEFAULT_DUMP)
    source, source_raw = mod.load_source(mod.DEFAULT_SOURCE)
    prov = mod.provenance_for(mod.DEFAULT_DUMP, dump_raw, mod.DEFAULT_SOURCE, source, source_raw)
    data, _warnings = mod.build(dump, source, prov)
    shipped = mod.DEFAULT_OUT.read_text(encoding="utf-8")
    assert mod.render(data) == shipped, "server/luaguard/data/roblox_api.json is stale: run scripts/build_api_data.py"
