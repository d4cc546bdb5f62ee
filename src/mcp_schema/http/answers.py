"""The endpoint's handlers, and the answers that come after a handler
returns (hand-written runtime module).

A handler is ``handler(session, event)``, called for every event in order.
A plain function answers through the session, now or later (from a
callback, a task it starts, or, in a handshake-era session, once the
client's answer to ``session.ask`` arrives on another POST). An ``async
def`` handler's coroutine becomes an asyncio task of the running loop, kept
here: what it raises answers its request -32603, and the endpoint cancels it
when its request's stream is lost, when the bound on the answer passes, and
at `Answers.close`.

A request whose handler returned without answering it keeps its stream
open until the session answers (`Answers.hold`), in both eras, for at most
``answer_seconds``: then it is answered -32603 with its id, its handler's
task is cancelled, the handler hears a `CancelRequested`, and a log line
names the method, the tool and the id. A stateless-era request's session
(built for it alone) is kept meanwhile; at most ``max_waiting`` such
requests wait at once, at most ``max_waiting_per_key`` of them per caller
(`mcp_schema.shares`), and one more is answered at once with the share's
refusal, -31429, which the endpoint sends as 429 (an async handler's
coroutine is then closed before it ran). What the session queues
outside the endpoint's own calls is routed as it comes (`LiveSession`'s
``on_ready`` hook), on the loop's next turn.

The bound is kept by the running asyncio loop. `Endpoint.handle` called
where none runs cannot keep it: a stateless-era request left unanswered is
then answered -32603 at once (nothing could answer it later), a
handshake-era one waits as its stream does, and an async handler's request
is refused -32603 (its coroutine closed: nothing could run it).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_schema.errors import InternalError, McpError, quote
from mcp_schema.http.routing import SERVING, route
from mcp_schema.http.sessions import LiveSession, stream_key
from mcp_schema.http.stream import Stream
from mcp_schema.session import (
    CancelRequested,
    Event,
    Frame,
    InputReceived,
    RequestReceived,
    ServerSession,
    SessionError,
)
from mcp_schema.shares import Share, ShareExceededError
from mcp_schema.tasks.server import TaskServer

__all__ = ["ANSWER_SECONDS", "MAX_WAITING", "WAITING", "Answers", "Awaited", "described"]

ANSWER_SECONDS = 300.0
"""How long a request's answer is awaited by default: past a tool's long
call, well within what a client waits (the official SDKs' clients give a
request 60 s by default and reset it on progress; a server that sends
progress keeps its stream alive, and intermediaries see its keep-alives)."""

MAX_WAITING = 1000
"""Stateless-era requests whose answer is awaited at once, by default (as
many as one session keeps in flight, `mcp_schema.session.MAX_PENDING`)."""

Handler = Callable[[ServerSession, Event], Any]

WAITING = "requests awaiting their answer"
"""The name of the share of stateless-era requests awaited (`Answers.share`)."""

_LOG = logging.getLogger("mcp_schema.http")
_CANCELLED_BY_CLOSE = "the client closed the request's stream"
_PROGRESS = "notifications/progress"


def described(request: RequestReceived) -> str:
    """``request`` as a log line names it: its method, the tool it calls, its id."""
    params = getattr(request.message, "params", None)
    tool = getattr(params, "name", None) if request.method == "tools/call" else None
    called = "" if tool is None else f" of tool {quote(tool)}"
    return f"{request.method}{called} (request id {quote(request.id)})"


class Awaited:
    """A request whose answer is awaited past its handler's return: the timer
    of its bound, its handler's task, and the table counting it (stateless
    era: its set, and the share of its caller)."""

    __slots__ = ("counted", "held", "live", "request", "share", "task", "timer")

    def __init__(
        self,
        live: LiveSession,
        request: RequestReceived,
        held: set[Awaited] | None,
        share: Share | None = None,
    ) -> None:
        self.live, self.request, self.held, self.share = live, request, held, share
        self.task: asyncio.Task[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.counted = False
        if held is not None:
            held.add(self)
            # Room was looked for before (`Answers.hold`, `Answers._start`).
            self.counted = share is not None and share.acquire(live.owner)

    def end(self, *, cancel: bool = False) -> None:
        """The answer came, or will never come (``cancel``: its task too)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.held is not None:
            self.held.discard(self)
        if self.counted and self.share is not None:
            self.counted = False
            self.share.release(self.live.owner)
        if cancel and self.task is not None:
            self.task.cancel()


