"""`ExchangeValidator`: the messages of Streamable HTTP exchanges, both
ways, checked by the codec, each failing one a `mcp_schema.proxy.Report`
(sans-IO: a gateway in any framework feeds it what it forwards).

One `ExchangeValidator` serves a gateway. `ExchangeValidator.request`
takes what a client sent (method, headers, body) and returns its
`Exchange`: the body read once by a `mcp_schema.codec.Correlator`, its
headers in the same pass (``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name`` against the body, as `mcp_schema.http.Endpoint` reads them:
-32020 on a mismatch), and what a refusal would answer (`Exchange.refusal`,
the codec's JSON-RPC error in the status `mcp_schema.http.rules.status_of`
gives). Then the upstream's answer: `Exchange.head` (its status and
headers), and each message it carries, the JSON body or the ``data`` of
each server-sent event (`Exchange.answer`), in order; `Exchange.end` when
it is over. Each message is read by the same Correlator, so a response is
validated as the result of the method it answers, in its version; besides:

* a response must answer the request of its exchange (its id), once; a
  stateless-era request (2026-07-28) or a JSON answer must end with it. An
  error whose id is null answers it too: the upstream refused the POST
  before it could read an id (its ``Origin``, its ``Host``, a body it could
  not parse), as JSON-RPC has it;
* on a ``subscriptions/listen`` stream, each change notification must be
  one the client's filter asks for, and name the listen
  (``io.modelcontextprotocol/subscriptionId``);
* a message longer than ``max_message`` bytes is not read (-32700).

A ``tools/call``'s ``Mcp-Param-*`` headers (2026-07-28) are checked against
its arguments in the same pass, as the endpoint checks them (-32020), by the
``x-mcp-header`` annotations of the tools the upstream listed
(`mcp_schema.gateway.monitor.upstream`, which says which are kept and for how long).

What the validator knows of the upstream, from its probe (`learn`) and
the answers it reads, is its `mcp_schema.gateway.monitor.upstream.Upstream`
(``upstream``): the versions it serves per request, which a refusal of an
unsupported version lists (-32022, after -32020 for a
``MCP-Protocol-Version`` naming another version than the body, as the
endpoint answers), and the extensions it declares: a stateless-era
exchange is read with an extension (the Tasks extension's task answers)
when its request declares it and the upstream did too (or has not said
yet), with those given (``extensions``: ``gateway --tasks``) in every
exchange.

Which Correlator reads an exchange: a request whose
``MCP-Protocol-Version`` header names a stateless-era version is read by
one of its own (it is self-contained); a handshake-era one by its session's
(named by ``Mcp-Session-Id``, made at ``initialize``, kept once the answer
names it: `mcp_schema.gateway.monitor.followed.Followed`, a share per
caller), so the session's version is followed and the client's answer to a
server's request (elicitation) is read against it. A GET stream is read by
its session's.

Reports count the messages of each direction (``line``: the message's
number in its direction, from 1) and carry at most
`mcp_schema.proxy.EXCERPT_BYTES` of it. Not thread-safe: one event loop.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import Any

from mcp_schema._args import check

# The codec's one id rule (private to it, as the endpoint reads ids): a
# response answers its request by the id as the codec reads both.
from mcp_schema._codec.route import request_id
from mcp_schema.codec import Correlator, Sender
from mcp_schema.errors import (
    BadGatewayError,
    GatewayTimeoutError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    McpError,
    ParseError,
    UnsupportedProtocolVersionError,
    clip,
    quote,
)
from mcp_schema.gateway.findings import bad_gateway
from mcp_schema.gateway.monitor.followed import Followed, Place
from mcp_schema.gateway.monitor.placed import out_of_place
from mcp_schema.gateway.monitor.sse import SseEvent
from mcp_schema.gateway.monitor.upstream import MAX_TOOL_BYTES, Upstream
from mcp_schema.gateway.probe import Served
from mcp_schema.http.endpoint import MAX_BODY
from mcp_schema.http.era import era_of
from mcp_schema.http.rules import failure, is_json, mirrored_headers, refusal, status_of, too_many
from mcp_schema.http.sessions import IDLE_SECONDS, MAX_SESSIONS
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import Headers, received_headers
from mcp_schema.proxy.lines import MAX_LINE_BYTES
from mcp_schema.proxy.reports import Report, make_report
from mcp_schema.subscriptions import Filter
from mcp_schema.tool_headers import ToolHeaders
from mcp_schema.versions import STATELESS_VERSIONS

__all__ = ["MAX_MESSAGE", "MAX_TOOL_BYTES", "Exchange", "ExchangeValidator", "bad_gateway"]

MAX_MESSAGE = MAX_LINE_BYTES
"""Longest message of an upstream's answer read, by default."""

