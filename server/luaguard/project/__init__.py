"""Project knowledge: the Rojo/sourcemap instance tree, file <-> instance maps, Roblox API facts.

Entry points: :func:`load_project` (-> :class:`ProjectIndex`), :func:`load_api`
(-> :class:`RobloxApi`), :func:`format_tree` / :func:`to_json` for ``luaguard index``.
"""

from __future__ import annotations

from .api import ApiDataError, Member, RobloxApi, load_api
from .index import ProjectIndex, format_tree, load_project, to_json
from .rojo import IndexProblem, ProjectFileError
from .sourcemap import SCRIPTS_ONLY_REASON
from .tree import Instance, is_identifier

__all__ = [
    "ApiDataError",
    "IndexProblem",
    "Instance",
    "Member",
    "ProjectFileError",
    "ProjectIndex",
    "RobloxApi",
    "SCRIPTS_ONLY_REASON",
    "format_tree",
    "is_identifier",
    "load_api",
    "load_project",
    "to_json",
]
