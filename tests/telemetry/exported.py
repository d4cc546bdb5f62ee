"""``python -m tests.telemetry.exported SPANS -m MODULE ARGS...``: run
``MODULE`` as ``python -m`` would, with an OpenTelemetry SDK behind the
global tracer provider that writes every span it ends to the file SPANS,
one JSON line each (`JsonLines`). What the trace test and
``docs/guide/trace_picture.py`` read."""

from __future__ import annotations

import json
import os
import runpy
import sys
import threading
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


def as_json(span: ReadableSpan, service: str) -> dict[str, object]:
    context, parent = span.get_span_context(), span.parent
    return {
        "service": service,
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": f"{context.trace_id:032x}" if context else None,
        "span_id": f"{context.span_id:016x}" if context else None,
        "parent_id": f"{parent.span_id:016x}" if parent else None,
        "start": span.start_time,
        "end": span.end_time,
        "attributes": dict(span.attributes or {}),
    }


class JsonLines(SpanExporter):
    """Each span a JSON line appended to ``path`` (one write per line)."""

    def __init__(self, path: str, service: str) -> None:
        self.path, self.service = path, service
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        data = "".join(json.dumps(as_json(s, self.service)) + "\n" for s in spans)
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(data)
        return SpanExportResult.SUCCESS


def main() -> None:
    path, flag, module, *rest = sys.argv[1:]
    assert flag == "-m", "usage: python -m tests.telemetry.exported SPANS -m MODULE ARGS..."
    service = os.environ.get("OTEL_SERVICE_NAME", module)
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(JsonLines(path, service)))
    trace.set_tracer_provider(provider)
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
