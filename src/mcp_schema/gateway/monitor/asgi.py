"""`GatewayApp`: an ASGI 3 application forwarding ``/mcp`` to an upstream
Streamable HTTP server, every message checked by an `ExchangeValidator`
(needs the ``http`` extra: the upstream client is `mcp_schema.http.pool`,
set up by `mcp_schema.gateway.http_upstream`).

Every request first passes the gateway's `mcp_schema.http.precheck.Precheck`
(by default: on a loopback address, a ``Host`` that is no loopback name is
421, a foreign ``Origin`` 403), in both modes, and what it refuses reaches
neither the upstream nor a bridge; answers to an allowed origin carry the
gateway's CORS headers, not the upstream's. A body's size is the
validator's rule (``max_body``: monitor mode streams a longer one on
unread, enforce mode refuses it, 413); a body not whole within
``body_seconds`` is 408.

What it forwards: the method, query, headers (end to end: not the
hop-by-hop ones nor those ``Connection`` names; not ``Content-Length``,
which the client writes; ``Accept-Encoding`` as ``identity``, so that what
comes back is the JSON it reads; ``Host`` as the client sent it, as nginx's
``$http_host``, or ``upstream_host``; never the client's ``Authorization``
or ``Proxy-Authorization`` unless ``pass_authorization``, and the
``credentials``' own) and body; the answer's status, headers (end to end)
and body, but an upstream's 401 or 403, which is about the gateway's
credentials: it is 502 to the request's id, its challenge dropped. A JSON answer is read whole (at most
``max_message`` bytes); an event stream is relayed event by event, never
held whole. The client disconnecting cancels the upstream request (seen
once the request has run `mcp_schema.http.adapter.LEAVING_SECONDS`).

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
is 502 with -32603 in both modes (504 when it took longer than its
``timeouts`` allow), and reported (`Exchange.unreachable`: a
run of such failures is one line and their count). Reports go to a
`ReportLog` (bounded, written by a thread of its own: forwarding never
waits for them).

The era bridge (``served`` with ``bridge``: what the upstream's probe found): a request in
an era the upstream serves is forwarded; one of the other era, as `era_of`
tells from the body (parsed only when a bridge waits; the headers alone
place one too long or not JSON), goes to a bridge: handshake-era ones (GET
and DELETE too) to the `mcp_schema.gateway.bridge.handshake_front.HandshakeFront`
before an upstream of 2026-07-28 alone, 2026-07-28 ones to the
`mcp_schema.gateway.bridge.links.HttpBridge` before one of the handshake era
alone. Both read every message themselves, in both modes.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Collection
from typing import TYPE_CHECKING, Any

from mcp_schema._args import check

# The codec's strict parse (private to it, as the endpoint parses a body to tell its era).
from mcp_schema._codec.parse import parse
from mcp_schema.errors import McpError
from mcp_schema.gateway.bridge.handshake_front import HandshakeFront
from mcp_schema.gateway.bridge.links import HttpBridge
from mcp_schema.gateway.bridge.stateless_front import MAX_UPSTREAMS, MAX_UPSTREAMS_PER_KEY
from mcp_schema.gateway.http_upstream import Credentials, opened, upstream_client
from mcp_schema.gateway.monitor.bridged import Shares, bridges_of
from mcp_schema.gateway.monitor.carried import Upward, answered, rest, with_cors
from mcp_schema.gateway.monitor.events import relay_events
from mcp_schema.gateway.monitor.exchange import Exchange, ExchangeValidator, bad_gateway
from mcp_schema.gateway.monitor.followed import opens
from mcp_schema.gateway.probe import Served
from mcp_schema.http.adapter import (
    BODY_SECONDS,
    Leaving,
    Receive,
    Scope,
    Send,
    read_head,
    send_body,
    send_response,
    serve_lifespan,
    start_message,
    too_large,
)
from mcp_schema.http.caller import Caller
from mcp_schema.http.credentials import CredentialSource
from mcp_schema.http.era import era_of
from mcp_schema.http.h1 import Target, UpstreamError
from mcp_schema.http.pool import HttpClient, StreamedResponse, Timeouts
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.rules import refusal
from mcp_schema.http.sessions import MAX_SESSIONS
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import received_headers
from mcp_schema.proxy.reports import Report, ReportLog
from mcp_schema.request_state import StateSealer
from mcp_schema.telemetry import telemetry_for
from mcp_schema.versions import STATELESS_VERSIONS

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

__all__ = ["GatewayApp"]

_LENGTH = (b"content-length",)  # of an answer the gateway writes again
_HEAD_READ = frozenset([b"content-type", b"mcp-session-id"])
_SSE = b"text/event-stream"
_UNBOUNDED = sys.maxsize  # the precheck's Content-Length bound: the validator's max_body rules
_UNREAD: dict[str, Any] = {}  # a body not parsed: its era is its headers'


class GatewayApp:
    """The gateway in front of ``upstream`` (the URL of its MCP endpoint), serving ``path``.

    * ``enforce``: enforce mode (the module), else monitor mode.
    * ``reports``: where findings go (none kept when None).
    * ``validator``: the `ExchangeValidator` (its ``max_body``, ``max_message``).
    * ``client``: the `mcp_schema.http.pool.HttpClient` to forward with
      (it keeps no cookies, follows no redirects and adds no fields). By
      default the app makes one of its own (`upstream_client`, with
      ``timeouts``), closed at the lifespan's shutdown.
    * ``credentials``: where the ``Authorization`` sent upstream comes from
      (`mcp_schema.http.credentials.StaticToken`, or the client credentials
      grant of `mcp_schema.oauth.OAuth`), for the forwarded requests and
      both bridges; an upstream's 401 renews it, the request sent once more.
    * ``pass_authorization``: forward the client's own ``Authorization``
      and ``Proxy-Authorization`` (never by default: a token is for the
      server that it was issued to, here the gateway).
    * ``served``: what the upstream's start-up probe found
      (`mcp_schema.gateway.probe.Served`): the validator learns from it (the
      versions served per request, the extensions declared) and, with
      ``bridge``, the era it does not serve is bridged (see the module).
    * ``sealer``: what seals the bridge's ``requestState`` when 2026-07-28
      clients are bridged to a handshake-era upstream (a random key by default).
    * ``precheck``: the rules every request passes first (see the module);
      by default ``Precheck(path=path)``, no body size of its own: loopback
      hosts and origins only when served on a loopback address.
    * ``upstream_host``: the ``Host`` sent upstream (``host`` or
      ``host:port``), instead of the client's.
    * ``body_seconds``: the time a POST body has to arrive, up to
      ``max_body`` bytes (408 after it; None: no bound).
    * ``telemetry``: a server span for each request forwarded in monitor
      mode and a client span for its call upstream, whose context replaces
      the body's ``_meta.traceparent`` (`mcp_schema.telemetry.forwarded`).
    * ``max_sessions``, ``max_sessions_per_key``: the share of the handshake-era
      sessions the front bridge keeps (`HandshakeFront`; per caller, a tenth
      by default); ``max_upstreams``, ``max_upstreams_per_key``: that of the
      back bridge's upstream sessions (`HttpBridge`). The sessions the
      validator follows are its own (`ExchangeValidator`'s).
    """

    def __init__(
        self,
        upstream: str,
        *,
        enforce: bool = False,
        reports: ReportLog | None = None,
        validator: ExchangeValidator | None = None,
        client: HttpClient | None = None,
        path: str = "/mcp",
        served: Served | None = None,
        bridge: bool = True,
        sealer: StateSealer | None = None,
        precheck: Precheck | None = None,
        upstream_host: str | None = None,
        body_seconds: float | None = BODY_SECONDS,
        credentials: CredentialSource | None = None,
        pass_authorization: bool = False,
        timeouts: Timeouts | None = None,
        telemetry: Telemetry | bool | None = None,
        max_sessions: int = MAX_SESSIONS,
        max_sessions_per_key: int | None = None,
        max_upstreams: int = MAX_UPSTREAMS,
        max_upstreams_per_key: int = MAX_UPSTREAMS_PER_KEY,
    ) -> None:
        if not isinstance(upstream, str) or not upstream.startswith(("http://", "https://")):
            raise ValueError(f"upstream must be an http(s) URL, not {upstream!r:.80}")
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"path must start with '/', not {path!r:.80}")
        check(precheck, Precheck, "precheck", none=True)
        check(client, HttpClient, "client", none=True)
        check(timeouts, Timeouts, "timeouts", none=True)
        if body_seconds is not None:
            check(body_seconds, (int, float), "body_seconds")
            if not body_seconds > 0:
                raise ValueError(f"body_seconds must be positive, not {body_seconds!r}")
        self.upstream, self.path, self.enforce = upstream, path, bool(enforce)
        self.reports = reports
        self.validator = ExchangeValidator() if validator is None else validator
        self.precheck = Precheck(path=path, max_body=_UNBOUNDED) if precheck is None else precheck
        self.upstream_host, self.body_seconds = upstream_host, body_seconds
        self._target = Target.of(upstream)  # parsed once
        self.credentials = Credentials(credentials, pass_authorization=pass_authorization)
        self._upward = Upward(upstream_host, self.credentials.dropped)
        self.timeouts, self.telemetry = timeouts, telemetry_for(telemetry)
        if self.telemetry is not None:  # the tool names its spans may record: the upstream's
            self.validator.upstream.listed = self.telemetry.listed
        self._client, self._own_client = client, client is None
        self.served = served
        if served is not None:  # what it serves and declares; the answers it forwards teach more
            self.validator.learn(served)
        self.front: HandshakeFront | None = None
        """Where handshake-era requests go when the upstream does not serve that era."""
        self.back: HttpBridge | None = None
        """Where 2026-07-28 requests go when the upstream serves the handshake era alone."""
        self._per_request: Collection[str] = STATELESS_VERSIONS
        """The versions `era_of` finds served per request: the upstream's, or the back bridge's."""
        self._bridged_max = min(self.precheck.max_body, self.validator.max_body)
        shares = Shares(max_sessions, max_sessions_per_key, max_upstreams, max_upstreams_per_key)
        shares.check()  # bridged or not: a bound that cannot be is the caller's mistake
        if bridge and served is not None:
            # The gateway's rules, or a host or origin it admits would be refused
            # there; a bridge reads a body whole: the validator's bound.
            bridged = self.precheck.bounded(self._bridged_max)
            self.front, self.back = bridges_of(self, served, sealer, shares, bridged)
            if self.front is not None:
                self._per_request = served.stateless

    @property
    def client(self) -> HttpClient:
        if self._client is None:
            self._client = upstream_client(self.timeouts)
        return self._client

    async def aclose(self) -> None:
        """Close the client the app made (one given is the caller's)."""
        if self._own_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    def _report(self, reports: list[Report]) -> None:
        if self.reports is not None:
            for report in reports:
                self.reports.add(report)

    def _traffic(self, size: int) -> None:
        if self.reports is not None:
            self.reports.traffic(size)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await serve_lifespan(receive, send, self._startup, self._shutdown)
        if scope["type"] != "http":
            return None
        method: str = scope["method"]
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        received = received_headers(headers)  # once: the precheck, the era, CORS read it
        admitted = await self.precheck.admit(method, scope["path"], received, scope)
        if isinstance(admitted, Response):  # nothing reaches a bridge or the upstream
            return await send_response(send, admitted)
        body, more = b"", False
        if method == "POST":
            read = await read_head(receive, self.validator.max_body, self.body_seconds)
            if read is None:
                return None  # the client left
            if isinstance(read, Response):
                return await send_response(send, read)
            body, more = read
        if self.front is not None or self.back is not None:
            bridged = self._bridged(admitted, method, received, body, more, receive, send)
            if bridged is not None:
                return await bridged
        origin = self._cors_origin(received)
        exchange = _Deferred(self, method, received, body, admitted.key)
        # Read before anything is forwarded: in enforce mode, and an initialize
        # (its session's place in the validator's table: `Exchange.busy`).
        if self.enforce or (not more and opens(method, received, body)):
            first = exchange.get()
            refused = first.refusal if self.enforce else first.busy
            if refused is not None:
                return await send_response(send, with_cors(refused, origin))
        query = scope.get("query_string", b"")
        try:
            target = self._target.with_query(query) if query else self._target
        except ValueError:
            exchange.release()
            return await send_response(send, refusal(400, "Bad Request: a malformed query", None))
        content: bytes | AsyncIterator[bytes] = rest(body, receive) if more else body
        upward = self._upward.fields(headers)
        traced = None
        if self.telemetry is not None and not more and method == "POST" and self.telemetry.active:
            from mcp_schema.telemetry.forwarded import forward_traced

            telemetry, known = self.telemetry, self._per_request
            traced, content, upward, send = forward_traced(
                telemetry, scope, received, body, known, self.upstream, upward, send
            )
        forwarding = self._forward(exchange, method, target, upward, content, origin, send)
        if more:  # the body still comes: its reader sees the client leave
            return await forwarding
        watch = Leaving(receive)
        try:
            await forwarding
        except asyncio.CancelledError:
            if not watch.absorbed():
                raise
            self._report(exchange.get().end(cut=True))  # the upstream request was cancelled
        finally:
            watch.stop()
            exchange.release()  # an initialize whose answer opened no session
            if traced is not None:
                traced.end()
        return None

    def _bridged(
        self,
        caller: Caller,
        method: str,
        received: dict[str, str],
        body: bytes,
        more: bool,
        receive: Receive,
        send: Send,
    ) -> Awaitable[None] | None:
        """The request handed to the bridge of its era (`era_of`), as it was
        prechecked and read here, or None when the upstream serves that era.
        GET and DELETE are handshake-era; a body too long to read, or not a
        message, is placed by its headers (and a bridge refuses a body longer
        than the validator's bound: it reads each message whole)."""
        value = _UNREAD
        if method == "POST" and not more:
            with contextlib.suppress(McpError):  # the one it goes to refuses it
                value = parse(body)
        stateless = method == "POST" and era_of(value, received, self._per_request).stateless
        if (stateless and self.back is None) or (not stateless and self.front is None):
            return None
        if method == "POST" and (more or len(body) > self._bridged_max):
            return send_response(send, too_large(self._bridged_max))
        bridge = self.back if self.back is not None and stateless else self.front
        assert bridge is not None
        return bridge.serve(method, received, body, receive, send, caller)

    def _cors_origin(self, received: dict[str, str]) -> str | None:
        """The origin whose answer gets the gateway's CORS headers (they replace
        the upstream's), or None."""
        if not self.precheck.cors:
            return None
        origin = received.get("origin")
        return origin if origin in self.precheck.allowed_origins else None

    async def _forward(
        self,
        deferred: _Deferred,
        method: str,
        target: Target,
        headers: list[tuple[bytes, bytes]],
        content: bytes | AsyncIterator[bytes],
        origin: str | None,
        send: Send,
    ) -> None:
        try:
            response = await opened(self.client, self.credentials, method, target, headers, content)
        except UpstreamError as exc:
            return await self._failed(deferred, exc.message, exc.status, origin, send)
        try:
            down, status = response.headers, response.status
            if _media(told := _told(down)) == _SSE:  # its first Content-Type is among them
                exchange = deferred.get()
                exchange.head(status, told)
                start = start_message(status, answered(down, _LENGTH, origin))
                await relay_events(self, exchange, response, start, send)
            else:
                await self._whole(deferred, response, down, told, origin, send)
        except UpstreamError:
            pass  # the upstream broke mid-answer: what was sent stands, the answer ends
        finally:
            await response.aclose()
        ended = deferred.get().end()
        if ended:
            self._report(ended)

    async def _failed(
        self, deferred: _Deferred, reason: str, status: int, origin: str | None, send: Send
    ) -> None:
        """No answer of the upstream's to relay: 502 (504 for a timeout), reported."""
        exchange = deferred.get()
        report, answer = exchange.unreachable(reason, status)
        self._report([report, *exchange.end()])
        await send_response(send, with_cors(answer, origin))

    async def _whole(
        self,
        deferred: _Deferred,
        response: StreamedResponse,
        headers: list[tuple[bytes, bytes]],
        told: list[tuple[bytes, bytes]],
        origin: str | None,
        send: Send,
    ) -> None:
        """A JSON (or empty, or other) answer (``told``: its `_told`): checked whole when JSON."""
        limit, status = self.validator.max_message, response.status
        kept: list[bytes] = []
        size = 0
        if not self.enforce:  # monitor: each chunk on as it comes, all checked once sent
            await send(start_message(status, answered(headers, (), origin)))
            more = True
            while more and (chunk := await response.receive()):
                more = not response.complete  # the last piece came: one send, not two
                await send({"type": "http.response.body", "body": chunk, "more_body": more})
                size += len(chunk)
                if size <= limit:
                    kept.append(chunk)
            if more:
                await send_body(send, b"")
            exchange = deferred.get(size)
            exchange.head(status, told)
            if exchange.json:
                report = exchange.answer(b"".join(kept), None if size <= limit else size)
                if report is not None:
                    self._report([report])
            return
        exchange = deferred.get()
        exchange.head(status, told)
        while chunk := await response.receive():
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
                refused = bad_gateway(report, exchange.request_id)
                return await send_response(send, with_cors(refused, origin))
        # As send_response writes a Response, without making the headers one's (str) and back.
        kept_headers = answered(headers, _LENGTH, origin)
        kept_headers.append((b"content-length", str(len(body)).encode()))
        await send(start_message(status, kept_headers))
        await send_body(send, body)

    async def _startup(self) -> None:
        if self.back is not None:  # probed now, unless the start-up probe initialized
            await self.back.start()

    async def _shutdown(self) -> None:
        if self.front is not None:
            self.front.close()
        if self.back is not None:
            await self.back.aclose()
        await self.aclose()


class _Deferred:
    """The `Exchange` of a request, read when first needed: in enforce mode
    before it is forwarded; in monitor mode once its answer came (and a JSON
    answer was sent on), so that reading it adds nothing to the wait."""

    __slots__ = ("_app", "_body", "_exchange", "_key", "_method", "_received")

    def __init__(
        self, app: GatewayApp, method: str, received: dict[str, str], body: bytes, key: str
    ) -> None:
        self._app, self._method, self._received, self._body = app, method, received, body
        self._key = key  # the caller's: whose share an initialize counts in
        self._exchange: Exchange | None = None

    def get(self, relayed: int = 0) -> Exchange:
        """The exchange; ``relayed``: bytes of the answer relayed, traffic as the
        request's are when it is read, before its reports (one count for both)."""
        if self._exchange is None:
            self._app._traffic(len(self._body) + relayed)
            # The headers as the precheck read them: the validator takes them as they are.
            key, validator = self._key, self._app.validator
            self._exchange = validator.request(self._method, self._received, self._body, key=key)
            if self._exchange.reports:
                self._app._report(self._exchange.reports)
        elif relayed:
            self._app._traffic(relayed)
        return self._exchange

    def release(self) -> None:
        if self._exchange is not None:
            self._exchange.release()


def _told(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers of an answer `Exchange.head` reads (the rest it would only convert)."""
    return [h for h in headers if h[0] in _HEAD_READ]


def _media(headers: list[tuple[bytes, bytes]]) -> bytes:
    """The media type of an answer's first ``Content-Type`` (lower-case, no parameters)."""
    for name, value in headers:
        if name == b"content-type":
            return value.partition(b";")[0].strip().lower()
    return b""
