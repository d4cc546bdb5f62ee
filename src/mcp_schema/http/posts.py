"""What the client side of Streamable HTTP sends and how it fails
(hand-written runtime module, re-exported by `mcp_schema.http.binding`):
a `Post`, one HTTP request to the MCP endpoint; a `Resume`, how to take up
a request's event stream that ended early; and `TransportError`, the
answer of a request whose exchange brought no JSON-RPC answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_schema.errors import McpError

__all__ = ["Post", "Resume", "TransportError"]


class TransportError(McpError):
    """-32603: the HTTP exchange brought no JSON-RPC answer to a request
    (``status``: the HTTP status, None when none came)."""

    code = -32603
    default_message = "Transport error"
    http_status = 502  # answered to a client of a gateway: its upstream failed it

    def __init__(
        self, message: str | None = None, data: Any = None, *, status: int | None = None
    ) -> None:
        self.status = status
        if status is not None and data is None:
            data = {"status": status}
        super().__init__(message, data)


@dataclass(frozen=True)
class Resume:
    """How to resume a request's stream that ended before its answer."""

    last_event_id: str
    retry: float
    """Seconds to wait first (the stream's ``retry``, bounded)."""


@dataclass(frozen=True)
class Post:
    """One HTTP request to the MCP endpoint: send it, then read its response
    with `ClientBinding.reply`."""

    method: str
    """``POST`` (a message), ``GET`` (a stream of the server's, handshake era)
    or ``DELETE`` (the end of a handshake-era session)."""
    headers: tuple[tuple[str, str], ...]
    body: bytes
    request_id: int | None
    """The id of the request it carries; None for a notification or a response."""
    rpc_method: str | None = None
    """The JSON-RPC method it carries (None for a response, or a DELETE)."""
