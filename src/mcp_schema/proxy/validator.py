"""The `Validator`: the lines of one stdio connection, both ways, checked by
one `Correlator`, each failing line a `Report`."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import cast

from mcp_schema.codec import Correlator, Sender
from mcp_schema.errors import InternalError, McpError, ParseError
from mcp_schema.proxy.lines import (
    MAX_LINE_BYTES,
    Line,
    LineSplitter,
    OverlongLine,
    bounded,
    not_a_message,
)
from mcp_schema.proxy.reports import Report, make_report


class _Stream:
    """One direction of the connection: its lines, and how many so far."""

    __slots__ = ("lines", "splitter")

    def __init__(self, max_line_bytes: int) -> None:
        self.splitter = LineSplitter(max_line_bytes)
        self.lines = 0


class Validator:
    """Validates the lines of one stdio connection, in both directions.

    One `Correlator` (``allow_unknown_methods=True``) reads every line, so a
    response is validated against the request it answers and the session's
    version is followed. Feed it in the order the lines travelled: what one
    peer sends after reading the other's line comes after that line.

    `check` takes one line, `feed` the bytes of a stream as they arrive
    (split into lines here, an over-long line never held whole) and `close`
    the end of a stream. Each returns the `Report` of each line that failed;
    valid lines return nothing. Validation never raises for what a peer sent:
    even a failure of the validator itself is a report (-32603).

    Not thread-safe: one thread feeds it (in the proxy, its validator process).
    """

    def __init__(
        self,
        *,
        version: str | None = None,
        extensions: Collection[str] = (),
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self._streams = {"client": _Stream(max_line_bytes), "server": _Stream(max_line_bytes)}
        self.max_line_bytes = max_line_bytes
        self.correlator = Correlator(
            version=version, extensions=extensions, allow_unknown_methods=True
        )

    def check(self, sender: Sender, line: bytes | bytearray | memoryview) -> Report | None:
        """The report of one line ``sender`` sent (without its newline), or None
        when it is a valid message. A line longer than ``max_line_bytes`` is
        reported without being read."""
        stream = self._stream(sender)
        frame = bounded(_bytes(line, "line"), self.max_line_bytes)
        stream.lines += 1
        return self._check(sender, stream.lines, frame)

    def feed(self, sender: Sender, data: bytes | bytearray | memoryview) -> list[Report]:
        """The reports of the lines completed by ``data``, the next bytes of ``sender``'s stream."""
        return list(self.reports(sender, data))

    def reports(self, sender: Sender, data: bytes | bytearray | memoryview) -> Iterator[Report]:
        """What `feed` returns, one report at a time, each line checked as the
        next report is asked for: a chunk of many failing lines (64 KiB of
        empty lines, some 30 MB of reports) is never held as a list. Exhaust
        it before feeding more."""
        stream = self._stream(sender)
        return self._reports(sender, stream, stream.splitter.feed(_bytes(data, "data")))

    def _reports(self, sender: Sender, stream: _Stream, lines: list[Line]) -> Iterator[Report]:
        for line in lines:
            stream.lines += 1
            if (report := self._check(sender, stream.lines, line)) is not None:
                yield report

    def close(self, sender: Sender) -> list[Report]:
        """``sender``'s stream ended: the report of a last line without a newline, if any."""
        stream = self._stream(sender)
        last = stream.splitter.close()
        if last is None:
            return []
        stream.lines += 1
        head, size = (last.head, last.size) if isinstance(last, OverlongLine) else (last, len(last))
        message = (
            f"Parse error: the stream ended inside a line of {size:,} bytes (no newline); "
            "forwarded, not validated"
        )
        return [make_report(sender, stream.lines, ParseError.code, message, None, None, head, size)]

    def discard(self, sender: Sender) -> None:
        """Forget the unfinished line of ``sender``'s stream (the relay stopped, not the peer)."""
        self._stream(sender).splitter.discard()

    # -- one line ---------------------------------------------------------------------

    def _stream(self, sender: object) -> _Stream:
        stream = self._streams.get(sender) if isinstance(sender, str) else None
        if stream is None:
            wrong = ValueError if isinstance(sender, str) else TypeError
            raise wrong(f"sender must be 'client' or 'server', not {sender!r:.40}")
        return stream

    def _check(self, sender: Sender, number: int, line: Line) -> Report | None:
        if isinstance(line, OverlongLine):
            message = (
                f"Parse error: a line of {line.size:,} bytes is longer than the limit of "
                f"{self.max_line_bytes:,}; forwarded, not validated"
            )
            return make_report(
                sender, number, ParseError.code, message, None, None, line.head, line.size
            )
        if (reason := not_a_message(line)) is not None:
            message = f"Parse error: {reason}"
            return make_report(sender, number, ParseError.code, message, None, None, line)
        try:
            self.correlator.decode_dict(line, sender=sender)
        except McpError as err:
            data = err.to_error_object().get("data")
            return make_report(sender, number, err.code, err.message, data, err.request_id, line)
        except Exception as exc:  # the validator's own failure must not stop the session
            message = f"Internal error: the validator failed: {type(exc).__name__}: {exc}"
            return make_report(sender, number, InternalError.code, message, None, None, line)
        return None


def _bytes(value: object, name: str) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)  # the same object when it is bytes
    if isinstance(value, memoryview):
        return cast("memoryview[int]", value).tobytes()
    raise TypeError(f"{name} must be bytes, not {type(value).__name__}")
