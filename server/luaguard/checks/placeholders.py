"""``placeholder``: text an assistant leaves where code should be.

Two kinds, told apart because people write TODOs too:

* **truncation markers** — ``...`` standing where a statement should be, comments such as
  ``-- ... rest of code``, ``-- your code here``, ``-- implement this``, ``<placeholder>``,
  ``-- (existing code unchanged)``: always errors, the code is incomplete;
* **TODO / FIXME** comments: warnings in ``editor`` mode, errors in ``patch`` mode (code an
  AI proposes should not ship unfinished work).

Token-aware: varargs (``function f(...)``, ``{...}``, ``select("#", ...)``, type packs
``T...``) and string contents are never placeholders.
"""

from __future__ import annotations

import re

from ..findings import Finding, Severity
from ..luau import lexer as L
from ..luau.structure import EXPRESSION_PRECEDERS
from .base import CheckContext

RULE = "placeholder"

_ELLIPSIS = r"(?:\.{3,}|…)"
_TRUNCATION = re.compile(
    r"|".join(
        [
            # a comment that is only an ellipsis:  -- ...   --[[ ... ]]   -- (...)
            rf"^\s*[\[(]?\s*{_ELLIPSIS}\s*[\])]?\s*$",
            # an ellipsis opening a comment:  -- ... rest of code / -- ... other handlers
            rf"^\s*{_ELLIPSIS}\s*\(?[A-Za-z]",
            # "rest of (the) [up to three words] code|implementation|..." standing as the
            # whole comment (optionally followed by here / unchanged / as before ...), so
            # "-- the rest of the code expects numbers" stays a normal comment.
            rf"^\W*(?:{_ELLIPSIS})?\W*(?:and\s+)?(?:the\s+)?rest\s+of\s+(?:the\s+|your\s+|this\s+|my\s+)?(?:[\w-]+\s+){{0,3}}?"
            r"(?:code|implementation|script|function|file|module|logic|class|methods?|functions|body|loop|handlers?|setup|cases?)"
            r"(?:\s+(?:here|goes\s+here|remains?\s+(?:the\s+same|unchanged)|unchanged|as\s+before|omitted|follows|"
            r"stays\s+the\s+same|is\s+(?:the\s+same|unchanged)|(?:would\s+)?go(?:es)?\s+here))?\W*$",
            r"\brest\s+of\s+(?:the\s+)?(?:code|implementation)\s+(?:here|goes\s+here|unchanged|omitted|remains\s+the\s+same)\b",
            r"\b(?:your|the|my)\s+(?:own\s+)?(?:code|logic|implementation)\s+(?:goes\s+)?here\b",
            r"\b(?:code|logic|implementation)\s+goes\s+here\b",
            r"\b(?:add|insert|put|write)\s+(?:your\s+|the\s+|more\s+)?(?:code|logic|implementation)\s+here\b",
            r"\bimplement\s+(?:this|me|here|the\s+rest|it\s+here)\b",
            r"<\s*(?:placeholder|your[^>]{0,40}here|insert[^>]{0,40}|todo)\s*>",
            r"\bplaceholder\b(?:\s+(?:code|logic|implementation|function))?\s*$",
            r"^\s*\(?\s*(?:existing|previous|original|unchanged|remaining|other)\s+(?:code|logic|functions|methods|implementation|handlers)\b",
            r"\b(?:same\s+as\s+(?:before|above|original)|unchanged\s+from\s+(?:before|above|original))\b",
            r"\bcode\s+(?:continues|omitted|truncated)\b",
            # a comment that is only "etc." or "and so on"
            r"^\W*(?:etc\.*|and\s+so\s+on\.*)\W*$",
            # "-- keep existing handlers", "-- (leave the other methods as is)" as the whole comment
            r"^\W*(?:keep|leave)\s+(?:the\s+|all\s+)?(?:existing|other|remaining|previous|original)\s+[\w-]+"
            r"(?:\s+[\w-]+)?(?:\s+(?:as\s+(?:is|before)|unchanged|here|intact))?\W*$",
            r"\b(?:omitted|truncated)\s+for\s+brevity\b",
        ]
    ),
    re.IGNORECASE,
)
_TODO = re.compile(r"\b(TODO|FIXME)\b|\b([Tt]odo|[Ff]ixme)\s*:")

