"""# syntax_error

**What it finds.** Everything Luau's parser rejects that no more precise rule names:
`local = 5`, `x = = 1`, `if a then else else end`, a stray `!=`. The message and the
position are those of Luau's own parser (`Expected identifier when parsing variable
name, got '='`); the lexer's errors (an unfinished string, a malformed number) are
reported here too.

**Why.** Code that does not parse does not run: the whole script fails to load.

**Example.**

```lua
local = 5  -- Expected identifier when parsing variable name, got '='
```

**How to fix.** Fix the syntax first: a file with a syntax error is never changed by
`luaguard check --fix`. Where a bracket or a block is left open, `unbalanced_bracket` or
`unclosed_block` names the opener instead.

**How to suppress.** `-- luaguard: allow(syntax_error)` on the line (or alone on the
line before it); `--# luaguard: allow(syntax_error)` for the whole file; `ignore =
["syntax_error"]` in `luaguard.toml` or `--ignore syntax_error`.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="syntax_error", severity=Severity.ERROR, fix=FixSafety.NONE,
    short="Luau's parser rejects the code",
    help="The message and position are those of Luau's own parser. Fix the syntax first: a file with a "
         "syntax error is never changed by `luaguard check --fix`.",
    summary="everything else Luau's parser rejects, with its message and position",
    docs=__doc__ or "",
)
