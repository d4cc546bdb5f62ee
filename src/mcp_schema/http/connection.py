"""`Connection`: one HTTP/1.1 connection of `mcp_schema.http.pool.HttpClient`
(an asyncio protocol): it feeds what arrives to its answer's parser
(`mcp_schema.http.h1.ResponseParser`) and wakes the reader once per read,
bounds each wait (`Connection.wait`), stops reading while a slow reader
has pieces waiting, and writes a request's head and body in one write.

A wait's bound is one timer per connection, not one per wait: it stays armed
across waits and, when it fires before the wait then going on is due, is
armed again for that wait's due time (most waits end long before theirs)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Callable

from mcp_schema.http.h1 import (
    ResponseParser,
    UpstreamError,
    UpstreamProtocolError,
    UpstreamTimeout,
)

__all__ = ["Body", "Connection"]

Body = bytes | AsyncIterable[bytes]
_PAUSE_AT = 32  # buffered body pieces of a stream read slower than it comes: stop reading


class Connection(asyncio.Protocol):
    """One connection to ``origin``: its answer's parser while a request is
    on it (`mcp_schema.http.h1.ResponseParser`), the reader's waiter, and
    what ended it; ``on_lost``: told when it closes while idle; ``loop``: the
    event loop it runs on (kept: each wait asks it the time and for a future)."""

    __slots__ = (
        "closed",
        "counted",
        "drained",
        "due",
        "error",
        "idle_since",
        "loop",
        "on_lost",
        "origin",
        "parser",
        "paused",
        "timer",
        "transport",
        "waiter",
    )

    def __init__(
        self,
        origin: tuple[str, str, int],
        on_lost: Callable[[Connection], None],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.origin, self.on_lost, self.loop = origin, on_lost, loop
        self.counted = True
        """Whether the pool still counts it (it is discarded once)."""
        self.transport: asyncio.Transport | None = None
        self.parser: ResponseParser | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        """The bound of the waits (see the module): armed at or before ``due``."""
        self.due: tuple[float, float | None] | None = None
        """The loop's time the wait going on ends at, and its seconds (None: no wait bounded)."""
        self.drained: asyncio.Future[None] | None = None
        self.error: UpstreamError | None = None
        self.closed = self.paused = False
        self.idle_since = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        parser = self.parser
        if parser is None:  # bytes while idle: the server said something (a 408?), or garbage
            self.error = UpstreamProtocolError("the upstream sent bytes on an idle connection")
            self.close()
            return
        try:
            parser.feed(data)
        except UpstreamError as exc:
            self.error = exc
            self.close()
        if len(parser.body) > _PAUSE_AT and not self.paused and self.transport is not None:
            self.transport.pause_reading()
            self.paused = True
        self.wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        parser = self.parser
        if parser is None:
            self.on_lost(self)
        elif self.error is None:
            try:
                parser.eof()
            except UpstreamError as error:
                self.error = error
        self.wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def pause_writing(self) -> None:
        self.drained = self.loop.create_future()

    def resume_writing(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        self.drained = None

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None:
            self.waiter = self.due = None
            if not waiter.done():
                waiter.set_result(None)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def resume(self) -> None:
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()

    def wait(self, seconds: float | None, deadline: float | None = None) -> asyncio.Future[None]:
        """What the reader awaits until the next bytes (or the end) came (a
        future, not a coroutine: one frame less per read); `UpstreamTimeout`
        after ``seconds``, or at the loop's time ``deadline``."""
        self.resume()
        loop = self.loop
        waiter = self.waiter = loop.create_future()
        if deadline is None and seconds is not None:
            deadline = loop.time() + seconds
        self.due = None if deadline is None else (deadline, seconds)
        if deadline is not None:
            timer = self.timer
            if timer is None or timer.when() > deadline:
                if timer is not None:
                    timer.cancel()
                self.timer = loop.call_at(deadline, self._expire, deadline)
        return waiter

    def _expire(self, armed: float) -> None:
        """The timer armed for ``armed`` fired: the wait going on fails when it
        was due then, else the timer is armed again for it (an idle
        connection's is left unarmed)."""
        self.timer = None
        due, waiter = self.due, self.waiter
        if due is None or waiter is None or waiter.done():
            return
        if armed < due[0]:
            self.timer = self.loop.call_at(due[0], self._expire, due[0])
            return
        self.waiter = self.due = None
        waiter.set_exception(UpstreamTimeout(f"the upstream did not answer in {due[1] or 0:g} s"))

    def write(self, head: bytes, body: bytes) -> None:
        """The request: ``head`` and its whole ``body``, in one write."""
        transport = self.transport
        assert transport is not None
        transport.write(head + body if body else head)

    async def stream(self, head: bytes, body: AsyncIterable[bytes]) -> None:
        """The request: ``head``, then the body's chunks as they come
        (chunked), until the answer starts (a whole body is `write`'s)."""
        transport = self.transport
        assert transport is not None
        transport.write(head)
        async for chunk in body:
            if self.closed or (self.parser is not None and self.parser.head_done):
                return  # answered (or gone) before the body's end: the rest is not wanted
            if chunk:
                transport.write(b"%x\r\n%b\r\n" % (len(chunk), chunk))
            if self.drained is not None:
                await self.drained
        if not self.closed:
            transport.write(b"0\r\n\r\n")
