"""The era bridge's upstream links for 2026-07-28 clients in front of a
server that speaks only the handshake era, and the two bridges built on
them (each a `mcp_schema.gateway.bridge.stateless_front.BridgeDriver`):

* `Link`: one upstream session (an `Upstream` and the connection it speaks
  over), as the driver drives it.
* `HttpLink` and `HttpBridge` (needs the ``http`` extra: the client of
  `mcp_schema.gateway.http_upstream`, with the gateway's credentials): a
  handshake-era HTTP session (`mcp_schema.http.binding.ClientBinding`) per
  upstream session, in front of a Streamable HTTP server. The server is
  probed once (`mcp_schema.gateway.probe`): the gateway hands the bridge
  what its start-up probe found, a bridge on its own probes at its
  lifespan's startup (`HttpBridge.start`). It is an ASGI application
  serving the 2026-07-28 requests it is given (a POST each), each checked
  first by its `mcp_schema.http.precheck.Precheck` (the path, ``Host``,
  ``Origin``, the method and the media) and its body read within
  ``body_seconds`` (408 after), before anything goes upstream (503 until
  the probe told the bridge its server), then answered by the driver's
  endpoint (`BridgeDriver.serve`); a gateway in front of the server hands
  it those its server cannot serve, already prechecked and read. A session the server forgets
  (404 to its ``Mcp-Session-Id``) is over: its calls fail, and the next
  request of its principal and capabilities opens a new one. The server's
  messages come on each request's event stream (no GET stream is opened):
  a listen hears the list changes the server sends there.
* `StdioLink` and `StdioBridge` (``gateway --bridge -- CMD``): a child
  process (`mcp_schema.gateway.child.Child`) per upstream session, framed
  as the stdio proxy frames it. The stdio front
  (`mcp_schema.gateway.monitor.stdio.StdioGatewayApp`) probes the command
  before it serves and hands the bridge what it found (`BridgeDriver.adopt`);
  a server that answers ``server/discover`` needs no bridge: its 2026-07-28
  requests take the front's shared child.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from time import monotonic
from typing import TYPE_CHECKING, Any, Protocol

from mcp_schema.errors import (
    InternalError,
    InvalidRequestError,
    ParseError,
    UnavailableError,
    clip,
)
from mcp_schema.gateway.bridge.stateless import Upstream
from mcp_schema.gateway.bridge.stateless_front import BridgeDriver
from mcp_schema.gateway.child import Child
from mcp_schema.gateway.findings import UNREACHED, Findings
from mcp_schema.gateway.probe import Served, probe_upstream
from mcp_schema.http.adapter import (
    BODY_SECONDS,
    Receive,
    Scope,
    Send,
    read_body,
    send_response,
    serve_lifespan,
)
from mcp_schema.http.binding import ClientBinding, Post
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.rules import failure
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import received_headers
from mcp_schema.proxy.lines import Line, OverlongLine
from mcp_schema.proxy.reports import ReportLog
from mcp_schema.session import (
    Event,
    InputRequested,
    Negotiated,
    ProtocolError,
    ResponseReceived,
)

if TYPE_CHECKING:
    from mcp_schema.gateway.http_upstream import Credentials
    from mcp_schema.http.pool import HttpClient

__all__ = ["HttpBridge", "HttpLink", "Link", "StdioBridge", "StdioFront", "StdioLink"]


class Link:
    """An `Upstream` and the connection it speaks over (a child process, an
    HTTP session): what the driver needs of each transport is `alive`,
    `start`, `flush` (send what the session queued), `answer` (send one
    frame of the gateway's own) and `close`; the transport hands what the
    server sent to `deliver`."""

    def __init__(self, upstream: Upstream, driver: BridgeDriver) -> None:
        self.upstream, self.driver = upstream, driver
        self.queues: dict[int, asyncio.Queue[Any]] = {}  # by upstream id: None when it died
        self.ready = asyncio.get_running_loop().create_future()
        self.lock = asyncio.Lock()  # the calls that may ask, one at a time
        self.listens = 0
        self.subscribed: dict[str, int] = {}
        self.owner: str | None = None
        """The `Caller.key` of the client it was started for: whose share it counts in."""
        self.used = monotonic()

    @property
    def idle(self) -> bool:
        return not self.upstream.calls and not self.listens and not self.lock.locked()

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    async def start(self) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        raise NotImplementedError

    def answer(self, frame: bytes) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    def deliver(self, events: list[Event], frame: bytes) -> None:
        """The session's ``events`` of what the server sent (``frame``, for reports)."""
        findings = self.driver.findings
        for call, event in self.upstream.route(events):
            if isinstance(event, ProtocolError):
                findings.refused("server", event.error, frame)
                self.driver.counts.refused("sent", event.error.code)
            elif isinstance(event, Negotiated) and not self.ready.done():
                self.ready.set_result(True)
            elif isinstance(event, ResponseReceived) and not self.ready.done():
                self.ready.set_result(False)  # initialize refused
            elif call is not None and call.upstream_id in self.queues:
                self.queues[call.upstream_id].put_nowait(event)
            elif call is None and isinstance(event, InputRequested):
                # No call may ask now: refused, as a client that cannot be asked refuses.
                findings.found(
                    "Invalid Request: the server asked the client outside of any call that "
                    "may ask; refused",
                    frame,
                )
                self.driver.counts.refused("sent", InvalidRequestError.code)
                self.answer(self.upstream.refuse(event))
        self.flush()

    def ended(self) -> None:
        """The connection is over: its calls in flight fail, the driver forgets it."""
        if not self.ready.done():
            self.ready.set_result(False)
        for queue in self.queues.values():
            queue.put_nowait(None)
        self.driver.gone(self)


# -- over HTTP ---------------------------------------------------------------------------


async def _exchange(
    bridge: HttpBridge, binding: ClientBinding, post: Post, on_events: Callable[[list[Event]], None]
) -> int | None:
    """Send ``post``, handing the session's events of its response to
    ``on_events`` as they come (a server's request comes before the answer,
    which waits for the client's); its status (None: no whole response)."""
    from mcp_schema.gateway.http_upstream import exchanged
    from mcp_schema.http.h1 import UpstreamError

    try:
        reply = functools.partial(binding.reply, post)
        return await exchanged(
            bridge.client, bridge.target, post, reply, on_events, bridge.credentials
        )
    except UpstreamError as exc:
        reason = clip(exc.message, 200)
        # The operator's report names why; the client is told only that it failed.
        bridge.findings.found(f"{UNREACHED}: {reason}", b"", exc.code)
        on_events(binding.lost(post, reason))
        return None


async def _delete(bridge: HttpBridge, last: Post) -> None:
    """The end of an upstream session (its ``DELETE``), its failure ignored."""
    from mcp_schema.http.h1 import UpstreamError

    fields = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in last.headers]
    with contextlib.suppress(UpstreamError):
        await bridge.credentials.added(fields)
        await bridge.client.request("DELETE", bridge.target, fields, max_body=1 << 16)


