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

On the wire, each broker message is a JSON header line then raw bytes: the
holder listens on ``mcp-replica:{replica}`` for ``open`` (method, path,
headers, and the channel to answer on), ``body`` (a chunk of the request's
body) and ``gone`` (the client left: the holder cancels as
`mcp_schema.http.asgi` does); it answers on ``mcp-reply:{id}`` with
``start`` and ``body`` chunks. A chunk fits the broker's ``max_message``.

Bounded time everywhere:

* a holder that nobody hears on its channel is dead: its record is
  deleted and the request is answered here (404: no such session);
* a holder that does not start answering within ``timeout`` seconds: the
  client gets a JSON-RPC error (-32603, HTTP 504) naming its request;
* an answer silent for ``idle`` seconds (the holder's keep-alives come
  every ``keepalive`` of its `App`) is ended here, and the holder told;
* a forwarded request whose body stops arriving, or whose forwarding
  replica goes away (nobody hears the replies), is abandoned at the holder.

At most ``max_forwards`` forwarded requests are served at once by a
replica (past that: 503). The broker's own failures are HTTP 503.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import jiter

from mcp_schema._args import check
from mcp_schema.broker import BrokerError, Subscription
from mcp_schema.errors import InternalError

# Private helpers of this package's ASGI adapter and endpoint: the forwarded
# request is read, refused and written exactly as a direct one.
from mcp_schema.http.adapter import (
    Message,
    Receive,
    Scope,
    Send,
    read_body,
    send_response,
    serve_lifespan,
    until_disconnect,
)
from mcp_schema.http.asgi import App
from mcp_schema.http.observe import count_refusal
from mcp_schema.http.post import request_id_of
from mcp_schema.http.rules import refusal
from mcp_schema.http.shared_sessions import BrokerSessions, positive_seconds
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import received_headers
from mcp_schema.telemetry import telemetry_for

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

__all__ = ["FORWARD_TIMEOUT", "MAX_FORWARDS", "ClusterApp"]

FORWARD_TIMEOUT = 10.0
"""Seconds a holder has to start answering a forwarded request."""

MAX_FORWARDS = 1000
"""Forwarded requests a replica serves at once."""

_LOG = logging.getLogger("mcp_schema.http")
_HEADER_ROOM = 256  # bytes of a body message kept for its header line
_REPLIES_QUEUED = 64  # reply messages waiting for a slow client: then the answer is cut
_DISCONNECT: Message = {"type": "http.disconnect"}


def _inbox(replica: str) -> str:
    return "mcp-replica:" + replica


def _reply(forward_id: str) -> str:
    return "mcp-reply:" + forward_id


def _pack(header: dict[str, Any], payload: bytes = b"") -> bytes:
    return json.dumps(header, separators=(",", ":")).encode() + b"\n" + payload


def _unpack(data: bytes) -> tuple[dict[str, Any], bytes] | None:
    """A message's header and payload; None for what is not one of ours."""
    head, newline, payload = data.partition(b"\n")
    try:
        header = jiter.from_json(head) if newline else None
    except ValueError:
        return None
    return (header, payload) if isinstance(header, dict) else None


def _chunks(data: bytes, room: int) -> list[bytes]:
    return [data[i : i + room] for i in range(0, len(data), room)] or [b""]


def _texts(pairs: object) -> list[tuple[bytes, bytes]] | None:
    """Headers from the wire (pairs of latin-1 strings), or None when malformed."""
    if not isinstance(pairs, list):
        return None
    found = []
    for pair in pairs:
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)
        ):
            return None
        try:
            found.append((pair[0].encode("latin-1"), pair[1].encode("latin-1")))
        except UnicodeEncodeError:
            return None
    return found


def _wire(headers: list[tuple[bytes, bytes]]) -> list[list[str]]:
    return [[k.decode("latin-1"), v.decode("latin-1")] for k, v in headers]


class _Forwarded:
    """A request served here for another replica: its inbox of body chunks."""

    def __init__(self, size: int) -> None:
        self.inbox: asyncio.Queue[tuple[str, bytes, bool]] = asyncio.Queue(size)
        self.body_done = False


