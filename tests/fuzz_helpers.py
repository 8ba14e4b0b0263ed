"""Shared pieces of the fuzz tests (``tests/test_fuzz_*.py``): how many inputs to run, the
Hypothesis settings, input strategies built from Luau and Rojo vocabulary, and the
invariants every finding must satisfy.

Knobs (environment variables), used by ``bench/fuzz_long.py`` for the long run:

* ``LUAGUARD_FUZZ_EXAMPLES`` - inputs per target (default 5,000: the CI run);
* ``LUAGUARD_FUZZ_RANDOM=1`` - a fresh random seed each run (default: derandomized, so CI
  runs the same inputs every time and a red run is reproducible);
* ``LUAGUARD_FUZZ_MAX_SECONDS`` - the longest one input may take (default 2 s; the CI
  inputs are at most a few kilobytes, so anything near this is a hang).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from luaguard.findings import Finding
from luaguard.text import LineIndex

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_PLACE = ROOT / "samples" / "place"

EXAMPLES = int(os.environ.get("LUAGUARD_FUZZ_EXAMPLES", "5000"))
RANDOM = os.environ.get("LUAGUARD_FUZZ_RANDOM", "") not in ("", "0")
MAX_SECONDS = float(os.environ.get("LUAGUARD_FUZZ_MAX_SECONDS", "2.0"))


def fuzz_settings(examples: int | None = None) -> settings:
    """Hypothesis settings for one fuzz target: ``examples`` inputs, no deadline (time is
    checked by :func:`run_fuzz` instead, with a bound that does not flake on a busy CI
    machine), no example database, derandomized unless ``LUAGUARD_FUZZ_RANDOM`` is set."""
    return settings(
        max_examples=examples or EXAMPLES,
        deadline=None,
        database=None,
        derandomize=not RANDOM,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


@dataclass
class FuzzStats:
    """What one fuzz run saw: inputs run, the slowest one (seconds) and its size."""

    runs: int = 0
    slowest: float = 0.0
    slowest_size: int = 0
    extra: dict = field(default_factory=dict)


def run_fuzz(decode: Callable[[bytes], Any], check: Callable[[Any], None], *, examples: int | None = None,
             max_bytes: int = 200, batch: int = 5, name: str = "fuzz") -> FuzzStats:
    """Run ``check`` on ``examples`` inputs, each decoded by ``decode`` from a fuzzer byte
    string of at most ``max_bytes`` bytes.

    Inputs come in batches of ``batch`` byte strings per Hypothesis example: one cheap
    draw per input keeps Hypothesis' own overhead (about 0.5 ms per example) from
    dominating, and a failing batch still shrinks.  Fails (Hypothesis shrinks and prints
    the decoded input) when ``check`` raises or one input takes more than
    ``MAX_SECONDS``.  Returns the stats after asserting that at least ``examples`` inputs
    ran; prints a one-line summary (visible with ``pytest -s``).
    """
    want = examples or EXAMPLES
    stats = FuzzStats()
    blobs = st.tuples(*[st.binary(max_size=max_bytes)] * batch)

    @fuzz_settings(-(-want // batch))
    @given(blobs)
    def prop(batch_blobs: tuple[bytes, ...]) -> None:
        for blob in batch_blobs:
            value = decode(blob)
            t0 = time.perf_counter()
            try:
                check(value)
            except BaseException:
                note(f"input: {value!r}")
                raise
            dt = time.perf_counter() - t0
            if dt > MAX_SECONDS:
                # A busy machine can stall any one call; a slow input is slow every time.
                t0 = time.perf_counter()
                check(value)
                dt = min(dt, time.perf_counter() - t0)
                if dt > MAX_SECONDS:
                    note(f"input: {value!r}")
                    raise AssertionError(f"one input took {dt:.2f} s twice (bound {MAX_SECONDS} s)")
            stats.runs += 1
            if dt > stats.slowest:
                stats.slowest, stats.slowest_size = dt, len(blob)

    prop()
    print(f"\n{name}: {stats.runs} inputs, slowest {stats.slowest * 1000:.1f} ms")
    # Hypothesis stops early only when the strategy has fewer distinct values than asked.
    assert stats.runs >= want, f"only {stats.runs} of {want} inputs ran"
    return stats


class ByteReader:
    """Reads choices from a fuzzer byte string (atheris' FuzzedDataProvider idea): every
    method consumes bytes and, once they run out, returns the smallest choice.  Decoding
    is deterministic, so a byte string names one input exactly."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.i = 0

    @property
    def left(self) -> int:
        return len(self.data) - self.i

    def byte(self) -> int:
        if self.i >= len(self.data):
            return 0
        b = self.data[self.i]
        self.i += 1
        return b

    def int(self, n: int) -> int:
        """An integer in ``[0, n)`` (``n`` <= 65536)."""
        if n <= 1:
            return 0
        v = self.byte() if n <= 256 else self.byte() * 256 + self.byte()
        return v % n

    def chance(self, k: int) -> bool:
        """True with probability about 1/``k``."""
        return self.int(k) == 0

    def choice(self, seq):
        return seq[self.int(len(seq))]


# -- invariants -------------------------------------------------------------------------
def utf16_len(s: str) -> int:
    """Length of ``s`` in UTF-16 code units (what LSP characters count)."""
    return sum(2 if ord(c) > 0xFFFF else 1 for c in s)


def assert_range_inside(text: str, lines: LineIndex, rng, what: str) -> None:
    """``rng`` (a :class:`~luaguard.findings.Range`) lies inside ``text``: lines exist,
    characters do not pass the end of their line (line break excluded), start <= end."""
    n_lines = lines.line_count
    for pos in (rng.start, rng.end):
        assert 0 <= pos.line < n_lines, f"{what}: line {pos.line} outside 0..{n_lines - 1}"
        width = utf16_len(lines.line_text(pos.line))
        assert 0 <= pos.character <= width, f"{what}: character {pos.character} past the end ({width}) of line {pos.line}"
    assert (rng.start.line, rng.start.character) <= (rng.end.line, rng.end.character), f"{what}: start after end"


def assert_findings_inside(text: str, findings: list[Finding]) -> None:
    """Every finding's range (and its fix's range) is inside ``text``, and its offsets
    are within ``[0, len(text)]``."""
    lines = LineIndex(text)
    for f in findings:
        what = f"{f.rule} {f.message[:60]!r}"
        assert_range_inside(text, lines, f.range, what)
        assert 0 <= f.start <= f.end <= len(text), f"{what}: offsets {f.start}..{f.end} outside 0..{len(text)}"
        if f.fix is not None:
            assert_range_inside(text, lines, f.fix.range, what + " (fix)")
        assert f.message, "a finding without a message"


# -- Luau input -------------------------------------------------------------------------
LUAU_FRAGMENTS = [
    # keywords and contextual keywords
    "local", "function", "end", "if", "then", "elseif", "else", "for", "in", "do", "while", "repeat",
    "until", "return", "break", "continue", "and", "or", "not", "nil", "true", "false", "type",
    "export", "typeof", "const", "read", "write", "declare",
    # operators and punctuation
    "(", ")", "[", "]", "{", "}", "=", "==", "~=", "<", ">", "<=", ">=", "+", "-", "*", "/", "//",
    "%", "^", "#", "..", "...", ".", ":", "::", ",", ";", "->", "?", "|", "&", "+=", "-=", "..=",
    "//=", "@native", "@[", "@",
    # names and literals
    "x", "self", "game", "script", "workspace", "Instance", "Vector3", "RS", "_", "a1",
    "0", "1.5", "0x1F", "0b101", "1_000", "1e10", "1e", "0x", ".5", "3i",
    '"str"', "'s'", '"\\u{1F600}"', '"\\x4"', '"\\z  \n"', '"unterminated', "'\\",
    "[[long]]", "[==[lo]]ng]==]", "[=[", "--", "-- comment", "--[[ block ]]", "--[==[", "-- TODO: x",
    "-- ... rest of code", "`a{b}c`", "`{", "`x`", "}`", "`{ {1} }`",
    # Roblox idioms
    'game:GetService("ReplicatedStorage")', ':WaitForChild("Remotes")', '.Parent', '["Name With Space"]',
    'require(script.Parent.Foo)', 'Instance.new("Part")', ':Connect(function(...)',
    # whitespace and odd characters
    " ", "  ", "\t", "\n", "\r\n", "\r", "\v", "\f", "\u00a0", "\u2028", "\u201c", "é", "😀", "\x00", "\ud800", "\ufeff",
]


# The generators below decode one ``st.binary()`` draw (a fuzzer's byte string) into
# text: a single draw per input keeps Hypothesis' own cost per input small (about ten times
# less than drawing every fragment), and shrinking bytes still shrinks the text.
_SEPARATORS = ("", " ", "\n", " ", "", "\t")


def soup_from_bytes(data: bytes) -> str:
    """Luau fragment soup: each byte picks a fragment (or, above the fragment table, a
    raw character), the next one a separator."""
    out = []
    n = len(LUAU_FRAGMENTS)
    it = iter(data)
    for b in it:
        if b < n:
            out.append(LUAU_FRAGMENTS[b])
        else:
            out.append(chr(b * 131 % 0x3000))  # ASCII, Latin, punctuation, CJK ...
        out.append(_SEPARATORS[next(it, 0) % len(_SEPARATORS)])
    return "".join(out)


def _sample_texts() -> list[str]:
    out = []
    for p in sorted(SAMPLE_PLACE.rglob("*.luau")):
        out.append(p.read_text(encoding="utf-8"))
    return out


SAMPLE_TEXTS = _sample_texts()
WINDOW = 1200


def mutate_from_bytes(data: bytes) -> str:
    """A sample-place script with a few random edits read from ``data``: delete a span,
    insert a fragment, duplicate a span, or truncate (real code made slightly wrong).  A
    window of at most :data:`WINDOW` characters keeps 5,000 inputs cheap."""
    if not data:
        return SAMPLE_TEXTS[0][:WINDOW]
    text = SAMPLE_TEXTS[data[0] % len(SAMPLE_TEXTS)]
    if data[0] >= 192:  # a quarter of them with Windows or old-Mac line breaks
        text = text.replace("\n", "\r\n" if data[0] % 2 else "\r")
    if len(text) > WINDOW:
        start = int.from_bytes(data[1:3].ljust(2, b"\0"), "little") % (len(text) - WINDOW)
        text = text[start:start + WINDOW]
    rest = data[3:]
    for k in range(0, len(rest) - 3, 4):
        if not text:
            break
        op, a, b, c = rest[k:k + 4]
        i = (a * 256 + b) % (len(text) + 1)
        kind = op % 7
        if kind < 2:
            text = text[:i] + text[i + 1 + c % 20:]
        elif kind < 4:
            text = text[:i] + LUAU_FRAGMENTS[c % len(LUAU_FRAGMENTS)] + text[i:]
        elif kind < 6:
            j = min(len(text), i + 1 + c % 40)
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i]
    return text