class HttpLink(Link):
    """An upstream session over Streamable HTTP."""

    def __init__(self, upstream: Upstream, driver: HttpBridge) -> None:
        super().__init__(upstream, driver)
        self.bridge = driver
        self.binding = ClientBinding(upstream.client, mode="handshake")
        self._alive = False
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def alive(self) -> bool:
        return self._alive

    async def start(self) -> None:
        self._alive = True
        self.flush()  # the initialize the session queued

    def flush(self) -> None:
        for post in self.binding.posts():
            self._spawn(post)

    def answer(self, frame: bytes) -> None:
        headers = [("content-type", "application/json"), ("accept", "application/json")]
        if self.binding.session_id is not None:
            headers.append(("mcp-session-id", self.binding.session_id))
        if self.upstream.client.version is not None:
            headers.append(("mcp-protocol-version", self.upstream.client.version))
        self._spawn(Post("POST", tuple(headers), frame, None))

    def _spawn(self, post: Post) -> None:
        task = asyncio.ensure_future(self._send(post))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, post: Post) -> None:
        named = self.binding.session_id is not None
        bridge = self.bridge
        status = await _exchange(bridge, self.binding, post, lambda e: self.deliver(e, b""))
        if status == 404 and named and self._alive:  # the server forgot the session
            self._alive = False
            self.ended()

    async def close(self) -> None:
        self._alive = False
        for task in list(self._tasks):
            task.cancel()
        last = self.binding.close()
        if last is not None:
            await _delete(self.bridge, last)


