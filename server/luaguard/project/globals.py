"""Names that are defined in every Roblox script without being declared.

Facts, listed from two public references: the Luau standard library (luau-lang.org,
"Library" page: base functions and the ``math``, ``string``, ``table``, ``coroutine``,
``bit32``, ``utf8``, ``os``, ``debug``, ``buffer``, ``vector`` and - in current Luau -
``integer`` libraries, the last registered by ``luaL_openlibs``) and Roblox's
engine globals (create.roblox.com, "Roblox globals" and "Data types" reference pages).
Deprecated globals (``wait``, ``spawn``, ``delay`` ...) are included here because they
still exist; :mod:`luaguard.checks.deprecated_api` warns about them separately.
"""

from __future__ import annotations

#: Luau's base library and standard libraries.
LUAU_GLOBALS = frozenset(
    """
    assert collectgarbage error gcinfo getfenv getmetatable ipairs loadstring newproxy next
    pairs pcall print rawequal rawget rawlen rawset require select setfenv setmetatable
    tonumber tostring type typeof unpack xpcall _G _VERSION
    math string table coroutine bit32 utf8 os debug buffer vector integer
    """.split()
)

#: Roblox engine globals and data type constructors.
ROBLOX_GLOBALS = frozenset(
    """
    game workspace Workspace Game script plugin shared settings UserSettings version Version
    wait Wait spawn Spawn delay Delay tick time elapsedTime ElapsedTime warn printidentity
    stats Stats DebuggerManager ypcall task Enum Instance
    Axes BrickColor CatalogSearchParams CFrame Color3 ColorSequence ColorSequenceKeypoint
    Content DateTime DockWidgetPluginGuiInfo Faces FloatCurveKey Font NumberRange
    NumberSequence NumberSequenceKeypoint OverlapParams Path2DControlPoint PathWaypoint
    PhysicalProperties Random Ray RaycastParams Rect Region3 Region3int16 RotationCurveKey
    SharedTable TweenInfo UDim UDim2 ValueCurveKey Vector2 Vector2int16 Vector3 Vector3int16
    SecurityCapabilities
    """.split()
)

#: Every global a Roblox script can read without defining it.
ALL_GLOBALS = LUAU_GLOBALS | ROBLOX_GLOBALS

#: Globals TestEZ injects into ``*.spec.lua(u)`` modules (TestEZ's documented API).
TESTEZ_GLOBALS = frozenset(
    """
    describe it expect beforeAll afterAll beforeEach afterEach FOCUS SKIP FIXME fail
    describeFOCUS describeSKIP itFOCUS itSKIP itFIXME fdescribe fit xdescribe xit
    """.split()
)


#: selene's std files and ``selene.toml`` larger than this are not read (bytes)
_MAX_CONFIG_BYTES = 4 * 1024 * 1024


def project_globals(root) -> frozenset[str]:
    """Extra globals a project declares for its tooling, read from:

    * selene's configuration: ``std = "roblox+testez"`` in ``selene.toml`` names standard
      library files; each ``<name>.toml`` in the root lists globals as its top-level keys
      (selene's std format), and ``testez`` is known without a file;
    * luau-lsp definition files (``*.d.lua`` / ``*.d.luau`` in the root): every
      ``declare`` name.

    Never raises; unreadable files add nothing.  Read through :mod:`luaguard.files`: only
    regular files inside ``root`` (a ``zero.toml`` linked to ``/dev/zero`` is not read).
    """
    import tomllib
    from pathlib import Path

    from ..files import read_text

    root = Path(root)
    names: set[str] = set()
    try:
        selene = tomllib.loads(read_text(root / "selene.toml", root=root, limit=_MAX_CONFIG_BYTES, errors="strict"))
    except (OSError, ValueError):
        selene = {}
    std = selene.get("std", "") if isinstance(selene, dict) else ""
    if isinstance(std, str):
        for part in std.split("+"):
            part = part.strip()
            if not part or part in ("roblox", "lua51", "lua52", "lua53", "lua54", "luau"):
                continue
            if part == "testez":
                names |= TESTEZ_GLOBALS
            try:
                data = tomllib.loads(read_text(root / f"{part}.toml", root=root, limit=_MAX_CONFIG_BYTES,
                                               errors="strict"))
            except (OSError, ValueError, RecursionError):
                continue
            names |= {k for k in data if isinstance(k, str) and k != "selene"}
    try:
        definition_files = [p for p in root.iterdir() if p.name.endswith((".d.lua", ".d.luau")) and p.is_file()]
    except OSError:
        definition_files = []
    if definition_files:
        from ..luau import ast as A
        from ..luau.parser import parse

        for path in definition_files[:20]:
            try:
                text = read_text(path, root=root)
            except OSError:
                continue
            for stat in parse(text, declarations=True).body.body:
                if isinstance(stat, A.StatDeclare):
                    names.add(stat.name)
    return frozenset(names)