def decode_luau(data: bytes) -> str:
    """The Luau input mix from one byte string: fragment soup (half), a mutated sample
    script (a third) or the bytes as UTF-8 text (the rest)."""
    if not data:
        return ""
    kind = data[0] % 6
    if kind < 3:
        return soup_from_bytes(data[1:])
    if kind < 5:
        return mutate_from_bytes(data[1:])
    return data[1:].decode("utf-8", errors="replace")


# -- JSON input ---------------------------------------------------------------------------
def json_value(r: ByteReader, keys: list[str], strings: list, depth: int = 0, max_depth: int = 6):
    """A JSON value read from ``r``: objects keyed mostly from ``keys``, strings mostly
    from ``strings`` (which may hold non-strings too: they are used as they are)."""
    kind = r.int(10) if depth < max_depth else 4 + r.int(6)
    if kind < 3:
        out = {}
        for _ in range(r.int(5)):
            key = r.choice(keys) if not r.chance(8) else r.choice(["", "💥", "a" * 300, "\u0000", "$"]) 
            out[key] = json_value(r, keys, strings, depth + 1, max_depth)
        return out
    if kind < 4:
        return [json_value(r, keys, strings, depth + 1, max_depth) for _ in range(r.int(4))]
    if kind < 7:
        return r.choice(strings)
    return r.choice([0, -1, 1.5, 1e308, 2**63, True, False, None, "", [], {}])


