"""One message per call, addressed to the model, that it can act on in its next try.

Shape: ``"Your <tool> call was rejected. Fix these and call again: (1) <message> <hint>
(2) ..."`` or ``"The <tool> call is valid."`` (plus warnings).  The message names what
exists (the hints: children, scripts, properties, tools) and is bounded: at most
:data:`MAX_ITEMS` problems are spelled out, each at most :data:`MAX_ITEM_CHARS`
characters, and the whole message at most :data:`MAX_CHARS` characters.
"""

from __future__ import annotations

from .model import CallResult, Problem

MAX_CHARS = 1500
MAX_ITEMS = 6
MAX_ITEM_CHARS = 600


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _item(p: Problem) -> str:
    text = p.message
    if p.hint:
        text += " " + p.hint
    return _clip(text, MAX_ITEM_CHARS)


def _join(items: list[Problem], budget: int) -> str:
    parts: list[str] = []
    used = 0
    shown = 0
    for i, p in enumerate(items[:MAX_ITEMS]):
        piece = f"({i + 1}) {_item(p)}"
        if used + len(piece) + 1 > budget and shown:
            break
        parts.append(piece)
        used += len(piece) + 1
        shown += 1
    rest = len(items) - shown
    if rest > 0:
        parts.append(f"… and {rest} more problem{'s' if rest != 1 else ''}.")
    return " ".join(parts)


def feedback_for(result: CallResult) -> str:
    """The feedback text for ``result`` (see the module docstring)."""
    tool = result.tool or (result.record.name if isinstance(result.record.name, str) else None)
    what = f"{tool} call" if tool else "call"
    where = ""
    if result.record.step is not None:
        where = f" (plan step '{result.record.step}')"
    if result.errors:
        head = f"Your {what}{where} was rejected. Fix {'this' if len(result.errors) == 1 else 'these'} and call again: "
        text = head + _join(result.errors, MAX_CHARS - len(head) - 80)
        if result.warnings and len(text) < MAX_CHARS - 60:
            text += " Also note: " + _join(result.warnings, MAX_CHARS - len(text) - 20)
        return _clip(text, MAX_CHARS)
    head = f"The {what}{where} is valid."
    if result.warnings:
        head += " Note: " + _join(result.warnings, MAX_CHARS - len(head) - 10)
    return _clip(head, MAX_CHARS)


def patch_feedback(path: str, errors: list[Problem], warnings: list[Problem], *, written: bool = False) -> str:
    """Feedback for a patch or diff (``validate_patch``); ``written``: the change is already
    on disk (an agent's post-tool-use hook), so the model is asked for a follow-up edit."""
    if written:
        items = [*errors, *warnings]
        if not items:
            return f"The change to {path} passed every check."
        head = (f"luaguard checked the change just written to {path}; it introduced "
                f"{len(items)} problem{'s' if len(items) != 1 else ''} (what was there before is not counted). "
                f"The file is written; correct it with another edit unless this is intended: ")
        return _clip(head + _join(items, MAX_CHARS - len(head)), MAX_CHARS)
    if errors:
        head = f"Your change to {path} was rejected. Fix {'this' if len(errors) == 1 else 'these'} and send it again: "
        return _clip(head + _join(errors, MAX_CHARS - len(head)), MAX_CHARS)
    head = f"The change to {path} passed every check."
    if warnings:
        head += " Note: " + _join(warnings, MAX_CHARS - len(head) - 10)
    return _clip(head, MAX_CHARS)
