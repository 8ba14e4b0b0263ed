"""# deprecated_api

**What it finds.** A Roblox API that still works but is deprecated: the global `wait`,
`spawn` and `delay` (use `task.wait`, `task.spawn`, `task.delay`), `:Remove()` (use
`:Destroy()`), `humanoid:LoadAnimation` (use the `Animator`'s), legacy enum names
(`Enum.RaycastFilterType.Whitelist` is `Include`), and members and enum items Roblox's API
dump tags `Deprecated`.

**Why.** Assistants trained on old code write old APIs; the replacements are better
behaved (`task.wait` resumes on the next frame without throttling).

**Example.**

```lua
wait(1)  -- 'wait' is deprecated; use 'task.wait'
```

**How to fix.** A legacy enum name's fix is safe (the same item, renamed); the others
are unsafe (`--unsafe-fixes`): the replacement may behave differently; review it.

**How to suppress.** `-- luaguard: allow(deprecated_api)` on the line (or alone on the
line before it); `--# luaguard: allow(deprecated_api)` for the whole file; `ignore =
["deprecated_api"]` in `luaguard.toml` for a code base that keeps them.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="deprecated_api", severity=Severity.WARNING, fix=FixSafety.SOMETIMES,
    short="A Roblox API that still works but is deprecated (wait -> task.wait, :Remove() -> :Destroy())",
    help="A legacy enum name's fix is safe (the same item, renamed); the others are unsafe (--unsafe-fixes): the "
         "replacement may behave differently; review it.",
    summary="`wait` → `task.wait`, `:Remove()` → `:Destroy()`, legacy enum names (`Enum.RaycastFilterType.Whitelist` "
            "→ `Include`), members and enum items Roblox tags `Deprecated` ...",
    docs=__doc__ or "",
)
