"""The gateway's findings counted as they are reported (`CountedReportLog`),
by code and side, in the order the log takes them."""

from __future__ import annotations

from mcp_schema.proxy.reports import make_report
from mcp_schema.telemetry.findings import CountedReportLog
from tests.telemetry.conftest import Recorded


def test_each_finding_is_counted_by_code_and_side(recorded: Recorded) -> None:
    log = CountedReportLog(recorded.telemetry)
    log.add(make_report("client", 1, -32602, "Invalid params", None, 7, b'{"id":7}'))
    log.add(make_report("client", 2, -32602, "Invalid params", None, 8, b'{"id":8}'))
    log.add(make_report("server", 1, -32600, "Invalid Request", None, None, b"[]"))
    counted = {
        (p.attributes["rpc.response.status_code"], p.attributes["mcp_schema.direction"]): p.value
        for p in recorded.points("mcp_schema.refused")
    }
    assert counted == {("-32602", "received"): 2, ("-32600", "sent"): 1}
    log.finish()
