"""The words and fix text every rule shares, written once.

* :func:`did_you_mean` - the end of a message: ``". Did you mean 'X'?"`` or ``"."`` (the
  linter's checks and the tool-call validator);
* :func:`replace_title` - a fix's title, ``"Replace 'a' with 'b'"``;
* :func:`string_literal` - a name written as a Luau string literal in the quote the code
  used, escaped.

The one clearly best candidate a fix may offer is :func:`luaguard.fuzzy.best_fix`'s.
"""

from __future__ import annotations

from typing import Sequence


def did_you_mean(suggestions: Sequence[str], none: str = ".", lead: str = ". ") -> str:
    """``". Did you mean 'S'?"`` for the best of ``suggestions``, else ``none``; ``lead``
    goes before "Did you mean" (``" "`` after a message that ends its own sentence, as the
    tool-call validator's do)."""
    return f"{lead}Did you mean '{suggestions[0]}'?" if suggestions else none


def replace_title(old: str, new: str | None) -> str:
    """A fix's title, ``"Replace 'old' with 'new'"`` (``""`` when there is no fix)."""
    return f"Replace '{old}' with '{new}'" if new else ""


def escape(name: str, quote: str = '"') -> str:
    """``name`` escaped for the inside of a Luau string delimited by ``quote``."""
    return name.replace("\\", "\\\\").replace(quote, "\\" + quote)


def string_literal(text: str, start: int, name: str) -> str:
    """``name`` as a Luau string literal in the quote the code used at ``text[start]``
    (``"`` when no quote is there), escaped."""
    quote = text[start] if start < len(text) and text[start] in "\"'" else '"'
    return f"{quote}{escape(name, quote)}{quote}"
