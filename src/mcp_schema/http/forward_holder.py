"""The holder's side of `mcp_schema.http.forward.ClusterApp`: what other
replicas forward here is served with this replica's own `App`, its answer
sent back chunk by chunk; who holds a session is answered; the session
records are rewritten periodically, and at once when the broker lost them
(hand-written runtime module)."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable
from typing import Any

from mcp_schema.broker import Broker, BrokerError
from mcp_schema.http.adapter import Message, Receive, Scope, Send, send_response
from mcp_schema.http.asgi import App
from mcp_schema.http.caller import Caller
from mcp_schema.http.caller_wire import caller_of
from mcp_schema.http.forward_wire import EVERY, chunks, inbox, pack, reply, texts, unpack, wire
from mcp_schema.http.post import request_id_of
from mcp_schema.http.rules import failure, too_many
from mcp_schema.http.shared_sessions import BrokerSessions
from mcp_schema.http_headers import received_headers
from mcp_schema.shares import Share

__all__ = ["DEAF_SECONDS", "RESUBSCRIBE_MAX", "WATCH_SECONDS", "Holding"]

WATCH_SECONDS = 0.5
"""How often a replica checks that the broker still holds its marker."""

RESUBSCRIBE_MAX = 0.4
"""Longest pause between two attempts to listen again after the broker failed."""

DEAF_SECONDS = 1.0
"""How long after this replica listens again, once the broker failed, the
others are given to do the same. A holder's subscription ends when the
broker fails (a frozen Redis fails the PING check, a restarted one drops the
connection), and it subscribes again within about `RESUBSCRIBE_MAX` of the
broker answering: until then nobody hears its channel, yet it is not dead."""

_RESUBSCRIBE_MIN = 0.05
_LOG = logging.getLogger("mcp_schema.http")
_DISCONNECT: Message = {"type": "http.disconnect"}


async def _discarded(work: Awaitable[object]) -> None:
    try:
        await work
    except BrokerError:
        pass  # the forwarder answers 503 in ACK_SECONDS


class _Forwarded:
    """A request served here for another replica: its inbox of body chunks."""

    def __init__(self, size: int) -> None:
        self.inbox: asyncio.Queue[tuple[str, bytes, bool]] = asyncio.Queue(size)
        self.body_done = False


class Holding:
    """What `mcp_schema.http.forward.ClusterApp` does where a session is (see
    the module): the attributes are the app's."""

    app: App
    sessions: BrokerSessions
    broker: Broker
    timeout: float
    max_forwards: int
    share: Share
    _room: int
    _forwards: dict[str, _Forwarded]
    _tasks: set[asyncio.Task[None]]
    _settled_at: float  # when the others listen again after an outage (`DEAF_SECONDS`)

    def _flushing(self, send: Send, body: list[bytes] | None = None) -> Send:
        """``send``, writing the session records first when a response starts:
        a client learns a session id only once other replicas can find it. A
        new session whose record cannot be written is terminated and its
        ``initialize`` refused (503, naming the request): no other replica
        could find it."""
        refused = False

        async def flushed(message: Message) -> None:
            nonlocal refused
            if refused:
                return  # the app's answer, replaced by the refusal
            if message["type"] == "http.response.start":
                try:
                    await self.sessions.flush()
                except BrokerError as exc:
                    created = dict(message.get("headers", [])).get(b"mcp-session-id")
                    new = None if created is None else created.decode("latin-1")
                    if new is not None and self.sessions.unwritten(new):
                        self.sessions.drop(new)
                        refused = True
                        request_id = request_id_of(b"".join(body or ()))
                        return await send_response(send, failure(exc, request_id))
                    _LOG.warning("session records not written: %s", exc.message)
            await send(message)

        return flushed

    async def _publish(self, channel: str, data: bytes) -> bool:
        try:
            return await asyncio.wait_for(self.broker.publish(channel, data), self.timeout)
        except asyncio.TimeoutError:
            raise BrokerError(f"the broker did not answer within {self.timeout:g} s") from None

    def _patience(self) -> float:
        """Seconds left of the time the other replicas are given to listen
        again after an outage of the broker (none once it is over: at most
        `DEAF_SECONDS`)."""
        left = self._settled_at - asyncio.get_running_loop().time()
        return max(0.0, min(DEAF_SECONDS, left))

    async def _heard(self, channel: str, data: bytes) -> bool:
        """Whether a replica heard ``data`` published on ``channel``. Right
        after an outage of the broker it is published again while nobody
        hears it (nobody got it, so nobody gets it twice), for `_patience`:
        a holder between two subscriptions is deaf, not dead."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._patience()
        pause = _RESUBSCRIBE_MIN
        while not await self._publish(channel, data):
            left = deadline - loop.time()
            if left <= 0:
                return False
            await asyncio.sleep(min(pause, left))
            pause = min(2 * pause, RESUBSCRIBE_MAX / 2)
        return True

    async def _listen(self, ready: asyncio.Event) -> None:
        """Serve what other replicas forward here, and answer who holds a
        session, until cancelled; a broken subscription is opened anew, after
        a pause that grows from 0.05 s to `RESUBSCRIBE_MAX` while it fails
        (the others' broke too: they are given `DEAF_SECONDS` more)."""
        pause = _RESUBSCRIBE_MIN
        loop = asyncio.get_running_loop()
        while True:
            try:
                channels = self.broker.subscribe(
                    inbox(self.sessions.replica), EVERY, max_queued=4096
                )
                async with channels:
                    ready.set()
                    if self._settled_at == math.inf:
                        _LOG.info("forwarded requests: listening again")
                        self._settled_at = loop.time() + DEAF_SECONDS
                    pause = _RESUBSCRIBE_MIN
                    async for message in channels:
                        self._received(message.data)
            except BrokerError as exc:
                if self._settled_at != math.inf:  # once an outage, not at every attempt
                    _LOG.warning("forwarded requests: %s; listening again", exc.message)
                self._settled_at = math.inf
            await asyncio.sleep(pause)
            pause = min(2 * pause, RESUBSCRIBE_MAX)

    def _received(self, data: bytes) -> None:
        unpacked = unpack(data)
        if unpacked is None:
            return
        header, payload = unpacked
        forward_id, kind = header.get("f"), header.get("t")
        if not isinstance(forward_id, str) or len(forward_id) > 64:
            return
        if kind == "who":
            answer = self.sessions.answer(header)
            if answer is not None:
                self._spawn(self._quietly(self._here(forward_id, answer)))
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
        headers, caller = texts(header.get("headers")), caller_of(header.get("caller"))
        if not (isinstance(method, str) and isinstance(path, str)) or headers is None:
            return None  # not a request of ours: nobody to answer
        if caller is None:
            return None
        send = self._replier(reply(forward_id))
        key = caller.key  # the caller the forwarding replica admitted
        if not self.share.acquire(key):
            request_id = header.get("i")
            if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
                request_id = None
            busy = too_many(self.share.refused(key), request_id)
            return self._spawn(self._quietly(send_response(send, busy)))
        forwarded = _Forwarded(self.app.endpoint.max_body // self._room + 4)
        self._forwards[forward_id] = forwarded
        taken = self._publish(reply(forward_id), pack({"t": "ack"}))
        self._spawn(self._quietly(_discarded(taken)))
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "scheme": "http",
            "method": method,
            "path": path,
            "query_string": b"",
            "headers": headers,
            "client": None if caller.address is None else (caller.address, 0),
            "server": None,
        }
        self._spawn(self._serve(forward_id, forwarded, scope, caller, send))

    async def _serve(
        self, forward_id: str, forwarded: _Forwarded, scope: Scope, caller: Caller, send: Send
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
            await self._quietly(self._admitted(scope, caller, receive, self._flushing(send)))
        finally:
            del self._forwards[forward_id]
            self.share.release(caller.key)

    async def _admitted(self, scope: Scope, caller: Caller, receive: Receive, send: Send) -> None:
        """A request the forwarding replica admitted, from ``caller``: the
        session it names must be theirs, then this replica's app serves it."""
        received, method = received_headers(scope["headers"]), scope["method"]
        refused = self.app.endpoint.bound(method, received, caller)
        if refused is not None:
            return await send_response(send, refused)
        await self.app.serve(method, received, receive, send, caller)

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
                headers = wire(list(message.get("headers", [])))
                parts = [pack({"t": "start", "status": message["status"], "headers": headers})]
            else:
                pieces = chunks(message.get("body", b""), self._room)
                more = bool(message.get("more_body", False))
                parts = [
                    pack({"t": "body", "more": more or i < len(pieces) - 1}, chunk)
                    for i, chunk in enumerate(pieces)
                ]
            for part in parts:
                try:
                    heard = await self._publish(channel, part)
                except BrokerError as exc:
                    raise OSError(exc.message) from None
                if not heard:
                    raise OSError("the replica that forwarded the request is gone")

        return send

    async def _here(self, ask_id: str, answer: bytes) -> None:
        """Tell the replica that asked that this one holds the session, and
        write its record again."""
        await self._publish(reply(ask_id), answer)
        try:
            await self.sessions.flush()
        except BrokerError as exc:
            _LOG.warning("session records not written: %s", exc.message)

    async def _watch(self) -> None:
        """Every `WATCH_SECONDS`, whether Redis lost what it held (a restart
        without persistence): then every record here is written again."""
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            try:
                if await self.sessions.revive():
                    _LOG.warning("the broker lost the session records: written again")
            except BrokerError:
                pass  # unreachable: the requests say so, and the next look tries again

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.sessions.ttl / 3)
            try:
                await self.sessions.refresh()
            except BrokerError as exc:
                _LOG.warning("session records not rewritten: %s", exc.message)
