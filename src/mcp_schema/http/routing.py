"""Where each frame a session queued goes, on Streamable HTTP: decided by
its envelope (`mcp_schema.session.Frame`), never by reading it again.

* A response goes to the stream of the request it answers, which it ends.
* A frame that belongs to a request (``related``: an ``ask``'s requests,
  a log message or progress sent for it) goes to that request's stream;
  a progress notification the author sent without one, to the stream of
  the request whose progress token it carries.
* Anything else goes to the stream of the request being served when it
  was sent: the one whose handler the endpoint was running, or (`SERVING`)
  whose handler started the task or the callback that sent it.
* What finds no open event stream there goes to the session's GET stream
  (``listener``), and is dropped when none is open. A stream that
  overflows is cancellation of its request (``Stream.on_abandon``).
"""

from __future__ import annotations

from contextvars import ContextVar

from mcp_schema.http.sessions import LiveSession, StreamKey, stream_key
from mcp_schema.http.stream import Stream
from mcp_schema.session import Frame

__all__ = ["SERVING", "route"]

SERVING: ContextVar[tuple[LiveSession, str | int] | None] = ContextVar(
    "mcp_schema.http.serving", default=None
)
"""The session and the id of the request a handler serves, set while the endpoint runs it:
a task or a callback the handler starts inherits it (asyncio copies the
context), so what it sends goes where the handler's own frames would."""

_SSE = "text/event-stream"
_PROGRESS = "notifications/progress"


def route(live: LiveSession, frames: list[Frame], context: StreamKey | None = None) -> None:
    """``frames`` of ``live``'s session to its streams (see the module), after
    any taken earlier and waiting (``live.outbox``); ``context``: the request
    being served (its stream key), else the one `SERVING` names."""
    if live.outbox:
        frames, live.outbox = [*live.outbox, *frames], []
    streams = live.streams
    for frame in frames:
        if frame.method is None:  # a response: to the stream it ends
            key = stream_key(frame.id)
            target = streams.pop(key, None)
            waiting = live.awaited.pop(key, None)
            if waiting is not None:
                waiting.end()
            if target is not None:
                target.error, target.status = frame.error, frame.status
                target.put(frame.data, final=True)
            continue
        target = _stream_of(live, frame, context)
        if target is None or target.media != _SSE:
            target = live.listener
        if target is not None:
            target.put(frame.data)  # an overflow ends the stream: cancellation


def _stream_of(live: LiveSession, frame: Frame, context: StreamKey | None) -> Stream | None:
    streams = live.streams
    if frame.related is not None:
        return streams.get(stream_key(frame.related))
    if frame.progress_token is not None and frame.method == _PROGRESS:  # its token names it
        token = stream_key(frame.progress_token)
        return next((s for s in streams.values() if s.progress_token == token), None)
    if context is None:
        serving = SERVING.get()
        if serving is None or serving[0] is not live:
            return None
        context = stream_key(serving[1])
    return streams.get(context)
