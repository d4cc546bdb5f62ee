"""`BridgeDriver`: the asyncio driver of the era bridge for 2026-07-28 clients
in front of a server that speaks only the handshake era, over any transport
upstream (`mcp_schema.gateway.bridge.links.StdioBridge`: a child process per
upstream session; `mcp_schema.gateway.bridge.links.HttpBridge`: an HTTP session
each), driving the sans-IO parts of `mcp_schema.gateway.bridge.stateless`.

Per 2026-07-28 request (its ``_meta`` read by a front `ServerSession`): an
upstream session of its principal and capabilities, started and initialized
when first needed; for a call that may ask, one whose turn is free (another
is started when every one's is taken: at most ``max_upstreams`` sessions at
once, ``max_upstreams_per_key`` per caller (`mcp_schema.shares`), its own
least recently used idle one ended first, never another caller's; past
that the call waits its turn on one of its sessions, and is refused, 429
with ``Retry-After``, when it has none; a session idle for
``idle_seconds`` ends); the
request projected to its version; the answer projected back. The answer is
JSON when nothing comes before it, else an event stream carrying the
call's progress and log messages first. The client leaving before the
answer cancels the upstream call (``notifications/cancelled``).

``subscriptions/listen`` becomes the upstream's ``resources/subscribe`` for
each URI its filter names (when the server declares ``resources.subscribe``)
and its list-changed notifications; a listen hears what its own upstream
session hears, the acknowledgement and each notification tagged with the
listen's id, only what its filter asks for (`mcp_schema.subscriptions`).

A pending call (waiting for the client's input) is held by this process:
several replicas need affinity for the retry (the ``requestState`` is
sealed, and refused by a replica without the call, -32602).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from time import monotonic
from typing import TYPE_CHECKING

from mcp_schema.errors import InternalError, InvalidParamsError, McpError
from mcp_schema.gateway.bridge.stateless import (
    MAY_ASK,
    Call,
    HandshakeBridge,
    PendingCalls,
    Upstream,
    answer_of,
    ask,
    carry,
    projected_capabilities,
    sealer_from_env,
    upstream_key,
)
from mcp_schema.gateway.bridge.upstreams import UpstreamTable
from mcp_schema.gateway.findings import Findings
from mcp_schema.gateway.probe import ANSWER_SECONDS, GATEWAY_INFO, Served
from mcp_schema.http.adapter import (
    Receive,
    Scope,
    Send,
    send_body,
    send_response,
    sse_events,
    start_message,
    until_disconnect,
)
from mcp_schema.http.caller import caller_in, principal_in
from mcp_schema.http.rules import code_status, refusal, status_of
from mcp_schema.http.sessions import IDLE_SECONDS
from mcp_schema.http.stream import Response
from mcp_schema.request_state import StateSealer
from mcp_schema.session import (
    Frame,
    InputReceived,
    InputRequested,
    ProtocolError,
    RequestReceived,
    ServerSession,
    SessionError,
)
from mcp_schema.shares import Share, ShareExceededError
from mcp_schema.subscriptions import LISTEN
from mcp_schema.tasks.notifications import open_listen

if TYPE_CHECKING:  # the driver holds its links; a link tells its driver
    from mcp_schema.gateway.bridge.links import Link

__all__ = ["MAX_UPSTREAMS", "MAX_UPSTREAMS_PER_KEY", "BridgeDriver", "sealer_from_env"]

MAX_UPSTREAMS = 32
"""Upstream sessions of the bridge at once, by default."""

MAX_UPSTREAMS_PER_KEY = 4
"""Of which one caller may hold, by default (a stdio one is a child process)."""

_SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_JSON = [("content-type", "application/json")]


class BridgeDriver(UpstreamTable):
    """The bridge's asyncio driver, whatever the transport upstream (see the
    module): `new_link` makes the connection of one upstream session.
    Reports go to ``findings``.

    * ``sealer``: seals the ``requestState`` (`sealer_from_env` by default).
    * ``principal``: who a request comes from, given its ASGI scope; by default
      the principal of the `Caller` its front door admitted (`caller_in`: the
      token's, with ``auth``), else None: every client is then one principal,
      told apart by capabilities.
    * ``max_upstreams``, ``max_upstreams_per_key``, ``idle_seconds``,
      ``pending``: the bounds (the upstream sessions' share is counted by
      the `Caller.key` of the front door's caller).
    """

    def __init__(
        self,
        findings: Findings,
        *,
        sealer: StateSealer | None = None,
        principal: Callable[[Scope], str | None] | None = None,
        max_upstreams: int = MAX_UPSTREAMS,
        max_upstreams_per_key: int = MAX_UPSTREAMS_PER_KEY,
        idle_seconds: float = IDLE_SECONDS,
        pending: PendingCalls | None = None,
    ) -> None:
        if not 0 < idle_seconds < float("inf"):
            raise ValueError(f"idle_seconds must be a positive number, not {idle_seconds!r}")
        self.share = Share(
            "upstream sessions",
            total=max_upstreams,
            per_key=min(max_upstreams_per_key, max_upstreams),
        )
        self.idle_seconds = float(idle_seconds)
        self.findings = findings
        self.sealer = sealer_from_env() if sealer is None else sealer
        self.principal = principal or principal_in
        self.max_upstreams = max_upstreams
        self.pending = PendingCalls() if pending is None else pending
        self.core: HandshakeBridge | None = None
        self.served: Served | None = None
        """What the probe found, once `adopt` was told."""
        self.links: OrderedDict[str, list[Link]] = OrderedDict()
        """The upstream sessions of each principal and capability set (`upstream_key`)."""

    def adopt(self, found: Served) -> None:
        """What the probe found of the server (`mcp_schema.gateway.probe`): the
        bridge's upstream version, or none needed (it serves 2026-07-28 itself)."""
        self.served = found
        if not found.stateless:
            if found.version is None:
                raise InternalError(
                    "the server's initialize answer was not read: nothing to bridge"
                )
            self.core = HandshakeBridge(
                version=found.version,
                info=dict(found.server_info or {}),
                capabilities=dict(found.capabilities),
                sealer=self.sealer,
                pending=self.pending,
            )

    def new_link(self, upstream: Upstream) -> Link:
        """The connection of a new upstream session (not started)."""
        raise NotImplementedError

    # -- one request -------------------------------------------------------------------------

    async def serve(
        self,
        scope: Scope,
        received: dict[str, str],
        body: bytes,
        receive: Receive,
        send: Send,
    ) -> None:
        """One 2026-07-28 request (``received``: its headers by lower-case
        name; ``body``: read whole) that the front door in front prechecked
        (`mcp_schema.http.precheck.Precheck`): no request reaches an upstream
        session without it."""
        core = self.core
        assert core is not None, "a server that speaks 2026-07-28 needs no bridge"
        self._expire()
        await self._idle_ended()
        principal = self.principal(scope)
        caller = caller_in(scope)
        owner = None if caller is None else caller.key  # whose share its upstream counts in
        front = core.front(principal)
        started: RequestReceived | None = None
        resumed: InputReceived | None = None
        for event in front.receive(body, headers=received):
            if isinstance(event, ProtocolError):
                error = event.error
                self.findings.refused("client", error, body)
                if not event.answered:
                    return await send_response(send, refusal(status_of(error), error))
                return await send_response(send, _answer(front.frames_to_send(), status_of(error)))
            if isinstance(event, RequestReceived):
                started = event
            elif isinstance(event, InputReceived):
                resumed = event
        if resumed is not None:
            return await self._resume(front, resumed, principal, receive, send)
        if started is None:  # a notification, or what the session answered itself
            frames = front.frames_to_send()
            return await send_response(send, _answer(frames) if frames else Response(202))
        try:
            child = await self._link(principal, started, owner)
        except McpError as error:
            front.fail(started, error)
            if isinstance(error, ShareExceededError):
                answer = _answer(front.frames_to_send(), 429)
                answer.headers.append(("retry-after", str(error.retry_after)))
                return await send_response(send, answer)
            return await send_response(send, _answer(front.frames_to_send(), 503))
        if started.method == LISTEN:
            return await self._listen(child, started, principal, receive, send)
        call = Call(front, started, child.upstream.token())
        try:
            params = core.upstream_params(started, call.token)
        except McpError as error:
            front.fail(started, error)
            return await send_response(send, _answer(front.frames_to_send()))
        if started.method in MAY_ASK:
            await child.lock.acquire()
            call.turn = True
            if not child.alive:  # it died while this call waited its turn
                self._release(child, call)
                front.fail(started, InternalError("Bad gateway: the server process exited"))
                return await send_response(send, _answer(front.frames_to_send(), 502))
        child.upstream.set_level(started.context.log_level)
        try:
            child.upstream.start(call, params)
        except SessionError as exc:  # the upstream session cannot take it (too many in flight)
            self._release(child, call)
            front.fail(started, InternalError(f"Service Unavailable: {exc!s:.300}"))
            return await send_response(send, _answer(front.frames_to_send(), 503))
        assert call.upstream_id is not None
        child.queues[call.upstream_id] = asyncio.Queue()
        child.flush()
        await self._drive(child, call, principal, receive, send)

    async def _link(
        self, principal: str | None, request: RequestReceived, owner: str | None
    ) -> Link:
        """The upstream session for ``request``: of its principal and capabilities;
        for a call that may ask, one whose turn is free (another session of
        theirs is started when every one is taken, within ``owner``'s share:
        `ShareExceededError` when there is none to wait for)."""
        core = self.core
        assert core is not None
        capabilities = projected_capabilities(request.context.client_capabilities, core.version)
        key = upstream_key(principal, capabilities)
        links = self.links.setdefault(key, [])
        self.links.move_to_end(key)
        usable = [link for link in links if link.alive or not link.ready.done()]  # or starting
        found = next((link for link in usable if not link.lock.locked()), None)
        if request.method not in MAY_ASK and usable:
            found = usable[0]
        if found is None and not await self._room(owner):
            if not usable:
                if not links:
                    self.links.pop(key, None)  # as it was
                raise self.share.refused(owner)
            found = usable[0]  # no room for another: this call waits for that one's turn
        if found is None:
            upstream = Upstream(key, core.version, capabilities, core.capabilities, GATEWAY_INFO)
            found = self.new_link(upstream)
            found.owner = owner
            self.links.setdefault(key, []).append(found)
            try:
                await found.start()
            except BaseException:
                self.gone(found)  # its place given back
                raise
        found.used = monotonic()
        return await self._initialized(found)

    async def _initialized(self, child: Link) -> Link:
        """``child`` once its session is initialized (every request waits for it)."""
        try:
            ready = await asyncio.wait_for(asyncio.shield(child.ready), ANSWER_SECONDS)
        except asyncio.TimeoutError:
            ready = False
        if not ready:
            self.gone(child)
            await child.close()
            raise InternalError("Bad gateway: the server did not initialize a session")
        return child

    async def _resume(
        self,
        front: ServerSession,
        event: InputReceived,
        principal: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        state = event.state if isinstance(event.state, dict) else {}
        call = self.pending.take(state.get("call"), principal)
        child = self._holder(call)
        if call is None or child is None or call.asked is None:
            error = InvalidParamsError(
                "Invalid params: $.params.requestState: the call it names is no longer pending "
                "(expired, answered, or held by another gateway replica)"
            )
            front.fail(event.request, error)
            return await send_response(send, _answer(front.frames_to_send()))
        call.front, call.request = front, event.request
        answer = answer_of(call, event.responses, child.upstream.version)
        asked, call.asked = call.asked, None
        if isinstance(answer, McpError):  # the client's error cannot be said as an input upstream
            self._cancel(child, call)
            front.fail(event.request, answer)
            return await send_response(send, _answer(front.frames_to_send()))
        try:
            child.upstream.client.provide_input(asked, {next(iter(asked.requests)): answer})
        except SessionError as exc:  # what the client answered is no answer in its version
            self._cancel(child, call)
            front.fail(
                event.request,
                InvalidParamsError(f"Invalid params: $.params.inputResponses: {exc!s:.300}"),
            )
            return await send_response(send, _answer(front.frames_to_send()))
        child.flush()
        if call.waiting:  # the server asked more meanwhile
            if not self._wait(call, principal):
                return await self._overloaded(child, call, send)
            ask(call, call.waiting.popleft())
            return await send_response(send, _answer(front.frames_to_send()))
        await self._drive(child, call, principal, receive, send)

    def _cancel(self, child: Link, call: Call) -> None:
        if call.upstream_id is not None:
            child.upstream.calls.pop(call.upstream_id, None)
            child.queues.pop(call.upstream_id, None)
            child.upstream.client.cancel(call.upstream_id, reason="the client went away")
            child.flush()
        self._release(child, call)

    def _release(self, child: Link, call: Call) -> None:
        if child.upstream.asking is call:
            child.upstream.asking = None
        if call.turn:  # once: a call released twice must not free another's turn
            call.turn = False
            child.lock.release()

    def _wait(self, call: Call, principal: str | None) -> bool:
        """Hold ``call`` for its client's retry (False: too many wait): it is
        cancelled upstream when it expires."""
        if self.pending.put(call, principal) is None:
            return False
        asyncio.get_running_loop().call_later(self.pending.seconds, self._expire)
        return True

    def _expire(self) -> None:
        for call in self.pending.expired():
            child = self._holder(call)
            if child is not None:
                self._cancel(child, call)

    async def _overloaded(self, child: Link, call: Call, send: Send) -> None:
        self._cancel(child, call)
        call.front.fail(
            call.request, InternalError("Service Unavailable: too many calls wait for input")
        )
        return await send_response(send, _answer(call.front.frames_to_send(), 503))

    async def _drive(
        self, child: Link, call: Call, principal: str | None, receive: Receive, send: Send
    ) -> None:
        """Carry ``call``'s upstream events to its client until it is answered or asks."""
        assert call.upstream_id is not None
        if call.request.method in MAY_ASK:
            child.upstream.asking = call
        queue = child.queues[call.upstream_id]
        left = asyncio.ensure_future(until_disconnect(receive))
        started = False
        try:
            while True:
                got = asyncio.ensure_future(queue.get())
                await asyncio.wait({got, left}, return_when=asyncio.FIRST_COMPLETED)
                if not got.done():
                    got.cancel()
                    self._cancel(child, call)
                    return
                event = got.result()
                if event is None:  # the child is gone
                    error = InternalError("Bad gateway: the server process exited before answering")
                    self.findings.found(error.message, b"", error.code)
                    self._release(child, call)
                    call.front.fail(call.request, error)
                    frames = call.front.frames_to_send()
                    if not started:
                        return await send_response(send, _answer(frames, 502))
                    return await send_body(send, sse_events([f.data for f in frames]))
                if isinstance(event, InputRequested) and call.asked is None:
                    if not self._wait(call, principal):
                        return await self._overloaded(child, call, send)
                try:
                    outcome = carry(call, event)
                except SessionError as exc:  # an ask the client's 2026-07-28 request cannot carry
                    self._cancel(child, call)
                    call.front.fail(call.request, InternalError(f"Bad gateway: {exc!s:.300}"))
                    outcome = "answered"
                frames = call.front.frames_to_send()
                done = outcome != "sent"
                if outcome == "answered":
                    child.queues.pop(call.upstream_id, None)
                    self._release(child, call)
                if not frames and not done:
                    continue
                if not started and done and len(frames) == 1:
                    return await send_response(send, _answer(frames))
                if not started:
                    await send(start_message(200, _SSE))
                    started = True
                await send_body(send, sse_events([f.data for f in frames]), more=not done)
                if done:
                    return
        finally:
            left.cancel()
            child.used = monotonic()  # idle from the end of its last call

    async def _listen(
        self,
        child: Link,
        request: RequestReceived,
        principal: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            listen = open_listen(child.upstream.subscriptions, request, principal)
        except McpError as error:
            return await send_response(send, refusal(status_of(error), error, request.id))
        resources = child.upstream.server_capabilities.get("resources")
        subscribes = isinstance(resources, dict) and bool(resources.get("subscribe"))
        uris = list(listen.filter.resource_subscriptions) if subscribes else []
        for uri in uris:
            child.subscribed[uri] = child.subscribed.get(uri, 0) + 1
            if child.subscribed[uri] == 1:
                child.upstream.client.request("resources/subscribe", {"uri": uri})
        child.flush()
        child.listens += 1
        ready = asyncio.Event()
        listen.on_ready = ready.set
        left = asyncio.ensure_future(until_disconnect(receive))
        await send(start_message(200, _SSE))
        try:
            while True:
                written = listen.take()
                if written:
                    await send_body(send, sse_events(written), more=True)
                if listen.done:
                    break
                ready.clear()
                waiting = asyncio.ensure_future(ready.wait())
                await asyncio.wait({waiting, left}, return_when=asyncio.FIRST_COMPLETED)
                waiting.cancel()
                if left.done():
                    listen.abandon()
                    return
            await send_body(send, b"")
        finally:
            left.cancel()
            child.listens -= 1
            child.used = monotonic()
            for uri in uris:
                child.subscribed[uri] -= 1
                if not child.subscribed[uri]:
                    del child.subscribed[uri]
                    if child.alive:
                        child.upstream.client.request("resources/unsubscribe", {"uri": uri})
            child.flush()


def _answer(frames: list[Frame], status: int | None = None) -> Response:
    """One frame as a JSON answer (in the status its error, if any, is given):
    the session said what it wrote (`Frame`), so nothing it wrote is read again."""
    (frame,) = frames
    if status is None:  # the session's own frame: its error, if any, is a member
        status = code_status(frame.error)
    return Response(status, list(_JSON), frame.data)
