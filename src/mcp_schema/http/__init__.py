"""Streamable HTTP for MCP servers, sans-IO, both eras on one endpoint
(hand-written runtime package).

`Endpoint` turns one HTTP request (method, path, headers, body) into a
`Response`: a status, headers, and a JSON body or a `Stream` of frames that
a server adapter writes as server-sent events while the handler produces
them. `mcp_schema.http.asgi` is such an adapter, for any ASGI 3 server.
The rules it follows, refusals included, are those of the specification's
[Streamable HTTP transport](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)
(and, for ``initialize`` sessions, of
[2025-11-25's](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports)):
see `mcp_schema.http.endpoint`. Request headers are checked by
`mcp_schema.http_headers`, through the codec.
"""

from __future__ import annotations

from mcp_schema.http.endpoint import MAX_BODY, AsyncHandler, Endpoint, Handler
from mcp_schema.http.sessions import MAX_SESSIONS, LiveSession, MemorySessions, SessionStore
from mcp_schema.http.stream import KEEPALIVE, MAX_BUFFER, Response, Stream

__all__ = [
    "KEEPALIVE",
    "MAX_BODY",
    "MAX_BUFFER",
    "MAX_SESSIONS",
    "AsyncHandler",
    "Endpoint",
    "Handler",
    "LiveSession",
    "MemorySessions",
    "Response",
    "SessionStore",
    "Stream",
]
