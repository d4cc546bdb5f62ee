"""What every server written by hand on a `ServerSession` repeats (hand-written
runtime module), given once:

* `answered_by`: the handler of a function that answers a request, or the
  client's answers to what it asked for one (`InputReceived`): what it
  returns is the request's result (None: no answer yet, it asked the
  client first), an `McpError` it raises is the request's error. Other
  events (negotiation, notifications, cancellation) are the session's own.
* `serve_stdio`: the stdio transport, one frame a line: each line read goes
  to the session, each event it makes to the handler, and what the session
  queued meanwhile is written back, a line each, flushed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import IO, Any

from mcp_schema.errors import McpError
from mcp_schema.session.events import Event, InputReceived, RequestReceived
from mcp_schema.session.server import ServerSession

__all__ = ["Answer", "answered_by", "serve_stdio"]

Answer = Callable[[ServerSession, "RequestReceived | InputReceived"], Any]
"""``answer(session, event)``: the result of the request ``event`` brings
(a model or a wire mapping), or None when it is not answered now."""


def answered_by(answer: Answer) -> Callable[[ServerSession, Event], None]:
    """The handler serving requests by ``answer`` (see the module)."""

    def handler(session: ServerSession, event: Event) -> None:
        if isinstance(event, InputReceived):
            request = event.request
        elif isinstance(event, RequestReceived):
            request = event
        else:
            return
        try:
            result = answer(session, event)
        except McpError as err:
            session.fail(request, err)
            return
        if result is not None:
            session.respond(request, result)

    return handler


def serve_stdio(
    session: ServerSession,
    handler: Callable[[ServerSession, Event], object],
    lines: Iterable[bytes] | None = None,
    out: IO[bytes] | None = None,
) -> None:
    """Serve ``session`` by ``handler`` over stdio (see the module) until
    ``lines`` (standard input's) end; ``out``: where frames go (standard output)."""
    read: Iterable[bytes] = sys.stdin.buffer if lines is None else lines
    written: IO[bytes] = sys.stdout.buffer if out is None else out
    for line in read:
        for event in session.receive(line):
            handler(session, event)
        written.writelines(frame + b"\n" for frame in session.data_to_send())
        written.flush()
