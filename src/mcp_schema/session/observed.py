"""`Observed`: a session's spans in flight, both ways (`mcp_schema.telemetry`).

A server span runs from the moment the session reads a peer's request to the
moment it queues the answer; a client span from a request this side sends to
the answer it reads, its context written into the request's ``params._meta``.
The session is where both eras, every transport and the gateway's driven
sessions meet, so spans are made once, here, from what the session has just
read or built, never from bytes read again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_schema._codec.messages import ErrorResponse, ResultResponse
from mcp_schema.errors import McpError
from mcp_schema.telemetry.addresses import CLIENT
from mcp_schema.telemetry.vocabulary import state_reason
from mcp_schema.versions import STATELESS

if TYPE_CHECKING:
    from mcp_schema._codec.route import Route
    from mcp_schema.telemetry import Operation, Telemetry

__all__ = ["Observed"]


def _era(version: str) -> str:
    return "stateless" if version in STATELESS else "handshake"


class Observed:
    """The spans of one connection's requests: the peer's by id (at most the
    session's ``max_pending``), and this side's awaiting answers. Made only
    for a ``telemetry`` that records (`Telemetry.active`, which stays true
    once it is), so nothing here asks again."""

    __slots__ = ("_received", "_sent", "server", "telemetry")

    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry
        self.server: tuple[str, int] | None = None
        """The address this side's requests go to (``server.address``), where known."""
        self._received: dict[Any, Operation] = {}
        self._sent: dict[Any, Operation] = {}

    def refused(self, code: int, method: object, data: object = None) -> None:
        """The session refused what the peer sent (``data``: the error's, where
        a refused sealed request state says why)."""
        self.telemetry.count_refused(code, "received", method)
        reason = state_reason(data) if data is not None else None
        if reason is not None:
            self.telemetry.count_sealed(reason)

    def began(self, route: Route, value: dict[str, Any], headers: dict[str, str] | None) -> None:
        """The peer's request ``value`` was read (``headers``: its HTTP request's)."""
        assert route.method is not None
        params = value.get("params")
        self._received[route.id] = self.telemetry.server_operation(
            route.method,
            request_id=route.id,
            version=route.version,
            era=_era(route.version),
            params=params if isinstance(params, dict) else None,
            headers=headers,
            transport="tcp" if headers is not None else "pipe",
            client=CLIENT.get() if headers is not None else None,
        )

    def span_of(self, rid: Any) -> Any:
        """The span of the peer's request ``rid`` in flight, or None."""
        operation = self._received.get(rid) if self._received else None
        return None if operation is None else operation.span

    def answered(self, rid: Any, error: McpError | None = None, tool_error: bool = False) -> None:
        """The answer to the peer's request ``rid`` is queued."""
        operation = self._received.pop(rid, None) if self._received else None
        if operation is not None:
            code, message = (None, "") if error is None else (error.code, error.message)
            operation.end(code=code, message=message, tool_error=tool_error)

    def sending(self, value: dict[str, Any], version: str) -> None:
        """This side is about to send the request ``value`` (whole): its span
        starts and its context is written into a copy of ``params._meta``
        (the author's mapping is left as it was)."""
        from opentelemetry.trace import set_span_in_context

        from mcp_schema.telemetry.propagation import inject

        params = dict(value.get("params") or {})
        operation = self.telemetry.client_operation(
            value["method"],
            request_id=value["id"],
            version=version,
            era=_era(version),
            params=params,
            server=self.server,
        )
        meta = params.get("_meta")
        params["_meta"] = meta = dict(meta) if isinstance(meta, dict) else {}
        inject(meta, set_span_in_context(operation.span))
        value["params"] = params
        self._sent[value["id"]] = operation

    def response(
        self, rid: Any, answer: McpError | ErrorResponse[Any] | ResultResponse[Any]
    ) -> None:
        """The answer to this side's request ``rid`` was read (or could not be)."""
        operation = self._sent.pop(rid, None) if self._sent else None
        if operation is None:
            return
        if isinstance(answer, ErrorResponse):
            answer = answer.exception()
        if isinstance(answer, McpError):
            operation.end(code=answer.code, message=answer.message)
        else:
            operation.end(tool_error=getattr(answer.result, "is_error", None) is True)

    def gave_up(self, rid: Any) -> None:
        """This side cancelled its request ``rid``."""
        operation = self._sent.pop(rid, None) if self._sent else None
        if operation is not None:
            operation.end(cancelled=True)
