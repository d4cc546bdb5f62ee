"""`BridgeDriver`: the asyncio side of the era bridge for 2026-07-28 clients
in front of a server that speaks only the handshake era, over any transport
upstream (`mcp_schema.gateway.bridge.links.StdioBridge`: a child process per
upstream session; `mcp_schema.gateway.bridge.links.HttpBridge`: an HTTP session
each), driving the sans-IO parts of `mcp_schema.gateway.bridge.stateless`.

The clients' side is the package's own `mcp_schema.http.Endpoint`, serving
2026-07-28 alone through `mcp_schema.http.asgi.App`'s kit (`BridgeDriver.serve`:
a request the front door in front admitted and read): the endpoint reads each
request (its ``_meta``, its headers, a retry's sealed ``requestState``) and
answers what its session answers itself; the driver is its ``async`` handler,
carrying each call. Per call: an upstream session of its principal and
capabilities, started and initialized when first needed; for a call that may
ask, one whose turn is free (another is started when every one's is taken: at
most ``max_upstreams`` sessions at once, ``max_upstreams_per_key`` per caller
(`mcp_schema.shares`), its own least recently used idle one ended first, never
another caller's; past that the call waits its turn on one of its sessions,
and is refused, 429 with ``Retry-After``, when it has none; a session idle for
``idle_seconds`` ends); the request projected to its version; the answer
projected back. The endpoint answers in JSON when nothing comes before the
answer, else as an event stream carrying the call's progress and log messages
first, and bounds the wait (``answer_seconds``; then 504). The client leaving
before the answer cancels the handler's task, which cancels the upstream call.

``subscriptions/listen`` is the endpoint's own stream (`mcp_schema.http.listen`);
the driver is told of each (`Endpoint.listened`) and feeds it from the
upstream session of its principal and capabilities: that session's
list-changed notifications, and its ``resources/subscribe`` for each URI
the filter names (when the server declares ``resources.subscribe``).

A pending call (waiting for the client's input) is held by this process:
several replicas need affinity for the retry (the ``requestState`` is
sealed, and refused by a replica without the call, -32602). What the
endpoint refuses of a client's request is reported (`Findings.refused`).
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection
from time import monotonic
from typing import TYPE_CHECKING

from mcp_schema.errors import (
    BadGatewayError,
    GatewayTimeoutError,
    InvalidParamsError,
    McpError,
    UnavailableError,
)
from mcp_schema.gateway.bridge.counts import BridgeCounts
from mcp_schema.gateway.bridge.stateless import (
    FRONT_VERSION,
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
from mcp_schema.http.adapter import BODY_SECONDS, Message, Receive, Send
from mcp_schema.http.answers import ANSWER_SECONDS as CALL_SECONDS
from mcp_schema.http.asgi import App
from mcp_schema.http.caller import Caller
from mcp_schema.http.endpoint import Endpoint
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.sessions import IDLE_SECONDS
from mcp_schema.request_state import StateSealer
from mcp_schema.session import (
    Event,
    InputReceived,
    InputRequested,
    RequestReceived,
    ServerSession,
    SessionError,
)
from mcp_schema.shares import Share
from mcp_schema.subscriptions import Listen, Subscriptions, supported_by
from mcp_schema.telemetry import telemetry_for

if TYPE_CHECKING:  # the driver holds its links; a link tells its driver
    from mcp_schema.gateway.bridge.links import Link
    from mcp_schema.telemetry import Telemetry

__all__ = ["MAX_UPSTREAMS", "MAX_UPSTREAMS_PER_KEY", "BridgeDriver", "sealer_from_env"]

MAX_UPSTREAMS = 32
"""Upstream sessions of the bridge at once, by default."""

MAX_UPSTREAMS_PER_KEY = 4
"""Of which one caller may hold, by default (a stdio one is a child process)."""


class _Listens(Subscriptions):
    """The endpoint's listens, each one's end told to the driver (``ended``:
    its upstream session stops feeding it)."""

    def __init__(self, ended: Callable[[Listen], None], supported: Collection[str]) -> None:
        super().__init__(supported=supported)
        self._ended = ended

    def _forget(self, listen: Listen) -> None:
        super()._forget(listen)
        self._ended(listen)


class BridgeDriver(UpstreamTable):
    """The bridge's asyncio driver, whatever the transport upstream (see the
    module): `new_link` makes the connection of one upstream session.
    Reports go to ``findings``.

    * ``sealer``: seals the ``requestState`` (`sealer_from_env` by default).
    * ``precheck``: the front door's rules, which the endpoint is given (its
      path, hosts, origins, ``max_body``, ``auth``, ``principal``), so that a
      request the door lets through is not refused there by other rules; by
      default ``Precheck(sessions=False)``. A request's principal is its
      `Caller`'s: every client is one principal without ``auth`` or a hook,
      told apart by capabilities.
    * ``max_upstreams``, ``max_upstreams_per_key``, ``idle_seconds``,
      ``pending``: the bounds (the upstream sessions' share is counted by
      the `Caller.key` of the front door's caller); ``answer_seconds``: how
      long a call's answer is awaited (the endpoint's bound); ``body_seconds``:
      the time a body has to arrive whole (`HttpBridge` reads it).
    """

    def __init__(
        self,
        findings: Findings,
        *,
        sealer: StateSealer | None = None,
        precheck: Precheck | None = None,
        max_upstreams: int = MAX_UPSTREAMS,
        max_upstreams_per_key: int = MAX_UPSTREAMS_PER_KEY,
        idle_seconds: float = IDLE_SECONDS,
        pending: PendingCalls | None = None,
        answer_seconds: float = CALL_SECONDS,
        body_seconds: float | None = BODY_SECONDS,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        if not 0 < idle_seconds < float("inf"):
            raise ValueError(f"idle_seconds must be a positive number, not {idle_seconds!r}")
        per_key = min(max_upstreams_per_key, max_upstreams)
        self.share = Share("upstream sessions", total=max_upstreams, per_key=per_key)
        self.idle_seconds = float(idle_seconds)
        self.findings = findings
        self.counts = BridgeCounts(telemetry_for(telemetry), "stateless")
        self.share.observe(self.counts.telemetry)
        self.sealer = sealer_from_env() if sealer is None else sealer
        self.precheck = Precheck(sessions=False) if precheck is None else precheck
        self.max_upstreams = max_upstreams
        self.pending = PendingCalls() if pending is None else pending
        self.answer_seconds, self.body_seconds = answer_seconds, body_seconds
        self.core: HandshakeBridge | None = None
        self.app: App | None = None
        """The clients' side (the endpoint, in `App`'s kit), once `adopt` built it."""
        self.served: Served | None = None
        """What the probe found, once `adopt` was told."""
        self.links: OrderedDict[str, list[Link]] = OrderedDict()
        """The upstream sessions of each principal and capability set (`upstream_key`)."""
        self._fed: dict[Listen, tuple[Link, list[str]]] = {}
        """The listens an upstream session feeds, each with the URIs it subscribed."""
        self._feeding: dict[Listen, asyncio.Task[None]] = {}

    def adopt(self, found: Served) -> None:
        """What the probe found of the server (`mcp_schema.gateway.probe`): the
        bridge's upstream version and the endpoint serving its clients, or
        none needed (it serves 2026-07-28 itself)."""
        self.served = found
        if found.stateless:
            return
        if found.version is None:
            raise BadGatewayError("the server's initialize answer was not read: nothing to bridge")
        core = self.core = HandshakeBridge(
            version=found.version,
            info=dict(found.server_info or {}),
            capabilities=dict(found.capabilities),
            sealer=self.sealer,
            pending=self.pending,
        )
        endpoint = Endpoint(  # its sessions are those `HandshakeBridge.front` makes
            self._serve,
            info=core.info,
            capabilities=core.capabilities,
            versions=[FRONT_VERSION],
            request_state=self.sealer,
            subscriptions=_Listens(self._unlisten, supported_by(core.capabilities)),
            answer_seconds=self.answer_seconds,
            telemetry=self.counts.telemetry or False,
            **self.precheck.endpoint_options(),
        )
        endpoint.listened = self._listened
        endpoint.late = GatewayTimeoutError  # the upstream did not answer: 504
        self.app = App(endpoint, body_seconds=self.body_seconds)

    async def aclose(self) -> None:
        if self.app is not None:
            await self.app.endpoint.aclose()  # every call's task, every listen
        await super().aclose()

    def new_link(self, upstream: Upstream) -> Link:
        """The connection of a new upstream session (not started)."""
        raise NotImplementedError

    # -- one request -------------------------------------------------------------------------

    async def serve(
        self,
        method: str,
        received: dict[str, str],
        body: bytes,
        receive: Receive,
        send: Send,
        caller: Caller,
    ) -> None:
        """One 2026-07-28 request a front door in front admitted by this
        bridge's rules (sent by ``caller``) and read (``received``: its
        headers by lower-case name; ``body``: whole, at most the precheck's
        ``max_body``), answered by the endpoint (`App.answer`): no request
        reaches an upstream session without it."""
        app = self.app
        assert app is not None, "a server that speaks 2026-07-28 needs no bridge"
        self._expire()
        await self._idle_ended()
        await app.answer(method, received, body, receive, self._reporting(send, body), caller)

    def _reporting(self, send: Send, body: bytes) -> Send:
        """``send``, reporting the client's request ``body`` when the endpoint
        refuses it (a status of 400 or more: the error it answered)."""
        status = 0

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif status >= 400:
                status = 0  # its first chunk holds the error: a refusal is one body
                self._refused(message.get("body", b""), body)
            await send(message)

        return sent

    def _refused(self, answer: bytes, body: bytes) -> None:
        try:
            error = json.loads(answer).get("error")
        except (ValueError, AttributeError):
            return
        if isinstance(error, dict):
            refused = McpError.from_error_object(error)
            self.findings.refused("client", refused, body)
            self.counts.refused("received", refused.code)

    def _serve(self, front: ServerSession, event: Event) -> Awaitable[None] | None:
        """The endpoint's handler: a call carried, or a retry going on."""
        if isinstance(event, RequestReceived):
            return self._call(front, event)
        if isinstance(event, InputReceived):
            return self._resume(front, event)
        return None  # a cancellation cancels the call's task (the endpoint does)

    async def _call(self, front: ServerSession, started: RequestReceived) -> None:
        core = self.core
        assert core is not None
        child = await self._link(front.principal, started, _owner(started))
        call = Call(front, started, child.upstream.token())
        params, checked = core.upstream_request(started, call.token)
        if started.method in MAY_ASK:
            await child.lock.acquire()
            call.turn = True
            if not child.alive:  # it died while this call waited its turn
                self._release(child, call)
                raise BadGatewayError("Bad gateway: the server process exited")
        child.upstream.set_level(started.context.log_level)
        try:
            child.upstream.start(call, params, checked)
        except SessionError as exc:  # the upstream session cannot take it (too many in flight)
            self._release(child, call)
            raise UnavailableError(f"Service Unavailable: {exc!s:.300}") from None
        assert call.upstream_id is not None
        child.queues[call.upstream_id] = asyncio.Queue()
        self.counts.carried("received")
        child.flush()
        await self._drive(child, call)

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
            raise BadGatewayError("Bad gateway: the server did not initialize a session")
        return child

    async def _resume(self, front: ServerSession, event: InputReceived) -> None:
        state = event.state if isinstance(event.state, dict) else {}
        principal = front.principal
        call = self.pending.take(state.get("call"), principal)
        child = self._holder(call)
        if call is None or child is None or call.asked is None:
            raise InvalidParamsError(
                "Invalid params: $.params.requestState: the call it names is no longer pending "
                "(expired, answered, or held by another gateway replica)"
            )
        call.front, call.request = front, event.request
        answer = answer_of(call, event.responses, child.upstream.version)
        asked, call.asked = call.asked, None
        if isinstance(answer, McpError):  # the client's error cannot be said as an input upstream
            self._cancel(child, call)
            raise answer
        try:
            child.upstream.client.provide_input(asked, {next(iter(asked.requests)): answer})
        except SessionError as exc:  # what the client answered is no answer in its version
            self._cancel(child, call)
            raise InvalidParamsError(
                f"Invalid params: $.params.inputResponses: {exc!s:.300}"
            ) from None
        self.counts.carried("received")
        child.flush()
        if call.waiting:  # the server asked more meanwhile
            self._waits(child, call, principal)
            ask(call, call.waiting.popleft())
            return
        await self._drive(child, call)

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

    def _waits(self, child: Link, call: Call, principal: str | None) -> None:
        """``call`` held for its client's retry, or -32603 when too many wait."""
        if not self._wait(call, principal):
            self._cancel(child, call)
            raise UnavailableError("Service Unavailable: too many calls wait for input")

    async def _drive(self, child: Link, call: Call) -> None:
        """Carry ``call``'s upstream events to its front session until it is
        answered or asks (the endpoint routes what the session writes); a
        cancellation (the client left, the bound passed) cancels it upstream."""
        assert call.upstream_id is not None
        if call.request.method in MAY_ASK:
            child.upstream.asking = call
        queue = child.queues[call.upstream_id]
        try:
            while True:
                event = await queue.get()
                self.counts.listed([event])
                if event is None:  # the child is gone
                    error = BadGatewayError(
                        "Bad gateway: the server process exited before answering"
                    )
                    self.findings.found(error.message, b"", error.code)
                    self._release(child, call)
                    raise error
                if isinstance(event, InputRequested) and call.asked is None:
                    self._waits(child, call, call.front.principal)
                try:
                    outcome = carry(call, event)
                except SessionError as exc:  # an ask the client's 2026-07-28 request cannot carry
                    self._cancel(child, call)
                    raise BadGatewayError(f"Bad gateway: {exc!s:.300}") from None
                self.counts.carried("sent")
                if outcome == "answered":
                    child.queues.pop(call.upstream_id, None)
                    self._release(child, call)
                if outcome != "sent":
                    return
        except asyncio.CancelledError:
            if call.upstream_id in child.queues:  # not answered: cancelled upstream too
                self._cancel(child, call)
            raise
        finally:
            child.used = monotonic()  # idle from the end of its last call

    # -- listens -------------------------------------------------------------------------

    def _listened(self, request: RequestReceived, listen: Listen) -> None:
        """A listen the endpoint opened: fed once its upstream session is ready."""
        self._feeding[listen] = asyncio.ensure_future(self._feed(request, listen))

    async def _feed(self, request: RequestReceived, listen: Listen) -> None:
        try:
            child = await self._link(listen.principal or None, request, _owner(request))
        except McpError as error:
            return listen.cancel(error.message)
        finally:
            self._feeding.pop(listen, None)
        if listen.done:
            return  # the client left meanwhile
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
        child.upstream.listens.add(listen)
        self._fed[listen] = (child, uris)

    def _unlisten(self, listen: Listen) -> None:
        """``listen`` is over: its upstream session no longer feeds it."""
        feeding = self._feeding.pop(listen, None)
        if feeding is not None:
            feeding.cancel()
        fed = self._fed.pop(listen, None)
        if fed is None:
            return
        child, uris = fed
        child.upstream.listens.discard(listen)
        child.listens -= 1
        child.used = monotonic()
        for uri in uris:
            child.subscribed[uri] -= 1
            if not child.subscribed[uri]:
                del child.subscribed[uri]
                if child.alive:
                    child.upstream.client.request("resources/unsubscribe", {"uri": uri})
        if child.alive:
            child.flush()


def _owner(request: RequestReceived) -> str | None:
    """The `Caller.key` of ``request``'s client (whose share its upstream counts in)."""
    caller = request.context.caller
    return None if caller is None else caller.key
