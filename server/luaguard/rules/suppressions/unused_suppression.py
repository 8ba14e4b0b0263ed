"""# unused_suppression

**What it finds.** A `luaguard: allow(rule)` comment that silences no finding while the rule
ran on the file (ruff's `RUF100`). Reported by the engine on the comment.

**Why.** A stale suppression hides the next real finding of that rule at that place: code
changed, the comment stayed.

**Example.**

```lua
local x = 1 -- luaguard: allow(undefined_variable)
```

**How to fix.** Remove the comment, or the rule from it. The fix (safe) does exactly that and
keeps any other rule the comment names and any text before the directive.

**How to suppress.** `ignore = ["unused_suppression"]` in `luaguard.toml` or
`--ignore unused_suppression`. A rule that did not run (ignored, or not selected) never
makes its suppression unused.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unused_suppression", severity=Severity.WARNING, fix=FixSafety.SAFE, file_rule=True,
    short="A `luaguard: allow(rule)` comment silences no finding (ruff's RUF100)",
    help="The rule ran and found nothing where the comment applies, so the comment only hides a future finding. "
         "The fix (safe) removes the rule from the comment, or the whole comment.",
    summary="a `luaguard: allow(rule)` comment that silences no finding while the rule ran (ruff's `RUF100`); "
            "the fix (safe) removes the rule from the comment, or the comment",
    docs=__doc__ or "",
)
