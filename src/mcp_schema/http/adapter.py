"""The ASGI kit every HTTP front door of the package is built on (`App`,
`ClusterApp`, the gateway's apps and the bridges): the one body reader, the
writing of whole and streamed responses, the disconnect watch, the
forwarding of header fields, and lifespan. A front door is an ASGI 3
application that decides what to answer (`mcp_schema.http.precheck` first)
and leaves the I/O to these.

* `read_body` reads a request body chunk by chunk: past ``limit`` bytes it
  is refused, 413, as soon as that is known; not finished within
  ``seconds`` it is refused, 408 (a slow body would hold its connection
  for ever); the timer is armed at the first wait, so a body the server
  holds already is read without one. `read_head` reads the same way but keeps going past the limit:
  a front door that passes the rest on as it comes (the gateway) gets the
  head and whether more is to come.
* `send_response` writes a whole `Response`; `send_stream` drains a
  `Stream` as it fills, with keep-alive comments on an idle event stream,
  and abandons it when the client leaves or the connection breaks.
* `end_to_end` drops the hop-by-hop fields of a header list (RFC 9110
  7.6.1: the fixed ones and those its ``Connection`` names) before it is
  forwarded, in either direction.
* `serve_lifespan` runs the ``lifespan`` scope from a startup and a
  shutdown coroutine function; a startup that raises fails the startup
  with its message, so the server says why it did not start.
"""

from __future__ import annotations

import asyncio
import sys
import time
import types
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Coroutine, Generator, MutableMapping
from typing import Any, ClassVar, Literal, overload

from mcp_schema.http.rules import refusal
from mcp_schema.http.sse import sse_event, sse_events
from mcp_schema.http.stream import KEEPALIVE, Response

