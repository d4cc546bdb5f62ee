"""`BridgeCounts`: what one era bridge carried and refused, counted
(`mcp_schema.telemetry.Telemetry.count_bridged`, ``mcp_schema.bridge.messages``).

A message is counted once, where the bridge hands it to the other era:
``received`` for what goes from the client's side to the upstream (a
request, an input round's retry, and the upstream requests the bridge makes
for its clients: ``server/discover``, a ``tools/list`` before a call),
``sent`` for what goes to the client (each answer, progress, log and list
change, each message the bridge's asks put on a stream). A refusal is
counted with the JSON-RPC code it was answered or reported with, by the
side whose message it refused. ``mcp_schema.era`` is the era of the
bridge's clients: ``handshake`` for `HandshakeFront`, ``stateless`` for
`BridgeDriver`. Only while telemetry is active; nothing here imports
OpenTelemetry.

The tool and prompt names the upstream lists (its ``tools/list`` and
``prompts/list`` results, whoever asked) are learned too
(`mcp_schema.telemetry.Telemetry.learn`): the bridge's spans name those
tools, as the server's own spans name what it declares.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from mcp_schema.session import ResponseReceived
from mcp_schema.telemetry.findings import SIDES

if TYPE_CHECKING:
    from mcp_schema.proxy.reports import Report
    from mcp_schema.telemetry import Telemetry

__all__ = ["BridgeCounts", "Direction"]

Direction = Literal["received", "sent"]


class BridgeCounts:
    """The counts of one bridge whose clients are of ``era`` (see the module)."""

    __slots__ = ("era", "telemetry")

    def __init__(self, telemetry: Telemetry | None, era: Literal["handshake", "stateless"]) -> None:
        self.telemetry, self.era = telemetry, era

    def carried(self, direction: Direction, count: int = 1) -> None:
        """``count`` messages carried toward ``direction``'s side."""
        telemetry = self.telemetry
        if count and telemetry is not None and telemetry.active:
            telemetry.count_bridged(direction, "carried", self.era, count=count)

    def refused(self, direction: Direction, code: int) -> None:
        """A message of ``direction`` refused, with JSON-RPC error ``code``."""
        telemetry = self.telemetry
        if telemetry is not None and telemetry.active:
            telemetry.count_bridged(direction, "refused", self.era, code=code)

    def listed(self, events: Iterable[object]) -> None:
        """The names each ``tools/list`` or ``prompts/list`` answer among
        ``events`` (the upstream's) lists, learned."""
        telemetry = self.telemetry
        if telemetry is None:
            return
        for event in events:
            if not isinstance(event, ResponseReceived) or event.result is None:
                continue
            if event.method == "tools/list":
                telemetry.learn(tools=(t.name for t in getattr(event.result, "tools", ())))
            elif event.method == "prompts/list":
                telemetry.learn(prompts=(p.name for p in getattr(event.result, "prompts", ())))

    def reported(self, reports: Iterable[Report]) -> None:
        """The refusals the bridge's sans-IO core reported (`mcp_schema.proxy.Report`)."""
        for report in reports:
            self.refused(
                "received" if SIDES[report["direction"]] == "received" else "sent", report["code"]
            )
