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
   queued to the streams it belongs to, by each frame's envelope
   (`mcp_schema.http.routing`): a response to its request's, what belongs
   to a request (progress, logs, the server's requests) to that request's,
   anything else to the stream of the request the handler was serving,
   else to the GET stream. What has no open stream is dropped.

A request's answer is one JSON body when the response is the only frame
for it by the time the handler returns (`App` waits up to its keep-alive
interval for that, `Endpoint.settled`); otherwise an event stream,
carrying the request's notifications (progress, logs) and, in the
handshake era, the server's requests to the client, then the response.
Notifications, and responses the client POSTs, get 202.

Handlers are functions ``handler(session, event)``, as on stdio
(``examples/server.py``), called for every event, in order; an ``async
def`` handler is awaited as a task (`mcp_schema.http.answers`). A
stateless-era request is served by a `ServerSession` of its own, built for
it: nothing is remembered between requests. In either era a request may be
answered after its handler returned (a callback, a task, the client's
answer to ``session.ask`` on another POST): its stream stays open until
the session answers, for at most ``answer_seconds`` (then -32603, and a log
line). ``subscriptions/listen`` is the exception: a stream of its own,
served by `mcp_schema.http.listen`, never the handler.

Cancellation: a request's stream closed by the client before the answer
(`Stream.abandon`, also when it overflows) ends the request in its session
(`ServerSession.cancel_received`): the handler sees a `CancelRequested`,
its task is cancelled and the session drops any answer; the server's own
pending requests for it are cancelled too. With ``replay``, a
handshake-era stream the client leaves waits to be resumed instead
(`mcp_schema.http.resume`); only its overflow cancels.

GET with a live ``Mcp-Session-Id`` opens the session's stream for what
relates to no request (one at a time: 409); DELETE terminates the session.
Without a session id both are 405. Not thread-safe: one thread (one event
loop) at a time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from mcp_schema._args import check, strings

# The codec's own stages, private to it: the endpoint parses a body once, by
# the one strict parse, and reads the era and the id there by the codec's
# rules, then hands the body to the session (no public reader stops there).
from mcp_schema.errors import (
    InternalError,
)
from mcp_schema.http.admission import Admission
from mcp_schema.http.answers import ANSWER_SECONDS, MAX_WAITING, WAITING, Answers
from mcp_schema.http.caller import Caller
from mcp_schema.http.endpoint_args import check_bounds, gate_of
from mcp_schema.http.gate import Gate
from mcp_schema.http.observe import endpoint_telemetry, observe_shares
from mcp_schema.http.post import Posts, brought_by
from mcp_schema.http.precheck import MAX_BODY, SSE, Precheck
from mcp_schema.http.proxies import TrustedProxies
from mcp_schema.http.resume import ResumableStream
from mcp_schema.http.routing import route
from mcp_schema.http.rules import refusal
from mcp_schema.http.sessions import LiveSession, MemorySessions, SessionStore, stream_key
from mcp_schema.http.stream import MAX_BUFFER, Response, Stream
from mcp_schema.http_headers import Headers, received_headers
from mcp_schema.request_state import StateSealer
from mcp_schema.session import Event, RequestReceived, ServerSession
from mcp_schema.shares import Share
from mcp_schema.subscriptions import TASKS, Subscriptions, supported_by
from mcp_schema.tasks.notifications import notifier
from mcp_schema.tasks.server import TaskServer
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from mcp_schema.auth.server import ResourceServer
    from mcp_schema.telemetry import Telemetry

_UNCHECKED = "Internal error: the token is checked by Endpoint.handle_async (or the ASGI app)"

__all__ = ["ANSWER_SECONDS", "MAX_BODY", "MAX_WAITING", "AsyncHandler", "Endpoint", "Handler"]


Handler = Callable[[ServerSession, Event], None]
"""What serves a session's events: ``handler(session, event)``."""

AsyncHandler = Callable[[ServerSession, Event], Awaitable[None] | None]
"""An ``async def`` handler, or one that returns an awaitable for some events
(None for the others): what it returns is awaited as a task
(`mcp_schema.http.answers`)."""


class Endpoint(Posts, Admission):
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
    * ``answer_seconds``: how long a request's answer is awaited once its
      handler returned (-32603 after it); ``max_waiting``: stateless-era
      requests awaiting theirs at once, ``max_waiting_per_key`` per caller
      (429 past either: `mcp_schema.shares`) (`mcp_schema.http.answers`).
    * ``sessions``: where handshake-era sessions live (`MemorySessions`:
      its ``max_sessions``, ``max_per_key`` and ``idle_seconds``).
    * ``replay``: events kept per event stream of a handshake-era session,
      for a client resuming it with ``Last-Event-ID``
      (`mcp_schema.http.resume`; 0, the default: no event ids, and a stream
      the client closes is cancellation of its request).
    * ``session_options``: more keyword arguments of every `ServerSession`
      (``cache_scope``, ``ttl_ms``, ``take``, ``max_pending``...).
    * ``request_state``: the `mcp_schema.request_state.StateSealer` a stateless-era
      ``ask`` is sealed with (its retry then completes on any replica holding the keys),
      bound to the user ``principal(headers)`` names (lower-case names; default None).
      That principal is the caller's everywhere: sealed ``requestState``, tasks,
      listens, and handshake-era sessions (bound at ``initialize``: another
      principal's request or DELETE in one is 404).
    * ``auth``: the `mcp_schema.auth.ResourceServer` checking each request's
      bearer token (`admit`; then the token's principal is the caller's, and
      ``principal`` is not given); its metadata is served beside the endpoint.
    * ``trusted_proxies``: the peers (addresses, networks, ``"*"``) whose
      ``Forwarded``/``X-Forwarded-For`` name the client's address
      (`mcp_schema.http.proxies`).
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
    * ``access``: what decides, once a POST is parsed and before its session
      reads it, whether the verified principal may reach the tool, resource
      or prompt it names (`mcp_schema.http.gate`; `mcp_schema.auth.Access`):
      a missing scope is the 403 step-up challenge, a denial the item's
      unknown error. An async policy is awaited by `handle_async`; `handle`
      denies where it would wait.
    * ``telemetry``: the sessions' (`mcp_schema.telemetry.telemetry_for`; or
      ``session_options``'), where its own refusals count (`mcp_schema.http.observe`).

    `handle` serves an ``async def`` handler where an event loop runs (its
    answer then streams); where none runs it refuses the request -32603.
    """

    def __init__(
        self,
        handler: Handler | AsyncHandler,
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
        answer_seconds: float = ANSWER_SECONDS,
        max_waiting: int = MAX_WAITING,
        max_waiting_per_key: int | None = None,
        replay: int = 0,
        sessions: SessionStore | None = None,
        session_options: Mapping[str, Any] | None = None,
        subscriptions: Subscriptions | None = None,
        request_state: StateSealer | None = None,
        principal: Callable[[Mapping[str, str]], str | None] | None = None,
        tasks: TaskServer | None = None,
        tools: Callable[[], Iterable[Any]] | None = None,
        auth: ResourceServer | None = None,
        trusted_proxies: Collection[str] | TrustedProxies = (),
        access: Gate | None = None,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        if not callable(handler) or not all(f is None or callable(f) for f in (principal, tools)):
            raise TypeError("handler must be callable, and principal and tools callable or None")
        self.tools, self.access = tools, gate_of(access)
        check_bounds(max_body, max_buffer, answer_seconds, max_waiting, replay)
        check(tasks, TaskServer, "tasks", none=True)
        check(session_options, Mapping, "session_options", none=True)
        named = strings(versions, "versions", none=True)
        served = SUPPORTED_VERSIONS if named is None else named
        self.handler, self.principal, self.replay = handler, principal, replay
        self.max_body, self.max_buffer = max_body, max_buffer
        self.sessions: SessionStore = MemorySessions() if sessions is None else sessions
        self.stateless = tuple(v for v in STATELESS_VERSIONS if v in served)
        """The versions served per request, oldest first."""
        self.handshake = tuple(v for v in HANDSHAKE_VERSIONS if v in served)
        """The versions served in sessions (``initialize``), oldest first."""
        self.rules = Precheck(  # every request is checked by it first (the ASGI app's too)
            path=path,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            loopback_origins=loopback_origins,
            cors=cors,
            max_body=max_body,
            sessions=bool(self.handshake),
            auth=auth,
            principal=principal,
            trusted_proxies=trusted_proxies,
        )
        self.path, self.allowed_hosts = path, self.rules.allowed_hosts
        self.allowed_origins = self.rules.allowed_origins
        self.tasks, self.telemetry = tasks, endpoint_telemetry(telemetry, session_options)
        self.subscriptions = self._listens(subscriptions, capabilities, tasks)
        waiting = Share(WAITING, total=max_waiting, per_key=max_waiting_per_key)
        self._answers = Answers(
            handler, tasks=tasks, answer_seconds=answer_seconds, waiting=waiting
        )
        self._built = self._templates(
            served,
            {
                **(session_options or {}),
                "tasks": tasks,
                "info": info,
                "capabilities": capabilities,
                "instructions": instructions,
                "handler_version": handler_version,
                "request_state": request_state,
                "listens": False,  # a listen is a stream of its own, not the session's
            },
        )

    def _templates(
        self, served: Collection[str], options: dict[str, Any]
    ) -> dict[str, ServerSession]:
        """The sessions each era's requests are served by are built like these
        (`ServerSession._like`), checked once, here; the telemetry too, every table's."""
        options["telemetry"] = self.telemetry or False  # resolved once, for every session
        observe_shares(self.telemetry, self._answers, self.subscriptions, self.tasks, self.sessions)
        ServerSession(versions=served, **options)
        return {
            era: ServerSession(versions=versions, **options)
            for era, versions in (("stateless", self.stateless), ("handshake", self.handshake))
            if versions
        }

    @staticmethod
    def _listens(
        given: Subscriptions | None,
        capabilities: BaseModel | Mapping[str, Any] | None,
        tasks: TaskServer | None,
    ) -> Subscriptions:
        """The subscriptions the listens open in: ``given``, or honoring what
        ``capabilities`` and ``tasks`` declare; task status notifications go
        to those of this replica (a Relay's: of all)."""
        sent = supported_by(capabilities) | ({TASKS} if tasks is not None else set())
        subscriptions = Subscriptions(supported=sent) if given is None else given
        if tasks is not None:
            tasks.on_change = notifier(tasks, subscriptions)
        return subscriptions

    @property
    def answer_seconds(self) -> float:
        """How long a request's answer is awaited once its handler returned."""
        return self._answers.answer_seconds

    @property
    def waiting(self) -> int:
        """Stateless-era requests whose answer is awaited now."""
        return self._answers.waiting

    # -- HTTP (the front door: `mcp_schema.http.admission`) -------------------------------

    def handle(
        self,
        method: str,
        path: str,
        headers: Headers,
        body: bytes = b"",
        caller: Caller | None = None,
    ) -> Response:
        """The response to one HTTP request (the adapter drains its stream, if
        any). ``caller``: who sent it, as a front door established it; by
        default the ``principal`` hook's. With ``auth``, a token is checked
        only where waiting is possible (`handle_async`, `admit`): without a
        ``caller`` the request is refused, -32603."""
        received = received_headers(headers)  # once: every later check reads this dict
        response = self.rules.with_cors(
            received, self._handle(method, path, received, body, caller)
        )
        assert response is not None
        return response

    def _handle(
        self, method: str, path: str, received: dict[str, str], body: bytes, caller: Caller | None
    ) -> Response:
        if caller is None:
            if self.rules.auth is not None:
                return refusal(500, InternalError(_UNCHECKED))
            caller = self.rules.caller_of(received)
        early = self._precheck(method, path, received, None, caller)
        if early is not None:
            return early
        return self._prechecked(method, received, body, caller)

    def _prechecked(
        self, method: str, received: dict[str, str], body: bytes, caller: Caller
    ) -> Response:
        """`handle` once `_precheck` let the request through (the adapter's path:
        it prechecks before reading the body, and neither is done twice)."""
        if method != "POST":
            return self._other(method, received, caller)
        opened = self._opened_noted(received, body, caller)
        if isinstance(opened, Response):
            return opened
        denied = None if self.access is None else self._admitted_now(opened)
        if isinstance(denied, Response):  # the step-up challenge: the session never read it
            return self._refused(denied, opened)
        exchange = self._exchange(*opened)
        if isinstance(exchange, Response):
            return exchange
        gated = self._gated(caller)
        try:
            for event in exchange.events:
                if denied is not None and self._deny(exchange.live, event, denied):
                    continue
                if self.tasks is None:
                    self._answers.run(exchange.live, event)
                else:
                    self._without_store(exchange.live, event)
        finally:
            if gated is not None:  # most requests set nothing: no call
                self._ungated(gated)
        return self._done(exchange)

    def _without_store(self, live: LiveSession, event: Event) -> None:
        """``event`` served where the task store cannot be awaited (`handle`):
        ``tasks/*``, and the calls a handler answered with a task, -32603."""
        assert self.tasks is not None
        unserved = InternalError("Internal error: tasks are served by Endpoint.handle_async")
        if isinstance(event, RequestReceived) and event.method in self.tasks.requests:
            live.server.fail(event, unserved)
        else:
            self._answers.run(live, event)
        for pending in live.server.pending_tasks():
            live.server.fail(pending.request, unserved)
        route(live, live.server.frames_to_send())

    async def handle_async(
        self,
        method: str,
        path: str,
        headers: Headers,
        body: bytes = b"",
        caller: Caller | None = None,
    ) -> Response:
        """`handle`, waiting for the task store where the request needs it
        (``tasks/*``, a call a handler answered with a task), and for the token
        check (`admit`) when no ``caller`` is given."""
        received = received_headers(headers)
        if caller is None:
            admitted = await self.admit(method, path, received, {})
            if isinstance(admitted, Response):
                return admitted
            caller = admitted
        else:
            response = self._precheck(method, path, received, None, caller)
            if response is not None:
                self.rules.with_cors(received, response)
                return response
        response = await self._prechecked_async(method, received, body, caller)
        self.rules.with_cors(received, response)  # adds the CORS headers, in place
        return response

    def _answers_now(self, method: str) -> bool:
        """Whether a request of ``method`` is answered with nothing awaited
        (`_prechecked`): no task store and no gate to wait for, or no POST."""
        return method != "POST" or (self.tasks is None and self.access is None)

    async def _prechecked_async(
        self, method: str, received: dict[str, str], body: bytes, caller: Caller
    ) -> Response:
        """`_prechecked`, serving ``tasks/*`` and storing new tasks (`TaskServer`)."""
        if self._answers_now(method):
            return self._prechecked(method, received, body, caller)
        tasks = self.tasks
        opened = self._opened_noted(received, body, caller)
        if isinstance(opened, Response):
            return opened
        denied = await self._admitted(opened)
        if isinstance(denied, Response):  # the step-up challenge, or 404: the session never read it
            return self._refused(denied, opened)
        exchange = self._exchange(*opened)
        if isinstance(exchange, Response):
            return exchange
        live = exchange.live
        gated = self._gated(caller)
        try:
            for event in exchange.events:
                if denied is not None and self._deny(live, event, denied):
                    continue
                if tasks is None:
                    self._answers.run(live, event)
                    continue
                if tasks.serves(event) and await tasks.serve(live.server, event):
                    route(live, live.server.frames_to_send())
                    continue
                self._answers.run(live, event)
                if live.server.has_pending_tasks:  # the handler started some: stored, answered
                    await tasks.flush(live.server, live.owner)
                    request = brought_by([event])
                    context = None if request is None else stream_key(request.id)
                    route(live, live.server.frames_to_send(), context)
        finally:
            if gated is not None:  # most requests set nothing: no call
                self._ungated(gated)
        return self._done(exchange)

    def _other(self, method: str, received: dict[str, str], caller: Caller) -> Response:
        live = self._live(received, caller)
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

    def close(self) -> None:
        """Terminate every session and end every listen: the server is shutting
        down (stateless-era requests still awaiting their answer are answered
        -32603; handlers' tasks are cancelled)."""
        self._answers.close()
        self.sessions.close()
        self.subscriptions.close()

    async def aclose(self) -> None:
        """`close`, then wait for the handlers' tasks to end."""
        await self._answers.aclose()  # what `close` does first, waiting for the tasks
        self.sessions.close()
        self.subscriptions.close()

    @staticmethod
    def _listener_gone(live: LiveSession) -> Callable[[Stream], None]:
        def gone(stream: Stream) -> None:
            if live.listener is stream:
                live.listener = None

        return gone
