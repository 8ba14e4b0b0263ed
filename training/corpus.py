"""Synthetic Roblox (Luau) training corpus for luaguard's shipped demonstration completion model.

Training code, not part of the installed package: ``training/train_default_model.py`` reads
it.  The prompt header it writes is the runtime's (:func:`luaguard.completion.context.format_prompt_context`);
the runtime imports nothing from here.

The corpus teaches a small causal LM the *idioms* of Roblox instance paths
(``game:GetService("ReplicatedStorage")``, ``X:WaitForChild("Remotes")``,
``require(ReplicatedStorage.Modules.Combat)``, ``script.Parent.Config``,
``workspace.Map.Lava``, ``Players.LocalPlayer.PlayerGui.Hud`` ...) together with ordinary
gameplay code (functions, loops, ``if``/``elseif``, tables, ``:Connect(function(...) ... end)``,
``task.wait``, ``TweenService``, ``Humanoid`` properties, string interpolation, typed Luau).

Every script is written against a random DataModel tree (:func:`random_project_tree`), so the
model sees many different projects and must read the names it may use from the prompt header
(:func:`format_prompt_context`).  A small model still invents paths now and then; stopping that
is the decoding guard's job, not the corpus's.

Invariants the tests check:

* deterministic given the seed (one :class:`random.Random`; no set iteration, no hashing);
* every instance path a script references exists in that script's own tree
  (:attr:`GeneratedScript.references` records them as name tuples from the root;
  run-time aliases are mapped back: ``LocalPlayer.PlayerGui`` -> ``StarterGui``,
  ``LocalPlayer.PlayerScripts`` -> ``StarterPlayer.StarterPlayerScripts``);
* brackets and block keywords balance (each ``function``/``do``/``if`` has its ``end``).

All data here is written by the project (no third-party code is embedded).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from luaguard.completion.context import describe_children, format_prompt_context
from luaguard.project.tree import Instance, is_identifier

__all__ = [
    "GeneratedScript",
    "generate_corpus",
    "generate_scripts",
    "prompt_context_for",
    "random_project_tree",
    "sample_sources",
]

# --------------------------------------------------------------------------------------
# Prompt header: the runtime's format (luaguard.completion.context), filled from a generated tree
# --------------------------------------------------------------------------------------


def prompt_context_for(script: Instance, facts: Sequence[Instance] = ()) -> str:
    """:func:`format_prompt_context` filled from a script's place in a tree.

    ``facts`` are containers whose children are listed (via :func:`describe_children`).
    """
    parent = script.parent
    siblings = [c.name for c in parent.all_children() if c is not script] if parent else []
    return format_prompt_context(
        script.path,
        siblings,
        parent.path if parent is not None else "",
        [describe_children(node) for node in facts],
    )


# --------------------------------------------------------------------------------------
# Random project trees
# --------------------------------------------------------------------------------------

# Services every place has; the ones a project rarely fills get an ``open_reason``.
_RUNTIME_SERVICES = (
    "TweenService",
    "RunService",
    "UserInputService",
    "HttpService",
    "Debris",
    "CollectionService",
    "DataStoreService",
    "MarketplaceService",
    "SoundService",
    "Lighting",
    "Teams",
    "TextChatService",
    "ContextActionService",
    "PhysicsService",
)
_GAMEPLAY_MODULES = (
    "Combat",
    "Inventory",
    "Weapons",
    "Abilities",
    "Quests",
    "Shop",
    "Pets",
    "Round",
    "Leaderboard",
    "Settings",
    "Sounds",
    "Effects",
    "CameraShake",
    "Damage",
    "Stats",
    "Currency",
    "Loot",
    "Spawner",
    "TeamBalancer",
    "Trading",
    "Vehicles",
    "Experience",
    "Levels",
    "Badges",
    "Daily",
    "Rebirth",
    "Zones",
    "Checkpoints",
    "Enemies",
    "Projectile",
    "Hitbox",
    "Cooldowns",
    "Dialogue",
    "Crafting",
    "Housing",
    "Fishing",
    "Mining",
    "Farming",
)
_UTIL_MODULES = (
    "Signal",
    "Maid",
    "Janitor",
    "Promise",
    "Timer",
    "Spring",
    "TableUtil",
    "StringUtil",
    "MathUtil",
    "Format",
    "Debounce",
    "Queue",
    "Random",
    "Net",
    "Logger",
    "Trove",
    "Observer",
    "Cache",
    "Throttle",
    "Serializer",
)
_CONFIG_MODULES = ("GameConfig", "Items", "Constants", "Balance", "Rarities", "ShopItems", "Levels", "Tuning")
_TYPE_MODULES = ("Types", "Enums", "Schemas")
_REMOTE_EVENTS = (
    "DamageEvent",
    "PurchaseItem",
    "UpdateHud",
    "PlayerDied",
    "RequestSpawn",
    "EquipWeapon",
    "ShowNotification",
    "RoundStarted",
    "RoundEnded",
    "UseAbility",
    "ClaimReward",
    "PlaySound",
    "CoinCollected",
    "Teleport",
    "ChatMessage",
    "UpdateInventory",
    "ToggleSprint",
    "Hit",
    "OpenShop",
    "QuestUpdated",
    "LevelUp",
    "SyncData",
)
_REMOTE_FUNCTIONS = ("GetInventory", "GetPlayerData", "BuyItem", "GetLeaderboard", "RequestTrade", "GetQuests")
_BINDABLES = ("ServerSignal", "RoundChanged", "GameStateChanged", "EnemyKilled")
_SERVER_SCRIPTS = (
    "Main",
    "GameLoop",
    "DataManager",
    "Leaderstats",
    "RoundSystem",
    "Server",
    "Init",
    "PlayerHandler",
    "ShopHandler",
    "AntiCheat",
    "Spawner",
    "Boot",
    "CombatServer",
)
_SERVICE_MODULES = (
    "DataService",
    "CombatService",
    "ShopService",
    "PlayerService",
    "MatchService",
    "InventoryService",
    "QuestService",
    "PetService",
    "EnemyService",
    "RewardService",
    "LeaderboardService",
    "TeleportService2",
    "ZoneService",
)
_CLIENT_SCRIPTS = ("Client", "Main", "InputHandler", "CameraController", "Sprint", "ClientInit", "Effects", "Music")
_CONTROLLER_MODULES = (
    "UIController",
    "InputController",
    "CameraController",
    "SoundController",
    "HudController",
    "ShopController",
    "EffectsController",
    "NotificationController",
    "MovementController",
)
_SCREEN_GUIS = (
    "Hud",
    "MainMenu",
    "Shop",
    "Inventory",
    "SettingsGui",
    "Notifications",
    "LeaderboardGui",
    "Loading",
    "Quests",
    "DeathScreen",
)
_FRAMES = ("Main", "Container", "TopBar", "Buttons", "Panel", "Content", "Header", "Footer", "List", "Stats")
_LABELS = (
    "Title",
    "CoinsLabel",
    "HealthLabel",
    "Timer",
    "LevelLabel",
    "Status",
    "Message",
    "Amount",
    "NameLabel",
    "XpLabel",
)
_BUTTONS = (
    "PlayButton",
    "CloseButton",
    "BuyButton",
    "OpenButton",
    "EquipButton",
    "SettingsButton",
    "BackButton",
    "ConfirmButton",
)
_IMAGES = ("Icon", "Background", "Avatar", "Logo", "Bar")
_MAP_MODELS = ("Map", "Lobby", "Arena", "Obby", "Island", "City", "Course", "Level1")
_MAP_FOLDERS = (
    "Checkpoints",
    "Coins",
    "Spawns",
    "NPCs",
    "Doors",
    "KillBricks",
    "Zones",
    "Pads",
    "Lights",
    "Teleporters",
)
_PARTS = (
    "SpawnLocation",
    "Baseplate",
    "Lava",
    "Checkpoint",
    "KillBrick",
    "Door",
    "Button",
    "Finish",
    "Platform",
    "Floor",
    "Wall",
    "Pad",
    "Portal",
    "Trigger",
    "Goal",
    "Hitbox",
    "Zone",
    "Base",
)
_ASSET_FOLDERS = ("Effects", "Models", "Sounds", "Tools", "Weapons", "Animations", "Pets", "Particles")
_ASSET_ITEMS = {
    "Effects": ("Model", ("Explosion", "Sparkle", "HitEffect", "Smoke", "Trail", "Aura")),
    "Models": ("Model", ("Tree", "Rock", "Crate", "Chest", "Coin", "Car", "House", "Lamp")),
    "Sounds": ("Sound", ("Click", "Hit", "Coin", "Jump", "Win", "Lose", "Music", "Swing")),
    "Tools": ("Tool", ("Sword", "Pickaxe", "Bow", "Wand", "Shovel", "Flashlight")),
    "Weapons": ("Tool", ("Sword", "Katana", "Blaster", "Hammer", "Axe", "Spear")),
    "Animations": ("Animation", ("Slash", "Run", "Idle", "Punch", "Dance", "Block")),
    "Pets": ("Model", ("Dog", "Cat", "Dragon", "Bunny", "Fox", "Owl")),
    "Particles": ("ParticleEmitter", ("Fire", "Sparks", "Dust", "Glow", "Stars")),
}
_SERVER_STORAGE_FOLDERS = ("Maps", "Tools", "Weapons", "NPCs", "Assets", "Enemies", "Vehicles")
_PREFIXES = ("Game", "Player", "Round", "Enemy", "Item", "Shop", "Zone", "Pet", "Boss", "Team", "World", "Match")
_SUFFIXES = ("Manager", "Handler", "Service", "Controller", "Util", "Config", "System", "Client", "Server")
_VALUE_CLASSES = (("IntValue", "0"), ("NumberValue", "0"), ("StringValue", '""'), ("BoolValue", "false"))
_VALUE_NAMES = ("Coins", "Level", "Speed", "Damage", "Health", "Cost", "Enabled", "Title", "Cooldown", "Points")
_NAME_WITH_SPACES = ("Kill Brick", "Spawn Point", "Main Door", "Boss Room", "Shop Keeper", "Start Pad", "Safe Zone")

_SCRIPT_CLASSES = ("Script", "LocalScript", "ModuleScript")


def _node(parent: Instance, name: str, class_name: str, open_reason: str | None = None) -> Instance:
    """Add a child; a name already taken under ``parent`` gets a number (no duplicates)."""
    if name in parent.children:
        i = 2
        while f"{name}{i}" in parent.children:
            i += 1
        name = f"{name}{i}"
    return parent.add_child(Instance(name=name, class_name=class_name, open_reason=open_reason))


def _pick_names(rng: random.Random, pool: Sequence[str], lo: int, hi: int, variant: float = 0.15) -> list[str]:
    """Distinct names from ``pool``; some get a numeric suffix or a prefix+suffix blend."""
    k = min(len(pool), rng.randint(lo, hi))
    names = rng.sample(list(pool), k)
    out: list[str] = []
    for name in names:
        r = rng.random()
        if r < variant / 2:
            name = f"{name}{rng.randint(1, 9)}"
        elif r < variant:
            name = f"{rng.choice(_PREFIXES)}{rng.choice(_SUFFIXES)}"
        if name not in out:
            out.append(name)
    return out


def _add_modules(
    rng: random.Random, folder: Instance, pool: Sequence[str], lo: int, hi: int, nest: float = 0.15
) -> None:
    for name in _pick_names(rng, pool, lo, hi):
        mod = _node(folder, name, "ModuleScript")
        if rng.random() < nest:  # a Rojo ``init.luau`` folder: a module with sub-modules
            for sub in _pick_names(
                rng, ("Util", "Types", "Config", "Handler", "Effects", "Hitbox", "Data", "Client", "Server"), 1, 3, 0
            ):
                _node(mod, sub, "ModuleScript")


def _add_gui(rng: random.Random, parent: Instance, name: str) -> Instance:
    gui = _node(parent, name, "ScreenGui")
    for fname in _pick_names(rng, _FRAMES, 1, 3, 0):
        frame = _node(gui, fname, "Frame")
        for label in _pick_names(rng, _LABELS, 0, 3, 0):
            _node(frame, label, "TextLabel")
        for button in _pick_names(rng, _BUTTONS, 0, 3, 0):
            _node(frame, button, "TextButton")
        if rng.random() < 0.4:
            _node(frame, rng.choice(_IMAGES), "ImageLabel")
    if rng.random() < 0.6:
        _node(gui, rng.choice(("Controller", "LocalScript", f"{name}Client", "GuiHandler")), "LocalScript")
    return gui


def _add_part(rng: random.Random, parent: Instance, name: str) -> Instance:
    part = _node(
        parent,
        name,
        rng.choice(("Part", "Part", "Part", "MeshPart", "SpawnLocation" if name.startswith("Spawn") else "Part")),
    )
    if rng.random() < 0.25:
        _node(part, rng.choice(("Script", "KillScript", "TouchHandler", "DoorScript")), "Script")
    if rng.random() < 0.15:
        _node(part, rng.choice(("ProximityPrompt", "ClickDetector")), rng.choice(("ProximityPrompt", "ClickDetector")))
    if rng.random() < 0.1:
        _node(part, "Attachment", "Attachment")
    return part


def random_project_tree(rng: random.Random) -> Instance:
    """A random but plausible DataModel for a Roblox place, rooted at ``game``.

    Always has Workspace, Players, ReplicatedStorage, ReplicatedFirst, ServerScriptService,
    ServerStorage, StarterGui, StarterPack, StarterPlayer (with StarterPlayerScripts and
    StarterCharacterScripts) and the usual engine services; fills them with folders,
    ModuleScripts, Scripts, LocalScripts, remotes, GUI objects and parts whose names come
    from gameplay vocabularies (with random numeric suffixes and blended names).
    Services and nodes whose run-time children the project cannot know (Players, engine
    services, Workspace's Camera/Terrain, Tools, Models) carry an ``open_reason``.

    Args:
        rng: the only source of randomness (the tree is a pure function of its state).
    Returns:
        The root :class:`Instance` (class ``DataModel``).
    """
    game = Instance(name="game", class_name="DataModel")
    workspace = _node(game, "Workspace", "Workspace")
    _node(game, "Players", "Players", "players join at run time")
    rs = _node(game, "ReplicatedStorage", "ReplicatedStorage")
    rf = _node(game, "ReplicatedFirst", "ReplicatedFirst")
    sss = _node(game, "ServerScriptService", "ServerScriptService")
    ss = _node(game, "ServerStorage", "ServerStorage")
    sg = _node(game, "StarterGui", "StarterGui")
    _node(game, "StarterPack", "StarterPack")
    sp = _node(game, "StarterPlayer", "StarterPlayer")
    sps = _node(sp, "StarterPlayerScripts", "StarterPlayerScripts")
    scs = _node(sp, "StarterCharacterScripts", "StarterCharacterScripts")
    for service in _RUNTIME_SERVICES:
        _node(game, service, service, "engine service not described by the project")

    # ReplicatedStorage: modules, utilities, remotes, assets, config.
    layout = rng.random()
    if layout < 0.2:  # flat: modules straight under ReplicatedStorage
        _add_modules(rng, rs, _GAMEPLAY_MODULES + _UTIL_MODULES, 2, 6)
    else:
        main = _node(rs, rng.choice(("Modules", "Shared", "Modules", "Common", "Source", "Lib")), "Folder")
        _add_modules(rng, main, _GAMEPLAY_MODULES, 2, 7)
        if rng.random() < 0.6:
            util = _node(rs, rng.choice(("Util", "Utils", "Utilities", "Packages", "Libs")), "Folder")
            _add_modules(rng, util, _UTIL_MODULES, 1, 5)
            if util.name == "Packages":
                util.open_reason = "Wally packages are installed outside the project"
        if rng.random() < 0.4:
            _add_modules(rng, rs, _TYPE_MODULES, 1, 1, 0)
    remotes_parent = rs
    if rng.random() < 0.2:
        remotes_parent = (
            _node(rs, rng.choice(("Network", "Net", "Shared")), "Folder") if "Shared" not in rs.children else rs
        )
    remotes = _node(remotes_parent, rng.choice(("Remotes", "Events", "Remotes", "RemoteEvents")), "Folder")
    for name in _pick_names(rng, _REMOTE_EVENTS, 2, 7, 0.1):
        _node(remotes, name, "RemoteEvent")
    if rng.random() < 0.5:
        for name in _pick_names(rng, _REMOTE_FUNCTIONS, 1, 3, 0):
            _node(remotes, name, "RemoteFunction")
    if rng.random() < 0.25:
        for name in _pick_names(rng, _BINDABLES, 1, 2, 0):
            _node(rs, name, "BindableEvent")
    if rng.random() < 0.6:
        assets = _node(rs, rng.choice(("Assets", "Assets", "Storage", "Prefabs")), "Folder")
        for fname in _pick_names(rng, _ASSET_FOLDERS, 1, 3, 0):
            folder = _node(assets, fname, "Folder")
            cls, pool = _ASSET_ITEMS[fname]
            for item in _pick_names(rng, pool, 1, 4, 0.1):
                _node(folder, item, cls, "model contents are not indexed" if cls in ("Model", "Tool") else None)
    if rng.random() < 0.5:
        config = _node(rs, rng.choice(("Config", "Configs", "Data", "Constants")), "Folder")
        _add_modules(rng, config, _CONFIG_MODULES, 1, 4, 0)
        if rng.random() < 0.4:
            for vname in _pick_names(rng, _VALUE_NAMES, 1, 3, 0):
                _node(config, vname, rng.choice(_VALUE_CLASSES)[0])

    # ServerScriptService: entry scripts and service modules.
    for name in _pick_names(rng, _SERVER_SCRIPTS, 1, 3):
        _node(sss, name, "Script")
    if rng.random() < 0.75:
        services = _node(sss, rng.choice(("Services", "Systems", "Handlers", "Server", "Modules")), "Folder")
        _add_modules(rng, services, _SERVICE_MODULES, 2, 6)
    if rng.random() < 0.3:
        comps = _node(sss, rng.choice(("Components", "Classes")), "Folder")
        _add_modules(rng, comps, ("Door", "Enemy", "Coin", "KillBrick", "Spinner", "Pad", "Turret"), 1, 3, 0)

    # ServerStorage.
    for fname in _pick_names(rng, _SERVER_STORAGE_FOLDERS, 0, 3, 0):
        folder = _node(ss, fname, "Folder")
        cls = "Tool" if fname in ("Tools", "Weapons") else "Model"
        pool = _ASSET_ITEMS["Weapons"][1] if cls == "Tool" else _MAP_MODELS + ("Zombie", "Goblin", "Boss", "Car")
        for item in _pick_names(rng, pool, 1, 4, 0.1):
            _node(folder, item, cls, "model contents are not indexed")
    if rng.random() < 0.4:
        _add_modules(rng, ss, ("ProfileStore", "DataStore", "Secrets", "AdminList", "ServerConfig"), 1, 2, 0)

    # Client: StarterPlayerScripts, StarterCharacterScripts, ReplicatedFirst, StarterGui.
    for name in _pick_names(rng, _CLIENT_SCRIPTS, 1, 3):
        _node(sps, name, "LocalScript")
    if rng.random() < 0.6:
        ctrl = _node(sps, rng.choice(("Controllers", "Client", "Modules", "Systems")), "Folder")
        _add_modules(rng, ctrl, _CONTROLLER_MODULES, 1, 5)
    if rng.random() < 0.5:
        _node(scs, rng.choice(("Sprint", "Footsteps", "Health", "DoubleJump", "Stamina")), "LocalScript")
    if rng.random() < 0.4:
        _node(rf, rng.choice(("Loading", "LoadingScreen", "Preload")), "LocalScript")
    for gname in _pick_names(rng, _SCREEN_GUIS, 1, 4, 0):
        _add_gui(rng, sg, gname)

    # Workspace: a map with parts and folders.
    _node(workspace, "Camera", "Camera", "run-time camera")
    _node(workspace, "Terrain", "Terrain")
    mname = rng.choice(_MAP_MODELS)
    container = _node(workspace, mname, rng.choice(("Model", "Folder")))
    for pname in _pick_names(rng, _PARTS, 2, 6):
        _add_part(rng, container, pname)
    for fname in _pick_names(rng, _MAP_FOLDERS, 1, 3, 0):
        folder = _node(container, fname, "Folder")
        base = fname[:-1] if fname.endswith("s") else fname
        for i in range(1, rng.randint(2, 5)):
            _add_part(rng, folder, f"{base}{i}")
    for pname in _pick_names(rng, _PARTS, 0, 3):
        if pname not in workspace.children:
            _add_part(rng, workspace, pname)
    if rng.random() < 0.2:
        _add_part(rng, workspace, rng.choice(_NAME_WITH_SPACES))
    if rng.random() < 0.2:
        _add_part(rng, container, rng.choice(_NAME_WITH_SPACES))
    return game


# --------------------------------------------------------------------------------------
# Script generation
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class GeneratedScript:
    """One training example.

    ``text`` is header + Luau source; ``source`` the Luau alone; ``script`` the tree node the
    source belongs to; ``references`` every instance path the source uses, as name tuples
    from the root (``("ReplicatedStorage", "Modules", "Combat")``), run-time aliases mapped
    back to where the project defines the instance.
    """

    text: str
    source: str
    script: Instance
    tree: Instance
    references: list[tuple[str, ...]] = field(default_factory=list)


def _names_from_root(node: Instance) -> tuple[str, ...]:
    parts: list[str] = []
    cur: Instance | None = node
    while cur is not None and cur.parent is not None:
        parts.append(cur.name)
        cur = cur.parent
    return tuple(reversed(parts))


def _index(base: str, name: str) -> str:
    return f"{base}.{name}" if is_identifier(name) else f'{base}["{name}"]'


def _camel(name: str) -> str:
    """A local variable name for an instance name (``"Kill Brick"`` -> ``killBrick``)."""
    words = re.findall(r"[A-Za-z0-9]+", name) or ["item"]
    out = words[0][:1].lower() + words[0][1:] + "".join(w[:1].upper() + w[1:] for w in words[1:])
    if not is_identifier(out) or out[0].isdigit():
        out = "v" + out
    return out


def _pascal(name: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", name) or ["Item"]
    out = "".join(w[:1].upper() + w[1:] for w in words)
    return out if is_identifier(out) and not out[0].isdigit() else "V" + out


class _Writer:
    """Builds one script: line buffer with indentation, locals, and path references."""

    def __init__(self, rng: random.Random, tree: Instance, script: Instance) -> None:
        self.rng = rng
        self.tree = tree
        self.script = script
        self.lines: list[str] = []
        self.depth = 0
        self._scopes: list[tuple[set[str], dict[int, str]]] = []
        self.refs: list[tuple[str, ...]] = []
        self.service_vars: dict[str, str] = {}  # service name -> local variable
        self.node_vars: dict[int, str] = {}  # id(Instance) -> local variable holding it
        self.used_names: set[str] = set()
        self.facts: list[Instance] = []  # containers worth listing in the header
        self.is_client = script.class_name == "LocalScript" or self._under(
            ("StarterPlayer", "StarterGui", "ReplicatedFirst")
        )
        self.wait = rng.random() < (0.7 if self.is_client else 0.3)  # prefer :WaitForChild

    # ---- helpers -------------------------------------------------------------------
    def _under(self, roots: Sequence[str]) -> bool:
        names = _names_from_root(self.script)
        return bool(names) and names[0] in roots

    def line(self, text: str = "") -> None:
        self.lines.append(("\t" * self.depth + text) if text else "")

    def open(self, text: str) -> None:
        """Write a block opener and enter a new local scope."""
        self.line(text)
        self.depth += 1
        self._scopes.append((set(self.used_names), dict(self.node_vars)))

    def _restore(self) -> None:
        names, nodes = self._scopes[-1]
        self.used_names = set(names) | set(self.service_vars.values())
        self.node_vars = dict(nodes)
        for service, var in self.service_vars.items():
            self.node_vars[id(self.tree.children[service])] = var

    def mid(self, text: str) -> None:
        """``elseif ... then`` / ``else``: same block, fresh scope."""
        self._restore()
        self.depth -= 1
        self.line(text)
        self.depth += 1

    def close(self, text: str = "end") -> None:
        """Leave the block: locals declared inside go out of scope."""
        self._restore()
        self._scopes.pop()
        self.depth -= 1
        self.line(text)

    def fresh(self, base: str) -> str:
        name = base
        i = 2
        while name in self.used_names:
            name = f"{base}{i}"
            i += 1
        self.used_names.add(name)
        return name

    def ref(self, node: Instance) -> None:
        self.refs.append(_names_from_root(node))

    def note_fact(self, node: Instance | None) -> None:
        """Remember a container whose children the header should list (not the script's parent:
        the ``siblings`` line already says those)."""
        if node is None or node is self.script.parent or node is self.tree:
            return
        if node not in self.facts and node.all_children():
            self.facts.append(node)

    # ---- services ------------------------------------------------------------------
    def service(self, name: str) -> str:
        """Local variable bound to ``game:GetService(name)`` (declared on first use)."""
        var = self.service_vars.get(name)
        if var is None:
            var = self.fresh(name)
            self.service_vars[name] = var
            self.node_vars[id(self.tree.children[name])] = var
            self.ref(self.tree.children[name])
        return var

    def service_prelude(self, names: Sequence[str]) -> None:
        for name in names:
            if name not in self.service_vars:
                var = self.service(name)
                if name == "Workspace" and self.rng.random() < 0.5:
                    self.service_vars[name] = "workspace"
                    self.node_vars[id(self.tree.children[name])] = "workspace"
                    continue
                self.line(f'local {var} = game:GetService("{name}")')

    # ---- instance expressions --------------------------------------------------------
    def expr(self, node: Instance, style: str | None = None) -> str:
        """A Luau expression that evaluates to ``node`` from this script."""
        self.ref(node)
        rng = self.rng
        names = _names_from_root(node)
        if names and names[0] in ("StarterPlayer", "StarterGui") and _is_ancestor(self.script.parent, node):
            style = "script"  # copied into the player at run time: only script-relative paths hold
        # script-relative when close by
        if style is None:
            r = rng.random()
            if node.parent is self.script.parent and node is not self.script and r < 0.6:
                style = "script"
            elif (
                self.script.parent is not None
                and node.parent is self.script.parent.parent
                and r < 0.4
                and self.script.parent.parent is not self.tree
            ):
                style = "script"
            elif node.parent is self.script and r < 0.8:
                style = "script"
            else:
                style = (
                    rng.choice(("var", "var", "var", "game", "wait"))
                    if not self.wait
                    else rng.choice(("var", "wait", "wait", "game"))
                )
        if style == "script":
            base = "script"
            cur: Instance | None = self.script
            hops = 0
            while cur is not None and cur is not node and not _is_ancestor(cur, node):
                cur = cur.parent
                hops += 1
            if cur is None:
                return self.expr(node, "var")
            base = "script" + ".Parent" * hops
            tail = _names_below(cur, node)
            return self._chain(base, tail, wait=self.wait and rng.random() < 0.5)
        # nearest ancestor already in a local
        anc: Instance | None = node
        chain: list[Instance] = []
        while (
            anc is not None and id(anc) not in self.node_vars and anc.parent is not self.tree and anc is not self.tree
        ):
            chain.append(anc)
            anc = anc.parent
        if anc is not None and id(anc) in self.node_vars and style != "game":
            base = self.node_vars[id(anc)]
            tail = [n.name for n in reversed(chain)]
            return self._chain(base, tail, wait=style == "wait")
        service = names[0]
        tail = list(names[1:])
        if style == "game" or service in ("Workspace",) and rng.random() < 0.3:
            if service == "Workspace":
                base = rng.choice(("workspace", "game.Workspace", "workspace"))
            else:
                base = f"game.{service}" if rng.random() < 0.5 else f'game:GetService("{service}")'
            return self._chain(base, tail, wait=style == "wait" or (self.wait and rng.random() < 0.3))
        base = self.service(service)
        if service not in self._declared_services():
            # declare lazily: insert at the top of the service block
            self._insert_service_decl(service, base)
        return self._chain(base, tail, wait=style == "wait")

    def _declared_services(self) -> set[str]:
        out: set[str] = set()
        for line in self.lines:
            m = re.match(r'\s*local \w+ = game:GetService\("(\w+)"\)', line)
            if m:
                out.add(m.group(1))
        return out

    def _insert_service_decl(self, service: str, var: str) -> None:
        if var == "workspace":
            return
        decl = f'local {var} = game:GetService("{service}")'
        # after the last existing GetService line, or at the very top
        idx = 0
        for i, line in enumerate(self.lines):
            if line.startswith("local ") and "game:GetService(" in line:
                idx = i + 1
        if idx == 0 and self.lines and self.lines[0].startswith("--!"):
            idx = 1
        self.lines.insert(idx, decl)

    def _chain(self, base: str, tail: Sequence[str], wait: bool) -> str:
        out = base
        for name in tail:
            if wait or not is_identifier(name):
                out += f':WaitForChild("{name}")' if (wait or self.rng.random() < 0.5) else f'["{name}"]'
            else:
                out += f".{name}"
        return out

    def bind(self, node: Instance, var: str | None = None, style: str | None = None, annotate: bool = False) -> str:
        """``local <var> = <expr(node)>`` and remember the binding."""
        if id(node) in self.node_vars:
            return self.node_vars[id(node)]
        expr = self.expr(node, style)
        var = self.fresh(var or _pascal(node.name))
        ann = (
            f": {node.class_name}"
            if annotate
            and node.class_name
            in ("Folder", "RemoteEvent", "RemoteFunction", "Part", "ScreenGui", "Frame", "TextLabel", "TextButton")
            else ""
        )
        self.line(f"local {var}{ann} = {expr}")
        self.node_vars[id(node)] = var
        return var

    def require(self, module: Instance) -> str:
        """``local Name = require(<expr>)`` returning the local."""
        self.note_fact(module.parent)
        expr = self.expr(module)
        var = self.fresh(_pascal(module.name))
        self.line(f"local {var} = require({expr})")
        return var


def _is_ancestor(anc: Instance, node: Instance) -> bool:
    cur = node.parent
    while cur is not None:
        if cur is anc:
            return True
        cur = cur.parent
    return False


def _names_below(anc: Instance, node: Instance) -> list[str]:
    names: list[str] = []
    cur: Instance | None = node
    while cur is not None and cur is not anc:
        names.append(cur.name)
        cur = cur.parent
    return list(reversed(names))


# ---- vocabularies for gameplay code ------------------------------------------------

_NUM_FIELDS = (
    "speed",
    "damage",
    "cooldown",
    "range",
    "health",
    "maxHealth",
    "reward",
    "cost",
    "level",
    "xp",
    "duration",
    "radius",
    "jumpPower",
    "amount",
    "multiplier",
)
_STR_FIELDS = ("name", "title", "rarity", "category", "id", "description", "kind")
_VERBS = (
    "update",
    "reset",
    "spawn",
    "apply",
    "start",
    "stop",
    "give",
    "remove",
    "load",
    "save",
    "refresh",
    "handle",
    "register",
    "calculate",
    "toggle",
    "equip",
    "award",
    "clear",
)
_NOUNS = (
    "Player",
    "Coins",
    "Damage",
    "Round",
    "Item",
    "Enemy",
    "Reward",
    "Stats",
    "Effects",
    "Hud",
    "Timer",
    "Data",
    "Inventory",
    "Score",
    "Cooldown",
    "Pet",
    "Quest",
    "Weapon",
    "Shop",
)
_TYPE_NAMES = ("Config", "ItemData", "PlayerData", "Stats", "Options", "EnemyInfo", "RoundState", "Reward")
_COLORS = (
    "Color3.fromRGB(255, 0, 0)",
    "Color3.fromRGB(0, 170, 255)",
    "Color3.fromRGB(255, 255, 255)",
    "Color3.new(1, 1, 0)",
    "Color3.fromRGB(46, 204, 113)",
    "Color3.fromRGB(30, 30, 30)",
)
_MATERIALS = ("Neon", "Plastic", "SmoothPlastic", "Wood", "Metal", "Glass", "Grass")
_EASING = ("Quad", "Sine", "Linear", "Back", "Elastic", "Cubic", "Quint", "Bounce")
_KEYCODES = ("E", "F", "Q", "R", "LeftShift", "Space", "One", "Two", "G", "X")
_PROPS_HUMANOID = (
    ("WalkSpeed", ("16", "24", "32", "8")),
    ("JumpPower", ("50", "75", "0")),
    ("Health", ("100", "0", "humanoid.MaxHealth")),
    ("MaxHealth", ("100", "150", "250")),
    ("JumpHeight", ("7.2", "10")),
)
_MSGS = (
    "Round starting",
    "Not enough coins",
    "You win!",
    "Purchased",
    "Level up!",
    "Checkpoint reached",
    "Game over",
    "Welcome back",
    "Intermission",
    "Item equipped",
)


class _Gameplay:
    """Generators of general Luau code; each writes complete, balanced statements."""

    def __init__(self, w: _Writer) -> None:
        self.w = w
        self.rng = w.rng

    def literal(self) -> str:
        if self.rng.random() < 0.6:
            return str(self.rng.choice((0, 1, 2, 3, 5, 10, 15, 20, 25, 50, 100, 250, 1000)))
        return self.rng.choice(("0.5", "0.1", "1.5", "0.25", "2.5", "0.05"))

    def num(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return str(self.rng.choice((0, 1, 2, 3, 5, 10, 15, 20, 25, 50, 100, 250, 1000)))
        if r < 0.8:
            return self.rng.choice(("0.5", "0.1", "1.5", "0.25", "2.5", "0.05"))
        return self.rng.choice(("math.huge", "math.random(1, 10)", "#list", "count + 1"))

    def fn_name(self) -> str:
        return self.rng.choice(_VERBS) + self.rng.choice(_NOUNS)

    def config_table(self, var: str | None = None, typed: bool = False) -> str:
        rng, w = self.rng, self.w
        var = w.fresh(var or rng.choice(("CONFIG", "Settings", "DEFAULTS", "config", "Constants")))
        fields = rng.sample(_NUM_FIELDS, rng.randint(2, 5))
        sfields = rng.sample(_STR_FIELDS, rng.randint(0, 2))
        tname = None
        if typed:
            tname = w.fresh(rng.choice(_TYPE_NAMES))
            w.open(f"type {tname} = {{")
            for f in fields:
                w.line(f"{f}: number,")
            for f in sfields:
                w.line(f"{f}: string{'?' if rng.random() < 0.3 else ''},")
            w.close("}")
            w.line()
        w.open(f"local {var}{': ' + tname if tname else ''} = {{")
        for f in fields:
            w.line(f"{f} = {self.literal()},")
        for f in sfields:
            w.line(f'{f} = "{rng.choice(("Basic", "Rare", "Epic", "Legendary", "Common", "Starter"))}",')
        w.close("}")
        return var

    def body(self, budget: int, names: Sequence[str] = ()) -> None:
        """One to three random statements; ``budget`` limits nesting, ``names`` are numeric locals."""
        rng, w = self.rng, self.w
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if budget > 0 and r < 0.14:
                self.if_chain(budget - 1, names)
            elif budget > 0 and r < 0.24:
                self.for_loop(budget - 1, names)
            elif r < 0.36:
                v = w.fresh(
                    rng.choice(("count", "total", "amount", "value", "result", "index", "delta", "elapsed", "bonus"))
                )
                scale = rng.choice(names) + " * " if names and rng.random() < 0.4 else ""
                w.line(f"local {v} = {scale}{self.num()}")
            elif r < 0.45:
                w.line(f"print({self.message(names)})")
            elif r < 0.51:
                w.line(f"task.wait({rng.choice(('', '0.1', '1', '0.5', '2', '3'))})")
            elif r < 0.55:
                w.line(f'warn("{rng.choice(_MSGS)}")')
            elif r < 0.63 and names:
                t = rng.choice(names)
                w.line(
                    f"{t} {rng.choice(('+=', '-=', '*='))} {self.literal()}"
                    if rng.random() < 0.5
                    else f"{t} = math.clamp({t}, 0, {self.literal()})"
                )
            elif r < 0.69:
                t = w.fresh(rng.choice(("list", "items", "queue", "results", "hits", "targets")))
                w.line(f"local {t} = {{}}")
                w.line(f"table.insert({t}, {rng.choice(names) if names else self.literal()})")
            elif r < 0.74:
                p = w.fresh(rng.choice(("part", "marker", "block", "projectile")))
                w.line(f'local {p} = Instance.new("Part")')
                w.line(f"{p}.Size = Vector3.new({rng.randint(1, 8)}, {rng.randint(1, 4)}, {rng.randint(1, 8)})")
                w.line(
                    f"{p}.{rng.choice(('Color', 'Material', 'Anchored'))} = {rng.choice((rng.choice(_COLORS), 'Enum.Material.' + rng.choice(_MATERIALS), 'true'))}"
                )
                w.line(f"{p}.Parent = workspace")
                if "Debris" in w.service_vars or rng.random() < 0.3:
                    d = w.service("Debris")
                    if "Debris" not in w._declared_services():
                        w._insert_service_decl("Debris", d)
                    w.line(f"{d}:AddItem({p}, {rng.choice(('2', '5', '0.5'))})")
            elif r < 0.78:
                w.open(f"task.{rng.choice(('spawn', 'defer'))}(function()")
                w.line(f"task.wait({rng.choice(('1', '0.5', '2'))})")
                w.line(f"print({self.message(names)})")
                w.close("end)")
            elif r < 0.82:
                w.open(f"task.delay({rng.choice(('1', '3', '0.5'))}, function()")
                w.line(f'warn("{rng.choice(_MSGS)}")')
                w.close("end)")
            elif r < 0.87:
                obj = rng.choice(("workspace", "script", "script.Parent"))
                attr = rng.choice(("Speed", "Enabled", "Owner", "Cooldown", "Level", "Team"))
                v = w.fresh(_camel(attr))
                w.line(
                    f'local {v} = {obj}:GetAttribute("{attr}")'
                    if rng.random() < 0.6
                    else f'{obj}:SetAttribute("{attr}", {self.literal()})'
                )
            elif r < 0.92:
                v = w.fresh(rng.choice(("direction", "offset", "position", "velocity")))
                w.line(
                    f"local {v} = {rng.choice(('Vector3.new(0, 1, 0)', 'Vector3.zero', 'CFrame.new(0, 5, 0).Position', 'Vector3.new(math.random(-10, 10), 0, math.random(-10, 10))'))}"
                )
                w.line(f"local distance = {v}.Magnitude" if "distance" not in w.used_names else f"print({v}.Unit)")
                w.used_names.add("distance")
            else:
                w.open("local ok, err = pcall(function()")
                w.line(f"{self.fn_name()}({rng.choice(names) if names else ''})")
                w.close("end)")
                w.open("if not ok then")
                w.line(f'warn("{rng.choice(_MSGS)}:", err)')
                w.close()

    def message(self, names: Sequence[str] = ()) -> str:
        rng = self.rng
        if names and rng.random() < 0.5:
            n = rng.choice(names)
            return rng.choice(
                (
                    f"`{rng.choice(_MSGS)}: {{{n}}}`",
                    f'"{rng.choice(_MSGS)}", {n}',
                    f'string.format("%s: %d", "{rng.choice(_NOUNS)}", {n})',
                )
            )
        return f'"{rng.choice(_MSGS)}"'

    def if_chain(self, budget: int, names: Sequence[str] = ()) -> None:
        rng, w = self.rng, self.w
        subject = rng.choice(names) if names else w.fresh("value")
        if not names:
            w.line(f"local {subject} = {self.num()}")
        w.open(f"if {subject} {rng.choice(('>', '<', '>=', '<=', '==', '~='))} {self.num()} then")
        self.body(budget, names)
        for _ in range(rng.randint(0, 2)):
            w.mid(f"elseif {subject} {rng.choice(('>', '<', '=='))} {self.num()} then")
            self.body(budget, names)
        if rng.random() < 0.5:
            w.mid("else")
            self.body(budget, names)
        w.close()

    def for_loop(self, budget: int, names: Sequence[str] = ()) -> None:
        rng, w = self.rng, self.w
        r = rng.random()
        if r < 0.35:
            i = w.fresh("i")
            w.open(f"for {i} = 1, {rng.choice(('10', '5', '#list', 'count', '3', 'maxWaves'))} do")
            self.body(budget, list(names) + [i])
            w.close()
        elif r < 0.7:
            v = w.fresh(rng.choice(("item", "entry", "child", "part", "enemy", "player")))
            colls = ["items", "list", "workspace:GetChildren()"]
            if "Players" in w.service_vars:
                colls.append(w.service_vars["Players"] + ":GetPlayers()")
            if "CollectionService" in w.service_vars:
                colls.append(w.service_vars["CollectionService"] + ':GetTagged("Enemy")')
            coll = rng.choice(colls)
            w.open(f"for _, {v} in {rng.choice(('ipairs(' + coll + ')', coll))} do")
            self.body(budget, names)
            w.close()
        else:
            k, v = w.fresh("key"), w.fresh("value")
            w.open(f"for {k}, {v} in pairs({rng.choice(('data', 'config', 'stats', 'self.items', 'cache'))}) do")
            w.line(f"print({k}, {v})")
            w.close()

    def function(
        self, owner: str | None = None, method: bool = False, typed: bool | None = None, fields: Sequence[str] = ()
    ) -> str:
        rng, w = self.rng, self.w
        typed = rng.random() < 0.45 if typed is None else typed
        name = self.fn_name()
        params = rng.sample(
            ("player", "amount", "target", "character", "item", "duration", "position", "damage", "name", "value"),
            rng.randint(0, 3),
        )
        ptypes = {
            "player": "Player",
            "amount": "number",
            "target": "Instance",
            "character": "Model",
            "item": "string",
            "duration": "number",
            "position": "Vector3",
            "damage": "number",
            "name": "string",
            "value": "any",
        }
        plist = ", ".join(f"{p}: {ptypes[p]}" if typed else p for p in params)
        ret = rng.choice((": number", ": boolean", ": ()", "")) if typed else ""
        if owner:
            head = f"function {owner}{':' if method else '.'}{name}({plist}){ret}"
        else:
            head = f"local function {name}({plist}){ret}"
        w.open(head)
        w.used_names.update(params)
        nums = [p for p in params if ptypes[p] == "number"] + list(fields)
        if "player" in params and rng.random() < 0.5:
            self.character_block(from_player="player")
        else:
            self.body(1 if rng.random() < 0.7 else 2, nums)
        if ret == ": number":
            w.line(f"return {nums[0] if nums else self.num()}")
        elif ret == ": boolean":
            w.line(f"return {rng.choice(('true', 'false', 'ok' if 'ok' in w.used_names else 'true'))}")
        w.close()
        w.line()
        return name

    def character_block(self, from_player: str = "player") -> None:
        rng, w = self.rng, self.w
        char = w.fresh("character")
        w.line(
            f"local {char} = {from_player}.Character{rng.choice((' or ' + from_player + '.CharacterAdded:Wait()', ''))}"
        )
        hum = w.fresh("humanoid")
        finder = rng.choice(
            ('WaitForChild("Humanoid")', 'FindFirstChildOfClass("Humanoid")', 'FindFirstChild("Humanoid")')
        )
        w.line(f"local {hum} = {char}:{finder}")
        w.open(f"if {hum} then")
        for _ in range(rng.randint(1, 2)):
            prop, values = rng.choice(_PROPS_HUMANOID)
            w.line(f"{hum}.{prop} = {rng.choice(values).replace('humanoid', hum)}")
        if rng.random() < 0.4:
            w.open(f"{hum}.Died:Connect(function()")
            w.line(f'print({from_player}.Name .. " died")')
            w.close("end)")
        w.close()

    def tween(self, target: str) -> None:
        rng, w = self.rng, self.w
        ts = w.service("TweenService")
        if "TweenService" not in w._declared_services():
            w._insert_service_decl("TweenService", ts)
        info = w.fresh("tweenInfo")
        w.line(
            f"local {info} = TweenInfo.new({rng.choice(('0.5', '1', '0.25', '2'))}, Enum.EasingStyle.{rng.choice(_EASING)}, Enum.EasingDirection.{rng.choice(('Out', 'In', 'InOut'))})"
        )
        goal = rng.choice(
            (
                f"{{ Transparency = {rng.choice(('0', '1', '0.5'))} }}",
                f"{{ Size = UDim2.fromScale({rng.choice(('1, 1', '0.5, 0.1', '0, 1'))}) }}",
                f"{{ Position = UDim2.new(0.5, 0, {rng.choice(('0', '0.5', '1'))}, 0) }}",
                f"{{ BackgroundColor3 = {rng.choice(_COLORS)} }}",
                f"{{ CFrame = {target}.CFrame * CFrame.new(0, {rng.choice(('5', '10', '-3'))}, 0) }}",
            )
        )
        tw = w.fresh("tween")
        w.line(f"local {tw} = {ts}:Create({target}, {info}, {goal})")
        w.line(f"{tw}:Play()")
        if rng.random() < 0.3:
            w.line(f"{tw}.Completed:Wait()")


# ---- whole-script templates -------------------------------------------------------


def _modules(tree: Instance, roots: Sequence[str]) -> list[Instance]:
    out: list[Instance] = []
    for root in roots:
        node = tree.children.get(root)
        if node is None:
            continue
        out.extend(n for n in node.descendants() if n.class_name == "ModuleScript")
    return out


def _of_class(tree: Instance, roots: Sequence[str], classes: Sequence[str]) -> list[Instance]:
    out: list[Instance] = []
    for root in roots:
        node = tree.children.get(root)
        if node is not None:
            out.extend(n for n in node.descendants() if n.class_name in classes)
    return out


def _prelude(w: _Writer, g: _Gameplay) -> None:
    if w.rng.random() < 0.3:
        w.line(w.rng.choice(("--!strict", "--!strict", "--!nonstrict")))


def _requires(w: _Writer, pool: Sequence[Instance], lo: int, hi: int) -> list[str]:
    pool = [m for m in pool if m is not w.script and not _is_ancestor(w.script, m)]
    if not pool:
        return []
    mods = w.rng.sample(pool, min(len(pool), w.rng.randint(lo, hi)))
    out = []
    if len(mods) >= 2 and w.rng.random() < 0.4:
        # bind the shared folder first
        shared = mods[0].parent
        if shared is not None and shared.parent is not w.tree and shared is not w.script.parent:
            w.note_fact(shared)
            w.bind(shared)
    for m in mods:
        out.append(w.require(m))
    return out


def _use_module(w: _Writer, g: _Gameplay, var: str) -> None:
    rng = w.rng
    r = rng.random()
    if r < 0.4:
        w.line(
            f"{var}.{g.fn_name()}({rng.choice(('player', 'self', '', 'character', 'amount'))})"
            if r < 0.2
            else f"{var}.init()"
        )
    elif r < 0.7:
        obj = w.fresh(_camel(var))
        w.line(f"local {obj} = {var}.new({rng.choice(('', 'player', 'model', 'config', '10'))})")
        w.line(f"{obj}:{rng.choice(('Start', 'Destroy', 'Enable', 'Update', 'Init'))}()")
    else:
        w.line(f"local {w.fresh(rng.choice(_NUM_FIELDS))} = {var}.{rng.choice(_NUM_FIELDS)}")


def _remote_server(w: _Writer, g: _Gameplay, remote: Instance) -> None:
    rng = w.rng
    var = w.bind(remote, annotate=rng.random() < 0.2)
    if remote.class_name == "RemoteFunction":
        w.open(f"{var}.OnServerInvoke = function(player{rng.choice((', itemId', ', request', ''))})")
        g.body(1)
        w.line(f"return {rng.choice(('true', 'nil', '{}', 'data'))}")
        w.close()
    else:
        args = rng.choice(("player", "player, target", "player, amount", "player, itemName: string", "player, ..."))
        w.open(f"{var}.OnServerEvent:Connect(function({args})")
        if "..." in args:
            w.line("local args = { ... }")
        if rng.random() < 0.5:
            g.character_block("player")
        else:
            g.body(2, ["amount"] if "amount" in args else [])
        w.close("end)")
    w.line()


def _remote_client(w: _Writer, g: _Gameplay, remote: Instance) -> None:
    rng = w.rng
    var = w.bind(remote)
    if remote.class_name == "RemoteFunction":
        res = w.fresh("result")
        arg = rng.choice(("", '"Sword"', "itemId"))
        w.line(f"local {res} = {var}:InvokeServer({arg})")
        w.open(f"if {res} then")
        w.line(f"print({res})")
        w.close()
    elif rng.random() < 0.5:
        w.open(
            f"{var}.OnClientEvent:Connect(function({rng.choice(('message', 'data', 'amount', 'player, value', '...'))})"
        )
        g.body(1)
        w.close("end)")
    else:
        arg = rng.choice(("", "target", "10", '"Sword"', "mouse.Hit.Position"))
        w.line(f"{var}:FireServer({arg})")
    w.line()


def _player_added(w: _Writer, g: _Gameplay) -> None:
    rng = w.rng
    players = w.service("Players")
    if "Players" not in w._declared_services():
        w._insert_service_decl("Players", players)
    w.open(f"{players}.PlayerAdded:Connect(function(player{': Player' if rng.random() < 0.3 else ''})")
    if rng.random() < 0.6:
        ls = w.fresh("leaderstats")
        w.line(f'local {ls} = Instance.new("Folder")')
        w.line(f'{ls}.Name = "leaderstats"')
        w.line(f"{ls}.Parent = player")
        for stat in rng.sample(("Coins", "Wins", "Kills", "Level", "Stage", "Gems"), rng.randint(1, 2)):
            sv = w.fresh(_camel(stat))
            w.line(f'local {sv} = Instance.new("IntValue")')
            w.line(f'{sv}.Name = "{stat}"')
            w.line(f"{sv}.Value = {rng.choice(('0', '1', '100'))}")
            w.line(f"{sv}.Parent = {ls}")
    w.open("player.CharacterAdded:Connect(function(character)")
    hum = w.fresh("humanoid")
    w.line(f'local {hum} = character:WaitForChild("Humanoid")')
    prop, values = rng.choice(_PROPS_HUMANOID)
    w.line(f"{hum}.{prop} = {rng.choice(values).replace('humanoid', hum)}")
    w.close("end)")
    w.close("end)")
    w.line()


def _touch_handler(w: _Writer, g: _Gameplay, part_expr: str) -> None:
    rng = w.rng
    db = w.fresh("debounce")
    w.line(f"local {db} = false")
    w.open(f"{part_expr}.Touched:Connect(function(hit)")
    hum = w.fresh("humanoid")
    w.line(
        f'local {hum} = hit.Parent:FindFirstChildOfClass("Humanoid")'
        if rng.random() < 0.5
        else f'local {hum} = hit.Parent:FindFirstChild("Humanoid")'
    )
    w.open(f"if {hum} and not {db} then")
    w.line(f"{db} = true")
    action = rng.random()
    if action < 0.4:
        w.line(f"{hum}.Health = 0")
    elif action < 0.7:
        w.line(f"{hum}:TakeDamage({rng.choice(('10', '25', 'DAMAGE', '5'))})")
    else:
        pl = w.fresh("player")
        players = w.service("Players")
        if "Players" not in w._declared_services():
            w._insert_service_decl("Players", players)
        w.line(f"local {pl} = {players}:GetPlayerFromCharacter(hit.Parent)")
        w.open(f"if {pl} then")
        w.line(f"{pl}.leaderstats.{rng.choice(('Coins', 'Stage', 'Wins'))}.Value += 1")
        w.close()
    w.line(f"task.wait({rng.choice(('1', '0.5', '2'))})")
    w.line(f"{db} = false")
    w.close()
    w.close("end)")
    w.line()


def _server_script(w: _Writer, g: _Gameplay) -> None:
    rng = w.rng
    _prelude(w, g)
    w.service_prelude(
        rng.sample(
            ("Players", "ReplicatedStorage", "ServerScriptService", "ServerStorage", "RunService"), rng.randint(1, 3)
        )
    )
    w.line()
    mods = _requires(w, _modules(w.tree, ("ReplicatedStorage", "ServerScriptService", "ServerStorage")), 0, 3)
    remotes = _of_class(w.tree, ("ReplicatedStorage",), ("RemoteEvent", "RemoteFunction"))
    if remotes:
        w.note_fact(remotes[0].parent)
    w.line()
    if rng.random() < 0.4:
        g.config_table(typed=rng.random() < 0.4)
        w.line()
    for var in mods:
        if rng.random() < 0.6:
            _use_module(w, g, var)
    if mods:
        w.line()
    if rng.random() < 0.6:
        g.function()
    if rng.random() < 0.5:
        _player_added(w, g)
    for remote in rng.sample(remotes, min(len(remotes), rng.randint(0, 2))):
        _remote_server(w, g, remote)
    if rng.random() < 0.4:
        assets = _of_class(w.tree, ("ServerStorage", "ReplicatedStorage"), ("Model", "Tool"))
        if assets:
            a = rng.choice(assets)
            w.note_fact(a.parent)
            clone = w.fresh(_camel(a.name))
            w.line(f"local {clone} = {w.expr(a)}:Clone()")
            if a.class_name == "Tool":
                w.line(
                    f"{clone}.Parent = player.Backpack" if "player" in w.used_names else f"{clone}.Parent = workspace"
                )
            else:
                w.line(
                    f"{clone}:PivotTo(CFrame.new({rng.randint(-50, 50)}, {rng.randint(0, 20)}, {rng.randint(-50, 50)}))"
                )
                w.line(f"{clone}.Parent = workspace")
            w.line()
    if rng.random() < 0.5:
        parts = _of_class(w.tree, ("Workspace",), ("Part", "MeshPart", "SpawnLocation"))
        if parts:
            p = rng.choice(parts)
            w.note_fact(p.parent)
            if rng.random() < 0.5:
                _touch_handler(w, g, w.bind(p))
            else:
                var = w.bind(p)
                w.line(
                    f"{var}.{rng.choice(('Color', 'Material', 'Transparency', 'Anchored', 'CanCollide'))} = {rng.choice(('Enum.Material.' + rng.choice(_MATERIALS), '0.5', 'true', 'false', rng.choice(_COLORS)))}"
                )
                if rng.random() < 0.4:
                    g.tween(var)
                w.line()
    if rng.random() < 0.35:
        w.open(f"while {rng.choice(('true', 'running', 'true'))} do")
        g.body(1)
        w.line(f"task.wait({rng.choice(('1', '5', 'INTERVAL', '0.5'))})")
        w.close()


def _local_script(w: _Writer, g: _Gameplay) -> None:
    rng = w.rng
    _prelude(w, g)
    w.service_prelude(
        rng.sample(
            ("Players", "ReplicatedStorage", "UserInputService", "TweenService", "RunService"), rng.randint(1, 3)
        )
    )
    players = w.service("Players")
    if "Players" not in w._declared_services():
        w._insert_service_decl("Players", players)
    w.line()
    lp = w.fresh("player" if rng.random() < 0.5 else "localPlayer")
    w.line(f"local {lp} = {players}.LocalPlayer")
    sg = w.tree.children["StarterGui"]
    guis = [c for c in sg.all_children() if c.class_name == "ScreenGui"]
    gui_var = None
    if guis and rng.random() < 0.7:
        gui = rng.choice(guis)
        # script inside the gui: reach it via script.Parent, else via PlayerGui
        if _is_ancestor(gui, w.script):
            gui_var = w.bind(gui, _pascal(gui.name), style="script")
        else:
            w.ref(gui)
            pg = w.fresh("playerGui")
            style = rng.random()
            if style < 0.5:
                w.line(f'local {pg} = {lp}:WaitForChild("PlayerGui")')
                gui_var = w.fresh(_camel(gui.name))
                w.line(f'local {gui_var} = {pg}:WaitForChild("{gui.name}")')
            elif style < 0.8:
                gui_var = w.fresh(_camel(gui.name))
                w.line(f"local {gui_var} = {_index(lp + '.PlayerGui', gui.name)}")
            else:
                gui_var = w.fresh(_camel(gui.name))
                w.line(f"local {gui_var} = {_index('game.Players.LocalPlayer.PlayerGui', gui.name)}")
            w.node_vars[id(gui)] = gui_var
        w.note_fact(gui)
    # client modules only where the script reaches them with script.Parent (StarterPlayer
    # contents are copied into each player at run time, so absolute paths there are wrong)
    near = [
        m
        for m in _modules(w.tree, ("StarterPlayer",))
        if w.script.parent is not None and _is_ancestor(w.script.parent, m)
    ]
    mods = _requires(w, _modules(w.tree, ("ReplicatedStorage",)) + near, 0, 2)
    w.line()
    for var in mods:
        if rng.random() < 0.5:
            _use_module(w, g, var)
    if gui_var is not None:
        gui = next(n for n in guis if w.node_vars.get(id(n)) == gui_var)
        widgets = [n for n in gui.descendants() if n.class_name in ("TextButton", "TextLabel", "Frame", "ImageLabel")]
        for widget in rng.sample(widgets, min(len(widgets), rng.randint(1, 2))):
            var = w.bind(widget, _camel(widget.name))
            if widget.class_name == "TextButton":
                w.open(f"{var}.{rng.choice(('Activated', 'MouseButton1Click'))}:Connect(function()")
                if rng.random() < 0.5:
                    g.tween(var)
                else:
                    g.body(1)
                w.close("end)")
            elif widget.class_name == "TextLabel":
                text = rng.choice(
                    (
                        "`Coins: {coins}`",
                        '"Loading..."',
                        "tostring(amount)",
                        'string.format("%02d:%02d", minutes, seconds)',
                    )
                )
                w.line(f"{var}.Text = {text}")
            else:
                w.line(f"{var}.Visible = {rng.choice(('true', 'false', 'not ' + var + '.Visible'))}")
            w.line()
    remotes = _of_class(w.tree, ("ReplicatedStorage",), ("RemoteEvent", "RemoteFunction"))
    for remote in rng.sample(remotes, min(len(remotes), rng.randint(0, 2))):
        w.note_fact(remote.parent)
        _remote_client(w, g, remote)
    if rng.random() < 0.4:
        uis = w.service("UserInputService")
        if "UserInputService" not in w._declared_services():
            w._insert_service_decl("UserInputService", uis)
        w.open(
            f"{uis}.InputBegan:Connect(function(input{': InputObject' if rng.random() < 0.3 else ''}, gameProcessed)"
        )
        w.open("if gameProcessed then")
        w.line("return")
        w.close()
        w.open(f"if input.KeyCode == Enum.KeyCode.{rng.choice(_KEYCODES)} then")
        g.body(1)
        w.close()
        w.close("end)")
        w.line()
    if rng.random() < 0.3:
        rs = w.service("RunService")
        if "RunService" not in w._declared_services():
            w._insert_service_decl("RunService", rs)
        w.open(f"{rs}.{rng.choice(('Heartbeat', 'RenderStepped', 'Heartbeat'))}:Connect(function(dt)")
        w.line("local alpha = math.clamp(dt * 10, 0, 1)")
        w.close("end)")
    if rng.random() < 0.4:
        w.open(f"{lp}.CharacterAdded:Connect(function(character)")
        hum = w.fresh("humanoid")
        w.line(f'local {hum} = character:WaitForChild("Humanoid")')
        prop, values = rng.choice(_PROPS_HUMANOID)
        w.line(f"{hum}.{prop} = {rng.choice(values).replace('humanoid', hum)}")
        w.close("end)")


def _module_script(w: _Writer, g: _Gameplay) -> None:
    rng = w.rng
    _prelude(w, g)
    services = (
        ["ReplicatedStorage"]
        + (["Players"] if rng.random() < 0.4 else [])
        + (["RunService"] if rng.random() < 0.2 else [])
    )
    w.service_prelude(services)
    w.line()
    pool = [m for m in _modules(w.tree, ("ReplicatedStorage",)) if m is not w.script]
    if w._under(("ServerScriptService", "ServerStorage")):
        pool += _modules(w.tree, ("ServerScriptService", "ServerStorage"))
    sib = [
        c
        for c in (w.script.parent.all_children() if w.script.parent else [])
        if c.class_name == "ModuleScript" and c is not w.script
    ]
    mods = []
    if sib and rng.random() < 0.5:
        m = rng.choice(sib)
        mods.append(w.require(m))
    mods += _requires(w, [m for m in pool if m not in sib], 0, 2)
    for child in w.script.all_children():
        if child.class_name == "ModuleScript" and rng.random() < 0.6:
            w.note_fact(w.script)
            mods.append(w.require(child))
    w.line()
    name = _pascal(w.script.name)
    name = w.fresh(name)
    oop = rng.random() < 0.45
    if rng.random() < 0.35:
        g.config_table(typed=rng.random() < 0.5)
        w.line()
    if oop:
        w.line(f"local {name} = {{}}")
        w.line(f"{name}.__index = {name}")
        w.line()
        if rng.random() < 0.4:
            w.line(
                f"export type {name} = typeof(setmetatable({{}} :: {{ {rng.choice(_NUM_FIELDS)}: number, owner: Player? }}, {name}))"
            )
            w.line()
        args = rng.sample(("owner", "config", "model", "speed", "name"), rng.randint(0, 2))
        w.open(f"function {name}.new({', '.join(args)})")
        w.line(f"local self = setmetatable({{}}, {name})")
        for a in args:
            w.line(f"self.{a} = {a}")
        fields = [f for f in rng.sample(_NUM_FIELDS, rng.randint(1, 3)) if f not in args]
        for f in fields:
            w.line(f"self.{f} = {g.literal()}")
        w.line("return self")
        w.close()
        w.line()
        for _ in range(rng.randint(1, 3)):
            g.function(owner=name, method=True, fields=[f"self.{f}" for f in fields])
        if rng.random() < 0.5:
            w.open(f"function {name}:Destroy()")
            w.line("setmetatable(self, nil)")
            w.close()
            w.line()
    else:
        w.line(f"local {name} = {{}}")
        w.line()
        for _ in range(rng.randint(1, 3)):
            g.function(owner=name)
        for var in mods:
            if rng.random() < 0.3:
                w.open(f"function {name}.init()")
                _use_module(w, g, var)
                w.close()
                w.line()
                break
    w.line(f"return {name}")


def _part_script(w: _Writer, g: _Gameplay) -> None:
    """A Script inside a part in Workspace (kill bricks, doors, pads)."""
    rng = w.rng
    parent = w.script.parent
    assert parent is not None
    if rng.random() < 0.5:
        part = w.fresh(_camel(parent.name) if rng.random() < 0.5 else "part")
        w.ref(parent)
        w.line(f"local {part} = script.Parent")
        w.node_vars[id(parent)] = part
    else:
        part = "script.Parent"
        w.ref(parent)
    if rng.random() < 0.3:
        w.line(f"local DAMAGE = {rng.choice(('10', '25', '100'))}")
    w.line()
    kinds = [c for c in parent.all_children() if c.class_name in ("ProximityPrompt", "ClickDetector")]
    if kinds and rng.random() < 0.7:
        k = kinds[0]
        var = w.bind(k, _camel(k.name), style="script")
        event = "Triggered" if k.class_name == "ProximityPrompt" else "MouseClick"
        w.open(f"{var}.{event}:Connect(function(player)")
        g.body(1)
        w.close("end)")
    else:
        _touch_handler(w, g, part)
    if rng.random() < 0.3:
        g.tween(part)


def _script_for(w: _Writer, g: _Gameplay) -> None:
    s = w.script
    names = _names_from_root(s)
    if s.class_name == "ModuleScript":
        _module_script(w, g)
    elif s.class_name == "Script" and names[0] == "Workspace":
        _part_script(w, g)
    elif s.class_name == "LocalScript":
        _local_script(w, g)
    else:
        _server_script(w, g)


def _generate_one(rng: random.Random, tree: Instance, script: Instance) -> GeneratedScript:
    w = _Writer(rng, tree, script)
    g = _Gameplay(w)
    _script_for(w, g)
    # trim blank lines at the end / doubled blanks
    lines: list[str] = []
    for line in w.lines:
        if not line and (not lines or not lines[-1]):
            continue
        lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    source = "\n".join(lines) + "\n"
    # header: usually complete, sometimes partial or absent
    r = rng.random()
    facts = list(w.facts)
    if r < 0.12:
        header = ""
    else:
        # a distractor container now and then, in random order
        if rng.random() < 0.4:
            containers = [n for n in tree.descendants() if n.class_name == "Folder" and n.all_children()]
            if containers:
                d = rng.choice(containers)
                if d not in facts:
                    facts.append(d)
        rng.shuffle(facts)
        if r < 0.22:
            facts = facts[: len(facts) // 2]
        header = prompt_context_for(script, facts)
    text = header + source
    return GeneratedScript(text=text, source=source, script=script, tree=tree, references=w.refs)


def generate_scripts(n_scripts: int, seed: int) -> Iterator[GeneratedScript]:
    """``n_scripts`` :class:`GeneratedScript` examples, a new random tree every few scripts.

    Deterministic given ``seed``.  Raises ``ValueError`` for a negative count.
    """
    if n_scripts < 0:
        raise ValueError(f"n_scripts must be >= 0, got {n_scripts}")
    rng = random.Random(seed)
    made = 0
    while made < n_scripts:
        tree = random_project_tree(rng)
        scripts = [n for n in tree.descendants() if n.class_name in _SCRIPT_CLASSES]
        for script in rng.sample(scripts, min(len(scripts), rng.randint(2, 6))):
            if made >= n_scripts:
                break
            yield _generate_one(rng, tree, script)
            made += 1


def generate_corpus(n_scripts: int, seed: int) -> Iterator[str]:
    """Training texts: prompt header (:func:`format_prompt_context`) + one Luau script each.

    Deterministic given ``seed``; about a fifth of the texts have a partial header or none,
    so the model also completes files without project facts.  The project's own sample
    Luau files are not included here (see :func:`sample_sources`).
    """
    for example in generate_scripts(n_scripts, seed):
        yield example.text


def sample_sources(samples_dir: Path | str, exclude: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Every ``.luau``/``.lua`` file under ``samples_dir`` as ``(relative posix path, text)``.

    ``exclude`` names folders (at any depth) to skip - the training script skips
    ``samples/patches``, which holds deliberately broken fixtures for the linter.  Sorted by
    path; unreadable or non-UTF-8 files are skipped; a missing directory gives an empty
    list.  Used by the training script to add the project's own Luau text.
    """
    root = Path(samples_dir)
    if not root.is_dir():
        return []
    out: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".luau", ".lua") or not path.is_file():
            continue
        if any(part in exclude for part in path.relative_to(root).parts[:-1]):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if text.strip():
            out.append((path.relative_to(root).as_posix(), text))
    return out
