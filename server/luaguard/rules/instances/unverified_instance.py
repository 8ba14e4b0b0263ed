"""# unverified_instance

**What it finds.** Under an open node, a name nothing in the project creates, names or
reads anywhere else. The message says what was looked for.

**Why.** An agent's invented `game.ReplicatedStorage.Remotes.Foo` must reach the model as
feedback; but a real game keeps children in its place file that no script mentions, so
the severity depends on who wrote the code.

**Severity.** A warning in patch mode (`--patch`: an agent's invented path reaches the
model), a hint in editor mode.

**Example.**

```lua
local shop = game.ReplicatedStorage:WaitForChild("ShopItemsCatalog")
-- nothing in the project creates, names or reads 'ShopItemsCatalog'
```

**How to fix.** Read or create the name elsewhere, or check that the instance exists in
the place. No quick fix is offered: the name may be real.

**How to suppress.** `-- luaguard: allow(unverified_instance)` on the line (or alone on
the line before it); `--# luaguard: allow(unverified_instance)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unverified_instance", severity=Severity.WARNING, fix=FixSafety.NONE,
    severity_text="warning in patch mode, hint in editor mode",
    short="Under an open node, a name nothing in the project creates, names or reads anywhere else",
    help="A warning in patch mode (an agent's invented path reaches the model), a hint in editor mode (a real game "
         "keeps children in its place file that no script mentions). No fix is offered: the name may be real. Read "
         "or create the name elsewhere, or silence it with `-- luaguard: allow(unverified_instance)`.",
    summary="under an **open** node, a name nothing in the project creates, names or reads anywhere else (an "
            "agent's invented `game.ReplicatedStorage.Remotes.Foo`; in a real game, often a child kept in the "
            "place file)",
    docs=__doc__ or "",
)
