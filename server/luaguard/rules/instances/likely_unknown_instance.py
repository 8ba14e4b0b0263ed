"""# likely_unknown_instance

**What it finds.** Under an **open** node (one that may get children in Studio or at run
time), or a closed one where the project's scripts may create children, a name that is a
near miss of a name the project knows there (its children, names other scripts read
there: one edit, or a similarity score of 80 or more), or a name the project has only
under another parent.

**Why.** A near miss of a known name is most likely a typo, and a name that exists
elsewhere most likely the wrong parent; but the node may really hold such a child, so
this is a warning.

**Example.**

```lua
local remote = game.ReplicatedStorage.Remotes:WaitForChild("DamageEvnt")
-- a near miss of 'DamageEvent', which other scripts read there
```

**How to fix.** Use the name the project knows. The quick fix is unsafe
(`--unsafe-fixes`): the child may be real.

**How to suppress.** `-- luaguard: allow(likely_unknown_instance)` on the line (or alone
on the line before it) if the child is real; `--# luaguard:
allow(likely_unknown_instance)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="likely_unknown_instance", severity=Severity.WARNING, fix=FixSafety.UNSAFE,
    short="Under an open node, a near miss of a name the project knows there, or a name the project has elsewhere",
    help="The node may get children in Studio or at run time, so this is a warning; its fix is unsafe "
         "(--unsafe-fixes). Silence it with `-- luaguard: allow(likely_unknown_instance)` if the child is real.",
    summary="under an **open** node, a near miss of a name the project knows there (its children, names other "
            "scripts read there) or a name the project has under another parent",
    docs=__doc__ or "",
)
