"""`UpstreamTable`: the upstream sessions of an era bridge for 2026-07-28
clients (`mcp_schema.gateway.bridge.stateless_front.BridgeDriver`'s
table; a child process each behind `mcp_schema.gateway.bridge.links.StdioBridge`),
and the share they are held in (hand-written runtime module).

The sessions are kept by the principal and capability set they serve
(`mcp_schema.gateway.bridge.stateless.upstream_key`), least recently used
first. Each counts in the share of the caller that made it start (its
`mcp_schema.http.caller.Caller.key`, `Link.owner`: `mcp_schema.shares`):
one more is started only within that share and the table's bound; when
the caller's share is full its own least recently used idle session is
ended for it, never another caller's; a session idle for ``idle_seconds``
ends, and its place is given back.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from time import monotonic
from typing import TYPE_CHECKING

from mcp_schema.shares import Share

if TYPE_CHECKING:  # the links are the driver's; this module only counts them
    from mcp_schema.gateway.bridge.links import Link
    from mcp_schema.gateway.bridge.stateless import Call

__all__ = ["UpstreamTable"]


class UpstreamTable:
    """The upstream sessions (`links`, by key) within their share (see the module)."""

    links: OrderedDict[str, list[Link]]
    """The upstream sessions of each principal and capability set (`upstream_key`)."""
    share: Share
    """Their places, per caller (`Link.owner`) and in all (``max_upstreams``)."""
    idle_seconds: float
    """How long one may stay idle before it ends."""

    async def aclose(self) -> None:
        children = [link for links in self.links.values() for link in links]
        for child in children:
            self.gone(child)
        await asyncio.gather(*(c.close() for c in children))

    def gone(self, child: Link) -> None:
        """``child`` is over: forgotten (its key too, when it was the last),
        its place in its owner's share given back."""
        links = self.links.get(child.upstream.key, [])
        if child in links:
            links.remove(child)
            self.share.release(child.owner)
        if not links:
            self.links.pop(child.upstream.key, None)

    async def _room(self, owner: str | None) -> bool:
        """Whether one more upstream session of ``owner`` may start (its place
        taken): when its share is full, its own least recently used idle one
        is ended for it; never another owner's."""
        if self.share.acquire(owner):
            return True
        own = (link for links in self.links.values() for link in links if link.owner == owner)
        idle = next((link for link in own if link.idle), None)
        if idle is None:
            return False
        self.gone(idle)
        await idle.close()
        return self.share.acquire(owner)

    async def _idle_ended(self) -> None:
        """End the upstream sessions idle for ``idle_seconds``."""
        horizon = monotonic() - self.idle_seconds
        every = [link for links in self.links.values() for link in links]
        for link in every:
            if link.idle and link.used < horizon:
                self.gone(link)
                await link.close()

    def _holder(self, call: Call | None) -> Link | None:
        """The upstream session ``call`` is in flight in, if any."""
        if call is None:
            return None
        return next(
            (
                c
                for links in self.links.values()
                for c in links
                if call.upstream_id in c.queues
                and c.upstream.calls.get(call.upstream_id or 0) is call
            ),
            None,
        )
