"""# unknown_service

**What it finds.** `game:GetService("...")` with a name that is not a Roblox service
(service names come from Roblox's API dump).

**Why.** `GetService` with a name that is no service fails in any host.

**Severity.** An error; outside the project's DataModel (a test runner's or Lune's host
may add services the API dump does not list) a name far from every service is a warning,
while a near miss of a service stays an error.

**Example.**

```lua
local Players = game:GetService("Player")  -- Did you mean 'Players'?
```

**How to fix.** The quick fix replaces the name with the one clearly best service: safe
where the finding is an error.

**How to suppress.** `-- luaguard: allow(unknown_service)` on the line (or alone on the
line before it); `--# luaguard: allow(unknown_service)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unknown_service", severity=Severity.ERROR, fix=FixSafety.SOMETIMES, roblox_api=True,
    short="GetService with a name that is not a Roblox service",
    help="Service names come from Roblox's API dump; a near miss of a service is an error in every file (it fails in "
         "any host). The fix (safe) replaces the name with the one clearly best service.",
    summary="`GetService` with a name that is not a service (a near miss of a service is an error in every file: "
            "it fails in any host)",
    docs=__doc__ or "",
)
