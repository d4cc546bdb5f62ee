"""JSON lines, split out of a byte stream: the one reader of the proxy (its
`Validator`) and of ``python -m mcp_schema validate``.

MCP's stdio framing and JSON Lines agree: one message per line, each ended
by a newline (a ``\\r`` before it is JSON whitespace: a ``\\r\\n`` line is a
message like any other). The rules, the same for both readers:

* a line longer than the limit (`MAX_LINE_BYTES` by default, without its
  newline) is never held whole: it comes out as an `OverlongLine`, its size
  and its first `EXCERPT_BYTES`, whatever its length;
* an empty or blank line is no message (`not_a_message` says why), and is
  reported, never skipped: both SDKs fail to parse one, and JSON Lines has no
  blank lines either (only the newline ending the last line);
* a last line without its newline is given by `LineSplitter.close` like any
  other: a capture file may end without one (JSON Lines allows it), and
  ``validate`` reads it; on a live stream no peer reads it as a message,
  and the proxy reports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, NamedTuple, TypeAlias, Union, cast

from mcp_schema._args import check
from mcp_schema.proxy.reports import EXCERPT_BYTES

MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line (without its newline) that is held and validated, by default;
longer ones are `OverlongLine`."""


class OverlongLine(NamedTuple):
    """A line longer than the limit: its size and first bytes, never all of it."""

    size: int
    """The whole line's size in bytes, without its newline."""
    head: bytes = b""
    """Its first `EXCERPT_BYTES` bytes."""


Line: TypeAlias = Union[bytes, OverlongLine]
"""One line, without its newline: its bytes, or an `OverlongLine`."""


class LineSplitter:
    """The lines of one byte stream, fed in chunks split anywhere: it holds at
    most ``max_line_bytes`` (and one chunk) of a line, never more."""

    __slots__ = ("_buffer", "_head", "_skipped", "max_line_bytes")

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        check(max_line_bytes, int, "max_line_bytes")
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be positive, not {max_line_bytes}")
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._skipped: int | None = None  # bytes so far of an over-long line, not held
        self._head = b""  # the first bytes of that line

    def feed(self, data: bytes) -> list[Line]:
        """The lines completed by ``data``, the next bytes of the stream."""
        lines: list[Line] = []
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if self._skipped is not None:
                self._skip(data, start, end)
                lines.append(OverlongLine(self._skipped, self._head))
                self._skipped, self._head = None, b""
            elif self._buffer:
                self._buffer += memoryview(data)[start:end]
                lines.append(bounded(bytes(self._buffer), self.max_line_bytes))
                self._buffer = bytearray()
            else:
                lines.append(bounded(data[start:end], self.max_line_bytes))
            start = end + 1
        if start < len(data):
            if self._skipped is not None:
                self._skip(data, start, len(data))
            else:
                self._buffer += memoryview(data)[start:]
                if len(self._buffer) > self.max_line_bytes:  # never held whole
                    self._head = bytes(self._buffer[:EXCERPT_BYTES])
                    self._skipped = len(self._buffer)
                    self._buffer = bytearray()
        return lines

    def _skip(self, data: bytes, start: int, end: int) -> None:
        """Count ``data[start:end]``, more of an over-long line, keeping only its head."""
        assert self._skipped is not None
        self._skipped += end - start
        if (missing := EXCERPT_BYTES - len(self._head)) > 0:  # the limit is below the excerpt
            self._head += data[start : min(end, start + missing)]

    def close(self) -> Line | None:
        """The stream ended: its last line, when it had no newline (None when
        the stream ended with one)."""
        last: Line | None = None
        if self._skipped is not None:
            last = OverlongLine(self._skipped, self._head)
        elif self._buffer:
            last = bytes(self._buffer)
        self.discard()
        return last

    def discard(self) -> None:
        """Forget the unfinished line (the stream was cut, not ended)."""
        self._buffer, self._skipped, self._head = bytearray(), None, b""


def bounded(line: bytes, max_bytes: int) -> Line:
    """``line``, or its `OverlongLine` when it is longer than ``max_bytes``."""
    if len(line) > max_bytes:
        return OverlongLine(len(line), line[:EXCERPT_BYTES])
    return line


def not_a_message(line: bytes) -> str | None:
    """Why ``line`` (without its newline) is no message before it is even
    parsed (an empty or blank line), or None."""
    if not line:
        return "an empty line is not a message"
    if line.isspace():
        return "a blank line is not a message"
    return None


def read_lines(stream: IO[bytes], max_bytes: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """The lines of ``stream``, a binary file, split by a `LineSplitter`; the
    last one even without its newline."""
    read: object = getattr(stream, "read1", None) or getattr(stream, "read", None)
    if not callable(read):
        raise TypeError(f"stream must be a binary stream, not {type(stream).__name__}")
    return _lines(cast("Callable[[int], object]", read), LineSplitter(max_bytes))


def _lines(read: Callable[[int], object], splitter: LineSplitter) -> Iterator[Line]:
    while chunk := read(_CHUNK):
        if not isinstance(chunk, bytes):
            raise TypeError(f"stream must be a binary stream, it read {type(chunk).__name__}")
        yield from splitter.feed(chunk)
    last = splitter.close()
    if last is not None:
        yield last


_CHUNK = 65536  # what one read asks for
