"""# internal_error

**What it finds.** A check of luaguard that failed on this file (a bug in luaguard). The
other checks still ran; the message names the check and the exception.

**Why.** A check that fails silently would read as "no problems".

**How to fix.** Report the file that triggers it to luaguard's issue tracker.

**How to suppress.** `ignore = ["internal_error"]` in `luaguard.toml` or `--ignore
internal_error`.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="internal_error", severity=Severity.ERROR, fix=FixSafety.NONE, file_rule=True,
    short="luaguard failed on this file (a bug)",
    help="The other checks still ran. Please report the file that triggers it.",
    summary="luaguard failed on this file (a bug); the other checks still ran",
    docs=__doc__ or "",
)
