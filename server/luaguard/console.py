"""Human output of ``luaguard check``: the source line under each finding, colour, a summary
by rule, and a progress bar on long runs.

Each finding is printed as :func:`luaguard.findings.format_text` prints it, with the source
line it points at and a caret under its range inserted below the first line, and its fix
shown as a one-line diff below the ``fix:`` line (the compiler-style excerpt of ruff,
selene and luau-analyze)::

    src/server/Main.server.luau:13:49: error[unknown_instance] 'Modulez' is not a child of ...
       13 | local Hitbox = require(ReplicatedStorage.Shared.Modulez.Hitbox)
          |                                                 ^^^^^^^
        fix: Replace 'Modulez' with 'Modules'
          - local Hitbox = require(ReplicatedStorage.Shared.Modulez.Hitbox)
          + local Hitbox = require(ReplicatedStorage.Shared.Modules.Hitbox)

Every added line starts with a space, so ``path:line:col:`` lines stay the only lines that
do not, as before.  Tabs are shown as 4 columns and the caret counts terminal cells (rich's
``cell_len``: a CJK character is two); control characters of the file are shown as ``?``
(the repository is untrusted: its bytes never reach the terminal as escape sequences); a
line longer than :data:`MAX_LINE_CELLS` is cut around the range.

Colour comes from `rich <https://github.com/Textualize/rich>`_: on when stdout is a
terminal, off when it is not, and off under ``NO_COLOR`` (https://no-color.org);
``--color always|never`` decides otherwise.  Without colour the text is written as is
(no rich console, so nothing wraps or changes).  The progress bar (:func:`file_progress`)
goes to stderr, only when stderr is a terminal, and only once a run has lasted
:data:`PROGRESS_AFTER_S` seconds.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence, TextIO

from .findings import Finding, Severity, format_text

#: a source line wider than this many cells is cut around the finding
MAX_LINE_CELLS = 160
#: the progress bar appears once a run has taken this long (seconds)
PROGRESS_AFTER_S = 2.0
TAB = 4
#: the summary by rule is printed from this many findings on
SUMMARY_FROM = 5

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFORMATION: "bold blue",
          Severity.HINT: "bold cyan"}


def _cells(s: str) -> int:
    from rich.cells import cell_len

    return cell_len(s)


def _clean(s: str) -> str:
    """Tabs as :data:`TAB` spaces, other control characters as ``?``."""
    s = s.expandtabs(TAB)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() or c == " " else "?" for c in s)


def utf16_index(line: str, character: int) -> int:
    """The ``str`` index in ``line`` of the UTF-16 column ``character`` (clamped)."""
    if line.isascii():
        return max(0, min(character, len(line)))
    units = 0
    for i, c in enumerate(line):
        if units >= character:
            return i
        units += 2 if ord(c) > 0xFFFF else 1
    return len(line)


class SourceLines:
    """The lines of the texts findings were computed on, split once per text."""

    def __init__(self) -> None:
        self._split: dict[int, tuple[str, list[str]]] = {}

    def line(self, text: str | None, n: int) -> str | None:
        """Line ``n`` (0-based) of ``text`` without its line break, or ``None``."""
        if text is None:
            return None
        got = self._split.get(id(text))
        if got is None or got[0] is not text:
            got = (text, text.splitlines())
            self._split[id(text)] = got
        lines = got[1]
        return lines[n] if 0 <= n < len(lines) else None


def _excerpt(src: str, start: int, end: int) -> tuple[str, int, int]:
    """``src`` cleaned for the terminal with the caret's start cell and width for the
    ``str`` range ``[start, end)`` (at least one cell), cut to :data:`MAX_LINE_CELLS`."""
    lead = ""
    tail = ""
    if _cells(_clean(src)) > MAX_LINE_CELLS:
        lo = max(0, start - 40)
        hi = max(end, lo + 1)
        cut = src[lo:]
        while _cells(_clean(cut)) > MAX_LINE_CELLS - 2 and len(cut) > hi - lo:
            cut = cut[: max(hi - lo, len(cut) - max(1, len(cut) // 4))]
        lead = "…" if lo > 0 else ""
        tail = "…" if lo + len(cut) < len(src) else ""
        src, start, end = cut, start - lo, min(end, lo + len(cut)) - lo
    before = _clean(src[:start])
    col = _cells(lead) + _cells(before)
    width = max(1, _cells(_clean(src[:end])) - _cells(before)) if end > start else 1
    return lead + _clean(src) + tail, col, width


def _fixed_line(f: Finding, src: str) -> str | None:
    """The line after ``f``'s fix, when the fix edits this one line only."""
    fix = f.fix
    if fix is None or fix.range.start.line != fix.range.end.line or fix.range.start.line != f.range.start.line:
        return None
    if "\n" in fix.new_text or "\r" in fix.new_text:
        return None
    a = utf16_index(src, fix.range.start.character)
    b = utf16_index(src, fix.range.end.character)
    return src[:a] + fix.new_text + src[b:]


