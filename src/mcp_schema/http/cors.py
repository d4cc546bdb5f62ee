"""CORS for browser clients of the MCP endpoint: the preflight (``OPTIONS``)
answered, and the ``Access-Control-*`` headers of every response to an
allowed origin (the [Fetch standard's CORS protocol](https://fetch.spec.whatwg.org/#http-cors-protocol)).

Only the origins an `mcp_schema.http.Endpoint` is given (``allowed_origins``)
get CORS headers, and only when its ``cors`` is on (by default: when it is
given origins). The loopback origins it admits by default get none: a page
on this machine may call the endpoint only through a request a browser
sends without asking (no custom header), as before. A request from another
origin is refused (403) before any of this (`mcp_schema.http.rules`).

What a browser may send and read: the MCP headers (``Mcp-Session-Id``,
``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, any
``Mcp-Param-*``), ``Last-Event-ID``, ``Authorization``, ``Content-Type``
and ``Accept``; the client reads ``Mcp-Session-Id`` (and an authorization
challenge's ``WWW-Authenticate``) from a response
(``Access-Control-Expose-Headers``) to name its session.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mcp_schema.http.stream import Response

__all__ = ["EXPOSED", "MAX_AGE", "SENT", "cors_headers", "preflight"]

SENT = frozenset(
    {"accept", "authorization", "content-type", "last-event-id", "mcp-protocol-version"}
    | {"mcp-session-id", "mcp-method", "mcp-name"}
)
"""Request headers a browser may send, besides any ``Mcp-Param-*``."""

EXPOSED = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate"
"""Response headers a page may read."""

MAX_AGE = 600
"""Seconds a browser may keep a preflight's answer."""

_MAX_ASKED = 64  # header names of one preflight looked at
_PARAM = re.compile(r"mcp-param-[a-z0-9!#$%&'*+.^_`|~-]{1,200}")  # an HTTP token


def cors_headers(origin: str) -> list[tuple[str, str]]:
    """The CORS headers of a response to ``origin`` (allowed)."""
    return [
        ("access-control-allow-origin", origin),
        ("access-control-expose-headers", EXPOSED),
        ("vary", "Origin"),
    ]


def preflight(received: Mapping[str, str], methods: str) -> Response:
    """The answer to a preflight from an allowed origin, but for its
    `cors_headers`: 204 allowing ``methods`` and the headers asked for that a
    client may send (the others are left out, so the browser refuses them)."""
    asked = received.get("access-control-request-headers", "").split(",")[:_MAX_ASKED]
    names = [name.strip().lower() for name in asked]
    headers = [n for n in names if n in SENT or _PARAM.fullmatch(n)]
    allowed = [("access-control-allow-methods", methods), ("access-control-max-age", str(MAX_AGE))]
    if headers:
        allowed.append(("access-control-allow-headers", ", ".join(dict.fromkeys(headers))))
    return Response(204, allowed)
