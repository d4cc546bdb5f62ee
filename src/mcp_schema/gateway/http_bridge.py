"""`HttpBridge`: the era bridge for 2026-07-28 clients in front of a
Streamable HTTP server that speaks only the handshake era (needs the
``http`` extra: httpx): the `mcp_schema.gateway.handshake_driver.BridgeDriver`
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
from collections.abc import Callable
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx

from mcp_schema.errors import InternalError
from mcp_schema.gateway.findings import Findings
from mcp_schema.gateway.handshake_driver import BridgeDriver, Link
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
from mcp_schema.http.caller import SCOPE_KEY
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import received_headers
from mcp_schema.proxy.reports import ReportLog
from mcp_schema.session import Event, Negotiated, ResponseReceived

__all__ = ["HttpBridge", "cookieless", "probe_http"]


async def _exchange(
    client: httpx.AsyncClient,
    url: str,
    binding: ClientBinding,
    post: Post,
    on_events: Callable[[list[Event]], None],
) -> int | None:
    """Send ``post``, handing the session's events of its response to
    ``on_events`` as they come (a server's request comes before the answer,
    which waits for the client's); its status (None: no response)."""
    request = client.build_request(post.method, url, headers=list(post.headers), content=post.body)
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        on_events(binding.lost(post, f"{exc!s:.200}"))
        return None
    try:
        reply = binding.reply(post, response.status_code, response.headers.multi_items())
        try:
            async for chunk in response.aiter_raw():
                on_events(reply.feed(chunk))
                if reply.done:
                    break
        except httpx.HTTPError:
            pass  # the answer broke off: its end says so
        on_events(reply.end())
    finally:
        await response.aclose()
    return response.status_code


def cookieless() -> CookieJar:
    """A cookie jar that keeps none: a gateway's client carries many clients'
    sessions upstream, and one jar shared by them would send one client's
    cookies with another's requests. (A jar, not ``httpx.Cookies``: the
    client would copy those into a jar of the default policy.)"""
    return CookieJar(DefaultCookiePolicy(allowed_domains=[]))


async def probe_http(url: str, client: httpx.AsyncClient) -> Probed:
    """What the server at ``url`` serves (`Probed`); `McpError` when it cannot say
    (in `ANSWER_SECONDS`)."""
    binding = ClientBinding(probing_session(), mode="auto")
    binding.connect()
    try:
        return await asyncio.wait_for(_negotiated(url, client, binding), ANSWER_SECONDS)
    except asyncio.TimeoutError:
        raise InternalError(
            f"the server did not answer the probe in {ANSWER_SECONDS:g} s"
        ) from None
    finally:
        last = binding.close()
        if last is not None:
            with contextlib.suppress(httpx.HTTPError):
                await client.request("DELETE", url, headers=list(last.headers))


async def _negotiated(url: str, client: httpx.AsyncClient, binding: ClientBinding) -> Probed:
    events: list[Event] = []
    while posts := binding.posts():  # server/discover, then initialize if it is refused
        for post in posts:
            await _exchange(client, url, binding, post, events.extend)
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
            bridge.client, bridge.url, self.binding, post, lambda events: self.deliver(events, b"")
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
            with contextlib.suppress(httpx.HTTPError):
                await self.bridge.client.request(
                    "DELETE", self.bridge.url, headers=list(last.headers)
                )


class HttpBridge(BridgeDriver):
    """The bridge in front of the handshake-era server at ``url`` (an ASGI
    application), with the driver's other arguments (``sealer``,
    ``principal``, ``max_upstreams``, ``pending``). ``reports``: where
    findings go; ``client``: the ``httpx.AsyncClient`` (one of its own by
    default, closed by `aclose`). ``precheck``: the rules every request is
    checked by (its path, allowed hosts and origins, ``max_body``; by
    default ``Precheck(path=path, sessions=False)``: POST alone is served);
    ``body_seconds``: the time a body has to arrive whole (None: no bound)."""

    def __init__(
        self,
        url: str,
        *,
        reports: ReportLog | None = None,
        client: httpx.AsyncClient | None = None,
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
        self.url = url
        self.precheck = Precheck(path=path, sessions=False) if precheck is None else precheck
        self.body_seconds = body_seconds
        self.client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=None), cookies=cookieless()
        )
        self._own_client = client is None

    def new_link(self, upstream: Upstream) -> Link:
        return HttpLink(upstream, self)

    async def start(self) -> None:
        """Probe the server (`probe_http`)."""
        self.adopt(await probe_http(self.url, self.client))
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
        scope = {**scope, SCOPE_KEY: admitted}  # who it is, for the driver's principal
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
