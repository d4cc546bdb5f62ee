"""`CountedReportLog`: the gateway's findings counted as they are reported.

Every finding of the gateway, in monitor mode (what it reports and passes
on) and in enforce mode (what it refuses), in either room, goes through
one `mcp_schema.proxy.ReportLog`: counting there counts each once, without
a line in the rooms. Nothing here imports OpenTelemetry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_schema.proxy.reports import Report, ReportLog

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

__all__ = ["SIDES", "CountedReportLog"]

SIDES = {"client->server": "received", "server->client": "sent"}
"""``mcp_schema.direction`` of a finding: ``received`` from the client,
``sent`` by the server toward it."""


class CountedReportLog(ReportLog):
    """A `ReportLog` that counts each report (`Telemetry.count_refused`, by
    code and side; the method is not in a report: ``_OTHER``)."""

    def __init__(self, telemetry: Telemetry, **options: int) -> None:
        super().__init__(**options)
        self.telemetry = telemetry

    def add(self, report: Report) -> None:
        if self.telemetry.active:
            self.telemetry.count_refused(report["code"], SIDES[report["direction"]])
        super().add(report)
