"""`HandshakeFront`: the ASGI side of the era bridge's first direction,
handshake-era clients in front of a server that serves 2026-07-28 only
(needs the ``http`` extra: its upstream client is
`mcp_schema.gateway.http_upstream`'s).

The clients' side is the package's own Streamable HTTP server
(`mcp_schema.http.Endpoint` served by `mcp_schema.http.asgi.App`), serving
the handshake-era versions only: it answers ``initialize`` with what the
upstream's discover said, mints the ``Mcp-Session-Id``, answers ``ping``
and ``logging/setLevel``, serves the GET stream and DELETE, and checks every
message as any server of the package does. Its handler hands each session's
events to that session's `mcp_schema.gateway.bridge.handshake.StatelessCalls`,
and this module runs the upstream exchanges those ask for (each answer
read as it arrives, with the gateway's credentials) and routes what they bring back to the client's
streams, as the endpoint routes what a handler sends.

* One upstream ``subscriptions/listen`` (`SharedListen`), opened with the
  first session and kept while any lives (opened again, after
  `RELISTEN_SECONDS`, when the upstream ends it), hears the list changes the
  server offers for every session: each goes to every session's GET stream
  (dropped while none is open, as the endpoint drops any).
* A session ends at DELETE, or when it has been idle for ``idle_seconds``
  (no request, no open stream): its upstream exchanges are cancelled. At
  most ``max_sessions`` are open, ``max_sessions_per_key`` per caller
  (`mcp_schema.shares`, as `mcp_schema.http.MemorySessions` keeps them):
  an ``initialize`` past either is refused, 429 with ``Retry-After``, and
  no other client's session is ended to make room.
* What is refused to a client because it cannot be carried is reported, one
  line each (`mcp_schema.proxy.ReportLog`).
* Every request is prechecked by the endpoint's rules, which are the
  ``precheck`` given (the gateway's in front: its path, hosts and origins),
  so a request the gateway lets through is not refused here by other rules.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Mapping
from time import monotonic
from typing import TYPE_CHECKING, Any

from mcp_schema.errors import InternalError, clip
from mcp_schema.gateway.bridge.counts import BridgeCounts
from mcp_schema.gateway.bridge.handshake import BRIDGED_VERSION, StatelessCalls
from mcp_schema.gateway.bridge.shared_listen import SharedListen
from mcp_schema.gateway.http_upstream import Credentials, exchanged
from mcp_schema.gateway.probe import Served
from mcp_schema.http import Endpoint
from mcp_schema.http.adapter import send_response
from mcp_schema.http.asgi import App, Receive, Scope, Send
from mcp_schema.http.binding import Post
from mcp_schema.http.caller import Caller
from mcp_schema.http.h1 import Target, UpstreamError
from mcp_schema.http.pool import HttpClient
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.routing import route
from mcp_schema.http.sessions import MAX_SESSIONS, LiveSession, MemorySessions, stream_key
from mcp_schema.proxy.reports import ReportLog
from mcp_schema.session import (
    CancelRequested,
    Event,
    InputReceived,
    InputRequested,
    Negotiated,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    ServerSession,
)
from mcp_schema.telemetry import telemetry_for
from mcp_schema.versions import HANDSHAKE_VERSIONS

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

__all__ = ["IDLE_SECONDS", "RELISTEN_SECONDS", "HandshakeFront", "handshake_capabilities"]

IDLE_SECONDS = 3600.0
"""How long a bridged session may go unused before it ends."""

RELISTEN_SECONDS = 1.0
"""How long the shared listen waits before it is opened again, once the upstream ended it."""

_LOG = logging.getLogger("mcp_schema.gateway")

_CARRIED = (ResponseReceived, InputRequested, NotificationReceived)
"""What of an upstream answer goes on to the client (`BridgeCounts`)."""


def handshake_capabilities(capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """The upstream's 2026-07-28 capabilities as the bridge declares them to
    a handshake-era client: without ``extensions`` (the bridge carries
    none) and without ``resources.subscribe`` (``resources/subscribe`` has
    no 2026-07-28 request to become)."""
    declared = {k: v for k, v in capabilities.items() if k != "extensions"}
    resources = declared.get("resources")
    if isinstance(resources, Mapping) and "subscribe" in resources:
        declared["resources"] = {k: v for k, v in resources.items() if k != "subscribe"}
    return declared


class _Bridged:
    """One client session: its live session, its calls, and the upstream
    exchanges in flight (by upstream request id)."""

    def __init__(self, live: LiveSession, calls: StatelessCalls) -> None:
        self.live, self.calls = live, calls
        self.exchanges: dict[int, asyncio.Task[None]] = {}


class _Sessions(MemorySessions):
    """The front's sessions: `mcp_schema.http.MemorySessions` (the shares,
    the idle expiry), the front told of every session added and ended (its
    upstream exchanges are cancelled)."""

    def __init__(
        self,
        added: Callable[[LiveSession], None],
        ended: Callable[[LiveSession], None],
        max_sessions: int,
        per_key: int | None,
        idle: float,
    ) -> None:
        super().__init__(max_sessions, max_per_key=per_key, idle_seconds=idle, clock=_now)
        self._added, self._ended = added, ended

    def add(self, session: LiveSession) -> None:
        super().add(session)  # a ShareExceededError: nothing kept, nothing told
        self._added(session)

    def remove(self, session_id: str) -> LiveSession | None:
        found = super().remove(session_id)
        if found is not None:
            self._ended(found)
        return found

    def close(self) -> None:
        sessions = [live for live, _ in self._sessions.values()]
        super().close()
        for session in sessions:
            self._ended(session)


def _now() -> float:
    return monotonic()  # looked up at each call: what tests move by hand


class HandshakeFront:
    """Handshake-era clients' sessions, carried to the 2026-07-28 server at
    ``upstream`` whose probe found ``served`` (see the module). ``http``:
    what gives the `mcp_schema.http.pool.HttpClient` to send with (the
    gateway's); ``credentials``: what its requests carry (none by default).
    ``max_sessions``, ``max_sessions_per_key``, ``idle_seconds``: the
    sessions' bounds (see the module; per caller, a tenth by default).
    ``reports``: where refusals are reported. ``headers``: sent upstream
    with every request. ``precheck``: the rules every request is checked by
    (by default ``Precheck(path=path)``). ``telemetry``: its sessions' and
    where what it carries and refuses is counted (`BridgeCounts`)."""

    def __init__(
        self,
        upstream: str,
        served: Served,
        http: Callable[[], HttpClient],
        *,
        credentials: Credentials | None = None,
        reports: ReportLog | None = None,
        headers: Mapping[str, str] | None = None,
        max_sessions: int = MAX_SESSIONS,
        max_sessions_per_key: int | None = None,
        idle_seconds: float = IDLE_SECONDS,
        path: str = "/mcp",
        precheck: Precheck | None = None,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        if BRIDGED_VERSION not in served.stateless:
            raise ValueError(f"the upstream does not serve {BRIDGED_VERSION}")
        self.upstream, self.served, self._http = upstream, served, http
        self._target, self._credentials = Target.of(upstream), credentials or Credentials()
        self.reports, self.headers = reports, dict(headers or {})
        self.sessions = _Sessions(
            self._opened, self._ended, max_sessions, max_sessions_per_key, idle_seconds
        )
        rules = Precheck(path=path) if precheck is None else precheck
        resolved = telemetry_for(telemetry)
        self.counts = BridgeCounts(resolved, "handshake")
        self.endpoint = Endpoint(
            self._serve,
            info=served.server_info or {"name": "mcp-schema-gateway", "version": "1"},
            capabilities=handshake_capabilities(served.capabilities),
            instructions=served.instructions,
            versions=HANDSHAKE_VERSIONS,
            handler_version=BRIDGED_VERSION,
            sessions=self.sessions,
            **rules.endpoint_options(),
            telemetry=resolved or False,
        )
        self.app = App(self.endpoint)
        self._bridged: dict[int, _Bridged] = {}
        """By the id() of each session's `ServerSession`."""
        self._listen: asyncio.Task[None] | None = None
        """The shared listen's driver, while any session lives."""
        self._opening: dict[int, LiveSession] = {}
        """Sessions added whose ``initialize`` the handler has not seen yet
        (the endpoint adds a session, then runs its events at once)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    async def serve(
        self,
        method: str,
        received: dict[str, str],
        body: bytes,
        receive: Receive,
        send: Send,
        caller: Caller,
    ) -> None:
        """A request a front door in front admitted by this front's rules (sent
        by ``caller``) and read (``received``: its headers by lower-case name;
        ``body``: whole, at most the precheck's ``max_body``), answered without
        a second look but for its session, which must be the caller's."""
        refused = self.endpoint.bound(method, received, caller)
        if refused is not None:
            return await send_response(send, refused)
        await self.app.answer(method, received, body, receive, send, caller)

    def close(self) -> None:
        """End every session (the gateway is shutting down)."""
        self.endpoint.close()
        if self._listen is not None:
            self._listen.cancel()
            self._listen = None

    # -- the clients' events (the endpoint's handler) ------------------------------------

    def _serve(self, server: ServerSession, event: Event) -> None:
        bridged = self._bridged.get(id(server))
        if isinstance(event, Negotiated):
            live = self._opening.pop(id(server), None)
            if live is None:
                return
            bridged = _Bridged(live, StatelessCalls(server, event, headers=self.headers))
            self._bridged[id(server)] = bridged
            self._send(bridged, bridged.calls.start())
            if self._listen is None or self._listen.done():
                self._listen = asyncio.ensure_future(self._listening())
            return
        if bridged is None:  # not bridged (its initialize was not seen): nothing to carry to
            if isinstance(event, RequestReceived):
                server.fail(event, InternalError("Internal error: the session is not bridged"))
            return
        if isinstance(event, RequestReceived):
            self._send(bridged, bridged.calls.call(event))
        elif isinstance(event, InputReceived):
            self._send(bridged, bridged.calls.input(event))
        elif isinstance(event, CancelRequested):
            for rid in bridged.calls.cancel(event):
                task = bridged.exchanges.pop(rid, None)
                if task is not None:
                    task.cancel()  # the stream closed: in 2026-07-28 that cancels it
        elif isinstance(event, NotificationReceived):
            bridged.calls.notified(event)
        self._reported(bridged)

    def _opened(self, live: LiveSession) -> None:
        self._opening[id(live.server)] = live

    def _ended(self, live: LiveSession) -> None:
        self._opening.pop(id(live.server), None)
        bridged = self._bridged.pop(id(live.server), None)
        if bridged is None:
            return
        for task in bridged.exchanges.values():
            task.cancel()
        bridged.exchanges.clear()
        if not self._bridged and self._listen is not None:  # the last session: no one listens
            self._listen.cancel()
            self._listen = None

    # -- the upstream exchanges ----------------------------------------------------------

    def _send(self, bridged: _Bridged, posts: list[Post]) -> None:
        self.counts.carried("received", len(posts))
        for post in posts:
            task = asyncio.ensure_future(self._exchange(bridged, post))
            if post.request_id is not None:
                rid = post.request_id
                bridged.exchanges[rid] = task
                task.add_done_callback(functools.partial(_forget, bridged.exchanges, rid))

    async def _listening(self) -> None:
        """The shared listen, opened again while sessions remain (see the module)."""
        while self._bridged:
            listen = SharedListen(self.served.capabilities, self.headers)
            if not listen.asked:
                return  # the server offers no list change
            while posts := listen.posts():
                for post in posts:
                    try:  # a listen lasts: it is over once silent for the read timeout
                        await exchanged(
                            self._http(),
                            self._target,
                            post,
                            functools.partial(listen.reply, post),
                            functools.partial(self._changed, listen),
                            self._credentials,
                        )
                    except UpstreamError as exc:
                        _LOG.info("the shared listen failed: %s", clip(exc.message))
            await asyncio.sleep(RELISTEN_SECONDS)

    def _changed(self, listen: SharedListen, events: list[Event]) -> None:
        """Each list change the shared listen heard, told to every session."""
        for method in listen.read(events):
            for bridged in self._bridged.values():
                server = bridged.live.server
                server.notify(method)  # to no request: the GET stream
                self.counts.carried("sent")
                route(bridged.live, server.frames_to_send(), None)

    async def _exchange(self, bridged: _Bridged, post: Post) -> None:
        binding = bridged.calls.binding
        try:
            await exchanged(
                self._http(),
                self._target,
                post,
                functools.partial(binding.reply, post),
                functools.partial(self._carry, bridged, post),
                self._credentials,
            )
        except UpstreamError as exc:
            reason = clip(exc.message)
            bridged.calls.unreached(post, reason)
            self._carry(bridged, post, binding.lost(post, reason))

    def _carry(self, bridged: _Bridged, post: Post, events: list[Event]) -> None:
        """What the upstream's answer brought, to the client's streams; what it asks, sent."""
        if not events or self._bridged.get(id(bridged.live.server)) is not bridged:
            return  # nothing, or the session is over
        calls = bridged.calls
        self.counts.listed(events)
        request = calls.call_of(post)
        posts = calls.answer(post, events)
        context = None if request is None else stream_key(request.id)
        # The endpoint's own routing: a late answer and the server's asks go
        # to the request's stream exactly as a handler's would.
        route(bridged.live, bridged.live.server.frames_to_send(), context)
        self._send(bridged, posts)
        # What came for a client's call went to it, but what was refused
        # (reported: one finding each); the answers to the bridge's own are not carried.
        carried = 0 if request is None else sum(isinstance(e, _CARRIED) for e in events)
        self.counts.carried("sent", max(0, carried - len(calls.findings)))
        self._reported(bridged)

    def _reported(self, bridged: _Bridged) -> None:
        found = bridged.calls.take_findings()
        self.counts.reported(found)
        if self.reports is not None:
            for report in found:
                self.reports.add(report)


def _forget(exchanges: dict[int, asyncio.Task[None]], rid: int, task: asyncio.Task[None]) -> None:
    if exchanges.get(rid) is task:
        del exchanges[rid]
