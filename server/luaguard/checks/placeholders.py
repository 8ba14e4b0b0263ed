"""``placeholder``: text an assistant leaves where code should be.

Three kinds, told apart because people write TODOs and ellipses too:

* **truncation markers** - ``...`` standing where a statement should be, comments such as
  ``-- ... rest of code``, ``-- your code here``, ``-- implement this`` (an instruction),
  ``<placeholder>``, ``-- (existing code unchanged)``: always errors, the code is incomplete;
* **a bare ellipsis comment** on a line of its own (``-- ...``, ``--[[ ... ]]``): the
  classic elision of an assistant's patch, so an error in ``patch`` mode; in ``editor`` mode,
  where a person wrote it (a pause between steps, "more of the same"), a warning.  As a line
  comment after code on its line (``return "TK_DOTS"   -- ...``) it documents that code:
  prose, never flagged;
* **TODO / FIXME** comments: warnings in ``editor`` mode, errors in ``patch`` mode (code an
  AI proposes should not ship unfinished work).

**Comments.**  The rules are data, :data:`COMMENT_RULES`: regular expressions over a
comment's *subject* - one context byte, then the comment's body (the text after ``--``, or
between the brackets of ``--[[ ]]``) as UTF-8.  The context byte is :data:`CTX_LINE` for a
line comment, :data:`CTX_TRAIL` for a line comment right after code on its line (only
blanks between the code's last token and ``--``: a note on that code, where an ellipsis is
prose), :data:`CTX_RUN` for a line comment that continues the line comment of the line
before (only white space and one line break between them: a comment paragraph, where an
ellipsis is prose), :data:`CTX_BLOCK` for a block comment, and :data:`CTX_TYPE` / :data:`CTX_TYPE_BLOCK` for a
line / block comment inside the braces of a table type (``-- ...`` there says the record
has more fields: no code is left out).  Ordinary prose stays clean:
a phrase is a marker only where an assistant writes it as one - the whole comment (``--
same as before``), an instruction at its start (``-- implement this``, not "we implement
this here because ..."), or a phrase no prose uses (``your code here``); in a block
comment (a doc comment) only a whole single-line body is a marker (``--[[ ... ]]``).  The
decoding guard compiles these same expressions into its automaton
(:mod:`luaguard.guard.elision_matchers`), so it refuses exactly the comments this rule flags.
A finding covers the phrase that matched and quotes it.

**Ellipses in code.**  The parser says what each ``...`` is: a vararg parameter or a type
pack is not a placeholder (except a pack's ``...`` alone on its line after a complete
type, ``-> T`` then a line ``...``: valid Luau, but only a cut leaves it so); a ``...``
*expression* (or one the parser rejects) is one where it stands alone where code should be - in statement position, alone on its line
outside a function that declares ``...`` (a Roblox script's main chunk receives no
varargs), or at the end of a line where no expression may end.  String contents are never
placeholders.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

# the comment grammar (shared with the guard)
from ..elisions import COMMENT_RULES, CTX_BLOCK, CTX_LINE, CTX_RUN, CTX_TRAIL, CTX_TYPE, CTX_TYPE_BLOCK, CommentRule
from ..findings import Finding, Severity
from ..luau import lexer as L
from ..luau.structure import EXPRESSION_PRECEDERS
from ..rules.completeness.placeholder import RULE as PLACEHOLDER
from .base import CheckContext

RULE = PLACEHOLDER.id
#: a suppression comment's directive (luaguard.suppressions)
_DIRECTIVE = re.compile(r"(?:--\s*)?luaguard:\s*allow\([^)]*\)")

def comment_body(tok: L.Token) -> str:
    """Text of a comment token without its ``--`` / ``--[[ ]]`` delimiters."""
    return tok.text[_body_start(tok):_body_end(tok)]


def _body_start(tok: L.Token) -> int:
    """Where the body of comment ``tok`` starts, relative to the token."""
    if tok.kind == L.BLOCK_COMMENT:
        m = _BLOCK_OPEN.match(tok.text)
        if m:
            return m.end()
    return 2


def _body_end(tok: L.Token) -> int:
    text = tok.text
    if tok.kind == L.BLOCK_COMMENT:
        m = _BLOCK_OPEN.match(text)
        if m:
            closer = "]" + m.group(1) + "]"
            if text.endswith(closer) and len(text) - len(closer) >= m.end():
                return len(text) - len(closer)
    return len(text)


_BLOCK_OPEN = re.compile(r"--\[(=*)\[")


def comment_subject(context: int, body: str) -> bytes:
    """The bytes :data:`COMMENT_RULES` read: the context byte, then ``body`` as UTF-8."""
    return bytes((context,)) + body.encode("utf-8", "surrogatepass")


@dataclass(frozen=True, slots=True)
class CommentMatch:
    """A rule that matched a comment: ``rule``, and the matched text's ``[start, end)``
    as offsets into the comment's body (characters)."""

    rule: CommentRule
    start: int
    end: int


