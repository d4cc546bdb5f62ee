"""`App`: an ASGI 3 application serving an `Endpoint`, with no framework
under it: ``uvicorn.run(App(endpoint))``, or mounted in any ASGI router.

* Refusals that need no body (`Endpoint.precheck`, by the rules of
  `mcp_schema.http.precheck`: on a loopback address, a ``Host`` that is no
  loopback name is 421 unless the endpoint names its own ``allowed_hosts``)
  are sent before the body is read; the body is read by
  `mcp_schema.http.adapter.read_body`: refused with 413 as soon as it grows
  beyond the endpoint's ``max_body``, and with 408 when it is not whole
  within ``body_seconds``.
* A `Stream` is written as it fills: each wake-up sends what is waiting,
  in one chunk. An event stream idle for ``keepalive`` seconds gets an SSE
  comment (`KEEPALIVE`).
* The client disconnecting (``http.disconnect``) before a stream is done
  abandons it: the endpoint cancels the request it answers
  (`mcp_schema.http.endpoint`). The buffering rule is the stream's: a
  reader that falls ``max_buffer`` bytes behind has its stream cut, which
  is cancellation too.
* ``lifespan``: startup starts ``relay`` (a
  `mcp_schema.subscription_relay.Relay`, if given: changes published on any
  replica reach this one's listens, and the endpoint's task status
  notifications every replica's: `Relay.carry`); shutdown stops it and terminates every
  session and listen, which ends their open streams. A server may wait for open responses before it gets there (a
  GET stream lasts until its client leaves): give it a graceful-shutdown
  timeout (uvicorn's ``--timeout-graceful-shutdown``).

* A stateless-era request answered after its handler returned (an
  ``async def`` handler's, one answered from a callback:
  `mcp_schema.http.answers`) gets its answer as one JSON body when the
  response comes first, within ``keepalive`` seconds; otherwise, or when
  notifications come first, as an event stream (kept alive as any).

Plain handlers run in the event loop, synchronously, as the endpoint calls
them: a handler that blocks, blocks the server. One that waits (for I/O,
for the client's answer) is an ``async def`` handler, or answers later
through the protocol (``session.ask``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from mcp_schema._args import check
from mcp_schema.http.access_log import AccessLog
from mcp_schema.http.adapter import (
    BODY_SECONDS,
    KEEPALIVE_SECONDS,
    Message,
    Receive,
    Scope,
    Send,
    read_body,
    send_response,
    send_stream,
    serve_lifespan,
    until_disconnect,
)
from mcp_schema.http.caller import Caller
from mcp_schema.http.endpoint import Endpoint
from mcp_schema.http.observe import count_refusal
from mcp_schema.http.stream import Response, Stream
from mcp_schema.http_headers import received_headers
from mcp_schema.subscription_relay import Relay
from mcp_schema.telemetry import telemetry_for
from mcp_schema.telemetry.addresses import CLIENT, client_of

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

__all__ = ["KEEPALIVE_SECONDS", "App", "Message", "Receive", "Scope", "Send"]


class App:
    """The ASGI 3 application of ``endpoint``; ``body_seconds``: the time a
    POST body has to arrive whole (408 after it; None: no bound);
    ``telemetry``: where its refusals are counted and whose spans name the
    client's address (None, the default: the endpoint's; False: nowhere);
    ``access_log``: where one line per request is written
    (`mcp_schema.http.access_log`; None, the default: nowhere)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        keepalive: float = KEEPALIVE_SECONDS,
        relay: Relay | None = None,
        body_seconds: float | None = BODY_SECONDS,
        telemetry: Telemetry | bool | None = None,
        access_log: AccessLog | None = None,
    ) -> None:
        if not isinstance(endpoint, Endpoint):
            raise TypeError(f"endpoint must be an Endpoint, not {type(endpoint).__name__}")
        if not isinstance(keepalive, (int, float)) or not keepalive > 0:
            raise ValueError(f"keepalive must be a positive number of seconds, not {keepalive!r}")
        if body_seconds is not None:
            check(body_seconds, (int, float), "body_seconds")
            if not body_seconds > 0:
                raise ValueError(f"body_seconds must be positive, not {body_seconds!r}")
        self.endpoint = endpoint
        self.keepalive = float(keepalive)
        self.body_seconds = body_seconds
        self.relay = relay
        self.telemetry = endpoint.telemetry if telemetry is None else telemetry_for(telemetry)
        check(access_log, AccessLog, "access_log", none=True)
        self.access_log = access_log
        if relay is not None and endpoint.tasks is not None:
            relay.carry(endpoint.tasks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await serve_lifespan(receive, send, self.start, self.stop)
        if scope["type"] != "http":
            return None  # a websocket is not an MCP transport: the server closes it
        if self.access_log is not None:
            return await self._logged(scope, receive, send, self.access_log)
        return await self._http(scope, receive, send)

    async def _logged(self, scope: Scope, receive: Receive, send: Send, log: AccessLog) -> None:
        seen, status = log.begin(), None

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._http(scope, receive, sent)
        finally:
            log.write(scope["method"], seen, status)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        # The headers read into one dict and the precheck made once, before the
        # body: the endpoint's own steps of `Endpoint.handle`.
        received = received_headers(scope["headers"])
        endpoint = self.endpoint
        if endpoint.rules.auth is None:  # no token to wait for: the door without a coroutine
            admitted = endpoint._admit_now(method, scope["path"], received, scope)
        else:
            admitted = await endpoint.admit(method, scope["path"], received, scope)
        telemetry = self.telemetry
        if telemetry is not None and telemetry.active:
            if isinstance(admitted, Response):
                count_refusal(telemetry, admitted)
            CLIENT.set(client_of(scope))  # this request's task's own context
        if isinstance(admitted, Response):
            return await send_response(send, admitted)
        return await self.serve(method, received, receive, send, admitted)

    async def serve(
        self, method: str, received: dict[str, str], receive: Receive, send: Send, caller: Caller
    ) -> None:
        """A request the front door let through (`Endpoint.admit`: here, or on
        the replica that forwarded it, `mcp_schema.http.forward`), sent by
        ``caller``: its body read, answered. A stream ends when the caller's
        token expires."""
        body = b""
        if method == "POST":
            read = await read_body(receive, self.endpoint.max_body, self.body_seconds)
            if read is None:
                return None  # the client left
            if isinstance(read, Response):
                count_refusal(self.telemetry, read)
                return await send_response(send, read)
            body = read
        return await self.answer(method, received, body, receive, send, caller)

    async def answer(
        self,
        method: str,
        received: dict[str, str],
        body: bytes,
        receive: Receive,
        send: Send,
        caller: Caller,
    ) -> None:
        """A request the front door let through, sent by ``caller``, whose body
        was read already (at most the endpoint's ``max_body``: a front door in
        front read it, as the gateway does before it hands a request to its
        bridge), answered."""
        endpoint = self.endpoint
        if endpoint._answers_now(method):  # nothing to wait for: no coroutine made for it
            response = endpoint._prechecked(method, received, body, caller)
        else:
            response = await endpoint._prechecked_async(method, received, body, caller)
        stream = response.stream
        if stream is not None and _awaited(response):
            if not await _first_frame(stream, receive, self.keepalive):
                return None  # the client left: the request is cancelled
            response = endpoint.settled(response)
        endpoint.rules.with_cors(received, response)  # adds the CORS headers, in place
        if response.stream is None:
            return await send_response(send, response)
        return await send_stream(response, receive, send, self.keepalive, caller.expires_at)

    async def start(self) -> None:
        """The lifespan's startup: the relay starts."""
        if self.relay is not None:
            await self.relay.start()

    async def stop(self) -> None:
        """The lifespan's shutdown: the relay stops, every session and listen
        ends (their open streams with them), and the task server stops its
        work (the store says so once the leases pass)."""
        if self.relay is not None:
            await self.relay.aclose()
        await self.endpoint.aclose()
        if self.endpoint.tasks is not None:
            await self.endpoint.tasks.aclose()


def _awaited(response: Response) -> bool:
    """Whether ``response`` is a stateless-era request's answer still to come
    (one JSON body, should the response come first): a handshake-era one
    streams at once, as it always did."""
    stream = response.stream
    return (
        stream is not None
        and stream.answering
        and not (stream.finished or stream.frames)
        and response.header("mcp-session-id") is None
    )


async def _first_frame(stream: Stream, receive: Receive, seconds: float) -> bool:
    """Wait, at most ``seconds``, for ``stream``'s first frame or its end
    (then whether its answer is one JSON body is known); False when the
    client left first (the stream is abandoned: its request cancelled)."""
    ready = asyncio.Event()
    stream.on_ready = ready.set
    left = asyncio.ensure_future(until_disconnect(receive))
    woken = asyncio.ensure_future(ready.wait())
    try:
        finished, _ = await asyncio.wait(
            {woken, left}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        stream.on_ready = None
        woken.cancel()
        left.cancel()
    if left in finished:
        stream.abandon()
        return False
    return True
