"""Error-tolerant recursive-descent parser for current Luau.

Grammar: luau-lang.org/grammar.  Behaviour — which constructs are accepted, where an
error is reported, its message, and how parsing recovers — follows Luau's reference
parser (``Ast/src/Parser.cpp`` of luau-lang/luau), read for behaviour and re-expressed
here:

* errors are positioned at the token where the parser notices them, with Luau's messages
  (``Expected identifier when parsing expression, got ')'``,
  ``Expected 'end' (to close 'function' at line 2), got <eof>``);
* two errors at the same location are reported once; parsing stops after 100 errors;
* recovery: a missing closer is searched for on the rest of the line, a single extra
  token before an expected one is skipped, statements resume at the next statement, and
  a stray block closer at the top level is reported and skipped (Luau stops there; we go
  on so that the rest of the file still gets checked);
* misleading indentation is remembered (a block whose ``end`` is at another line *and*
  column than its opener) and named in later "Expected 'end'" errors;
* nesting deeper than 1,000 levels is one error, never a ``RecursionError``.

Names are resolved to locals and globals during parsing (see :mod:`luaguard.luau.ast`).
Lexical errors (unterminated strings ...) are reported by the lexer; the parser does not
repeat them.
"""

from __future__ import annotations

import sys
from collections import Counter

from ..text import LineIndex
from . import ast as A
from . import lexer as L
from .lexer import Token

RECURSION_LIMIT = 1000  # Luau's FInt::LuauRecursionLimit
ERROR_LIMIT = 100  # Luau's FInt::LuauParseErrorLimit
TYPE_LENGTH_LIMIT = 1000  # Luau's FInt::LuauTypeLengthLimit

_BINARY = {
    "+": (6, 6), "-": (6, 6), "*": (7, 7), "/": (7, 7), "//": (7, 7), "%": (7, 7),
    "^": (10, 9), "..": (5, 4), "==": (3, 3), "~=": (3, 3), "<": (3, 3), "<=": (3, 3),
    ">": (3, 3), ">=": (3, 3), "and": (2, 2), "or": (1, 1),
}
_UNARY_PRIORITY = 8
_COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "//=": "//", "%=": "%", "^=": "^", "..=": ".."}
_BLOCK_FOLLOW = frozenset({L.EOF, "else", "elseif", "end", "until"})
_KNOWN_ATTRIBUTES = frozenset({"checked", "native", "deprecated"})
_STAT_KEYWORDS = frozenset({"type", "export", "continue", "const", "declare"})
_RESERVED = L.KEYWORDS


class _Fatal(Exception):
    """Aborts parsing (recursion or error limit), like Luau's ``ParseError::raise``."""

    def __init__(self, start: int, end: int, message: str) -> None:
        super().__init__(message)
        self.start, self.end, self.message = start, end, message


def describe_expected(kind: str) -> str:
    """How Luau names an expected token kind in messages."""
    if kind == L.NAME:
        return "identifier"
    if kind == L.EOF:
        return "<eof>"
    if kind == L.STRING:
        return "string"
    return f"'{kind}'"


