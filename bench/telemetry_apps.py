"""The minimal app of ``bench.front_apps`` three ways, for ``bench.telemetry``:
``off`` (``telemetry=False``: as without the ``otel`` extra), ``api`` (the
API installed with no SDK behind the global providers, the default) and
``sdk`` (an SDK set globally, as ``opentelemetry-instrument`` sets it:
AlwaysOn sampling, a BatchSpanProcessor to an exporter that drops, and a
MeterProvider with a reader)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.front_apps import serve
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App

INFO = {"name": "bench-minimal", "version": "1"}


def _app(telemetry: Any) -> App:
    return App(Endpoint(serve, info=INFO, capabilities={"tools": {}}, telemetry=telemetry))


def _sdk() -> None:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    class Dropping(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider(sampler=ALWAYS_ON)
    tracer_provider.add_span_processor(BatchSpanProcessor(Dropping()))
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


off = _app(False)
api = _app(None)


def __getattr__(name: str) -> App:
    # uvicorn imports ``bench.telemetry_apps:sdk`` in a process of its own:
    # only that process sets the global SDK providers.
    if name == "sdk":
        _sdk()
        app = _app(None)
        globals()["sdk"] = app
        return app
    raise AttributeError(name)
