"""`EventSplitter`: the events of a server-sent event stream, fed in chunks
split anywhere, each with its raw bytes (so an event forwarded is the bytes
that came) and its ``data`` (the message it carries).

The framing is the HTML standard's (``text/event-stream``): lines end in
CR LF, LF or CR; an empty line ends an event; a line starting with ``:`` is
a comment; ``data`` fields are joined by LF. Only ``data`` is read: the
other fields (``event``, ``id``, ``retry``) are the peers' business and are
forwarded as they came. An event longer than ``max_event_bytes`` is never
held whole: it is given as its size and first bytes (`EXCERPT_BYTES`), and
its raw bytes are not kept.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from mcp_schema._args import check
from mcp_schema.proxy.reports import EXCERPT_BYTES

__all__ = ["EventSplitter", "SseEvent"]

_CR, _LF = 13, 10
_LINE_END = re.compile(rb"\r\n|\r|\n")


class SseEvent(NamedTuple):
    """One event of the stream: what an empty line ended, or what the stream
    ended inside (``unfinished``)."""

    raw: bytes
    """Its bytes as they came, the empty line ending it included (only the
    first `EXCERPT_BYTES` when ``overlong``). A CR LF split between two
    chunks ends the line at the CR: its LF begins the next event's bytes."""
    data: bytes | None
    """Its ``data`` fields joined by LF; None when it has none (a comment, a
    keep-alive, an empty line, an event that only sets ``id`` or ``retry``),
    when it is ``overlong`` or ``unfinished`` (a reader dispatches neither)."""
    size: int
    """Its size in bytes, as ``raw`` would be whole."""
    overlong: bool = False
    """Longer than the splitter's limit: ``raw`` is its head."""
    unfinished: bool = False
    """The stream ended inside it (`EventSplitter.close`)."""


class EventSplitter:
    """Splits one ``text/event-stream`` into `SseEvent`, holding at most
    ``max_event_bytes`` (and one chunk) of an event. Every byte fed is in
    the ``raw`` of exactly one event, in order (but those of an overlong one)."""

    __slots__ = ("_content", "_cr", "_data", "_line", "_over", "_raw", "_size", "max_event_bytes")

    def __init__(self, max_event_bytes: int) -> None:
        check(max_event_bytes, int, "max_event_bytes")
        if max_event_bytes < 1:
            raise ValueError(f"max_event_bytes must be positive, not {max_event_bytes}")
        self.max_event_bytes = max_event_bytes
        self._raw = bytearray()  # the event's bytes so far (its head once overlong)
        self._line = bytearray()  # the current line, without its end (none once overlong)
        self._content = False  # the current line has a byte besides its end
        self._data: list[bytes] | None = None
        self._size = 0
        self._over = False
        self._cr = False  # the last byte fed was a CR: an LF first in the next chunk is its

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events completed by ``chunk``, the next bytes of the stream."""
        events: list[SseEvent] = []
        start, size = 0, len(chunk)
        if self._cr and size and chunk[0] == _LF:
            self._add(chunk, 0, 1, content=False)  # its line ended at the CR already
            start = 1
        self._cr = False
        while start < size:
            found = _LINE_END.search(chunk, start)
            if found is None:
                self._add(chunk, start, size, content=True)
                break
            end = found.start()
            self._add(chunk, start, end, content=True)
            after = found.end()
            # A lone CR last: an LF first in the next chunk is its (a CR LF matched whole is not).
            self._cr = after == size and after - end == 1 and chunk[end] == _CR
            self._add(chunk, end, after, content=False)
            start = after
            event = self._line_ended()
            if event is not None:
                events.append(event)
        return events

    def close(self) -> SseEvent | None:
        """The stream ended: what it ended inside, if anything (``unfinished``)."""
        if not self._size:
            return None
        event = SseEvent(bytes(self._raw), None, self._size, self._over, True)
        self._reset()
        return event

    def _add(self, chunk: bytes, start: int, end: int, *, content: bool) -> None:
        if start == end:
            return
        self._content = self._content or content
        self._size += end - start
        if not self._over and self._size <= self.max_event_bytes:
            self._raw += memoryview(chunk)[start:end]
            if content:
                self._line += memoryview(chunk)[start:end]
            return
        if not self._over:  # just went over: from now on only its head is kept
            self._over = True
            del self._raw[EXCERPT_BYTES:]
            self._line.clear()
            self._data = None
        if (missing := EXCERPT_BYTES - len(self._raw)) > 0:
            self._raw += memoryview(chunk)[start : min(end, start + missing)]

    def _line_ended(self) -> SseEvent | None:
        if not self._content:  # an empty line: the event ends
            data = None if self._over or self._data is None else b"\n".join(self._data)
            event = SseEvent(bytes(self._raw), data, self._size, self._over)
            self._reset()
            return event
        if not self._over and self._line[:1] != b":":  # a comment line is no field
            name, colon, value = bytes(self._line).partition(b":")
            if colon and value[:1] == b" ":
                value = value[1:]
            if name == b"data":
                if self._data is None:
                    self._data = []
                self._data.append(value)
        self._line.clear()
        self._content = False
        return None

    def _reset(self) -> None:
        self._raw = bytearray()
        self._line.clear()
        self._content = False
        self._data = None
        self._size = 0
        self._over = False
