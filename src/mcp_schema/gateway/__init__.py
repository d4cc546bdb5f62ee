"""A validating Streamable HTTP gateway (hand-written runtime package):
``python -m mcp_schema gateway --listen HOST:PORT [--enforce] [--bridge]
[--report FILE] --upstream URL``, or ``... -- CMD ARGS...`` in front of a stdio server.

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
* `Probe` and `Served` (``probe``): sans-IO, what an upstream serves, from
  its answer to ``server/discover`` (the bridge's start-up probe).
* `StatelessCalls` (``to_stateless``): sans-IO, the era bridge's first
  direction: one handshake-era client's session carried to a 2026-07-28
  upstream.
* `mcp_schema.gateway.asgi.GatewayApp`: the ASGI application forwarding to
  the upstream with `mcp_schema.http.pool` (the ``http`` extra), in monitor or enforce mode;
  with ``served=`` (``--bridge``), handshake-era clients of a 2026-07-28-only
  upstream go to `mcp_schema.gateway.handshake_front.HandshakeFront`,
  2026-07-28 clients of a handshake-era one to
  `mcp_schema.gateway.http_bridge.HttpBridge`.
* `mcp_schema.gateway.stdio.StdioGatewayApp` (``stdio``, ``stdio_link``,
  ``stdio_child``, ``stdio_probe``): the ASGI application in front of a stdio server, a child
  per handshake-era session and one shared by 2026-07-28 requests.
* ``to_handshake`` (sans-IO), ``handshake_driver`` (its asyncio driver),
  ``stdio_bridge`` and ``http_bridge`` (its transports): the era bridge for
  2026-07-28 clients in front of a handshake-era server; ``findings``: the
  reports of what the gateway finds itself.
* ``command``: the command line, which runs the app under uvicorn.
"""

from __future__ import annotations

from mcp_schema.gateway.exchange import (
    MAX_MESSAGE,
    MAX_TOOL_BYTES,
    Exchange,
    ExchangeValidator,
    bad_gateway,
)
from mcp_schema.gateway.probe import Probe, ProbeError, Served
from mcp_schema.gateway.sse import EventSplitter, SseEvent
from mcp_schema.gateway.to_stateless import StatelessCalls

__all__ = [
    "MAX_MESSAGE",
    "MAX_TOOL_BYTES",
    "EventSplitter",
    "Exchange",
    "ExchangeValidator",
    "Probe",
    "ProbeError",
    "Served",
    "SseEvent",
    "StatelessCalls",
    "bad_gateway",
]
