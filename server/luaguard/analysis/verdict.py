"""Verdicts: what the project and Roblox say about one name under one instance, and the
severity that evidence earns.

A :class:`Verdict` answers "may ``node`` have a child ``name`` while the game runs?" with
the evidence found (:meth:`luaguard.analysis.snapshot.Snapshot.verdict` makes them).  Its
``kind`` is one of:

* :data:`IN_PROJECT` - the project files map that child (``node`` holds it);
* :data:`SCRIPT` - a script of the project creates it there (``evidence``: file:line);
* :data:`ROBLOX` - the engine creates it (a service, a character's parts, ``PlayerGui``);
* :data:`FRAMEWORK` - a framework or package manager links it in (Nevermore's loader
  links, Wally's package aliases and the dependencies it installs beside a package);
* :data:`POSSIBLE` - the container may hold children the project does not show (an open
  container, a template's clone site, a script that parents instances named at run time):
  ``evidence`` says why; ``supported`` says whether anything in the project backs the name
  (a script creates, names or reads it elsewhere);
* :data:`NEAR_MISS` - under such a container, a near miss of a name the project knows
  there, or a name the project has under another parent (``candidates``, ``evidence``);
* :data:`NOTHING` - the container is closed and nothing could create the child.

Severity follows the evidence (:meth:`Verdict.severity`): an error only for
:data:`NOTHING`; a warning for a near miss; a name nothing supports under an open container
is a warning in patch mode (code an agent proposes: the invented
``game.ReplicatedStorage.Remotes.Foo`` reaches the model) and a hint in editor mode (real
games keep children in the place file that no script mentions).  The linter's checks and
the decoding guard both read this one rule: the guard refuses a name only where the
verdict is an error in patch mode (:meth:`Verdict.is_error`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..findings import Severity

if TYPE_CHECKING:
    from ..project.tree import Instance

IN_PROJECT = "in_project"
SCRIPT = "created_by_script"
ROBLOX = "created_by_roblox"
FRAMEWORK = "created_by_framework"
POSSIBLE = "possible_in_place"
NEAR_MISS = "near_miss"
NOTHING = "nothing_creates_it"

#: kinds under which the child exists at run time
EXISTS = frozenset({IN_PROJECT, SCRIPT, ROBLOX, FRAMEWORK})

#: how strong a claim of absence each kind makes (a name missing under several possible
#: nodes is judged by the weakest claim)
_STRENGTH = {IN_PROJECT: 0, SCRIPT: 0, ROBLOX: 0, FRAMEWORK: 0, POSSIBLE: 1, NEAR_MISS: 2, NOTHING: 3}


@dataclass(frozen=True, slots=True)
class Verdict:
    """One name's verdict (see the module docstring).

    ``kind``: one of the kinds above; ``evidence``: why, for the message
    (``"src/server/Data.server.luau:12 creates it at run time (Instance.new)"``, the open
    container's reason); ``node``: the child, for :data:`IN_PROJECT`; ``supported``: for
    :data:`POSSIBLE`, whether something in the project creates, names or reads the name;
    ``candidates``: for :data:`NEAR_MISS`, the names it is near (best first), or where the
    name exists elsewhere (``elsewhere``: instance paths); ``speculative`` (see below).
    """

    kind: str
    evidence: str = ""
    node: "Instance | None" = None
    supported: bool = True
    candidates: tuple[str, ...] = ()
    elsewhere: tuple[str, ...] = ()
    #: the container is closed in the project; only code that names instances at run time
    #: (names no script spells) may add children: a near miss of a member is then a member miss
    speculative: bool = False

    @property
    def exists(self) -> bool:
        """Does the child exist at run time (in the project, or created by a script,
        Roblox or a framework)?"""
        return self.kind in EXISTS

    @property
    def strength(self) -> int:
        """0 (exists) .. 3 (nothing could create it): the weakest claim wins when a name is
        looked up under several possible nodes."""
        return _STRENGTH[self.kind]

    def severity(self, mode: str) -> Severity | None:
        """The severity this verdict earns in ``mode`` (``"editor"`` or ``"patch"``;
        ``None``: no finding) - see the module docstring."""
        kind = self.kind
        if kind == NOTHING:
            return Severity.ERROR
        if kind == NEAR_MISS:
            return Severity.WARNING
        if kind == POSSIBLE and not self.supported:
            return Severity.WARNING if mode == "patch" else Severity.HINT
        return None

    def is_error(self) -> bool:
        """Is this verdict an error (in either mode)?  The guard refuses exactly these."""
        return self.kind == NOTHING

    @property
    def certain(self) -> bool:
        """Is the name's absence certain (a fix may be applied without a person looking)?"""
        return self.kind == NOTHING


def weakest(verdicts) -> Verdict:
    """Of the verdicts for one name under several nodes, the one claiming least absence."""
    return min(verdicts, key=lambda v: v.strength)
