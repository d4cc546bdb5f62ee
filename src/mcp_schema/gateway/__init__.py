"""A validating Streamable HTTP gateway (hand-written runtime package):
``python -m mcp_schema gateway --listen HOST:PORT [--enforce] [--report FILE]
--upstream URL``, or ``... [--bridge] -- CMD ARGS...`` in front of a stdio server.

The gateway serves ``/mcp`` in front of an MCP server's Streamable HTTP
endpoint and reads every message both ways by the codec, as the stdio proxy
(`mcp_schema.proxy`) reads a stdio connection, and reports what fails the
same way (one bounded JSON line per finding, `mcp_schema.proxy.ReportLog`).
Its parts are importable, so that a gateway in another framework can use
them:

* `ExchangeValidator` and `Exchange` (``exchange``): sans-IO, the checks of
  one HTTP exchange: the request (its body and headers), then the answer
  (its head, its JSON body or each of its events).
* `EventSplitter` (``sse``): the events of a ``text/event-stream``, each
  with its bytes, fed in chunks.
* `mcp_schema.gateway.asgi.GatewayApp`: the ASGI application forwarding to
  the upstream with httpx (the ``http`` extra), in monitor or enforce mode.
* `mcp_schema.gateway.stdio.StdioGatewayApp` (``stdio``, ``stdio_child``,
  ``stdio_probe``): the ASGI application in front of a stdio server, a child
  per handshake-era session and one shared by 2026-07-28 requests.
* ``to_handshake`` (sans-IO), ``handshake_driver`` (its asyncio driver),
  ``stdio_bridge`` and ``http_bridge`` (its transports): the era bridge for
  2026-07-28 clients in front of a handshake-era server; ``findings``: the
  reports of what the gateway finds itself.
* ``command``: the command line, which runs the app under uvicorn.
"""

from __future__ import annotations

from mcp_schema.gateway.exchange import MAX_MESSAGE, Exchange, ExchangeValidator, bad_gateway
from mcp_schema.gateway.sse import EventSplitter, SseEvent

__all__ = [
    "MAX_MESSAGE",
    "EventSplitter",
    "Exchange",
    "ExchangeValidator",
    "SseEvent",
    "bad_gateway",
]
