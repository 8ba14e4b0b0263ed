"""# invalid_utf8

**What it finds.** A file that is not valid UTF-8. Reported by the engine at the file's
first line; the invalid bytes are read as U+FFFD and the file is checked.

**Why.** Roblox reads scripts as UTF-8; findings after the invalid bytes may be off.

**How to fix.** Re-save the file as UTF-8. `luaguard check --fix` does not change such a
file.

**How to suppress.** `--# luaguard: allow(invalid_utf8)` for the whole file; `ignore =
["invalid_utf8"]` in `luaguard.toml` or `--ignore invalid_utf8`.
"""

from ...findings import Severity
from ..base import FixSafety, Rule

RULE = Rule(
    id="invalid_utf8", severity=Severity.WARNING, fix=FixSafety.NONE, file_rule=True,
    short="A file that is not valid UTF-8",
    help="Invalid bytes were read as U+FFFD; findings after them may be off. `--fix` does not change such a file.",
    summary="a file that is not valid UTF-8",
    docs=__doc__ or "",
)