def describe(tok: Token) -> str:
    """How Luau names the current token in messages (``'end'``, ``<eof>``, ``"text"``)."""
    kind = tok.kind
    if kind in (L.STRING, L.LONG_STRING):
        if kind == L.STRING:
            return f'"{tok.text[1:-1]}"'
        body = tok.text[tok.text.index("[", 1) + 1:]
        level = tok.text.index("[", 1) - 1
        return f'"{body[: len(body) - level - 2]}"'
    if kind == L.ERROR:
        if tok.text[:1] in ("\"", "'", "[", "`"):
            return "malformed string"
        return f"Unicode character U+{ord(tok.text[0]):x}" if tok.text and ord(tok.text[0]) > 127 else "malformed token"
    if kind == L.INTERP_SIMPLE:
        return tok.text
    if kind in (L.INTERP_BEGIN, L.INTERP_MID, L.INTERP_END):
        return tok.text
    return tok.describe()


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def decode_string(tok: Token) -> str | None:
    """The value of a string token (quoted, long or simple interpolated); ``None`` if an
    escape is malformed.  Escapes as in Luau's ``Lexer::fixupQuotedString``."""
    text = tok.text
    if tok.kind == L.LONG_STRING:
        open_end = text.index("[", 1) + 1
        level = open_end - 2
        body = text[open_end: len(text) - level - 2]
        if body.startswith("\r\n"):
            body = body[2:]
        elif body.startswith(("\n", "\r")):
            body = body[1:]
        return body
    body = text[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            return None
        e = body[i + 1]
        i += 2
        if e == "\n":
            out.append("\n")
        elif e == "\r":
            out.append("\n")
            if i < n and body[i] == "\n":
                i += 1
        elif e == "x":
            h = body[i:i + 2]
            if len(h) != 2 or any(c not in "0123456789abcdefABCDEF" for c in h):
                return None
            out.append(chr(int(h, 16)))
            i += 2
        elif e == "z":
            while i < n and body[i] in " \t\r\n\v\f":
                i += 1
        elif e == "u":
            if i >= n or body[i] != "{":
                return None
            close = body.find("}", i)
            digits = body[i + 1:close] if close > 0 else ""
            if not digits or len(digits) > 16 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                return None
            cp = int(digits, 16)
            if cp > 0x10FFFF:
                return None
            out.append(chr(cp) if not 0xD800 <= cp <= 0xDFFF else "\ufffd")
            i = close + 1
        elif e.isdigit():
            j = i
            while j < n and j < i + 2 and body[j].isdigit():
                j += 1
            code = int(body[i - 1:j])
            if code > 255:
                return None
            out.append(chr(code))
            i = j
        else:
            out.append(_ESCAPES.get(e, e))
    return "".join(out)


class _Match:
    """A token a later closer must match: its word (``'('``, ``'function'``, ``'then'``)
    and where it is.  ``col_from`` is the offset whose column counts (``local`` for a
    ``local function``); line and column are computed only when needed."""

    __slots__ = ("word", "start", "col_from")

    def __init__(self, word: str, start: int, col_from: int | None = None) -> None:
        self.word, self.start = word, start
        self.col_from = start if col_from is None else col_from


class Parser:
    """Parses one token list.  Use :func:`parse`."""

    def __init__(self, text: str, tokens: list[Token], *, declarations: bool = False, lines: LineIndex | None = None) -> None:
        self.text = text
        self.toks = tokens
        self.i = 0
        self.tok = tokens[0]
        self.prev_end = 0
        self.errors: list[A.ParseError] = []
        self._lines: LineIndex | None = lines
        self.scope: dict[str, A.Local] = {}
        self.local_stack: list[A.Local] = []
        self.functions: list[list] = [[True, 0]]  # [vararg, loop_depth]; the main chunk is vararg
        self.depth = 0
        self.stop_on: Counter[str] = Counter()
        self.suspect: _Match | None = None
        self.type_function_depth = 0
        self.declarations = declarations
        self._error_starts: set[int] | None = None
        self.globals_assigned: set[str] = set()
        self.lookups: list[A.Expr] = []
        self.assigned: set[int] = set()
        self.type_names: set[str] = set()
        self.varargs: list[tuple[int, bool]] = []
        self.global_reads: list[A.ExprGlobal] = []
        self.local_names: set[str] = set()
        self.if_expressions: list[int] = []
        self.table_types: list[tuple[int, int]] = []
        self.vararg_functions: list[int] = []
        self.type_regions: list[tuple[int, int]] = []

    # -- token helpers ---------------------------------------------------------------
    @property
    def lines(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    def line_of(self, offset: int) -> int:
        return self.lines.line_of(offset)

    def col_of(self, offset: int) -> int:
        return self.lines.position(offset).character

    def next(self) -> None:
        tok = self.tok
        self.prev_end = tok.end
        if tok.kind != "<eof>":
            i = self.i + 1
            self.i = i
            self.tok = self.toks[i]

    def peek(self) -> Token:
        i = self.i + 1
        return self.toks[i] if i < len(self.toks) else self.toks[-1]

    def newline_before(self, tok: Token) -> bool:
        """Is ``tok`` on a later line than the previous token's end?"""
        return self.text.find("\n", self.prev_end, tok.start) >= 0

    def match_of(self, tok: Token, word: str | None = None) -> _Match:
        return _Match(word or tok.text, tok.start)

    def line_start(self, offset: int) -> int:
        return self.text.rfind("\n", 0, offset) + 1

    def type_region(self, start: int, errors_before: int) -> None:
        """Record a type region from ``start`` to here (see ``Chunk.type_regions``); one the
        text ends inside (an error reported at the end) reaches the end of the text."""
        end = self.prev_end
        if self.tok.kind == L.EOF and len(self.errors) > errors_before:
            end = len(self.text)
        self.type_regions.append((start, end))

    # -- errors ----------------------------------------------------------------------
    def report(self, start: int, end: int, message: str) -> None:
        errors = self.errors
        if errors and errors[-1].start == start and errors[-1].end == end:
            return
        if self._error_starts is None:
            self._error_starts = {t.start for t in self.toks if t.kind == L.ERROR}
        if start in self._error_starts:
            # The lexer already reported this malformed token.
            errors.append(A.ParseError(start, end, ""))
            return
        errors.append(A.ParseError(start, end, message))
        if len(errors) >= ERROR_LIMIT:
            raise _Fatal(start, end, f"Reached error limit ({ERROR_LIMIT})")

    def report_tok(self, message: str) -> None:
        t = self.tok
        self.report(t.start, t.end, message)

    def enter(self, context: str) -> None:
        self.depth += 1
        if self.depth > RECURSION_LIMIT:
            t = self.tok
            raise _Fatal(t.start, t.end, f"Exceeded allowed recursion depth; simplify your {context} to make the code compile")

    def expect_fail(self, kind: str, context: str | None) -> None:
        got = describe(self.tok)
        if context:
            self.report_tok(f"Expected {describe_expected(kind)} when parsing {context}, got {got}")
        else:
            self.report_tok(f"Expected {describe_expected(kind)}, got {got}")

    def expect(self, kind: str, context: str | None = None) -> bool:
        """Luau's ``expectAndConsume``: on a mismatch, report and skip one stray token
        if the expected one follows it."""
        if self.tok.kind == kind:
            self.next()
            return True
        self.expect_fail(kind, context)
        if self.peek().kind == kind:
            self.next()
            self.next()
        return False

    def match_fail(self, kind: str, begin: _Match, extra: str = "") -> None:
        t = self.tok
        here = self.line_of(t.start)
        begin_line = self.line_of(begin.start)
        where = f"column {self.col_of(begin.col_from) + 1}" if here == begin_line else f"line {begin_line + 1}"
        self.report(t.start, t.end, f"Expected {describe_expected(kind)} (to close '{begin.word}' at {where}), got {describe(t)}{extra}")

    def expect_match(self, kind: str, begin: _Match, search_for_missing: bool = False) -> bool:
        """Luau's ``expectMatchAndConsume`` with its two recovery strategies."""
        if self.tok.kind == kind:
            self.next()
            return True
        self.match_fail(kind, begin)
        if search_for_missing:
            line = self.line_of(self.prev_end)
            while (
                self.tok.kind != kind
                and self.tok.kind != L.EOF
                and self.line_of(self.tok.start) == line
                and self.stop_on[self.tok.kind] == 0
            ):
                self.next()
            if self.tok.kind == kind:
                self.next()
                return True
        elif self.peek().kind == kind:
            self.next()
            self.next()
            return True
        return False

    def expect_match_end(self, kind: str, begin: _Match) -> bool:
        """Luau's ``expectMatchEndAndConsume``: also tracks misleading indentation."""
        t = self.tok
        if t.kind == kind:
            text = self.text
            if text.find("\n", begin.start, t.start) >= 0:  # closed on another line ...
                ls_end = self.line_start(t.start)
                ls_begin = self.line_start(begin.col_from)
                if t.start - ls_end != begin.col_from - ls_begin:  # ... and another column
                    if self.suspect is None or self.suspect.start < begin.start:
                        self.suspect = begin
            self.next()
            return True
        extra = ""
        if self.suspect is not None and self.suspect.start > begin.start and self.line_of(self.suspect.start) > self.line_of(begin.start):
            extra = f"; did you forget to close '{self.suspect.word}' at line {self.line_of(self.suspect.start) + 1}?"
        self.match_fail(kind, begin, extra)
        if self.peek().kind == kind:
            self.next()
            self.next()
            return True
        return False

    # -- scopes ----------------------------------------------------------------------
    def push_local(self, name: str, start: int, end: int, annotation=None, is_const: bool = False, kind: str = "local") -> A.Local:
        local = A.Local(name, start, end, annotation, is_const, len(self.functions) - 1, self.scope.get(name), kind)
        self.scope[name] = local
        self.local_names.add(name)
        self.local_stack.append(local)
        return local

    def save_locals(self) -> int:
        return len(self.local_stack)

    def restore_locals(self, mark: int) -> None:
        stack = self.local_stack
        scope = self.scope
        while len(stack) > mark:
            local = stack.pop()
            if local.shadow is None:
                scope.pop(local.name, None)
            else:
                scope[local.name] = local.shadow

    # -- blocks and statements -------------------------------------------------------
    def parse_chunk(self) -> A.Block:
        block = self.parse_block()
        while self.tok.kind != L.EOF:
            # Luau stops at the first stray token; report it the same way, then keep
            # parsing so the rest of the file is still checked.
            self.expect_fail(L.EOF, None)
            self.next()
            more = self.parse_block()
            block.body.extend(more.body)
            block.end = more.end
        return block

    def parse_block(self) -> A.Block:
        mark = self.save_locals()
        block = self.parse_block_no_scope()
        self.restore_locals(mark)
        return block

    def parse_block_no_scope(self) -> A.Block:
        start = self.tok.start
        body: list[A.Stat] = []
        follow = _BLOCK_FOLLOW
        while self.tok.kind not in follow:
            saved = self.depth
            self.enter("block")
            stat = self.parse_stat()
            self.depth = saved
            if self.tok.kind == ";":
                self.next()
                stat.end = self.prev_end
            body.append(stat)
            if type(stat) in (A.StatReturn, A.StatBreak, A.StatContinue):
                break
        return A.Block(start, self.prev_end if body else start, body)

    def parse_stat(self) -> A.Stat:
        kind = self.tok.kind
        if kind == "if":
            return self.parse_if()
        if kind == "local":
            return self.parse_local(self.tok.start, [], False)
        if kind == "function":
            return self.parse_function_stat([])
        if kind == "return":
            return self.parse_return()
        if kind == "for":
            return self.parse_for()
        if kind == "while":
            return self.parse_while()
        if kind == "do":
            return self.parse_do()
        if kind == "repeat":
            return self.parse_repeat()
        if kind == "break":
            return self.parse_break()
        if kind == L.ATTRIBUTE or kind == L.ATTRIBUTE_OPEN:
            return self.parse_attribute_stat()

        start_tok = self.tok
        expr = self.parse_primary_expr(True)
        if type(expr) is A.ExprCall:
            return A.StatExpr(expr.start, expr.end, expr)
        kind = self.tok.kind
        if kind == "," or kind == "=":
            return self.parse_assignment(expr)
        if kind in _COMPOUND:
            return self.parse_compound_assignment(expr, _COMPOUND[kind])

        ident = expr.name if type(expr) in (A.ExprGlobal, A.ExprLocal) else None
        if ident in _STAT_KEYWORDS and self.global_reads and self.global_reads[-1] is expr:
            self.global_reads.pop()  # a contextual keyword, not a read of a global
        if ident == "type":
            return self.parse_type_alias(expr.start, False)
        if ident == "export" and self.tok.kind == L.NAME and self.tok.text == "type":
            self.next()
            return self.parse_type_alias(expr.start, True)
        if ident == "continue":
            return self.parse_continue(expr)
        if ident == "const":
            return self.parse_local(expr.start, [], True)
        if ident == "declare" and self.declarations:
            return self.parse_declaration(expr.start)
        if self.tok is start_tok:
            self.next()  # skip a token no statement can start with
        self.report(expr.start, expr.end, "Incomplete statement: expected assignment or a function call")
        return A.StatError(expr.start, expr.end, [expr], [])

    def parse_if(self) -> A.StatIf:
        start = self.tok.start
        self.next()  # if / elseif
        cond = self.parse_expr()
        then_tok = self.tok
        match_then = self.match_of(then_tok, "then")
        self.expect("then", "if statement")
        then_body = self.parse_block()
        else_body = None
        if self.tok.kind == "elseif":
            saved = self.depth
            self.enter("elseif")
            else_body = self.parse_if()
            self.depth = saved
            end = else_body.end
        else:
            match = match_then
            if self.tok.kind == "else":
                match = self.match_of(self.tok, "else")
                self.next()
                else_body = self.parse_block()
            end = self.tok.end
            if not self.expect_match_end("end", match):
                end = self.prev_end
        return A.StatIf(start, end, cond, then_body, else_body)

    def parse_while(self) -> A.StatWhile:
        start = self.tok.start
        self.next()
        cond = self.parse_expr()
        match_do = self.match_of(self.tok, "do")
        self.expect("do", "while loop")
        self.functions[-1][1] += 1
        body = self.parse_block()
        self.functions[-1][1] -= 1
        end = self.tok.end
        if not self.expect_match_end("end", match_do):
            end = self.prev_end
        return A.StatWhile(start, end, cond, body)

    def parse_repeat(self) -> A.StatRepeat:
        start = self.tok.start
        match = self.match_of(self.tok, "repeat")
        self.next()
        mark = self.save_locals()
        self.functions[-1][1] += 1
        body = self.parse_block_no_scope()
        self.functions[-1][1] -= 1
        self.expect_match_end("until", match)
        cond = self.parse_expr()  # the condition sees the body's locals
        self.restore_locals(mark)
        return A.StatRepeat(start, cond.end, body, cond)

    def parse_do(self) -> A.Block:
        start = self.tok.start
        match = self.match_of(self.tok, "do")
        self.next()
        body = self.parse_block()
        body.start = start
        end = self.tok.end
        if self.expect_match_end("end", match):
            body.end = end
        return body

    def parse_break(self) -> A.Stat:
        t = self.tok
        self.next()
        if self.functions[-1][1] == 0:
            self.report(t.start, t.end, "break statement must be inside a loop")
            return A.StatError(t.start, t.end, [], [A.StatBreak(t.start, t.end)])
        return A.StatBreak(t.start, t.end)

    def parse_continue(self, expr: A.Expr) -> A.Stat:
        if self.functions[-1][1] == 0:
            self.report(expr.start, expr.end, "continue statement must be inside a loop")
            return A.StatError(expr.start, expr.end, [], [A.StatContinue(expr.start, expr.end)])
        return A.StatContinue(expr.start, expr.end)

    def parse_for(self) -> A.Stat:
        start = self.tok.start
        self.next()
        name, nstart, nend, annotation = self.parse_binding()
        if self.tok.kind == "=":
            self.next()
            from_ = self.parse_expr()
            self.expect(",", "index range")
            to = self.parse_expr()
            step = None
            if self.tok.kind == ",":
                self.next()
                step = self.parse_expr()
            match_do = self.match_of(self.tok, "do")
            self.expect("do", "for loop")
            mark = self.save_locals()
            self.functions[-1][1] += 1
            var = self.push_local(name, nstart, nend, annotation, kind="for")
            body = self.parse_block()
            self.functions[-1][1] -= 1
            self.restore_locals(mark)
            end = self.tok.end
            if not self.expect_match_end("end", match_do):
                end = self.prev_end
            return A.StatFor(start, end, var, from_, to, step, body)
        names = [(name, nstart, nend, annotation)]
        if self.tok.kind == ",":
            self.next()
            self.parse_binding_list(names, allow_dot3=False)
        self.expect("in", "for loop")
        values = self.parse_expr_list()
        match_do = self.match_of(self.tok, "do")
        self.expect("do", "for loop")
        mark = self.save_locals()
        self.functions[-1][1] += 1
        vars_ = [self.push_local(n, s, e, a, kind="for") for n, s, e, a in names]
        body = self.parse_block()
        self.functions[-1][1] -= 1
        self.restore_locals(mark)
        end = self.tok.end
        if not self.expect_match_end("end", match_do):
            end = self.prev_end
        return A.StatForIn(start, end, vars_, values, body)

    def parse_function_name(self) -> tuple[A.Expr, bool, str]:
        debug = self.tok.text if self.tok.kind == L.NAME else ""
        expr = self.parse_name_expr("function name")
        saved = self.depth
        while self.tok.kind == ".":
            self.next()
            name, ns, ne = self.parse_name("field name")
            debug = name
            expr = A.ExprIndexName(expr.start, ne, expr, name, ns, ne, ".")
            self.enter("function name")
        self.depth = saved
        has_self = False
        if self.tok.kind == ":":
            self.next()
            name, ns, ne = self.parse_name("method name")
            debug = name
            expr = A.ExprIndexName(expr.start, ne, expr, name, ns, ne, ":")
            has_self = True
        return expr, has_self, debug

    def is_lvalue(self, expr: A.Expr) -> bool:
        t = type(expr)
        if t is A.ExprLocal:
            return not expr.local.is_const
        return t is A.ExprGlobal or t is A.ExprIndexName or t is A.ExprIndexExpr

    def lvalue_error(self, expr: A.Expr) -> A.Expr:
        if type(expr) is A.ExprLocal and expr.local.is_const:
            self.report(expr.start, expr.end, f"Variable '{expr.local.name}' is constant and may not be reassigned")
        else:
            self.report(expr.start, expr.end, "Assigned expression must be a variable or a field")
        return A.ExprError(expr.start, expr.end, [expr])

    def parse_function_stat(self, attributes: list) -> A.StatFunction:
        start = attributes[0].start if attributes else self.tok.start
        match = self.match_of(self.tok, "function")
        self.next()
        name_expr, has_self, debug = self.parse_function_name()
        if not self.is_lvalue(name_expr):
            name_expr = self.lvalue_error(name_expr)
        elif type(name_expr) is A.ExprGlobal:
            self.globals_assigned.add(name_expr.name)
        self.stop_on["end"] += 1
        func = self.parse_function_body(has_self, match, debug, None, attributes)
        self.stop_on["end"] -= 1
        return A.StatFunction(start, func.end, name_expr, func)

    def parse_attribute(self, attributes: list) -> None:
        t = self.tok
        name = t.text[1:]
        if name:
            self.validate_attribute(t.start, t.end, name, attributes)
        attributes.append(A.Attribute(t.start, t.end, name, []))
        self.next()

    def validate_attribute(self, start: int, end: int, name: str, attributes: list) -> None:
        if name not in _KNOWN_ATTRIBUTES:
            self.report(start, end, f"Invalid attribute '@{name}'")
        elif any(a.name == name for a in attributes):
            self.report(start, end, f"Cannot duplicate attribute '@{name}'")

    def parse_attr_list(self, attributes: list) -> None:
        open_tok = self.tok
        match = self.match_of(open_tok, "@[")
        self.next()
        if self.tok.kind != "]":
            while True:
                name, ns, ne = self.parse_name("attribute name")
                args: list = []
                k = self.tok.kind
                end = ne
                if k in (L.STRING, L.LONG_STRING, "{", "("):
                    args = self.parse_call_list()
                    end = self.prev_end
                    for arg in args:
                        if not isinstance(arg, (A.ExprNil, A.ExprBool, A.ExprNumber, A.ExprString, A.ExprTable)):
                            self.report(ns, end, "Only literals can be passed as arguments for attributes")
                self.validate_attribute(ns, ne, name, attributes)
                attributes.append(A.Attribute(ns, end, name, args))
                if self.tok.kind == ",":
                    self.next()
                else:
                    break
        else:
            self.report(open_tok.start, self.tok.end, "Attribute list cannot be empty")
        self.expect_match("]", match)

    def parse_attributes(self) -> list:
        attributes: list = []
        while self.tok.kind in (L.ATTRIBUTE, L.ATTRIBUTE_OPEN):
            if self.tok.kind == L.ATTRIBUTE:
                self.parse_attribute(attributes)
            else:
                self.parse_attr_list(attributes)
        return attributes

    def parse_attribute_stat(self) -> A.Stat:
        start = self.tok.start
        attributes = self.parse_attributes()
        kind = self.tok.kind
        if kind == "function":
            return self.parse_function_stat(attributes)
        if kind == "local":
            return self.parse_local(start, attributes, False)
        if kind == L.NAME and self.tok.text == "const":
            self.next()
            return self.parse_local(start, attributes, True)
        if kind == L.NAME and self.tok.text == "declare" and self.declarations:
            self.next()
            return self.parse_declaration(start)
        t = self.tok
        self.report(
            t.start, t.end,
            "Expected 'function', 'local function', 'const function', 'declare function' or a function type declaration "
            f"after attribute, but got {describe(t)} instead",
        )
        return A.StatError(t.start, t.end, [], [])

    def parse_local(self, start: int, attributes: list, is_const: bool) -> A.Stat:
        if not is_const:
            self.next()  # local
        if self.tok.kind == "function":
            ftok = self.tok
            match = self.match_of(ftok, "function")
            if self.text.find("\n", start, ftok.start) < 0:
                match.col_from = start  # a `local function` opener starts at `local`
            self.next()
            name, ns, ne = self.parse_name("variable name")
            self.stop_on["end"] += 1
            func = self.parse_function_body(False, match, name, (name, ns, ne), attributes, is_const=is_const)
            self.stop_on["end"] -= 1
            var = func.own_local
            return A.StatLocalFunction(start, func.end, var, func, is_const)
        if attributes:
            t = self.tok
            self.report(t.start, t.end, f"Expected 'function' after local declaration with attribute, but got {describe(t)} instead")
            return A.StatError(t.start, t.end, [], [])
        self.stop_on["="] += 1
        names: list = []
        self.parse_binding_list(names, allow_dot3=False)
        self.stop_on["="] -= 1
        values: list[A.Expr] = []
        if self.tok.kind == "=":
            self.next()
            values = self.parse_expr_list()
        vars_ = [self.push_local(n, s, e, a, is_const) for n, s, e, a in names]
        for var, value in zip(vars_, values):
            var.value = value
        end = values[-1].end if values else self.prev_end
        node = A.StatLocal(start, end, vars_, values, is_const)
        node.attributes = attributes
        if is_const and not (values and (type(values[-1]) in (A.ExprCall, A.ExprVarargs) or len(values) == len(vars_))):
            self.report(start, end, "Missing initializer in const declaration")
        return node

    def parse_return(self) -> A.StatReturn:
        start = self.tok.start
        end = self.tok.end
        self.next()
        values: list[A.Expr] = []
        if self.tok.kind not in _BLOCK_FOLLOW and self.tok.kind != ";":
            values = self.parse_expr_list()
            end = values[-1].end
        return A.StatReturn(start, end, values)

    def parse_type_alias(self, start: int, exported: bool) -> A.Stat:
        if self.tok.kind == "function":
            return self.parse_type_function(start, exported)
        if self.tok.kind == L.NAME:
            name, name_start = self.tok.text, self.tok.start
            self.next()
        else:
            self.report_name_error("type name")
            name, name_start = A.ERROR_NAME, self.tok.start
        errs = len(self.errors)
        generics = self.parse_generic_type_list(with_defaults=True)
        self.expect("=", "type alias")
        type_ = self.parse_type()
        self.type_region(start, errs)
        self.type_names.add(name)
        return A.StatTypeAlias(start, type_.end, name, name_start, generics, type_, exported)

    def parse_type_function(self, start: int, exported: bool) -> A.Stat:
        match = self.match_of(self.tok, "function")
        self.next()
        if self.tok.kind == L.NAME:
            name = self.tok.text
            self.next()
        else:
            self.report_name_error("type function name")
            name = A.ERROR_NAME
        self.stop_on["end"] += 1
        saved = self.type_function_depth
        self.type_function_depth = len(self.functions)
        func = self.parse_function_body(False, match, name, None, [])
        self.type_function_depth = saved
        self.stop_on["end"] -= 1
        self.type_names.add(name)
        return A.StatTypeFunction(start, func.end, name, func, exported)

    def parse_declaration(self, start: int) -> A.Stat:
        """``declare function f(...)``, ``declare name: T`` and ``declare class C ... end``
        of definition files (``*.d.luau``)."""
        if self.tok.kind == "function":
            self.next()
            name, _, _ = self.parse_name("global function name")
            self.parse_generic_type_list(with_defaults=False)
            match = self.match_of(self.tok, "(")
            self.expect("(", "global function declaration")
            if self.tok.kind != ")":
                self.parse_binding_list([], allow_dot3=True)
            self.expect_match(")", match)
            ret = self.parse_optional_return_type()
            return A.StatDeclare(start, self.prev_end, name, [ret] if ret else [])
        if self.tok.kind == L.NAME and self.tok.text in ("class", "extern"):
            if self.tok.text == "extern":
                self.next()
                if self.tok.kind == L.NAME and self.tok.text == "type":
                    self.next()
            else:
                self.next()
            match = self.match_of(self.toks[self.i - 1], "class")
            name, _, _ = self.parse_name("class name")
            if self.tok.kind == L.NAME and self.tok.text == "extends":
                self.next()
                self.parse_name("superclass name")
            if self.tok.kind == L.NAME and self.tok.text == "with":
                self.next()
            parts: list = []
            while self.tok.kind not in ("end", L.EOF):
                if self.tok.kind == "function":
                    self.next()
                    self.parse_name("method name")
                    m = self.match_of(self.tok, "(")
                    self.expect("(", "declared method")
                    if self.tok.kind != ")":
                        self.parse_binding_list([], allow_dot3=True)
                    self.expect_match(")", m)
                    ret = self.parse_optional_return_type()
                    if ret is not None:
                        parts.append(ret)
                elif self.tok.kind == "[":
                    m = self.match_of(self.tok, "[")
                    self.next()
                    key = self.parse_type()
                    self.expect_match("]", m)
                    self.expect(":", "property type annotation")
                    parts.extend([key, self.parse_type()])
                elif self.tok.kind in (L.NAME, L.STRING):
                    self.next()
                    self.expect(":", "property type annotation")
                    parts.append(self.parse_type())
                else:
                    self.expect_fail(L.NAME, "class declaration")
                    break
                if self.tok.kind in (",", ";"):
                    self.next()
            self.expect_match_end("end", match)
            return A.StatDeclare(start, self.prev_end, name, parts)
        name, _, _ = self.parse_name("global variable name")
        self.expect(":", "global variable declaration")
        t = self.parse_type()
        return A.StatDeclare(start, t.end, name, [t])

    def parse_assignment(self, initial: A.Expr) -> A.StatAssign:
        targets = [self.check_target(initial)]
        while self.tok.kind == ",":
            self.next()
            targets.append(self.check_target(self.parse_primary_expr(True)))
        self.expect("=", "assignment")
        values = self.parse_expr_list()
        node = A.StatAssign(initial.start, values[-1].end, targets, values)
        for t in targets:
            if type(t) is A.ExprLocal:
                t.local.assignments.append(node.start)
        return node

    def check_target(self, expr: A.Expr) -> A.Expr:
        if not self.is_lvalue(expr):
            return self.lvalue_error(expr)
        t = type(expr)
        if t is A.ExprGlobal:
            self.globals_assigned.add(expr.name)
        elif t is A.ExprIndexName or t is A.ExprIndexExpr:
            self.assigned.add(id(expr))
        return expr

    def parse_compound_assignment(self, initial: A.Expr, op: str) -> A.StatCompoundAssign:
        target = self.check_target(initial)
        self.next()
        value = self.parse_expr()
        node = A.StatCompoundAssign(initial.start, value.end, op, target, value)
        if type(target) is A.ExprLocal:
            target.local.assignments.append(node.start)
        return node

    def parse_function_body(
        self, has_self: bool, match: _Match, name: str, local_name, attributes: list, *, is_const: bool = False
    ) -> A.ExprFunction:
        start = attributes[0].start if attributes else match.start
        func = A.ExprFunction(start, start)
        func.attributes = attributes
        func.name = name
        header_errors = len(self.errors)
        func.generics = self.parse_generic_type_list(with_defaults=False)
        paren = self.match_of(self.tok, "(")
        self.expect("(", "function")
        self.stop_on[")"] += 1
        bindings: list = []
        vararg = False
        if self.tok.kind != ")":
            vararg, func.vararg_annotation = self.parse_binding_list(bindings, allow_dot3=True)
        self.expect_match(")", paren, search_for_missing=True)
        self.stop_on[")"] -= 1
        func.return_type = self.parse_optional_return_type()
        self.type_region(match.start, header_errors)
        if vararg:
            self.vararg_functions.append(match.start)
        if local_name is not None:
            own = self.push_local(local_name[0], local_name[1], local_name[2], None, is_const, kind="function")
            func.own_local = own
        mark = self.save_locals()
        self.functions.append([vararg, 0])
        func.function_depth = len(self.functions) - 1
        if has_self:
            func.self_local = self.push_local("self", match.start, match.start, kind="self")
        func.params = [self.push_local(n, s, e, a, kind="param") for n, s, e, a in bindings]
        func.vararg = vararg
        func.body = self.parse_block()
        self.functions.pop()
        self.restore_locals(mark)
        end = self.tok.end
        if not self.expect_match_end("end", match):
            end = self.prev_end
        func.end = end
        return func

    def parse_expr_list(self) -> list[A.Expr]:
        out = [self.parse_expr()]
        while self.tok.kind == ",":
            self.next()
            if self.tok.kind == ")":
                self.report_tok("Expected expression after ',' but got ')' instead")
                break
            out.append(self.parse_expr())
        return out

    def parse_binding(self) -> tuple[str, int, int, object]:
        t = self.tok
        if t.kind == L.NAME:
            self.next()
            name, s, e = t.text, t.start, t.end
        else:
            self.report_name_error("variable name")
            name, s, e = A.ERROR_NAME, t.start, t.start
        annotation = None
        if self.tok.kind == ":":
            colon, errs = self.tok.start, len(self.errors)
            self.next()
            annotation = self.parse_type()
            self.type_region(colon, errs)
        return name, s, e, annotation

    def parse_binding_list(self, out: list, allow_dot3: bool) -> tuple[bool, object]:
        while True:
            if self.tok.kind == "..." and allow_dot3:
                self.next()
                tail = None
                if self.tok.kind == ":":
                    self.next()
                    tail = self.parse_variadic_argument_type_pack()
                return True, tail
            out.append(self.parse_binding())
            if self.tok.kind != ",":
                break
            self.next()
        return False, None

    # -- names -----------------------------------------------------------------------
    def report_name_error(self, context: str | None) -> None:
        got = describe(self.tok)
        if context:
            self.report_tok(f"Expected identifier when parsing {context}, got {got}")
        else:
            self.report_tok(f"Expected identifier, got {got}")

    def parse_name(self, context: str | None) -> tuple[str, int, int]:
        t = self.tok
        if t.kind == L.NAME:
            self.next()
            return t.text, t.start, t.end
        self.report_name_error(context)
        return A.ERROR_NAME, t.start, t.start

    def parse_index_name(self, context: str | None, op_start: int) -> tuple[str, int, int]:
        t = self.tok
        if t.kind == L.NAME:
            self.next()
            return t.text, t.start, t.end
        self.report_name_error(context)
        if t.kind in _RESERVED and self.text.find("\n", op_start, t.start) < 0:
            self.next()  # an incomplete name that happens to be a keyword
            return t.text, t.start, t.end
        return A.ERROR_NAME, t.start, t.start

    # -- expressions -----------------------------------------------------------------
    def parse_expr(self, limit: int = 0) -> A.Expr:
        saved = self.depth
        self.depth = depth = saved + 1
        if depth > RECURSION_LIMIT:
            self.enter("expression")
        tok = self.tok
        start = tok.start
        kind = tok.kind
        if kind == "not" or kind == "-" or kind == "#" or kind == "!":
            if kind == "!":
                self.report_tok("Unexpected '!'; did you mean 'not'?")
                kind = "not"
            self.next()
            operand = self.parse_expr(_UNARY_PRIORITY)
            expr: A.Expr = A.ExprUnary(start, operand.end, kind, operand)
        else:
            # asexp ::= simpleexp ['::' Type]
            expr = self.parse_primary_expr(False) if kind == L.NAME else self.parse_simple_expr()
            if self.tok.kind == "::":
                colon, errs = self.tok.start, len(self.errors)
                self.next()
                annotation = self.parse_type()
                self.type_region(colon, errs)
                expr = A.ExprTypeAssertion(expr.start, annotation.end, expr, annotation)
        op = self.binary_op(limit)
        binary = _BINARY
        while op is not None and binary[op][0] > limit:
            self.next()
            right = self.parse_expr(binary[op][1])
            expr = A.ExprBinary(start, right.end, op, expr, right)
            op = self.binary_op(limit)
            self.enter("expression")
        self.depth = saved
        return expr

    def binary_op(self, limit: int) -> str | None:
        kind = self.tok.kind
        if kind in _BINARY:
            return kind
        if kind in ("&", "|", "!"):
            nxt = self.peek()
            t = self.tok
            if kind == "&" and nxt.kind == "&" and t.end == nxt.start and _BINARY["and"][0] > limit:
                self.next()
                self.report(t.start, nxt.end, "Unexpected '&&'; did you mean 'and'?")
                return "and"
            if kind == "|" and nxt.kind == "|" and t.end == nxt.start and _BINARY["or"][0] > limit:
                self.next()
                self.report(t.start, nxt.end, "Unexpected '||'; did you mean 'or'?")
                return "or"
            if kind == "!" and nxt.kind == "=" and t.end == nxt.start and _BINARY["~="][0] > limit:
                self.next()
                self.report(t.start, nxt.end, "Unexpected '!='; did you mean '~='?")
                return "~="
        return None

    def parse_simple_expr(self) -> A.Expr:
        t = self.tok
        kind = t.kind
        if kind == L.NAME or kind == "(":
            return self.parse_primary_expr(False)
        if kind == L.STRING or kind == L.LONG_STRING or kind == L.INTERP_SIMPLE:
            self.next()
            return A.ExprString(t.start, t.end, decode_string(t), t.text[0])
        if kind == L.NUMBER:
            self.next()
            return A.ExprNumber(t.start, t.end, t.text)
        if kind == "nil":
            self.next()
            return A.ExprNil(t.start, t.end)
        if kind == "true" or kind == "false":
            self.next()
            return A.ExprBool(t.start, t.end, kind == "true")
        if kind == "function":
            match = self.match_of(t, "function")
            self.next()
            return self.parse_function_body(False, match, "", None, [])
        if kind == "{":
            return self.parse_table_constructor()
        if kind == "...":
            self.next()
            self.varargs.append((t.start, len(self.functions) > 1 and self.functions[-1][0]))
            if self.functions[-1][0]:
                return A.ExprVarargs(t.start, t.end)
            self.report(t.start, t.end, "Cannot use '...' outside of a vararg function")
            return A.ExprError(t.start, t.end, [])
        if kind == "if":
            return self.parse_if_else_expr()
        if kind == L.INTERP_BEGIN:
            return self.parse_interp_string()
        if kind == L.ATTRIBUTE or kind == L.ATTRIBUTE_OPEN:
            attributes = self.parse_attributes()
            if self.tok.kind != "function":
                self.report(t.start, self.tok.end, f"Expected 'function' declaration after attribute, but got {describe(self.tok)} instead")
                return A.ExprError(t.start, self.prev_end, [])
            match = self.match_of(self.tok, "function")
            self.next()
            return self.parse_function_body(False, match, "", None, attributes)
        if kind == L.ERROR and t.text[:1] in ("\"", "'", "[", "`"):
            self.next()
            self.report(t.start, t.end, "Malformed string; did you forget to finish it?")
            return A.ExprError(t.start, t.end, [])
        return self.parse_primary_expr(False)

    def parse_name_expr(self, context: str) -> A.Expr:
        t = self.tok
        if t.kind != L.NAME:
            self.report_name_error(context)
            return A.ExprError(t.start, t.end, [])
        self.next()
        local = self.scope.get(t.text)
        if local is not None:
            if local.function_depth < self.type_function_depth:
                self.report(t.start, t.end, f"Type function cannot reference outer local '{local.name}'")
                return A.ExprError(t.start, t.end, [])
            return A.ExprLocal(t.start, t.end, local, local.function_depth != len(self.functions) - 1)
        glob = A.ExprGlobal(t.start, t.end, t.text)
        if self.type_function_depth == 0:
            self.global_reads.append(glob)
        return glob

    def parse_prefix_expr(self) -> A.Expr:
        if self.tok.kind == "(":
            t = self.tok
            match = self.match_of(t, "(")
            self.next()
            inner = self.parse_expr()
            if self.tok.kind != ")":
                extra = "; did you mean to use '{' when defining a table?" if self.tok.kind == "=" else ""
                self.match_fail(")", match, extra)
                return A.ExprGroup(t.start, self.prev_end, inner)
            end = self.tok.end
            self.next()
            return A.ExprGroup(t.start, end, inner)
        return self.parse_name_expr("expression")

    def parse_primary_expr(self, as_statement: bool) -> A.Expr:
        t = self.tok
        start = t.start
        if t.kind == L.NAME and self.type_function_depth == 0:
            self.next()
            local = self.scope.get(t.text)
            if local is not None:
                expr: A.Expr = A.ExprLocal(start, t.end, local, local.function_depth != len(self.functions) - 1)
            else:
                expr = A.ExprGlobal(start, t.end, t.text)
                self.global_reads.append(expr)
        else:
            expr = self.parse_prefix_expr()
        saved = self.depth
        while True:
            kind = self.tok.kind
            if kind == ".":
                op_start = self.tok.start
                self.next()
                t = self.tok
                if t.kind == L.NAME:
                    self.next()
                    name, ns, ne = t.text, t.start, t.end
                else:
                    name, ns, ne = self.parse_index_name(None, op_start)
                expr = A.ExprIndexName(start, ne, expr, name, ns, ne, ".")
                self.lookups.append(expr)
            elif kind == "[":
                match = self.match_of(self.tok, "[")
                self.next()
                index = self.parse_expr()
                end = self.tok.end
                if not self.expect_match("]", match):
                    end = self.prev_end
                expr = A.ExprIndexExpr(start, end, expr, index)
                self.lookups.append(expr)
            elif kind == ":":
                op_start = self.tok.start
                self.next()
                name, ns, ne = self.parse_index_name("method name", op_start)
                func = A.ExprIndexName(start, ne, expr, name, ns, ne, ":")
                type_args: list = []
                if self.tok.kind == "<" and self.peek().kind == "<":
                    type_args = self.parse_type_instantiation()
                expr = self.parse_function_args(func, True)
                self.lookups.append(expr)
                if type_args and type(expr) is A.ExprCall:
                    expr.type_args = type_args
            elif kind == "(":
                if not as_statement and self.newline_before(self.tok):
                    self.report_ambiguous_call()
                    break
                expr = self.parse_function_args(expr, False)
                self.lookups.append(expr)
            elif kind == "{" or kind == L.STRING or kind == L.LONG_STRING:
                expr = self.parse_function_args(expr, False)
                self.lookups.append(expr)
            elif kind == "<" and self.peek().kind == "<":
                types = self.parse_type_instantiation()
                expr = A.ExprInstantiate(start, self.prev_end, expr, types)
            else:
                break
            self.depth += 1
            if self.depth > RECURSION_LIMIT:
                self.enter("expression")
        self.depth = saved
        return expr

    def report_ambiguous_call(self) -> None:
        self.report_tok(
            "Ambiguous syntax: this looks like an argument list for a function call, but could also be a start of "
            "new statement; use ';' to separate statements"
        )

    def parse_call_list(self) -> list[A.Expr]:
        kind = self.tok.kind
        if kind == "(":
            match = self.match_of(self.tok, "(")
            self.next()
            args = self.parse_expr_list() if self.tok.kind != ")" else []
            self.expect_match(")", match)
            return args
        if kind == "{":
            return [self.parse_table_constructor()]
        t = self.tok
        self.next()
        return [A.ExprString(t.start, t.end, decode_string(t), t.text[0])]

    def parse_function_args(self, func: A.Expr, is_method: bool) -> A.Expr:
        t = self.tok
        kind = t.kind
        if kind == "(":
            if self.newline_before(t):
                self.report_ambiguous_call()
            match = self.match_of(t, "(")
            self.next()
            args = self.parse_expr_list() if self.tok.kind != ")" else []
            end = self.tok.end
            args_end = end
            if not self.expect_match(")", match):
                end = self.prev_end
                args_end = end
            return A.ExprCall(func.start, end, func, args, is_method, t.start, args_end)
        if kind == "{":
            table = self.parse_table_constructor()
            return A.ExprCall(func.start, table.end, func, [table], is_method, table.start, table.end)
        if kind == L.STRING or kind == L.LONG_STRING:
            self.next()
            arg = A.ExprString(t.start, t.end, decode_string(t), t.text[0])
            return A.ExprCall(func.start, t.end, func, [arg], is_method, t.start, t.end)
        if is_method and self.newline_before(t):
            self.report(func.start, func.end, "Expected function call arguments after '('")
        else:
            self.report(func.start, t.start, f"Expected '(', '{{' or <string> when parsing function call, got {describe(t)}")
        return A.ExprError(func.start, self.prev_end, [func])

    def parse_table_constructor(self) -> A.ExprTable:
        t = self.tok
        match = self.match_of(t, "{")
        self.expect("{", "table literal")
        items: list[A.TableItem] = []
        while self.tok.kind != "}":
            kind = self.tok.kind
            istart = self.tok.start
            if kind == "[":
                m = self.match_of(self.tok, "[")
                self.next()
                key = self.parse_expr()
                self.expect_match("]", m)
                self.expect("=", "table field")
                value = self.parse_expr()
                items.append(A.TableItem(istart, value.end, "general", key, value))
            elif kind == L.NAME and self.peek().kind == "=":
                nt = self.tok
                self.next()
                self.expect("=", "table field")
                value = self.parse_expr()
                if type(value) is A.ExprFunction and not value.name:
                    value.name = nt.text
                items.append(A.TableItem(istart, value.end, "record", A.ExprString(nt.start, nt.end, nt.text, ""), value))
            else:
                value = self.parse_expr()
                items.append(A.TableItem(istart, value.end, "list", None, value))
            kind = self.tok.kind
            if kind == "," or kind == ";":
                self.next()
            elif kind == "[" or kind == L.NAME:
                self.report_tok("Expected ',' after table constructor element")
            elif kind != "}":
                break
        end = self.tok.end
        if not self.expect_match("}", match):
            end = self.prev_end
        return A.ExprTable(t.start, end, items)

    def parse_if_else_expr(self) -> A.Expr:
        start = self.tok.start
        if self.tok.kind == "if":
            self.if_expressions.append(start)
        self.next()  # if / elseif
        cond = self.parse_expr()
        self.expect("then", "if then else expression")
        true_expr = self.parse_expr()
        if self.tok.kind == "elseif":
            saved = self.depth
            self.enter("expression")
            false_expr = self.parse_if_else_expr()
            self.depth = saved
        else:
            self.expect("else", "if then else expression")
            false_expr = self.parse_expr()
        return A.ExprIfElse(start, false_expr.end, cond, true_expr, false_expr)

    def parse_interp_string(self) -> A.Expr:
        start = self.tok.start
        strings: list[str] = []
        exprs: list[A.Expr] = []
        end = self.tok.end
        while True:
            t = self.tok
            end = t.end
            strings.append(t.text[1:-1])
            self.next()
            if t.kind == L.INTERP_END or t.kind == L.INTERP_SIMPLE:
                break
            kind = self.tok.kind
            if kind == L.INTERP_MID or kind == L.INTERP_END:
                self.report(t.start, t.end, "Malformed interpolated string, expected expression inside '{}'")
                self.next()
                exprs.append(A.ExprError(t.start, t.end, []))
                break
            if kind == L.ERROR:
                self.next()
                self.report(t.start, t.end, "Malformed interpolated string; did you forget to add a '`'?")
                exprs.append(A.ExprError(t.start, t.end, []))
                break
            exprs.append(self.parse_expr())
            kind = self.tok.kind
            if kind in (L.INTERP_BEGIN, L.INTERP_MID, L.INTERP_END):
                continue
            if kind == L.ERROR or kind == L.EOF:
                if kind == L.ERROR:
                    self.next()
                if self.tok.kind == L.EOF and kind == L.EOF:
                    self.report(self.prev_end, self.prev_end, "Malformed interpolated string; did you forget to add a '}'?")
                return A.ExprInterpString(start, self.prev_end, strings, exprs)
            self.report(t.start, t.end, f"Malformed interpolated string, got {describe(self.tok)}")
            return A.ExprError(start, self.prev_end, exprs)
        return A.ExprInterpString(start, end, strings, exprs)

    # -- types -----------------------------------------------------------------------
    def should_parse_type_pack(self) -> bool:
        t = self.tok
        return t.kind == "..." or (t.kind == L.NAME and self.peek().kind == "...")

    def parse_type_pack(self):
        t = self.tok
        if t.kind == "...":
            self.next()
            ty = self.parse_type()
            return A.TypePackVariadic(t.start, ty.end, ty)
        if t.kind == L.NAME and self.peek().kind == "...":
            self.next()
            end = self.tok.end
            self.next()
            return A.TypePackGeneric(t.start, end, t.text)
        return None

    def parse_variadic_argument_type_pack(self):
        t = self.tok
        if t.kind == L.NAME and self.peek().kind == "...":
            self.next()
            end = self.tok.end
            self.next()
            return A.TypePackGeneric(t.start, end, t.text)
        ty = self.parse_type()
        return A.TypePackVariadic(ty.start, ty.end, ty)

    def parse_optional_return_type(self):
        if self.tok.kind == ":" or self.tok.kind == "->":
            if self.tok.kind == "->":
                self.report_tok("Function return type annotations are written after ':' instead of '->'")
            self.next()
            saved = self.depth
            result = self.parse_return_type()
            if self.tok.kind == ",":
                self.report_tok("Expected a statement, got ','; did you forget to wrap the list of return types in parentheses?")
                self.next()
            self.depth = saved
            return result
        return None

    def parse_return_type(self):
        self.enter("type annotation")
        begin = self.tok
        if begin.kind != "(":
            if self.should_parse_type_pack():
                return self.parse_type_pack()
            ty = self.parse_type()
            return A.TypePackExplicit(ty.start, ty.end, [ty], None)
        match = self.match_of(begin, "(")
        self.next()
        self.stop_on["->"] += 1
        types: list = []
        names: list = []
        tail = None
        if self.tok.kind != ")":
            tail = self.parse_type_list(types, names)
        close_end = self.tok.end
        self.expect_match(")", match, search_for_missing=True)
        self.stop_on["->"] -= 1
        if self.tok.kind != "->" and not names:
            if len(types) == 1:
                inner = types[0]
                if tail is None and self.tok.kind in ("|", "?", "&"):
                    inner = A.TypeGroup(begin.start, close_end, inner)
                ret = self.parse_type_suffix(inner, begin.start)
                return A.TypePackExplicit(begin.start, max(close_end, ret.end), [ret], tail)
            return A.TypePackExplicit(begin.start, close_end, types, tail)
        fn = self.parse_function_type_tail(begin, [], types, names, tail)
        return A.TypePackExplicit(begin.start, fn.end, [fn], None)

    def parse_type_list(self, types: list, names: list):
        while True:
            if self.should_parse_type_pack():
                return self.parse_type_pack()
            if self.tok.kind == L.NAME and self.peek().kind == ":":
                while len(names) < len(types):
                    names.append(None)
                names.append(self.tok.text)
                self.next()
                self.expect(":")
            elif names:
                names.append(None)
            types.append(self.parse_type())
            if self.tok.kind != ",":
                break
            self.next()
            if self.tok.kind == ")":
                self.report_tok("Expected type after ',' but got ')' instead")
                break
        return None

    def parse_type(self):
        saved = self.depth
        begin = self.tok.start
        ty = None
        if self.tok.kind not in ("|", "&"):
            ty = self.parse_simple_type(False)[0]
            self.depth = saved
        result = self.parse_type_suffix(ty, begin)
        self.depth = saved
        return result

    def parse_type_suffix(self, ty, begin: int):
        parts: list = [ty] if ty is not None else []
        self.enter("type annotation")
        is_union = is_intersection = False
        optional_count = 0
        while True:
            kind = self.tok.kind
            if kind == "|":
                self.next()
                saved = self.depth
                parts.append(self.parse_simple_type(False)[0])
                self.depth = saved
                is_union = True
            elif kind == "?":
                t = self.tok
                self.next()
                parts.append(A.TypeOptional(t.start, t.end))
                optional_count += 1
                is_union = True
            elif kind == "&":
                self.next()
                saved = self.depth
                parts.append(self.parse_simple_type(False)[0])
                self.depth = saved
                is_intersection = True
            elif kind == "...":
                self.report_tok("Unexpected '...' after type annotation")
                self.next()
            else:
                break
            if len(parts) > TYPE_LENGTH_LIMIT + optional_count:
                last = parts[-1]
                raise _Fatal(last.start, last.end, "Exceeded allowed type length; simplify your type annotation to make the code compile")
        if not parts:
            t = self.tok
            self.report(t.start, t.end, f"Expected type, got {describe(t)}")
            return A.TypeError_(t.start, t.start, [])
        if len(parts) == 1 and not is_union and not is_intersection:
            return parts[0]
        end = parts[-1].end
        if is_union and is_intersection:
            self.report(begin, end, "Mixing union and intersection types is not allowed; consider wrapping in parentheses.")
            return A.TypeError_(begin, end, parts)
        if is_union:
            return A.TypeUnion(begin, end, parts)
        return A.TypeIntersection(begin, end, parts)

    def parse_simple_type(self, allow_pack: bool):
        """Returns ``(type, None)`` or ``(None, pack)``."""
        self.enter("type annotation")
        t = self.tok
        kind = t.kind
        if kind == L.NAME:
            self.next()
            prefix = None
            name = t.text
            end = t.end
            if self.tok.kind == ".":
                op_start = self.tok.start
                self.next()
                prefix = name
                name, _, end = self.parse_index_name("field name", op_start)
            elif self.tok.kind == "...":
                self.report_tok("Unexpected '...' after type name; type pack is not allowed in this context")
                self.next()
            elif name == "typeof":
                match = self.match_of(self.tok, "(")
                self.expect("(", "typeof type")
                expr = self.parse_expr()
                end = self.tok.end
                if not self.expect_match(")", match):
                    end = self.prev_end
                return A.TypeTypeof(t.start, end, expr), None
            params: list = []
            has_params = False
            if self.tok.kind == "<":
                has_params = True
                params = self.parse_type_params()
            return A.TypeReference(t.start, max(end, self.prev_end), prefix, name, params, has_params), None
        if kind == "{":
            return self.parse_table_type(), None
        if kind == "(" or kind == "<":
            return self.parse_function_type(allow_pack, [])
        if kind == "nil":
            self.next()
            return A.TypeReference(t.start, t.end, None, "nil", [], False), None
        if kind == "true" or kind == "false":
            self.next()
            return A.TypeSingletonBool(t.start, t.end, kind == "true"), None
        if kind == L.STRING or kind == L.LONG_STRING:
            self.next()
            value = decode_string(t)
            if value is None:
                self.report(t.start, t.end, "String literal contains malformed escape sequence")
            return A.TypeSingletonString(t.start, t.end, value), None
        if kind == L.INTERP_BEGIN or kind == L.INTERP_SIMPLE:
            if kind == L.INTERP_BEGIN:
                self.parse_interp_string()
            else:
                self.next()
            self.report(t.start, t.end, "Interpolated string literals cannot be used as types")
            return A.TypeError_(t.start, self.prev_end, []), None
        if kind == L.ATTRIBUTE or kind == L.ATTRIBUTE_OPEN:
            self.report(t.start, t.end, "attributes are not allowed in declaration context")
            return A.TypeError_(t.start, t.end, []), None
        if kind == "function":
            self.next()
            self.report(
                t.start, t.end,
                "Using 'function' as a type annotation is not supported, consider replacing with a function type "
                "annotation e.g. '(...any) -> ...any'",
            )
            return A.TypeError_(t.start, t.end, []), None
        if kind == L.ERROR and t.text[:1] in ("\"", "'", "["):
            self.next()
            self.report(t.start, t.end, "Malformed string; did you forget to finish it?")
            return A.TypeError_(t.start, t.end, []), None
        # A missing type: Luau reports from the end of the previous token to the current one.
        self.report(self.prev_end, t.end, f"Expected type, got {describe(t)}")
        return A.TypeError_(self.prev_end, t.start, []), None

    def parse_table_type(self):
        self.enter("type annotation")
        t = self.tok
        match = self.match_of(t, "{")
        self.expect("{", "table type")
        props: list = []
        indexer = None
        while self.tok.kind != "}":
            access = ""
            if self.tok.kind == L.NAME and self.peek().kind != ":" and self.tok.text in ("read", "write"):
                access = self.tok.text
                self.next()
            if self.tok.kind == "[":
                begin = self.tok
                m = self.match_of(begin, "[")
                self.next()
                if self.tok.kind in (L.STRING, L.LONG_STRING) and self.peek().kind == "]":
                    st = self.tok
                    self.next()
                    self.expect_match("]", m)
                    self.expect(":", "table field")
                    ty = self.parse_type()
                    value = decode_string(st)
                    if value is None or "\x00" in value:
                        self.report(begin.start, begin.end, "String literal contains malformed escape sequence or \\0")
                    else:
                        props.append(A.TableProp(begin.start, ty.end, value, ty, access))
                else:
                    key = self.parse_type()
                    self.expect_match("]", m)
                    self.expect(":", "table field")
                    value_type = self.parse_type()
                    node = A.TableIndexer(begin.start, value_type.end, key, value_type, access)
                    if indexer is not None:
                        self.report(node.start, node.end, "Cannot have more than one table indexer")
                    else:
                        indexer = node
            elif not props and indexer is None and not (self.tok.kind == L.NAME and self.peek().kind == ":"):
                ty = self.parse_type()
                indexer = A.TableIndexer(ty.start, ty.end, A.TypeReference(t.start, t.start, None, "number", [], False), ty, access)
                break
            else:
                nt = self.tok
                if nt.kind != L.NAME:
                    self.report_name_error("table field")
                    break
                self.next()
                self.expect(":", "table field")
                ty = self.parse_type()
                props.append(A.TableProp(nt.start, ty.end, nt.text, ty, access))
            if self.tok.kind in (",", ";"):
                self.next()
            elif self.tok.kind != "}":
                break
        end = self.tok.end
        if not self.expect_match("}", match, search_for_missing=True):
            end = self.prev_end
        self.table_types.append((t.start, end))
        return A.TypeTable(t.start, end, props, indexer)

    def parse_function_type(self, allow_pack: bool, attributes: list):
        self.enter("type annotation")
        begin = self.tok
        force_function = begin.kind == "<"
        generics = self.parse_generic_type_list(with_defaults=False)
        params_tok = self.tok
        match = self.match_of(params_tok, "(")
        self.expect("(", "function parameters")
        self.stop_on["->"] += 1
        types: list = []
        names: list = []
        tail = None
        if self.tok.kind != ")":
            tail = self.parse_type_list(types, names)
        close_end = self.tok.end
        self.expect_match(")", match, search_for_missing=True)
        self.stop_on["->"] -= 1
        if names:
            force_function = True
        has_return = self.tok.kind in ("->", ":")
        if len(types) == 1 and tail is None and not force_function and not has_return:
            if allow_pack:
                return None, A.TypePackExplicit(begin.start, close_end, types, None)
            return A.TypeGroup(params_tok.start, close_end, types[0]), None
        if not force_function and not has_return and allow_pack:
            return None, A.TypePackExplicit(begin.start, close_end, types, tail)
        fn = self.parse_function_type_tail(begin, generics, types, names, tail)
        if isinstance(fn, A.TypeFunction):  # `()` without `->` comes back as a TypeReference
            fn.attributes = attributes
        return fn, None

    def parse_function_type_tail(self, begin: Token, generics: list, types: list, names: list, tail):
        self.enter("type annotation")
        if self.tok.kind == ":":
            self.report_tok("Return types in function type annotations are written after '->' instead of ':'")
            self.next()
        elif self.tok.kind != "->" and not generics and not types:
            self.report(begin.start, self.prev_end, "Expected '->' after '()' when parsing function type; did you mean 'nil'?")
            return A.TypeReference(begin.start, begin.end, None, "nil", [], False)
        else:
            self.expect("->", "function type")
        returns = self.parse_return_type()
        params = A.TypePackExplicit(begin.start, begin.end, types, tail)
        return A.TypeFunction(begin.start, returns.end, generics, params, names, returns)

    def parse_generic_type_list(self, with_defaults: bool) -> list:
        out: list = []
        if self.tok.kind != "<":
            return out
        begin = self.tok
        match = self.match_of(begin, "<")
        self.next()
        seen_pack = seen_default = False
        while True:
            nt = self.tok
            name, ns, ne = self.parse_name(None)
            if self.tok.kind == "..." or seen_pack:
                seen_pack = True
                if self.tok.kind != "...":
                    self.report_tok("Generic types come before generic type packs")
                else:
                    self.next()
                default = None
                if with_defaults and self.tok.kind == "=":
                    seen_default = True
                    self.next()
                    if self.should_parse_type_pack():
                        default = self.parse_type_pack()
                    else:
                        ty, pack = self.parse_simple_type_or_pack()
                        if ty is not None:
                            self.report(ty.start, ty.end, "Expected type pack after '=', got type")
                        default = pack if pack is not None else ty
                elif seen_default:
                    self.report_tok("Expected default type pack after type pack name")
                out.append(A.GenericType(nt.start, self.prev_end, name, True, default))
            else:
                default = None
                if with_defaults and self.tok.kind == "=":
                    seen_default = True
                    self.next()
                    default = self.parse_type()
                elif seen_default:
                    self.report_tok("Expected default type after type name")
                out.append(A.GenericType(nt.start, self.prev_end, name, False, default))
            if self.tok.kind == ",":
                self.next()
                if self.tok.kind == ">":
                    self.report_tok("Expected type after ',' but got '>' instead")
                    break
            else:
                break
        self.expect_match(">", match)
        return out

    def parse_simple_type_or_pack(self):
        saved = self.depth
        begin = self.tok.start
        ty, pack = self.parse_simple_type(True)
        if pack is not None:
            return None, pack
        self.depth = saved
        return self.parse_type_suffix(ty, begin), None

    def parse_type_params(self) -> list:
        out: list = []
        if self.tok.kind != "<":
            return out
        begin = self.tok
        match = self.match_of(begin, "<")
        self.next()
        while True:
            if self.should_parse_type_pack():
                out.append(self.parse_type_pack())
            elif self.tok.kind == "(":
                start = self.tok.start
                ty, pack = self.parse_simple_type(True)
                if pack is not None:
                    if (
                        type(pack) is A.TypePackExplicit and pack.tail is None and len(pack.types) == 1
                        and self.tok.kind in ("|", "?", "&")
                    ):
                        inner = pack.types[0]
                        out.append(self.parse_type_suffix(A.TypeGroup(inner.start, inner.end, inner), start))
                    else:
                        out.append(pack)
                else:
                    out.append(self.parse_type_suffix(ty, start))
            elif self.tok.kind == ">" and not out:
                break
            else:
                out.append(self.parse_type())
            if self.tok.kind == ",":
                self.next()
            else:
                break
        self.expect_match(">", match)
        return out

    def parse_type_instantiation(self) -> list:
        """``<<T, U>>`` after an expression (explicit type instantiation)."""
        begin = self.tok
        match = self.match_of(begin, "<")
        self.next()  # first '<'; parse_type_params consumes '<' ... '>'
        types = self.parse_type_params()
        self.expect_match(">", match)
        return types


def parse(text: str, lex: L.LexResult | None = None, *, declarations: bool = False, lines: LineIndex | None = None) -> A.Chunk:
    """Parse Luau source into a :class:`~luaguard.luau.ast.Chunk`.

    ``lex`` may be a :func:`~luaguard.luau.lexer.tokenize` result for ``text`` and
    ``lines`` its :class:`~luaguard.text.LineIndex` (to avoid computing them twice).  ``declarations`` enables definition-file syntax (``declare ...``).
    Never raises on any input: hitting the recursion or error limit ends parsing with
    one final error and the statements parsed so far.
    """
    if lex is None:
        lex = L.tokenize(text)
    parser = Parser(text, lex.tokens, declarations=declarations, lines=lines)
    hot = [c.text[3:].strip() for c in lex.comments if c.kind == L.COMMENT and c.text.startswith("--!")]
    old_limit = sys.getrecursionlimit()
    needed = RECURSION_LIMIT * 12 + 500
    if old_limit < needed:
        sys.setrecursionlimit(needed)
    try:
        body = parser.parse_chunk()
    except _Fatal as fatal:
        parser.errors.append(A.ParseError(fatal.start, fatal.end, fatal.message))
        body = A.Block(0, len(text), [])
    except RecursionError:  # pragma: no cover - the depth counter fires first
        t = parser.tok
        parser.errors.append(A.ParseError(t.start, t.end, "Exceeded allowed recursion depth; simplify your code to make it compile"))
        body = A.Block(0, len(text), [])
    chunk = A.Chunk(body, [e for e in parser.errors if e.message], hot)
    chunk.globals_assigned = parser.globals_assigned
    chunk.lookups = parser.lookups
    chunk.assigned = parser.assigned
    chunk.type_names = parser.type_names
    chunk.varargs = parser.varargs
    chunk.global_reads = parser.global_reads
    chunk.local_names = parser.local_names
    chunk.if_expressions = frozenset(parser.if_expressions)
    chunk.table_types = sorted(parser.table_types)
    chunk.vararg_functions = frozenset(parser.vararg_functions)
    chunk.type_regions = sorted(parser.type_regions)
    return chunk
