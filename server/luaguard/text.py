"""Source text handling: decoding files safely and mapping offsets to LSP positions.

Line breaks are ``\\n``, ``\\r\\n`` and a lone ``\\r`` (the LSP specification's set).
Columns are UTF-16 code units, the LSP default encoding.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from .findings import Position, Range

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

#: Files larger than this many bytes are not linted (a finding says so).  5 MB files are
#: still checked; the limit guards the editor against accidental multi-hundred-MB input.
MAX_FILE_BYTES = 16 * 1024 * 1024


class LineIndex:
    """Maps Python string offsets to (line, UTF-16 column) and back.

    Built once per text in O(n); each lookup is O(log lines) plus, on lines holding
    non-ASCII characters, O(line length).
    """

    __slots__ = ("text", "starts", "_ascii")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        if "\r" in text:
            starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
        else:
            find = text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
        self.starts = starts
        self._ascii = text.isascii()

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line_of(self, offset: int) -> int:
        """0-based line holding ``offset`` (clamped to the text)."""
        return bisect.bisect_right(self.starts, offset) - 1

    def line_text(self, line: int) -> str:
        """The text of ``line`` without its line break."""
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def position(self, offset: int) -> Position:
        """LSP position of the Python string ``offset``."""
        if offset < 0:
            offset = 0
        elif offset > len(self.text):
            offset = len(self.text)
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        if self._ascii:
            return Position(line, offset - start)
        segment = self.text[start:offset]
        if segment.isascii():
            return Position(line, offset - start)
        return Position(line, len(segment) + sum(1 for c in segment if ord(c) > 0xFFFF))

    def range(self, start: int, end: int) -> Range:
        """LSP range of the string slice ``[start, end)``."""
        return Range(self.position(start), self.position(end))

    def offset(self, position: Position) -> int:
        """Python string offset of an LSP position (clamped to the line's end)."""
        if position.line >= len(self.starts):
            return len(self.text)
        if position.line < 0:
            return 0
        start = self.starts[position.line]
        line = self.line_text(position.line)
        if self._ascii or line.isascii():
            return start + min(position.character, len(line))
        units = 0
        for i, ch in enumerate(line):
            if units >= position.character:
                return start + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return start + len(line)


@dataclass(frozen=True, slots=True)
class DecodedSource:
    """Result of :func:`decode_source`.

    ``text`` is ``None`` when the input is not text (binary or too large); ``problem``
    then says why.  ``invalid_utf8_offset`` is the first character offset where bytes
    that are not UTF-8 were replaced by U+FFFD, or ``None``.
    """

    text: str | None
    problem: str | None = None
    invalid_utf8_offset: int | None = None
    had_bom: bool = False


def decode_source(data: bytes, *, max_bytes: int = MAX_FILE_BYTES) -> DecodedSource:
    """Decode file bytes as Luau source.

    A UTF-8 BOM is dropped; bytes that are not UTF-8 are replaced with U+FFFD (and the
    first such place is reported); input with NUL bytes in its first 8 KiB is treated as
    binary; input over ``max_bytes`` bytes is refused.  Never raises.
    """
    if len(data) > max_bytes:
        return DecodedSource(None, f"file is {len(data):,} bytes, over the {max_bytes:,}-byte limit; not checked")
    if b"\x00" in data[:8192]:
        return DecodedSource(None, "file looks binary (it contains NUL bytes); not checked")
    had_bom = data.startswith(b"\xef\xbb\xbf")
    if had_bom:
        data = data[3:]
    try:
        return DecodedSource(data.decode("utf-8"), had_bom=had_bom)
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8", errors="replace")
        text = data.decode("utf-8", errors="replace")
        return DecodedSource(text, invalid_utf8_offset=len(prefix), had_bom=had_bom)
