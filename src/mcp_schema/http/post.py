"""The POST half of `mcp_schema.http.Endpoint`: a body read once, its era
told (`mcp_schema.http.era`), read by the session of its era, and the
stream of its answer (see `mcp_schema.http.endpoint` for the order of the
decisions)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping
from contextvars import Token
from typing import TYPE_CHECKING, Any, NamedTuple

# The codec's own stages, private to it: the endpoint parses a body once, by
# the one strict parse, and reads the era and the id there by the codec's
# rules, then hands the body to the session (no public reader stops there).
from mcp_schema._codec.parse import parse
from mcp_schema._codec.route import request_id
from mcp_schema._codec.versioning import NULL_VERSION
from mcp_schema.errors import (
    HeaderMismatchError,
    InternalError,
    McpError,
    UnsupportedProtocolVersionError,
    clip,
    quote,
)
from mcp_schema.http.access_log import noted
from mcp_schema.http.answers import Answers
from mcp_schema.http.caller import ANONYMOUS, Caller
from mcp_schema.http.era import era_of
from mcp_schema.http.gate import ADMITTED, VERIFIED, Gate, Verdict
from mcp_schema.http.listen import LISTEN, open_listen
from mcp_schema.http.observe import count_refusal
from mcp_schema.http.precheck import JSON, SSE, answer_media
from mcp_schema.http.resume import Replays
from mcp_schema.http.routing import route
from mcp_schema.http.rules import code_status, mirrored_headers, refusal, status_of, too_many
from mcp_schema.http.sessions import LiveSession, SessionStore, stream_key
from mcp_schema.http.stream import Media, Response, Stream
from mcp_schema.http_headers import check_version_header
from mcp_schema.session import (
    Event,
    Frame,
    InputReceived,
    ProtocolError,
    RequestReceived,
    ServerSession,
    SessionError,
)
from mcp_schema.shares import RETRY_AFTER, SHARE_EXCEEDED, ShareExceededError
from mcp_schema.subscriptions import Listen, Subscriptions

if TYPE_CHECKING:
    from mcp_schema.auth.principal import Principal
    from mcp_schema.telemetry import Telemetry

__all__ = ["Exchange", "Opened", "Posts", "brought_by", "request_id_of"]


def _id_of(value: dict[str, Any]) -> str | int | None:
    """The id of a request the endpoint refuses before its session reads
    it, by the codec's one id rule (None for anything but a request)."""
    return request_id(value.get("id")) if "method" in value and "id" in value else None


def request_id_of(body: bytes) -> str | int | None:
    """`_id_of` a body not parsed yet (what the forwarder refuses)."""
    try:
        return _id_of(parse(body))
    except McpError as err:
        return err.request_id


class Opened(NamedTuple):
    """A POST parsed, and the session of its era (`Posts._exchange`'s arguments)."""

    live: LiveSession
    headers: dict[str, str]
    body: bytes
    value: Any
    media: Media
    opening: bool
    caller: Caller
    """Who sent it, as the front door established it."""


class Exchange(NamedTuple):
    """A POST read by its session: the events left to run, the request it
    brought, the stream of its answer (None for what is not a request)."""

    live: LiveSession
    events: list[Event]
    brought: RequestReceived | None
    stream: Stream | None


_new = tuple.__new__
"""How an `Opened` or an `Exchange` is built, once per POST each: a NamedTuple's
own ``__new__`` is a Python function, which doubles what building one costs."""


def brought_by(events: list[Event]) -> RequestReceived | None:
    """The request a frame brought, for the handler to answer."""
    for event in events:
        if isinstance(event, RequestReceived):
            return event
        if isinstance(event, InputReceived):
            return event.request
    return None