class HttpBridge(BridgeDriver):
    """The bridge in front of the handshake-era server at ``url`` (an ASGI
    application), with the driver's other arguments (``sealer``,
    the bounds: ``max_upstreams``, ``max_upstreams_per_key``, ``idle_seconds``,
    ``pending``, ``answer_seconds``). ``reports``: where
    findings go; ``client``: the `mcp_schema.http.pool.HttpClient` (one of
    its own by default, closed by `aclose`); ``credentials``: what its
    requests carry upstream (`mcp_schema.gateway.http_upstream.Credentials`). ``served``: what the gateway's start-up
    probe found of the server (else `start` probes it). ``precheck``: the rules every request is
    checked by (its path, allowed hosts and origins, ``max_body``; by
    default ``Precheck(path=path, sessions=False)``: POST alone is served);
    ``body_seconds``: the time a body has to arrive whole (None: no bound)."""

    def __init__(
        self,
        url: str,
        *,
        reports: ReportLog | None = None,
        client: HttpClient | None = None,
        credentials: Credentials | None = None,
        served: Served | None = None,
        path: str = "/mcp",
        precheck: Precheck | None = None,
        body_seconds: float | None = BODY_SECONDS,
        **options: Any,
    ) -> None:
        from mcp_schema.gateway.http_upstream import Credentials, upstream_client
        from mcp_schema.http.h1 import Target

        if precheck is not None and not isinstance(precheck, Precheck):
            raise TypeError(f"precheck must be a Precheck, not {type(precheck).__name__}")
        if body_seconds is not None and not body_seconds > 0:
            raise ValueError(f"body_seconds must be positive, not {body_seconds!r}")
        rules = Precheck(path=path, sessions=False) if precheck is None else precheck
        super().__init__(Findings(reports), precheck=rules, body_seconds=body_seconds, **options)
        self.url, self.target = url, Target.of(url)
        self.credentials = credentials or Credentials()
        self.client = client or upstream_client()
        self._own_client = client is None
        if served is not None and served.version is not None:  # else `start` probes
            self.adopt(served)

    def new_link(self, upstream: Upstream) -> Link:
        return HttpLink(upstream, self)

    async def start(self) -> None:
        """Probe the server (`mcp_schema.gateway.probe.probe_upstream`), unless
        the gateway's start-up probe told the bridge already."""
        if self.served is None:
            self.adopt(await probe_upstream(self.url, self.client, credentials=self.credentials))
        if self.core is None:
            raise InternalError("the server speaks 2026-07-28 itself: no bridge is needed")

    async def aclose(self) -> None:
        await super().aclose()
        if self._own_client:
            await self.client.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await serve_lifespan(receive, send, self.start, self.aclose)
        if scope["type"] != "http":
            return
        received = received_headers(scope["headers"])
        method = scope["method"]
        admitted = await self.precheck.admit(method, scope["path"], received, scope)
        if isinstance(admitted, Response):
            return await send_response(send, admitted)
        if method != "POST":  # a session's GET or DELETE: no session is served here
            return await send_response(send, self.precheck.not_allowed("POST alone is served"))
        body = await read_body(receive, self.precheck.max_body, self.body_seconds)
        if body is None:
            return  # the client left
        if isinstance(body, Response):  # too long, or too slow
            return await send_response(send, body)
        if self.app is None:  # not started (the lifespan's startup probes)
            refused = UnavailableError("Service Unavailable: the bridge has not probed its server")
            return await send_response(send, failure(refused))
        await self.serve(method, received, body, receive, send, admitted)


# -- over stdio --------------------------------------------------------------------------


class StdioLink(Link):
    """An upstream session that is a child process of its own."""

    def __init__(self, upstream: Upstream, driver: StdioBridge) -> None:
        super().__init__(upstream, driver)
        app = driver.front
        self.child = Child(app.command, self._line, self.ended, max_line_bytes=app.max_line_bytes)

    @property
    def alive(self) -> bool:
        return self.child.alive

    async def start(self) -> None:
        await self.child.start()
        self.flush()

    def flush(self) -> None:
        for frame in self.upstream.client.data_to_send():
            self.child.send(frame)

    def answer(self, frame: bytes) -> None:
        self.child.send(frame)

    async def close(self) -> None:
        await self.child.close()

    def _line(self, line: Line) -> None:
        if isinstance(line, OverlongLine):
            return self.driver.findings.found(
                f"Parse error: a line of {line.size:,} bytes is longer than the limit; not read",
                line.head,
                ParseError.code,
            )
        self.deliver(self.upstream.client.receive(line), line)


class StdioFront(Protocol):
    """What a stdio bridge takes of the front it serves behind (the
    monitor's `mcp_schema.gateway.monitor.stdio.StdioGatewayApp`): the
    command each upstream session's child runs, the longest line read from
    one, and where findings go."""

    command: list[str]
    max_line_bytes: int
    findings: Findings
    precheck: Precheck


class StdioBridge(BridgeDriver):
    """The bridge of ``app`` (the stdio front it serves behind, a `StdioFront`
    as `mcp_schema.gateway.monitor.stdio.StdioGatewayApp` is), with the driver's other
    arguments (``sealer``, the bounds: ``max_upstreams``, ``max_upstreams_per_key``
    (a child each, per caller), ``idle_seconds``, ``pending``, ``answer_seconds``);
    its endpoint keeps the front's rules (``app.precheck``)."""

    def __init__(self, app: StdioFront, **options: Any) -> None:
        super().__init__(app.findings, precheck=app.precheck, **options)
        self.front = app

    def new_link(self, upstream: Upstream) -> Link:
        return StdioLink(upstream, self)
