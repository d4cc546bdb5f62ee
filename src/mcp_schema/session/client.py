"""`ClientSession`: the client's side of one connection, both eras."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from mcp_schema._args import check
from mcp_schema._codec.catalog import STATELESS
from mcp_schema._codec.decoding import read_value
from mcp_schema._codec.route import Known, Route
from mcp_schema._codec.views import MODELS
from mcp_schema._codec.wire import to_wire
from mcp_schema.base import McpModel
from mcp_schema.capabilities import ASKED_CAPABILITY, CAPABILITIES_KEY
from mcp_schema.context import (
    INFO_KEY,
    LOG_LEVEL_KEY,
    LOGGING_LEVELS,
    LoggingLevel,
    RequestContext,
    retry_with_input,
)
from mcp_schema.errors import InvalidRequestError, McpError, MethodNotFoundError
from mcp_schema.negotiation import (
    SERVER_INFO_KEY,
    accepted_version,
    discovered_version,
    offered_version,
)
from mcp_schema.session.events import (
    Event,
    InputRequested,
    InvalidOutgoingError,
    Negotiated,
    NotificationReceived,
    ProtocolError,
    RequestReceived,
    ResponseReceived,
    SessionStateError,
    TaskChanged,
)
from mcp_schema.session.extensions import declares_extension
from mcp_schema.session.peer import Peer, Role
from mcp_schema.session.state import MAX_PENDING, Outgoing
from mcp_schema.session.wire import encoded, wire_or_type_error
from mcp_schema.versions import HANDSHAKE_VERSIONS, PROTOCOL_VERSION_KEY, TASKS_EXTENSION, protocol

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry


@dataclass
class _Followed:
    """A task answering the call ``call`` (of ``method``, in ``version``) that
    the client follows: its id, the interval the server suggests, and the
    input keys already surfaced (each once)."""

    call: str | int
    method: str
    version: str
    task_id: str
    interval_ms: int | None
    seen: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _TaskInput:
    """What an `InputRequested` of a task answers: ``tasks/update`` of it."""

    followed: _Followed


__all__ = ["ClientSession"]


class ClientSession(Peer):
    """The client side of one MCP connection, for both eras; sans-IO like
    `ServerSession` (`receive`, events, `data_to_send`).

    Negotiate first: `initialize` (handshake era: offers a version and checks
    the answer, then sends ``notifications/initialized``) or `discover`
    (stateless era: picks the newest version both sides speak); either ends
    in a `Negotiated` event, or a `ResponseReceived` carrying the server's
    error (try the other). Then `request` sends calls (in the stateless era
    with the ``_meta`` every request carries); answers come as
    `ResponseReceived`, and a server asking for input, in either era, as
    `InputRequested`, answered with `provide_input`.

    Tasks (a client whose ``capabilities`` declare the Tasks extension): a
    call answered with a task is followed: a `TaskChanged` event, then `poll`
    (at `poll_interval`) sends ``tasks/get``; the task's input requests come
    as `InputRequested` (each key once), answered with `provide_input`
    (``tasks/update``); its end is the call's `ResponseReceived`, with the
    result or error the task carries; `cancel_task` sends ``tasks/cancel``
    and stops following it.

    Not thread-safe: one thread at a time; nothing in it blocks.
    """

    role: Role = "client"

    def __init__(
        self,
        *,
        info: BaseModel | Mapping[str, Any],
        capabilities: BaseModel | Mapping[str, Any] | None = None,
        versions: Collection[str] | None = None,
        log_level: LoggingLevel | None = None,
        max_pending: int = MAX_PENDING,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        super().__init__(versions=versions, max_pending=max_pending, telemetry=telemetry)
        check(info, (BaseModel, Mapping), "info")
        check(capabilities, (BaseModel, Mapping), "capabilities", none=True)
        check(log_level, str, "log_level", none=True)
        self.info = wire_or_type_error(info, "info")
        self.capabilities = wire_or_type_error(capabilities or {}, "capabilities")
        if log_level is not None and log_level not in LOGGING_LEVELS:
            raise ValueError(f"not a logging level: {log_level!r}")
        self.log_level = log_level
        """Stateless era: the level every request asks log messages at (None: none)."""
        self.server_info: dict[str, Any] | None = None
        self.server_capabilities: dict[str, Any] | None = None
        self.server_instructions: str | None = None
        """The ``instructions`` the server's ``initialize`` or ``server/discover`` answer gave."""
        self.server_versions: tuple[str, ...] | None = None
        """The ``supportedVersions`` of the server's ``server/discover`` answer."""
        if declares_extension(self.capabilities, TASKS_EXTENSION):
            self._extensions = frozenset({TASKS_EXTENSION})
        self._followed: dict[str | int, _Followed] = {}

    # -- negotiation ----------------------------------------------------------------------

    def initialize(self, version: str | None = None) -> int:
        """Offer ``version`` (default: the newest handshake-era one this client
        speaks) in ``initialize``; its id."""
        check(version, str, "version", none=True)
        offer = version or offered_version(self.versions)
        if offer not in HANDSHAKE_VERSIONS or offer not in self.versions:
            raise ValueError(f"{offer!r} is not a handshake-era version this client speaks")
        self._unnegotiated()
        params = {
            "protocolVersion": offer,
            "capabilities": self.capabilities,
            "clientInfo": self.info,
        }
        return self._send("initialize", params, self._initialized, offer).id

    def discover(self, version: str | None = None) -> int:
        """Ask ``server/discover`` in ``version`` (default: the newest
        stateless-era one this client speaks); its id."""
        check(version, str, "version", none=True)
        stateless = [v for v in self.versions if v in STATELESS]
        probe = version or (stateless[-1] if stateless else None)
        if probe is None or probe not in stateless:
            raise ValueError(f"{probe!r} is not a stateless-era version this client speaks")
        self._unnegotiated()
        return self._send("server/discover", None, self._discovered, probe).id

    def _unnegotiated(self) -> None:
        if self._state.version is not None:
            raise SessionStateError(f"the session speaks {self._state.version} already")

    def _settled(self, events: list[Event]) -> bool:
        """Whether the version is fixed already (both negotiations were sent):
        a later answer changes nothing, and is a `ProtocolError`."""
        if self._state.version is None:
            return False
        refusal = InvalidRequestError(
            f"Invalid Request: the session speaks {self._state.version} already"
        )
        events.append(ProtocolError(refusal, False))
        return True

    def _initialized(
        self, sent: Outgoing, result: McpModel | None, error: McpError | None, events: list[Event]
    ) -> None:
        if result is None:
            events.append(ResponseReceived(sent.id, sent.method, None, error))
            return
        if self._settled(events):
            return
        wire = to_wire(result)
        try:
            answered = accepted_version(wire.get("protocolVersion"), self.versions)
        except McpError as refusal:
            events.append(ProtocolError(refusal, False))  # the connection cannot go on
            return
        self._state.open(answered)
        self.server_info, self.server_capabilities = (
            wire.get("serverInfo"),
            wire.get("capabilities"),
        )
        self.server_instructions = _text(wire.get("instructions"))
        self.notify("notifications/initialized")
        events.append(
            Negotiated(answered, _member(result, "server_info"), _member(result, "capabilities"))
        )

    def _discovered(
        self, sent: Outgoing, result: McpModel | None, error: McpError | None, events: list[Event]
    ) -> None:
        if result is None:
            events.append(ResponseReceived(sent.id, sent.method, None, error))
            return
        if self._settled(events):
            return
        wire = to_wire(result)
        try:
            chosen = discovered_version(wire.get("supportedVersions"), self.versions)
        except McpError as refusal:
            events.append(ProtocolError(refusal, False))  # as after initialize
            return
        self._state.open(chosen)
        meta = wire.get("_meta")
        self.server_info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
        self.server_capabilities = wire.get("capabilities")
        self.server_instructions = _text(wire.get("instructions"))
        listed = wire.get("supportedVersions")  # a list: discovered_version read it
        self.server_versions = tuple(v for v in listed or () if isinstance(v, str))
        info = getattr(getattr(result, "meta", None), "server_info", None)
        events.append(Negotiated(chosen, info, _member(result, "capabilities")))

    # -- calls ----------------------------------------------------------------------------

    def _stamped(self, value: dict[str, Any], version: str) -> dict[str, Any]:
        if version not in STATELESS:
            return value
        params = dict(value.get("params") or {})
        meta = dict(params.get("_meta") or {})
        meta.setdefault(PROTOCOL_VERSION_KEY, version)
        meta.setdefault(CAPABILITIES_KEY, self.capabilities)
        meta.setdefault(INFO_KEY, self.info)
        if self.log_level is not None:
            meta.setdefault(LOG_LEVEL_KEY, self.log_level)
        params["_meta"] = meta
        return {**value, "params": params}

    def request(self, method: str, params: BaseModel | Mapping[str, Any] | None = None) -> int:
        """Send a request in the negotiated version; its id. The answer is a
        `ResponseReceived` with this id (after any `InputRequested` rounds)."""
        sent = self._send(method, params, _answering(self, None))
        return sent.id

    def _request_checked(self, method: str, params: dict[str, Any], checked: McpModel) -> int:
        """`request`, whose model of the negotiated version the caller built by
        its own validation (``checked``: the era bridge's projection, ``params``
        its wire form): not validated a second time."""
        return self._send(method, params, _answering(self, None), checked=checked).id

    def provide_input(
        self, event: InputRequested, responses: Mapping[str, BaseModel | Mapping[str, Any]]
    ) -> None:
        """Answer what the server asked, keyed as ``event.requests``.

        Stateless era: the call is retried with the answers (the final answer
        still arrives as a `ResponseReceived` with the call's first id).
        Handshake era: the server's request is answered.
        """
        if not isinstance(event, InputRequested):
            raise TypeError(f"expected an InputRequested event, not {type(event).__name__}")
        token = self._state.answering(event)
        if isinstance(token, _TaskInput):
            answers = {k: wire_or_type_error(v, f"responses[{k!r}]") for k, v in responses.items()}
            params = {"taskId": token.followed.task_id, "inputResponses": answers}
            self._send("tasks/update", params, _acknowledged, token.followed.version)
            self._state.provided(event)
            return
        if isinstance(token, RequestReceived):
            (answer,) = (responses.get(k) for k in event.requests)
            if answer is None:
                raise InvalidOutgoingError(f"no answer to {', '.join(event.requests)}")
            self.respond(token, answer)
            self._state.provided(event)
            return
        if token is None:
            raise InvalidOutgoingError("this input was provided already")
        sent, asked, origin = token
        try:
            retry = retry_with_input(sent.message, asked, responses)
        except ValueError as exc:
            raise InvalidOutgoingError(str(exc)) from None
        self._send(sent.method, to_wire(retry).get("params"), _answering(self, origin))
        self._state.provided(event)

    def transport_failed(self, request_id: int, error: McpError) -> list[Event]:
        """The transport cannot bring the answer to this client's request
        ``request_id`` (on HTTP: an error status with no JSON-RPC answer, a
        stream that ended first): stop waiting for it. The events: its
        `ResponseReceived` carrying ``error`` (the call's first id, after
        input rounds), or none when it was answered already."""
        check(error, McpError, "error")
        pending = self._state.answered(request_id)
        events: list[Event] = []
        if pending is not None:
            pending.on_answer(pending, None, error, events)
        return events

    # -- tasks ------------------------------------------------------------------------------

    def _follow(self, sent: Outgoing, call: str | int, task: McpModel, events: list[Event]) -> None:
        if len(self._followed) >= self.max_pending:
            refusal = InvalidRequestError("Invalid Request: too many tasks followed at once")
            events.append(ResponseReceived(call, sent.method, None, refusal))
            return
        task_id = getattr(task, "task_id", "")
        interval = getattr(task, "poll_interval_ms", None)
        self._followed[call] = _Followed(call, sent.method, sent.version, task_id, interval)
        events.append(TaskChanged(call, task))

    def _following(self, call: str | int) -> _Followed:
        followed = self._followed.get(call)
        if followed is None:
            raise SessionStateError(f"no task answers the call {call!r} (or it ended)")
        return followed

    def poll_interval(self, call: str | int) -> float:
        """Seconds to wait before polling the task of ``call`` (the server's suggestion, else 1)."""
        interval = self._following(call).interval_ms
        return 1.0 if interval is None else interval / 1000

    def poll(self, call: str | int) -> int:
        """Send ``tasks/get`` for the task of ``call``; its id."""
        followed = self._following(call)
        params = {"taskId": followed.task_id}
        return self._send("tasks/get", params, _polled(self, followed), followed.version).id

    def cancel_task(self, call: str | int) -> int:
        """Send ``tasks/cancel`` for the task of ``call`` and stop following it; its id."""
        followed = self._following(call)
        sent = self._send(
            "tasks/cancel", {"taskId": followed.task_id}, _acknowledged, followed.version
        )
        del self._followed[call]
        return sent.id

    def _polled(self, followed: _Followed, task: McpModel, events: list[Event]) -> None:
        if self._followed.get(followed.call) is not followed:
            return  # cancelled meanwhile
        interval = getattr(task, "poll_interval_ms", None)
        followed.interval_ms = interval if isinstance(interval, int) else followed.interval_ms
        events.append(TaskChanged(followed.call, task))
        status = getattr(task, "status", None)
        if status == "input_required":
            asked = dict(getattr(task, "input_requests", None) or {})
            fresh = {k: v for k, v in asked.items() if k not in followed.seen}
            if fresh:
                followed.seen.update(fresh)
                asking = InputRequested(fresh, followed.call)
                self._state.requested(asking, _TaskInput(followed))
                events.append(asking)
            return
        if status not in ("completed", "failed", "cancelled"):
            return
        del self._followed[followed.call]
        if status == "completed":
            value = {"jsonrpc": "2.0", "id": 0, "result": getattr(task, "result", {})}
            try:
                known = Known(version=followed.version, method=followed.method)
                _, message = read_value(value, 0, known, None, MODELS)
            except McpError as err:
                events.append(ResponseReceived(followed.call, followed.method, None, err))
                return
            result = getattr(message, "result", None)
            events.append(ResponseReceived(followed.call, followed.method, result, None))
        elif status == "failed":
            error = to_wire(getattr(task, "error", None) or {"code": -32603, "message": "failed"})
            failure = McpError.from_error_object(error)
            events.append(ResponseReceived(followed.call, followed.method, None, failure))

    # -- the server's requests (handshake era) --------------------------------------------

    def _on_request(self, route: Route, message: McpModel, events: list[Event]) -> None:
        method, version = route.method, route.version
        assert method is not None and route.id is not None
        if method == "ping":
            self._queue({"jsonrpc": "2.0", "id": route.id, "result": {}})
            return
        capability = ASKED_CAPABILITY.get(method)
        if capability is not None and self.capabilities.get(capability) is None:
            raise MethodNotFoundError(
                f"Method not found: {method} (this client does not declare {capability})",
                {"method": method},
            )
        tables = protocol(version)
        assert tables is not None
        declared = tables.load().client_capabilities
        assert declared is not None
        meta = getattr(getattr(message, "params", None), "meta", None)
        context = RequestContext(
            method=method,
            request_id=route.id,
            protocol_version=version,
            client_capabilities=declared.model_validate(self.capabilities),
            client_info=None,
            log_level=None,
            progress_token=getattr(meta, "progress_token", None),
        )
        event = RequestReceived(route.id, method, message, context, version)
        self._state.accept(event)
        if capability is not None:
            asking = InputRequested({method: message}, None)
            self._state.requested(asking, event)
            events.append(asking)
        else:
            events.append(event)

    def _on_notification(self, route: Route, message: McpModel, events: list[Event]) -> None:
        assert route.method is not None
        events.append(NotificationReceived(route.method, message, route.version))

    def respond(self, request: RequestReceived, result: BaseModel | Mapping[str, Any]) -> None:
        """Answer the server's ``request`` with ``result`` (a model or a wire mapping)."""
        if not self._state.answerable(request):
            return
        value = {"jsonrpc": "2.0", "id": request.id, "result": wire_or_type_error(result, "result")}
        self._checked_answer(value, request.method, request.version, own=True)
        self._answer(request, encoded(value))


