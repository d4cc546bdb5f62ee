"""`StdioGatewayApp`: an ASGI 3 application serving ``/mcp`` over Streamable
HTTP in front of a stdio MCP server (``gateway ... -- CMD ARGS...``), every
message checked both ways by an `ExchangeValidator` as `GatewayApp` checks
them, and reported (monitor) or refused (enforce) the same way.

One stdio connection is one session, so:

* a **handshake-era session** (``initialize``; the gateway mints its
  ``Mcp-Session-Id``) gets a child process of its own, ended at ``DELETE``,
  or once unused (no request in flight, no GET stream) for ``idle_seconds``.
  At most ``max_sessions`` at once, ``max_sessions_per_key`` per client (its
  `mcp_schema.http.caller.Caller.key`: `mcp_schema.shares`): past either,
  ``initialize`` is refused, 429 with ``Retry-After``, and no other client's
  child is ended to make room. Its lines pass unchanged: the child's
  response to a POST's request is its answer (JSON when it comes first,
  else an event stream carrying what came before it); its other messages
  go to the session's GET stream when one is open, else to the stream of
  its latest request in flight.
* **2026-07-28 requests** (self-contained) share one child: each request's
  id (and progress token) is replaced by one of the gateway's before it is
  written, and put back in what answers it, so two clients both using id 1
  never collide; progress goes to the request whose token it names, a
  listen's notifications to the listen they name, log messages to the one
  request in flight that asked for them (reported and dropped when several
  did: stdio cannot tell them apart). Each child and its routing is a
  `mcp_schema.gateway.monitor.stdio_link.Link`.

Every request is first checked by a `mcp_schema.http.precheck.Precheck`
(in monitor and enforce mode alike: the path, ``Host`` and ``Origin``, the
method and the media; on a loopback address only the loopback names are
served), and its body read within ``body_seconds`` (408 after), before any
child is started or written to. A request's era is `mcp_schema.http.era.era_of`
of its body and headers.

A child that exits fails its requests in flight (502, -32603, one report
each); the session it served is gone (404, as for any unknown session), and
a later ``initialize`` or 2026-07-28 request gets a fresh child. With
``bridge`` (`mcp_schema.gateway.bridge.links`), 2026-07-28 requests to a
server that speaks only the handshake era are carried across instead.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from time import monotonic
from typing import TYPE_CHECKING, Any

import jiter

from mcp_schema.errors import BadGatewayError
from mcp_schema.gateway.child import ChildError
from mcp_schema.gateway.findings import Findings
from mcp_schema.gateway.monitor.exchange import Exchange, ExchangeValidator, bad_gateway
from mcp_schema.gateway.monitor.stdio_link import MAX_QUEUED, Link, Waiter
from mcp_schema.gateway.probe import ProbeError, Served, probe_command
from mcp_schema.http.adapter import (
    BODY_SECONDS,
    Message,
    Receive,
    Scope,
    Send,
    read_body,
    send_body,
    send_response,
    serve_lifespan,
    sse_event,
    start_message,
    until_disconnect,
)
from mcp_schema.http.caller import SCOPE_KEY, principal_in
from mcp_schema.http.cors import cors_headers
from mcp_schema.http.era import era_of
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.rules import failure, refusal, too_many
from mcp_schema.http.sessions import IDLE_SECONDS
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import received_headers
from mcp_schema.proxy.lines import MAX_LINE_BYTES
from mcp_schema.proxy.reports import Report, ReportLog
from mcp_schema.shares import Share, ShareExceededError

if TYPE_CHECKING:
    from mcp_schema.gateway.bridge.links import StdioBridge

__all__ = ["MAX_QUEUED", "MAX_SESSIONS", "ROUND_SECONDS", "StdioGatewayApp"]

MAX_SESSIONS = 32
"""Handshake-era sessions (each a child process) served at once, by default."""

ROUND_SECONDS = 60.0
"""How long a session's requests may wait in silence before it counts as idle, by default."""

MAX_SESSIONS_PER_KEY = 4
"""Of which one client may hold, by default (a child costs tens of MB)."""

_SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_JSON = ("content-type", "application/json")
_SSE_MEDIA = ("content-type", "text/event-stream")