def json_text(value, r: ByteReader) -> bytes:
    """Serialize ``value``, sometimes damaged the ways hand-written JSON is: comments and
    trailing commas (JSONC), a cut-off end, a BOM, invalid UTF-8, deep nesting."""
    import json

    text = json.dumps(value, ensure_ascii=r.chance(2), indent=r.choice([None, 2, "\t"]), allow_nan=True)

    def enc(t: str) -> bytes:  # lone surrogates (from "\\ud800" in JSON) become invalid UTF-8
        return t.encode("utf-8", errors="surrogatepass")

    damage = r.int(12)
    if damage == 0:
        text = text[: r.int(len(text) + 1)]
    elif damage == 1:
        text = "// comment\n" + text.replace(",", ", /* c */", 1).replace("}", ",}", 1)
    elif damage == 2:
        return b"\xef\xbb\xbf" + enc(text)
    elif damage == 3:
        return enc(text)[:-1] + b"\xff\xfe"
    elif damage == 4:
        depth = 1 + r.int(4000)
        text = "[" * depth + text + "]" * (depth if r.chance(2) else 0)
    elif damage == 5:
        i = r.int(len(text) + 1)
        text = text[:i] + r.choice(["{", "}", "]", '"', "\\", "\x00", "NaN", "Infinity", ":"]) + text[i:]
    return enc(text)
