"""`BridgeDriver`: the asyncio driver of the era bridge for 2026-07-28 clients
in front of a server that speaks only the handshake era, over any transport
upstream (`mcp_schema.gateway.bridge.links.StdioBridge`: a child process per
upstream session; `mcp_schema.gateway.bridge.links.HttpBridge`: an HTTP session
each), driving the sans-IO parts of `mcp_schema.gateway.bridge.stateless`.

Per 2026-07-28 request (its ``_meta`` read by a front `ServerSession`): an
upstream session of its principal and capabilities, started and initialized
when first needed; for a call that may ask, one whose turn is free (another
is started when every one's is taken: at most ``max_upstreams`` sessions at
once, the least recently used idle one ended first; past that the call
waits its turn, and 503 when there is no session to wait for); the
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
from typing import TYPE_CHECKING

from mcp_schema.errors import InternalError, InvalidParamsError, McpError
from mcp_schema.gateway.bridge.counts import BridgeCounts
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
from mcp_schema.http.caller import principal_in
from mcp_schema.http.rules import code_status, refusal, status_of
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
from mcp_schema.subscriptions import LISTEN
from mcp_schema.tasks.notifications import open_listen
from mcp_schema.telemetry import telemetry_for

if TYPE_CHECKING:  # the driver holds its links; a link tells its driver
    from mcp_schema.gateway.bridge.links import Link
    from mcp_schema.telemetry import Telemetry

__all__ = ["MAX_UPSTREAMS", "BridgeDriver", "sealer_from_env"]

MAX_UPSTREAMS = 32
"""Upstream sessions of the bridge at once, by default."""

_SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_JSON = [("content-type", "application/json")]


class BridgeDriver:
    """The bridge's asyncio driver, whatever the transport upstream (see the
    module): `new_link` makes the connection of one upstream session.
    Reports go to ``findings``.

    * ``sealer``: seals the ``requestState`` (`sealer_from_env` by default).
    * ``principal``: who a request comes from, given its ASGI scope; by default
      the principal of the `Caller` its front door admitted (`caller_in`: the
      token's, with ``auth``), else None: every client is then one principal,
      told apart by capabilities.
    * ``max_upstreams``, ``pending``: the bounds.
    * ``telemetry``: where what it carries and refuses is counted (`BridgeCounts`).
    """

    def __init__(
        self,
        findings: Findings,
        *,
        sealer: StateSealer | None = None,
        principal: Callable[[Scope], str | None] | None = None,
        max_upstreams: int = MAX_UPSTREAMS,
        pending: PendingCalls | None = None,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        self.findings = findings
        self.counts = BridgeCounts(telemetry_for(telemetry), "stateless")
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
                telemetry=self.counts.telemetry or False,
            )

    async def aclose(self) -> None:
        children = [link for links in self.links.values() for link in links]
        self.links.clear()
        await asyncio.gather(*(c.close() for c in children))

    def new_link(self, upstream: Upstream) -> Link:
        """The connection of a new upstream session (not started)."""
        raise NotImplementedError

    def gone(self, child: Link) -> None:
        """``child`` is over: forgotten (its key too, when it was the last)."""
        links = self.links.get(child.upstream.key, [])
        if child in links:
            links.remove(child)
        if not links:
            self.links.pop(child.upstream.key, None)

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
        principal = self.principal(scope)
        front = core.front(principal)
        started: RequestReceived | None = None
        resumed: InputReceived | None = None
        for event in front.receive(body, headers=received):
            if isinstance(event, ProtocolError):
                error = event.error
                self.findings.refused("client", error, body)
                self.counts.refused("received", error.code)
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
            child = await self._link(principal, started)
        except McpError as error:
            front.fail(started, error)
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
        child.upstream.follow_level(started.context.log_level)
        try:
            child.upstream.start(call, params)
        except SessionError as exc:  # the upstream session cannot take it (too many in flight)
            self._release(child, call)
            front.fail(started, InternalError(f"Service Unavailable: {exc!s:.300}"))
            return await send_response(send, _answer(front.frames_to_send(), 503))
        assert call.upstream_id is not None
        child.queues[call.upstream_id] = asyncio.Queue()
        self.counts.carried("received")
        child.flush()
        await self._drive(child, call, principal, receive, send)

    async def _link(self, principal: str | None, request: RequestReceived) -> Link:
        """The upstream session for ``request``: of its principal and capabilities;
        for a call that may ask, one whose turn is free (another session of
        theirs is started when every one is taken, room permitting)."""
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
        if found is None and not await self._room():
            if not usable:
                raise InternalError(
                    "Service Unavailable: every upstream session is busy; try later"
                )
            found = usable[0]  # no room for another: this call waits for that one's turn
        if found is None:
            upstream = Upstream(key, core.version, capabilities, core.capabilities, GATEWAY_INFO)
            found = self.new_link(upstream)
            self.links.setdefault(key, []).append(found)
            await found.start()
        return await self._initialized(found)

    async def _room(self) -> bool:
        """Whether one more upstream session may start (the least recently used
        idle one is ended for it when there are ``max_upstreams``)."""
        if sum(len(links) for links in self.links.values()) < self.max_upstreams:
            return True
        idle = next((link for links in self.links.values() for link in links if link.idle), None)
        if idle is None:
            return False
        self.gone(idle)
        await idle.close()
        return True

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
        self.counts.carried("received")
        child.flush()
        if call.waiting:  # the server asked more meanwhile
            if not self._wait(call, principal):
                return await self._overloaded(child, call, send)
            ask(call, call.waiting.popleft())
            return await send_response(send, _answer(front.frames_to_send()))
        await self._drive(child, call, principal, receive, send)

    def _holder(self, call: Call | None) -> Link | None:
        if call is None:
            return None
        return next(
            (
                c
                for links in self.links.values()
                for c in links
                if call.upstream_id in c.queues
                and c.upstream.calls.get(call.upstream_id or 0) is call
            ),
            None,
        )

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
                self.counts.listed([event])
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
                self.counts.carried("sent", len(frames))
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
        self.counts.carried("received")
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
                    self.counts.carried("sent", len(written))
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
