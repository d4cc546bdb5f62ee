"""What the OpenTelemetry SDK itself costs per request, whoever calls it:
``python -m bench.telemetry_floor [--requests N] [--rounds R]``.

The least the MCP semantic conventions ask of a server per request, made
straight on the SDK as ``bench.telemetry_apps``' ``sdk`` row sets it up
(AlwaysOn sampling, a BatchSpanProcessor to an exporter that drops, a
MeterProvider with a reader): one SERVER span started with the attributes
the package gives a stateless ``tools/call echo`` and ended, and one
``mcp.server.operation.duration`` record with its attributes (both read
once from a real operation). No package code runs in what is timed: this
is the floor under any instrumentation's overhead, and
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
CALL = {"name": "echo", "arguments": {"text": "hello"}}


def _calls() -> tuple[Callable[[], None], Callable[[], None], dict[str, Any]]:
    """The span's and the record's call on providers of their own, with the
    attributes the package records for the call (read once, from a
    `mcp_schema.telemetry.Telemetry` on the same providers: none of its
    code runs in the calls); and those attributes."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON
    from opentelemetry.trace import SpanKind

    from mcp_schema.telemetry import Telemetry

    class Dropping(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracers = TracerProvider(sampler=ALWAYS_ON)
    tracers.add_span_processor(BatchSpanProcessor(Dropping()))
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    telemetry = Telemetry(tracer_provider=tracers, meter_provider=meters)
    operation = telemetry.server_operation(
        "tools/call",
        request_id=1,
        version="2026-07-28",
        era="stateless",
        params=CALL,
        headers={},
        client=("127.0.0.1", 50000),
    )
    name = operation.span.name  # type: ignore[attr-defined]  # the SDK's span
    span_attributes = dict(operation.span.attributes)  # type: ignore[attr-defined]
    operation.end()
    collected = reader.get_metrics_data()
    assert collected is not None  # the operation recorded its duration
    (metric,) = collected.resource_metrics[0].scope_metrics[0].metrics
    record_attributes = dict(metric.data.data_points[0].attributes or {})
    tracer = tracers.get_tracer("bench.telemetry_floor")
    histogram = meters.get_meter("bench").create_histogram(metric.name, unit="s")

    def span() -> None:
        tracer.start_span(name, kind=SpanKind.SERVER, attributes=span_attributes).end()

    def record() -> None:
        histogram.record(0.0002, record_attributes)

    recorded = {"span": span_attributes, "record": record_attributes}
    return span, record, recorded


def _cpu_us(call: Callable[[], None], requests: int) -> float:
    started = time.process_time()
    for _ in range(requests):
        call()
    return (time.process_time() - started) / requests * 1e6


def floor(requests: int = REQUESTS, rounds: int = ROUNDS) -> dict[str, Any]:
    """Median CPU microseconds of the span and of the record, alternating rounds."""
    span, record, recorded = _calls()
    _cpu_us(span, 1000), _cpu_us(record, 1000)  # warm-up: lazy builds
    spans, records = [], []
    for _ in range(rounds):
        spans.append(_cpu_us(span, requests))
        records.append(_cpu_us(record, requests))
    found: dict[str, Any] = {
        "span_us": statistics.median(spans),
        "record_us": statistics.median(records),
    }
    found["floor_us"] = found["span_us"] + found["record_us"]
    found["attributes"] = {k: len(v) for k, v in recorded.items()}
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
