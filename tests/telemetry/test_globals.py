"""A `Telemetry` of the global providers, made while they are the API's
proxies, once an SDK is set behind them. The process's globals stay as they
are: each test has a proxy provider of its own, and the look-ups patched."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.metrics._internal import _ProxyMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_schema.telemetry import counts
from mcp_schema.telemetry.recorder import Telemetry


@dataclass
class Globals:
    proxy: _ProxyMeterProvider
    current: list[Any]
    reader: InMemoryMetricReader
    sdk: MeterProvider

    def set_sdk(self) -> None:
        self.proxy.on_set_meter_provider(self.sdk)
        self.current[0] = self.sdk

    def values(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        return [
            getattr(point, "value", None) or getattr(point, "count", None)
            for resource in (data.resource_metrics if data else ())
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


@pytest.fixture
def globals_(monkeypatch: pytest.MonkeyPatch) -> Iterator[Globals]:
    proxy = _ProxyMeterProvider()
    current: list[Any] = [proxy]
    monkeypatch.setattr(metrics, "get_meter_provider", lambda: current[0])
    monkeypatch.setattr(counts, "_global", [])
    reader = InMemoryMetricReader()
    sdk = MeterProvider(metric_readers=[reader])
    yield Globals(proxy, current, reader, sdk)
    sdk.shutdown()


def test_counts_made_before_and_after_an_sdk_is_set_are_all_collected(
    globals_: Globals,
) -> None:
    before = Telemetry()
    globals_.set_sdk()
    after = Telemetry()
    before.count_refused(-32700, "received")
    after.count_refused(-32700, "received")
    assert globals_.values("mcp_schema.refused") == [2]


def test_once_active_the_sdk_itself_records_not_the_proxies(
    globals_: Globals, monkeypatch: pytest.MonkeyPatch
) -> None:
    telemetry = Telemetry()
    assert not telemetry.active
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: tracer_provider)
    monkeypatch.setattr(telemetry, "_quiet_until", 0.0)
    globals_.set_sdk()
    assert telemetry.active
    assert not isinstance(telemetry._tracer, trace.ProxyTracer)  # no forwarding layer
    assert type(telemetry.server_duration).__module__.startswith("opentelemetry.sdk")
    telemetry.server_operation("ping", request_id=1).end()
    assert [s.name for s in exporter.get_finished_spans()] == ["ping"]
    assert globals_.values("mcp.server.operation.duration") == [1]  # recorded once
    tracer_provider.shutdown()