# Tokens that may follow `...` when it is a vararg or a type pack, not a statement.
_VARARG_FOLLOWERS = frozenset({")", ",", ">", "]", "}", "=", ":", "->", "..", "::", "|", "&", "?"})


def comment_body(tok: L.Token) -> str:
    """Text of a comment token without its ``--`` / ``--[[ ]]`` delimiters."""
    text = tok.text
    if tok.kind == L.BLOCK_COMMENT:
        m = re.match(r"--\[(=*)\[", text)
        if m:
            closer = "]" + m.group(1) + "]"
            body = text[m.end():]
            return body[: -len(closer)] if body.endswith(closer) else body
    return text[2:]


class PlaceholderCheck:
    """Flags truncation markers and TODO/FIXME comments (see module docstring)."""

    rules = {RULE: Severity.ERROR}

    def check(self, ctx: CheckContext) -> list[Finding]:
        out: list[Finding] = []
        todo_severity = Severity.ERROR if ctx.mode == "patch" else Severity.WARNING
        for tok in ctx.lex.comments:
            body = comment_body(tok)
            if body.startswith("!") or "luaguard:" in body:
                continue  # hot comments (--!strict) and our own directives
            m = _TRUNCATION.search(body)
            if m:
                text = body.strip()
                out.append(
                    ctx.finding(
                        RULE, Severity.ERROR, tok.start, tok.end,
                        f"Placeholder comment '{_clip(text)}': code was left out here; write the complete code",
                    )
                )
                continue
            m = _TODO.search(body)
            if m:
                marker = (m.group(1) or m.group(2)).upper()
                where = "in a patch" if ctx.mode == "patch" else "in the code"
                out.append(
                    ctx.finding(
                        RULE, todo_severity, tok.start, tok.end,
                        f"{marker} comment {where}: '{_clip(body.strip())}'",
                    )
                )
        out.extend(self._statement_ellipses(ctx))
        return out

    def _statement_ellipses(self, ctx: CheckContext) -> list[Finding]:
        """``...`` standing where code should be: in statement position, or alone on its
        line outside a function that declares ``...`` (a Roblox script's main chunk
        receives no varargs)."""
        out: list[Finding] = []
        text = ctx.text
        if "..." not in text:
            return out
        tokens = ctx.lex.tokens
        real_varargs = _declared_varargs(ctx)
        for i, tok in enumerate(tokens):
            if tok.kind != "...":
                continue
            prev = tokens[i - 1] if i else None
            nxt = tokens[i + 1]
            if (
                tok.start not in real_varargs
                and (prev is None or _line_break_between(text, prev.end, tok.start))
                and (nxt.kind == L.EOF or _line_break_between(text, tok.end, nxt.start) or nxt.kind in (",", ";"))
            ):
                out.append(self._ellipsis(ctx, tok))
                continue
            if prev is not None:
                if prev.kind in EXPRESSION_PRECEDERS or prev.kind in ("then", "else"):
                    # `return ...`, `f(...)`, `{...}`; after then/else it is an
                    # if-expression branch only when followed by more expression.
                    if prev.kind not in ("then", "else") or not _line_break_between(text, tok.end, nxt.start):
                        continue
                if prev.end == tok.start and prev.kind == L.NAME:
                    continue  # type pack `T...`
            if nxt.kind in _VARARG_FOLLOWERS:
                continue
            if nxt.kind != L.EOF and not _line_break_between(text, tok.end, nxt.start):
                continue
            out.append(self._ellipsis(ctx, tok))
        return out

    def _ellipsis(self, ctx: CheckContext, tok: L.Token) -> Finding:
        f = ctx.finding(
            RULE, Severity.ERROR, tok.start, tok.end,
            "'...' stands where code should be: it is a truncation placeholder, not Luau; write the complete code",
        )
        f.data["supersedes_syntax"] = True
        return f


def _declared_varargs(ctx: CheckContext) -> set[int]:
    """Offsets of ``...`` expressions inside functions that declare ``...``."""
    if ctx.ast is None:
        return set()
    return {offset for offset, declared in ctx.ast.varargs if declared}


def _line_break_between(text: str, a: int, b: int) -> bool:
    return "\n" in text[a:b]


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
