"""`HttpBridge`: the era bridge for 2026-07-28 clients in front of a
Streamable HTTP server that speaks only the handshake era (needs the
``http`` extra; its upstream client is `mcp_schema.gateway.http_upstream`'s): the `mcp_schema.gateway.handshake_driver.BridgeDriver`
with a handshake-era HTTP session (`mcp_schema.http.binding.ClientBinding`)
per upstream session.

`HttpBridge.start` probes the server (`probe_http`: ``server/discover``,
then ``initialize``, as the binding's auto mode negotiates; the probe's
session is ended with ``DELETE``). It is an ASGI application serving the
2026-07-28 requests it is given (a POST each), each checked first by its
`mcp_schema.http.precheck.Precheck` (the path, ``Host``, ``Origin``, the
method and the media) and its body read within ``body_seconds`` (408
after), before anything goes upstream; a gateway in front of the server
hands it those its server cannot serve (with the gateway's own precheck:
the same rules), and forwards the rest.

A session the server forgets (404 to its ``Mcp-Session-Id``) is over: its
calls fail, and the next request of its principal and capabilities opens a
new one. The server's messages come on each request's event stream (no GET
stream is opened): a listen hears the list changes the server sends there.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from typing import Any

from mcp_schema.errors import InternalError, clip
from mcp_schema.gateway.findings import Findings
from mcp_schema.gateway.handshake_driver import BridgeDriver, Link
from mcp_schema.gateway.http_upstream import Credentials, exchanged, upstream_client
from mcp_schema.gateway.stdio_probe import ANSWER_SECONDS, Probed, found, probing_session
from mcp_schema.gateway.to_handshake import Upstream
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
from mcp_schema.http.h1 import Target, UpstreamError
from mcp_schema.http.pool import HttpClient
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import received_headers
from mcp_schema.proxy.reports import ReportLog
from mcp_schema.session import Event, Negotiated, ResponseReceived

__all__ = ["HttpBridge", "probe_http"]


async def _exchange(
    client: HttpClient,
    target: Target,
    binding: ClientBinding,
    post: Post,
    on_events: Callable[[list[Event]], None],
    credentials: Credentials,
) -> int | None:
    """Send ``post``, handing the session's events of its response to
    ``on_events`` as they come (a server's request comes before the answer,
    which waits for the client's); its status (None: no whole response)."""
    try:
        reply = functools.partial(binding.reply, post)
        return await exchanged(client, target, post, reply, on_events, credentials)
    except UpstreamError as exc:
        on_events(binding.lost(post, clip(exc.message, 200)))
        return None


async def probe_http(
    url: str, client: HttpClient, credentials: Credentials | None = None
) -> Probed:
    """What the server at ``url`` serves (`Probed`); `McpError` when it cannot say
    (in `ANSWER_SECONDS`)."""
    binding = ClientBinding(probing_session(), mode="auto")
    binding.connect()
    target, sent = Target.of(url), credentials or Credentials()
    try:
        negotiated = _negotiated(target, client, binding, sent)
        return await asyncio.wait_for(negotiated, ANSWER_SECONDS)
    except asyncio.TimeoutError:
        raise InternalError(
            f"the server did not answer the probe in {ANSWER_SECONDS:g} s"
        ) from None
    finally:
        last = binding.close()
        if last is not None:
            await _delete(client, target, last, sent)


async def _delete(client: HttpClient, target: Target, last: Post, credentials: Credentials) -> None:
    """The end of an upstream session (its ``DELETE``), its failure ignored."""
    fields = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in last.headers]
    with contextlib.suppress(UpstreamError):
        await credentials.added(fields)
        await client.request("DELETE", target, fields, max_body=1 << 16)


async def _negotiated(
    target: Target, client: HttpClient, binding: ClientBinding, credentials: Credentials
) -> Probed:
    events: list[Event] = []
    while posts := binding.posts():  # server/discover, then initialize if it is refused
        for post in posts:
            await _exchange(client, target, binding, post, events.extend, credentials)
            for event in events:
                if isinstance(event, Negotiated):
                    return found(event, binding.session)
                if isinstance(event, ResponseReceived) and event.error is not None:
                    raise InternalError(f"the server refused the probe: {event.error}")
    raise InternalError("the server answered neither server/discover nor initialize")


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
        status = await _exchange(
            bridge.client,
            bridge.target,
            self.binding,
            post,
            lambda events: self.deliver(events, b""),
            bridge.credentials,
        )
        if status == 404 and named and self._alive:  # the server forgot the session
            self._alive = False
            self.ended()

    async def close(self) -> None:
        self._alive = False
        for task in list(self._tasks):
            task.cancel()
        last = self.binding.close()
        if last is not None:
            bridge = self.bridge
            await _delete(bridge.client, bridge.target, last, bridge.credentials)


class HttpBridge(BridgeDriver):
    """The bridge in front of the handshake-era server at ``url`` (an ASGI
    application), with the driver's other arguments (``sealer``,
    ``principal``, ``max_upstreams``, ``pending``). ``reports``: where
    findings go; ``client``: the `mcp_schema.http.pool.HttpClient` (one of
    its own by default, closed by `aclose`); ``credentials``: what its
    requests carry upstream (`mcp_schema.gateway.http_upstream.Credentials`). ``precheck``: the rules every request is
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
        path: str = "/mcp",
        precheck: Precheck | None = None,
        body_seconds: float | None = BODY_SECONDS,
        **options: Any,
    ) -> None:
        if precheck is not None and not isinstance(precheck, Precheck):
            raise TypeError(f"precheck must be a Precheck, not {type(precheck).__name__}")
        if body_seconds is not None and not body_seconds > 0:
            raise ValueError(f"body_seconds must be positive, not {body_seconds!r}")
        super().__init__(Findings(reports), **options)
        self.url, self.target = url, Target.of(url)
        self.credentials = credentials or Credentials()
        self.precheck = Precheck(path=path, sessions=False) if precheck is None else precheck
        self.body_seconds = body_seconds
        self.client = client or upstream_client()
        self._own_client = client is None

    def new_link(self, upstream: Upstream) -> Link:
        return HttpLink(upstream, self)

    async def start(self) -> None:
        """Probe the server (`probe_http`)."""
        self.adopt(await probe_http(self.url, self.client, self.credentials))
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
        refused = self.precheck.check(method, scope["path"], received, scope.get("server"))
        if refused is not None:
            return await send_response(send, refused)
        if method != "POST":  # a session's GET or DELETE: no session is served here
            return await send_response(send, self.precheck.not_allowed("POST alone is served"))
        await self.post(scope, received, receive, send)

    async def post(
        self, scope: Scope, received: dict[str, str], receive: Receive, send: Send
    ) -> None:
        """A POST the precheck let through (``received``: its headers by
        lower-case name): its body read, then bridged."""
        body = await read_body(receive, self.precheck.max_body, self.body_seconds)
        if body is None:
            return  # the client left
        if isinstance(body, Response):  # too long, or too slow
            return await send_response(send, body)
        await self.serve(scope, received, body, receive, send)
