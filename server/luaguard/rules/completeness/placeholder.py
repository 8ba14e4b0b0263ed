"""# placeholder

**What it finds.** Code that was left out: a truncation marker (`-- ... rest of code`,
`-- your code here`, `-- (same as before)`), `...` used as a statement or an expression
outside a vararg function, and `TODO`/`FIXME` comments.

**Why.** An assistant that abbreviates its answer leaves markers that parse (they are
comments) but drop code: the file runs without the part that was left out.

**Example.**

```lua
local function save(data)
    -- ... rest of the saving logic here
end
```

**Severity.** Truncation markers are always errors. A bare `-- ...` on a line of its own
and `TODO`/`FIXME` are warnings in editor mode (a person's note) and errors in patch mode
(`--patch`: an assistant's patch must be complete). `-- ...` after code on its line is
prose, never reported.

**How to fix.** Write the missing code. No quick fix is offered.

**Supersedes.** The parser's `syntax_error` "Cannot use '...' outside of a vararg
function" on the same `...`: the placeholder says why.

**How to suppress.** `-- luaguard: allow(placeholder)` on the line (or alone on the line
before it); `--# luaguard: allow(placeholder)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="placeholder", severity=Severity.ERROR, fix=FixSafety.NONE, supersedes=("syntax_error",),
    severity_text="error / warning",
    short="Code was left out: a truncation marker, '...' as a statement, or TODO/FIXME",
    help="Truncation markers ('-- ... rest of code', 'your code here') are always errors; TODO/FIXME are "
         "warnings in editor mode and errors in patch mode (--patch). Write the missing code.",
    summary="truncation markers (always errors); a bare `-- ...` on a line of its own and `TODO`/`FIXME` (warnings "
            "in editor mode, errors in patch mode); `-- ...` after code on its line is prose",
    docs=__doc__ or "",
)
