"""What the OpenTelemetry SDK itself costs per request, whoever calls it:
``python -m bench.telemetry_floor [--requests N] [--rounds R]``.

The least the MCP semantic conventions ask of a server per request, made
straight on the SDK as ``bench.telemetry_apps``' ``sdk`` row sets it up
(AlwaysOn sampling, a BatchSpanProcessor to an exporter that drops, a
MeterProvider with a reader): one SERVER span started with the attributes
a stateless ``tools/call echo`` carries and ended, and one
``mcp.server.operation.duration`` record with its attributes. No package
code runs: this is the floor under any instrumentation's overhead, and
with the ``off`` row's CPU per request it bounds the ``sdk / off`` ratio
any instrumentation can reach (`bound`). The providers are this process's
own, never the global ones. Run pinned to the server core by
``bench.telemetry``, beside its rows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

REQUESTS = 20_000
ROUNDS = 5
SPAN: dict[str, str | int] = {
    "mcp.method.name": "tools/call",
    "mcp.protocol.version": "2026-07-28",
    "jsonrpc.request.id": "1",
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "echo",
    "network.transport": "tcp",
    "network.protocol.name": "http",
    "network.protocol.version": "1.1",
    "client.address": "127.0.0.1",
    "client.port": 50000,
    "server.address": "127.0.0.1",
    "server.port": 8000,
}
DURATION = {k: SPAN[k] for k in ("mcp.method.name", "mcp.protocol.version", "gen_ai.tool.name")}


def _calls() -> tuple[Callable[[], None], Callable[[], None]]:
    """The span's and the record's call, on providers of their own."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON
    from opentelemetry.trace import SpanKind

    class Dropping(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracers = TracerProvider(sampler=ALWAYS_ON)
    tracers.add_span_processor(BatchSpanProcessor(Dropping()))
    tracer = tracers.get_tracer("bench.telemetry_floor")
    meter = MeterProvider(metric_readers=[InMemoryMetricReader()]).get_meter("bench")
    histogram = meter.create_histogram("mcp.server.operation.duration", unit="s")

    def span() -> None:
        tracer.start_span("tools/call echo", kind=SpanKind.SERVER, attributes=SPAN).end()

    def record() -> None:
        histogram.record(0.0002, DURATION)

    return span, record


def _cpu_us(call: Callable[[], None], requests: int) -> float:
    started = time.process_time()
    for _ in range(requests):
        call()
    return (time.process_time() - started) / requests * 1e6


def floor(requests: int = REQUESTS, rounds: int = ROUNDS) -> dict[str, float]:
    """Median CPU microseconds of the span and of the record, alternating rounds."""
    span, record = _calls()
    _cpu_us(span, 1000), _cpu_us(record, 1000)  # warm-up: lazy builds
    spans, records = [], []
    for _ in range(rounds):
        spans.append(_cpu_us(span, requests))
        records.append(_cpu_us(record, requests))
    found = {"span_us": statistics.median(spans), "record_us": statistics.median(records)}
    found["floor_us"] = found["span_us"] + found["record_us"]
    return found


def bound(off_us: float, floor_us: float) -> float:
    """The best ``sdk / off`` req/s ratio: ``off``'s CPU per request plus the floor."""
    return off_us / (off_us + floor_us)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.telemetry_floor", description=__doc__)
    parser.add_argument("--requests", type=int, default=REQUESTS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--json", action="store_true", help="one JSON object (bench.telemetry's)")
    args = parser.parse_args(argv)
    found: dict[str, Any] = floor(args.requests, args.rounds)
    if args.json:
        print(json.dumps(found))
        return 0
    print(
        f"  SDK floor {found['floor_us']:.1f} CPU us/request "
        f"(span {found['span_us']:.1f}, duration record {found['record_us']:.1f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
