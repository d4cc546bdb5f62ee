"""`Forwarded`: the two spans of a request the gateway forwards in monitor
mode, and the trace context it sends upstream.

The client's request is the gateway's server span (parented by the
client's context, from ``params._meta`` over the HTTP ``traceparent``);
the call upstream is its client span, a child of it; and the upstream's
server span must be a child of that. So the forwarded body's
``params._meta.traceparent``/``tracestate`` are rewritten to the client
span's, in the raw bytes (`splice`, the one documented exception to
bytes passing unchanged), and the HTTP ``traceparent``/``tracestate``
headers are set too: they carry the context when ``_meta`` holds none.

The body is parsed here, once, only while telemetry is active; a body that
is no request (a notification, a response, no JSON) gets no spans.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import set_span_in_context

from mcp_schema._codec.parse import parse
from mcp_schema.errors import McpError
from mcp_schema.http.era import era_of
from mcp_schema.telemetry.addresses import client_of, server_of
from mcp_schema.telemetry.propagation import inject
from mcp_schema.telemetry.splice import splice

if TYPE_CHECKING:
    from mcp_schema.telemetry.operation import Operation
    from mcp_schema.telemetry.recorder import Telemetry

__all__ = ["Forwarded", "forward_traced"]

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_REWRITTEN = ("traceparent", "tracestate")
_HEADERS = frozenset(k.encode() for k in _REWRITTEN)


class Forwarded:
    """The spans of one forwarded request; `end` them once it is answered."""

    __slots__ = ("_client", "_server", "body", "carrier", "status")

    def __init__(self, server: Operation, client: Operation, body: bytes, traced: bool) -> None:
        self._server, self._client = server, client
        self.status: int | None = None
        """The HTTP status the client was answered with, once it is."""
        self.carrier: dict[str, str] = {}
        inject(self.carrier, set_span_in_context(client.span))
        rewritten = {k: v for k, v in self.carrier.items() if k in _REWRITTEN}
        # The scan costs about a microsecond a byte: only a body whose parsed
        # _meta holds a member to rewrite pays it.
        self.body = splice(body, rewritten) if traced else body
        """The body to send upstream."""

    @classmethod
    def begin(
        cls,
        telemetry: Telemetry,
        body: bytes,
        received: Mapping[str, str],
        per_request: Any,
        client: tuple[str, int] | None,
        upstream: tuple[str, int] | None,
    ) -> Forwarded | None:
        """The spans of the request ``body`` (None when it is no request)."""
        try:
            value = parse(body)
        except McpError:
            return None
        method = value.get("method") if isinstance(value, dict) else None
        if not isinstance(method, str) or "id" not in value:
            return None
        params = value.get("params")
        params = params if isinstance(params, dict) else None
        era = era_of(value, received, per_request)
        version = era.version if isinstance(era.version, str) else None
        version = version or received.get("mcp-protocol-version")
        facts: dict[str, Any] = {
            "request_id": value["id"] if isinstance(value["id"], (str, int)) else None,
            "version": version,
            "era": "stateless" if era.stateless else "handshake",
            "params": params,
        }
        server = telemetry.server_operation(method, headers=received, client=client, **facts)
        parent = set_span_in_context(server.span)
        upward = telemetry.client_operation(method, server=upstream, parent=parent, **facts)
        meta = params.get("_meta") if params is not None else None
        traced = isinstance(meta, dict) and any(isinstance(meta.get(k), str) for k in _REWRITTEN)
        return cls(server, upward, body, traced)

    def headers(self, upward: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """``upward`` (the headers sent upstream) with the client span's context."""
        kept = [h for h in upward if h[0].lower() not in _HEADERS]
        kept += [(k.encode(), v.encode()) for k, v in self.carrier.items() if k in _REWRITTEN]
        return kept

    def end(self) -> None:
        """The request ended: both spans end, with the HTTP `status` (none:
        the client left first; from 500 on: an error)."""
        status = self.status
        failed = status is None or status >= 500
        for operation in (self._client, self._server):
            if status is not None:
                operation.span.set_attribute("http.response.status_code", status)
            operation.end(code=-32603 if failed else None, message="" if not failed else "upstream")


def forward_traced(
    telemetry: Telemetry,
    scope: Mapping[str, Any],
    received: Mapping[str, str],
    body: bytes,
    per_request: Any,
    upstream: str,
    upward: list[tuple[bytes, bytes]],
    send: Send,
) -> tuple[Forwarded | None, bytes, list[tuple[bytes, bytes]], Send]:
    """What the gateway forwards of the request ``body`` (to ``upstream``,
    with the headers ``upward``): its spans, the body and headers to send,
    and ``send`` noting the status (all as given when it is no request)."""
    forwarded = Forwarded.begin(
        telemetry, body, received, per_request, client_of(scope), server_of(upstream)
    )
    if forwarded is None:
        return None, body, upward, send

    async def sent(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            forwarded.status = message["status"]
        await send(message)

    return forwarded, forwarded.body, forwarded.headers(upward), sent
