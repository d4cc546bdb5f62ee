"""`ServerSession`: the server's side of one connection, both eras."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from mcp_schema._args import check, strings
from mcp_schema._codec.catalog import STATELESS
from mcp_schema._codec.route import Route, id_key
from mcp_schema._codec.wire import to_wire
from mcp_schema.base import McpModel
from mcp_schema.capabilities import SERVED_BY, declares
from mcp_schema.context import LOGGING_LEVELS, LoggingLevel, RequestContext
from mcp_schema.errors import InvalidRequestError, MethodNotFoundError, quote
from mcp_schema.negotiation import answered_version, discover_result
from mcp_schema.projection import ProjectionError, Session, project
from mcp_schema.request_state import StateSealer
from mcp_schema.rounds import answered_inputs
from mcp_schema.session.answering import ServerAnswers
from mcp_schema.session.events import (
    Event,
    InputReceived,
    InvalidOutgoingError,
    Negotiated,
    NotificationReceived,
    RequestReceived,
)
from mcp_schema.session.extensions import PendingTask, TaskCalls, TaskHook
from mcp_schema.session.input import in_version
from mcp_schema.session.listens import Listens
from mcp_schema.session.peer import Role
from mcp_schema.session.results import completed
from mcp_schema.session.state import MAX_PENDING, Round, SealedRounds
from mcp_schema.session.wire import wire_or_type_error
from mcp_schema.subscriptions import LISTEN, Subscriptions, supported_by
from mcp_schema.versions import protocol

if TYPE_CHECKING:
    from mcp_schema.http.caller import Caller
    from mcp_schema.telemetry import Telemetry

__all__ = ["PendingTask", "ServerSession"]


ANSWERED_BY_SESSION = ("ping", "logging/setLevel")
"""Requests the session answers itself unless the author takes them (``take=``)."""


class ServerSession(ServerAnswers, TaskCalls):
    """The server side of one MCP connection, for both eras. Sans-IO: bytes in
    (`receive`), events out, bytes out (`data_to_send`, or `frames_to_send`
    with each frame's envelope); no threads, no event loop, no transport.

    * ``info``: the server's ``Implementation`` (a model of any version, or a
      mapping with ``name`` and ``version``).
    * ``capabilities``: the ``ServerCapabilities`` it declares (model or
      mapping). A request for an undeclared feature is answered -32601.
    * ``versions``: the versions it serves (default: every supported one).
    * ``handler_version``: read every request as a model of this version and
      take results and input answers in it, whatever the client speaks; the
      session projects both ways (`mcp_schema.project`). A request that has
      no equivalent in it is answered -32601; members the wire version cannot
      carry are dropped from results.
    * ``take``: of ``ping`` and ``logging/setLevel``, those the author answers
      (the session answers the others itself).
    * ``cache_scope``, ``ttl_ms``: the cache hints of stateless-era results
      that need them, unless the result sets its own.
    * ``request_state``: a `mcp_schema.request_state.StateSealer`: a
      stateless-era ``ask`` seals its round (the questions, its ``state``,
      which must then be a small JSON value, the answers so far) into the
      ``requestState``, bound to the call and to ``principal`` (the
      authenticated user, or None), so that a session of any process holding
      the same keys serves the retry. Without it the rounds wait in this
      session (one connection, as on stdio).
    * ``subscriptions``: where the listens of ``subscriptions/listen``
      (2026-07-28) are open, and what publishes to them
      (`mcp_schema.subscriptions.Subscriptions`; by default one of its own,
      honoring what ``capabilities`` declare): the session serves each on
      this connection itself (`mcp_schema.session.listens`: acknowledged,
      its frames among the others in `data_to_send`, ended by the client's
      ``notifications/cancelled``), unless ``listens`` is False, which hands
      them to the handler as any request (`mcp_schema.http.Endpoint` does
      so: each listen is a stream of its own there).
    * ``tasks``: the Tasks extension's rules, joined through the
      `mcp_schema.session.extensions.TaskHook` (a
      `mcp_schema.tasks.TaskServer`, which also holds the store): the
      session declares the extension, reads its methods, refuses them with
      -32021 from a client that did not declare it on the request, and lets
      a handler answer a call with a task (`run_as_task`). The transport's
      driver serves ``tasks/*`` and stores new tasks (`TaskServer.serve`,
      `TaskServer.flush`).
    * ``telemetry``: where the span of each request goes, from its reading
      to its answer (`mcp_schema.telemetry`): by default the global
      OpenTelemetry providers when the ``otel`` extra is installed; False for none.

    The session answers ``initialize`` (with the client's version when it
    serves it, else its newest handshake-era one), ``server/discover``, and
    every request it refuses. Not thread-safe: one thread at a time (hold a
    lock if several share it); nothing in it blocks.
    """

    role: Role = "server"

    def __init__(
        self,
        *,
        info: BaseModel | Mapping[str, Any],
        capabilities: BaseModel | Mapping[str, Any] | None = None,
        instructions: str | None = None,
        versions: Collection[str] | None = None,
        handler_version: str | None = None,
        take: Collection[str] = (),
        cache_scope: Literal["private", "public"] = "private",
        ttl_ms: int = 0,
        max_pending: int = MAX_PENDING,
        request_state: StateSealer | None = None,
        principal: str | None = None,
        subscriptions: Subscriptions | None = None,
        listens: bool = True,
        tasks: TaskHook | None = None,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        super().__init__(versions=versions, max_pending=max_pending, telemetry=telemetry)
        check(request_state, StateSealer, "request_state", none=True)
        check(principal, str, "principal", none=True)
        check(tasks, TaskHook, "tasks", none=True)
        self.principal = principal
        """Who the requests come from (the authenticated user), or None."""
        self.caller: Caller | None = None
        """Who sent the request being read (`mcp_schema.http.Caller`, set by the
        HTTP front door before each read), given to its `RequestContext`."""
        self.tasks = tasks
        self._sealer = request_state
        check(info, (BaseModel, Mapping), "info")
        check(capabilities, (BaseModel, Mapping), "capabilities", none=True)
        check(instructions, str, "instructions", none=True)
        check(handler_version, str, "handler_version", none=True)
        check(cache_scope, str, "cache_scope")
        check(ttl_ms, int, "ttl_ms")
        self.info = wire_or_type_error(info, "info")
        self.capabilities = wire_or_type_error(capabilities or {}, "capabilities")
        if tasks is not None:
            self._extensions = frozenset({tasks.extension})
            declared = self.capabilities.get("extensions")
            extensions = dict(declared) if isinstance(declared, Mapping) else {}
            extensions.setdefault(tasks.extension, {})
            self.capabilities = {**self.capabilities, "extensions": extensions}
        self.instructions = instructions
        if handler_version is not None and protocol(handler_version) is None:
            raise ValueError(f"no models for handler version {handler_version!r}")
        self.handler_version = handler_version
        self.take = frozenset(strings(take, "take") or ())
        if not self.take <= set(ANSWERED_BY_SESSION):
            raise ValueError(f"take names some of {ANSWERED_BY_SESSION}")
        if cache_scope not in ("private", "public") or ttl_ms < 0:
            raise ValueError("cache_scope is 'private' or 'public', ttl_ms a non-negative int")
        self.cache_scope: Literal["private", "public"] = cache_scope
        self.ttl_ms = ttl_ms
        check(subscriptions, Subscriptions, "subscriptions", none=True)
        check(listens, bool, "listens")
        self._given_subscriptions = subscriptions
        self._serves_listens = listens
        self._new_serving()

    def _new_serving(self) -> None:
        """The server's part of a new connection's state (`Peer._new_connection`
        is the rest), each part a new object."""
        self._pending_tasks: list[PendingTask] = []
        self._unread = {}
        self._aside = {}
        if self._sealer is not None:
            self._state.rounds = SealedRounds(self._sealer, self.principal)
        self._initialize: McpModel | None = None
        self._opening: RequestContext | None = None
        """The context ``initialize`` gave, read once: every handshake-era request shares it."""
        self._log_level: LoggingLevel | None = None
        self._subscriptions = self._given_subscriptions
        self._listens: Listens | None = None
        """The listens this connection opened (built at the first)."""

    def _like(self, principal: str | None) -> ServerSession:
        """A new session built with this one's arguments, checked when this one
        was built, but for ``principal``; its state new, as a constructor's:
        what `mcp_schema.http.Endpoint` serves each stateless-era request with,
        without checking the same arguments again for every request."""
        if principal is not None and type(principal) is not str:
            check(principal, str, "principal", none=True)  # the words of the one check
        fresh = object.__new__(type(self))
        # The arguments (the state is new below), the mappings the author may
        # change copied. The members by dict.copy: it copies this one's table
        # whole, where a dict display inserts them one by one.
        fields = vars(self).copy()
        fields["info"] = dict(self.info)
        fields["capabilities"] = dict(self.capabilities)
        fields["principal"] = principal
        fresh.__dict__ = fields
        fresh._new_connection()
        fresh._new_serving()
        return fresh

    @property
    def subscriptions(self) -> Subscriptions:
        """The open listens and what publishes to them (``subscriptions=``).
        Publish a change (``session.subscriptions.tools_list_changed()``...),
        then send what `data_to_send` returns."""
        if self._subscriptions is None:  # built when first needed: most sessions never do
            self._subscriptions = Subscriptions(supported=supported_by(self.capabilities))
        return self._subscriptions

    def changed(self, method: str, uri: str | None = None) -> int:
        """Tell the client of a change as its version has it told: ``method``
        (``notifications/tools/list_changed``..., or
        ``notifications/resources/updated`` of ``uri``) in a version served
        per request to the listens that asked for it (`subscriptions`: how
        many did), in a handshake-era session as the notification itself (1).
        Then send what `data_to_send` returns."""
        if self.version is None or self.version in STATELESS:
            return self.subscriptions.publish(method, uri)
        self.notify(method, None if uri is None else {"uri": uri})
        return 1

    @property
    def log_level(self) -> LoggingLevel | None:
        """The level the client set with ``logging/setLevel`` (handshake era)."""
        return self._log_level

    # -- reading -------------------------------------------------------------------------

    def _on_notification(self, route: Route, message: McpModel, events: list[Event]) -> None:
        if route.method == "notifications/initialized":
            return  # the session is ready once initialize is answered
        assert route.method is not None
        events.append(NotificationReceived(route.method, message, route.version))

    def _on_request(self, route: Route, message: McpModel, events: list[Event]) -> None:
        method, version = route.method, route.version
        assert method is not None and route.id is not None
        if method == "initialize":  # read in any version: it chooses the session's
            return self._initialized(route, message, events)
        if method == "ping" and method not in self.take:
            return self._queue(self._result_value(route, {}, version))
        stateless = version in STATELESS
        if stateless:
            context = RequestContext.of_stateless(message, self.caller)
        elif self._opening is None:
            raise InvalidRequestError(f"Invalid Request: {method} before initialize")
        else:
            context = self._opening.of(message, route.id, self._log_level, self.caller)
        if method == "server/discover":
            return self._discovered(route, message)
        needed = SERVED_BY.get(method)  # the route read a str method
        if needed is not None and not declares(self.capabilities, needed):
            raise MethodNotFoundError(
                f"Method not found: {method} (this server does not declare {'.'.join(needed)})",
                {"method": method},
            )
        event = RequestReceived(route.id, method, message, context, version)
        if self.tasks is not None:  # the extension's gate
            self._gate(method, event)
        if method == "logging/setLevel" and method not in self.take:
            level = to_wire(message).get("params", {}).get("level")
            self._log_level = level if level in LOGGING_LEVELS else None
            return self._queue(self._result_value(route, {}, version))
        if self.handler_version is not None and self.handler_version != version:
            event = RequestReceived(
                route.id, method, self._projected(message, context), context, version
            )
        if method == LISTEN and self._serves_listens:
            return self._listen(event, events)
        resumed = self._resumed(event, message) if stateless else None
        if resumed is not None and len(resumed[2]) < len(resumed[0].questions) - len(
            resumed[0].answers
        ):
            return self._ask_again(event, *resumed)
        # Accepted: only now does the request change the session.
        self._state.accept(event)
        if self._aside:
            self._unread[id_key(route.id)], self._aside = self._aside, {}
        if stateless and self._state.version is None:
            self._state.open(version)
            events.append(Negotiated(version, context.client_info, context.client_capabilities))
        if resumed is None:
            events.append(event)
        else:
            round_, token, answers = resumed
            self._state.rounds.close(token)
            given = {**round_.answers, **answers}
            handled = {k: in_version(v, self.handler_version) for k, v in given.items()}  # type: ignore[arg-type]
            events.append(InputReceived(event, handled, round_.state, round_.claimer))
        return None

    def _listen(self, event: RequestReceived, events: list[Event]) -> None:
        """Open the listen ``event`` asks for on this connection (see `Listens`)."""
        if self._listens is None:
            self._listens = Listens(self.subscriptions, self.principal)
        self._listens.open(event)  # the registry's refusal changes nothing
        self._state.accept(event)  # in flight until its listen ends (admissible: checked)
        if self._state.version is None:
            self._state.open(event.version)
            context = event.context
            events.append(
                Negotiated(event.version, context.client_info, context.client_capabilities)
            )

    def _projected(self, message: McpModel, context: RequestContext) -> McpModel:
        facts = Session(
            client_capabilities=to_wire(context.client_capabilities),
            client_info=None if context.client_info is None else to_wire(context.client_info),
            log_level=context.log_level,
        )
        assert self.handler_version is not None
        try:
            projected = project(message, self.handler_version, session=facts).message
        except (ProjectionError, TypeError):
            method = to_wire(message).get("method")
            raise MethodNotFoundError(
                f"Method not found: {quote(method)} (not served in {self.handler_version})",
                {"method": method},
            ) from None
        assert isinstance(projected, McpModel)
        return projected

    def _initialized(self, route: Route, message: McpModel, events: list[Event]) -> None:
        if self._state.version is not None:
            raise InvalidRequestError("Invalid Request: the session is initialized already")
        wire = to_wire(message)
        requested = wire.get("params", {}).get("protocolVersion")
        version = answered_version(requested, self.versions)
        try:
            opened = self._checked(
                wire, version
            )  # the client's facts, read in the session's version
        except InvalidOutgoingError:
            opened = message
        answer: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities,
            "serverInfo": self.info,
        }
        if self.instructions is not None:
            answer["instructions"] = self.instructions
        context = RequestContext.from_session(opened, opened)
        self._queue(self._result_value(route, answer, version))
        self._state.open(version)
        self._initialize, self._opening = opened, context
        events.append(Negotiated(version, context.client_info, context.client_capabilities))

    def _discovered(self, route: Route, message: McpModel) -> None:
        try:
            found = discover_result(
                self.capabilities,
                server_info=self.info,
                instructions=self.instructions,
                versions=list(reversed(self.versions)),
                cache_scope=self.cache_scope,
                ttl_ms=self.ttl_ms,
            )
        except ValueError as exc:
            raise InvalidOutgoingError(f"server/discover: {exc}") from None
        wire = completed(to_wire(found), "server/discover", route.version, self)
        self._queue(self._result_value(route, wire, route.version))

    def _resumed(
        self, event: RequestReceived, message: McpModel
    ) -> tuple[Round, str, dict[str, McpModel]] | None:
        """A stateless-era retry answering an ``ask``: its round (still open),
        the ``requestState`` naming it, and the answers to what the round
        still asks (-32602 for a state the round store refuses, a retry of
        another call, or an answer that is not a result of the method asked
        under its key)."""
        # The fields a model has set are in its __dict__: a params class without
        # requestState answers no round, and getattr would take pydantic's slow miss.
        params = getattr(message, "params", None)
        fields = vars(params) if isinstance(params, BaseModel) else {}
        state = fields.get("request_state")
        if state is None:
            return None
        found = self._state.rounds.find(state, event)
        still = {k: m for k, (m, _) in found.questions.items() if k not in found.answers}
        compiled = protocol(event.version)
        assert compiled is not None  # the route read the retry in it
        answers, _ = answered_inputs(fields.get("input_responses") or {}, still, compiled.package)
        return found, state, answers

    # -- bookkeeping -----------------------------------------------------------------------

    def _on_cancel(self, request: RequestReceived) -> bool:
        if self._listens is not None and self._listens.abandon(request):
            return False  # the session's own listen: the handler never saw it
        self._on_answered(request)
        return True

    def _on_answered(self, request: RequestReceived) -> None:
        if not (self._unread or self._state.asking):
            return  # nothing kept for any request (a stateless-era request's session)
        key = id_key(request.id)
        self._unread.pop(key, None)
        round_ = self._state.asking.pop(key, None)
        if round_ is not None:
            for rid in round_.outgoing:
                self._cancel(rid, "the request it served is over", request.id)
