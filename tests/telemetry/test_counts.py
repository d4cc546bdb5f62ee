"""The package's own counters, kept in dicts and collected through the SDK's
asynchronous instruments (`mcp_schema.telemetry.counts`)."""

from __future__ import annotations

import sys
import threading

from mcp_schema.telemetry.counts import MAX_SERIES, Tally
from tests.telemetry.conftest import Recorded


def refusals(recorded: Recorded) -> dict[tuple[str, str], int]:
    return {
        (str(p.attributes["rpc.response.status_code"]), str(p.attributes["mcp.method.name"])): (
            p.value
        )
        for p in recorded.points("mcp_schema.refused")
    }


def test_counts_from_two_threads_are_all_collected(recorded: Recorded) -> None:
    telemetry, each = recorded.telemetry, 20000
    start = threading.Barrier(2)
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads taking turns often: a lost update would show

    def count(code: int) -> None:
        start.wait(timeout=10)
        for _ in range(each):
            telemetry.count_refused(code, "received", "tools/call")
            telemetry.count_refused(-32600, "received", "ping")  # one series, both threads

    threads = [threading.Thread(target=count, args=(code,)) for code in (-32601, -32602)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join(timeout=60)
    finally:
        sys.setswitchinterval(switching)
    assert not any(thread.is_alive() for thread in threads)
    assert refusals(recorded) == {
        ("-32601", "tools/call"): each,
        ("-32602", "tools/call"): each,
        ("-32600", "ping"): 2 * each,
    }


def test_collections_report_running_totals(recorded: Recorded) -> None:
    telemetry = recorded.telemetry
    telemetry.count_bridged("received", "carried", "stateless", count=3)
    assert [p.value for p in recorded.points("mcp_schema.bridge.messages")] == [3]
    telemetry.count_bridged("received", "carried", "stateless", count=2)
    telemetry.count_sealed("expired")
    assert [p.value for p in recorded.points("mcp_schema.bridge.messages")] == [5]
    (sealed,) = recorded.points("mcp_schema.state.refused")
    assert (sealed.value, dict(sealed.attributes)) == (1, {"mcp_schema.reason": "expired"})


def test_every_telemetry_of_one_provider_counts_into_the_same_instruments(
    recorded: Recorded,
) -> None:
    first, second = recorded.telemetry, recorded.fresh()
    first.count_broker("get", "ok")
    second.count_broker("get", "ok")
    second.count_share("sessions", granted=True)
    (broker,) = recorded.points("mcp_schema.broker.calls")
    assert broker.value == 2
    (share,) = recorded.points("mcp_schema.shares")
    assert dict(share.attributes) == {
        "mcp_schema.table": "sessions",
        "mcp_schema.outcome": "granted",
    }


def test_a_tally_past_its_series_counts_the_rest_as_overflow() -> None:
    tally = Tally()
    for n in range(MAX_SERIES + 10):
        tally.add((("n", n),))
    tally.add((("n", 0),))  # a series it holds still counts as itself
    totals = tally.totals()
    assert len(totals) == MAX_SERIES + 1
    assert totals[(("otel.metric.overflow", True),)] == 10 and totals[(("n", 0),)] == 2
