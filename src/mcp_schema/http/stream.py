"""What the endpoint answers an HTTP request with: a `Response` (status,
headers, and a body or a `Stream`), and the `Stream` of one POST's answer or
of a session's GET, which the endpoint fills and a server adapter drains.

A stream holds JSON-RPC frames the endpoint routed to it, at most
``max_buffer`` bytes of them not yet taken: a frame that would go beyond
(when some are already waiting) overflows the stream, which then ends, and
the endpoint treats that as the client leaving (cancellation of the request
it answers). A slow reader therefore costs the server, per stream, what
waits (at most ``max_buffer`` bytes, or one larger frame) and the chunk
an adapter is writing (what waited when it last took): an adapter that
waits for the transport to drain, as an ASGI server's ``send`` does, holds
no more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from mcp_schema.http.sse import sse_events

__all__ = ["KEEPALIVE", "MAX_BUFFER", "Response", "Stream"]

MAX_BUFFER = 1 << 20
"""Bytes of frames a stream holds for a reader that has not taken them yet."""

KEEPALIVE = b":\n\n"
"""An SSE comment: sent on an idle event stream so intermediaries keep it open."""

Media = Literal["text/event-stream", "application/json"]


class Stream:
    """The frames of one answer, in order, until the answer is complete.

    The endpoint calls `put` and `finish`; the adapter sets `on_ready`,
    calls `take` whenever it fires (and once after setting it), writes what
    it returns, and stops at `done`. When the client goes away first, the
    adapter calls `abandon`.

    ``media`` is how the adapter writes it: ``text/event-stream`` (each
    frame an SSE ``message`` event) or ``application/json`` (the final frame
    alone, as the body, once the stream is finished; a client that accepts
    only JSON gets no notifications).
    """

    # One is built for every request: slots, no dict to build with it.
    __slots__ = (
        "_final",
        "_frames",
        "_on_abandon",
        "_size",
        "abandoned",
        "answering",
        "error",
        "finished",
        "max_buffer",
        "media",
        "on_ready",
        "overflowed",
        "progress_token",
        "status",
    )

    def __init__(
        self,
        media: Media = "text/event-stream",
        *,
        max_buffer: int = MAX_BUFFER,
        on_abandon: Callable[[Stream], None] | None = None,
    ) -> None:
        self.media: Media = media
        self.max_buffer = max_buffer
        self.on_ready: Callable[[], None] | None = None
        """Called (with no argument) when frames arrive or the stream finishes."""
        self._on_abandon = on_abandon
        self._frames: list[bytes] = []  # appended and taken whole: no deque needed
        self._size = 0
        self._final: bytes | None = None
        self.finished = False
        """No frame will be added any more (the answer is complete, or the stream was cut)."""
        self.overflowed = False
        """The stream was cut: its reader did not keep up (see the module's rule)."""
        self.abandoned = False
        """The client went away before the stream was done."""
        self.progress_token: object = None
        """The progress token of the request it answers (set by the endpoint, which
        routes that token's progress here)."""
        self.answering = False
        """It carries a request's answer (set by the endpoint): the response
        alone may yet be written as a JSON body (`Endpoint.settled`)."""
        self.error: int | None = None
        """The code of its final frame, when that is an error response (set by
        the endpoint, which gives a JSON answer its status by it: `code_status`)."""
        self.status: int | None = None
        """The HTTP status its final frame's error calls for (`Frame.status`)."""

    def put(self, frame: bytes, *, final: bool = False) -> bool:
        """Add ``frame`` (``final``: the last one, which finishes the stream);
        False when the stream is finished or overflows with it."""
        if self.finished:
            return False
        if self.media == "application/json":
            if final:
                self._final = frame
                self.finish()
            return True  # a JSON answer is its final frame alone
        if self._frames and self._size + len(frame) > self.max_buffer:
            self.overflowed = True
            self._cut()
            return False
        self._frames.append(frame)
        self._size += len(frame)
        if final:
            self.finish()
        else:
            self._ready()
        return True

    def finish(self) -> None:
        """No more frames: the adapter ends the response once it has taken them."""
        if not self.finished:
            self.finished = True
            if self.on_ready is not None:  # `_ready`, at the end of every answer
                self.on_ready()

    def _ready(self) -> None:
        if self.on_ready is not None:
            self.on_ready()

    @property
    def frames(self) -> int:
        """Frames waiting to be taken."""
        return len(self._frames)

    def take_frames(self) -> list[bytes]:
        """The frames waiting (for JSON, the final one once finished); empties the buffer."""
        if self.media == "application/json":
            final, self._final = self._final, None
            return [] if final is None else [final]
        frames, self._frames = self._frames, []
        self._size = 0
        return frames

    def take(self) -> bytes:
        """What to write now: the waiting frames as SSE events, or the JSON body."""
        frames = self.take_frames()
        if self.media == "application/json":
            return b"".join(frames)
        return sse_events(frames)

    @property
    def done(self) -> bool:
        """Finished and taken: the adapter ends the response."""
        return self.finished and not self._frames and self._final is None

    def abandon(self) -> None:
        """The client closed the connection before the stream was done (the
        endpoint cancels the request it answers). Idempotent."""
        if self.abandoned or self.done:
            return
        self.abandoned = True
        self._cut()

    def _cut(self) -> None:
        """End before the answer is complete: what waits is dropped, and the
        endpoint hears of it (``on_abandon``)."""
        self._frames.clear()
        self._size = 0
        self._final = None
        self.finish()
        if self._on_abandon is not None:
            self._on_abandon(self)


@dataclass(slots=True)  # one is built for every request: no instance dict with it
class Response:
    """An HTTP response: ``status``, ``headers`` (lower-case names), and
    either ``body`` or a ``stream`` to drain (``Content-Type`` is the
    stream's ``media``)."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    stream: Stream | None = None

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (case-insensitive), if set."""
        name = name.lower()
        return next((v for k, v in self.headers if k == name), None)
