"""Inline suppressions: luaguard's own comments, and the ones selene and Luau users already have.

Flow: the comments of a file -> :class:`Suppressions` (which rule is silenced where, and by
which comment) -> the engine drops the findings they allow and asks which of luaguard's
own comments silenced nothing or named no rule (:func:`suppression_findings`).

**luaguard's own** (``-- luaguard: allow(rule, ...)``, selene's spelling):

* a comment after code on its line silences the rules on that line;
* a comment alone on its line silences the rules on the next line of code (and on its own
  line: a ``TODO`` the comment itself holds);
* ``--# luaguard: allow(rule)`` anywhere silences the rules in the whole file;
* ``all`` names every rule.

**selene's** (Kampfkarren/selene, ``selene-lib/src/lint_filtering.rs`` and its
"Filtering" docs page): ``-- selene: allow(lint, ...)`` - spaces anywhere are ignored, a
block comment may hold one per line - silences the lints in the *node the comment
precedes* (the whole statement: a function, a table ...); a comment after code on its
line belongs to that code's last token and silences nothing; ``--# selene: allow(lint)``
silences them in the whole file, only before the first code.  Only the selene lints of
:data:`SELENE_LINTS` (the ones that mean what a luaguard rule means) silence anything here;
``deny``/``warn`` change nothing.

**Luau's** (luau-lang/luau, ``Config/src/LinterConfig.cpp`` ``LintWarning::parseMask`` and
``Analysis/src/Linter.cpp``): the hot comments ``--!nolint`` (every lint) and
``--!nolint Name`` (one lint) before the first token of the file silence the lint in the
whole file; after the first token Luau ignores them, and so does luaguard.  Only the Luau
lints of :data:`LUAU_LINTS` silence anything here (a bare ``--!nolint``: all of them).

Findings about luaguard's own comments (ruff's ``RUF100`` idea): ``unknown_suppression``
(a name that is no rule id: the fix puts in the one clearly best rule id, else removes it)
and ``unused_suppression`` (a rule id the comment silences nowhere, while the rule ran:
the fix removes it - the whole comment when nothing is left).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .findings import Finding, Fix, Severity

#: selene lint -> the luaguard rules it means the same as.  Source: selene's lint list
#: (Kampfkarren/selene ``docs/src/lints/``): ``undefined_variable`` ("a variable that is not
#: defined": luaguard's ``undefined_variable``) and ``deprecated`` ("use of deprecated
#: fields and functions" of the standard library, Roblox's included: ``deprecated_api``).
#: Left out on purpose: ``incorrect_standard_library_use`` (wrong arguments to a standard
#: function; luaguard's ``unknown_member`` is broader: members of instances selene never sees),
#: and style lints luaguard has no rule for (``shadowing``, ``unused_variable`` ...).
SELENE_LINTS: dict[str, tuple[str, ...]] = {
    "undefined_variable": ("undefined_variable",),
    "deprecated": ("deprecated_api",),
}

#: Luau lint name -> the luaguard rules it means the same as.  Source: Luau's lint list
#: (luau-lang/luau ``Config/include/Luau/LinterConfig.h`` ``kWarningNames``, luau.org/lint):
#: ``UnknownGlobal`` (a global that is not defined), ``DeprecatedGlobal`` (a deprecated
#: global such as ``wait``), ``DeprecatedApi`` (a deprecated member).  Left out:
#: ``UnknownType`` (only ``type(x) == "..."``/``typeof`` comparisons, which luaguard does not
#: check) and the style lints (``LocalUnused``, ``LocalShadow`` ...).
LUAU_LINTS: dict[str, tuple[str, ...]] = {
    "UnknownGlobal": ("undefined_variable",),
    "DeprecatedGlobal": ("deprecated_api",),
    "DeprecatedApi": ("deprecated_api",),
}



def luaurc_disabled_rules(config) -> frozenset[str]:
    """The luaguard rules a ``.luaurc``'s ``"lint"`` settings turn off for a file (``config``:
    its :class:`~luaguard.project.luaurc.LuauConfig`): those :data:`LUAU_LINTS` maps from
    each Luau lint that is off there (``"lint": {"UnknownGlobal": false}``, or ``"*": false``),
    as ``--!nolint Name`` would for that file."""
    if not config.lint:
        return frozenset()
    return frozenset(r for name, rules in LUAU_LINTS.items() if config.lint_disabled(name) for r in rules)


ALL = "all"
UNKNOWN_SUPPRESSION = "unknown_suppression"
UNUSED_SUPPRESSION = "unused_suppression"
#: rules the engine reports about suppression comments, with their default severity
SUPPRESSION_RULES: dict[str, Severity] = {UNKNOWN_SUPPRESSION: Severity.WARNING, UNUSED_SUPPRESSION: Severity.WARNING}

_ALLOW = re.compile(r"luaguard:\s*allow\(([^)]*)\)")
_SELENE = re.compile(r"^(#?)selene:(allow|deny|warn)\(([^)]*)\)")


@dataclass(eq=False)
class Allow:
    """One rule silenced by one comment: ``rule`` (a luaguard rule id or ``all``), where it
    applies (``whole_file``, else the 0-based ``lines`` or the offsets ``span``), the
    comment's offsets ``[start, end)`` and the ``name`` as written there (its offsets
    ``name_start``/``name_end``); ``own``: a luaguard comment (checked for use); ``used``:
    it silenced a finding."""

    rule: str
    start: int
    end: int
    name: str = ""
    name_start: int = 0
    name_end: int = 0
    whole_file: bool = False
    lines: tuple[int, ...] = ()
    span: tuple[int, int] | None = None
    own: bool = False
    used: bool = False

    def covers(self, finding: Finding) -> bool:
        if self.rule != ALL and self.rule != finding.rule:
            return False
        if self.whole_file:
            return True
        if self.span is not None:
            return self.span[0] <= finding.start < self.span[1]
        return finding.range.start.line in self.lines


@dataclass
class Suppressions:
    """Every :class:`Allow` of one file (``allows``) and the names of luaguard comments that
    are no rule (``unknown``: :class:`Allow` with ``rule`` set to the name as written)."""

    allows_: list[Allow] = field(default_factory=list)
    unknown: list[Allow] = field(default_factory=list)

    def allows(self, finding: Finding, *, mark: bool = True) -> bool:
        """Does a comment silence ``finding``?  ``mark``: record the use (every comment that
        covers it counts as used)."""
        hit = False
        for a in self.allows_:
            if a.covers(finding):
                hit = True
                if not mark:
                    break
                a.used = True
        return hit


def parse_suppressions(ctx, known_rules=None) -> Suppressions:
    """The :class:`Suppressions` of the prepared file ``ctx`` (a
    :class:`~luaguard.checks.base.CheckContext`: its text, comments, tokens, line index and
    AST); ``known_rules``: the rule ids a luaguard comment may name (default: every rule
    id luaguard reports).  Never raises."""
    text = ctx.text
    sup = Suppressions()
    has_own, has_selene, has_luau = "luaguard:" in text, "selene" in text, "--!" in text
    if not (has_own or has_selene or has_luau):
        return sup
    if known_rules is None:
        from .config import known_rule_ids

        known_rules = known_rule_ids()
    import bisect

    from .luau.lexer import EOF

    tokens = ctx.lex.tokens
    n = len(tokens) - (1 if tokens and tokens[-1].kind == EOF else 0)  # (no copy: most files have a --! header)
    first_code = tokens[0].start if n else len(text)

    def start_of(t) -> int:
        return t.start

    def prev_token_on_line(offset: int) -> bool:
        i = bisect.bisect_left(tokens, offset, 0, n, key=start_of) - 1
        return i >= 0 and ctx.lines.line_of(tokens[i].start) == ctx.lines.line_of(offset)

    def next_token(offset: int):
        i = bisect.bisect_left(tokens, offset, 0, n, key=start_of)
        return tokens[i] if i < n else None

    node_ends: dict[int, int] | None = None
    for c in ctx.lex.comments:
        ctext = c.text
        if has_own and "luaguard:" in ctext:
            m = _ALLOW.search(ctext)
            if m:
                whole = ctext.startswith("--#")
                lines: tuple[int, ...] = ()
                if not whole:
                    line = ctx.lines.line_of(c.start)
                    if prev_token_on_line(c.start):
                        lines = (line,)
                    else:
                        # the next line of code, and the comment's own line (the comment may say
                        # more than the directive: `-- TODO x -- luaguard: allow(placeholder)`)
                        nxt = next_token(c.end)
                        lines = (line, ctx.lines.line_of(nxt.start)) if nxt is not None else (line,)
                at = c.start + m.start(1)
                for part in re.finditer(r"[^,]+", m.group(1)):
                    name = part.group(0).strip()
                    if not name:
                        continue
                    n_start = at + part.start() + (len(part.group(0)) - len(part.group(0).lstrip()))
                    a = Allow(name, c.start, c.end, name, n_start, n_start + len(name), whole, lines, None, own=True)
                    if name == ALL or name in known_rules:
                        sup.allows_.append(a)
                    else:
                        sup.unknown.append(a)
                continue
        if has_selene and "selene" in ctext:
            body = ctext[2:]
            if body.startswith("[") and (lb := re.match(r"\[=*\[", body)):
                body = body[lb.end():]
                chunks = body.splitlines()
            else:
                chunks = [body]
            for chunk in chunks:
                m = _SELENE.match("".join(chunk.split()))
                if not m or m.group(2) != "allow":
                    continue
                rules = [r for lint in m.group(3).split(",") for r in SELENE_LINTS.get(lint, ())]
                if not rules:
                    continue
                if m.group(1):  # --# selene: a whole-file filter, only before the first code
                    if c.start < first_code:
                        sup.allows_.extend(Allow(r, c.start, c.end, whole_file=True) for r in rules)
                    continue
                if prev_token_on_line(c.start):
                    continue  # trailing trivia of the code before it: selene applies it to nothing
                nxt = next_token(c.end)
                if nxt is None:
                    continue
                if node_ends is None:
                    node_ends = _node_ends(ctx)
                end = node_ends.get(nxt.start)
                span = (nxt.start, end) if end is not None else None
                lines = () if span else (ctx.lines.line_of(nxt.start),)
                sup.allows_.extend(Allow(r, c.start, c.end, span=span, lines=lines) for r in rules)
        if has_luau and ctext.startswith("--!nolint") and c.start < first_code:
            rest = ctext[len("--!nolint"):]
            if rest.strip() == "":
                rules = sorted({r for rs in LUAU_LINTS.values() for r in rs})
            elif rest[:1] in (" ", "\t"):
                rules = list(LUAU_LINTS.get(rest.strip(), ()))
            else:
                rules = []
            sup.allows_.extend(Allow(r, c.start, c.end, whole_file=True) for r in rules)
    return sup


def _node_ends(ctx) -> dict[int, int]:
    """For each offset where a node of the file's AST starts, the end of the largest node
    starting there (selene filters the outermost node a comment precedes)."""
    from .luau.ast import Block, walk

    out: dict[int, int] = {}
    tree = getattr(ctx, "ast", None)
    if tree is None:
        return out
    for node in walk(getattr(tree, "body", tree)):
        if isinstance(node, Block):
            continue
        s, e = getattr(node, "start", None), getattr(node, "end", None)
        if s is None or e is None:
            continue
        if e > out.get(s, -1):
            out[s] = e
    return out


def suppression_findings(ctx, sup: Suppressions, ran: set[str], known_rules) -> list[Finding]:
    """``unknown_suppression`` for every name of a luaguard comment that is no rule id, and
    ``unused_suppression`` for every rule of a luaguard comment that silenced nothing while
    the rule ran (``ran``: the rule ids whose checks ran on this file; ``all`` counts when
    any ran).  Each with a fix (see the module docstring)."""
    from .fuzzy import best_fix, rank

    out: list[Finding] = []
    own = [a for a in sup.allows_ if a.own] + sup.unknown
    by_comment: dict[int, list[Allow]] = {}
    for a in own:
        by_comment.setdefault(a.start, []).append(a)
    def unused(a: Allow) -> bool:
        return a.own and not a.used and (bool(ran) if a.rule == ALL else a.rule in ran)

    going = {id(a) for a in own if a not in sup.unknown and unused(a)}
    names = [*known_rules, ALL]
    for a in sup.unknown:
        wanted = a.name.replace("-", "_").strip()
        ranked = rank(wanted, names)
        best = wanted if wanted in known_rules else best_fix(ranked)
        suggestions = tuple(c for c, _ in ranked[:3])
        hint = f"; did you mean '{best or suggestions[0]}'?" if (best or suggestions) else ""
        msg = f"'{a.name}' names no luaguard rule: this suppression silences nothing{hint}"
        if best is not None:
            fix = Fix(ctx.lines.range(a.name_start, a.name_end), best, f"Replace with '{best}'", safe=True)
        else:
            # the person may have meant a rule: review it
            fix = replace(_removal(ctx, a, by_comment[a.start], going | {id(a)}, "Remove the unknown rule"), safe=False)
        out.append(_finding(ctx, UNKNOWN_SUPPRESSION, a, msg, fix, suggestions))
    for a in own:
        if id(a) not in going:
            continue
        where = "in this file" if a.whole_file else "here"
        msg = f"Unused suppression: no '{a.rule}' finding {where} to silence"
        fix = _removal(ctx, a, by_comment[a.start], going, "Remove the unused suppression")
        out.append(_finding(ctx, UNUSED_SUPPRESSION, a, msg, fix))
    return out


def _finding(ctx, rule: str, a: Allow, message: str, fix: Fix | None, suggestions=()) -> Finding:
    return Finding(rule, SUPPRESSION_RULES[rule], ctx.lines.range(a.name_start, a.name_end), message,
                   suggestions=tuple(suggestions), fix=fix, start=a.name_start, end=a.name_end)


def _removal(ctx, a: Allow, siblings: list[Allow], going: set[int], title: str) -> Fix:
    """The edit that takes ``a``'s name out of its comment, or the whole comment when every
    other name of it goes too (``siblings``: the comment's names; ``going``: the ids of
    those that are removed)."""
    text = ctx.text
    if all(s is a or id(s) in going for s in siblings):
        start, end = a.start, a.end
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        before, after = text[line_start:start], text[end:line_end]
        if not before.strip() and not after.strip():  # a comment alone on its line: the line goes
            start, end = line_start, (line_end + 1 if line_end < len(text) else line_end)
        else:
            while start > line_start and text[start - 1] in " \t":
                start -= 1
        return Fix(ctx.lines.range(start, end), "", title, safe=True)
    # take the name and one comma next to it out of the list
    start, end = a.name_start, a.name_end
    after = text[end:a.end]
    m = re.match(r"\s*,\s*", after)
    if m:
        end += m.end()
    else:
        before = text[a.start:start]
        m2 = re.search(r"\s*,\s*$", before)
        if m2:
            start -= len(m2.group(0))
    return Fix(ctx.lines.range(start, end), "", title, safe=True)