__all__ = [
    "BODY_SECONDS",
    "HOP_BY_HOP",
    "KEEPALIVE_SECONDS",
    "LEAVING_SECONDS",
    "Leaving",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "end_to_end",
    "read_body",
    "read_head",
    "send_body",
    "send_response",
    "send_stream",
    "serve_lifespan",
    "sse_event",
    "sse_events",
    "start_message",
    "too_large",
    "until_disconnect",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

BODY_SECONDS = 30.0
"""Seconds a request body has to arrive whole, by default (then 408)."""

KEEPALIVE_SECONDS = 15.0
"""Seconds an event stream may stay silent before a keep-alive comment."""

LEAVING_SECONDS = 0.05
"""Seconds a request runs before `Leaving` watches for its client to leave."""

HOP_BY_HOP = frozenset(
    b"connection keep-alive proxy-connection te trailer transfer-encoding upgrade".split()
)
"""Header fields that concern one connection only (RFC 9110 7.6.1), never
forwarded; the fields a ``Connection`` header names are dropped with them."""

_MAX_CONNECTION_NAMES = 32  # fields one Connection header may name: more is no real peer's
_HIDDEN: dict[Collection[bytes], frozenset[bytes]] = {}  # `end_to_end`'s, by what callers drop
_MAX_HIDDEN = 64  # callers' constant sets: more are made on the fly, not kept


class _Deadline:
    """Cancels the task reading a body when its time is up, and remembers that
    it did: one timer for the whole body, not one per chunk."""

    __slots__ = ("_handle", "_task", "expired")

    def __init__(self, seconds: float) -> None:
        task = asyncio.current_task()
        assert task is not None  # a body is read inside a task
        self._task, self.expired = task, False
        self._handle = asyncio.get_running_loop().call_later(seconds, self._expire)

    def _expire(self) -> None:
        self.expired = True
        self._task.cancel()

    def cancel(self) -> None:
        self._handle.cancel()

    def absorbed(self) -> bool:
        """Whether a cancellation was this deadline's (then it is taken back)."""
        if self.expired and sys.version_info >= (3, 11):
            self._task.uncancel()
        return self.expired


def _timed_out(seconds: float) -> Response:
    return refusal(408, f"Request Timeout: the body did not arrive within {seconds:g} s")


def too_large(limit: int) -> Response:
    """The refusal of a body longer than ``limit`` bytes (413)."""
    return refusal(413, f"Payload Too Large: at most {limit:,} bytes")


@overload
async def _read(
    receive: Receive, limit: int, seconds: float | None, head: Literal[False]
) -> bytes | Response | None: ...


@overload
async def _read(
    receive: Receive, limit: int, seconds: float | None, head: Literal[True]
) -> tuple[bytes, bool] | Response | None: ...


async def _read(
    receive: Receive, limit: int, seconds: float | None, head: bool
) -> bytes | tuple[bytes, bool] | Response | None:
    # ``head``: `read_head`'s (the body up to the limit, and whether more is
    # to come), else `read_body`'s (refused past the limit).
    # The deadline is armed at the first wait: a body the server holds already
    # (a request that came in one segment, the common case) is read without a
    # timer; before that wait no time passed but the reader's own CPU.
    deadline: _Deadline | None = None
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            waiting = receive().__await__()
            try:
                awaited = waiting.send(None)
            except StopIteration as came:  # there without a wait
                message = came.value
            else:
                if deadline is None and seconds is not None:
                    deadline = _Deadline(seconds)
                message = await _rest(waiting, awaited)
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            more = bool(message.get("more_body", False))
            if size > limit and not head:
                return too_large(limit)
            chunks.append(chunk)
            if not more or size > limit:
                body = b"".join(chunks)
                return (body, more) if head else body
    except asyncio.CancelledError:
        if deadline is None or not deadline.absorbed():
            raise
        assert seconds is not None
        return _timed_out(seconds)
    finally:
        if deadline is not None:
            deadline.cancel()


@types.coroutine
def _rest(waiting: Generator[Any, Any, Message], awaited: Any) -> Generator[Any, Any, Message]:
    """The rest of an awaitable stepped once already (``awaited``: what it
    waits on), driven as the task would have driven it: what the task sends
    or throws in (a cancellation) goes on to it."""
    while True:
        try:
            sent = yield awaited
        except GeneratorExit:
            waiting.close()
            raise
        except BaseException as exc:  # the task's cancellation, passed on
            try:
                awaited = waiting.throw(exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
        else:
            try:
                awaited = waiting.send(sent)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]


def read_body(
    receive: Receive, limit: int, seconds: float | None = BODY_SECONDS
) -> Coroutine[Any, Any, bytes | Response | None]:
    """The whole body of a request; its refusal when it grows past ``limit``
    bytes (413) or is not finished within ``seconds`` (408; None: no
    deadline); None when the client left. (The reader's own coroutine, to
    await: no coroutine of its own around it.)"""
    return _read(receive, limit, seconds, head=False)


def read_head(
    receive: Receive, limit: int, seconds: float | None = BODY_SECONDS
) -> Coroutine[Any, Any, tuple[bytes, bool] | Response | None]:
    """The body, or, when it grows past ``limit`` bytes, what came up to then
    and True (more is to come: the caller reads the rest from ``receive``);
    408 when it does not come within ``seconds``; None when the client left
    (a coroutine to await, as `read_body`'s)."""
    return _read(receive, limit, seconds, head=True)


def start_message(status: int, headers: list[tuple[bytes, bytes]]) -> Message:
    """The ``http.response.start`` message of ``status`` and ``headers``."""
    return {"type": "http.response.start", "status": status, "headers": headers}


def _encoded(response: Response) -> list[tuple[bytes, bytes]]:
    encoded = []  # a loop, not a comprehension: on 3.11 that is one call more per response
    for name, value in response.headers:
        encoded.append((name.encode("latin-1"), value.encode("latin-1")))
    return encoded


async def send_body(send: Send, body: bytes, more: bool = False) -> None:
    """One ``http.response.body`` message."""
    await send({"type": "http.response.body", "body": body, "more_body": more})


async def send_response(send: Send, response: Response) -> None:
    """``response`` whole (its body; a stream is `send_stream`'s), with its length."""
    headers = _encoded(response)
    headers.append((b"content-length", b"%d" % len(response.body)))
    # The two messages written here, not by `start_message` and `send_body`:
    # every whole response takes this path, and each helper is a call more.
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body, "more_body": False})


