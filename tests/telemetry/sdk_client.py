"""``python -m tests.telemetry.sdk_client URL MODE``: the official Python SDK
client (``mcp``) lists the tools, then calls ``echo`` at URL (``auto``: 2026-07-28, ``legacy``:
the handshake era) with an OpenTelemetry SDK tracer recording in memory,
and prints its spans as one JSON list (`tests.telemetry.exported.as_json`)."""

from __future__ import annotations

import json
import sys

import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.telemetry.exported import as_json


async def call(url: str, mode: str) -> None:
    from mcp import Client  # after the provider is set: its tracer is a proxy anyway

    with anyio.fail_after(30):
        async with Client(url, mode=mode, read_timeout_seconds=10, cache=None) as client:
            await client.list_tools()  # what the gateway learns the tool's name from
            await client.call_tool("echo", {"text": "traced"})


def main() -> None:
    url, mode = sys.argv[1:]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    anyio.run(call, url, mode)
    print(json.dumps([as_json(s, "client") for s in exporter.get_finished_spans()]))


if __name__ == "__main__":
    main()
