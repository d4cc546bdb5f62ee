"""`Frame`: one frame a session queued, with its envelope: what the session
knew as it wrote the frame, so that a transport routes it without reading
it again (``session.frames_to_send()``; ``data_to_send()`` gives the bytes
alone).

A frame is a response (``method`` None), a request this side sends, or a
notification. ``related`` names the peer's request it belongs to: the one a
response answers, the call an ``ask`` serves, the request a log message or
a progress notification was sent for (``request=``). A frame the session
cannot relate to a request (the author's own ``notify``, a request of its
own) has ``related`` None: the transport decides where it goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["Frame"]


class Frame(NamedTuple):
    """One queued frame and its envelope (a tuple: built at the cost of one)."""

    data: bytes
    """The frame: one JSON-RPC message, without the transport's framing."""
    method: str | None = None
    """The method of a request or a notification; None for a response."""
    id: str | int | None = None
    """A response's id (None for an error answering what had no readable id),
    or the id of a request this side sends; None for a notification."""
    related: str | int | None = None
    """The id of the peer's request the frame belongs to (see the module);
    None when the session knows of none."""
    progress_token: str | int | None = None
    """A ``notifications/progress``'s token."""
    error: int | None = None
    """An error response's code; None for anything else."""
    params: Mapping[str, Any] | None = None
    """A request's or notification's ``params`` as sent (wire JSON, to read
    only: what a transport mirrors into header fields); None for a response."""
    status: int | None = None
    """The HTTP status an error response's error calls for in either era
    (`mcp_schema.errors.McpError.http_status`: 503 when a shared piece failed,
    502 when the server a gateway carries to did); None: its code's rule."""

    @property
    def is_response(self) -> bool:
        """Whether the frame answers a request (a result or an error)."""
        return self.method is None