async def until_disconnect(receive: Receive) -> None:
    """Return once the client has left (``http.disconnect``); what else
    comes (a body already read to its end) is dropped."""
    while (await receive())["type"] != "http.disconnect":
        pass


class Leaving:
    """Cancels the request's task when its client leaves (a task of its own
    watches ``receive`` for ``http.disconnect``, once the body was read), and
    remembers that it did: `absorbed` tells a cancellation of its own, `stop`
    ends the watch. One task per request, not two and an ``asyncio.wait``,
    and only for a request still going after ``after`` seconds: most are
    answered before (a client that leaves sooner is seen at most that late).
    Nor a timer per request (a timer and its cancelling cost a tenth of a
    task): the requests of one event loop (and one ``after``) wait in one
    queue, oldest first, behind one timer, due at the oldest's time, which
    starts the watch of each request still going whose time came."""

    __slots__ = ("_due", "_queue", "_receive", "_task", "_watch", "left", "over")

    _queues: ClassVar[
        weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, deque[Leaving]]]
    ] = weakref.WeakKeyDictionary()
    """Per event loop, by ``after``: the requests whose watch is still to start,
    oldest first (the loop's alone: a closed loop is not kept for them)."""
    _last: ClassVar[tuple[Callable[[], object], dict[float, deque[Leaving]]]]
    _last = (lambda: None, {})
    """The loop (a weak reference) whose `_queues` served last, and those queues:
    the look-up a request makes, a tenth of the weak dictionary's. Read as one
    tuple: a thread whose loop is not the last one's takes the slow way."""

    def __init__(self, receive: Receive, after: float = LEAVING_SECONDS) -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None  # an ASGI request runs in a task
        self._task, self._receive, self.left, self.over = task, receive, False, False
        self._watch: asyncio.Future[None] | None = None
        self._due = loop.time() + after
        last = Leaving._last
        if last[0]() is loop:
            queues = last[1]
        else:
            queues = Leaving._queues.setdefault(loop, {})
            Leaving._last = (weakref.ref(loop), queues)
        queue = queues.get(after)
        if queue is None:  # none waits: the timer is armed for this one
            queue = queues[after] = deque()
            loop.call_at(self._due, Leaving._started, loop, queues, after)
        queue.append(self)
        self._queue = queue

    @staticmethod
    def _started(
        loop: asyncio.AbstractEventLoop, queues: dict[float, deque[Leaving]], after: float
    ) -> None:
        """The timer: the watch of each request whose time came, then the timer
        again for the next one still going (none: the queue is dropped)."""
        queue = queues[after]
        now = loop.time()
        while queue:
            first = queue[0]
            if not first.over:
                if first._due > now:
                    loop.call_at(first._due, Leaving._started, loop, queues, after)
                    return
                first._watching()
            queue.popleft()
        del queues[after]

    def _watching(self) -> None:
        self._watch = asyncio.ensure_future(until_disconnect(self._receive))
        self._watch.add_done_callback(self._done)

    def _done(self, watch: asyncio.Future[None]) -> None:
        if not self.over and not watch.cancelled() and watch.exception() is None:
            self.left = True
            self._task.cancel()

    def absorbed(self) -> bool:
        """Whether a cancellation was the client's leaving (then it is taken back)."""
        if self.left and sys.version_info >= (3, 11):
            self._task.uncancel()
        return self.left

    def stop(self) -> None:
        self.over = True
        if self._watch is not None:
            self._watch.cancel()
        # The requests over at the queue's head leave it now, not at the timer:
        # what is left holds no task of a loop that closes.
        queue = self._queue
        while queue and queue[0].over:
            queue.popleft()


