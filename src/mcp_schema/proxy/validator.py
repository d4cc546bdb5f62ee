"""The `Validator`: the lines of one stdio connection, both ways, checked by
one `Correlator`, each failing line a `Report`."""

from __future__ import annotations

from collections.abc import Collection
from typing import cast

from mcp_schema.codec import Correlator, Sender
from mcp_schema.errors import InternalError, McpError, ParseError
from mcp_schema.proxy.reports import EXCERPT_BYTES, Report, make_report

MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line (without its newline) that is held and validated; longer ones
are forwarded in chunks and reported (the default of ``--max-line-bytes``)."""


class _Stream:
    """One direction of the connection: the line being assembled and the count."""

    __slots__ = ("buffer", "head", "lines", "skipped")

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.skipped: int | None = None  # bytes so far of an over-long line, not held
        self.head = b""  # the first bytes of that line
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
        self.max_line_bytes = _positive(max_line_bytes, "max_line_bytes")
        self.correlator = Correlator(
            version=version, extensions=extensions, allow_unknown_methods=True
        )
        self._streams = {"client": _Stream(), "server": _Stream()}

    def check(self, sender: Sender, line: bytes | bytearray | memoryview) -> Report | None:
        """The report of one line ``sender`` sent (without its newline), or None
        when it is a valid message. A line longer than ``max_line_bytes`` is
        reported without being read."""
        stream = self._stream(sender)
        frame = _bytes(line, "line")
        stream.lines += 1
        return self._check(sender, stream.lines, frame)

    def feed(self, sender: Sender, data: bytes | bytearray | memoryview) -> list[Report]:
        """The reports of the lines completed by ``data``, the next bytes of ``sender``'s stream."""
        stream = self._stream(sender)
        chunk = _bytes(data, "data")
        reports: list[Report] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            stream.lines += 1
            if stream.skipped is not None:
                reports.append(self._overlong(sender, stream, stream.skipped + end - start))
            elif stream.buffer:
                stream.buffer += memoryview(chunk)[start:end]
                line = bytes(stream.buffer)
                stream.buffer = bytearray()
                _add(reports, self._check(sender, stream.lines, line))
            else:
                _add(reports, self._check(sender, stream.lines, chunk[start:end]))
            start = end + 1
        if start < len(chunk):
            if stream.skipped is not None:
                stream.skipped += len(chunk) - start
            else:
                stream.buffer += memoryview(chunk)[start:]
                if len(stream.buffer) > self.max_line_bytes:  # never held whole
                    stream.head = bytes(stream.buffer[:EXCERPT_BYTES])
                    stream.skipped = len(stream.buffer)
                    stream.buffer = bytearray()
        return reports

    def close(self, sender: Sender) -> list[Report]:
        """``sender``'s stream ended: the report of a last line without a newline, if any."""
        stream = self._stream(sender)
        size = stream.skipped if stream.skipped is not None else len(stream.buffer)
        if not size:
            return []
        head = stream.head if stream.skipped is not None else bytes(stream.buffer)
        stream.lines += 1
        stream.buffer, stream.skipped, stream.head = bytearray(), None, b""
        message = (
            f"Parse error: the stream ended inside a line of {size:,} bytes (no newline); "
            "forwarded, not validated"
        )
        return [make_report(sender, stream.lines, ParseError.code, message, None, None, head, size)]

    def discard(self, sender: Sender) -> None:
        """Forget the unfinished line of ``sender``'s stream (the relay stopped, not the peer)."""
        stream = self._stream(sender)
        stream.buffer, stream.skipped, stream.head = bytearray(), None, b""

    # -- one line ---------------------------------------------------------------------

    def _stream(self, sender: object) -> _Stream:
        stream = self._streams.get(sender) if isinstance(sender, str) else None
        if stream is None:
            wrong = ValueError if isinstance(sender, str) else TypeError
            raise wrong(f"sender must be 'client' or 'server', not {sender!r:.40}")
        return stream

    def _check(self, sender: Sender, number: int, line: bytes) -> Report | None:
        if len(line) > self.max_line_bytes:
            return self._overlong_line(sender, number, line)
        if not line or line.isspace():
            what = "an empty line" if not line else "a blank line"
            message = f"Parse error: {what} is not a message"
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

    def _overlong(self, sender: Sender, stream: _Stream, size: int) -> Report:
        head, stream.skipped, stream.head = stream.head, None, b""
        return self._overlong_line(sender, stream.lines, head, size)

    def _overlong_line(
        self, sender: Sender, number: int, head: bytes, size: int | None = None
    ) -> Report:
        size = len(head) if size is None else size
        message = (
            f"Parse error: a line of {size:,} bytes is longer than the limit of "
            f"{self.max_line_bytes:,}; forwarded, not validated"
        )
        return make_report(sender, number, ParseError.code, message, None, None, head, size)


def _add(reports: list[Report], report: Report | None) -> None:
    if report is not None:
        reports.append(report)


def _positive(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be positive, not {value}")
    return value


def _bytes(value: object, name: str) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)  # the same object when it is bytes
    if isinstance(value, memoryview):
        return cast("memoryview[int]", value).tobytes()
    raise TypeError(f"{name} must be bytes, not {type(value).__name__}")
