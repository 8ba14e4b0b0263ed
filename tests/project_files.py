"""Writing small Rojo projects for tests: files from a dict, and a ``default.project.json``
body for a DataModel tree."""

from __future__ import annotations

import json
from pathlib import Path


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path relative to ``root`` -> UTF-8 text), making folders as needed."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def rojo_project(tree: dict) -> str:
    """A Rojo project file's JSON text named ``game`` whose tree is a DataModel holding ``tree``
    (service name -> Rojo node)."""
    return json.dumps({"name": "game", "tree": {"$className": "DataModel", **tree}})


#: A repository with three project files (the shapes public repositories have): the game
#: (``default.project.json``), the place its tests run in (``test.project.json``: the shared
#: code again, a ``Fixtures`` folder and the tests, which only it maps) and a Studio plugin
#: beside them (``plugin/default.project.json``: its ``src`` as one Script).  Both places
#: close ReplicatedStorage, so a missing name there is certain in each.  Wally's install of
#: a package under ``Packages/_Index`` brings the package's own project file.
SEVERAL_PROJECTS: dict[str, str] = {
    "default.project.json": rojo_project({
        "ReplicatedStorage": {"$ignoreUnknownInstances": False,
                              "Shared": {"$path": "src/shared"},
                              "Packages": {"$path": "Packages"},
                              "Remotes": {"$className": "Folder", "$ignoreUnknownInstances": False,
                                          "Hit": {"$className": "RemoteEvent"}}},
        "ServerScriptService": {"Server": {"$path": "src/server"}},
    }),
    "test.project.json": rojo_project({
        "ReplicatedStorage": {"$ignoreUnknownInstances": False,
                              "Shared": {"$path": "src/shared"},
                              "Fixtures": {"$className": "Folder", "$ignoreUnknownInstances": False}},
        "ServerScriptService": {"Tests": {"$path": "tests"}},
    }),
    "plugin/default.project.json": json.dumps({"name": "Toolbox", "tree": {"$path": "src"}}),
    "src/shared/Config.luau": "return { speed = 16 }\n",
    # Remotes exists in the game only, Fixtures in the test place only: neither is invented
    "src/shared/Net.luau": ("local ReplicatedStorage = script.Parent.Parent\n"
                            "local hit = ReplicatedStorage.Remotes.Hit\n"
                            "local fixtures = ReplicatedStorage:FindFirstChild(\"Fixtures\")\n"
                            "local config = require(script.Parent.Config)\n"
                            "return { hit = hit, fixtures = fixtures, config = config }\n"),
    "src/server/Main.server.luau": ("local ReplicatedStorage = game:GetService(\"ReplicatedStorage\")\n"
                                    "local Net = require(ReplicatedStorage.Shared.Net)\n"
                                    "ReplicatedStorage.Remotes.Hit.OnServerEvent:Connect(print)\n"),
    "tests/Net.spec.luau": ("local ReplicatedStorage = game:GetService(\"ReplicatedStorage\")\n"
                            "local fixtures = ReplicatedStorage.Fixtures\n"
                            "local Net = require(ReplicatedStorage.Shared.Net)\n"
                            "local helper = require(script.Parent.Helper)\n"
                            "return function() print(fixtures, Net, helper) end\n"),
    "tests/Helper.luau": "return {}\n",
    "plugin/src/init.server.luau": ("local toolbar = plugin:CreateToolbar(\"Toolbox\")\n"
                                    "local Widget = require(script.Widget)\n"
                                    "return toolbar, Widget\n"),
    "plugin/src/Widget.luau": "return {}\n",
    "Packages/_Index/acme_signal@1.0.0/signal/default.project.json": json.dumps(
        {"name": "Signal", "tree": {"$path": "src"}}),
    "Packages/_Index/acme_signal@1.0.0/signal/src/init.luau": "return script.Nowhere\n",
    "scripts/build.luau": "print(\"build\")\n",
}


def several_projects(root: Path, changes: dict[str, str] | None = None) -> Path:
    """Write :data:`SEVERAL_PROJECTS` under ``root`` (``changes``: files replaced or added)
    and return ``root``."""
    write_files(root, {**SEVERAL_PROJECTS, **(changes or {})})
    return root