def _answering(session: ClientSession, origin: int | None) -> Any:
    def answered(
        sent: Outgoing, result: McpModel | None, error: McpError | None, events: list[Event]
    ) -> None:
        first = sent.id if origin is None else origin
        if result is not None and getattr(result, "result_type", None) == "task":
            session._follow(sent, first, result, events)
            return
        asks = getattr(result, "input_requests", None)
        if result is not None and getattr(result, "result_type", None) == "input_required":
            asking = InputRequested(dict(asks or {}), first)
            session._state.requested(asking, (sent, result, first))
            events.append(asking)
            return
        events.append(ResponseReceived(first, sent.method, result, error))

    return answered


def _polled(session: ClientSession, followed: _Followed) -> Any:
    def answered(
        sent: Outgoing, result: McpModel | None, error: McpError | None, events: list[Event]
    ) -> None:
        if result is not None:
            session._polled(followed, result, events)
        elif session._followed.pop(followed.call, None) is not None:  # unknown or expired
            events.append(ResponseReceived(followed.call, followed.method, None, error))

    return answered


def _acknowledged(
    sent: Outgoing, result: McpModel | None, error: McpError | None, events: list[Event]
) -> None:
    events.append(ResponseReceived(sent.id, sent.method, result, error))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _member(model: McpModel, name: str) -> McpModel | None:
    found = getattr(model, name, None)
    return found if isinstance(found, McpModel) else None