class StdioGatewayApp:
    """The gateway in front of the stdio server ``command`` (see the module).

    * ``enforce``, ``reports``, ``validator``: as `GatewayApp`'s.
    * ``max_sessions``: handshake-era sessions (children) at once;
      ``max_sessions_per_key`` of them per client; ``idle_seconds``: how long
      one may go unused before its child is ended.
    * ``max_line_bytes``: the longest line read from a child.
    * ``round_seconds``: how long a session's requests may wait with nothing
      from either side (a server's question its client leaves unanswered)
      before the session counts as idle, and a newcomer may take its place.
    * ``bridge``: what makes the `StdioBridge` serving the
      2026-07-28 requests (the server speaking only the handshake era), or None.
    * ``precheck``: the rules every request is checked by first (its allowed
      hosts and origins); by default ``Precheck(path=path,
      max_body=validator.max_body)``.
    * ``body_seconds``: the time a POST body has to arrive whole (408 after
      it; None: no bound).

    `start` (the lifespan's startup) probes the command before the app serves.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        enforce: bool = False,
        reports: ReportLog | None = None,
        validator: ExchangeValidator | None = None,
        max_sessions: int = MAX_SESSIONS,
        max_sessions_per_key: int = MAX_SESSIONS_PER_KEY,
        idle_seconds: float = IDLE_SECONDS,
        max_line_bytes: int = MAX_LINE_BYTES,
        round_seconds: float = ROUND_SECONDS,
        bridge: Callable[[StdioGatewayApp], StdioBridge] | None = None,
        path: str = "/mcp",
        precheck: Precheck | None = None,
        body_seconds: float | None = BODY_SECONDS,
    ) -> None:
        if isinstance(command, (str, bytes)) or not command:
            raise ValueError("command must be a non-empty sequence of strings")
        if max_sessions < 1 or max_line_bytes < 1:
            raise ValueError("max_sessions and max_line_bytes must be positive")
        if not round_seconds > 0:
            raise ValueError(f"round_seconds must be positive, not {round_seconds!r}")
        if precheck is not None and not isinstance(precheck, Precheck):
            raise TypeError(f"precheck must be a Precheck, not {type(precheck).__name__}")
        if body_seconds is not None and not body_seconds > 0:
            raise ValueError(f"body_seconds must be positive, not {body_seconds!r}")
        self.command, self.enforce = list(command), bool(enforce)
        self.reports = reports
        self.validator = ExchangeValidator() if validator is None else validator
        self.precheck = (
            Precheck(path=path, max_body=self.validator.max_body) if precheck is None else precheck
        )
        self.path, self.body_seconds = self.precheck.path, body_seconds
        self.max_sessions, self.max_line_bytes = max_sessions, max_line_bytes
        self.sessions: OrderedDict[str, Link] = OrderedDict()
        """The children of handshake-era sessions, least recently used first."""
        per_key = min(max_sessions_per_key, max_sessions)
        self.share = Share("sessions", total=max_sessions, per_key=per_key)
        self.idle_seconds = float(idle_seconds)
        self._owners: dict[str, tuple[str | None, float]] = {}  # id: its client's key, last used
        self.round_seconds = round_seconds
        self.shared: Link | None = None
        self._sharing = asyncio.Lock()
        self.unrouted_logs = 0
        """Log lines of the shared child no one client could be given (dropped)."""
        self._bridge_factory = bridge
        self.probed: Served | None = None
        """What the start-up probe found of the server."""
        self.start_error: str | None = None
        """Why the start-up probe failed, if it did."""
        self.bridge: StdioBridge | None = None
        self.findings = Findings(reports)

    # -- reports ------------------------------------------------------------------------

    def gone(self, link: Link) -> None:
        """``link``'s child exited: its session (if any) is over."""
        if link.session is not None and self.sessions.get(link.session) is link:
            self._drop(link.session)
            self.validator.request("DELETE", {"mcp-session-id": link.session}).head(200, {})
        if self.shared is link:
            self.shared = None

    # -- lifespan -----------------------------------------------------------------------

    async def start(self) -> None:
        """Probe the command (`mcp_schema.gateway.probe.probe_command`: it must answer
        before the gateway serves) and build the bridge from what it found; once
        (the lifespan's startup finds it done when the caller started it)."""
        if self.probed is not None:
            return
        try:
            self.probed, child = await probe_command(self.command, self.max_line_bytes)
        except (ProbeError, ChildError) as exc:
            self.start_error = str(exc)
            raise
        self.validator.learn(self.probed)  # what it serves and declares
        if child is not None:  # it speaks 2026-07-28: the shared child
            self.shared = Link(self, None, child)
        if self._bridge_factory is not None:
            self.bridge = self._bridge_factory(self)
            self.bridge.adopt(self.probed)

    async def aclose(self) -> None:
        links = [*self.sessions.values(), *filter(None, [self.shared])]
        for session in list(self.sessions):
            self._drop(session)
        self.shared = None
        await asyncio.gather(*(link.child.close() for link in links))
        if self.bridge is not None:
            await self.bridge.aclose()

    # -- HTTP -----------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await serve_lifespan(receive, send, self.start, self.aclose)
        if scope["type"] != "http":
            return None
        received = received_headers(scope["headers"])
        method = scope["method"]
        admitted = await self.precheck.admit(method, scope["path"], received, scope)
        if isinstance(admitted, Response):
            return await send_response(send, admitted)
        scope = {**scope, SCOPE_KEY: admitted}  # who it is, for the bridge's principal
        if method == "POST":
            return await self._post(scope, received, receive, send, admitted.key)
        send = _with_cors(self.precheck, received, send)
        session = received["mcp-session-id"]  # GET or DELETE: the precheck found it named
        link = self.sessions.get(session)
        if link is None or link.principal != admitted.principal:  # another's: none of yours
            return await send_response(send, refusal(404, "Not Found: no such session"))
        exchange = self.validator.request(method, received)
        if method == "DELETE":
            self._drop(session)
            exchange.head(200, {})
            await link.child.close()
            return await send_response(send, Response(200))
        if link.stream is not None:
            return await send_response(send, refusal(409, "Conflict: the session's stream is open"))
        exchange.head(200, {"content-type": "text/event-stream"})
        waiter = Waiter(exchange, None, None, False)
        link.stream = waiter
        try:
            await self._relay(send, waiter, None, stream_only=True, receive=receive)
        finally:
            if link.stream is waiter:
                link.stream = None
        return None

    async def _post(
        self, scope: Scope, received: dict[str, str], receive: Receive, send: Send, key: str | None
    ) -> None:
        """A POST the precheck let through: its body read, then its message
        bridged (2026-07-28 to a handshake-era server) or forwarded."""
        # Whole, for the child's line: never past what the validator reads.
        limit = min(self.precheck.max_body, self.validator.max_body)
        body = await read_body(receive, limit, self.body_seconds)
        if body is None:
            return None  # the client left
        if isinstance(body, Response):  # too long, or too slow
            return await send_response(send, body)
        self.findings.traffic(len(body))
        try:  # once: the era and the routing read it; the exchange reads it by the codec
            value = jiter.from_json(body)
        except ValueError:
            value = None
        message = value if isinstance(value, dict) else None
        stateless = era_of({} if message is None else message, received).stateless
        if stateless and self.bridge is not None and self.bridge.core is not None:
            # (Its endpoint adds the CORS headers itself, by the same rules.)
            return await self.bridge.serve("POST", received, body, receive, send, scope[SCOPE_KEY])
        send = _with_cors(self.precheck, received, send)
        exchange = self.validator.request("POST", received, body, key=key)
        self._reports(exchange.reports)
        try:
            principal = principal_in(scope)
            await self.forward(exchange, body, message, receive, send, stateless, key, principal)
        finally:  # an initialize refused or failed here: its place in the validator's table
            exchange.release()

    async def forward(
        self,
        exchange: Exchange,
        body: bytes,
        value: dict[str, Any] | None,
        receive: Receive,
        send: Send,
        stateless: bool,
        key: str | None = None,
        principal: str | None = None,
    ) -> None:
        """Forward a POST's message (``body``, parsed: ``value``, None when it
        is no JSON object; its ``exchange`` read) to its child: the shared one
        when ``stateless``, else its session's (``initialize`` makes one, of
        ``principal``; another principal's session is 404)."""
        if exchange.refusal is not None and (self.enforce or value is None):
            return await send_response(send, exchange.refusal)  # what cannot be routed is refused
        assert value is not None
        minted = None
        if stateless:
            link = await self._shared()
        elif exchange.rpc_method == "initialize" and "id" in value:
            opened = await self._new_session(key)
            if isinstance(opened, ShareExceededError):
                return await send_response(send, too_many(opened, exchange.request_id))
            link, minted = opened, opened.session
            link.principal = principal
        else:
            named = exchange.session
            if named is None:
                return await send_response(send, refusal(400, "Bad Request: no Mcp-Session-Id"))
            found = self.sessions.get(named)
            if found is None or found.principal != principal:
                return await send_response(send, refusal(404, "Not Found: no such session"))
            self._used(named)
            link = found
        if "method" not in value or "id" not in value:  # a notification, or the client's answer
            link.active = monotonic()
            foreign = link.foreign(value)
            if foreign is not None:  # another client's request it could reach: dropped
                self.findings.found(f"Invalid Request: {foreign}; not forwarded", body)
                exchange.head(202, {})
                self._reports(exchange.end())
                return await send_response(send, Response(202))
            link.child.send(link.frame(body, value))
            exchange.head(202, {})
            self._reports(exchange.end())
            return await send_response(send, Response(202))
        link.active = monotonic()
        waiter = link.waiting(exchange, value)
        if not link.child.send(link.frame(body, value)):
            waiter.queue.put_nowait(None)
        await self._relay(send, waiter, minted, receive=receive, link=link)
        if link.session is not None and link.session in self._owners:
            self._used(link.session)  # idle from the end of its last request
        return None

    async def _shared(self) -> Link:
        async with self._sharing:  # one shared child, however many requests come at once
            if self.shared is None or not self.shared.child.alive:
                link = Link(self, None)
                await link.child.start()
                self.shared = link
            return self.shared

    async def _new_session(self, key: str | None) -> Link | ShareExceededError:
        """A session of its own child for the client of ``key``, within its
        share (counted before the child starts: concurrent ``initialize``
        requests start no more children than the share has room for). When
        the share is full, sessions whose requests have waited
        ``round_seconds`` with nothing from either side (a server's question
        its client never answered) are ended first: a stuck round never
        blocks a newcomer."""
        await self._expire()
        if not self.share.acquire(key):
            await self._end_stuck()
            if not self.share.acquire(key):
                return self.share.refused(key)
        link = Link(self, secrets.token_urlsafe(16))
        try:
            await link.child.start()
        except BaseException:
            self.share.release(key)
            raise
        assert link.session is not None
        self.sessions[link.session] = link
        self._owners[link.session] = (key, time.monotonic())
        return link

    def _used(self, session: str) -> None:
        self.sessions.move_to_end(session)
        key, _ = self._owners[session]
        self._owners[session] = (key, time.monotonic())

    def _drop(self, session: str) -> Link | None:
        """Forget ``session``, its share given back (its child is the caller's to end)."""
        link = self.sessions.pop(session, None)
        owner = self._owners.pop(session, None)
        if owner is not None:
            self.share.release(owner[0])
        return link

    async def _expire(self) -> None:
        """End the children of sessions unused for ``idle_seconds``, oldest
        first (one with a request in flight or a GET stream is in use)."""
        now = time.monotonic()
        while self.sessions:
            session, link = next(iter(self.sessions.items()))
            if self._owners[session][1] > now - self.idle_seconds:
                return
            if link.pending or link.stream is not None:
                self._used(session)
                continue
            self._drop(session)
            self.validator.request("DELETE", {"mcp-session-id": session}).head(200, {})
            await link.child.close()

    async def _end_stuck(self) -> None:
        """End every session whose requests have waited ``round_seconds`` in silence."""
        now = monotonic()
        for session, link in list(self.sessions.items()):
            if link.pending and now - link.active > self.round_seconds:
                self._drop(session)
                self.validator.request("DELETE", {"mcp-session-id": session}).head(200, {})
                await link.child.close()

    def _reports(self, reports: list[Report]) -> None:
        for report in reports:
            self.findings.report(report)

    async def _relay(
        self,
        send: Send,
        waiter: Waiter,
        minted: str | None,
        *,
        receive: Receive,
        link: Link | None = None,
        stream_only: bool = False,
    ) -> None:
        """Answer one request with what the child sends it: JSON when the
        response comes first, else an event stream ending with it."""
        exchange = waiter.exchange
        own = [("mcp-session-id", minted)] if minted is not None else []
        left = asyncio.ensure_future(until_disconnect(receive))
        started = stream_only
        if stream_only:
            await send(start_message(200, _SSE))
        try:
            while True:
                got = asyncio.ensure_future(waiter.queue.get())
                await asyncio.wait({got, left}, return_when=asyncio.FIRST_COMPLETED)
                if not got.done():  # the client left
                    got.cancel()
                    if link is not None:
                        link.abandon(waiter)
                    self._reports(exchange.end(cut=True))
                    return
                item = got.result()
                if item is None and stream_only:  # the session is over: so is its stream
                    return await send_body(send, b"")
                if item is None:  # the child is gone
                    error = BadGatewayError(
                        "Bad gateway: the server process exited before answering"
                    )
                    self.findings.found(error.message, b"", error.code)
                    answer = failure(error, exchange.request_id)
                    if not started:
                        return await send_response(send, answer)
                    return await send_body(send, sse_event(answer.body))
                line, final = item
                if not started:
                    exchange.head(200, [_JSON if final else _SSE_MEDIA, *own])
                report = exchange.answer(line)
                if report is not None:
                    self.findings.report(report)
                    if self.enforce:
                        refused = bad_gateway(report, exchange.request_id)
                        if not started:
                            return await send_response(send, refused)
                        return await send_body(send, sse_event(refused.body))
                if not started and final:
                    self._reports(exchange.end())
                    return await send_response(send, Response(200, [_JSON, *own], line))
                if not started:
                    await send(start_message(200, [*_SSE, *_encoded_headers(own)]))
                    started = True
                await send_body(send, sse_event(line), more=not final)
                if final:
                    self._reports(exchange.end())
                    return
        finally:
            left.cancel()


def _with_cors(rules: Precheck, received: dict[str, str], send: Send) -> Send:
    """``send``, adding the CORS headers of the request's allowed origin (to every answer)."""
    origin = received.get("origin")
    if not rules.cors or origin not in rules.allowed_origins:
        return send
    encoded = _encoded_headers(cors_headers(origin))

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message["headers"], *encoded]}
        await send(message)

    return sending


def _encoded_headers(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