class Posts:
    """What `mcp_schema.http.Endpoint` does with a POST (its base: the
    endpoint sets these attributes)."""

    max_body: int
    max_buffer: int
    replay: int
    stateless: tuple[str, ...]
    handshake: tuple[str, ...]
    sessions: SessionStore
    subscriptions: Subscriptions
    tools: Callable[[], Iterable[Any]] | None
    access: Gate | None
    telemetry: Telemetry | None
    _answers: Answers
    _built: dict[str, ServerSession]
    listened: Callable[[RequestReceived, Listen], None] | None = None
    """Told of each listen opened (its request and `mcp_schema.subscriptions.Listen`):
    what feeds a listen whose changes come from elsewhere (the era bridge's
    upstream sessions, `mcp_schema.gateway.bridge.stateless_front`)."""

    @property
    def late(self) -> type[InternalError]:
        """What a request whose answer did not come within ``answer_seconds``
        is answered: `InternalError` (-32603; in the stateless era, HTTP 200),
        or, for a handler that carries requests to a server of its own (the
        era bridge), `mcp_schema.errors.GatewayTimeoutError` (-32603, 504)."""
        return self._answers.late

    @late.setter
    def late(self, error: type[InternalError]) -> None:
        if not (isinstance(error, type) and issubclass(error, InternalError)):
            raise TypeError(f"late must be InternalError or a subclass, not {error!r}")
        self._answers.late = error

    def _opened_noted(
        self, headers: dict[str, str], body: bytes, caller: Caller
    ) -> Response | Opened:
        """`_opened`, its refusal counted, or what it opened noted for the access log."""
        opened = self._opened(headers, body, caller)
        if isinstance(opened, Response):
            count_refusal(self.telemetry, opened)
        else:
            noted(opened.value, opened.live.id is None)
        return opened

    def _refused(self, refused: Response, opened: Opened) -> Response:
        """``refused``, the answer to ``opened`` before its session read it, counted."""
        return self._counted(refused, opened.value)

    def _counted(self, refused: Response, message: object) -> Response:
        """``refused``, the answer to ``message`` (the parsed request), counted."""
        count_refusal(self.telemetry, refused, message)
        return refused

    def _session(self, era: str, caller: Caller) -> ServerSession:
        """A new session of ``era``, bound to ``caller``'s principal: a
        stateless-era request's, or a handshake-era one's from ``initialize`` on."""
        session = self._built[era]._like(caller.principal)
        session.caller = caller
        return session

    def _replays(self, live: LiveSession) -> Replays:
        if live.replays is None:
            live.replays = Replays(self.replay)
        return live.replays

    def _stream(
        self, live: LiveSession, media: Media, on_abandon: Callable[[Stream], None] | None
    ) -> Stream:
        """A new stream of ``live``: resumable when it is an event stream of a
        handshake-era session and the endpoint keeps events (``replay``)."""
        if self.replay and live.id is not None and media == SSE:
            return self._replays(live).open(self.max_buffer, on_abandon)
        return Stream(media, max_buffer=self.max_buffer, on_abandon=on_abandon)

    # -- POST -----------------------------------------------------------------------------

    def _opened(self, headers: dict[str, str], body: bytes, caller: Caller) -> Response | Opened:
        """The body parsed and the session of its era found (nothing read by
        it yet, nothing changed; ``caller``: whose share it counts in): what
        `_exchange` takes, or the refusal."""
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
            live = LiveSession(None, self._session("stateless", caller), caller.key)
            return _new(Opened, (live, headers, body, value, media, False, caller))
        if not self.handshake:
            return self._unsupported(named, value)
        if value.get("method") == "initialize":
            session = self._session("handshake", caller)
            live = LiveSession(secrets.token_urlsafe(32), session, caller.key)
            return _new(Opened, (live, headers, body, value, media, True, caller))
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            return refusal(400, "Bad Request: Mcp-Session-Id header is required", _id_of(value))
        found = self.sessions.get(session_id)
        if found is None or found.server.principal != caller.principal:
            # Another principal's session is no session of this caller's: the
            # same 404 as an unknown one, so its existence is not told either.
            return refusal(404, "Not Found: no such session (unknown or terminated)", _id_of(value))
        return _new(Opened, (found, headers, body, value, media, False, caller))

    # -- the gate (mcp_schema.http.gate) -----------------------------------------------------

    def _admitted_now(self, opened: Opened) -> Verdict:
        """The gate's verdict on ``opened``, nothing awaited (`Endpoint.handle`;
        called where there is a gate)."""
        assert self.access is not None
        return self.access.admit_now(opened.caller.verified, opened.value)

    async def _admitted(self, opened: Opened) -> Verdict:
        """The gate's verdict on ``opened``; a 404 when its session ended meanwhile."""
        if self.access is None:
            return None
        verdict = await self.access.admit(opened.caller.verified, opened.value)
        live = opened.live
        if live.id is not None and not opened.opening and self.sessions.get(live.id) is not live:
            message = "Not Found: no such session (unknown or terminated)"
            return refusal(404, message, _id_of(opened.value))
        return verdict

    def _gated(
        self, caller: Caller
    ) -> tuple[Token[bool] | None, Token[Principal | None] | None] | None:
        """Mark the handlers run from now on as behind the gate (`ADMITTED`,
        with a gate) and as serving ``caller``'s verified principal
        (`VERIFIED`: the front door's, which the tasks they start copy);
        the tokens to reset them with, None when nothing was set."""
        admitted = None if self.access is None else ADMITTED.set(True)
        # Set only when it changes (None when no token was checked, as most
        # often): a context variable set is a copy of the context.
        verified = caller.verified
        if VERIFIED.get() is verified:
            return None if admitted is None else (admitted, None)
        return admitted, VERIFIED.set(verified)

    @staticmethod
    def _ungated(tokens: tuple[Token[bool] | None, Token[Principal | None] | None]) -> None:
        admitted, verified = tokens
        if verified is not None:
            VERIFIED.reset(verified)
        if admitted is not None:
            ADMITTED.reset(admitted)

    @staticmethod
    def _deny(live: LiveSession, event: Event, error: McpError) -> bool:
        """Answer with ``error``, in place of the handler, the request
        ``event`` brings (the one the gate denied); False for another event."""
        request = brought_by([event])
        if request is None:
            return False
        try:
            live.server.fail(request, error)
        except SessionError:
            pass  # the session answered it itself
        route(live, live.server.frames_to_send(), stream_key(request.id))
        return True

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
        opening: bool = False,
        caller: Caller = ANONYMOUS,
    ) -> Response | Exchange:
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
        server.caller = caller  # this request's, in the contexts the session reads now
        was, live.holding = live.holding, True  # what it queues waits for its stream
        try:
            tools = None
            if self.tools is not None and value.get("method") == "tools/call":
                tools = self.tools()
            events = server._receive_parsed(value, len(body), read, tools)
        finally:
            live.holding = was
        own = server.frames_to_send()  # the session's own answers to this very frame
        for refused in events:
            if isinstance(refused, ProtocolError):
                if not own:
                    return refusal(status_of(refused.error), refused.error, None)
                return Response(status_of(refused.error), [("content-type", JSON)], own[0].data)
        brought = brought_by(events)
        if live.id is None and brought is not None and brought.method == LISTEN:
            return self._listen(live, brought, media)
        stream: Stream | None = None
        if "method" in value and "id" in value:  # a request: the stream of its answer
            stream = self._answer_stream(live, brought, own, media)
        if opening:
            try:  # initialize answered: the session lives from now on, within its share
                self.sessions.add(live)
            except ShareExceededError as err:  # counted as the front door's refusals are
                return self._counted(too_many(err, _id_of(value)), value)
            self._answers.watch(live)
        if own or live.outbox:  # what routing has to do (most requests: nothing yet)
            route(live, own)
        return _new(Exchange, (live, events, brought, stream))

    def _answer_stream(
        self, live: LiveSession, brought: RequestReceived | None, own: list[Frame], media: Media
    ) -> Stream:
        """The stream of a request's answer, keyed as the session reads its id
        (1.0 is the request 1); ``brought`` None: the session answered it
        (``own``: its answer, which names it)."""
        gone = None if brought is None else self._answers.gone(live, brought)
        stream = self._stream(live, media, gone)
        stream.answering = True
        if brought is None:
            live.streams[stream_key(own[0].id)] = stream
        else:
            live.streams[stream_key(brought.id)] = stream
            token = brought.context.progress_token
            if token is not None:  # without one, no progress is routed by its token
                stream.progress_token = stream_key(token)
        return stream

    def _listen(self, live: LiveSession, brought: RequestReceived, media: Media) -> Response:
        if media != SSE:
            return refusal(406, f"Not Acceptable: a listen is answered with {SSE}", brought.id)
        try:  # a stream of its own, fed by the subscriptions (mcp_schema.http.listen)
            listening = open_listen(
                self.subscriptions,
                brought,
                max_buffer=self.max_buffer,
                principal=live.server.principal,
                key=live.owner,
            )
        except ShareExceededError as err:
            return self._counted(too_many(err, brought.id), {"method": brought.method})
        except McpError as err:
            return refusal(status_of(err), err, brought.id)
        if self.listened is not None:
            self.listened(brought, listening.listen)
        return self._streamed(listening, live)

    def _done(self, exchange: Exchange) -> Response:
        """The response of an exchange whose events have run."""
        live, brought, stream = exchange.live, exchange.brought, exchange.stream
        if stream is None:
            return Response(202, self._session_header(live))
        if not stream.finished and brought is not None:  # answered later, or never
            self._answers.hold(live, brought)
        # Settled now, or streamed: no streamed response is built to be replaced.
        return self._settled(stream, live.id) or self._streamed(stream, live)

    def settled(self, response: Response) -> Response:
        """``response`` as one JSON body when its stream carries a request's
        answer and holds the response alone, finished (a stateless-era error
        then gets the status the specification gives it); else unchanged. An
        adapter may wait for the first frame before it writes the headers,
        then ask again (`mcp_schema.http.asgi.App` does)."""
        stream = response.stream
        if stream is None:
            return response
        return self._settled(stream, response.header("mcp-session-id")) or response

    @staticmethod
    def _settled(stream: Stream, session_id: str | None) -> Response | None:
        """`settled`'s rule: the one JSON body of ``stream`` (of the session
        ``session_id`` names, None in the stateless era), or None to stream it."""
        if (
            not stream.answering
            or not stream.finished
            or not (stream.media == JSON or stream.frames == 1)
        ):
            return None
        answer = b"".join(stream.take_frames())  # the response alone: one JSON body
        session = [] if session_id is None else [("mcp-session-id", session_id)]
        if stream.error == SHARE_EXCEEDED:  # past a share (`mcp_schema.shares`), in either era
            retry = [("retry-after", str(RETRY_AFTER))]
            return Response(429, [("content-type", JSON), *session, *retry], answer)
        status = code_status(stream.error, stream.status, session=bool(session))
        return Response(status, [("content-type", JSON), *session], answer)

    def _streamed(self, stream: Stream, live: LiveSession) -> Response:
        headers = [("content-type", stream.media), *self._session_header(live)]
        if stream.media == SSE:
            headers += [("cache-control", "no-cache"), ("x-accel-buffering", "no")]
        return Response(200, headers, stream=stream)

    @staticmethod
    def _session_header(live: LiveSession) -> list[tuple[str, str]]:
        return [] if live.id is None else [("mcp-session-id", live.id)]
