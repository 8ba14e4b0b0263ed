"""# unclosed_block

**What it finds.** A `function`, `if`, `do`, `while`, `for` or `repeat` without its `end`
or `until`, reported at the keyword that opens the block: `Expected 'end' (to close
'function' at line 3), got <eof>`.

**Why.** An assistant that stops early, or rewrites half a function, leaves blocks open;
Luau's parser reports the mistake at the end of the file, far from where it is. The
finding is reported only where Luau's parser also fails.

**Example.**

```lua
local function f()
    if x then
        return 1
end  -- closes the 'if': the 'function' of line 1 is reported
```

**How to fix.** Add the missing `end`/`until` where the block ends. No quick fix is
offered: where the block ends is a guess.

**Supersedes.** The parser's `syntax_error` findings inside the span from the opener to
where the mistake was detected.

**How to suppress.** `-- luaguard: allow(unclosed_block)` on the line (or alone on the
line before it); `--# luaguard: allow(unclosed_block)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unclosed_block", severity=Severity.ERROR, fix=FixSafety.NONE, supersedes=("syntax_error",),
    short="function/if/do/while/for/repeat without its end/until",
    help="Reported at the keyword that opens the block, only where Luau's parser also fails.",
    summary="`function/if/do/while/for/repeat` without `end`/`until`",
    docs=__doc__ or "",
)
