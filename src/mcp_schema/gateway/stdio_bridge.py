"""`StdioBridge`: the era bridge for 2026-07-28 clients in front of a stdio
server that speaks only the handshake era (``gateway --bridge -- CMD``): the
`mcp_schema.gateway.handshake_driver.BridgeDriver` with a child process
(`Child`) per upstream session, framed as the stdio proxy frames it.

The stdio front (`mcp_schema.gateway.stdio.StdioGatewayApp`) probes the
command before it serves (`mcp_schema.gateway.stdio_probe`) and hands the
bridge what it found (`BridgeDriver.adopt`); each request it hands the
bridge it prechecked and read first (`BridgeDriver.serve`). A server that answers
``server/discover`` needs no bridge: its 2026-07-28 requests take the
front's shared child, as without ``--bridge``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_schema.errors import ParseError
from mcp_schema.gateway.handshake_driver import BridgeDriver, Link
from mcp_schema.gateway.stdio_child import Child
from mcp_schema.gateway.to_handshake import Upstream
from mcp_schema.proxy.lines import Line, OverlongLine

if TYPE_CHECKING:
    from mcp_schema.gateway.stdio import StdioGatewayApp

__all__ = ["StdioBridge"]


class StdioLink(Link):
    """An upstream session that is a child process of its own."""

    def __init__(self, upstream: Upstream, driver: StdioBridge) -> None:
        super().__init__(upstream, driver)
        app = driver.app
        self.child = Child(app.command, self._line, self.ended, max_line_bytes=app.max_line_bytes)

    @property
    def alive(self) -> bool:
        return self.child.alive

    async def start(self) -> None:
        await self.child.start()
        self.flush()

    def flush(self) -> None:
        for frame in self.upstream.client.data_to_send():
            self.child.send(frame)

    def answer(self, frame: bytes) -> None:
        self.child.send(frame)

    async def close(self) -> None:
        await self.child.close()

    def _line(self, line: Line) -> None:
        if isinstance(line, OverlongLine):
            return self.driver.findings.found(
                f"Parse error: a line of {line.size:,} bytes is longer than the limit; not read",
                line.head,
                ParseError.code,
            )
        self.deliver(self.upstream.client.receive(line), line)


class StdioBridge(BridgeDriver):
    """The bridge of ``app`` (a `StdioGatewayApp`), with the driver's other
    arguments (``sealer``, ``principal``, ``max_upstreams``, ``pending``)."""

    def __init__(self, app: StdioGatewayApp, **options: Any) -> None:
        super().__init__(app.findings, **options)
        self.app = app

    def new_link(self, upstream: Upstream) -> Link:
        return StdioLink(upstream, self)