def finding_lines(f: Finding, text: str | None, lines: SourceLines | None = None) -> list[tuple[str, str]]:
    """``f`` as ``(text, style)`` lines: :func:`format_text`'s lines with the source excerpt
    after the first and the fix's one-line diff after the ``fix:`` line (see the module
    docstring); ``style`` is a rich style (``""``: none) for the whole line, except the
    first line, styled by :func:`render`."""
    base = format_text(f).split("\n")
    out: list[tuple[str, str]] = [(base[0], "head")]
    lines = lines or SourceLines()
    src = lines.line(text, f.range.start.line)
    gutter = 0
    if src is not None:
        start = utf16_index(src, f.range.start.character)
        end = utf16_index(src, f.range.end.character) if f.range.end.line == f.range.start.line else len(src)
        shown, col, width = _excerpt(src, start, end)
        number = str(f.range.start.line + 1)
        gutter = max(5, len(number))
        out.append((f"{number:>{gutter}} | {shown}".rstrip(), "source"))
        out.append((f"{'':>{gutter}} | " + " " * col + "^" * width, "caret:" + f.severity.label))
    for extra in base[1:]:
        out.append((extra, "fix" if extra.lstrip().startswith("fix") else "note"))
        if extra.lstrip().startswith("fix") and src is not None:
            new = _fixed_line(f, src)
            if new is not None and new != src:
                old_shown = _excerpt(src, 0, 0)[0]
                new_shown = _excerpt(new, 0, 0)[0]
                out.append((f"{'':>{gutter}} - {old_shown}".rstrip(), "minus"))
                out.append((f"{'':>{gutter}} + {new_shown}".rstrip(), "plus"))
    return out


def rule_summary(findings: Sequence[Finding]) -> list[str]:
    """The findings counted by rule, errors first, then most first (with their severity and
    how many have a safe or an unsafe fix); empty for fewer than :data:`SUMMARY_FROM`
    findings or findings of one rule (the closing line says it all)."""
    by_rule: Counter[str] = Counter(f.rule for f in findings)
    if len(by_rule) < 2 or len(findings) < SUMMARY_FROM:
        return []
    severity: dict[str, Severity] = {}
    safe: Counter[str] = Counter()
    unsafe: Counter[str] = Counter()
    for f in findings:
        severity[f.rule] = min(severity.get(f.rule, f.severity), f.severity)
        if f.fix is not None:
            (safe if f.fix.safe else unsafe)[f.rule] += 1
    width = max(len(r) for r in by_rule)
    out = ["Findings by rule:"]
    for rule, n in sorted(by_rule.items(), key=lambda kv: (severity[kv[0]], -kv[1], kv[0])):
        notes = []
        if safe[rule]:
            notes.append(f"{safe[rule]} fixable with --fix")
        if unsafe[rule]:
            notes.append(f"{unsafe[rule]} with --fix --unsafe-fixes")
        line = f"  {n:>6}  {rule:<{width}}  {severity[rule].label:<7}"
        out.append((line + "  " + ", ".join(notes)) if notes else line.rstrip())
    return out


def color_wanted(choice: str, stream: TextIO) -> bool:
    """``--color``: ``always``/``never``, or ``auto`` - on when ``stream`` is a terminal
    and ``NO_COLOR`` is unset or empty (``FORCE_COLOR`` set and not empty turns it on)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Printer:
    """Writes the text report to ``stream``, in colour when ``color``."""

    def __init__(self, stream: TextIO, color: bool) -> None:
        self.stream = stream
        self.console = None
        if color:
            from rich.console import Console

            self.console = Console(file=stream, force_terminal=True, no_color=False, highlight=False,
                                   soft_wrap=True, emoji=False, markup=False)

    def finding(self, f: Finding, text: str | None, lines: SourceLines) -> None:
        rows = finding_lines(f, text, lines)
        if self.console is None:
            self.stream.write("\n".join(t for t, _ in rows) + "\n")
            return
        from rich.text import Text

        for t, style in rows:
            if style == "head":
                self.console.print(_head(f, t))
            elif style.startswith("caret:"):
                bar = t.index("|") + 1
                sev = Severity.parse(style.split(":", 1)[1])
                self.console.print(Text(t[:bar], style="blue"), Text(t[bar:], style=_STYLE[sev]), sep="")
            elif style == "source":
                bar = t.index("|") + 1
                self.console.print(Text(t[:bar], style="blue"), Text(t[bar:]), sep="")
            else:
                self.console.print(Text(t, style={"fix": "cyan", "note": "dim", "minus": "red", "plus": "green"}.get(style, "")))

    def line(self, t: str, style: str = "") -> None:
        if self.console is None:
            self.stream.write(t + "\n")
        else:
            from rich.text import Text

            self.console.print(Text(t, style=style))


def _head(f: Finding, t: str):
    """The first line of a finding, styled: path bold, severity in its colour, rule dim."""
    from rich.text import Text

    label = f"{f.severity.label}[{f.rule}]"
    at = t.find(": " + label)
    if at < 0:
        return Text(t)
    out = Text()
    out.append(t[:at], style="bold")
    out.append(": ")
    out.append(f.severity.label, style=_STYLE[f.severity])
    out.append(f"[{f.rule}]", style="magenta")
    out.append(t[at + 2 + len(label):])
    return out


@contextmanager
def file_progress(total: int, *, enabled: bool, what: str = "checking") -> Iterator[Callable[[str], None]]:
    """A progress bar over ``total`` files on stderr (rich's), shown only when ``enabled``
    (stderr is a terminal) and once :data:`PROGRESS_AFTER_S` seconds have passed; it is
    erased at the end.  Yields ``advance(name)``, called after each file."""
    import sys

    if not enabled or total < 2:
        yield lambda name: None
        return
    t0 = time.monotonic()
    state: dict = {"done": 0, "bar": None, "task": None}

    def advance(name: str) -> None:
        state["done"] += 1
        bar = state["bar"]
        if bar is None:
            if time.monotonic() - t0 < PROGRESS_AFTER_S or state["done"] >= total:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                           TextColumn("{task.fields[name]}", style="dim", markup=False), console=Console(file=sys.stderr),
                           transient=True)
            bar.start()
            state["bar"] = bar
            state["task"] = bar.add_task(what, total=total, completed=state["done"], name="")
        bar.update(state["task"], completed=state["done"], name=_clean(name)[-60:])

    try:
        yield advance
    finally:
        if state["bar"] is not None:
            state["bar"].stop()
