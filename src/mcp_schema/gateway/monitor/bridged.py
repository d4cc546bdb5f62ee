"""The era bridge a `mcp_schema.gateway.monitor.asgi.GatewayApp` builds
when asked (``bridge``) and its upstream serves one era alone: the
`HandshakeFront` for handshake-era clients of a 2026-07-28 upstream, the
`HttpBridge` for 2026-07-28 clients of a handshake-era one, each with the
gateway's credentials, rules and telemetry, and the share of its sessions
(`Shares`, checked once when the app is made, bridged or not)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from mcp_schema.gateway.bridge.handshake_front import HandshakeFront
from mcp_schema.gateway.bridge.links import HttpBridge
from mcp_schema.shares import Share

if TYPE_CHECKING:
    from mcp_schema.gateway.monitor.asgi import GatewayApp
    from mcp_schema.gateway.probe import Served
    from mcp_schema.http.precheck import Precheck
    from mcp_schema.request_state import StateSealer

__all__ = ["Shares", "bridges_of"]


class Shares(NamedTuple):
    """The bounds of the bridges' sessions: the front's handshake-era
    sessions (``max_sessions`` in all, ``max_sessions_per_key`` per caller:
    a tenth by default), the back's upstream sessions (``max_upstreams``,
    ``max_upstreams_per_key``)."""

    max_sessions: int
    max_sessions_per_key: int | None
    max_upstreams: int
    max_upstreams_per_key: int

    def check(self) -> None:
        """A ValueError for a bound that cannot be (`mcp_schema.shares.Share`'s rules)."""
        Share("sessions", total=self.max_sessions, per_key=self.max_sessions_per_key)
        Share("upstream sessions", total=self.max_upstreams, per_key=self.max_upstreams_per_key)


def bridges_of(
    app: GatewayApp,
    served: Served,
    sealer: StateSealer | None,
    shares: Shares,
    bridged: Precheck,
) -> tuple[HandshakeFront | None, HttpBridge | None]:
    """The front and back bridges of ``app``, whose upstream's probe found
    ``served`` (one of them at most: none when it serves both eras or neither),
    each behind ``bridged``, the gateway's own precheck bounded as it bounds
    the bodies it bridges."""
    telemetry = app.telemetry or False
    if not served.handshake and served.stateless:
        host = app.upstream_host
        front = HandshakeFront(
            app.upstream,
            served,
            lambda: app.client,
            credentials=app.credentials,
            reports=app.reports,
            path=app.path,
            headers=None if host is None else {"host": host},
            precheck=bridged,
            telemetry=telemetry,
            max_sessions=shares.max_sessions,
            max_sessions_per_key=shares.max_sessions_per_key,
        )
        return front, None
    if served.handshake and not served.stateless:
        back = HttpBridge(
            app.upstream,
            reports=app.reports,
            sealer=sealer,
            precheck=bridged,
            served=served,
            credentials=app.credentials,
            telemetry=telemetry,
            max_upstreams=shares.max_upstreams,
            max_upstreams_per_key=shares.max_upstreams_per_key,
        )
        return None, back
    return None, None
