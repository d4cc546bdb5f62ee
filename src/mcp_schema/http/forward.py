"""`ClusterApp`: an ASGI application any replica of which serves any
handshake-era session (hand-written runtime module).

Every replica runs ``ClusterApp(App(Endpoint(..., sessions=BrokerSessions(broker))))``
on one broker (`mcp_schema.redis_broker.RedisBroker`). A request naming a
session that this replica does not hold is looked up in the session records
(`mcp_schema.http.shared_sessions`) and forwarded over the broker's pub/sub
to the holder, which serves it with its own `App` as if the client had
reached it, and whose answer (status, headers, then the body chunk by
chunk: a JSON body, or each server-sent event as it comes) is relayed to
the client by the replica the client reached. So a client may reach any
replica with any request of its session: its POSTs, the answer it POSTs to
a server's request (elicitation) while the stream carrying that request is
held elsewhere, its GET stream, its DELETE.

On the wire, each broker message is a JSON header line then raw bytes
(`mcp_schema.http.forward_wire`): the holder listens on
``mcp-replica:{replica}`` for ``open`` (method, path, headers, and the
channel to answer on), ``body`` (a chunk of the request's body) and ``gone``
(the client left: the holder cancels as `mcp_schema.http.asgi` does); it
answers on ``mcp-reply:{id}`` with ``ack`` (taken), then ``start`` and
``body`` chunks. Every replica also listens on ``mcp-replicas`` for ``who``
(who holds this session? asked when no record names a holder: its holder
answers ``here`` and writes the record again). A chunk fits the broker's ``max_message``.

Bounded time everywhere:

* a holder that nobody hears on its channel is dead: its record is deleted
  and the request is answered here (404: no such session). But for
  `DEAF_SECONDS` after an outage of the broker (this replica's subscription
  broke, and so did the others'), the request is published again while
  nobody hears it, and a replica that finds no record asks again, since a
  holder that has not subscribed again yet is deaf, not dead;
* a holder that does not take the request (its ``ack``) within
  `ACK_SECONDS`: 503 naming the request (the broker lost it, or the holder
  is stuck), and the holder is told to drop it;
* a holder that does not start answering within ``timeout`` seconds: the
  client gets a JSON-RPC error (-32603, HTTP 504) naming its request;
* an answer silent for ``idle`` seconds (the holder's keep-alives come
  every ``keepalive`` of its `App`) is ended here, and the holder told;
* a forwarded request whose body stops arriving, or whose forwarding
  replica goes away (nobody hears the replies), is abandoned at the holder.

A replica serves at most ``max_forwards`` forwarded requests at once,
``max_forwards_per_key`` per caller (`mcp_schema.shares`; ``open`` carries
the request's id and the client's address): past either, 429 with
``Retry-After`` and the id. The broker's own failures are HTTP 503.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING

from mcp_schema._args import check
from mcp_schema.broker import BrokerError, Subscription
from mcp_schema.errors import GatewayTimeoutError, UnavailableError

# Private helpers of this package's ASGI adapter and endpoint: the forwarded
# request is read, refused and written exactly as a direct one.
from mcp_schema.http.adapter import (
    Message,
    Receive,
    Scope,
    Send,
    end_to_end,
    read_body,
    send_response,
    serve_lifespan,
    until_disconnect,
)
from mcp_schema.http.asgi import App
from mcp_schema.http.caller import Caller
from mcp_schema.http.caller_wire import UNFORWARDED, caller_wire
from mcp_schema.http.forward_holder import DEAF_SECONDS, RESUBSCRIBE_MAX, WATCH_SECONDS, Holding
from mcp_schema.http.forward_wire import chunks, inbox, pack, reply, texts, unpack, wire
from mcp_schema.http.observe import count_refusal, observe_shares
from mcp_schema.http.post import request_id_of
from mcp_schema.http.rules import failure
from mcp_schema.http.shared_sessions import BrokerSessions, positive_seconds
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import received_headers
from mcp_schema.shares import Share
from mcp_schema.telemetry import telemetry_for

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

__all__ = [
    "ACK_SECONDS",
    "DEAF_SECONDS",
    "FORWARD_TIMEOUT",
    "MAX_FORWARDS",
    "RESUBSCRIBE_MAX",
    "WATCH_SECONDS",
    "ClusterApp",
]

FORWARD_TIMEOUT = 10.0
"""Seconds a holder has to start answering a forwarded request."""

MAX_FORWARDS = 1000
"""Forwarded requests a replica serves at once."""

ACK_SECONDS = 1.0
"""Seconds a holder has to take a forwarded request (its ``ack``), before the
forwarder answers 503: the broker lost the request, or the holder is stuck."""


_LOG = logging.getLogger("mcp_schema.http")
_KEPT = 65536  # bytes of a request's body kept to name it in a refusal
_HEADER_ROOM = 256  # bytes of a body message kept for its header line
_REPLIES_QUEUED = 64  # reply messages waiting for a slow client: then the answer is cut


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` of a request whose ``body`` was read already: the body
    once, then what the client sends (its disconnect)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


class ClusterApp(Holding):
    """The ASGI application of ``app``, whose endpoint keeps its sessions in
    a `BrokerSessions`: see the module. Its lifespan starts and stops the
    listening, the rewriting of records, and ``app``'s own (an ASGI server
    runs it: uvicorn does by default). ``telemetry``: where the refusals
    made here are counted (None, the default: ``app``'s; False: nowhere)."""

    def __init__(
        self,
        app: App,
        *,
        timeout: float = FORWARD_TIMEOUT,
        idle: float | None = None,
        max_forwards: int = MAX_FORWARDS,
        max_forwards_per_key: int | None = None,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        if not isinstance(app, App):
            raise TypeError(f"app must be an App, not {type(app).__name__}")
        sessions = app.endpoint.sessions
        if not isinstance(sessions, BrokerSessions):
            raise TypeError("the app's endpoint must keep its sessions in a BrokerSessions")
        check(max_forwards, int, "max_forwards")
        if max_forwards < 1:
            raise ValueError(f"max_forwards must be positive, not {max_forwards}")
        self.app = app
        self.telemetry = app.telemetry if telemetry is None else telemetry_for(telemetry)
        self.sessions = sessions
        self.broker = sessions.broker
        self.timeout = positive_seconds(timeout, "timeout")
        self.idle = 3 * app.keepalive if idle is None else positive_seconds(idle, "idle")
        self.max_forwards = max_forwards
        self.share = Share("forwarded requests", total=max_forwards, per_key=max_forwards_per_key)
        """The bound on the requests other replicas forward here, per caller and in all."""
        observe_shares(self.telemetry, self)
        self._room = max(1, self.broker.max_message - _HEADER_ROOM)
        self._ack = min(ACK_SECONDS, self.timeout)
        self._forwards = {}
        self._tasks = set()
        self._settled_at = 0.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await serve_lifespan(receive, send, self.start, self.stop)
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        named = dict(scope["headers"]).get(b"mcp-session-id")
        if named is not None and self.sessions.get(named.decode("latin-1")) is None:
            session_id = named.decode("latin-1")
            # Admitted here, where the client's connection is (its token, its
            # address): the holder serves the caller it is told, with no
            # address of its own (no loopback ``Host`` rule) and no token.
            received = received_headers(scope["headers"])
            admitted = await self.app.endpoint.rules.admit(
                scope["method"], scope["path"], received, scope
            )
            if isinstance(admitted, Response):
                count_refusal(self.telemetry, admitted)
                return await send_response(send, admitted)
            body = b""
            if scope["method"] == "POST":  # read first: a refusal names the request
                read = await read_body(receive, self.app.endpoint.max_body, self.app.body_seconds)
                if read is None:
                    return None  # the client left
                if isinstance(read, Response):
                    return await send_response(send, read)
                body = read
            try:
                holder = await self.sessions.holder(session_id)
                if holder is None:  # lost by a restart of Redis? its holder knows
                    holder = await self.sessions.ask(session_id, self._patience())
            except BrokerError as exc:
                unavailable = failure(exc, request_id_of(body))
                count_refusal(self.telemetry, unavailable)
                return await send_response(send, unavailable)
            if holder is not None and holder != self.sessions.replica:
                return await self._forward(holder, session_id, scope, body, admitted, send, receive)
            receive = _replaying(body, receive)
        kept: list[bytes] = []
        await self.app(scope, self._kept(receive, kept), self._flushing(send, kept))

    def _kept(self, receive: Receive, body: list[bytes]) -> Receive:
        """``receive``, keeping the body's first `_KEPT` bytes in ``body`` (the
        request's id, should an ``initialize`` be refused: a larger body is
        no ``initialize``, and its refusal names no id)."""
        kept = 0

        async def received() -> Message:
            nonlocal kept
            message = await receive()
            if message["type"] == "http.request" and kept <= _KEPT:
                chunk = message.get("body", b"")
                body.append(chunk)
                kept += len(chunk)
            return message

        return received

    # -- where the client is --------------------------------------------------------------

    async def _forward(
        self,
        holder: str,
        session_id: str,
        scope: Scope,
        body: bytes,
        caller: Caller,
        send: Send,
        receive: Receive,
    ) -> None:
        forward_id = secrets.token_urlsafe(16)
        request_id = request_id_of(body) if body else None
        opened = {
            "t": "open",
            "f": forward_id,
            "method": scope["method"],
            "path": scope["path"],
            "headers": wire(end_to_end(list(scope["headers"]), UNFORWARDED)),
            "caller": caller_wire(caller),
            "i": request_id,  # a refusal by the holder names the request
        }
        try:
            async with self.broker.subscribe(
                reply(forward_id), max_queued=_REPLIES_QUEUED
            ) as replies:
                if not await self._heard(inbox(holder), pack(opened)):
                    await self.sessions.forget(session_id)  # nobody holds it any more
                    answer = self.app.endpoint.handle(
                        scope["method"], scope["path"], scope["headers"], body, caller
                    )
                    return await send_response(send, answer)
                for i, chunk in enumerate(parts := chunks(body, self._room)):
                    more = i < len(parts) - 1
                    header = {"t": "body", "f": forward_id, "more": more}
                    await self._publish(inbox(holder), pack(header, chunk))
                await self._relay(replies, holder, forward_id, request_id, receive, send)
        except (BrokerError, ValueError) as exc:  # ValueError: headers beyond max_message
            error = exc if isinstance(exc, BrokerError) else UnavailableError(str(exc))
            await send_response(send, failure(error, request_id))

    async def _relay(
        self,
        replies: Subscription,
        holder: str,
        forward_id: str,
        request_id: str | int | None,
        receive: Receive,
        send: Send,
    ) -> None:
        """The holder's answer to ``send``, as it comes, within the bounds."""
        left = asyncio.ensure_future(until_disconnect(receive))
        started = finished = acked = False
        try:
            while not finished:
                got = asyncio.ensure_future(replies.__anext__())
                done, _ = await asyncio.wait(
                    {got, left},
                    timeout=self.idle if started else self.timeout if acked else self._ack,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if got not in done:
                    got.cancel()
                    if left not in done and not started:
                        await send_response(send, self._late(acked, request_id))
                        started = finished = True
                    break
                unpacked = unpack(got.result().data)
                if unpacked is None:
                    continue
                header, payload = unpacked
                if header.get("t") == "ack":
                    acked = True
                elif header.get("t") == "start" and not started:
                    status, headers = header.get("status"), texts(header.get("headers"))
                    if not isinstance(status, int) or headers is None:
                        raise BrokerError("the holder's answer is malformed")
                    await send(
                        {"type": "http.response.start", "status": status, "headers": headers}
                    )
                    started = True
                elif header.get("t") == "body" and started:
                    finished = header.get("more") is not True
                    await send(
                        {"type": "http.response.body", "body": payload, "more_body": not finished}
                    )
        except (BrokerError, StopAsyncIteration, OSError) as exc:
            if not started:
                error = (
                    exc if isinstance(exc, BrokerError) else UnavailableError("the answer was lost")
                )
                await send_response(send, failure(error, request_id))
                started = finished = True
        finally:
            left.cancel()
        if not finished:
            await self._tell_gone(holder, forward_id)
            if started and not left.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _late(self, acked: bool, request_id: str | int | None) -> Response:
        """The refusal of a forwarded request the holder did not take (503:
        the broker lost it, or the holder is stuck; it is told to drop it)
        or did not start to answer in time (504)."""
        if not acked:
            lost = UnavailableError(
                f"the replica holding the session did not take the request within {self._ack:g} s"
            )
            return failure(lost, request_id)
        late = GatewayTimeoutError(
            f"the replica holding the session did not answer within {self.timeout:g} s"
        )
        return failure(late, request_id)

    async def _tell_gone(self, holder: str, forward_id: str) -> None:
        try:
            await self._publish(inbox(holder), pack({"t": "gone", "f": forward_id}))
        except BrokerError:
            pass  # the holder's own bounds end it

    # -- lifespan -------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen for forwarded requests (once listening) and rewrite the
        session records periodically; a `BrokerError` when the broker does not
        let it listen within ``timeout``."""
        if self.app.relay is not None:  # its lifespan is this one: App's is never run
            await self.app.relay.start()
        ready = asyncio.Event()
        self._spawn(self._listen(ready))
        self._spawn(self._heartbeat())
        self._spawn(self._watch())
        try:
            await asyncio.wait_for(ready.wait(), self.timeout)
            await self.sessions.refresh()  # the marker `_watch` looks for
        except (asyncio.TimeoutError, BrokerError):
            await self.stop()
            raise BrokerError("could not listen for forwarded requests") from None

    async def stop(self) -> None:
        """Stop listening, terminate every session here, delete their records."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.app.relay is not None:
            await self.app.relay.aclose()
        self.app.endpoint.close()
        try:
            await self.sessions.flush()
        except BrokerError as exc:
            _LOG.warning("session records left to expire: %s", exc.message)
