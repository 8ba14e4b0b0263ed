"""# unknown_member

**What it finds.** A property, method, event, enum or enum item that a value of known
class does not have, where no child can have the name: a new instance
(`Instance.new("Part").Sizee`), a method call, an assignment (`part.Anchord = true`), an
enum (`Enum.Material.Plastik`), a closed node of the project.

**Why.** A name that is no member of an instance reads a child, so
`game.ReplicatedStorage.InventoryChanged` and `shopFrame.Close` are never "fixed" into
members; but where no child can exist the name is a misspelt member and fails at run time.

**Severity.** An error where the value's class is certain; a warning where the value may
be of a subclass that could add the member.

**Example.**

```lua
local part = Instance.new("Part")
part.Anchord = true  -- 'Anchord' is not a property of Part: assigning it fails at run time. Did you mean 'Anchored'?
```

**How to fix.** The quick fix replaces the name with the one clearly best member of the
kind the code used (a method for a call, a property for an assignment): safe only where
the class is certain.

**How to suppress.** `-- luaguard: allow(unknown_member)` on the line (or alone on the
line before it); `--# luaguard: allow(unknown_member)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unknown_member", severity=Severity.ERROR, fix=FixSafety.SOMETIMES, roblox_api=True,
    severity_text="error / warning",
    short="A property, method, event, enum or enum item that a value of certain class does not have, where no "
          "child can have the name",
    help="An error where the value's class is certain, a warning where a subclass could add the member. A name that "
         "is no member of an instance reads a child, so it is reported here only where no child can exist (a new "
         "instance, a method call, an assignment, a closed node). The fix replaces the name with the one clearly "
         "best member of that class (safe only where the class is certain).",
    summary="a property, method, event, enum or enum item that a value of known class does not have where no child "
            "can have the name (`Instance.new(\"Part\").Sizee`, `part.Anchord = true`, `Enum.Material.Plastik`, "
            "`DataStoreService:GetOrderedDataStore(\"x\"):GetSortedAsyncc()`); a warning where the value may be of a "
            "subclass. A name that is no member reads a child: `game.ReplicatedStorage.InventoryChanged` and "
            "`shopFrame.Close` are never \"fixed\" into members",
    docs=__doc__ or "",
)
