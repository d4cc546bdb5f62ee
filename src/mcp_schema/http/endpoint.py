"""`Endpoint`: the MCP endpoint of a Streamable HTTP server, sans-IO.

An HTTP request in (method, path, headers, body), a `Response` out. The
order of the decisions, for a POST:

1. `Endpoint.precheck` (no body needed): the path (404, empty body), the
   method (405), ``Host`` (421, when ``allowed_hosts`` are given), ``Origin`` (403), ``Content-Type`` (415), ``Accept``
   (406 when it admits neither JSON nor an event stream), ``Content-Length``
   (413 beyond ``max_body``, 400 when malformed).
2. The era, from the body, parsed once (strictly: what is no JSON-RPC
   message is refused here, 400): one that names its version in
   ``params._meta`` is served statelessly, whatever its method and any
   ``Mcp-Session-Id``. A version the endpoint does not serve per request
   (a handshake-era one, or an unknown one) is -32022, listing those it
   does (-32020 when ``MCP-Protocol-Version`` names another). A request
   whose ``MCP-Protocol-Version`` names a version served per request, with
   no ``Mcp-Session-Id`` and no such ``_meta``, is that version's too: its
   session refuses the ``_meta`` it lacks, -32602. Anything else is handshake-era: ``initialize`` opens a session
   (``Mcp-Session-Id`` minted, `secrets.token_urlsafe`), every other
   message needs a live one (400 without the header, 404 for an unknown or
   terminated id).
3. The body and its headers in one pass, by the session
   (`ServerSession.receive` with ``headers=``; in a session, read in its
   version). A refusal is its JSON-RPC error with the request's id: 404
   for -32601, else 400.
4. Each event the session made of it to the handler, what the session
   queued to the streams it belongs to: a
   response to its request's, progress to the stream of the request whose
   token it carries, anything else (logs, the server's requests) to the
   stream of the request the handler was serving, else to the GET stream.
   What has no open stream is dropped.

A request's answer is one JSON body when, by the time the handler returns,
the session queued the response and nothing else for it; otherwise an
event stream, carrying the request's notifications (progress, logs) and,
in the handshake era, the server's requests to the client, then the
response. Notifications, and responses the client POSTs, get 202.

Handlers are plain functions ``handler(session, event)``, as on stdio
(``examples/server.py``), called for every event, in order. A
stateless-era request is served by a `ServerSession` of its own, built for
it and dropped after it: nothing is remembered between requests, so a
handler must answer it before returning (it is answered -32603 otherwise).
``subscriptions/listen`` is the exception: a stream of its own, served by
`mcp_schema.http.listen`, never the handler.
A handshake-era request may be answered later: its stream stays open until
the response comes, typically when the client's answer to ``session.ask``
arrives on another POST (an `InputReceived`).

Cancellation: a request's stream closed by the client before the answer
(`Stream.abandon`, also when it overflows) is delivered to the session as
the client's ``notifications/cancelled`` for it, so the handler sees a
`CancelRequested` and the session drops any answer; the server's own
pending requests for it are cancelled too. (A stateless-era request is
answered before its stream is written, so there is nothing left to cancel.)
With ``replay``, a handshake-era stream the client leaves waits to be
resumed instead (`mcp_schema.http.resume`); only its overflow cancels.

GET with a live ``Mcp-Session-Id`` opens the session's stream for what
relates to no request (one at a time: 409); DELETE terminates the session.
Without a session id both are 405. Not thread-safe: one thread (one event
loop) at a time.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, NamedTuple

import jiter
from pydantic import BaseModel

from mcp_schema._args import check, strings

# The codec's own stages, private to it: the endpoint parses a body once, by
# the one strict parse, and reads the era and the id there by the codec's
# rules, then hands the body to the session (no public reader stops there).
from mcp_schema._codec.parse import parse
from mcp_schema._codec.route import request_id
from mcp_schema._codec.versioning import NULL_VERSION
from mcp_schema.codec import encode
from mcp_schema.errors import (
    HeaderMismatchError,
    InternalError,
    McpError,
    UnsupportedProtocolVersionError,
    clip,
    quote,
)
from mcp_schema.http.era import era_of
from mcp_schema.http.listen import LISTEN, open_listen
from mcp_schema.http.precheck import JSON, MAX_BODY, SSE, Precheck, answer_media
from mcp_schema.http.resume import Replays, ResumableStream
from mcp_schema.http.rules import answer_status, mirrored_headers, refusal, status_of
from mcp_schema.http.sessions import LiveSession, MemorySessions, SessionStore, stream_key
from mcp_schema.http.stream import MAX_BUFFER, Media, Response, Stream
from mcp_schema.http_headers import Headers, check_version_header, received_headers
from mcp_schema.request_state import StateSealer
from mcp_schema.session import (
    CancelRequested,
    Event,
    InputReceived,
    Negotiated,
    ProtocolError,
    RequestReceived,
    ServerSession,
    SessionError,
)
from mcp_schema.subscriptions import TASKS, Subscriptions, supported_by
from mcp_schema.tasks.notifications import notifier
from mcp_schema.tasks.server import TaskServer
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS

__all__ = ["MAX_BODY", "Endpoint", "Handler"]


Handler = Callable[[ServerSession, Event], None]
"""What serves a session's events: ``handler(session, event)``."""

