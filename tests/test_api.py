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
    up = api.provenance["upstream"]
    assert "rbx_dom_database" in up and "luau_lsp_global_types" in up
    assert len(api.provenance["derived_from_sha256"]) == 64


def test_load_api_errors(tmp_path: Path) -> None:
    with pytest.raises(ApiDataError, match="not found"):
        load_api(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ApiDataError, match="corrupt"):
        load_api(bad)
    other = tmp_path / "other.json"
    other.write_text('{"format": 99}')
    with pytest.raises(ApiDataError, match="format 1"):
        load_api(other)
    badgz = tmp_path / "bad.json.gz"
    badgz.write_bytes(b"not gzip")
    with pytest.raises(ApiDataError, match="corrupt"):
        load_api(badgz)


def test_load_api_reads_gzip(tmp_path: Path) -> None:
    data = {"format": 1, "services": ["Svc"], "creatable": [], "enums": {}, "classes": {
        "Instance": [None, [], {"Name": ["P", "string"]}],
        "Svc": ["Instance", ["Service"], {}],
    }}
    path = tmp_path / "mini.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    api = load_api(path)
    assert api.is_service("Svc")
    assert api.member("Svc", "Name").declared_in == "Instance"


# --- the build script ----------------------------------------------------------------------------

SYNTHETIC_SOURCE = {
    "source": {"test": "synthetic"},
    "services": ["Workspace", "Ghost"],
    "creatable": ["Part"],
    "enums": {"Material": []},
    "classes": {
        "Object": {"superclass": None, "tags": [], "members": {
            "IsA": {"kind": "Function", "signature": "(className: string): boolean"},
            "isA": {"kind": "Function", "signature": "(className: string): boolean"},
        }},
        "Instance": {"superclass": "Object", "tags": ["NotCreatable"], "members": {
            "Name": {"kind": "Property", "type": "string"},
            "Archivable": {"kind": "Property", "type": "Bool"},
            "Remove": {"kind": "Function", "signature": "(): nil"},
            "remove": {"kind": "Function", "signature": "(): nil"},
            "Destroy": {"kind": "Function", "signature": "(): nil"},
        }},
        "Part": {"superclass": "Instance", "tags": [], "members": {
            "Material": {"kind": "Property", "type": "EnumMaterial"},
            "OnThing": {"kind": "Property", "type": "(x: number) -> ()"},
        }},
        "Workspace": {"superclass": "Instance", "tags": ["Service"], "members": {}},
        "Vector3": {"superclass": None, "tags": [], "members": {"X": {"kind": "Property", "type": "number"}}},
        "EnumMaterial": {"superclass": "EnumItem", "tags": [], "members": {}},
        "EnumMaterial_INTERNAL": {"superclass": "Enum", "tags": [], "members": {
            "Plastic": {"kind": "Property", "type": "EnumMaterial"},
            "Wood": {"kind": "Property", "type": "EnumMaterial"},
            "GetEnumItems": {"kind": "Function", "signature": "(): { EnumMaterial }"},
        }},
        "Enum": {"superclass": None, "tags": [], "members": {}},
        "EnumItem": {"superclass": None, "tags": [], "members": {}},
    },
}


def test_build_script_derivations(tmp_path: Path) -> None:
    mod = _build_module()
    src = tmp_path / "src.json"
    src.write_text(json.dumps(SYNTHETIC_SOURCE))
    out = tmp_path / "out.json"
    assert mod.main(["--source", str(src), "--out", str(out)]) == 0
    text = out.read_text()
    assert "\n" not in text  # minified
    data = json.loads(text)
    assert data["enums"]["Material"] == ["Plastic", "Wood"]
    assert "EnumMaterial_INTERNAL" not in data["classes"] and "EnumMaterial" not in data["classes"]
    assert "Vector3" in data["datatypes"] and "Vector3" not in data["classes"]
    assert data["services"] == ["Workspace"]  # "Ghost" has no class entry
    api = RobloxApi(data)
    assert api.property_type("Part", "Material") == "Enum.Material"
    assert api.property_type("Part", "Archivable") == "boolean"
    assert api.member("Part", "OnThing").kind == "Callback"
    assert api.member("Part", "isA").deprecated_replacement == "IsA"
    assert api.member("Part", "remove").deprecated_replacement == "Destroy"
    assert api.member("Part", "Remove").deprecated_replacement == "Destroy"
    assert not api.member("Part", "Destroy").deprecated
    assert data["provenance"]["upstream"] == {"test": "synthetic"}


def test_build_script_reports_bad_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _build_module()
    src = tmp_path / "src.json"
    src.write_text('{"classes": {}}')
    assert mod.main(["--source", str(src), "--out", str(tmp_path / "o.json")]) == 2
    assert "missing top-level key" in capsys.readouterr().err
    assert mod.main(["--source", str(tmp_path / "nope.json"), "--out", str(tmp_path / "o.json")]) == 2


def test_shipped_file_matches_source_hash_when_source_present() -> None:
    """The shipped data must be regenerated when the shared source changes."""
    import hashlib

    source = REPO.parent / "shared" / "roblox" / "roblox-api.json"
    if not source.exists():
        pytest.skip("shared API source not available")
    api = load_api()
    assert api.provenance["derived_from_sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