_ANY: dict[int, tuple] = {}
_LEAD_CLASS = re.compile(rb"\^(\[(?:\\.|[^\]\\])*\])")


def _any_rule(subject: bytes) -> bool:
    """Does some rule of :data:`COMMENT_RULES` match ``subject``?  The same answer as
    searching with each rule, in one or two passes: a rule that starts ``^[...]`` (no
    multi-line mode: a search can only match at offset 0) is tried only on subjects whose
    context byte its class accepts, joined with the other such rules into one alternation
    matched at the start; the other rules are one searched alternation per case
    setting."""
    if not subject:
        return any(rule.regex.search(subject) is not None for rule in COMMENT_RULES)
    ctx = subject[0]
    matchers = _ANY.get(ctx)
    if matchers is None:
        anchored: list[bytes] = []
        loose: dict[bool, list[bytes]] = {True: [], False: []}
        for rule in COMMENT_RULES:
            pattern = rule.pattern if not rule.ignore_case else b"(?i:" + rule.pattern + b")"
            lead = _LEAD_CLASS.match(rule.pattern)
            if lead is not None:
                flags = re.IGNORECASE if rule.ignore_case else 0
                if re.fullmatch(lead.group(1), bytes((ctx,)), flags) is not None:
                    anchored.append(b"(?:" + pattern + b")")
            else:
                loose[rule.ignore_case].append(b"(?:" + pattern + b")")
        found = [re.compile(b"|".join(anchored)).match] if anchored else []
        found += [re.compile(b"|".join(group)).search for group in loose.values() if group]
        matchers = _ANY[ctx] = tuple(found)
    return any(m(subject) is not None for m in matchers)


def match_comment(context: int, body: str) -> CommentMatch | None:
    """The first rule of :data:`COMMENT_RULES` whose expression matches the comment (every
    truncation rule before the ellipsis and TODO rules), or ``None``.  The match's span is trimmed of
    white space and the context byte and never empty."""
    subject = comment_subject(context, body)
    if not _any_rule(subject):
        return None  # (most comments: one pass instead of one per rule)
    for rule in COMMENT_RULES:
        m = rule.regex.search(subject)
        if m is None:
            continue
        a, z = m.span()
        a = max(a, 1)
        while a < z and subject[a:a + 1].isspace():
            a += 1
        while z > a and subject[z - 1:z].isspace():
            z -= 1
        if z <= a:  # only white space matched (cannot happen with these rules): the whole body
            a, z = 1, len(subject)
        start = len(subject[1:a].decode("utf-8", "replace"))
        end = start + len(subject[a:z].decode("utf-8", "replace"))
        return CommentMatch(rule, start, end)
    return None


def comment_contexts(lex: L.LexResult, text: str, table_types: list[tuple[int, int]] = ()) -> list[int]:
    """The context byte of each of ``lex.comments`` (see the module docstring);
    ``table_types``: the ``(start, end)`` spans of the text's table types, sorted by start
    (nested or disjoint, as a parse gives them)."""
    out: list[int] = []
    tokens = lex.tokens
    starts = [t.start for t in tokens]
    open_types: list[int] = []  # ends of the table types around the current comment
    k = 0
    prev_comment: L.Token | None = None
    for c in lex.comments:
        while k < len(table_types) and table_types[k][0] < c.start:
            open_types.append(table_types[k][1])
            k += 1
        open_types = [z for z in open_types if z > c.start]
        ctx = CTX_LINE
        i = bisect.bisect_left(starts, c.start) - 1  # the last token before this comment
        if c.kind == L.BLOCK_COMMENT:
            ctx = CTX_TYPE_BLOCK if open_types else CTX_BLOCK
        elif open_types:
            ctx = CTX_TYPE
        elif i >= 0 and not text[tokens[i].end:c.start].strip(_BLANKS):
            ctx = CTX_TRAIL
        elif prev_comment is not None and prev_comment.kind == L.COMMENT:
            between = text[prev_comment.end:c.start]
            if ((i < 0 or tokens[i].end <= prev_comment.start) and not between.strip()
                    and between.count("\n") <= 1 and ("\n" in between or "\r" in between)):
                ctx = CTX_RUN
        out.append(ctx)
        prev_comment = c
    return out


