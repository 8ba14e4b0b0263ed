"""Where a project's scripts run, and the instances that exist only while the game runs.

Roblox's rules (create.roblox.com: "Script types and locations", ``StarterGui``,
``StarterPack``, ``StarterPlayerScripts``, ``StarterCharacterScripts``, the R6 and R15
character rigs):

* scripts under ``StarterGui``, ``StarterPlayer.StarterPlayerScripts`` and ``StarterPack``
  run from the copies in the local player's ``PlayerGui``/``PlayerScripts``/``Backpack``;
  scripts under ``StarterCharacterScripts`` run inside the character (an open ``Model``);
* a script that cannot run where it stands (a ``LocalScript`` under a server container, a
  disabled script) is a template that code clones elsewhere: its ``Parent`` is wherever it
  is cloned to (a *clone site*: an open instance of unknown class);
* a name that may exist in the place under an open container (a RemoteEvent made in
  Studio) is a *possible child*: an open instance of unknown class, so a path through it
  can still be followed (``Remotes.Foo`` after a ``Remotes`` that other scripts read).

:class:`Places` owns the synthesized instances of one project snapshot (characters, clone
sites, possible children), so the same question gives the same instance for the life of
the snapshot; nothing here is shared between projects.
"""

from __future__ import annotations

import re

from ..project.tree import Instance

#: Containers whose contents the engine copies to each player or character at run time,
#: and where the copies live.
_RUNTIME_HOMES = {
    "StarterGui": "PlayerGui",
    "StarterPlayerScripts": "PlayerScripts",
    "StarterPack": "Backpack",
}

#: Where each kind of script runs (Roblox's "Script types and locations" and LocalScript
#: reference pages): an ancestor of one of these classes (after :meth:`Places.runtime_node`
#: moved the script to where the engine copies it).  ``Client`` and ``Server`` run
#: contexts run outside the server-only containers; ``Server`` outside ``ServerStorage``.
_LOCAL_SCRIPT_HOMES = frozenset({"PlayerGui", "PlayerScripts", "Backpack", "ReplicatedFirst"})
_LEGACY_SCRIPT_HOMES = frozenset({"Workspace", "ServerScriptService"})
_SCRIPT_CLASSES = frozenset({"Script", "LocalScript", "ModuleScript"})

#: the open reason of a synthesized character
CHARACTER_REASON = "a player's character: its parts are created at run time"
#: the class name of a clone site (no Roblox class: nothing of it is certain)
TEMPLATE_SITE = "<template site>"
#: the class name of a possible child (unknown class)
POSSIBLE_CHILD = "<possible child>"

#: what Roblox puts into every player character (create.roblox.com, "Characters"; the R6
#: and R15 rigs): the ``Humanoid``, its root part and body parts, the default ``Animate``
#: and ``Health`` scripts
CHARACTER_PARTS = frozenset({
    "Humanoid", "HumanoidRootPart", "Head", "Animate", "Health", "Body Colors",
    "Torso", "Left Arm", "Right Arm", "Left Leg", "Right Leg",
    "UpperTorso", "LowerTorso", "LeftUpperArm", "LeftLowerArm", "LeftHand", "RightUpperArm",
    "RightLowerArm", "RightHand", "LeftUpperLeg", "LeftLowerLeg", "LeftFoot", "RightUpperLeg",
    "RightLowerLeg", "RightFoot",
})


def runs_in_place(node: Instance) -> bool:
    """Does the engine run the script ``node`` where it stands (``node`` as
    :meth:`Places.runtime_node` returns it)?  A ``LocalScript`` runs under a player's
    ``PlayerGui``, ``PlayerScripts`` or ``Backpack``, in the character, or in
    ``ReplicatedFirst``; a ``Script`` with the ``Legacy`` run context under ``Workspace``
    or ``ServerScriptService``; with ``Client``, anywhere but ``ServerScriptService`` and
    ``ServerStorage``; with ``Server``, anywhere but ``ServerStorage``.  Module scripts and
    plugin scripts run where they are required or loaded: True.  A script that does not
    run in place is a template that code clones elsewhere (a character script kept in
    ``ServerStorage``, a ``.client.luau`` under ``ServerScriptService``, a script whose
    ``Disabled`` property is set in its ``.meta.json``)."""
    cls = node.class_name
    if node.disabled and cls in ("Script", "LocalScript"):
        return False  # disabled: a template that code clones and enables elsewhere
    if cls == "LocalScript":
        homes: frozenset[str] | None = _LOCAL_SCRIPT_HOMES
    elif cls == "Script":
        rc = node.run_context or "Legacy"
        if rc == "Legacy":
            homes = _LEGACY_SCRIPT_HOMES
        elif rc in ("Client", "Server"):
            banned = ("ServerScriptService", "ServerStorage") if rc == "Client" else ("ServerStorage",)
            return not any(a.class_name in banned for a in node.ancestors())
        else:
            return True
    else:
        return True
    for a in node.ancestors():
        if a.class_name in homes or (cls == "LocalScript" and a.open_reason == CHARACTER_REASON):
            return True
    return False


def template_of(node: Instance) -> Instance | None:
    """The node whose ``Parent`` is not where the project puts it, for code of the script
    ``node`` (as :meth:`Places.runtime_node` returns it), or ``None``: ``node`` or its
    nearest ancestor script that does not run in place (:func:`runs_in_place`: a template
    cloned elsewhere; a module inside such a script shares its fate), or - for a module -
    the module itself when its parent is a container (a ``Tool``, a ``Model``, not a script
    and not a service) that holds a script which does not run where it stands because of
    where it is: the container is a template whose scripts code clones into a host, and
    the module runs in that host."""
    cur: Instance | None = node
    while cur is not None and cur.class_name in _SCRIPT_CLASSES:
        if not runs_in_place(cur):
            return cur
        cur = cur.parent
    if node.class_name != "ModuleScript":
        return None
    parent = node.parent
    if parent is None or parent.class_name in _SCRIPT_CLASSES or parent.parent is None or parent.parent.parent is None:
        return None
    for sib in parent.all_children():
        if sib is not node and sib.class_name in ("Script", "LocalScript") and not sib.disabled and not runs_in_place(sib):
            return node
    return None