_LOG = logging.getLogger("mcp_schema.http")
_CANCELLED_BY_CLOSE = "the client closed the request's stream"


def _id_of(value: dict[str, Any]) -> str | int | None:
    """The id of a request the endpoint refuses before its session reads
    it, by the codec's one id rule (None for anything but a request)."""
    return request_id(value.get("id")) if "method" in value and "id" in value else None


def _request_id(body: bytes) -> str | int | None:
    """`_id_of` a body not parsed yet (what the forwarder refuses)."""
    try:
        return _id_of(parse(body))
    except McpError as err:
        return err.request_id


class _Exchange(NamedTuple):
    """A POST read by its session: the events left to run, the request it
    brought, the stream of its answer (None for what is not a request)."""

    live: LiveSession
    events: list[Event]
    brought: RequestReceived | None
    stream: Stream | None


def _brought(events: list[Event]) -> RequestReceived | None:
    """The request a frame brought, for the handler to answer."""
    for event in events:
        if isinstance(event, RequestReceived):
            return event
        if isinstance(event, InputReceived):
            return event.request
    return None


class Endpoint:
    """The MCP endpoint at ``path``, serving ``handler`` in both eras.

    * ``info``, ``capabilities``, ``instructions``, ``versions``,
      ``handler_version``: what every `ServerSession` it builds is given
      (``versions`` splits into the stateless-era ones, served per request,
      and the handshake-era ones, served in sessions).
    * ``allowed_origins``: origins allowed besides the loopback ones
      (``loopback_origins=False`` refuses those too). A request without
      ``Origin`` (not from a browser) is not checked.
    * ``allowed_hosts``: the host names a request's ``Host`` may name
      (any port; lower-case, IPv6 without brackets), else 421: DNS-rebinding
      protection for a server reached by name. None (the default): not
      checked here; `mcp_schema.http.asgi.App` then allows only
      `mcp_schema.http.rules.LOOPBACK_HOSTS` when it serves on a loopback address.
    * ``cors``: answer CORS preflights and add ``Access-Control-*`` headers
      for the ``allowed_origins`` (`mcp_schema.http.cors`; by default, when
      there are any).
    * ``max_body``: bytes of a POST body; ``max_buffer``: bytes a stream
      holds for a reader that is behind (`mcp_schema.http.stream`).
    * ``sessions``: where handshake-era sessions live (`MemorySessions`).
    * ``replay``: events kept per event stream of a handshake-era session,
      for a client resuming it with ``Last-Event-ID``
      (`mcp_schema.http.resume`; 0, the default: no event ids, and a stream
      the client closes is cancellation of its request).
    * ``session_options``: more keyword arguments of every `ServerSession`
      (``cache_scope``, ``ttl_ms``, ``take``, ``max_pending``...).
    * ``request_state``: the `mcp_schema.request_state.StateSealer` a stateless-era
      ``ask`` is sealed with (its retry then completes on any replica holding the keys),
      bound to the user ``principal(headers)`` names (lower-case names; default None).
    * ``subscriptions``: the open ``subscriptions/listen`` streams, each a
      response of its own (`mcp_schema.http.listen`); by default honoring
      what ``capabilities`` declare (`mcp_schema.subscriptions.supported_by`).
    * ``tools``: what gives the tools (`mcp_schema.tool_headers.ToolHeaders`
      or definitions) a ``tools/call``'s ``Mcp-Param-*`` headers are checked
      against (-32020), in both eras; None: the tools the session last listed
      (none, for a request served alone).
    * ``tasks``: the Tasks extension (a `mcp_schema.tasks.TaskServer` and its
      store), given to every session: ``tasks/*`` are answered from the
      store and the tasks handlers start are stored before their
      ``CreateTaskResult`` is sent. Both wait for the store, so they are
      served by `handle_async` (the ASGI app's); `handle` answers them -32603.
      Its ``on_change`` sends task status notifications to the listens of
      ``subscriptions`` (`mcp_schema.tasks.notifications`).
    """

    def __init__(
        self,
        handler: Handler,
        *,
        info: BaseModel | Mapping[str, Any],
        capabilities: BaseModel | Mapping[str, Any] | None = None,
        instructions: str | None = None,
        versions: Collection[str] | None = None,
        handler_version: str | None = None,
        path: str = "/mcp",
        allowed_origins: Collection[str] = (),
        loopback_origins: bool = True,
        allowed_hosts: Collection[str] | None = None,
        cors: bool | None = None,
        max_body: int = MAX_BODY,
        max_buffer: int = MAX_BUFFER,
        replay: int = 0,
        sessions: SessionStore | None = None,
        session_options: Mapping[str, Any] | None = None,
        subscriptions: Subscriptions | None = None,
        request_state: StateSealer | None = None,
        principal: Callable[[Mapping[str, str]], str | None] | None = None,
        tasks: TaskServer | None = None,
        tools: Callable[[], Iterable[Any]] | None = None,
    ) -> None:
        if not callable(handler) or not all(f is None or callable(f) for f in (principal, tools)):
            raise TypeError("handler must be callable, and principal and tools callable or None")
        self.tools = tools
        for name, size in (("max_body", max_body), ("max_buffer", max_buffer)):
            check(size, int, name)
            if size < 1:
                raise ValueError(f"{name} must be positive, not {size}")
        check(replay, int, "replay")
        if replay < 0:
            raise ValueError(f"replay must not be negative, not {replay}")
        self.replay = replay
        check(session_options, Mapping, "session_options", none=True)
        named = strings(versions, "versions", none=True)
        served = SUPPORTED_VERSIONS if named is None else named
        self.handler, self.principal = handler, principal
        self.max_body, self.max_buffer = max_body, max_buffer
        self.sessions: SessionStore = MemorySessions() if sessions is None else sessions
        if tasks is not None and not isinstance(tasks, TaskServer):
            raise TypeError(f"tasks must be a TaskServer, not {type(tasks).__name__}")
        sent = supported_by(capabilities) | ({TASKS} if tasks is not None else set())
        self.subscriptions = (
            Subscriptions(supported=sent) if subscriptions is None else subscriptions
        )
        self.stateless = tuple(v for v in STATELESS_VERSIONS if v in served)
        """The versions served per request, oldest first."""
        self.handshake = tuple(v for v in HANDSHAKE_VERSIONS if v in served)
        """The versions served in sessions (``initialize``), oldest first."""
        self.rules = Precheck(
            path=path,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            loopback_origins=loopback_origins,
            cors=cors,
            max_body=max_body,
            sessions=bool(self.handshake),
        )
        """What every request is checked by before its body is read (the ASGI app's too)."""
        self.path, self.allowed_hosts = path, self.rules.allowed_hosts
        self.allowed_origins = self.rules.allowed_origins
        self.tasks = tasks
        if tasks is not None:  # status notifications to this replica's listens (a Relay: all)
            tasks.on_change = notifier(tasks, self.subscriptions)
        options: dict[str, Any] = {
            **(session_options or {}),
            "tasks": tasks,
            "info": info,
            "capabilities": capabilities,
            "instructions": instructions,
            "handler_version": handler_version,
            "request_state": request_state,
            "listens": False,  # a listen is a stream of its own (``_exchange``), not the session's
        }
        ServerSession(versions=served, **options)  # the arguments are checked once, here
        # The sessions each era's requests are served by are built like these
        # (`ServerSession._like`): their arguments are not checked again.
        self._built = {
            era: ServerSession(versions=versions, **options)
            for era, versions in (("stateless", self.stateless), ("handshake", self.handshake))
            if versions
        }

    def _session(self, era: str, headers: Any = None) -> ServerSession:
        principal = None if headers is None or not self.principal else self.principal(headers)
        return self._built[era]._like(principal)

    # -- HTTP -----------------------------------------------------------------------------

    def precheck(
        self, method: str, path: str, headers: Headers, server: object = None
    ) -> Response | None:
        """The refusal of a request that needs no body to refuse, or None:
        an adapter calls it before reading the body (``server``: the ASGI
        scope's, for the loopback ``Host`` rule of `Precheck`)."""
        return self.precheck_received(method, path, received_headers(headers), server)

    def precheck_received(
        self, method: str, path: str, received: dict[str, str], server: object = None
    ) -> Response | None:
        """`precheck` of headers read already (`received_headers`)."""
        return self.rules.with_cors(received, self._precheck(method, path, received, server))

    def _precheck(
        self, method: str, path: str, received: dict[str, str], server: object = None
    ) -> Response | None:
        early = self.rules._check(method, path, received, server)
        if early is not None or method not in ("GET", "DELETE"):
            return early
        live = self._live(received)
        return live if isinstance(live, Response) else None

    def _live(self, received: Mapping[str, str]) -> LiveSession | Response:
        """The live session a GET or DELETE names, or its refusal."""
        session_id = received.get("mcp-session-id")
        if session_id is None or not self.handshake:
            return self.rules.not_allowed("no session named")
        live = self.sessions.get(session_id)
        if live is None:
            return refusal(404, "Not Found: no such session (unknown or terminated)")
        return live

    def handle(self, method: str, path: str, headers: Headers, body: bytes = b"") -> Response:
        """The response to one HTTP request (the adapter drains its stream, if any)."""
        received = received_headers(headers)  # once: every later check reads this dict
        response = self.rules.with_cors(received, self._handle(method, path, received, body))
        assert response is not None
        return response

    def _handle(self, method: str, path: str, received: dict[str, str], body: bytes) -> Response:
        early = self._precheck(method, path, received)
        if early is not None:
            return early
        return self._prechecked(method, received, body)

    def _prechecked(self, method: str, received: dict[str, str], body: bytes) -> Response:
        """`handle` once `_precheck` let the request through (the adapter's path:
        it prechecks before reading the body, and neither is done twice)."""
        if method == "POST":
            exchange = self._post(received, body)
            if isinstance(exchange, Response):
                return exchange
            for event in exchange.events:
                self._run(exchange.live, event)
            return self._done(exchange)
        return self._other(method, received)

    async def handle_async(
        self, method: str, path: str, headers: Headers, body: bytes = b""
    ) -> Response:
        """`handle`, waiting for the task store where the request needs it
        (``tasks/*``, a call a handler answered with a task)."""
        received = received_headers(headers)
        early = self._precheck(method, path, received)
        response = (
            early if early is not None else await self._prechecked_async(method, received, body)
        )
        self.rules.with_cors(received, response)  # adds the CORS headers, in place
        return response

    async def _prechecked_async(
        self, method: str, received: dict[str, str], body: bytes
    ) -> Response:
        """`_prechecked`, serving ``tasks/*`` and storing new tasks (`TaskServer`)."""
        tasks = self.tasks
        if method != "POST" or tasks is None:
            return self._prechecked(method, received, body)
        exchange = self._post(received, body)
        if isinstance(exchange, Response):
            return exchange
        live = exchange.live
        for event in exchange.events:
            if isinstance(event, Negotiated):
                # No request the task server serves, and none its handler holds yet
                # to start a task with (it comes next): nothing for the store.
                self._run(live, event)
                continue
            if await tasks.serve(live.server, event):
                self._route(live, None, live.server.data_to_send())
                continue
            self._run(live, event)
            await tasks.flush(live.server)
            request = _brought([event])
            context = None if request is None else stream_key(request.id)
            self._route(live, context, live.server.data_to_send())
        return self._done(exchange)

    def _other(self, method: str, received: dict[str, str]) -> Response:
        live = self._live(received)
        assert isinstance(live, LiveSession) and live.id is not None  # precheck passed
        if method == "DELETE":
            self.sessions.remove(live.id)
            live.close()
            return Response(200)
        last = received.get("last-event-id")
        if last is not None and self.replay:
            resumed = self._replays(live).resume(last)
            return resumed if isinstance(resumed, Response) else self._streamed(resumed, live)
        listener = live.listener
        if listener is not None and not (
            isinstance(listener, ResumableStream) and listener.detached
        ):
            return refusal(409, "Conflict: the session's GET stream is open already")
        live.listener = self._stream(live, SSE, self._listener_gone(live))
        return self._streamed(live.listener, live)

    def _replays(self, live: LiveSession) -> Replays:
        if live.replays is None:
            live.replays = Replays(self.replay)
        return live.replays

    def _stream(
        self, live: LiveSession, media: Media, on_abandon: Callable[[Stream], None]
    ) -> Stream:
        """A new stream of ``live``: resumable when it is an event stream of a
        handshake-era session and the endpoint keeps events (``replay``)."""
        if self.replay and live.id is not None and media == SSE:
            return self._replays(live).open(self.max_buffer, on_abandon)
        return Stream(media, max_buffer=self.max_buffer, on_abandon=on_abandon)

    def close(self) -> None:
        """Terminate every session and end every listen: the server is shutting down."""
        self.sessions.close()
        self.subscriptions.close()

    # -- POST -----------------------------------------------------------------------------

    def _post(self, headers: dict[str, str], body: bytes) -> Response | _Exchange:
        if len(body) > self.max_body:
            return refusal(413, f"Payload Too Large: at most {self.max_body:,} bytes")
        # The one parse the endpoint makes, strict as every reader's: what it
        # finds tells the era; the session then reads the body, headers and all.
        try:
            value = parse(body)
        except McpError as err:  # not a message: no session reads it
            return refusal(status_of(err), err, None)
        media = answer_media(headers.get("accept")) or JSON  # the precheck refused None
        stateless, named = era_of(value, headers, self.stateless)
        if stateless:
            if not isinstance(named, str) or named not in self.stateless:
                return self._unsupported(named, value, headers)
            live = LiveSession(None, self._session("stateless", headers))
            return self._exchange(live, headers, body, value, media)
        if not self.handshake:
            return self._unsupported(named, value)
        if value.get("method") == "initialize":
            live = LiveSession(secrets.token_urlsafe(32), self._session("handshake"))
            return self._exchange(live, headers, body, value, media, opening=True)
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            return refusal(400, "Bad Request: Mcp-Session-Id header is required", _id_of(value))
        found = self.sessions.get(session_id)
        if found is None:
            return refusal(404, "Not Found: no such session (unknown or terminated)", _id_of(value))
        return self._exchange(found, headers, body, value, media)

    def _unsupported(
        self, named: object, value: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> Response:
        if isinstance(named, str) and headers is not None:
            try:  # a header naming another version than the body's disagrees with it first
                check_version_header(headers, named)
            except HeaderMismatchError as err:
                return refusal(400, err, _id_of(value))
        served = self.stateless or self.handshake
        shown = (
            clip(named)
            if isinstance(named, str)
            else quote(None if named is NULL_VERSION else named)
        )
        error = UnsupportedProtocolVersionError(
            f"Unsupported protocol version: {shown} "
            f"(served per request: {', '.join(reversed(served))})",
            requested=shown,
            supported=tuple(reversed(served)),
        )
        return refusal(400, error, _id_of(value))

    def _exchange(
        self,
        live: LiveSession,
        headers: dict[str, str],
        body: bytes,
        value: Any,
        media: Media,
        *,
        opening: bool = False,
    ) -> Response | _Exchange:
        """The body read by ``live``'s session, and the stream of its answer:
        what is left is to run its events (`handle`, `handle_async`), then
        `_done`; or the response already (a refusal, a listen)."""
        server = live.server
        # The body is read with the headers as received (the codec reads only
        # the MCP ones, all named Mcp-*), but for an MCP-Protocol-Version that
        # does not rule: ``initialize``'s, which predates the session's version;
        # and in a session, where the negotiated version rules, one naming
        # another version served in sessions misses only the client's SHOULD
        # (2025-11-25 refuses an invalid or unsupported one, 400, as the session
        # still does).
        read = headers
        if opening or (
            live.id is not None and headers.get("mcp-protocol-version") in self.handshake
        ):
            read = mirrored_headers(headers, opening=True)  # without MCP-Protocol-Version
        # The body and its headers, in one pass. The session's private entry
        # after its parse: `_post` parsed the body already (to tell its era), by
        # the same strict parse, and a second parse would only repeat it.
        tools = (
            self.tools() if self.tools is not None and value.get("method") == "tools/call" else None
        )
        events = server._receive_parsed(value, len(body), read, tools)
        own = server.data_to_send()  # the session's own answers to this very frame
        refused = next((e for e in events if isinstance(e, ProtocolError)), None)
        if refused is not None:
            if not own:
                return refusal(status_of(refused.error), refused.error, None)
            return Response(status_of(refused.error), [("content-type", JSON)], own[0])
        brought = _brought(events)
        if live.id is None and brought is not None and brought.method == LISTEN:
            if media != SSE:
                return refusal(406, f"Not Acceptable: a listen is answered with {SSE}", brought.id)
            try:  # a stream of its own, fed by the subscriptions (mcp_schema.http.listen)
                listening = open_listen(
                    self.subscriptions,
                    brought,
                    max_buffer=self.max_buffer,
                    principal=server.principal,
                )
            except McpError as err:
                return refusal(status_of(err), err, brought.id)
            return self._streamed(listening, live)
        stream: Stream | None = None
        if "method" in value and "id" in value:  # a request: the stream of its answer
            stream = self._stream(live, media, self._gone(live))
            if brought is None:  # the session answered it: its answer names it
                live.streams[stream_key(jiter.from_json(own[0])["id"])] = stream
            else:  # keyed as the session reads the id (1.0 is the request 1)
                live.streams[stream_key(brought.id)] = stream
                stream.progress_token = stream_key(brought.context.progress_token)
        if opening:
            self.sessions.add(live)  # initialize answered: the session lives from now on
        self._route(live, None, own)
        return _Exchange(live, events, brought, stream)

    def _done(self, exchange: _Exchange) -> Response:
        """The response of an exchange whose events have run."""
        live, brought, stream, server = (
            exchange.live,
            exchange.brought,
            exchange.stream,
            exchange.live.server,
        )
        if live.id is None and server.in_flight and brought is not None:  # left unanswered
            self._answer_error(live, brought, InternalError("the handler did not answer"))
        if stream is None:
            return Response(202, self._session_header(live))
        if stream.finished and (stream.media == JSON or stream.frames == 1):
            answer = b"".join(stream.take_frames())  # the response alone: one JSON body
            status = 200
            if live.id is None and b'"error"' in answer:  # only then is it read again
                status = answer_status(jiter.from_json(answer).get("error"))
            return Response(status, [("content-type", JSON), *self._session_header(live)], answer)
        return self._streamed(stream, live)

    def _streamed(self, stream: Stream, live: LiveSession) -> Response:
        headers = [("content-type", stream.media), *self._session_header(live)]
        if stream.media == SSE:
            headers += [("cache-control", "no-cache"), ("x-accel-buffering", "no")]
        return Response(200, headers, stream=stream)

    @staticmethod
    def _session_header(live: LiveSession) -> list[tuple[str, str]]:
        return [] if live.id is None else [("mcp-session-id", live.id)]

    # -- events and frames ----------------------------------------------------------------

    def _run(self, live: LiveSession, event: Event) -> None:
        """``event`` to the handler, then what it queued to its streams."""
        request: RequestReceived | None = None
        if isinstance(event, RequestReceived):
            request = event
        elif isinstance(event, (InputReceived, CancelRequested)):
            request = event.request
        try:
            self.handler(live.server, event)
        except Exception as exc:  # the handler's fault: its request is answered -32603
            if not isinstance(exc, McpError):
                _LOG.exception("handler failed on %s", type(event).__name__)
                exc = InternalError("Internal error")
            if request is not None and not isinstance(event, CancelRequested):
                self._answer_error(live, request, exc)
        context = None if request is None else stream_key(request.id)
        self._route(live, context, live.server.data_to_send())

    def _answer_error(self, live: LiveSession, request: RequestReceived, error: McpError) -> None:
        try:
            live.server.fail(request, error)
        except SessionError:
            return  # answered already
        self._route(live, stream_key(request.id), live.server.data_to_send())

    def _route(self, live: LiveSession, context: Any, frames: list[bytes]) -> None:
        """Each frame to its stream: a response to the stream of the request
        it answers (which it ends), progress to that of the request whose
        token it carries, anything else to the stream of the request being
        served (``context``), else to the GET stream; dropped when none is
        open. A stream that overflows is cancellation of its request."""
        for frame in frames:
            value = jiter.from_json(frame)  # the session's own output: valid JSON
            if "method" not in value:
                target = live.streams.pop(stream_key(value.get("id")), None)
                if target is not None:
                    target.put(frame, final=True)
                continue
            target = live.streams.get(context) if context is not None else None
            if value["method"] == "notifications/progress":  # its token names its request
                token = stream_key(value["params"]["progressToken"])
                target = next((s for s in live.streams.values() if s.progress_token == token), None)
            if target is None or target.media != SSE:
                target = live.listener
            if target is not None:
                target.put(frame)  # an overflow ends the stream: cancellation (``_gone``)

    def _gone(self, live: LiveSession) -> Callable[[Stream], None]:
        def gone(stream: Stream) -> None:
            key = next((k for k, s in live.streams.items() if s is stream), None)
            if key is None or live.closed:
                return  # answered already, or the session is over
            del live.streams[key]
            if live.id is None:
                return  # stateless: answered before the stream is written
            _, request_id = key
            cancel = {"requestId": request_id, "reason": _CANCELLED_BY_CLOSE}
            frame = encode(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            )
            for event in live.server.receive(frame):
                self._run(live, event)

        return gone

    @staticmethod
    def _listener_gone(live: LiveSession) -> Callable[[Stream], None]:
        def gone(stream: Stream) -> None:
            if live.listener is stream:
                live.listener = None

        return gone
