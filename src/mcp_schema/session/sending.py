"""`Sending`: what a session sends of its own accord, requests and
notifications, each read as the peer will read it before it is queued, and
the cancelling of its own requests (the part of `mcp_schema.session.peer.Peer`
that writes; the rest of the class reads)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from mcp_schema._codec.catalog import catalog
from mcp_schema._codec.decoding import read_value
from mcp_schema._codec.encoding import encode
from mcp_schema._codec.route import Known
from mcp_schema._codec.views import MODELS
from mcp_schema.base import McpModel
from mcp_schema.errors import McpError, quote
from mcp_schema.session.events import InvalidOutgoingError
from mcp_schema.session.frames import Frame
from mcp_schema.session.state import Answered, Connection, Outgoing
from mcp_schema.session.wire import encoded, wire_or_type_error

if TYPE_CHECKING:
    from mcp_schema.session.observed import Observed

__all__ = ["Sending"]

_PROGRESS = "notifications/progress"
_CANCELLED = "notifications/cancelled"


class Sending:
    """The sending half of a session (`Peer` holds the state it uses)."""

    role: Literal["client", "server"]
    _state: Connection
    _next_id: int
    _extensions: frozenset[str]
    _observed: Observed | None

    def _put(self, frame: Frame) -> None:
        raise NotImplementedError

    def _known(self, version: str, method: str | None = None) -> Known:
        raise NotImplementedError

    def _checked(self, value: dict[str, Any], version: str) -> McpModel:
        """``value`` (a whole request or notification) read as the peer will read it."""
        try:
            _, message = read_value(value, 0, self._known(version), None, MODELS)
        except McpError as err:
            raise InvalidOutgoingError(f"{version}: {err.message}") from None
        return message  # type: ignore[no-any-return]

    def _sendable(
        self, method: str, version: str, kind: Literal["request", "notification"]
    ) -> None:
        found = catalog(version, self._extensions)
        entry = (found.requests if kind == "request" else found.notifications).get(method)
        if entry is None:
            raise InvalidOutgoingError(f"{version} has no {kind} {quote(method)}")
        if entry.sender not in (self.role, "both"):
            raise InvalidOutgoingError(f"a {self.role} does not send {quote(method)}")

    def notify(self, method: str, params: BaseModel | Mapping[str, Any] | None = None) -> None:
        """Queue the notification ``method`` with ``params`` (a model or wire mapping)."""
        self._notify(method, params, None)

    def _notify(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None,
        related: str | int | None,
    ) -> None:
        """`notify`, the notification belonging to the peer's request ``related``."""
        version = self._state.negotiated()
        self._sendable(method, version, "notification")
        value: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        wire = None
        if params is not None:
            wire = value["params"] = wire_or_type_error(params, "params")
        self._checked(value, version)
        token = wire.get("progressToken") if wire is not None and method == _PROGRESS else None
        self._put(Frame(encoded(value), method, None, related, token, None, wire))

    def _send(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None,
        on_answer: Answered,
        version: str | None = None,
        related: str | int | None = None,
        checked: McpModel | None = None,
    ) -> Outgoing:
        version = version or self._state.negotiated()
        self._sendable(method, version, "request")
        rid = self._next_id
        value: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            value["params"] = wire_or_type_error(params, "params")
        value = self._stamped(value, version)
        if self._observed is not None:
            self._observed.sending(value, version)
        # ``checked``: the caller built the request's model of ``version`` by its
        # own validation (a projection); read again, it would be validated twice.
        message = self._checked(value, version) if checked is None else checked
        frame = encoded(value)
        outgoing = Outgoing(rid, method, version, message, on_answer)
        self._state.send(outgoing)
        self._next_id += 1
        self._put(Frame(frame, method, rid, related, None, None, value.get("params")))
        return outgoing

    def _stamped(self, value: dict[str, Any], version: str) -> dict[str, Any]:
        """A request as this side sends it in ``version`` (the client adds ``_meta``)."""
        return value

    def cancel(self, request_id: int, *, reason: str | None = None) -> bool:
        """Stop waiting for this side's request ``request_id`` and tell the peer
        (``notifications/cancelled``); whether it was awaited."""
        return self._cancel(request_id, reason, None)

    def _cancel(self, request_id: int, reason: str | None, related: str | int | None) -> bool:
        """`cancel`, the request sent while serving the peer's request ``related``."""
        pending = self._state.answered(request_id)
        if pending is None:
            return False
        params: dict[str, Any] = {"requestId": request_id}
        if reason is not None:
            params["reason"] = reason
        frame = {"jsonrpc": "2.0", "method": _CANCELLED, "params": params}
        self._put(Frame(encode(frame), _CANCELLED, None, related, None, None, params))
        if self._observed is not None:
            self._observed.gave_up(request_id)
        return True
