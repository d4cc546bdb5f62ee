"""The gateway's first room: forwarding within one era (hand-written runtime
package). Every message both ways is read by the codec and what fails is
reported (`mcp_schema.proxy.ReportLog`), or, in enforce mode, never reaches
the other side.

* `ExchangeValidator` and `Exchange` (``exchange``): sans-IO, the checks of
  one HTTP exchange: the request (its body and headers), then the answer
  (its head, its JSON body or each of its events); what it knows of the
  upstream (``upstream``: tool headers, versions, extensions) it learns
  from the probe and from the answers it reads.
* `EventSplitter` (``sse``): the events of a ``text/event-stream``, each
  with its bytes, fed in chunks.
* `Findings` (`mcp_schema.gateway.findings`, shared with the bridge): the
  reports of what the gateway finds itself.
* `GatewayApp` (``asgi``, ``carried``; the ``http`` extra): the ASGI
  application forwarding to a Streamable HTTP upstream; with the probe's
  ``served=``, the era that upstream does not serve goes to a bridge
  (`mcp_schema.gateway.bridge`, built by ``bridged`` with its shares).
* `StdioGatewayApp` (``stdio``, ``stdio_link``): the ASGI application in
  front of a stdio server, a child per handshake-era session and one
  shared by 2026-07-28 requests.

The two applications are loaded when first named (`GatewayApp` needs the ``http`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_schema.gateway.findings import Findings
from mcp_schema.gateway.monitor.exchange import (
    MAX_MESSAGE,
    MAX_TOOL_BYTES,
    Exchange,
    ExchangeValidator,
    bad_gateway,
)
from mcp_schema.gateway.monitor.sse import EventSplitter, SseEvent

if TYPE_CHECKING:
    from mcp_schema.gateway.monitor.asgi import GatewayApp as GatewayApp
    from mcp_schema.gateway.monitor.stdio import StdioGatewayApp as StdioGatewayApp

__all__ = [
    "MAX_MESSAGE",
    "MAX_TOOL_BYTES",
    "EventSplitter",
    "Exchange",
    "ExchangeValidator",
    "Findings",
    "SseEvent",
    "bad_gateway",
]

_LAZY = {
    "GatewayApp": "mcp_schema.gateway.monitor.asgi",
    "StdioGatewayApp": "mcp_schema.gateway.monitor.stdio",
}


def __getattr__(name: str) -> object:
    # The applications import the bridges (and GatewayApp the http extra): the sans-IO
    # core alone loads neither. (Not in __all__: a star import would load them.)
    if name in _LAZY:
        return getattr(__import__(_LAZY[name], fromlist=[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
