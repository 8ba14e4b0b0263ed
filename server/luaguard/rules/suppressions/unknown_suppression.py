"""# unknown_suppression

**What it finds.** A `luaguard: allow(...)` comment that names no luaguard rule: a typo
such as `-- luaguard: allow(undefined-variable)` (selene writes its lints with hyphens in
some places; luaguard's ids are snake_case). Reported by the engine on the comment.

**Why.** The comment silences nothing, yet whoever wrote it believes the finding below it is
handled: the next real finding there would be hidden from them, not from luaguard.

**Example.**

```lua
-- luaguard: allow(undefined-variable)
print(harnessGlobal)
```

**How to fix.** Write the rule's id (`undefined_variable`). The fix is safe when one rule id
is clearly the best candidate and puts it in; with no clear candidate it removes the name,
which is unsafe (`--unsafe-fixes`: review it). selene's and Luau's names belong in their own
comments (`-- selene: allow(...)`, `--!nolint Name`), which luaguard also reads.

**How to suppress.** `ignore = ["unknown_suppression"]` in `luaguard.toml` or
`--ignore unknown_suppression`.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unknown_suppression", severity=Severity.WARNING, fix=FixSafety.SOMETIMES, file_rule=True,
    short="A `luaguard: allow(...)` comment names no luaguard rule (a typo: `undefined-variable`)",
    help="The comment silences nothing. The fix (safe) puts in the one clearly best rule id; with no clear "
         "candidate it removes the name (unsafe: review it). selene's and Luau's names belong in their own "
         "comments (`-- selene: allow(...)`, `--!nolint Name`).",
    summary="a `luaguard: allow(...)` comment that names no rule (`allow(undefined-variable)`): it silences "
            "nothing; the fix (safe) puts in the one clearly best rule id",
    docs=__doc__ or "",
)
