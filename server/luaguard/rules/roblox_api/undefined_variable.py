"""# undefined_variable

**What it finds.** A global read that is neither a Luau nor a Roblox global, nor assigned
anywhere in the file, nor declared by the project's tooling (`extra_globals` in
`luaguard.toml`, selene's `std` files, luau-lsp definition files, TestEZ's globals in
`*.spec.luau`). A file that calls `getfenv`/`setfenv` is not checked.

**Why.** Reading an undefined global gives `nil`: a misspelt local or a helper the
assistant assumed exists fails later, far from the cause.

**Example.**

```lua
local Players = game:GetService("Players")
print(Player.LocalPlayer)  -- 'Player' is not defined. Did you mean 'Players'?
```

**How to fix.** Declare it (`local`), fix the name, or add it to `extra_globals` in
`luaguard.toml`. The quick fix is unsafe (`--unsafe-fixes`): the name may be meant as a
new variable.

**How to suppress.** `-- luaguard: allow(undefined_variable)` on the line (or alone on
the line before it); `--# luaguard: allow(undefined_variable)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="undefined_variable", severity=Severity.ERROR, fix=FixSafety.UNSAFE, roblox_api=True,
    short="A global that is neither a Luau nor a Roblox global nor assigned in the file",
    help="Declare it (local), add it to extra_globals in luaguard.toml, or list it in a selene std or a luau-lsp "
         "definition file. Its fix is unsafe: the name may be meant as a new variable.",
    summary="a global that is neither a Luau nor a Roblox global nor assigned in the file",
    docs=__doc__ or "",
)