_LISTEN = "subscriptions/listen"
_UNREACHABLE = "Bad gateway: the upstream cannot be reached"


class ExchangeValidator:
    """The validator of one gateway's exchanges (see the module)."""

    def __init__(
        self,
        *,
        extensions: Collection[str] = (),
        max_body: int = MAX_BODY,
        max_message: int = MAX_MESSAGE,
        max_sessions: int = MAX_SESSIONS,
        max_sessions_per_key: int | None = None,
        idle_seconds: float = IDLE_SECONDS,
        max_tool_bytes: int = MAX_TOOL_BYTES,
        served: Served | None = None,
    ) -> None:
        sizes = {"max_body": max_body, "max_message": max_message, "max_sessions": max_sessions}
        for name, size in {**sizes, "max_tool_bytes": max_tool_bytes}.items():
            check(size, int, name)
            if size < 1:
                raise ValueError(f"{name} must be positive, not {size}")
        Correlator(extensions=extensions)  # checked once, here
        self.upstream = Upstream(frozenset(extensions), max_tool_bytes)
        """What is known of the upstream (`mcp_schema.gateway.monitor.upstream.Upstream`)."""
        self.max_body, self.max_message, self.max_sessions = max_body, max_message, max_sessions
        self._sessions = Followed(max_sessions, max_sessions_per_key, idle_seconds)
        self._numbers: dict[Sender, int] = {"client": 0, "server": 0}
        self._made: dict[frozenset[str], Correlator] = {}  # by extensions: what each twins
        if served is not None:
            self.learn(served)

    def learn(self, served: Served) -> None:
        """What the upstream's probe found (`mcp_schema.gateway.probe.Served`):
        the versions it serves per request and, when it discovered, the
        extensions it declares. The answers read later teach more."""
        self.upstream.learn(served)

    @property
    def extensions(self) -> frozenset[str]:
        """The extensions read in every exchange, whatever the upstream declares."""
        return self.upstream.extensions

    @property
    def max_tool_bytes(self) -> int:
        return self.upstream.max_tool_bytes

    @property
    def sessions(self) -> int:
        """Handshake-era sessions followed."""
        return len(self._sessions)

    @property
    def tools(self) -> Mapping[str, ToolHeaders]:
        """The tools whose ``Mcp-Param-*`` headers are checked, by name (read only)."""
        return MappingProxyType(self.upstream.tools)

    @property
    def tool_bytes(self) -> int:
        """The size of the annotations kept (at most ``max_tool_bytes``)."""
        return self.upstream.tool_bytes

    def _correlator(self, extensions: frozenset[str] | None = None) -> Correlator:
        used = self.extensions if extensions is None else extensions
        made = self._made.get(used)
        if made is None:  # the first of its extensions: the others are its twins
            made = self._made[used] = Correlator(extensions=used, allow_unknown_methods=True)
        return made._twin()

    def _number(self, sender: Sender) -> int:
        self._numbers[sender] += 1
        return self._numbers[sender]

    def request(
        self, method: str, headers: Headers, body: bytes = b"", *, key: str | None = None
    ) -> Exchange:
        """The exchange of one HTTP request (``method``: POST, GET, DELETE...;
        ``body``: a POST's, at most ``max_body`` bytes: a longer one is
        `Exchange.too_long` unread), sent by the caller of ``key`` (its `Caller.key`,
        whose share an ``initialize`` counts in; None: the total only)."""
        check(method, str, "method")
        check(body, bytes, "body")
        received = received_headers(headers)
        session = received.get("mcp-session-id")
        version = received.get("mcp-protocol-version")
        correlator = None
        if session is not None and version not in STATELESS_VERSIONS:
            correlator = self._sessions.get(session)
        fresh = correlator is None
        if correlator is None:
            correlator = self._correlator(self.upstream.extensions_for(body) if body else None)
        exchange = Exchange(self, method, session, correlator, fresh=fresh)
        if method == "POST":
            exchange._read(received, body)
            if exchange._opening:
                exchange._reserve(key)
        return exchange


