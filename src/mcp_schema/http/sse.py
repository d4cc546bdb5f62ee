"""Server-sent events, both ways (hand-written runtime module): `sse_event`
writes one ``message`` event, and `EventReader` reads a stream as it
arrives, bounded.

The client side of what `mcp_schema.http.stream` writes: the body of a
``text/event-stream`` response, fed chunk by chunk however the network cut
it, gives the ``data`` of each complete event, per the
[SSE rules](https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
lines end in CRLF, LF or CR; ``data`` lines of one event join with LF; a
blank line ends the event; comments (``:``, the keep-alives) and unknown
fields are skipped, ``id`` and ``retry`` kept as the stream's last event id
and reconnection time (what resuming it needs); an event of a type other
than ``message`` is skipped. Every byte is the peer's: an event (its
unfinished line included) longer than ``max_event`` bytes is refused with
`EventTooLarge`, so what is held never exceeds that, and each byte is
scanned once.
"""

from __future__ import annotations

import re

from mcp_schema._args import check

__all__ = ["MAX_EVENT", "EventReader", "EventTooLarge", "sse_event", "sse_events"]

MAX_EVENT = 4 << 20
"""Bytes of one event (its ``data`` and its field names) read by default."""

_BREAK = re.compile(rb"\r\n|\r|\n")
_ID = re.compile(rb"[!-~]{1,256}")


def sse_event(data: bytes, event_id: bytes | None = None) -> bytes:
    """One ``message`` event carrying ``data`` (a JSON-RPC frame), with an
    ``id`` when given. Compact JSON is one line; data that is not gets a
    ``data`` line per line, as the SSE rules join them back."""
    head = b"event: message\n" if event_id is None else b"id: " + event_id + b"\nevent: message\n"
    if b"\n" in data or b"\r" in data:
        lines = _BREAK.split(data)
        return head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return head + b"data: " + data + b"\n\n"


def sse_events(frames: list[bytes]) -> bytes:
    """``frames`` as consecutive ``message`` events."""
    return b"".join(sse_event(frame) for frame in frames)


class EventTooLarge(ValueError):
    """An event, or one line of it, is longer than the reader's ``max_event``."""


class EventReader:
    """The events of one stream, fed its bytes in order (`feed`)."""

    def __init__(self, max_event: int = MAX_EVENT) -> None:
        check(max_event, int, "max_event")
        if max_event < 1:
            raise ValueError(f"max_event must be positive, not {max_event}")
        self.max_event = max_event
        self._line = bytearray()  # the line not ended yet
        self._data = bytearray()  # the data of the event not ended yet
        self._has_data = False
        self._type = b""
        self._after_cr = False  # the last chunk ended in CR: an LF next ends no new line
        self.last_id: str | None = None
        """The last ``id`` the stream gave (visible ASCII, at most 256 bytes; others are ignored)."""
        self.retry: int | None = None
        """The last ``retry`` the stream gave: milliseconds to wait before reconnecting."""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The ``data`` of each ``message`` event ``chunk`` completes, in order."""
        events: list[bytes] = []
        start, size = 0, len(chunk)
        if self._after_cr and chunk[:1] == b"\n":
            start = 1
        self._after_cr = False
        while start < size:
            found = _BREAK.search(chunk, start)
            if found is None:
                self._hold(len(chunk) - start)
                self._line += chunk[start:]
                break
            self._hold(found.start() - start)
            if self._line:
                self._line += chunk[start : found.start()]
                line = bytes(self._line)
                self._line.clear()
            else:
                line = chunk[start : found.start()]
            self._field(line, events)
            start = found.end()
            self._after_cr = start == size and chunk[start - 1 : start] == b"\r"
        return events

    def _hold(self, more: int) -> None:
        if len(self._line) + more + len(self._data) > self.max_event:
            raise EventTooLarge(f"an event of the stream is longer than {self.max_event:,} bytes")

    def _field(self, line: bytes, events: list[bytes]) -> None:
        if not line:  # a blank line ends the event
            if self._has_data and self._type in (b"", b"message"):
                events.append(bytes(self._data))
            self._data.clear()
            self._has_data, self._type = False, b""
            return
        name, colon, value = line.partition(b":")
        if not name:
            return  # a comment
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            if self._has_data:
                self._data += b"\n"
            self._data += value
            self._has_data = True
        elif name == b"event":
            self._type = value
        elif name == b"id" and _ID.fullmatch(value):
            self.last_id = value.decode("ascii")
        elif name == b"retry" and value.isdigit() and len(value) <= 9:
            self.retry = int(value)
