"""What both roles share: a frame read through the decode pipeline with what
the session knows, the two request tables (the peer's requests in flight,
ours awaiting answers), cancellation, and the queue of frames to send.

Every frame is read by `mcp_schema._codec.decoding.read_value`, fed a
`Known` built from the session's state: the negotiated version, fixed, so
the pipeline's resolver refuses a message naming another (-32022); for a
response, the method and version of the request it answers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any, Literal

from mcp_schema._args import check, strings
from mcp_schema._codec.catalog import SUPPORTED, catalog
from mcp_schema._codec.decoding import read_value
from mcp_schema._codec.encoding import encode
from mcp_schema._codec.messages import ErrorResponse, ResultResponse
from mcp_schema._codec.parse import as_bytes, parse
from mcp_schema._codec.route import (
    Known,
    Route,
    address,
    kind_of,
    named_version,
    own_answer_route,
    own_answer_target,
    request_id,
    route,
)
from mcp_schema._codec.views import MODELS
from mcp_schema.base import McpModel
from mcp_schema.errors import (
    InvalidRequestError,
    McpError,
    MethodNotFoundError,
    quote,
)
from mcp_schema.http_headers import Headers, received_headers
from mcp_schema.negotiation import read_version
from mcp_schema.session.events import (
    CancelRequested,
    Event,
    InvalidOutgoingError,
    ProtocolError,
    RequestReceived,
)
from mcp_schema.session.frames import Frame
from mcp_schema.session.observed import Observed
from mcp_schema.session.sending import Sending
from mcp_schema.session.state import Connection
from mcp_schema.session.tools import Tool, called_tool, checked_tools
from mcp_schema.session.wire import encoded_answer, schema_accepts
from mcp_schema.telemetry import telemetry_for
from mcp_schema.versions import SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

Role = Literal["client", "server"]
_new = tuple.__new__
_PEER: dict[str, str] = {"client": "server", "server": "client"}


class Peer(Sending):
    """The common machinery of `ServerSession` and `ClientSession`."""

    role: Role

    def __init__(
        self,
        *,
        versions: Collection[str] | None,
        max_pending: int,
        telemetry: Telemetry | bool | None = None,
    ) -> None:
        named = strings(versions, "versions", none=True)
        chosen = SUPPORTED_VERSIONS if named is None else named
        if not chosen:
            raise ValueError("versions must name at least one protocol version")
        unknown = [v for v in chosen if v not in SUPPORTED]
        if unknown:
            raise ValueError(f"no models for protocol version(s) {', '.join(map(repr, unknown))}")
        check(max_pending, int, "max_pending")
        if max_pending < 1:
            raise ValueError(f"max_pending must be positive, not {max_pending}")
        self.versions: tuple[str, ...] = tuple(sorted(set(chosen)))
        """The versions this side speaks, oldest first."""
        self.max_pending = max_pending
        self.telemetry = telemetry_for(telemetry)
        """Where spans and metrics go (`mcp_schema.telemetry`), None for nowhere."""
        self._extensions: frozenset[str] = frozenset()
        """The extensions whose methods and results this side reads and sends."""
        self._knowns: dict[tuple[str, str | None], Known] = {}
        """What `_known` told the pipeline, by version and method: what the
        arguments determine (a session built `ServerSession._like` this one shares it)."""
        self._new_connection()

    def _new_connection(self) -> None:
        """The state a connection starts with, each part a new object (what
        `ServerSession._like` builds again for a session of its own)."""
        self._state = Connection(self.max_pending)
        self._out: list[Frame] = []
        self.on_ready: Callable[[], None] | None = None
        """Called (with no argument) after each frame is queued: what lets a
        transport take frames the author queued outside its own calls (an
        answer given later, from a callback or a task)."""
        self._next_id = 1
        self._listed: dict[Any, Tool] = {}
        """The tools this side last answered ``tools/list`` with, by name."""
        # Observed only where something records (an SDK behind the API, or
        # providers given): a connection opened before that records nothing.
        telemetry = self.telemetry
        self._observed = Observed(telemetry) if telemetry is not None and telemetry.active else None

    # -- what the author reads ---------------------------------------------------------

    @property
    def version(self) -> str | None:
        """The negotiated version; None before negotiation. Once set it never changes."""
        return self._state.version

    def data_to_send(self) -> list[bytes]:
        """The frames queued since the last call, in order, each one JSON-RPC
        message (no newline: framing is the transport's). Emptied by the call."""
        return [frame.data for frame in self.frames_to_send()]

    def frames_to_send(self) -> list[Frame]:
        """`data_to_send`, each frame with its envelope (`Frame`: its id,
        method, the request it belongs to...). Emptied by the call; the two
        take from the same queue."""
        out, self._out = self._out, []
        return out

    def _put(self, frame: Frame) -> None:
        self._out.append(frame)
        if self.on_ready is not None:
            self.on_ready()

    @property
    def in_flight(self) -> int:
        """The peer's requests not answered yet."""
        return len(self._state.theirs)

    @property
    def awaiting(self) -> int:
        """This side's requests the peer has not answered yet."""
        return len(self._state.mine)

    def cancelled(self, request: RequestReceived) -> bool:
        """Whether the peer cancelled ``request`` (its answer will be dropped)."""
        return self._state.cancelled(request)

    def request_span(self, request: RequestReceived) -> Any:
        """The server span of ``request`` while it is not answered yet (an
        OpenTelemetry ``Span``: what a task's work links to), else None
        (answered, or nothing is recorded)."""
        return None if self._observed is None else self._observed.span_of(request.id)

    def _known(self, version: str, method: str | None = None) -> Known:
        """What the pipeline is told about a message in ``version``: a request
        or notification, or (``method``) an answer to a request of ``method``,
        a method of the catalog (the session routed or sent that request)."""
        known = self._knowns.get((version, method))
        if known is None:
            known = Known(version=version, method=method, extensions=self._extensions)
            self._knowns[version, method] = known
        return known

    # -- reading -----------------------------------------------------------------------

    def receive(
        self,
        frame: bytes | bytearray | memoryview | str,
        *,
        headers: Headers | None = None,
        tools: Iterable[Tool] | None = None,
        answering: str | int | None = None,
    ) -> list[Event]:
        """Read one frame from the peer: the events it makes, in order.

        ``headers``: the Streamable HTTP request headers the frame came with,
        checked in the same pass (-32020 when they disagree with the body,
        answered with the request's id); the ``MCP-Protocol-Version`` header
        names the version of a message whose body names none. A
        ``tools/call``'s ``Mcp-Param-*`` headers are checked against the
        ``inputSchema`` of the tool it calls, among ``tools`` (definitions or
        `ToolHeaders`, which are read once) or else the tools the session last
        answered ``tools/list`` with.

        ``answering``: the id of this side's request whose answer the frame
        came with (on Streamable HTTP, the POST of that request); a response
        to any other request is then refused, and the request it names is
        still awaited.

        Never raises for what the peer sent: a frame refused becomes a
        `ProtocolError` event, with its error frame queued when JSON-RPC
        answers it. A ``frame`` (or ``headers``) of another type is a ``TypeError``.
        """
        if not isinstance(frame, (bytes, bytearray, memoryview, str)):
            raise TypeError(f"a frame is bytes or str, not {type(frame).__name__}")
        check(answering, (str, int), "answering", none=True)
        received = None if headers is None else received_headers(headers)
        if tools is not None:
            tools = checked_tools(tools)
        try:
            data = frame if type(frame) is bytes else as_bytes(frame)  # a str may not encode
            value = parse(data)
        except McpError as err:
            events: list[Event] = []
            self._refuse(err, events)
            return events
        return self._receive_parsed(value, len(data), received, tools, answering)

    def _receive_parsed(
        self,
        value: dict[str, Any],
        size: int,
        received: dict[str, str] | None,
        tools: Iterable[Tool] | None = None,
        answering: str | int | None = None,
    ) -> list[Event]:
        """`receive` of a frame of ``size`` bytes parsed already, by the one
        strict parse (``received``: its headers as `received_headers` gives them)."""
        events: list[Event] = []
        try:
            kind = kind_of(value)
            if kind == "result" or kind == "error":
                self._response(value, size, events, answering)
            else:
                self._incoming(value, size, events, received, tools)
        except McpError as err:
            address(err, value)
            self._refuse(err, events, value.get("method"))
        return events

    def _refuse(self, err: McpError, events: list[Event], method: object = None) -> None:
        err.__traceback__ = err.__context__ = err.__cause__ = None
        if self._observed is not None:
            self._observed.refused(err.code, method, err.data)
        if err.answerable:
            rid = err.request_id
            self._put(Frame(encode(err.to_response()), None, rid, rid, None, err.code))
        events.append(ProtocolError(err, err.answerable))

    def _incoming(
        self,
        value: dict[str, Any],
        size: int,
        events: list[Event],
        headers: dict[str, str] | None = None,
        tools: Iterable[Tool] | None = None,
    ) -> None:
        method = value.get("method")
        header = None if headers is None else headers.get("mcp-protocol-version")
        version = read_version(
            named_version(value), method, self._state.version, self.versions, header
        )
        tool = None
        if headers is not None and method == "tools/call":
            tool = called_tool(self._listed, value.get("params"), tools)
        # What _known told before, looked up in place: every frame asks.
        known = self._knowns.get((version, None)) or self._known(version)
        value = self._set_aside(value, version)
        route, message = read_value(value, size, known, headers, MODELS, False, tool)
        if route.kind == "notification":
            assert route.method is not None
            if route.method == "notifications/cancelled":
                self._peer_cancelled(value, events)
            else:
                self._on_notification(route, message, events)
            return
        assert route.id is not None and route.method is not None
        entry = catalog(route.version, self._extensions).requests.get(route.method)
        if entry is not None and entry.sender not in (_PEER[self.role], "both"):
            raise MethodNotFoundError(
                f"Method not found: a {_PEER[self.role]} does not send {route.method}",
                {"method": route.method},
            )
        self._state.admissible(route.id)
        if self._observed is not None:
            self._observed.began(route, value, headers)
        self._on_request(route, message, events)

    def _peer_cancelled(self, value: dict[str, Any], events: list[Event]) -> None:
        params = value.get("params")
        rid = request_id(params.get("requestId")) if type(params) is dict else None
        request = None if rid is None else self._state.cancel(rid)
        if request is None:
            return  # unknown, answered already, or cancelled twice: nothing to do
        reason = params.get("reason") if type(params) is dict else None
        if self._on_cancel(request):
            events.append(CancelRequested(request, reason if isinstance(reason, str) else None))

    def cancel_received(
        self,
        request: RequestReceived,
        reason: str | None = None,
        *,
        answer: McpError | None = None,
    ) -> list[Event]:
        """The transport ends the peer's ``request`` (its stream was lost, a
        bound on its answer passed): as if the peer had cancelled it, the
        session drops its answer from now on and tells the author (the
        events: a `CancelRequested` carrying ``reason``). With ``answer``,
        the peer is answered that error all the same. Nothing when
        ``request`` is not in flight (answered, cancelled already)."""
        if not isinstance(request, RequestReceived):
            raise TypeError(f"expected a RequestReceived event, not {type(request).__name__}")
        check(reason, str, "reason", none=True)
        check(answer, McpError, "answer", none=True)
        if self._state.theirs.get(request.id) is not request:
            return []
        frame = None if answer is None else encode(answer.to_response(request.id))
        self._state.cancel(request.id)
        events: list[Event] = []
        if self._on_cancel(request):
            events.append(CancelRequested(request, reason))
        if frame is not None:
            assert answer is not None
            self._put(_answer_frame(frame, request.id, answer))
        if self._observed is not None:
            self._observed.answered(request.id, answer)
        return events

    def _response(
        self, value: dict[str, Any], size: int, events: list[Event], answering: object = None
    ) -> None:
        rid = request_id(value.get("id"))
        if answering is not None and rid != answering:
            what = "null" if rid is None else quote(rid)
            raise InvalidRequestError(
                f"Invalid Request: a response to id {what} where the answer to "
                f"{quote(answering)} was due"
            )
        pending = None if rid is None else self._state.answered(rid)
        if pending is None:
            what = "null" if rid is None else quote(rid)
            raise InvalidRequestError(
                f"Invalid Request: a response to id {what}, which this session is not awaiting"
            )
        known = self._known(pending.version, pending.method)
        try:
            _, message = read_value(value, size, known, None, MODELS)
        except McpError as err:
            # An answer the session cannot read still answers: the waiting side hears the error.
            if self._observed is not None:
                self._observed.response(pending.id, err)
            pending.on_answer(pending, None, err, events)
            raise
        if self._observed is not None:
            self._observed.response(pending.id, message)
        if isinstance(message, ErrorResponse):
            pending.on_answer(pending, None, message.exception(), events)
        else:
            assert isinstance(message, ResultResponse)
            pending.on_answer(pending, message.result, None, events)

    # -- hooks of the roles -------------------------------------------------------------

    def _on_request(self, route: Route, message: McpModel, events: list[Event]) -> None:
        raise NotImplementedError

    def _on_notification(self, route: Route, message: McpModel, events: list[Event]) -> None:
        raise NotImplementedError

    def _on_cancel(self, request: RequestReceived) -> bool:
        """The peer cancelled ``request``: whether the author hears of it (`CancelRequested`)."""
        return True

    def _set_aside(self, value: dict[str, Any], version: str) -> dict[str, Any]:
        """``value`` as it is read: a role may set aside what it judges
        later, with what only it knows (see `ServerSession`)."""
        return value

    # -- answering the peer -------------------------------------------------------------

    def _check_answer(self, value: dict[str, Any], method: str, version: str) -> McpModel:
        """A response this side sends, read by the pipeline as the peer will
        read it: its result model, or `InvalidOutgoingError`."""
        message = self._checked_answer(value, method, version, model=True)
        assert message is not None
        return message.result  # type: ignore[no-any-return]

    def _checked_answer(
        self,
        value: dict[str, Any],
        method: str,
        version: str,
        *,
        model: bool = False,
        own: bool = False,
    ) -> ResultResponse[Any] | None:
        """`_check_answer` that builds no model unless asked (then the whole
        response's): an answer the JSON Schema accepts is valid (the
        definition both views check, at a fraction of pydantic's cost);
        anything else, models inside a mapping included, is read by the model
        view, which accepts it or says why not."""
        try:
            known = self._knowns.get((version, method)) or self._known(version, method)
            if own and version in SUPPORTED:  # the envelope is this side's, its id one it read
                result = value["result"]
                if not model and schema_accepts(own_answer_target(known, result), result):
                    return None  # the route is built only for the model view below
                found = own_answer_route(known, value["id"], result)
            else:
                found = route(value, known, None)
                if not model and schema_accepts(found.target, value["result"]):
                    return None
            message = MODELS.message(found, value, 0)
        except McpError as err:
            raise InvalidOutgoingError(
                f"not a valid {method} result of {version}: {err.message}"
            ) from None
        assert isinstance(message, ResultResponse) and isinstance(message.result, McpModel)
        return message

    def _queue(self, value: dict[str, Any]) -> None:
        """Queue ``value``, a response with a result that the session gives itself."""
        rid = value["id"]
        self._put(Frame(encoded_answer(value), None, rid, rid))
        if self._observed is not None:
            self._observed.answered(rid)

    def fail(self, request: RequestReceived, error: McpError) -> None:
        """Answer ``request`` with an error (dropped if the peer cancelled it)."""
        if not isinstance(error, McpError):
            raise TypeError(f"error must be an McpError, not {type(error).__name__}")
        if self._state.answerable(request):
            self._answer(request, encode(error.to_response(request.id)), error)

    def _answer(
        self,
        request: RequestReceived,
        frame: bytes,
        error: McpError | None = None,
        tool: bool = False,
    ) -> None:
        """``request`` (in flight) is answered with ``frame``, already encoded
        (``error``: the error it carries; ``tool``: a result with ``isError``):
        nothing before this may leave the session changed."""
        self._state.release(request)
        self._on_answered(request)
        self._put(_answer_frame(frame, request.id, error))
        if self._observed is not None:
            self._observed.answered(request.id, error, tool)

    def _on_answered(self, request: RequestReceived) -> None:
        """``request`` was answered (or will never be)."""


def _answer_frame(frame: bytes, rid: str | int, error: McpError | None) -> Frame:
    """The frame answering the peer's request ``rid``: ``frame``, carrying ``error``."""
    if error is None:  # every answer: built as the tuple it is (Frame's own __new__ is a call)
        return _new(Frame, (frame, None, rid, rid, None, None, None, None))
    return Frame(frame, None, rid, rid, None, error.code, None, error.http_status)