def origin(node: Instance) -> Instance:
    """The project node a synthesized copy stands for (the node itself otherwise)."""
    return node.origin or node


class Places:
    """The run-time instances of one project (see the module docstring): characters,
    clone sites and possible children, each made once per node and kept for the life of
    the snapshot that owns this object.  ``project`` is the
    :class:`~luaguard.project.index.ProjectIndex` (or an overlay view of one)."""

    def __init__(self, project) -> None:
        self.project = project
        self._characters: dict[int, tuple[Instance, Instance]] = {}
        self._sites: dict[int, tuple[Instance, Instance]] = {}
        self._site_templates: dict[int, Instance] = {}
        self._possible: dict[tuple[int, str], tuple[Instance, Instance]] = {}

    def runtime_node(self, node: Instance) -> Instance:
        """Where a script of the project tree runs (see the module docstring); other
        nodes are returned unchanged."""
        project = self.project
        names: list[str] = []
        cur: Instance | None = node
        while cur is not None and cur.parent is not None:
            home = _RUNTIME_HOMES.get(cur.class_name)
            if home is not None and cur.class_name in ("StarterGui", "StarterPack") and cur.parent is not project.datamodel:
                home = None
            if home is not None:
                target: Instance | None = project.local_player().child(home)
                for name in reversed(names):
                    target = target.child(name) if target is not None else None
                return target if target is not None else node
            if cur.class_name == "StarterCharacterScripts":
                target = self.character(cur)
                for name in reversed(names):
                    target = target.child(name) if target is not None else None
                return target if target is not None else node
            names.append(cur.name)
            cur = cur.parent
        return node

    def character(self, scripts: Instance) -> Instance:
        """A synthesized character model (open) holding copies of
        ``StarterCharacterScripts`` (``scripts``), parented to ``Workspace``."""
        got = self._characters.get(id(scripts))
        if got is not None and got[0] is scripts:
            return got[1]
        character = Instance("Character", "Model", open_reason=CHARACTER_REASON)
        for child in scripts.all_children():
            character.add_child(child.copy_tree())
        character.parent = self.project.service("Workspace")
        self._characters[id(scripts)] = (scripts, character)
        return character

    def clone_site(self, script: Instance) -> Instance:
        """An open instance of unknown class standing for wherever the template ``script``
        is cloned to at run time: its ``Parent``.  Nothing under it is certain."""
        got = self._sites.get(id(script))
        if got is not None and got[0] is script:
            return got[1]
        site = Instance(f"<where {script.name} is cloned to>", TEMPLATE_SITE,
                        open_reason="a template script's parent is wherever code clones it to", class_guessed=True)
        self._sites[id(script)] = (script, site)
        self._site_templates[id(site)] = script
        return site

    def site_template(self, site: Instance) -> Instance | None:
        """The template script whose clone site ``site`` is, or ``None`` for any other node."""
        if site.class_name != TEMPLATE_SITE:
            return None
        return self._site_templates.get(id(site))

    def possible_child(self, parent: Instance, name: str, why: str) -> Instance:
        """An open instance named ``name`` under ``parent`` whose class is no Roblox class
        (:data:`POSSIBLE_CHILD`: any class's member may be read on it): a child the place may
        hold (``why``), so that a path through it can still be judged."""
        key = (id(parent), name)
        got = self._possible.get(key)
        if got is not None and got[0] is parent:
            return got[1]
        node = Instance(name, POSSIBLE_CHILD, open_reason=why)
        node.parent = parent  # (not added to the parent's children: the project does not map it)
        self._possible[key] = (parent, node)
        return node

    def runtime_container(self, node: Instance) -> bool:
        """Does ``node`` exist only at run time, where scripts put instances they cannot
        name a project path for: the local player and the containers Roblox gives it
        (``PlayerGui``, ``Backpack``, ``PlayerScripts``, ``StarterGear``), a character and
        what it holds, a template's clone site?  (What the player's containers copy from
        ``StarterGui`` and ``StarterPlayerScripts`` is as closed as the original.)"""
        player = self.project.local_player()
        if node is player or node.parent is player:
            return True
        cur: Instance | None = node
        while cur is not None:
            if cur.open_reason == CHARACTER_REASON or cur.class_name == TEMPLATE_SITE:
                return True
            cur = cur.parent
        return False


def spaced(service: str) -> str:
    """The instance name a service may still have: its class name with a space before each
    inner capital (``RunService`` is named ``"Run Service"``)."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", service)


def service_names(api) -> list[str]:
    """Every name a child of the ``DataModel`` may have: the services' class names and their
    spaced instance names (:func:`spaced`)."""
    names = sorted(api.services)
    return names + [s for s in (spaced(n) for n in names) if " " in s]


def child_of(project, node: Instance, name: str) -> Instance | None:
    """The project's child ``name`` of ``node``: a child node, or - under the
    ``DataModel`` - a service by its class name or by its spaced instance name
    (:func:`spaced`)."""
    child = node.child(name)
    if child is None and node is project.datamodel:
        child = project.service(name)
        if child is None and " " in name:
            joined = name.replace(" ", "")
            child = project.service(joined) if spaced(joined) == name else None
    return child
