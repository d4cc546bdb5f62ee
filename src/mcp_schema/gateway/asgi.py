"""`GatewayApp`: an ASGI 3 application forwarding ``/mcp`` to an upstream
Streamable HTTP server, every message checked by an `ExchangeValidator`
(needs the ``http`` extra: httpx).

What it forwards: the request's method, query, headers (but the hop-by-hop
ones, ``Host`` and ``Content-Length``, which httpx writes, and
``Accept-Encoding``, sent as ``identity`` so that what comes back is the
JSON it reads) and body; the answer's status, headers (``Mcp-Session-Id``
included, both ways: both eras pass) and body. A JSON answer is read whole
(at most ``max_message`` bytes); an event stream is relayed event by event,
never held whole. The client disconnecting cancels the upstream request
(its connection is closed).

Two modes:

* **monitor** (the default): the bytes pass unchanged, each as it comes;
  each message is checked after it was sent on (a request once its answer
  came: a JSON answer once it was sent on, an event stream before its first
  event), and what fails is reported.
* **enforce**: what is invalid never reaches the other side. A client's
  invalid request is answered by the gateway (`Exchange.refusal`: the
  codec's JSON-RPC error, in the status the specification gives: 400 with
  -32020 for a header mismatch) and never forwarded. An upstream's invalid
  JSON answer becomes 502 with a JSON-RPC error (-32603) to the request's
  id, its data naming the finding (`bad_gateway`). On an event stream,
  whose status went out before its first event, the invalid event is
  replaced by that error as an event, and the stream ends there.

An upstream that cannot be reached, or fails mid-answer before its status,
is 502 with -32603 in both modes, and reported (`Exchange.unreachable`: a
run of such failures is one line and their count). Reports go to a
`ReportLog` (bounded, written by a thread of its own: forwarding never
waits for them).

The era bridge (``served``: what the upstream's probe found,
`mcp_schema.gateway.probe`): a request in an era the upstream serves takes
the forwarding path above; a handshake-era one (``initialize``, a bridged
``Mcp-Session-Id``, GET and DELETE) to an upstream of 2026-07-28 alone goes
to the `mcp_schema.gateway.handshake_front.HandshakeFront`, and a
2026-07-28 one to an upstream of the handshake era alone goes to the
`mcp_schema.gateway.http_bridge.HttpBridge`. Both read every message
themselves (in both modes: what they carry they must read).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx

from mcp_schema.gateway.exchange import Exchange, ExchangeValidator, bad_gateway
from mcp_schema.gateway.handshake_front import HandshakeFront
from mcp_schema.gateway.http_bridge import HttpBridge, cookieless
from mcp_schema.gateway.probe import Served
from mcp_schema.gateway.sse import EventSplitter

# The ASGI types and helpers of the package's own adapter: a refusal is
# written exactly as the endpoint's, and a client leaving is seen the same way.
from mcp_schema.http.adapter import Receive, Scope, Send, send_response, until_disconnect
from mcp_schema.http.stream import Response
from mcp_schema.proxy.reports import Report, ReportLog
from mcp_schema.request_state import StateSealer
from mcp_schema.versions import STATELESS_VERSIONS

__all__ = ["GatewayApp"]

_HOP = frozenset(
    b"connection keep-alive proxy-connection te trailer transfer-encoding upgrade".split()
)
"""Hop-by-hop headers (RFC 9110 7.6.1): never forwarded."""
_UP_DROPPED = _HOP | {b"host", b"content-length", b"accept-encoding", b"expect"}
_DOWN_DROPPED = _HOP | {b"content-length"}
_HEAD_READ = frozenset([b"content-type", b"mcp-session-id"])
_SSE = b"text/event-stream"
_TIMEOUT = httpx.Timeout(30.0, read=None)  # a stream lasts; the client may leave
_EXTENSIONS = {"timeout": _TIMEOUT.as_dict()}  # a request's, as a client would set them


class GatewayApp:
    """The gateway in front of ``upstream`` (the URL of its MCP endpoint), serving ``path``.

    * ``enforce``: enforce mode (the module), else monitor mode.
    * ``reports``: where findings go (none kept when None).
    * ``validator``: the `ExchangeValidator` (its ``max_body``, ``max_message``).
    * ``client``: the ``httpx.AsyncClient`` to forward with, as it is set
      up. By default the app makes one of its own (closed at the lifespan's
      shutdown) and forwards straight to its transport: a client's cookie
      jar would carry one client's cookies to the upstream with another's
      requests, and its default headers, auth and redirects are no proxy's.
    * ``served``: the bridge (see the module): what the upstream serves.
    * ``sealer``: what seals the bridge's ``requestState`` when 2026-07-28
      clients are bridged to a handshake-era upstream (a random key by default).
    """

    def __init__(
        self,
        upstream: str,
        *,
        enforce: bool = False,
        reports: ReportLog | None = None,
        validator: ExchangeValidator | None = None,
        client: httpx.AsyncClient | None = None,
        path: str = "/mcp",
        served: Served | None = None,
        sealer: StateSealer | None = None,
    ) -> None:
        if not isinstance(upstream, str) or not upstream.startswith(("http://", "https://")):
            raise ValueError(f"upstream must be an http(s) URL, not {upstream!r:.80}")
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"path must start with '/', not {path!r:.80}")
        self.upstream, self.path, self.enforce = upstream, path, bool(enforce)
        self.reports = reports
        self.validator = ExchangeValidator() if validator is None else validator
        self._url = httpx.URL(upstream)  # parsed once
        self._client = client
        self._own_client = client is None
        self._transport: httpx.AsyncHTTPTransport | None = None  # the own client's
        self.served = served
        self.front: HandshakeFront | None = None
        """Where handshake-era requests go when the upstream does not serve that era."""
        if served is not None and not served.handshake and served.stateless:
            self.front = HandshakeFront(
                upstream, served, lambda: self.client, reports=reports, path=path
            )
        self.back: HttpBridge | None = None
        """Where 2026-07-28 requests go when the upstream serves the handshake era alone."""
        if served is not None and served.handshake and not served.stateless:
            self.back = HttpBridge(upstream, reports=reports, sealer=sealer)

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._transport = httpx.AsyncHTTPTransport(
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
                # httpx writes a request's head and body apart: without
                # TCP_NODELAY the body waits out the server's delayed ACK.
                socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            )
            # The bridge's front sends through the client itself: its jar keeps no cookies.
            self._client = httpx.AsyncClient(
                timeout=_TIMEOUT, transport=self._transport, cookies=cookieless()
            )
        return self._client

    async def aclose(self) -> None:
        """Close the client the app made (one given is the caller's)."""
        if self._own_client and self._client is not None:
            await self._client.aclose()
            self._client = self._transport = None

    def _report(self, reports: list[Report]) -> None:
        if self.reports is not None:
            for report in reports:
                self.reports.add(report)

    def _traffic(self, size: int) -> None:
        if self.reports is not None:
            self.reports.traffic(size)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return None
        if scope["path"] != self.path:
            return await send_response(send, Response(404))
        method: str = scope["method"]
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        if self.front is not None and self._bridged(method, headers):
            return await self.front(scope, receive, send)
        if self.back is not None and _stateless(method, headers):
            return await self.back(scope, receive, send)
        body, rest = b"", None
        if method == "POST":
            read = await self._body(receive)
            if read is None:
                return None  # the client left
            body, rest = read
        self._traffic(len(body))
        exchange = _Deferred(self, method, headers, body)
        if self.enforce:  # read before anything is forwarded
            refused = exchange.get().refusal
            if refused is not None:
                return await send_response(send, refused)
        query = scope.get("query_string", b"")
        url = self.upstream + "?" + query.decode("latin-1") if query else self._url
        forwarded = [(k, v) for k, v in headers if k not in _UP_DROPPED]
        forwarded.append((b"accept-encoding", b"identity"))
        content: bytes | AsyncIterator[bytes] = body if rest is None else _rest(body, receive)
        forwarding = asyncio.ensure_future(
            self._forward(exchange, method, url, forwarded, content, send)
        )
        left = asyncio.ensure_future(until_disconnect(receive)) if rest is None else None
        try:
            if left is None:
                await forwarding
                return None
            await asyncio.wait({forwarding, left}, return_when=asyncio.FIRST_COMPLETED)
            if not forwarding.done():  # the client left: the upstream request is cancelled
                forwarding.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await forwarding
                self._report(exchange.get().end(cut=True))
                return None
            forwarding.result()
        finally:
            if left is not None:
                left.cancel()
        return None

    def _bridged(self, method: str, headers: list[tuple[bytes, bytes]]) -> bool:
        """Whether a request goes to the bridge (`HandshakeFront`): of a
        session, a GET or a DELETE, or a POST naming no version the upstream
        serves per request (``initialize``)."""
        if method not in ("POST", "GET", "DELETE"):
            return False
        session, version = _named(headers)
        assert self.served is not None
        return session or method != "POST" or version not in self.served.stateless

    async def _body(self, receive: Receive) -> tuple[bytes, bool | None] | None:
        """The body (None: the client left), and None when it was read whole,
        else the first ``max_body`` bytes and more to come."""
        limit = self.validator.max_body
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            more = message.get("more_body", False)
            if size > limit and more:
                return b"".join(chunks), True
            if not more:
                return b"".join(chunks), None

    async def _forward(
        self,
        deferred: _Deferred,
        method: str,
        url: httpx.URL | str,
        headers: list[tuple[bytes, bytes]],
        content: bytes | AsyncIterator[bytes],
        send: Send,
    ) -> None:
        client = self.client
        try:
            if self._transport is None:  # the caller's client, as it is set up
                request = client.build_request(method, url, headers=headers, content=content)
                response = await client.send(request, stream=True)
            else:  # the app's own, straight to its transport (see the class)
                request = httpx.Request(
                    method, url, headers=headers, content=content, extensions=_EXTENSIONS
                )
                response = await self._transport.handle_async_request(request)
        except httpx.HTTPError as exc:
            exchange = deferred.get()
            report, answer = exchange.unreachable(str(exc) or type(exc).__name__)
            self._report([report, *exchange.end()])
            return await send_response(send, answer)
        try:
            down = [(k.lower(), v) for k, v in response.headers.raw]
            media = next((v for k, v in down if k == b"content-type"), b"")
            if media.partition(b";")[0].strip().lower() == _SSE:
                exchange = deferred.get()
                exchange.head(response.status_code, _told(down))
                start = _start(response.status_code, [h for h in down if h[0] not in _DOWN_DROPPED])
                await self._events(exchange, response, start, send)
            else:
                await self._whole(deferred, response, down, send)
        except httpx.HTTPError:
            pass  # the upstream broke mid-answer: what was sent stands, the answer ends
        finally:
            await response.aclose()
        self._report(deferred.get().end())

    async def _whole(
        self,
        deferred: _Deferred,
        response: httpx.Response,
        headers: list[tuple[bytes, bytes]],
        send: Send,
    ) -> None:
        """A JSON (or empty, or other) answer: checked whole when it is JSON."""
        limit = self.validator.max_message
        status = response.status_code
        kept: list[bytes] = []
        size = 0
        if not self.enforce:  # monitor: each chunk on as it comes, all checked once sent
            await send(_start(status, [h for h in headers if h[0] not in _HOP]))
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                size += len(chunk)
                if size <= limit:
                    kept.append(chunk)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            self._traffic(size)
            exchange = deferred.get()
            exchange.head(status, _told(headers))
            if exchange.json:
                self._report(
                    _found(exchange.answer(b"".join(kept), None if size <= limit else size))
                )
            return
        exchange = deferred.get()
        exchange.head(status, _told(headers))
        async for chunk in response.aiter_raw():
            size += len(chunk)
            if size <= limit:
                kept.append(chunk)
            else:
                kept = kept[:1]  # its head is enough for the report
        body = b"".join(kept)
        self._traffic(size)
        if exchange.json:
            report = exchange.answer(body, None if size <= limit else size)
            if report is not None:
                self._report([report])
                return await send_response(send, bad_gateway(report, exchange.request_id))
        # As _send_whole writes a Response, without making the headers one's (str) and back.
        kept_headers = [h for h in headers if h[0] not in _DOWN_DROPPED]
        kept_headers.append((b"content-length", str(len(body)).encode()))
        await send(_start(status, kept_headers))
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _events(
        self, exchange: Exchange, response: httpx.Response, start: dict[str, Any], send: Send
    ) -> None:
        """An event stream: relayed as it comes (monitor) or event by event (enforce)."""
        splitter = EventSplitter(self.validator.max_message)
        await send(start)
        async for chunk in response.aiter_raw():
            self._traffic(len(chunk))
            if not self.enforce:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            for event in splitter.feed(chunk):
                report = exchange.event(event)
                if report is None:
                    if self.enforce:
                        await send(
                            {"type": "http.response.body", "body": event.raw, "more_body": True}
                        )
                    continue
                self._report([report])
                if self.enforce:
                    refused = bad_gateway(report, exchange.request_id).body
                    last = b"event: message\ndata: " + refused + b"\n\n"
                    await send({"type": "http.response.body", "body": last, "more_body": False})
                    return
        last_event = splitter.close()
        if last_event is not None:
            self._report(_found(exchange.event(last_event)))
            if self.enforce and not last_event.overlong:
                await send(
                    {"type": "http.response.body", "body": last_event.raw, "more_body": True}
                )
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self.back is not None:  # its own probe: the upstream's handshake version
                    await self.back.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.front is not None:
                    self.front.close()
                if self.back is not None:
                    await self.back.aclose()
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


class _Deferred:
    """The `Exchange` of a request, read when first needed: in enforce mode
    before it is forwarded; in monitor mode once its answer came (and a JSON
    answer was sent on), so that reading it adds nothing to the wait."""

    __slots__ = ("_app", "_body", "_exchange", "_headers", "_method")

    def __init__(
        self, app: GatewayApp, method: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> None:
        self._app, self._method, self._headers, self._body = app, method, headers, body
        self._exchange: Exchange | None = None

    def get(self) -> Exchange:
        if self._exchange is None:
            # Only what the validator reads (ASGI names are lower-case): the rest it would convert.
            read = [h for h in self._headers if h[0] == b"content-type" or h[0][:4] == b"mcp-"]
            self._exchange = self._app.validator.request(self._method, read, self._body)
            self._app._report(self._exchange.reports)
        return self._exchange


def _named(headers: list[tuple[bytes, bytes]]) -> tuple[bool, str | None]:
    """Whether a request names a session (``Mcp-Session-Id``), and the version
    its ``MCP-Protocol-Version`` names: where the bridge's dispatch looks."""
    version = None
    for name, value in headers:
        if name == b"mcp-session-id":
            return True, None
        if name == b"mcp-protocol-version":
            version = value.decode("latin-1")
    return False, version


def _stateless(method: str, headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request is of the stateless era: a POST naming a version served per
    request and no session (the back bridge's, `HttpBridge`)."""
    if method != "POST":
        return False
    session, version = _named(headers)
    return not session and version in STATELESS_VERSIONS


def _told(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers of an answer `Exchange.head` reads (the rest it would only convert)."""
    return [h for h in headers if h[0] in _HEAD_READ]


def _found(report: Report | None) -> list[Report]:
    return [] if report is None else [report]


def _start(status: int, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http.response.start", "status": status, "headers": headers}


async def _rest(head: bytes, receive: Receive) -> AsyncIterator[bytes]:
    """A body too long to be read: its first bytes, then the rest as it comes."""
    yield head
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return
