"""The placeholder rule's comment grammar: which comments stand for code left out.

Plain data shared by the linter (:mod:`luaguard.checks.placeholders` matches comments
with it) and the decoding guard (:mod:`luaguard.guard.elision_matchers` compiles the same
patterns into automata with :mod:`luaguard.guard.regexdfa`), so the two never disagree and
the guard never imports the linter.  A comment's *subject* is one context byte (``CTX_*``:
where the comment stands) followed by its UTF-8 body; :data:`COMMENT_RULES` are regular
expressions over subjects (see :class:`CommentRule`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Context bytes that start a comment's subject (see the module docstring).
CTX_LINE, CTX_RUN, CTX_BLOCK, CTX_TYPE, CTX_TYPE_BLOCK, CTX_TRAIL = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06


@dataclass(frozen=True, slots=True)
class CommentRule:
    """One placeholder rule for comments.

    ``kind``: ``"truncation"`` (always an error), ``"ellipsis"`` or ``"todo"`` (errors in
    patch mode, warnings in editor mode);
    ``name``: a short id for tests and messages; ``pattern``: a regular expression over a
    comment's subject (bytes), in the subset :mod:`luaguard.guard.regexdfa` compiles -
    literals, ``.``, classes, ``\\w \\W \\s \\S \\d``, groups, ``|``, ``* + ? {m,n}``
    (lazy or not), ``^``, ``\\Z`` and ``\\b``; ``ignore_case``: ASCII case-insensitive.
    """

    kind: str
    name: str
    pattern: bytes
    ignore_case: bool = True

    @property
    def regex(self) -> re.Pattern[bytes]:
        return _compiled(self)


_COMPILED: dict[CommentRule, re.Pattern[bytes]] = {}


def _compiled(rule: CommentRule) -> re.Pattern[bytes]:
    got = _COMPILED.get(rule)
    if got is None:
        got = _COMPILED[rule] = re.compile(rule.pattern, re.IGNORECASE if rule.ignore_case else 0)
    return got


# -- the rules -----------------------------------------------------------------------------
_LINE = r"[\x01\x02\x04\x06]"  # a line comment in any context
_BLOCK = r"[\x03\x05]"  # a block comment
_FRESH = r"[\x01\x03]"  # a line comment alone on its line, in no paragraph, or a block comment; not in a type
_E = r"(?:\.{3,}|\xe2\x80\xa6)"  # an ellipsis: three or more dots, or U+2026


def _anywhere(core: str) -> list[str]:
    """``core`` anywhere in a line comment, or in a block comment of one line."""
    return [rf"^{_LINE}.*?(?:{core})", rf"^{_BLOCK}\s*[^\n]*?(?:{core})[^\n]*\s*\Z"]


def _start(core: str) -> list[str]:
    """``core`` at the start of a comment (after white space and punctuation, not after a
    letter, a digit or an ellipsis); in a block comment the rest of its one line follows."""
    return [rf"^{_LINE}[^\w.\xe2]*(?:{core})", rf"^{_BLOCK}[^\w.\xe2]*(?:{core})[^\n]*\s*\Z"]


def _whole(core: str, line: str = r"\x01\x02\x04\x06", block: str = r"\x03\x05") -> list[str]:
    """``core`` as the whole comment (white space and punctuation around it allowed), in a
    line comment of a ``line`` context or a block comment of a ``block`` context; in a
    block comment, on one line (a banner around a section title is not an elision)."""
    return [rf"^[{line}]\W*(?:{core})\W*\Z", rf"^[{block}]\s*[^\w\n]*(?:{core})[^\w\n]*\s*\Z"]


def _ending(core: str) -> list[str]:
    """``core`` ending a line comment or a one-line block comment, where nothing but
    punctuation, an ellipsis or a bracketed "unchanged"/"omitted"/"for brevity" may follow:
    ``-- rest of code here``, ``-- (code omitted)``.  A phrase that goes on is an
    explanation, not an elision: ``-- code omitted because Lua has no bigint type``,
    ``-- DOM code omitted for now but translated below``, ``-- code omitted, see upstream``."""
    tail = r"(?:\s*[(\[]?\s*(?:unchanged|omitted|as\s+before|for\s+brevity)\s*[)\]]?)?"
    return [rf"^{_LINE}.*?(?:{core}){tail}\W*\Z", rf"^{_BLOCK}\s*[^\n]*?(?:{core}){tail}[^\w\n]*\s*\Z"]


_CODE_NOUNS = r"code|logic|implementation"
_MORE = (r"rest|other|existing|more|remaining|previous|original|unchanged|same|similar|additional|code|logic"
         r"|implementation|etc|snip|omitted|your|insert|add|keep")
_REST_NOUNS = (r"code|implementation|script|function|file|module|logic|class|methods?|functions|body|loop|handlers?"
               r"|setup|cases?")
_REST_TAILS = (r"here|goes\s+here|remains?\s+(?:the\s+same|unchanged)|unchanged|as\s+before|omitted|follows"
               r"|stays\s+the\s+same|is\s+(?:the\s+same|unchanged)|(?:would\s+)?go(?:es)?\s+here")
_EXISTING = r"existing|previous|original|unchanged|remaining|other"
_EXISTING_NOUNS = r"code|logic|functions?|methods?|implementation|handlers?"
_EXISTING_TAILS = (r"unchanged|omitted|here|as\s+before|remains?\s+(?:the\s+same|unchanged)|stays\s+the\s+same"
                   r"|goes\s+here|continues|(?:is\s+)?kept|(?:is\s+)?preserved|(?:is\s+)?the\s+same")

#: a comment that is only an ellipsis, on a line of its own (not after code, not inside a
#: comment paragraph or a table type): -- ...  --[[ ... ]]
_BARE_ELLIPSIS = rf"^{_FRESH}\s*[\[(]?\s*{_E}\s*[\])]?\s*\Z"

_TRUNCATION_SOURCES: list[tuple[str, list[str]]] = [
    # an ellipsis opening a comment, then what was left out: -- ... rest of code / -- ... (existing code)
    ("ellipsis_then", _start(rf"{_E}\s*\(?\s*(?:the\s+)?(?:{_MORE})\b")),
    # "rest of (the) [up to three words] code" as the whole comment
    ("rest_of", _whole(rf"(?:{_E}\s*)?(?:and\s+)?(?:the\s+)?rest\s+of\s+(?:the\s+|your\s+|this\s+|my\s+)?"
                       rf"(?:[\w-]+\s+){{0,3}}?(?:{_REST_NOUNS})(?:\s+(?:{_REST_TAILS}))?(?:\s*{_E})?")),
    ("rest_of_code_here", _ending(r"\brest\s+of\s+(?:the\s+)?(?:code|implementation)\s+"
                                    r"(?:here|goes\s+here|unchanged|omitted|remains\s+the\s+same)\b")),
    ("your_code_here", _anywhere(rf"\byour\s+(?:own\s+)?(?:{_CODE_NOUNS})\s+(?:goes\s+)?here\b"
                                 rf"|\b(?:{_CODE_NOUNS})\s+goes\s+here\b")),
    ("add_code_here", _start(rf"(?:todo\W*)?(?:add|insert|put|write)\s+(?:your\s+|the\s+|more\s+|own\s+)*"
                             rf"(?:{_CODE_NOUNS})\s+here\b")),
    ("implement_this", _start(r"(?:please\s+)?implement\s+(?:this|me|here|the\s+rest|it\s+here)\b")),
    ("angle", _anywhere(r"<\s*(?:placeholder|your[^>\n]{0,40}here|insert[^>\n]{0,40}|todo)\s*>")),
    ("placeholder", _whole(r"(?:a\s+|this\s+is\s+a\s+)?placeholder(?:\s+(?:code|logic|implementation|function))?")),
    ("existing_code", _whole(rf"(?:{_E}\s*)?(?:keep\s+)?(?:the\s+)?(?:{_EXISTING})\s+(?:{_EXISTING_NOUNS})"
                             rf"(?:\s+(?:{_EXISTING_TAILS}))?(?:\s*{_E})?")),
    ("same_as_before", _whole(rf"(?:{_E}\s*)?(?:the\s+)?(?:rest\s+(?:is\s+)?)?(?:code\s+)?(?:is\s+)?(?:the\s+)?"
                              r"(?:same\s+as\s+(?:before|above|original|previously)"
                              rf"|unchanged\s+from\s+(?:before|above|original))(?:\s*{_E})?")),
    ("code_omitted", _ending(r"\bcode\s+(?:omitted|truncated|elided)(?:\s+here)?")),
    ("for_brevity", _anywhere(r"\b(?:omitted|truncated|shortened|elided)\s+for\s+brevity\b")),
    ("etc", _whole(r"etc\.*|and\s+so\s+on\.*", line=r"\x01", block=r"\x03")),
    ("keep_existing", _whole(rf"(?:keep|leave)\s+(?:the\s+|all\s+)?(?:existing|other|remaining|previous|original)\s+"
                             rf"(?:{_EXISTING_NOUNS}|lines|cases|callbacks|connections|listeners)"
                             r"(?:\s+(?:as\s+(?:is|before)|unchanged|here|intact))?")),
]

#: Every comment rule, truncation markers first (see :class:`CommentRule`).
COMMENT_RULES: tuple[CommentRule, ...] = tuple(
    [CommentRule("truncation", name, p.encode("ascii")) for name, ps in _TRUNCATION_SOURCES for p in ps if p]
    + [CommentRule("ellipsis", "ellipsis", _BARE_ELLIPSIS.encode("ascii"))]
    + [CommentRule("todo", "todo", rb"\b(?:TODO|FIXME)\b|\b(?:[Tt]odo|[Ff]ixme)\s*:", ignore_case=False)]
)
