"""What a `ServerSession` sends: answers (`respond`, the results of each
era), input rounds (`ask`), its own requests, log messages and progress, each
queued with its envelope (`mcp_schema.session.frames.Frame`). A part of
`ServerSession`, which reads (`mcp_schema.session.server`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from mcp_schema._codec.catalog import STATELESS
from mcp_schema._codec.messages import ResultResponse
from mcp_schema._codec.route import Route, id_key
from mcp_schema._codec.wire import to_wire
from mcp_schema.base import McpModel
from mcp_schema.capabilities import ASKED_CAPABILITY
from mcp_schema.context import LOGGING_LEVELS, LoggingLevel
from mcp_schema.errors import McpError
from mcp_schema.projection import ProjectionError, project
from mcp_schema.rounds import input_required
from mcp_schema.session.events import (
    CapabilityError,
    Event,
    InvalidOutgoingError,
    RequestReceived,
    ResponseReceived,
)
from mcp_schema.session.frames import Frame
from mcp_schema.session.input import answer_to, questions
from mcp_schema.session.listens import Listens
from mcp_schema.session.peer import Peer
from mcp_schema.session.results import completed, protocol_of
from mcp_schema.session.state import Outgoing, Round
from mcp_schema.session.wire import encoded, encoded_answer, wire_or_type_error

__all__ = ["ServerAnswers"]


class ServerAnswers(Peer):
    """The sending half of `ServerSession` (see the module)."""

    info: dict[str, Any]
    cache_scope: Literal["private", "public"]
    ttl_ms: int
    handler_version: str | None
    _initialize: McpModel | None
    _log_level: LoggingLevel | None
    _listens: Listens | None

    # -- answering ------------------------------------------------------------------------

    def frames_to_send(self) -> list[Frame]:
        """The frames queued since the last call, in order, with their
        envelopes (each listen's frames after the others, and its changes
        coalesced since the last call: `mcp_schema.subscriptions`); emptied
        by the call (`data_to_send` takes the same frames as bytes)."""
        if self._listens:
            frames, ended = self._listens.take()
            self._out += frames
            for request in ended:  # its last frame answered it
                self._state.release(request)
        # Peer's queue, taken here: the transport asks after every frame it reads.
        out, self._out = self._out, []
        return out

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
        wire, projected = self._result_wire(request, result)
        # A result the session projected is valid by its projection (the model
        # of the version answered, built by its validation): not checked twice.
        value = self._result_value(request, wire, request.version, check=not projected)
        self._answer(request, encoded_answer(value), tool=wire.get("isError") is True)
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
            wire = completed(wire, request.method, version, self)
        value = {"jsonrpc": "2.0", "id": request.id, "result": wire}
        if check:
            self._checked_answer(value, request.method, version, own=True)
        return value

    def _result_wire(
        self, request: RequestReceived, result: BaseModel | Mapping[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        """``result``'s wire form in the version answered, and whether the
        session projected it there (then its projection validated it)."""
        target = request.version
        handler = self.handler_version
        if type(result) is dict and (handler is None or handler == target):
            # A wire mapping of the version answered: to_wire's copy, which
            # `completed` makes anyway in the stateless era (not made twice).
            return (result if target in STATELESS else dict(result)), False
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
                return to_wire(moved.message)["result"], True
        return wire_or_type_error(result, "result"), False

    def _read_result(
        self, request: RequestReceived, wire: dict[str, Any], version: str
    ) -> ResultResponse[Any]:
        value = {"jsonrpc": "2.0", "id": request.id, "result": wire}
        if version in STATELESS:
            value["result"] = completed(wire, request.method, version, self, sent=False)
        message = self._checked_answer(value, request.method, version, model=True)
        assert message is not None
        return message

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
            self._put(Frame(frame, None, request.id, request.id))
            if self._observed is not None:
                self._observed.answered(request.id)
            self._state.rounds.keep(token, round_)
            return
        for method, params in asked.values():
            self._sendable(method, version, "request")
            self._checked({"jsonrpc": "2.0", "id": 0, "method": method, "params": params}, version)
        for name, (method, params) in asked.items():
            answer = answer_to(round_, name, self.handler_version)
            sent = self._send(method, params, answer, related=request.id)
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
        self._put(Frame(frame, None, retry.id, retry.id))
        if self._observed is not None:
            self._observed.answered(retry.id)

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
        self._notify("notifications/message", params, None if request is None else request.id)
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
        self._notify("notifications/progress", params, request.id)
        return True


def _response_event(
    sent: Outgoing, result: McpModel | None, error: McpError | None, events: list[Event]
) -> None:
    events.append(ResponseReceived(sent.id, sent.method, result, error))
