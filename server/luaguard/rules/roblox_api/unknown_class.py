"""# unknown_class

**What it finds.** A class name Roblox does not have, in `Instance.new` (or a class that
cannot be created), `IsA`, `FindFirstChildOfClass`, `FindFirstChildWhichIsA`,
`FindFirstAncestorOfClass` and `FindFirstAncestorWhichIsA`. Class names come from
Roblox's API dump.

**Why.** `Instance.new("Partt")` errors at run time; `IsA("Modle")` is always false, so
the branch it guards never runs.

**Severity.** An error; `IsA` on a value not known to be an Instance (an EnumItem, a
table with its own `IsA`) is a warning, and only for a near miss of a class.

**Example.**

```lua
local part = Instance.new("Partt")  -- 'Partt' is not a Roblox class. Did you mean 'Part'?
```

**How to fix.** The quick fix replaces the name with the one clearly best class: safe where
the finding is an error (the class is certain to be wrong), unsafe on the warning (a table's
own `IsA` may answer other names).

**How to suppress.** `-- luaguard: allow(unknown_class)` on the line (or alone on the
line before it); `--# luaguard: allow(unknown_class)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unknown_class", severity=Severity.ERROR, fix=FixSafety.SOMETIMES, roblox_api=True,
    short="A class name Roblox does not have (Instance.new, IsA, FindFirstChildOfClass ...)",
    help="Class names come from Roblox's API dump. The fix replaces the name with the one clearly best class: "
         "safe on an error, unsafe on the warning (a value that may be no Instance).",
    summary="`Instance.new(\"Partt\")`, `:IsA(\"Modle\")`, `:FindFirstChildOfClass(...)` with a class Roblox does "
            "not have (`IsA` on a value not known to be an Instance: a warning for a near miss only)",
    docs=__doc__ or "",
)
