"""`probe`: what a stdio server speaks, asked before the gateway listens:
``server/discover`` first (a 2026-07-28 server answers it), then, when it is
refused, ``initialize``, whose answer names the newest handshake-era version
both sides speak, with the server's info and capabilities. The probe's child
is ended once it answered."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_schema.errors import InternalError
from mcp_schema.gateway.probe import GATEWAY_INFO
from mcp_schema.gateway.stdio_child import Child
from mcp_schema.proxy.lines import Line, OverlongLine
from mcp_schema.session import ClientSession, Negotiated, ProtocolError, ResponseReceived
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

__all__ = ["ANSWER_SECONDS", "Probed", "found", "probe", "probing_session"]

ANSWER_SECONDS = 10.0
"""How long the server gets to answer the probe (and each upstream ``initialize``)."""


class Probed:
    """What the probe found: whether the server answers 2026-07-28 itself, else
    its handshake-era ``version``, ``info`` and ``capabilities``."""

    def __init__(
        self,
        stateless: bool,
        version: str | None = None,
        info: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        *,
        child: Child | None = None,
    ) -> None:
        self.stateless, self.version = stateless, version
        self.info, self.capabilities = info or {}, capabilities or {}
        self.child = child
        """The probe's child, still running, of a server that answered ``server/discover``."""


def probing_session() -> ClientSession:
    """The client session a probe asks with (over stdio or HTTP): every version,
    so ``server/discover`` first, then ``initialize``."""
    return ClientSession(info=GATEWAY_INFO, versions=[*HANDSHAKE_VERSIONS, *STATELESS_VERSIONS])


def found(event: Negotiated, session: ClientSession) -> Probed:
    """What the probe's negotiation tells: a server of 2026-07-28, else its
    handshake-era version, info and capabilities."""
    if event.version in STATELESS_VERSIONS:
        return Probed(True)
    info, capabilities = session.server_info, session.server_capabilities
    return Probed(False, event.version, info or {}, capabilities or {})


async def probe(command: list[str], max_line_bytes: int) -> Probed:
    """Start ``command``, ask ``server/discover`` then (unanswered) ``initialize``:
    what it serves. `McpError` when it answers neither in time. The child is
    ended, but for a server that answered ``server/discover`` (which changes
    nothing there): it is handed on running (`Probed.child`)."""
    session = probing_session()
    answers: asyncio.Queue[Any] = asyncio.Queue()

    def line(read: Line) -> None:
        if isinstance(read, OverlongLine):
            answers.put_nowait(read)
            return
        for event in session.receive(read):
            answers.put_nowait(event)

    child: Child | None = Child(
        command, line, lambda: answers.put_nowait(None), max_line_bytes=max_line_bytes
    )
    assert child is not None
    await child.start()
    try:
        for negotiate in (session.discover, session.initialize):
            negotiate()
            for frame in session.data_to_send():
                child.send(frame)
            while True:
                event = await asyncio.wait_for(answers.get(), ANSWER_SECONDS)
                if event is None:
                    raise InternalError("the server exited before it answered the probe")
                if isinstance(event, OverlongLine):
                    raise InternalError(
                        f"the server answered the probe with a line of {event.size:,} bytes, "
                        f"longer than the limit of {max_line_bytes:,}"
                    )
                if isinstance(event, Negotiated):
                    probed = found(event, session)
                    if probed.stateless:  # its child is handed on, running
                        probed.child, child = child, None
                    return probed
                if isinstance(event, (ResponseReceived, ProtocolError)):
                    break  # refused: the next way
        raise InternalError("the server answered neither server/discover nor initialize")
    except asyncio.TimeoutError:
        raise InternalError(
            f"the server did not answer the probe in {ANSWER_SECONDS:g} s"
        ) from None
    finally:
        if child is not None:
            await child.close()