class ClusterApp:
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
        self._room = max(1, self.broker.max_message - _HEADER_ROOM)
        self._forwards: dict[str, _Forwarded] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await serve_lifespan(receive, send, self.start, self.stop)
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        named = dict(scope["headers"]).get(b"mcp-session-id")
        if named is not None and self.sessions.get(named.decode("latin-1")) is None:
            session_id = named.decode("latin-1")
            # Prechecked here, where the client's connection is: the holder
            # serves it with no address of its own (no loopback ``Host`` rule).
            received = received_headers(scope["headers"])
            early = self.app.endpoint.rules.check(
                scope["method"], scope["path"], received, scope.get("server")
            )
            if early is not None:
                count_refusal(self.telemetry, early)
                return await send_response(send, early)
            try:
                holder = await self.sessions.holder(session_id)
            except BrokerError as exc:
                count_refusal(self.telemetry, unavailable := refusal(503, exc))
                return await send_response(send, unavailable)
            if holder is not None and holder != self.sessions.replica:
                return await self._forward(holder, session_id, scope, receive, send)
        await self.app(scope, receive, self._flushing(send))

    def _flushing(self, send: Send) -> Send:
        """``send``, writing the session records first when a response starts:
        a client learns a session id only once other replicas can find it."""

        async def flushed(message: Message) -> None:
            if message["type"] == "http.response.start":
                try:
                    await self.sessions.flush()
                except BrokerError as exc:
                    _LOG.warning("session records not written: %s", exc.message)
            await send(message)

        return flushed

    # -- where the client is --------------------------------------------------------------

    async def _forward(
        self, holder: str, session_id: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        body = b""
        if scope["method"] == "POST":
            read = await read_body(receive, self.app.endpoint.max_body, self.app.body_seconds)
            if read is None:
                return None  # the client left
            if isinstance(read, Response):
                return await send_response(send, read)
            body = read
        forward_id = secrets.token_urlsafe(16)
        request_id = request_id_of(body) if body else None
        opened = {
            "t": "open",
            "f": forward_id,
            "method": scope["method"],
            "path": scope["path"],
            "headers": _wire(list(scope["headers"])),
        }
        try:
            async with self.broker.subscribe(
                _reply(forward_id), max_queued=_REPLIES_QUEUED
            ) as replies:
                if not await self._publish(_inbox(holder), _pack(opened)):
                    await self.sessions.forget(session_id)  # nobody holds it any more
                    answer = self.app.endpoint.handle(
                        scope["method"], scope["path"], scope["headers"], body
                    )
                    return await send_response(send, answer)
                for i, chunk in enumerate(parts := _chunks(body, self._room)):
                    more = i < len(parts) - 1
                    header = {"t": "body", "f": forward_id, "more": more}
                    await self._publish(_inbox(holder), _pack(header, chunk))
                await self._relay(replies, holder, forward_id, request_id, receive, send)
        except (BrokerError, ValueError) as exc:  # ValueError: headers beyond max_message
            error = exc if isinstance(exc, BrokerError) else InternalError(str(exc))
            await send_response(send, refusal(503, error, request_id))

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
        started = finished = False
        try:
            while not finished:
                got = asyncio.ensure_future(replies.__anext__())
                done, _ = await asyncio.wait(
                    {got, left},
                    timeout=self.idle if started else self.timeout,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if got not in done:
                    got.cancel()
                    if left not in done and not started:
                        late = InternalError(
                            f"the replica holding the session did not answer within "
                            f"{self.timeout:g} s"
                        )
                        await send_response(send, refusal(504, late, request_id))
                        started = finished = True
                    break
                unpacked = _unpack(got.result().data)
                if unpacked is None:
                    continue
                header, payload = unpacked
                if header.get("t") == "start" and not started:
                    status, headers = header.get("status"), _texts(header.get("headers"))
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
                    exc if isinstance(exc, BrokerError) else InternalError("the answer was lost")
                )
                await send_response(send, refusal(503, error, request_id))
                started = finished = True
        finally:
            left.cancel()
        if not finished:
            await self._tell_gone(holder, forward_id)
            if started and not left.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _tell_gone(self, holder: str, forward_id: str) -> None:
        try:
            await self._publish(_inbox(holder), _pack({"t": "gone", "f": forward_id}))
        except BrokerError:
            pass  # the holder's own bounds end it

    async def _publish(self, channel: str, data: bytes) -> bool:
        try:
            return await asyncio.wait_for(self.broker.publish(channel, data), self.timeout)
        except asyncio.TimeoutError:
            raise BrokerError(f"the broker did not answer within {self.timeout:g} s") from None

    # -- where the session is -------------------------------------------------------------

    async def _listen(self, ready: asyncio.Event) -> None:
        """Serve what other replicas forward here, until cancelled; a broken
        subscription is opened anew."""
        while True:
            try:
                inbox = self.broker.subscribe(_inbox(self.sessions.replica), max_queued=4096)
                async with inbox:
                    ready.set()
                    async for message in inbox:
                        self._received(message.data)
            except BrokerError as exc:
                _LOG.warning("forwarded requests: %s; listening again", exc.message)
            await asyncio.sleep(1.0)

    def _received(self, data: bytes) -> None:
        unpacked = _unpack(data)
        if unpacked is None:
            return
        header, payload = unpacked
        forward_id, kind = header.get("f"), header.get("t")
        if not isinstance(forward_id, str) or len(forward_id) > 64:
            return
        if kind == "open" and forward_id not in self._forwards:
            self._open(forward_id, header)
            return
        forwarded = self._forwards.get(forward_id)
        if forwarded is not None and kind in ("body", "gone"):
            try:
                forwarded.inbox.put_nowait((kind, payload, header.get("more") is True))
            except asyncio.QueueFull:  # more chunks than a body can have: refused
                forwarded.inbox = asyncio.Queue(1)
                forwarded.inbox.put_nowait(("gone", b"", False))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _open(self, forward_id: str, header: dict[str, Any]) -> None:
        """Start serving a forwarded request (registered at once: its body
        chunks are the next messages)."""
        method, path = header.get("method"), header.get("path")
        headers = _texts(header.get("headers"))
        if not isinstance(method, str) or not isinstance(path, str) or headers is None:
            return None  # not a request of ours: nobody to answer
        send = self._replier(_reply(forward_id))
        if len(self._forwards) >= self.max_forwards:
            busy = refusal(503, InternalError("too many forwarded requests"), None)
            return self._spawn(self._quietly(send_response(send, busy)))
        forwarded = _Forwarded(self.app.endpoint.max_body // self._room + 4)
        self._forwards[forward_id] = forwarded
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "scheme": "http",
            "method": method,
            "path": path,
            "query_string": b"",
            "headers": headers,
            "client": None,
            "server": None,
        }
        self._spawn(self._serve(forward_id, forwarded, scope, send))

    async def _serve(
        self, forward_id: str, forwarded: _Forwarded, scope: Scope, send: Send
    ) -> None:
        async def receive() -> Message:
            wait = None if forwarded.body_done else self.timeout
            try:
                kind, chunk, more = await asyncio.wait_for(forwarded.inbox.get(), wait)
            except asyncio.TimeoutError:
                return _DISCONNECT  # the body stopped coming
            if kind == "gone":
                return _DISCONNECT
            forwarded.body_done = not more
            return {"type": "http.request", "body": chunk, "more_body": more}

        try:
            await self._quietly(self.app(scope, receive, self._flushing(send)))
        finally:
            del self._forwards[forward_id]

    @staticmethod
    async def _quietly(work: Awaitable[None]) -> None:
        try:
            await work
        except OSError:
            pass  # the forwarding replica is gone: nobody to tell
        except Exception:  # one forwarded request must not end the listening
            _LOG.exception("a forwarded request failed")

    def _replier(self, channel: str) -> Send:
        """The ``send`` of a request served here: each message to the replica
        that forwarded it (an OSError once nobody hears it, as a broken connection)."""

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = _wire(list(message.get("headers", [])))
                parts = [_pack({"t": "start", "status": message["status"], "headers": headers})]
            else:
                chunks = _chunks(message.get("body", b""), self._room)
                more = bool(message.get("more_body", False))
                parts = [
                    _pack({"t": "body", "more": more or i < len(chunks) - 1}, chunk)
                    for i, chunk in enumerate(chunks)
                ]
            for part in parts:
                try:
                    heard = await self._publish(channel, part)
                except BrokerError as exc:
                    raise OSError(exc.message) from None
                if not heard:
                    raise OSError("the replica that forwarded the request is gone")

        return send

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
        try:
            await asyncio.wait_for(ready.wait(), self.timeout)
        except asyncio.TimeoutError:
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

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.sessions.ttl / 3)
            try:
                await self.sessions.refresh()
            except BrokerError as exc:
                _LOG.warning("session records not rewritten: %s", exc.message)
