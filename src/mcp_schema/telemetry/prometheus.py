"""``--metrics HOST:PORT``: the package's metrics for Prometheus to scrape, on
a listener of their own (the ``prometheus`` extra: the OpenTelemetry SDK,
its Prometheus exporter and ``prometheus-client``).

The listener is not the app's: it is outside any bearer check, on loopback
unless told otherwise, and the deployment recipe's nginx does not proxy it.
Each call has a registry of its own, so two apps in one process (a test, or
the gateway beside a server) never register a collector twice.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics import MeterProvider

__all__ = ["DEFAULT_HOST", "MetricsListener", "listen_address", "serve_metrics"]

DEFAULT_HOST = "127.0.0.1"


def listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT`` or ``PORT`` (on `DEFAULT_HOST`; port 0:
    any free one), checked: ValueError naming what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = DEFAULT_HOST, text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        ipaddress.IPv6Address(host)  # ValueError when it is not one
    if not host:
        host = DEFAULT_HOST
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) < 65536:
        raise ValueError(f"--metrics wants HOST:PORT with a port from 0 to 65535, not {text!r:.80}")
    return host, int(port)


@dataclass
class MetricsListener:
    """A running metrics listener: `meter_provider` records to it; `close` stops it."""

    meter_provider: MeterProvider
    host: str
    port: int
    _server: Any

    def close(self) -> None:
        """Stop the listener and the meter provider."""
        self._server.shutdown()
        self._server.server_close()
        self.meter_provider.shutdown()


def serve_metrics(address: str, *, install: bool = True) -> MetricsListener:
    """Serve Prometheus's text format at ``http://address/metrics`` from a
    new SDK `MeterProvider`, which becomes the global one when ``install``
    and none is set yet (so every app of the process records to it)."""
    host, port = listen_address(address)
    from opentelemetry import metrics
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from opentelemetry.sdk.metrics import MeterProvider
    from prometheus_client import CollectorRegistry, start_http_server

    registry = CollectorRegistry()
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    server, _thread = start_http_server(port, host, registry=registry)
    if install and type(metrics.get_meter_provider()).__name__ == "_ProxyMeterProvider":
        metrics.set_meter_provider(provider)
    return MetricsListener(provider, host, server.server_port, server)
