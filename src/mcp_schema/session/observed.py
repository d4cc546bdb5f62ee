"""The session's part of telemetry: a server span for each request the peer
sends, from the moment the session reads it to the moment it queues the
answer (`mcp_schema.telemetry`). The session is where both eras, every
transport and the gateway's driven sessions meet, so spans are made once,
here, from what the session has just read, never from bytes read again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_schema.versions import STATELESS

if TYPE_CHECKING:
    from mcp_schema._codec.route import Route
    from mcp_schema.telemetry import Operation, Telemetry

__all__ = ["began"]


def began(
    telemetry: Telemetry, route: Route, value: dict[str, Any], headers: dict[str, str] | None
) -> Operation | None:
    """The operation of a request just read (``value``, routed as
    ``route``; ``headers``: its HTTP request's), or None while nothing records."""
    if not telemetry.active:
        return None
    assert route.method is not None
    params = value.get("params")
    version = route.version
    era = "stateless" if version in STATELESS else "handshake"
    return telemetry.server_operation(
        route.method,
        request_id=route.id,
        version=version,
        era=era,
        params=params if isinstance(params, dict) else None,
        headers=headers,
        transport="tcp" if headers is not None else "pipe",
    )


def sent(telemetry: Telemetry, value: dict[str, Any], version: str) -> Operation | None:
    """The client span of a request this side is about to send (``value``,
    whole), its context written into the request's ``params._meta`` (a copy:
    the author's mapping is left as it was); None while nothing records."""
    if not telemetry.active:
        return None
    from mcp_schema.telemetry.propagation import inject

    params = dict(value.get("params") or {})
    operation = telemetry.client_operation(
        value["method"],
        request_id=value["id"],
        version=version,
        era="stateless" if version in STATELESS else "handshake",
        params=params,
    )
    meta = params.get("_meta")
    params["_meta"] = meta = dict(meta) if isinstance(meta, dict) else {}
    from opentelemetry.trace import set_span_in_context

    inject(meta, set_span_in_context(operation.span))
    value["params"] = params
    return operation
