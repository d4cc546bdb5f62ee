"""`ClientBinding`: the client side of Streamable HTTP, sans-IO, both eras
(hand-written runtime module).

It drives a `mcp_schema.session.ClientSession`: what the session queues
becomes `Post` objects (the method, headers and body of one HTTP request to
the MCP endpoint), and the HTTP response to each is read by a `Reply`, fed
the status and headers, then the body chunk by chunk as it arrives (a JSON
body, or a server-sent event stream read event by event by
`mcp_schema.http.sse.EventReader`); each message in it goes to the session,
which reads it once, through the codec, and the events it makes come back.
An HTTP client library does the I/O (`mcp_schema.http.client` is one, on
httpx).

The rules are those of the
[2026-07-28 Streamable HTTP transport](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)
and, for ``initialize`` sessions, of
[2025-11-25's](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports):

* Every message is a POST with ``Accept: application/json,
  text/event-stream``. In the stateless era a request carries its
  ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*``
  headers (`mcp_schema.http_headers.request_headers`, the last from the
  called tool's ``x-mcp-header`` annotations as the server last listed it);
  in the handshake era, after ``initialize``, the negotiated
  ``MCP-Protocol-Version`` and the ``Mcp-Session-Id`` the server gave.
* ``tools/list`` answers (stateless era) lose the tools whose
  ``x-mcp-header`` annotations are invalid, as the transport page requires
  of a client (a warning is logged; `ClientBinding.rejected_tools` names them).
* Connection modes: ``"auto"`` asks ``server/discover`` first and falls back
  to ``initialize`` as the page's Backward Compatibility section says: on a
  400, 404 or 405 whose body is no recognized modern JSON-RPC error
  (-32020, -32021, -32022); an ``UnsupportedProtocolVersionError`` instead
  retries with a version it lists (``initialize`` when it lists only
  handshake-era ones). ``"stateless"`` (2026-07-28 only) and
  ``"handshake"`` (``initialize`` only) do not fall back.
* Handshake era: `ClientBinding.stream` is the GET of the server's own
  stream (its requests and notifications outside any request's answer),
  and a request's event stream that ends before its answer, having given
  an event id, is resumed where the driver does it (``resumes``;
  `Reply.resume`: a GET with ``Last-Event-ID`` after the stream's
  ``retry``), as the
  [2025-11-25 transport](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery)
  describes it; events without data (a stream's priming event) are skipped.
* Every byte of a response is the server's: a body or an event longer than
  ``max_event`` bytes, a content type that is neither JSON nor an event
  stream, a 202 to a request, an error status with no JSON-RPC error, a
  response to another request than the POST's, or a stream that ends
  before the answer: the request is answered, in the session, with a
  `TransportError` (or the server's own JSON-RPC error, typed), and what
  is held stays bounded.

Not thread-safe, as the session it drives.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

# The codec's one strict parse and its one id rule, private to it: the
# binding reads the JSON of an error status body (which no session awaits);
# its own frames it routes by their envelopes, never reading them again.
from mcp_schema._args import check
from mcp_schema._codec.parse import parse
from mcp_schema._codec.route import request_id
from mcp_schema.base import McpModel
from mcp_schema.codec import to_wire
from mcp_schema.errors import (
    HeaderMismatchError,
    InvalidParamsError,
    McpError,
    MissingRequiredClientCapabilityError,
    UnsupportedProtocolVersionError,
    clip,
    quote,
)
from mcp_schema.http.posts import Post, Resume, TransportError
from mcp_schema.http.rules import is_json
from mcp_schema.http.sse import MAX_EVENT, EventReader, EventTooLarge
from mcp_schema.http_headers import Headers, received_headers, request_headers
from mcp_schema.session import (
    ClientSession,
    Event,
    Frame,
    InvalidOutgoingError,
    Negotiated,
    ResponseReceived,
)
from mcp_schema.tool_headers import InvalidToolHeaderError, ToolHeaders
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

__all__ = ["MAX_EVENT", "ClientBinding", "Mode", "Post", "Reply", "Resume", "TransportError"]

Mode = Literal["auto", "stateless", "handshake"]
"""How a `ClientBinding` connects: see the module."""

_LOG = logging.getLogger("mcp_schema.http")
_ACCEPT = "application/json, text/event-stream"
_DISCOVER = "server/discover"
_MODERN = (HeaderMismatchError, MissingRequiredClientCapabilityError)
_FALLBACK_STATUSES = frozenset({400, 404, 405})
_MAX_PROBES = 3  # server/discover tries, the versions an UnsupportedProtocolVersionError lists
_VISIBLE = frozenset(map(chr, range(0x21, 0x7F)))
_RETRY = 1.0  # seconds before resuming a stream that named no retry
_MAX_RETRY = 30.0


@dataclass
class ClientBinding:
    """The Streamable HTTP client side of ``session`` (see the module).

    ``headers``: sent with every request besides the binding's own (an
    ``Authorization``, say). ``max_event``: bytes of one event or body read.
    """

    session: ClientSession
    mode: Mode = "auto"
    headers: Mapping[str, str] = field(default_factory=dict)
    max_event: int = MAX_EVENT
    resumes: bool = False
    """Whether its driver resumes a request's stream that ends early
    (`Reply.resume`); without, such a request ends in a `TransportError`."""
    session_id: str | None = field(default=None, init=False)
    """The handshake-era session's ``Mcp-Session-Id``, once the server gave one."""
    tools: dict[str, ToolHeaders] = field(default_factory=dict, init=False)
    """The tools the server last listed (stateless era), by name, read once."""
    rejected_tools: dict[str, str] = field(default_factory=dict, init=False)
    """The listed tools left out for invalid ``x-mcp-header`` annotations: why, by name."""
    _probe: int | None = field(default=None, init=False)
    _probes: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        check(self.session, ClientSession, "session")
        if self.mode not in ("auto", "stateless", "handshake"):
            raise ValueError(f"mode must be auto, stateless or handshake, not {self.mode!r}")
        check(self.headers, Mapping, "headers")
        check(self.max_event, int, "max_event")
        if self.max_event < 1:
            raise ValueError(f"max_event must be positive, not {self.max_event}")

    # -- sending -------------------------------------------------------------------------

    def connect(self) -> int:
        """Start negotiating as ``mode`` says; the id of the first request
        (the session's `Negotiated` event, or its refusal, comes in a reply)."""
        if self.mode == "handshake":
            return self.session.initialize()
        self._probe = self.session.discover()
        self._probes = 1
        return self._probe

    def request(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None = None,
        checked: McpModel | None = None,
    ) -> int:
        """Send a request (`ClientSession.request`); its id. In the stateless
        era its headers are checked first: an argument a tool mirrors into a
        header that cannot be one is `InvalidOutgoingError`, nothing sent.
        ``checked``: the request's model in the session's version, validated
        by whoever built it (the era bridge's projection), with ``params``
        its wire params: the session does not read it again."""
        if self.session.version in STATELESS_VERSIONS:
            try:
                wire = to_wire(params) if isinstance(params, BaseModel) else params
                request_headers({"method": method, "params": wire or {}}, self._tool(wire))
            except ValueError as exc:
                raise InvalidOutgoingError(str(exc)) from None
        if checked is not None and isinstance(params, dict):
            return self.session._request_checked(method, params, checked)
        return self.session.request(method, params)

    def _tool(self, params: object) -> ToolHeaders | None:
        name = params.get("name") if isinstance(params, Mapping) else None
        return self.tools.get(name) if isinstance(name, str) else None

    def posts(self) -> list[Post]:
        """What the session queued, each message a `Post`, in order.

        Stateless era: responses and ``notifications/cancelled`` have no POST
        (servers send no requests; closing a request's stream cancels it), so
        they are dropped."""
        found: list[Post] = []
        for frame in self.session.frames_to_send():
            method = frame.method
            stateless = self.session.version in STATELESS_VERSIONS or (
                method == _DISCOVER and self.session.version is None
            )
            if stateless and (method is None or method == "notifications/cancelled"):
                continue
            if method is None and frame.id is None:
                continue  # an error to what had no id: nobody to hear it
            found.append(self._post(frame, stateless))
        return found

    def _post(self, frame: Frame, stateless: bool) -> Post:
        method = frame.method
        found = frame.id if method is not None else None
        rid = found if isinstance(found, int) else None  # the session numbers its requests
        headers = [("content-type", "application/json"), ("accept", _ACCEPT)]
        if stateless and method is not None:
            try:
                sent = {"method": method, "params": frame.params}
                mirrored = request_headers(sent, self._tool(frame.params))
            except ValueError as exc:  # the session was called past `request`
                if rid is not None:
                    self.session.transport_failed(rid, InvalidParamsError(str(exc)))
                raise InvalidOutgoingError(str(exc)) from None
            headers += [(k.lower(), v) for k, v in mirrored.items()]
        elif self.session.version is not None:
            headers.append(("mcp-protocol-version", self.session.version))
            if self.session_id is not None:
                headers.append(("mcp-session-id", self.session_id))
        headers += [(k.lower(), v) for k, v in self.headers.items()]
        return Post("POST", tuple(headers), frame.data, rid, method)

    def stream(
        self, request_id: int | None = None, last_event_id: str | None = None
    ) -> Post | None:
        """The GET of the server's stream in a handshake-era session (None in
        another era): its own stream, or, with ``request_id`` and
        ``last_event_id``, the resumption of that request's (`Reply.resume`)."""
        version = self.session.version
        if version is None or version not in HANDSHAKE_VERSIONS:
            return None
        headers = [("accept", "text/event-stream"), ("mcp-protocol-version", version)]
        if self.session_id is not None:
            headers.append(("mcp-session-id", self.session_id))
        if last_event_id is not None:
            headers.append(("last-event-id", last_event_id))
        headers += [(k.lower(), v) for k, v in self.headers.items()]
        return Post("GET", tuple(headers), b"", request_id)

    def close(self) -> Post | None:
        """The DELETE that ends the handshake-era session, if there is one
        (its response needs no reading); forgets the session id."""
        if self.session_id is None:
            return None
        headers = [("mcp-session-id", self.session_id), *self.headers.items()]
        if self.session.version is not None:
            headers.append(("mcp-protocol-version", self.session.version))
        self.session_id = None
        return Post("DELETE", tuple((k.lower(), v) for k, v in headers), b"", None)

    # -- receiving -----------------------------------------------------------------------

    def reply(self, post: Post, status: int, headers: Headers) -> Reply:
        """The reader of the response to ``post``, from its status and headers."""
        check(post, Post, "post")
        check(status, int, "status")
        return Reply(self, post, status, received_headers(headers))

    def lost(self, post: Post, reason: str) -> list[Event]:
        """``post`` got no response at all (the connection failed): its
        request is answered with a `TransportError`; the events."""
        return self._failed(post, TransportError(f"no response: {reason}"))

    def refused(self, post: Post, error: McpError) -> list[Event]:
        """``post`` was not sent, or its response not read, for ``error``
        (the client could not authorize it, say): its request is answered
        with ``error``; the events."""
        check(error, McpError, "error")
        return self._failed(post, error)

    def _failed(self, post: Post, error: McpError, status: int | None = None) -> list[Event]:
        if post.request_id is None:
            return []
        return self._after(post, self.session.transport_failed(post.request_id, error), status)

    def _after(self, post: Post, events: list[Event], status: int | None) -> list[Event]:
        """What the binding does with the session's events before the author
        sees them: negotiation's fallbacks, the handshake session's id, the
        tools listed."""
        kept: list[Event] = []
        for event in events:
            if isinstance(event, ResponseReceived):
                if event.id == self._probe and event.error is not None:
                    if self._renegotiated(event.error, status):
                        continue
                elif event.method == "tools/list" and event.result is not None:
                    event = self._listed(event)
            elif isinstance(event, Negotiated):
                self._probe = None
            kept.append(event)
        return kept

    def _renegotiated(self, error: McpError, status: int | None) -> bool:
        """Whether the failed ``server/discover`` probe is followed by another
        try (queued): a version the server lists, or ``initialize``."""
        self._probe = None
        versions = self.session.versions
        if isinstance(error, UnsupportedProtocolVersionError):
            listed = error.data.get("supported") if isinstance(error.data, dict) else None
            named = [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []
            stateless = [v for v in versions if v in named and v in STATELESS_VERSIONS]
            if stateless and self._probes < _MAX_PROBES:  # even the one refused: it says so
                self._probes += 1
                self._probe = self.session.discover(stateless[-1])
                return True
            handshake = [v for v in versions if v in named and v in HANDSHAKE_VERSIONS]
            if handshake and self.mode == "auto":
                self.session.initialize(handshake[-1])
                return True
            return False
        if self.mode != "auto" or isinstance(error, _MODERN) or status not in _FALLBACK_STATUSES:
            return False
        if not any(v in HANDSHAKE_VERSIONS for v in versions):
            return False
        self.session.initialize()
        return True

    def _listed(self, event: ResponseReceived) -> ResponseReceived:
        if self.session.version not in STATELESS_VERSIONS:
            return event
        tools = getattr(event.result, "tools", None)
        if not isinstance(tools, list):
            return event
        kept = []
        for tool in tools:
            try:
                read = ToolHeaders(tool)
            except InvalidToolHeaderError as exc:
                name = clip(str(getattr(tool, "name", "")))
                self.rejected_tools[name] = str(exc)
                _LOG.warning("tool %s left out: %s", quote(name), clip(str(exc)))
                continue
            self.tools[read.name] = read
            kept.append(tool)
        if len(kept) == len(tools):
            return event
        assert event.result is not None
        result = event.result.model_copy(update={"tools": kept})
        return ResponseReceived(event.id, event.method, result, event.error)


class Reply:
    """The response to one `Post`, read as it arrives: `feed` each chunk of
    its body, then `end`; each returns the session's events (see the module).
    `done`: the answer came (the rest of the body need not be read)."""

    def __init__(
        self, binding: ClientBinding, post: Post, status: int, headers: dict[str, str]
    ) -> None:
        self._binding, self._post, self.status = binding, post, status
        self.done = False
        self._body = bytearray()
        self._reader: EventReader | None = None
        self._refused: McpError | None = None
        self.resume: Resume | None = None
        """Set by `end` when the request's stream may be resumed (see the module)."""
        content_type = headers.get("content-type")
        if 200 <= status < 300:
            self._opened(headers, content_type)
        elif not is_json(content_type):
            self._refused = self._status_error("")

    def _opened(self, headers: dict[str, str], content_type: str | None) -> None:
        binding, post = self._binding, self._post
        media = (content_type or "").split(";")[0].strip().lower()
        if post.method == "GET":
            if self.status == 200 and media == "text/event-stream":
                self._reader = EventReader(binding.max_event)
            elif post.request_id is None:
                self.done = True  # the server keeps no stream of its own
            else:
                self._refused = TransportError("the stream was not resumed", status=self.status)
            return
        if post.request_id is None:
            self.done = True  # a notification or a response: any 2xx accepts it
            return
        if self.status == 202 or self.status == 204:
            self._refused = TransportError(
                f"HTTP {self.status} to a request: no answer", status=self.status
            )
            return
        if post.rpc_method == "initialize":
            session_id = headers.get("mcp-session-id")
            if session_id is not None and session_id and set(session_id) <= _VISIBLE:
                binding.session_id = session_id
        if media == "text/event-stream":
            self._reader = EventReader(binding.max_event)
        elif not is_json(content_type):
            shown = quote(clip(content_type or ""))
            self._refused = TransportError(
                f"the answer is neither JSON nor an event stream: {shown}", status=self.status
            )

    def _status_error(self, body: str) -> TransportError:
        excerpt = f": {clip(body)}" if body.strip() else ""
        return TransportError(f"HTTP {self.status}{excerpt}", status=self.status)

    def feed(self, chunk: bytes) -> list[Event]:
        """The events of the next ``chunk`` of the body."""
        if self.done or self._refused is not None:
            return []
        if self._reader is None:
            if len(self._body) + len(chunk) > self._binding.max_event:
                self._refused = TransportError(
                    f"a body longer than {self._binding.max_event:,} bytes", status=self.status
                )
                self._body.clear()
                return []
            self._body += chunk
            return []
        try:
            found = self._reader.feed(chunk)
        except EventTooLarge as exc:
            self._refused = TransportError(str(exc), status=self.status)
            self._reader = None
            return []
        events: list[Event] = []
        for data in found:
            if data:  # an event without data primes the stream (its id, its retry)
                events += self._read(data)
            if self.done:
                break
        return events

    def _read(self, data: bytes) -> list[Event]:
        post, session = self._post, self._binding.session
        awaited = session.awaiting
        events = session.receive(data, answering=post.request_id)
        if session.awaiting < awaited:  # the answer came (good or refused)
            self.done = True
        return self._binding._after(post, events, self.status)

    def end(self) -> list[Event]:
        """The body ended: its last events; the request is answered by now
        (a `TransportError` when the server did not)."""
        post, binding = self._post, self._binding
        events: list[Event] = []
        if not self.done and self._refused is None and self._reader is None:
            body, self._body = bytes(self._body), bytearray()
            if 200 <= self.status < 300:
                events = self._read(body)
            else:
                self._refused = self._error_of(body)
        if not self.done and self._resumable():
            assert self._reader is not None and self._reader.last_id is not None
            retry = self._reader.retry
            wait = _RETRY if retry is None else min(retry / 1000, _MAX_RETRY)
            self.resume = Resume(self._reader.last_id, wait)
            self.done = True
            return events
        if not self.done:
            self.done = True
            error = self._refused or TransportError(
                "the response ended without the answer", status=self.status
            )
            events += binding._failed(post, error, self.status)
        return events

    def _resumable(self) -> bool:
        reader, post = self._reader, self._post
        version = self._binding.session.version
        return (
            self._binding.resumes
            and reader is not None
            and reader.last_id is not None
            and self._refused is None
            and post.request_id is not None
            and version in HANDSHAKE_VERSIONS
        )

    def _error_of(self, body: bytes) -> McpError:
        """The error an error status carries: the JSON-RPC error of its body
        (to this request, or to none), else a `TransportError`."""
        try:
            value = parse(body)
        except McpError:
            return self._status_error(body[:200].decode("utf-8", "replace"))
        error, rid = value.get("error"), request_id(value.get("id"))
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            return self._status_error(body[:200].decode("utf-8", "replace"))
        if rid is not None and rid != self._post.request_id:
            return TransportError(
                f"HTTP {self.status} with an error to id {quote(clip(str(rid)))}, not to "
                f"{self._post.request_id}",
                status=self.status,
            )
        try:
            return McpError.from_error_object(error)
        except (TypeError, ValueError):
            return self._status_error(body[:200].decode("utf-8", "replace"))