async def send_stream(
    response: Response,
    receive: Receive,
    send: Send,
    keepalive: float = KEEPALIVE_SECONDS,
    ends_at: float | None = None,
) -> None:
    """``response``'s stream, written as it fills: each wake-up sends what
    waits, in one chunk; an event stream idle for ``keepalive`` seconds gets
    an SSE comment. The client leaving, the connection breaking under a
    send, or ``ends_at`` passing (seconds since the epoch: when the token
    the request came with expires) abandons the stream (`Stream.abandon`:
    its request is cancelled, a listen ends)."""
    stream = response.stream
    assert stream is not None
    ready = asyncio.Event()
    stream.on_ready = ready.set
    left = asyncio.ensure_future(until_disconnect(receive))
    try:
        await send(start_message(response.status, _encoded(response)))
        while True:
            ready.clear()
            chunk = stream.take()
            if chunk:
                await send_body(send, chunk, more=True)
            if stream.done:
                break
            if ready.is_set():
                continue  # more came while that was sent
            wait = keepalive if ends_at is None else min(keepalive, ends_at - time.time())
            if wait <= 0:  # the token expired: the client must come back with another
                stream.abandon()
                break
            woken = asyncio.ensure_future(ready.wait())
            finished, _ = await asyncio.wait(
                {woken, left}, timeout=wait, return_when=asyncio.FIRST_COMPLETED
            )
            woken.cancel()
            if left in finished:
                stream.abandon()
                return
            if not finished and wait < keepalive:
                continue  # woken for the token's expiry, not for a keep-alive
            if not finished and stream.media == "text/event-stream":
                await send_body(send, KEEPALIVE, more=True)
        await send_body(send, b"")
    except OSError:  # the connection broke under a send
        stream.abandon()
    finally:
        stream.on_ready = None
        left.cancel()


def end_to_end(
    headers: list[tuple[bytes, bytes]], dropped: Collection[bytes] = ()
) -> list[tuple[bytes, bytes]]:
    """``headers`` (lower-case names, as ASGI gives them) without the
    hop-by-hop fields, those a ``Connection`` header names, and ``dropped``."""
    try:  # the few constant sets callers drop: each union made once
        hidden = _HIDDEN[dropped]
    except (KeyError, TypeError):  # new, or unhashable (a set)
        hidden = HOP_BY_HOP.union(dropped)
        if len(_HIDDEN) < _MAX_HIDDEN and isinstance(dropped, (frozenset, tuple)):
            _HIDDEN[dropped] = hidden
    # One pass, one look-up per field (a comprehension and a loop cost twice as
    # much); a Connection header is hidden itself, and what it names goes after.
    kept = []
    connection: list[bytes] | None = None
    for pair in headers:
        if pair[0] not in hidden:
            kept.append(pair)
        elif pair[0] == b"connection":
            connection = [pair[1]] if connection is None else [*connection, pair[1]]
    if connection is None:
        return kept
    named: set[bytes] = set()
    for value in connection:
        named.update(part.strip().lower() for part in value.split(b",")[:_MAX_CONNECTION_NAMES])
    return [pair for pair in kept if pair[0] not in named]


async def serve_lifespan(
    receive: Receive,
    send: Send,
    startup: Callable[[], Awaitable[None]] | None = None,
    shutdown: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """The ``lifespan`` scope: ``startup`` at its start (one that raises fails
    the startup, saying why), ``shutdown`` at its end."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            if startup is not None:
                try:
                    await startup()
                except Exception as exc:  # the server reports it and does not start
                    reason = (str(exc) or type(exc).__name__)[:1000]
                    await send({"type": "lifespan.startup.failed", "message": reason})
                    return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if shutdown is not None:
                await shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return
