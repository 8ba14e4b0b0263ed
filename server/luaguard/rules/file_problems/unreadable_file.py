"""# unreadable_file

**What it finds.** A file that could not be read or is not text: binary content, over
the size limit, a permission error. Reported by the engine at the file's first line.

**Why.** Nothing in the file was checked; a silent skip would read as "no problems".

**How to fix.** Make the file readable, or leave it out of the paths given to `luaguard
check` (`exclude` in `luaguard.toml`).

**How to suppress.** `ignore = ["unreadable_file"]` in `luaguard.toml` or `--ignore
unreadable_file`.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="unreadable_file", severity=Severity.ERROR, fix=FixSafety.NONE, file_rule=True,
    short="A file that could not be read or is not text (binary, over the size limit)",
    help="Nothing in the file was checked.",
    summary="a file that could not be read or is not text (binary, over the size limit)",
    docs=__doc__ or "",
)
