"""The peers' addresses a span names: ``client.address`` of a server span,
``server.address`` of a client span.

The front door knows the client's address (the ASGI scope's ``client``);
the session that makes the span is built further in, per request, and
never sees the scope. So the front door sets `CLIENT` for the request it
serves (only while telemetry is active) and the session's span reads it:
one fact set at the edge, read where the span is made. Nothing here imports
OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

__all__ = ["CLIENT", "client_of", "server_of"]

CLIENT: ContextVar[tuple[str, int] | None] = ContextVar("mcp_schema_client", default=None)
"""The address and port of the client whose request is served, where known."""


def client_of(scope: Mapping[str, Any]) -> tuple[str, int] | None:
    """The ASGI scope's ``client`` (host, port), checked, or None."""
    client = scope.get("client")
    if not isinstance(client, (tuple, list)) or len(client) != 2:
        return None
    host, port = client
    if not isinstance(host, str) or not isinstance(port, int) or isinstance(port, bool):
        return None
    return host[:256], port


def server_of(url: str) -> tuple[str, int] | None:
    """The host and port ``url`` names (the scheme's port when it names none), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    return parts.hostname[:256], port
