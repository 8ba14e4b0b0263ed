"""# restricted_api

**What it finds.** A member above the code's security level: a game script calling a
`PluginSecurity` or `RobloxScriptSecurity` member (`Players:SetChatStyle`). Checked where
the receiver's class is known; never where the name reads a child (`folder.Attributes`,
`model.Tags`: those members are `NotScriptable`).

**Why.** Roblox's API dump gives each member a security level; a game script calling a
plugin-only or Roblox-only member fails at run time.

**Example.**

```lua
game:GetService("Players"):SetChatStyle(Enum.ChatStyle.Classic)  -- RobloxScriptSecurity
```

**How to fix.** Use an API game scripts may call. Plugin code may call `PluginSecurity`
members: luaguard recognises a Studio plugin's project; set `plugin = true` in
`luaguard.toml` where it cannot tell. No quick fix is offered.

**How to suppress.** `-- luaguard: allow(restricted_api)` on the line (or alone on the
line before it); `--# luaguard: allow(restricted_api)` for the whole file.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="restricted_api", severity=Severity.WARNING, fix=FixSafety.NONE,
    short="A member above the code's security level (PluginSecurity or RobloxScriptSecurity in a game script)",
    help="Roblox's API dump gives each member a security level; a game script calling a plugin-only or "
         "Roblox-only member fails at run time. Plugin code may call PluginSecurity members (set `plugin = true` "
         "in luaguard.toml where luaguard cannot tell).",
    summary="a member above the code's security level: a game script calling a `PluginSecurity` or "
            "`RobloxScriptSecurity` member (`Players:SetChatStyle`); never where the name reads a child "
            "(`folder.Attributes`, `model.Tags`: those members are `NotScriptable`)",
    docs=__doc__ or "",
)
