"""`ServerSession`: the server's side of one connection, both eras."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from mcp_schema._args import check, strings
from mcp_schema._codec.catalog import STATELESS
from mcp_schema._codec.messages import ResultResponse
from mcp_schema._codec.route import Route, id_key
from mcp_schema._codec.schemas import Target, validator
from mcp_schema._codec.wire import to_wire
from mcp_schema.base import McpModel
from mcp_schema.capabilities import ASKED_CAPABILITY, SERVED_BY, declares
from mcp_schema.context import LOGGING_LEVELS, LoggingLevel, RequestContext
from mcp_schema.errors import (
    InvalidRequestError,
    McpError,
    MethodNotFoundError,
    quote,
)
from mcp_schema.negotiation import answered_version, discover_result
from mcp_schema.projection import ProjectionError, Session, project
from mcp_schema.request_state import StateSealer
from mcp_schema.rounds import answered_inputs, input_required
from mcp_schema.session.events import (
    CapabilityError,
    Event,
    InputReceived,
    InvalidOutgoingError,
    Negotiated,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
)
from mcp_schema.session.input import answer_to, in_version, questions
from mcp_schema.session.listens import Listens
from mcp_schema.session.peer import Peer, Role, encoded, wire_or_type_error
from mcp_schema.session.results import Hints, completed, protocol_of
from mcp_schema.session.state import MAX_PENDING, Outgoing, Round, SealedRounds
from mcp_schema.subscriptions import LISTEN, Subscriptions, supported_by
from mcp_schema.tasks.protocol import (
    TASK_METHODS,
    TASK_SUPPORTED,
    TaskProtocol,
    declares_tasks,
    has_tasks,
    missing_tasks,
)
from mcp_schema.tasks.store import TaskRecord
from mcp_schema.tasks.worker import Work
from mcp_schema.versions import TASKS_EXTENSION, protocol

__all__ = ["PendingTask", "ServerSession"]


@dataclass(frozen=True, eq=False)
class PendingTask:
    """A call a handler answers with a task (`ServerSession.run_as_task`),
    waiting to be stored: its request, the new record, the work to start."""

    request: RequestReceived
    record: TaskRecord
    work: Work


ANSWERED_BY_SESSION = ("ping", "logging/setLevel")
"""Requests the session answers itself unless the author takes them (``take=``)."""


class ServerSession(Peer):
    """The server side of one MCP connection, for both eras. Sans-IO: bytes in
    (`receive`), events out, bytes out (`data_to_send`); no threads, no
    event loop, no transport.

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
    * ``tasks``: the Tasks extension's rules (a
      `mcp_schema.tasks.TaskServer`, which also holds the store): the
      session declares the extension, reads its methods, refuses them with
      -32021 from a client that did not declare it on the request, and lets
      a handler answer a call with a task (`run_as_task`). The transport's
      driver serves ``tasks/*`` and stores new tasks (`TaskServer.serve`,
      `TaskServer.flush`).

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
        tasks: TaskProtocol | None = None,
    ) -> None:
        super().__init__(versions=versions, max_pending=max_pending)
        check(request_state, StateSealer, "request_state", none=True)
        check(principal, str, "principal", none=True)
        check(tasks, TaskProtocol, "tasks", none=True)
        self.principal = principal
        """Who the requests come from (the authenticated user), or None."""
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
            self._extensions = frozenset({TASKS_EXTENSION})
            declared = self.capabilities.get("extensions")
            extensions = dict(declared) if isinstance(declared, Mapping) else {}
            extensions.setdefault(TASKS_EXTENSION, {})
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
        self._unread: dict[Any, dict[str, Any]] = {}
        """Of each ``tasks/update`` in flight, the answers its schema refuses,
        by key: judged against the task (`unread_answers`)."""
        self._aside: dict[str, Any] = {}
        """What the frame being read set aside, until its request is accepted."""
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
        check(principal, str, "principal", none=True)
        fresh = object.__new__(type(self))
        fresh.__dict__ = vars(self).copy()  # the arguments; the state is new below
        fresh.info, fresh.capabilities = dict(self.info), dict(self.capabilities)
        fresh.principal = principal
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

    @property
    def _hints(self) -> Hints:
        return Hints(self.info, self.cache_scope, self.ttl_ms)

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
            context = RequestContext.of_stateless(message)
        elif self._opening is None:
            raise InvalidRequestError(f"Invalid Request: {method} before initialize")
        else:
            context = self._opening.of(message, route.id, self._log_level)
        if method == "server/discover":
            return self._discovered(route, message)
        needed = SERVED_BY.get(method)  # the route read a str method
        if needed is not None and not declares(self.capabilities, needed):
            raise MethodNotFoundError(
                f"Method not found: {method} (this server does not declare {'.'.join(needed)})",
                {"method": method},
            )
        if method in TASK_METHODS and not declares_tasks(context.client_capabilities):
            raise missing_tasks(method)
        event = RequestReceived(route.id, method, message, context, version)
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
            events.append(InputReceived(event, handled, round_.state))
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
        wire = completed(to_wire(found), "server/discover", route.version, self._hints)
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

    # -- answering ------------------------------------------------------------------------

    def data_to_send(self) -> list[bytes]:
        """The frames queued since the last call, in order (each listen's
        frames after the others, and its changes coalesced since the last
        call: `mcp_schema.subscriptions`); emptied by the call."""
        if self._listens:
            frames, ended = self._listens.take()
            self._out += frames
            for request in ended:  # its last frame answered it
                self._state.release(request)
        return super().data_to_send()

    def respond(self, request: RequestReceived, result: BaseModel | Mapping[str, Any]) -> None:
        """Answer ``request`` with ``result``: a model of the wire version or of the
        handler version (projected), or a wire mapping (of the handler version
        when there is one). Stateless-era results get what that era requires
        (``resultType``, the server's info in ``_meta``, cache hints).

        Dropped when the peer cancelled ``request``; `UnknownRequestError`
        when it is not in flight (answered already), `InvalidOutgoingError`
        when ``result`` is not a valid result of its method.
        """
        if not self._state.answerable(request):
            return
        wire = self._result_wire(request, result)
        value = self._result_value(request, wire, request.version)
        self._answer(request, encoded(value))
        if request.method == "tools/list":
            listed = wire.get("tools")
            tools = listed if isinstance(listed, list) else []
            self._listed = {t.get("name"): t for t in tools if isinstance(t, Mapping)}

    def _result_value(
        self,
        request: RequestReceived | Route,
        wire: dict[str, Any],
        version: str,
        *,
        check: bool = True,
    ) -> dict[str, Any]:
        """The response carrying ``wire``, completed for its era, and checked
        unless the caller checks it (for the model)."""
        assert request.id is not None and request.method is not None
        if version in STATELESS:
            wire = completed(wire, request.method, version, self._hints)
        value = {"jsonrpc": "2.0", "id": request.id, "result": wire}
        if check:
            self._checked_answer(value, request.method, version)
        return value

    def _result_wire(
        self, request: RequestReceived, result: BaseModel | Mapping[str, Any]
    ) -> dict[str, Any]:
        target = request.version
        handler = self.handler_version
        response = None
        if isinstance(result, Mapping) and handler is not None and handler != target:
            response = self._read_result(request, dict(result), handler)
            result = response.result
        if isinstance(result, BaseModel):
            compiled = protocol_of(result)
            if compiled is not None and compiled != target:
                if response is None:  # else the response the check read is the one projected
                    response = ResultResponse[Any](id=request.id, result=result)
                try:
                    moved = project(response, target)
                except (ProjectionError, TypeError) as exc:
                    raise InvalidOutgoingError(f"{request.method} result: {exc}") from None
                return to_wire(moved.message)["result"]  # type: ignore[no-any-return]
        return wire_or_type_error(result, "result")

    def _read_result(
        self, request: RequestReceived, wire: dict[str, Any], version: str
    ) -> ResultResponse[Any]:
        value = {"jsonrpc": "2.0", "id": request.id, "result": wire}
        if version in STATELESS:
            value["result"] = completed(wire, request.method, version, self._hints, sent=False)
        message = self._checked_answer(value, request.method, version, model=True)
        assert message is not None
        return message

    # -- tasks ------------------------------------------------------------------------------

    def _set_aside(self, value: dict[str, Any], version: str) -> dict[str, Any]:
        # The extension ignores answers under keys a task does not ask, whatever
        # they hold; only the store knows which keys those are. So the answers
        # of a tasks/update that are no input response at all are set aside here,
        # the rest read as usual, and `TaskServer` refuses any set aside under a
        # key the task asks (-32602), ignoring the others.
        self._aside = {}
        params = value.get("params")
        responses = params.get("inputResponses") if isinstance(params, dict) else None
        if (
            not isinstance(params, dict)
            or not self._extensions
            or value.get("method") != "tasks/update"
            or type(responses) is not dict
            or not has_tasks(version)
        ):
            return value
        compiled = protocol(version)
        assert compiled is not None  # the version was read
        check = validator(Target(compiled.package, "InputResponse"))
        unread = {k: v for k, v in responses.items() if not check.is_valid(v)}
        if not unread:
            return value
        kept = {k: v for k, v in responses.items() if k not in unread}
        self._aside = unread
        return {**value, "params": {**params, "inputResponses": kept}}

    def unread_answers(self, request: RequestReceived) -> dict[str, Any]:
        """The answers of the ``tasks/update`` ``request`` that are no input
        response (as sent, by key), set aside when it was read; emptied by the call."""
        return self._unread.pop(id_key(request.id), {})

    def accepts_task(self, request: RequestReceived) -> bool:
        """Whether ``request`` may be answered with a task: the session has
        ``tasks``, the method is one the extension runs as a task, and the
        client declared the extension on this very request."""
        return (
            self.tasks is not None
            and request.method in TASK_SUPPORTED
            and has_tasks(request.version)
            and declares_tasks(request.context.client_capabilities)
        )

    def require_task(self, request: RequestReceived) -> bool:
        """For a call the server only runs as a task: whether it may
        (`accepts_task`); if not, ``request`` is answered with the
        extension's -32021 naming the capability it needs."""
        if self.accepts_task(request):
            return True
        self.fail(request, missing_tasks(request.method))
        return False

    def run_as_task(
        self,
        request: RequestReceived,
        work: Work,
        *,
        ttl_ms: int | Literal["default"] | None = "default",
        poll_interval_ms: int | None = None,
        status_message: str | None = None,
    ) -> TaskRecord:
        """Answer ``request`` with a task running ``work`` (an async function
        of a `mcp_schema.tasks.TaskContext` returning the call's result): the
        new task's record, not stored yet. The driver stores it, then sends
        the ``CreateTaskResult`` and starts ``work``
        (`mcp_schema.tasks.TaskServer.flush`). ``ttl_ms`` and
        ``poll_interval_ms`` default to the ``tasks`` rules'.

        `CapabilityError` unless `accepts_task` (check it first; a server
        that needs a task answers with `require_task`)."""
        if not callable(work):
            raise TypeError(f"work must be an async function, not {type(work).__name__}")
        if not self.accepts_task(request):
            raise CapabilityError(
                "this call cannot be answered with a task (no tasks rules, a method the "
                f"extension does not run as a task, or a client that did not declare "
                f"{TASKS_EXTENSION}): check session.accepts_task(request) first"
            )
        self._state.answerable(request)  # UnknownRequestError when it is not in flight
        assert self.tasks is not None  # accepts_task said so
        askable = [m for m in ASKED_CAPABILITY if request.can_ask(m)]
        record = self.tasks.new(
            request.method,
            request.version,
            self.principal or "",
            askable=askable,
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms,
            status_message=status_message,
        )
        self._pending_tasks.append(PendingTask(request, record, work))
        return record

    def pending_tasks(self) -> list[PendingTask]:
        """The tasks started since the last call, to store (the driver's);
        emptied by the call."""
        pending, self._pending_tasks = self._pending_tasks, []
        return pending

    # -- what the server sends ------------------------------------------------------------

    def ask(
        self,
        request: RequestReceived,
        asks: Mapping[str, BaseModel | Mapping[str, Any]],
        *,
        state: object = None,
    ) -> None:
        """Ask the client for input while serving ``request``: ``asks`` maps keys
        to input requests (``ElicitRequest``, ``CreateMessageRequest``,
        ``ListRootsRequest`` of any version, or ``{"method", "params"}``
        mappings). The answers come back as one `InputReceived`, keyed alike,
        carrying ``state``; answer its ``request`` then.

        Handshake era: server-to-client requests (``request`` stays in
        flight). Stateless era: ``request`` is answered with an input-required
        result, and the client's retry brings the answers.

        `CapabilityError` when the client did not declare what an ask needs
        (`RequestReceived.can_ask` tells beforehand); nothing is sent then.
        """
        if not self._state.answerable(request):
            return  # cancelled: nobody waits for the answer
        asked = questions(request, asks)
        version = request.version
        round_ = Round(request, asked, state)
        if version in STATELESS:
            token, frame = self._input_required(request, round_, asked)
            self._state.release(request)
            self._out.append(frame)
            self._state.rounds.keep(token, round_)
            return
        for method, params in asked.values():
            self._sendable(method, version, "request")
            self._checked({"jsonrpc": "2.0", "id": 0, "method": method, "params": params}, version)
        for name, (method, params) in asked.items():
            sent = self._send(method, params, answer_to(round_, name, self.handler_version))
            round_.outgoing.append(sent.id)
        self._state.asking[id_key(request.id)] = round_

    def _input_required(
        self,
        answering: RequestReceived,
        round_: Round,
        asked: Mapping[str, tuple[str, dict[str, Any]]],
    ) -> tuple[str, bytes]:
        """The input-required result answering ``answering`` with ``asked``, for
        ``round_``: the new ``requestState`` (the round store's) and the frame."""
        version = answering.version
        token = self._state.rounds.token(round_)
        wire = {k: {"method": m, "params": p} for k, (m, p) in asked.items()}
        try:
            result = input_required(version, wire, state=token)
        except ValueError as exc:
            raise InvalidOutgoingError(str(exc)) from None
        value = self._result_value(answering, to_wire(result), version, check=False)
        self._check_answer(value, answering.method, version)
        return token, encoded(value)

    def _ask_again(
        self, retry: RequestReceived, found: Round, token: str, answers: dict[str, McpModel]
    ) -> None:
        """A retry that left some questions unanswered is answered, as the
        specification asks, with a new input-required result asking them again;
        the round goes on with the answers given so far."""
        again = Round(found.request, found.questions, found.state)
        again.answers = {**found.answers, **answers}
        missing = {k: q for k, q in found.questions.items() if k not in again.answers}
        fresh, frame = self._input_required(retry, again, missing)
        self._state.rounds.close(token)
        self._state.rounds.keep(fresh, again)
        self._out.append(frame)

    def request(self, method: str, params: BaseModel | Mapping[str, Any] | None = None) -> int:
        """Send the client a request of its own (``ping``, ``roots/list``,
        ``sampling/createMessage``...; handshake era); its id. The answer is a
        `ResponseReceived`. `CapabilityError` when the client did not declare
        what it needs."""
        version = self._state.negotiated()
        capability = ASKED_CAPABILITY.get(method)
        if capability is not None and self._initialize is not None:
            declared = to_wire(self._initialize).get("params", {}).get("capabilities", {})
            if not isinstance(declared, dict) or declared.get(capability) is None:
                raise CapabilityError(f"the client did not declare {capability!r}")
        return self._send(method, params, _response_event, version).id

    def log(
        self,
        level: LoggingLevel,
        data: Any,
        *,
        logger: str | None = None,
        request: RequestReceived | None = None,
    ) -> bool:
        """Send a log message if the client asked for it: in the handshake era
        after ``logging/setLevel``, in the stateless era when ``request``
        carries a log level; at that level or above. Whether it was sent."""
        if level not in LOGGING_LEVELS:
            raise InvalidOutgoingError(f"not a logging level: {level!r}")
        if request is not None and not self._state.answerable(request):
            return False
        version = request.version if request is not None else self._state.negotiated()
        if version in STATELESS:
            threshold = None if request is None else request.context.log_level
        else:
            threshold = self._log_level
        if threshold is None or LOGGING_LEVELS.index(level) < LOGGING_LEVELS.index(threshold):
            return False
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notify("notifications/message", params)
        return True

    def progress(
        self,
        request: RequestReceived,
        done: float,
        *,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Report progress on ``request`` if it asked for it (a progress token);
        whether it was sent."""
        token = request.context.progress_token
        if token is None or not self._state.answerable(request):
            return False
        params: dict[str, Any] = {"progressToken": token, "progress": done}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.notify("notifications/progress", params)
        return True

    # -- bookkeeping -----------------------------------------------------------------------

    def _on_cancel(self, request: RequestReceived) -> bool:
        if self._listens is not None and self._listens.abandon(request):
            return False  # the session's own listen: the handler never saw it
        self._on_answered(request)
        return True

    def _on_answered(self, request: RequestReceived) -> None:
        self._unread.pop(id_key(request.id), None)
        round_ = self._state.asking.pop(id_key(request.id), None)
        if round_ is not None:
            for rid in round_.outgoing:
                self.cancel(rid, reason="the request it served is over")


def _response_event(
    sent: Outgoing, result: McpModel | None, error: McpError | None, events: list[Event]
) -> None:
    events.append(ResponseReceived(sent.id, sent.method, result, error))