class Answers:
    """The handler of an endpoint and its requests answered later (see the module)."""

    late: type[InternalError] = InternalError
    """What a request whose answer did not come within ``answer_seconds`` is
    answered: -32603, its type naming the HTTP status (`Posts.late`)."""

    def __init__(
        self,
        handler: Handler,
        *,
        tasks: TaskServer | None,
        answer_seconds: float = ANSWER_SECONDS,
        waiting: Share | None = None,
    ) -> None:
        self.handler = handler
        self.tasks = tasks
        self.answer_seconds = answer_seconds
        self.share = Share(WAITING, total=MAX_WAITING) if waiting is None else waiting
        """The bound on stateless-era requests awaited, per caller and in all."""
        self._held: set[Awaited] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def waiting(self) -> int:
        """Stateless-era requests whose answer is awaited."""
        return len(self._held)

    # -- running the handler -------------------------------------------------------------

    def run(self, live: LiveSession, event: Event) -> None:
        """``event`` to the handler, then what it queued to its streams."""
        request: RequestReceived | None = None  # the request ``event`` belongs to
        if isinstance(event, RequestReceived):
            request = event
        elif isinstance(event, (InputReceived, CancelRequested)):
            request = event.request
        key = None if request is None else stream_key(request.id)
        was, live.holding = live.holding, True
        token = None if request is None else SERVING.set((live, request.id))
        try:
            result = self.handler(live.server, event)
            if result is not None and inspect.isawaitable(result):
                self._start(live, event, request, result)
        except Exception as exc:  # the handler's fault: its request is answered -32603
            self._failed(live, event, request, exc)
        finally:
            if token is not None:
                SERVING.reset(token)
            live.holding = was
        frames = live.server.frames_to_send()
        if frames or live.outbox:  # nothing to route after most events but a request
            route(live, frames, key)

    def _failed(
        self, live: LiveSession, event: Event, request: RequestReceived | None, exc: Exception
    ) -> None:
        if not isinstance(exc, McpError):
            where = type(event).__name__ if request is None else described(request)
            _LOG.error("the handler failed on %s", where, exc_info=exc)
            exc = InternalError("Internal error")
        if request is not None and not isinstance(event, CancelRequested):
            try:
                live.server.fail(request, exc)
            except SessionError:
                pass  # answered already

    def _start(
        self,
        live: LiveSession,
        event: Event,
        request: RequestReceived | None,
        awaitable: Awaitable[Any],
    ) -> None:
        """An async handler's ``awaitable`` as a task of the running loop."""
        answering = request is not None and not isinstance(event, CancelRequested)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            _close(awaitable)
            where = type(event).__name__ if request is None else described(request)
            _LOG.error("an async handler on %s needs a running event loop", where)
            raise InternalError(
                "Internal error: an async handler is served by Endpoint.handle_async (App)"
            ) from None
        if answering and live.id is None and not self.share.room(live.owner):
            _close(awaitable)
            raise self._busy(live)
        task = loop.create_task(self._served(live, event, request, awaitable))
        self._tasks.add(task)
        task.add_done_callback(functools.partial(_forget, self._tasks, awaitable))
        if answering:
            assert request is not None
            self._awaited(live, request).task = task

    async def _served(
        self,
        live: LiveSession,
        event: Event,
        request: RequestReceived | None,
        awaitable: Awaitable[Any],
    ) -> None:
        try:
            await awaitable
            if self.tasks is not None and live.server.has_pending_tasks:
                await self.tasks.flush(live.server, live.owner)  # stored, then answered
        except Exception as exc:  # a cancellation is no Exception: whoever cancelled tells
            self._failed(live, event, request, exc)
        route(
            live, live.server.frames_to_send(), None if request is None else stream_key(request.id)
        )

    def _busy(self, live: LiveSession) -> ShareExceededError:
        _LOG.warning(
            "%d stateless-era requests await their answers: one more refused", self.waiting
        )
        return self.share.refused(live.owner)

    # -- answers that come later ---------------------------------------------------------

    def _awaited(self, live: LiveSession, request: RequestReceived) -> Awaited:
        key = stream_key(request.id)
        waiting = live.awaited.get(key)
        if waiting is None or waiting.request is not request:
            stateless = live.id is None
            waiting = live.awaited[key] = Awaited(
                live, request, self._held if stateless else None, self.share if stateless else None
            )
        return waiting

    def hold(self, live: LiveSession, request: RequestReceived) -> None:
        """``request``'s handler returned and its stream is still open: wait
        for its answer, within the bound (see the module)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            if live.id is None:  # nothing could answer it later, nothing times the wait
                _LOG.warning("the handler did not answer %s", described(request))
                self._answer(live, request, InternalError("the handler did not answer"))
            return
        key = stream_key(request.id)
        waiting = live.awaited.get(key)
        if waiting is None or waiting.request is not request:
            if live.id is None and not self.share.room(live.owner):
                return self._answer(live, request, self._busy(live))
            waiting = self._awaited(live, request)
        waiting.timer = loop.call_later(self.answer_seconds, self._expire, live, request)
        if live.id is None:
            self.watch(live)

    def _answer(self, live: LiveSession, request: RequestReceived, error: McpError) -> None:
        try:
            live.server.fail(request, error)
        except SessionError:
            return  # answered already
        route(live, live.server.frames_to_send(), stream_key(request.id))

    def _expire(self, live: LiveSession, request: RequestReceived) -> None:
        seconds = f"{self.answer_seconds:g}"
        _LOG.warning("no answer to %s within %s s: answered -32603", described(request), seconds)
        error = self.late(f"{self.late.default_message}: no answer within {seconds} s")
        self.end(live, request, f"not answered within {seconds} s", error)

    def end(
        self,
        live: LiveSession,
        request: RequestReceived,
        reason: str,
        error: McpError | None = None,
    ) -> None:
        """``request`` is over unanswered (``error``: answered that): its task
        cancelled, the session told (`ServerSession.cancel_received`), the
        handler too (a `CancelRequested`)."""
        key = stream_key(request.id)
        waiting = live.awaited.get(key)
        if waiting is not None and waiting.request is request:
            del live.awaited[key]
            waiting.end(cancel=True)
        for event in live.server.cancel_received(request, reason, answer=error):
            self.run(live, event)
        route(live, live.server.frames_to_send(), key)

    def gone(self, live: LiveSession, request: RequestReceived) -> Callable[[Stream], None]:
        """What the stream of ``request``'s answer calls when it is lost (the
        client left, or its reader fell behind): cancellation of ``request``."""

        def gone(stream: Stream) -> None:
            key = stream_key(request.id)
            if live.streams.get(key) is not stream or live.closed:
                return  # answered already, or the session is over
            del live.streams[key]
            self.end(live, request, _CANCELLED_BY_CLOSE)

        return gone

    # -- what the session queues outside the endpoint's calls ---------------------------

    def watch(self, live: LiveSession) -> None:
        """Route what ``live``'s session queues outside the endpoint's own
        calls (a callback's answer, a task's progress) as it comes: taken at
        once, routed on the loop's next turn (where no session call is under
        way), or at once where no loop runs."""
        due: list[bool] = [False]

        def flush() -> None:
            due[0] = False
            if not live.closed:
                route(live, [])

        def ready() -> None:
            if live.holding:
                return  # the endpoint routes it when it is done
            live.outbox += _related(live, live.server.frames_to_send())
            if due[0]:
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return flush()
            due[0] = True
            loop.call_soon(flush)

        live.server.on_ready = ready

    # -- shutting down -------------------------------------------------------------------

    def close(self) -> None:
        """Answer every stateless-era request still waiting -32603, and cancel
        every handler's task."""
        for waiting in list(self._held):
            error = InternalError("Internal error: the server is shutting down")
            self.end(waiting.live, waiting.request, "the server is shutting down", error)
        for task in list(self._tasks):
            task.cancel()

    async def aclose(self) -> None:
        """`close`, then wait for the handlers' tasks to end."""
        running = list(self._tasks)
        self.close()
        await asyncio.gather(*running, return_exceptions=True)


def _related(live: LiveSession, frames: list[Frame]) -> list[Frame]:
    """``frames`` taken outside the endpoint's calls, each that belongs to no
    known request given the one being served where they were sent (`SERVING`),
    so that they go where they would have gone from the handler itself."""
    serving = SERVING.get()
    if serving is None or serving[0] is not live:
        return frames
    rid = serving[1]
    return [
        frame._replace(related=rid)
        if frame.related is None
        and frame.method is not None
        and not (frame.method == _PROGRESS and frame.progress_token is not None)
        else frame
        for frame in frames
    ]


def _forget(
    tasks: set[asyncio.Task[None]], awaitable: Awaitable[Any], task: asyncio.Task[None]
) -> None:
    tasks.discard(task)
    if task.cancelled():  # perhaps before it started: its coroutine never ran
        _close(awaitable)


def _close(awaitable: Awaitable[Any]) -> None:
    """A coroutine that will not run, closed (no "never awaited" warning)."""
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
