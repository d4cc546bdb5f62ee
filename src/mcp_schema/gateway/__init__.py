"""A validating Streamable HTTP gateway (hand-written runtime package):
``python -m mcp_schema gateway --listen HOST:PORT [--enforce] [--bridge]
[--report FILE] --upstream URL``, or ``... -- CMD ARGS...`` in front of a stdio server.

The gateway serves ``/mcp`` in front of an MCP server's Streamable HTTP
endpoint and reads every message both ways by the codec, as the stdio proxy
(`mcp_schema.proxy`) reads a stdio connection, and reports what fails the
same way (one bounded JSON line per finding, `mcp_schema.proxy.ReportLog`).
It is two rooms, each of whose roots exports its sans-IO core and the ASGI
application a user runs, and the pieces both share:

* `mcp_schema.gateway.monitor`: forwarding within one era. `ExchangeValidator`
  and `Exchange` (sans-IO: the checks of one HTTP exchange), `EventSplitter`,
  `GatewayApp` (in front of an HTTP upstream, the ``http`` extra) and
  `StdioGatewayApp` (in front of a stdio server).
* `mcp_schema.gateway.bridge`: the era bridge, each direction named for the
  era that faces the client. `StatelessCalls` and `HandshakeFront`
  (handshake-era clients, a 2026-07-28 upstream), `HandshakeBridge` and
  `BridgeDriver` (2026-07-28 clients, a handshake-era upstream), over the
  upstream links of ``bridge.links`` (`HttpBridge`, `StdioBridge`).
* ``probe``: what an upstream serves (`Probe`, sans-IO, and `Served`, the one
  result), asked once at start over HTTP or stdio; the validator learns from
  it which extensions the upstream serves (the Tasks extension's among
  them), the bridges which era and version to speak.
* ``http_upstream``: the HTTP client of the upstream (`mcp_schema.http.pool`),
  its timeouts, and the credentials it sends, for both rooms.
* ``findings``: the reports of what the gateway finds itself; ``child``: one
  stdio server process; ``command``: the command line, which runs the app
  under uvicorn.

Every name of both roots is importable from here too; the applications
are loaded when first named, each by its room (the room's own table of
lazy names is the one this root reads; `GatewayApp`, `HandshakeFront` and
`HttpBridge` need the ``http`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_schema.gateway import bridge, monitor
from mcp_schema.gateway.bridge import (
    BRIDGED_VERSION,
    Call,
    HandshakeBridge,
    PendingCalls,
    StatelessCalls,
    projected_capabilities,
    sealer_from_env,
    upstream_key,
)
from mcp_schema.gateway.findings import Findings
from mcp_schema.gateway.monitor import (
    MAX_MESSAGE,
    MAX_TOOL_BYTES,
    EventSplitter,
    Exchange,
    ExchangeValidator,
    SseEvent,
    bad_gateway,
)
from mcp_schema.gateway.probe import Probe, ProbeError, Served

if TYPE_CHECKING:
    from mcp_schema.gateway.bridge import BridgeDriver as BridgeDriver
    from mcp_schema.gateway.bridge import HandshakeFront as HandshakeFront
    from mcp_schema.gateway.bridge import HttpBridge as HttpBridge
    from mcp_schema.gateway.bridge import StdioBridge as StdioBridge
    from mcp_schema.gateway.monitor import GatewayApp as GatewayApp
    from mcp_schema.gateway.monitor import StdioGatewayApp as StdioGatewayApp

__all__ = [
    "BRIDGED_VERSION",
    "MAX_MESSAGE",
    "MAX_TOOL_BYTES",
    "Call",
    "EventSplitter",
    "Exchange",
    "ExchangeValidator",
    "Findings",
    "HandshakeBridge",
    "PendingCalls",
    "Probe",
    "ProbeError",
    "Served",
    "SseEvent",
    "StatelessCalls",
    "bad_gateway",
    "projected_capabilities",
    "sealer_from_env",
    "upstream_key",
]

_ROOMS = {
    name: room
    for room in (bridge, monitor)
    for name in room._LAZY  # each room's own table: its names, loaded by the room
}


def __getattr__(name: str) -> object:
    # As the rooms' roots: the applications load the HTTP runtime (and httptools)
    # when first named, each by the room that holds it. (Not in __all__: a star
    # import would load them.)
    room = _ROOMS.get(name)
    if room is not None:
        return getattr(room, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
