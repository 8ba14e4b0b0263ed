"""# unbalanced_bracket

**What it finds.** A bracket `(`, `[`, `{` or an interpolated string's `{` that is never
closed, or a closer with nothing to close, reported at the opener left open (or the stray
closer) with the Luau parser's wording: `Expected ')' (to close '(' at line 3), got 'end'`.

**Why.** A truncated completion typically stops inside a call or a table. Luau's parser
notices later, often lines further down; naming the opener points at the real mistake.
The finding is reported only where Luau's parser also fails: it never invents an error.

**Example.**

```lua
print(("a"):rep(3)
local x = 1  -- reported at the first '(' of line 1
```

**How to fix.** Close the bracket where the expression ends, or remove the stray closer.
No quick fix is offered: where the closer belongs is a guess.

**Supersedes.** The parser's `syntax_error` findings inside the span from the opener to
where the mistake was detected (they restate the same mistake).

**How to suppress.** `-- luaguard: allow(unbalanced_bracket)` on the line (or alone on
the line before it); `--# luaguard: allow(unbalanced_bracket)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unbalanced_bracket", severity=Severity.ERROR, fix=FixSafety.NONE, supersedes=("syntax_error",),
    short="A bracket ( [ { or an interpolation brace is not closed, or a closer has nothing to close",
    help="Reported at the opener that is left open (or the stray closer), only where Luau's parser also fails.",
    summary="`()`, `[]`, `{}` and interpolation braces",
    docs=__doc__ or "",
)
