"""# unknown_instance

**What it finds.** A child nothing could create: a name under a **closed** node of the
project's instance tree (a Rojo `$path` folder, a Wally package folder read from
`wally.toml`, a service the engine owns) that no script creates at run time; also a
string require's component (`require("./Utill")`) that is no module there.

**Why.** The project maps this part of the DataModel completely, so the name cannot exist
when the code runs: `game.ReplicatedStorage.Shared.Modulez` errors ("Modulez is not a
valid member of Folder"). This is the path an assistant invents most often.

**Example.**

```lua
local Combat = require(game.ReplicatedStorage.Shared.Modulez.Combat)
-- 'Modulez' is not a child of game.ReplicatedStorage.Shared (Folder). Did you mean 'Modules'?
```

**How to fix.** Use the name that exists. The quick fix (safe) replaces a misspelt name
with the one clearly best existing name, written as the code wrote it (`.Name`,
`["Name With Space"]`, or inside the string of `WaitForChild`/`FindFirstChild`/`require`).

**How to suppress.** `-- luaguard: allow(unknown_instance)` on the line (or alone on the
line before it); `--# luaguard: allow(unknown_instance)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unknown_instance", severity=Severity.ERROR, fix=FixSafety.SAFE,
    short="A child nothing could create: under a closed node of the project's instance tree, or a string "
          "require's component that is no module",
    help="The project maps this part of the DataModel completely (Rojo $path, a Wally package folder read from "
         "wally.toml, a service the engine owns) and no script creates the name there, so it cannot exist at run "
         "time. The fix (safe) replaces a misspelt name with the one clearly best existing name.",
    summary="a child nothing could create: under a **closed** node of the instance tree where no script creates "
            "it, or a string require's component (`require(\"./Utill\")`) that is no module",
    docs=__doc__ or "",
)
