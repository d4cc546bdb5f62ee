"""`Driving`: the replica's `TaskServer`, which also awaits the work of the
event its endpoint just handed the handler (hand-written runtime module).

Today's `mcp_schema.http.Endpoint` calls a handler synchronously, but on
its asynchronous path (`Endpoint.handle_async`, the ASGI app's) it awaits
its task server around each event: `TaskServer.serve` first (is it a
``tasks/*`` request?), then the handler, then `TaskServer.flush`, and only
then does it route what the session queued and answer. `Driving` marks the
session in ``serve``; the server's handler, seeing the mark
(`Driving.expects`), parks the event's coroutine instead of running it
(`Driving.park`); ``flush`` awaits it, in the event loop, before the tasks
it may have started are stored. So on that path async functions await
anything (``asyncio.sleep``, a database), sync ones run in a worker thread,
and a slow call never stalls the others of the replica. Elsewhere
(`Endpoint.handle`, stdio) the handler runs its coroutine at once
(`mcp_schema.server.dispatch.run_now`).

A parked call not done within ``timeout`` seconds is cancelled, answered
-32603 with its id, and logged with its method, its tool (or prompt, or
URI) and its id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from mcp_schema.errors import InternalError
from mcp_schema.session import Event, InputReceived, RequestReceived, ServerSession, SessionError
from mcp_schema.tasks import TaskServer

__all__ = ["CALL_SECONDS", "Driving"]

CALL_SECONDS = 60.0
"""How long a call may run before it is answered -32603 (``Server(timeout=)``)."""

_LOG = logging.getLogger("mcp_schema.server")


class Driving(TaskServer):
    """A `TaskServer` (its arguments but ``timeout``) that awaits parked
    calls (see the module)."""

    def __init__(self, *args: Any, timeout: float = CALL_SECONDS, **rules: Any) -> None:
        super().__init__(*args, **rules)
        self.timeout = timeout
        self._next: ServerSession | None = None
        self._parked: tuple[ServerSession, Event, Coroutine[Any, Any, None]] | None = None

    async def serve(self, session: ServerSession, event: object) -> bool:
        if await super().serve(session, event):
            return True
        self._next = session  # the endpoint hands the handler this event now, flush after
        return False

    def expects(self, session: ServerSession) -> bool:
        """Whether ``session``'s event being handled is flushed after (once)."""
        expected, self._next = self._next, None
        return expected is session

    def park(self, session: ServerSession, event: Event, work: Coroutine[Any, Any, None]) -> None:
        """Keep ``work`` (serving ``event``) for the flush that follows."""
        if self._parked is not None:  # never flushed: nothing awaits it any more
            self._parked[2].close()
        self._parked = (session, event, work)

    async def flush(self, session: ServerSession) -> list[asyncio.Task[None]]:
        parked, self._parked = self._parked, None
        if parked is not None and parked[0] is session:
            await self._finish(session, parked[1], parked[2])
        elif parked is not None:
            parked[2].close()
        return await super().flush(session)

    async def _finish(
        self, session: ServerSession, event: Event, work: Coroutine[Any, Any, None]
    ) -> None:
        request = event.request if isinstance(event, InputReceived) else event
        try:
            await asyncio.wait_for(work, self.timeout)
            return
        except asyncio.TimeoutError:
            if not isinstance(request, RequestReceived):
                return
            _LOG.error(
                "%s %s request %r: not answered within %g s",
                request.method,
                _named(request),
                request.id,
                self.timeout,
            )
            error = InternalError(f"The call was not answered within {self.timeout:g} s")
        except Exception:  # the layer's own fault: the request still gets its answer
            if not isinstance(request, RequestReceived):
                raise
            _LOG.exception("%s request %r failed", request.method, request.id)
            error = InternalError("Internal error")
        try:
            session.fail(request, error)
        except SessionError:
            pass  # answered before it failed


def _named(request: RequestReceived) -> str:
    """What the request names: its tool or prompt, or its resource's URI."""
    params = getattr(request.message, "params", None)
    return str(getattr(params, "name", None) or getattr(params, "uri", None) or "")
