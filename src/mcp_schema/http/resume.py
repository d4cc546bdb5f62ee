"""Resumable event streams of handshake-era sessions (2025-11-25
[Resumability and Redelivery](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery)),
on when an `mcp_schema.http.Endpoint` is given ``replay`` (events kept per
stream).

Every event stream of a session (a request's answer, the GET stream) is a
`ResumableStream`, numbered in the session (`Replays`). Its events carry
ids ``{stream}-{event}``, unique in the session, which name the stream they
belong to; the first is a priming event (an id and empty data, as the
transports page asks), so a client can resume a stream it got nothing on
yet. The last ``replay`` events written are kept.

A client that goes away does not cancel (the page: disconnection SHOULD
NOT be taken for cancellation); the stream waits, detached, collecting
what is routed to it, at most ``max_buffer`` bytes (beyond, it is cut, and
that is cancellation, as for an attached stream). A GET with
``Last-Event-ID`` resumes it: the events after that one that are still
kept, then what waited, then the rest, on that stream and no other. An id
the session cannot resume from (unknown, malformed, or older than the
events kept) is refused with 400, one whose stream is still being written
to another connection with 409. At most ``max_streams`` streams per
session are kept; the oldest goes first.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Callable

from mcp_schema.http.rules import refusal
from mcp_schema.http.sse import sse_event
from mcp_schema.http.stream import Response, Stream

__all__ = ["MAX_STREAMS", "Replays", "ResumableStream"]

MAX_STREAMS = 64
"""Resumable streams a session keeps by default."""

_EVENT_ID = re.compile(r"(\d{1,12})-(\d{1,12})")


class ResumableStream(Stream):
    """An event stream whose events have ids and whose last ``replay`` are
    kept (see the module); ``number`` names it in its session."""

    def __init__(
        self,
        number: int,
        replay: int,
        *,
        max_buffer: int,
        on_abandon: Callable[[Stream], None] | None,
    ) -> None:
        super().__init__(max_buffer=max_buffer, on_abandon=on_abandon)
        self.number = number
        self._written = 0  # events written (the priming one is event 0)
        self._primed = False
        self._kept: deque[tuple[int, bytes]] = deque(maxlen=replay)
        self._again: list[tuple[int, bytes]] = []  # kept events to write again
        self.detached = False
        """Its client went away; it waits to be resumed."""

    def _event(self, seq: int, frame: bytes) -> bytes:
        return sse_event(frame, b"%d-%d" % (self.number, seq))

    def take(self) -> bytes:
        again, self._again = self._again, []
        chunks = [self._event(seq, frame) for seq, frame in again]
        if not self._primed:
            self._primed = True
            chunks.insert(0, b"id: %d-0\ndata: \n\n" % self.number)
        for frame in self.take_frames():
            self._written += 1
            self._kept.append((self._written, frame))
            chunks.append(self._event(self._written, frame))
        return b"".join(chunks)

    @property
    def done(self) -> bool:
        return super().done and not self._again

    def abandon(self) -> None:
        """The client went away: the stream waits to be resumed (cut only when
        what waits outgrows ``max_buffer``). Idempotent."""
        if not self.done and not self.overflowed:
            self.detached = True

    def resume(self, after: int) -> bool:
        """Attach again, after event ``after``: whether the events since are
        all still kept (else nothing changes)."""
        if after > self._written or self.overflowed:
            return False
        missed = [(seq, frame) for seq, frame in self._kept if seq > after]
        if len(missed) != self._written - after:
            return False  # some were dropped from what is kept
        self._again = missed
        self.detached = False
        return True


class Replays:
    """The resumable streams of one session, by number."""

    def __init__(self, replay: int, max_streams: int = MAX_STREAMS) -> None:
        self.replay = replay
        self.max_streams = max_streams
        self._next = 0
        self._streams: OrderedDict[int, ResumableStream] = OrderedDict()

    def open(self, max_buffer: int, on_abandon: Callable[[Stream], None] | None) -> ResumableStream:
        """A new stream of the session."""
        for number, kept in list(self._streams.items()):
            if kept.overflowed or (kept.done and not kept.detached):
                del self._streams[number]  # delivered, or cut: nothing to resume
        stream = ResumableStream(
            self._next, self.replay, max_buffer=max_buffer, on_abandon=on_abandon
        )
        self._streams[self._next] = stream
        self._next += 1
        while len(self._streams) > self.max_streams:
            self._streams.popitem(last=False)
        return stream

    def get(self, number: int) -> ResumableStream | None:
        """Stream ``number``, while it is kept."""
        return self._streams.get(number)

    def resume(self, last_event_id: str) -> ResumableStream | Response:
        """The stream ``last_event_id`` names, attached again after it, or the refusal."""
        found = _EVENT_ID.fullmatch(last_event_id)
        stream = None if found is None else self._streams.get(int(found[1]))
        if stream is not None and not stream.detached and not stream.done:
            return refusal(409, "Conflict: that stream is still open")
        if found is None or stream is None or stream.done or not stream.resume(int(found[2])):
            return refusal(400, "Bad Request: no stream to resume from that Last-Event-ID")
        return stream
