"""The gateway's second room: the era bridge (hand-written runtime package).
Each direction is a sans-IO core and the ASGI side that drives it, named for
the era that faces the client; the upstream links are one module.

* Handshake-era clients in front of a server of 2026-07-28 alone:
  `StatelessCalls` (``handshake``, sans-IO: one client session carried
  upstream as self-contained requests) and `HandshakeFront`
  (``handshake_front``, the ``http`` extra: the package's own `Endpoint`
  serving the handshake era, its handler handing each session's events to
  its `StatelessCalls`).
* 2026-07-28 clients in front of a server of the handshake era alone:
  `HandshakeBridge` and its parts (``stateless``, sans-IO: the front
  sessions, the upstream sessions, the calls, the pending rounds) and
  `BridgeDriver` (``stateless_front``: their asyncio driver, the async
  handler of an `Endpoint` serving 2026-07-28, answered by `App.answer`).
* ``links``: the upstream sessions those drive (`Link`), over HTTP
  (`HttpBridge`) or a child process each (`StdioBridge`).

What each bridge speaks is what the gateway's start-up probe found
(`mcp_schema.gateway.probe.Served`). The ASGI sides are loaded when first
named (they need the HTTP runtime, `HandshakeFront` and `HttpBridge` the ``http`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_schema.gateway.bridge.handshake import BRIDGED_VERSION, StatelessCalls
from mcp_schema.gateway.bridge.stateless import (
    Call,
    HandshakeBridge,
    PendingCalls,
    Upstream,
    projected_capabilities,
    sealer_from_env,
    upstream_key,
)

if TYPE_CHECKING:
    from mcp_schema.gateway.bridge.handshake_front import HandshakeFront as HandshakeFront
    from mcp_schema.gateway.bridge.links import HttpBridge as HttpBridge
    from mcp_schema.gateway.bridge.links import StdioBridge as StdioBridge
    from mcp_schema.gateway.bridge.stateless_front import BridgeDriver as BridgeDriver

__all__ = [
    "BRIDGED_VERSION",
    "Call",
    "HandshakeBridge",
    "PendingCalls",
    "StatelessCalls",
    "Upstream",
    "projected_capabilities",
    "sealer_from_env",
    "upstream_key",
]

_LAZY = {
    "HandshakeFront": "mcp_schema.gateway.bridge.handshake_front",
    "HttpBridge": "mcp_schema.gateway.bridge.links",
    "StdioBridge": "mcp_schema.gateway.bridge.links",
    "BridgeDriver": "mcp_schema.gateway.bridge.stateless_front",
}


def __getattr__(name: str) -> object:
    # The ASGI sides need the HTTP runtime (and two of them the http extra): the
    # sans-IO cores alone load none of it. (Not in __all__, as in the monitor.)
    if name in _LAZY:
        return getattr(__import__(_LAZY[name], fromlist=[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
