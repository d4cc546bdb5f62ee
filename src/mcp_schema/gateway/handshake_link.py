"""`Link`: one upstream session of the era bridge for 2026-07-28 clients (an
`Upstream` and the connection it speaks over, a child process or an HTTP
session), as `mcp_schema.gateway.handshake_driver.BridgeDriver` drives it;
and `sealer_from_env`, what seals the bridge's ``requestState``."""

from __future__ import annotations

import asyncio
import os
import secrets
from typing import TYPE_CHECKING, Any

from mcp_schema.gateway.to_handshake import Upstream
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import (
    Event,
    InputRequested,
    Negotiated,
    ProtocolError,
    ResponseReceived,
)

if TYPE_CHECKING:  # the driver holds its links; a link tells its driver
    from mcp_schema.gateway.handshake_driver import BridgeDriver

__all__ = ["Link", "sealer_from_env"]


def sealer_from_env() -> StateSealer:
    """The sealer of ``MCP_STATE_KEY`` (as the examples read it), or of a random key
    (a ``ValueError`` naming the variable for a key too short)."""
    value = os.environ.get("MCP_STATE_KEY")
    try:
        keys = StateKeys.from_env(value) if value else StateKeys(secrets.token_bytes(32))
    except ValueError as exc:  # a key too short, or an empty one between commas
        raise ValueError(f"MCP_STATE_KEY: {exc}") from None
    return StateSealer(keys)


class Link:
    """An `Upstream` and the connection it speaks over (a child process, an
    HTTP session): what the driver needs of each transport is `alive`,
    `start`, `flush` (send what the session queued), `answer` (send one
    frame of the gateway's own) and `close`; the transport hands what the
    server sent to `deliver`."""

    def __init__(self, upstream: Upstream, driver: BridgeDriver) -> None:
        self.upstream, self.driver = upstream, driver
        self.queues: dict[int, asyncio.Queue[Any]] = {}  # by upstream id: None when it died
        self.ready = asyncio.get_running_loop().create_future()
        self.lock = asyncio.Lock()  # the calls that may ask, one at a time
        self.listens = 0
        self.subscribed: dict[str, int] = {}

    @property
    def idle(self) -> bool:
        return not self.upstream.calls and not self.listens and not self.lock.locked()

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    async def start(self) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        raise NotImplementedError

    def answer(self, frame: bytes) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    def deliver(self, events: list[Event], frame: bytes) -> None:
        """The session's ``events`` of what the server sent (``frame``, for reports)."""
        findings = self.driver.findings
        for call, event in self.upstream.route(events):
            if isinstance(event, ProtocolError):
                findings.refused("server", event.error, frame)
            elif isinstance(event, Negotiated) and not self.ready.done():
                self.ready.set_result(True)
            elif isinstance(event, ResponseReceived) and not self.ready.done():
                self.ready.set_result(False)  # initialize refused
            elif call is not None and call.upstream_id in self.queues:
                self.queues[call.upstream_id].put_nowait(event)
            elif call is None and isinstance(event, InputRequested):
                # No call may ask now: refused, as a client that cannot be asked refuses.
                findings.found(
                    "Invalid Request: the server asked the client outside of any call that "
                    "may ask; refused",
                    frame,
                )
                self.answer(self.upstream.refuse(event))
        self.flush()

    def ended(self) -> None:
        """The connection is over: its calls in flight fail, the driver forgets it."""
        if not self.ready.done():
            self.ready.set_result(False)
        for queue in self.queues.values():
            queue.put_nowait(None)
        self.driver.gone(self)
