"""Baselines: adopting luaguard on an existing game without facing every old finding at once.

``luaguard check --baseline FILE`` records the current findings in ``FILE`` when it does not
exist yet, and from then on reports only findings that are not in it; ``--update-baseline``
records the current findings again (after fixing old ones, or to accept new ones).

A finding is recorded by its file (relative to the baseline file's directory, so the
baseline works from any current directory) and by the line-insensitive key of
:func:`luaguard.introduced.finding_key` (rule, message with line numbers blanked, the text
the finding covers): code added above a finding moves it without making it new.  Keys are
counted as a multiset: a baseline holding one ``wait`` warning in a file lets one through,
and a second ``wait`` added to that file is new.

File format (JSON, sorted, one entry per distinct key, so it diffs well in version control)::

    {"luaguard_baseline": 1,
     "findings": [{"file": "src/server/Main.server.luau", "rule": "deprecated_api",
                   "message": "'wait' is deprecated; use 'task.wait'", "text": "wait", "count": 2}]}
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from .findings import Finding
from .introduced import finding_key

FORMAT_VERSION = 1

#: ``(file, rule, message, text)``
Key = tuple[str, str, str, str]


class BaselineError(Exception):
    """A baseline file that cannot be read or has the wrong shape; ``str()`` names the file,
    where in it, and what is wrong."""


def baseline_key(f: Finding, text: str | None, file: str) -> Key:
    """The key of finding ``f`` (computed on ``text``) in file ``file`` (the path relative
    to the baseline's directory, POSIX)."""
    rule, message, snippet = finding_key(f, text)
    return (file, rule, message, snippet)


@dataclass
class Baseline:
    """The findings a baseline file accepts, as a multiset of :data:`Key`."""

    counts: Counter = field(default_factory=Counter)

    def __len__(self) -> int:
        return sum(self.counts.values())

    def new_findings(self, items: Sequence[tuple[Finding, Key]]) -> list[Finding]:
        """The findings of ``items`` the baseline does not account for (in order): each
        recorded occurrence lets one finding with the same key through."""
        budget = Counter(self.counts)
        out = []
        for f, key in items:
            if budget[key] > 0:
                budget[key] -= 1
            else:
                out.append(f)
        return out


def load_baseline(path: Path, root: Path | None = None) -> Baseline:
    """Read a baseline file (``root``: refuse one that resolves outside it, see
    :mod:`luaguard.files`).  Raises :class:`BaselineError` for an unreadable file, invalid
    JSON (with line and column) or an entry of the wrong shape (with its index)."""
    from .files import Refused, read_bytes

    try:
        raw = read_bytes(path, root=root, limit=256 * 1024 * 1024).decode("utf-8")
    except Refused as exc:
        raise BaselineError(f"{path}: cannot read the baseline: {exc.why}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot read the baseline: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from exc
    if not isinstance(data, dict) or data.get("luaguard_baseline") != FORMAT_VERSION or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path}: not a luaguard baseline (expected an object with \"luaguard_baseline\": "
                            f"{FORMAT_VERSION} and a \"findings\" list)")
    out = Baseline()
    for i, e in enumerate(data["findings"]):
        ok = isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("file", "rule", "message", "text"))
        count = e.get("count", 1) if isinstance(e, dict) else None
        if not ok or not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise BaselineError(f"{path}: findings[{i}]: expected {{\"file\", \"rule\", \"message\", \"text\": strings, "
                                f"\"count\": a positive integer}}, got {json.dumps(e)[:200]}")
        out.counts[(e["file"], e["rule"], e["message"], e["text"])] += count
    return out


def baseline_json(keys: Iterable[Key]) -> str:
    """The baseline file's text for the findings with ``keys``."""
    counts = Counter(keys)
    entries = [{"file": k[0], "rule": k[1], "message": k[2], "text": k[3], "count": n}
               for k, n in sorted(counts.items())]
    return json.dumps({"luaguard_baseline": FORMAT_VERSION, "findings": entries}, indent=1, ensure_ascii=False) + "\n"