_BLANKS = " \t\v\f"  # white space that is no line break

# Tokens that may follow `...` when it is a vararg or a type pack, not a statement.
_VARARG_FOLLOWERS = frozenset({")", ",", ">", "]", "}", "=", ":", "->", "..", "::", "|", "&", "?"})


class PlaceholderCheck:
    """Flags truncation markers, bare ellipsis comments and TODO/FIXME comments (see module
    docstring)."""

    rules = {RULE: PLACEHOLDER.severity}

    def check(self, ctx: CheckContext) -> list[Finding]:
        out: list[Finding] = []
        todo_severity = Severity.ERROR if ctx.mode == "patch" else Severity.WARNING
        comments = ctx.lex.comments
        table_types = ctx.ast.table_types if ctx.ast is not None else []
        contexts = comment_contexts(ctx.lex, ctx.text, table_types) if comments else []
        for tok, context in zip(comments, contexts):
            body = comment_body(tok)
            if "luaguard:" in body:
                # a suppression directive (the user's, read by the engine) is no placeholder; what
                # the comment says before it is (`-- TODO x -- luaguard: allow(placeholder)`, the
                # language server's "Suppress" action): blanked, so offsets stay
                body = _DIRECTIVE.sub(lambda d: " " * len(d.group(0)), body)
                if not body.strip(" -"):
                    continue
            m = match_comment(context, body)
            if m is None:
                continue
            base = tok.start + _body_start(tok)
            if m.rule.kind == "truncation" or (m.rule.kind == "ellipsis" and ctx.mode == "patch"):
                out.append(ctx.finding(
                    RULE, Severity.ERROR, base + m.start, base + m.end,
                    f"Placeholder comment '{_clip(body[m.start:m.end])}': code was left out here; write the complete code"))
                continue
            if m.rule.kind == "ellipsis":
                out.append(ctx.finding(
                    RULE, Severity.WARNING, base + m.start, base + m.end,
                    f"Comment '{_clip(body[m.start:m.end])}' reads as code left out here; "
                    "write the code, or say what it stands for"))
                continue
            # TODO/FIXME: the marker and the rest of its line
            line_end = body.find("\n", m.start)
            note = body[m.start:line_end if line_end >= 0 else len(body)].rstrip()
            marker = body[m.start:m.end].rstrip(": \t").upper()
            where = "in a patch" if ctx.mode == "patch" else "in the code"
            out.append(ctx.finding(RULE, todo_severity, base + m.start, base + m.start + len(note),
                                   f"{marker} comment {where}: '{_clip(note)}'"))
        out.extend(self._statement_ellipses(ctx))
        return out

    def _statement_ellipses(self, ctx: CheckContext) -> list[Finding]:
        """``...`` expressions (or ``...`` the parser rejects) standing where code should be
        (see the module docstring)."""
        out: list[Finding] = []
        text = ctx.text
        if "..." not in text or ctx.ast is None:
            return out
        tokens = ctx.lex.tokens
        ast = ctx.ast
        declared = {offset for offset, dec in ast.varargs if dec}
        candidates = {offset for offset, _dec in ast.varargs} | {e.start for e in ast.errors}
        for i, tok in enumerate(tokens):
            if tok.kind != "...":
                continue
            prev = tokens[i - 1] if i else None
            nxt = tokens[i + 1]
            if tok.start not in candidates:
                # a vararg parameter or a type pack, as the parser read it; one alone on its
                # line after a complete type (`-> State` then a line `...`: Luau joins them
                # into the pack `State...`) is still a truncation marker - nobody writes a
                # pack that way, while `...` on a line of its own is how code gets cut
                if (prev is not None and prev.kind not in ("(", ",", "<") and _line_break_between(text, prev.end, tok.start)
                        and (nxt.kind == L.EOF or _line_break_between(text, tok.end, nxt.start))):
                    out.append(self._ellipsis(ctx, tok))
                continue
            if (
                tok.start not in declared
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


def _line_break_between(text: str, a: int, b: int) -> bool:
    return "\n" in text[a:b]


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