class Exchange:
    """One HTTP request and the upstream's answer to it (see the module):
    made by `ExchangeValidator.request`."""

    __slots__ = (
        "_failed", "_fresh", "_opening", "_owner", "_place", "answered", "busy", "correlator",
        "json", "listen", "method", "refusal", "reports", "request_id", "rpc_method",
        "session", "stateless", "unread",
    )  # fmt: skip

    def __init__(
        self,
        owner: ExchangeValidator,
        method: str,
        session: str | None,
        correlator: Correlator,
        *,
        fresh: bool = True,
    ) -> None:
        self._owner = owner
        self._fresh = fresh  # the correlator is the exchange's own (not a session's)
        self.method = method
        """The HTTP method."""
        self.session = session
        """The ``Mcp-Session-Id`` the request named, or the one its answer gave."""
        self.correlator = correlator
        self.reports: list[Report] = []
        """The findings of the client's request (`Exchange.refusal` answers the first)."""
        self.refusal: Response | None = None
        """What enforce mode answers instead of forwarding the request (None: forward it)."""
        self.rpc_method: str | None = None
        """The JSON-RPC method of the request (or notification) the body holds."""
        self.request_id: str | int | None = None
        """The id of the request the body holds (None: it holds no request)."""
        self.stateless = False
        """Whether the request names a stateless-era version (its answer must end with the response)."""
        self.answered = False
        """Whether a response to the request came."""
        self.listen: Filter | None = None
        """A ``subscriptions/listen``'s filter (None: the request is no listen)."""
        self._failed = False  # a message of the answer was reported (it may have been the response)
        self._opening = False
        self.unread = False
        """Whether the body was not read (too long, or not JSON): its id is unknown."""
        self.json = False
        """Whether the upstream's answer is JSON (its ``Content-Type``): its body is one message."""
        self.busy: Response | None = None
        """The 429 both modes answer instead of forwarding an ``initialize``: its
        caller's share of the sessions followed, or the table, is full."""
        self._place: Place | None = None  # reserved by an initialize

    # -- the client's request -------------------------------------------------------------

    def _read(self, received: dict[str, str], body: bytes) -> None:
        number = self._owner._number("client")
        if len(body) > self._owner.max_body:
            message = (
                f"Parse error: a body of {len(body):,} bytes is longer than the limit of "
                f"{self._owner.max_body:,}; not read"
            )
            self.reports.append(
                make_report("client", number, ParseError.code, message, None, None, body)
            )
            self.refusal = refusal(
                413, f"Payload Too Large: at most {self._owner.max_body:,} bytes"
            )
            self.unread = True
            return
        if not is_json(received.get("content-type")):
            report = make_report(
                "client", number, InvalidRequestError.code,
                "Invalid Request: a POST body must be application/json", None, None, body,
            )  # fmt: skip
            self.reports.append(report)
            self.refusal = refusal(415, "Unsupported Media Type: the body must be application/json")
            self.unread = True
            return
        # initialize is read without MCP-Protocol-Version (it predates the
        # session's version, as the endpoint reads it); a handshake-era body
        # holds the word whenever it is one, and the rare one that holds it
        # otherwise is read again with it, its first reading forgotten (a
        # stateless-era request must carry it, and is read with it at once).
        stateless = received.get("mcp-protocol-version") in STATELESS_VERSIONS
        opening = not stateless and b'"initialize"' in body
        try:
            value = self._decoded(received, body, opening)
        except McpError as err:
            read = self._refused(err, received, body, opening, number)
            if read is None:
                return
            value = read
        method = value.get("method")
        self.rpc_method = method if isinstance(method, str) else None
        if self._fresh:
            used = self.correlator.extensions
            kept = self._owner.upstream.declared_only(used, value)
            if kept != used:
                self.correlator.extensions = kept
        if "method" in value and "id" in value:
            self.request_id = request_id(value["id"])  # 1.0 is the request 1
            self.stateless = era_of(value, received).stateless
            self._opening = method == "initialize"
            if method == _LISTEN:
                params = value.get("params") or {}
                # the codec read its filter; the URIs are bounded by the body
                self.listen = Filter.of(params.get("notifications") or {}, max_uris=sys.maxsize)

    def _decoded(self, received: dict[str, str], body: bytes, opening: bool) -> dict[str, Any]:
        """The request, read by the exchange's correlator with its headers."""
        tools = self._owner.upstream.tools
        value = self.correlator.decode_dict(
            body, sender="client", headers=mirrored_headers(received, opening=opening), tools=tools
        )
        if opening and value.get("method") != "initialize" and "method" in value:
            if "id" in value:
                self.correlator.forget(value["id"], sender="client")
            value = self.correlator.decode_dict(
                body, sender="client", headers=mirrored_headers(received), tools=tools
            )
        return value

    def _refused(
        self, err: McpError, received: dict[str, str], body: bytes, opening: bool, number: int
    ) -> dict[str, Any] | None:
        """The codec refused the request (``err``): the request read without
        what is not the gateway's to refuse (a ``tasks/update``'s answers that
        are no input response: `mcp_schema.gateway.monitor.upstream`), or None once
        the refusal is reported and `refusal` set."""
        upstream = self._owner.upstream
        if isinstance(err, UnsupportedProtocolVersionError) and self._fresh:
            err = upstream.unsupported(err, received, body)
        elif err.code == InvalidParamsError.code:
            aside = upstream.set_aside(self.correlator.extensions, body)
            if aside is not None:
                try:
                    return self._decoded(received, aside, opening)
                except McpError as still:
                    err = still
        data = err.to_error_object().get("data")
        self.reports.append(
            make_report("client", number, err.code, err.message, data, err.request_id, body)
        )
        self.request_id = err.request_id if err.answerable else None
        self.refusal = refusal(status_of(err), err, self.request_id)
        return None

    def _reserve(self, key: str | None) -> None:
        """Take the place of the session this ``initialize`` may open, or be `busy`."""
        followed = self._owner._sessions
        self._place = followed.reserve(key)
        if self._place is None:
            self._opening = False
            self.busy = self.refusal = too_many(followed.share.refused(key), self.request_id)

    def release(self) -> None:
        """Give back the place an ``initialize`` took when its answer opened no
        session (`head` and `end` do it; again: nothing)."""
        if self._place is not None:
            self._place.release()

    # -- the upstream's answer ------------------------------------------------------------

    def head(self, status: int, headers: Headers) -> None:
        """The upstream's answer starts: its status and headers."""
        received = received_headers(headers)
        self.json = is_json(received.get("content-type"))
        given = received.get("mcp-session-id")
        if 200 <= status < 300:
            if self._opening and given is not None and self._place is not None:
                self.session = given
                self._owner._sessions.keep(given, self.correlator, self._place)
            elif self.method == "DELETE" and self.session is not None:
                self._owner._sessions.forget(self.session)
        self.release()

    def answer(self, data: bytes, size: int | None = None) -> Report | None:
        """The report of one message of the answer (``data``: the JSON body, or
        an event's data; ``size``: the message's whole size when ``data`` is only
        its head, an overlong message not read), or None when it is valid."""
        report = self._answer(data, size)
        self._failed = self._failed or report is not None
        return report

    def _answer(self, data: bytes, size: int | None) -> Report | None:
        number = self._owner._number("server")
        limit = self._owner.max_message
        if size is not None or len(data) > limit:
            whole = len(data) if size is None else size
            message = (
                f"Parse error: a message of {whole:,} bytes is longer than the limit of "
                f"{limit:,}; not read"
            )
            return make_report("server", number, ParseError.code, message, None, None, data, whole)
        try:
            value = self.correlator.decode_dict(data, sender="server")
        except McpError as err:
            found = err.to_error_object().get("data")
            message = err.message + self._owner.upstream.unread_task(
                self.correlator.extensions, data
            )
            return make_report("server", number, err.code, message, found, err.request_id, data)
        problem = out_of_place(self, value)
        if problem is None:
            if "result" in value and self.request_id is not None:  # its own response
                self._owner.upstream.answered(self.rpc_method, value["result"])
            return None
        return make_report("server", number, InvalidRequestError.code, problem, None, None, data)

    def event(self, event: SseEvent) -> Report | None:
        """The report of one event of an event-stream answer, or None: its data
        is a message (`answer`); one with no data is none (a comment, a
        keep-alive), but one the stream ended inside is reported (-32700)."""
        if event.overlong:
            return self.answer(event.raw, event.size)
        if event.unfinished:
            if not event.raw.strip(b"\r\n"):
                return None  # only the LF of a last CR LF
            number = self._owner._number("server")
            message = (
                f"Parse error: the stream ended inside an event of {event.size:,} bytes "
                "(no empty line ended it); no reader dispatches it"
            )
            return make_report("server", number, ParseError.code, message, None, None, event.raw)
        return None if event.data is None else self.answer(event.data)

    def unreachable(self, reason: str, status: int = 502) -> tuple[Report, Response]:
        """The upstream could not be reached, or failed before the status of its
        answer (``reason``: what the HTTP client said): the report of it, and the
        502 (``status``: 504 for a timeout) with -32603 to the request's id that
        both modes answer. The same failure makes the same report but for its
        ``line`` (no message came), so a `mcp_schema.proxy.ReportLog` merges a
        run of them (an upstream that is down) into one line and a count."""
        check(reason, str, "reason")
        late = status == 504
        what = "Gateway timeout: the upstream did not answer in time" if late else _UNREACHABLE
        error = (GatewayTimeoutError if late else BadGatewayError)(f"{what}: {clip(reason, 200)}")
        self._failed = True  # the missing response is this finding, not another
        number = self._owner._numbers["server"]
        report = make_report(
            "server", number, InternalError.code, error.message, None, self.request_id, b""
        )
        return report, failure(error, self.request_id)

    def end(self, *, cut: bool = False) -> list[Report]:
        """The answer is over: a missing response reported where one must have
        come (a JSON answer, a stateless-era request's stream), unless a
        message of it was reported already; ``cut``: the gateway stopped it
        (the client left), nothing is reported. A request left unanswered is
        forgotten by its session."""
        self.release()
        rid = self.request_id
        if rid is None or self.answered:
            return []
        self.correlator.forget(rid, sender="client")
        if cut or self._failed or not (self.json or self.stateless) or self.method != "POST":
            return []
        message = f"Invalid Request: the answer ended without the response to request {quote(rid)}"
        number, code = self._owner._numbers["server"], InvalidRequestError.code
        return [make_report("server", number, code, message, None, rid, b"")]
