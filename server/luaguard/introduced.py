"""Which findings a change introduced: the rule "judge what the agent wrote".

A hook, a proxy, a diff check and a baseline all ask the same question: of the findings of
the new text, which were not already there in the old one?  Lines move when code is added
above them, so a finding is matched by a **line-insensitive key** (:func:`finding_key`):

* the rule id;
* the message with line numbers blanked (``"... at line 12"`` -> ``"... at line #"``), so a
  message that names another line still matches after the code moved;
* the text the finding covers (``text[start:end]``, whitespace collapsed) - the same
  misspelt path on another line is the same finding; the same rule on other words is not.

Keys are compared as multisets: a TODO that was there once and is now there twice is one new
finding.  Where a key occurs more often in the new text, the occurrences on lines the change
touched are the new ones (a difflib line diff says which lines those are).

Shapes: findings are :class:`~luaguard.findings.Finding` with ``start``/``end`` offsets into
the text they were computed on.  Nothing here raises on any text.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from typing import Iterable, Sequence

from .findings import Finding

_LINE_NUMBER = re.compile(r"(?i)\b(line|lines|column)\s+\d+(\s*(?:-|–|to|and)\s*\d+)?")
_SPACE = re.compile(r"\s+")
#: at most this many characters of the covered text go into a key (a finding over a whole
#: file - a missing ``end`` - is keyed by its start, not by the whole file)
SNIPPET_CHARS = 120


def normalise_message(message: str) -> str:
    """``message`` with line and column numbers blanked (``line 3`` -> ``line #``).  A column
    counts as a line too: Luau names an opener on the error's own line by its column
    ("to close 'function' at column 8") and one above by its line, so text added after a
    one-line unclosed function must not make its finding look new."""
    return _LINE_NUMBER.sub(lambda m: ("Line" if m.group(1)[0].isupper() else "line") + " #", message)


def finding_key(f: Finding, text: str | None) -> tuple[str, str, str]:
    """``(rule, message without line numbers, covered text)`` of ``f`` computed on ``text``
    (``None``: the covered text is left out of the key)."""
    snippet = ""
    if text is not None and 0 <= f.start <= f.end <= len(text):
        snippet = _SPACE.sub(" ", text[f.start:f.end][:SNIPPET_CHARS]).strip()
    return (f.rule, normalise_message(f.message), snippet)


def changed_lines(old_text: str, new_text: str) -> set[int]:
    """0-based lines of ``new_text`` that are not an unchanged line of ``old_text``."""
    a = old_text.splitlines()
    b = new_text.splitlines()
    kept: set[int] = set()
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        kept.update(range(block.b, block.b + block.size))
    return set(range(max(len(b), 1))) - kept


def introduced_findings(old: Iterable[Finding], old_text: str | None, new: Sequence[Finding], new_text: str,
                        *, changed: set[int] | None = None) -> list[Finding]:
    """The findings of ``new`` (on ``new_text``) that ``old`` (on ``old_text``) did not have.

    ``old_text`` ``None`` means a new file: every finding is introduced.  ``changed``: the
    0-based lines of ``new_text`` the change touched (default: from a line diff); where a
    key occurs more often than before, findings on those lines are counted new first.
    The result keeps ``new``'s order.
    """
    if old_text is None:
        return list(new)
    budget = Counter(finding_key(f, old_text) for f in old)
    if not budget:
        return list(new)
    if changed is None:
        changed = changed_lines(old_text, new_text)
    keys = [finding_key(f, new_text) for f in new]

    def touched(f: Finding) -> bool:
        return any(line in changed for line in range(f.range.start.line, f.range.end.line + 1))

    # Unchanged lines use up the old occurrences first, so a duplicate the change made is
    # reported where the change made it.
    order = sorted(range(len(new)), key=lambda i: touched(new[i]))
    fresh: set[int] = set()
    for i in order:
        if budget[keys[i]] > 0:
            budget[keys[i]] -= 1
        else:
            fresh.add(i)
    return [f for i, f in enumerate(new) if i in fresh]
