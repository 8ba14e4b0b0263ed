"""Is the code a Studio plugin's?  Plugins may use ``PluginSecurity`` members that game
scripts may not (Roblox's "Script capabilities and security" reference).

A project is a plugin's when, in this order:

1. the ``plugin`` setting says so (``plugin = true`` or ``false`` in ``luaguard.toml``);
2. its project file's name says so: Rojo builds plugins from a project file by convention
   named ``plugin.project.json`` (``rojo build plugin.project.json --plugin``), or
   ``<something>-plugin.project.json`` / ``<something>.plugin.project.json`` (where the
   root holds several project files and none was chosen, such a file among them);
3. the folder holding its project file (the root's, without one) is named ``plugin``,
   ``plugins`` or ``<something>-plugin`` (a plugin kept beside a game or library:
   ``repo/plugin/default.project.json``, whether ``repo/plugin`` is the root or one of a
   repository's projects: :mod:`luaguard.projects`).

Whatever the project, a file that reads the global ``plugin`` (the ``Plugin`` object the
engine gives only to plugin scripts) is plugin code: see :mod:`luaguard.checks.restricted_api`.
"""

from __future__ import annotations

import os
import re

__all__ = ["is_plugin_project", "PLUGIN_NAME"]

#: A project file or root folder name that marks a plugin: ``plugin``, ``plugins``,
#: ``studio-plugin``, ``my_plugin``, ``foo.plugin`` (case-insensitive, a whole word).
PLUGIN_NAME = re.compile(r"(?:^|[._-])plugins?$", re.IGNORECASE)


def is_plugin_project(project, setting: bool | None = None) -> bool:
    """Rules 1-3 of the module docstring for a :class:`~luaguard.project.index.ProjectIndex`
    (``None``: no project) and the ``plugin`` setting (``None``: not set)."""
    if setting is not None:
        return setting
    if project is None:
        return False
    pf = project.project_file
    if pf is not None and project.kind == "rojo":
        if _plugin_file(pf.name):
            return True
    elif project.kind == "none" and any(p.message.startswith("several project files") for p in project.problems):
        try:
            names = os.listdir(project.root_dir)
        except OSError:
            names = []
        if any(_plugin_file(n) for n in names):
            return True
    home = pf.parent if pf is not None and project.kind == "rojo" else project.root_dir
    return project.kind != "none" and bool(PLUGIN_NAME.search(home.name))


def _plugin_file(name: str) -> bool:
    """Is ``name`` a Rojo project file named for a plugin (rule 2)?"""
    for suffix in (".project.jsonc", ".project.json"):
        if name.endswith(suffix):
            return bool(PLUGIN_NAME.search(name[: -len(suffix)]))
    return False
