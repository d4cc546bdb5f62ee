"""The metrics listener serves what the package recorded, in Prometheus's format."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import pytest

from mcp_schema.telemetry.prometheus import MetricsListener, listen_address, serve_metrics
from mcp_schema.telemetry.recorder import Telemetry


@pytest.fixture
def listener() -> Iterator[MetricsListener]:
    served = serve_metrics("127.0.0.1:0", install=False)
    yield served
    served.close()


def scrape(listener: MetricsListener) -> str:
    url = f"http://{listener.host}:{listener.port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as answer:
        return str(answer.read().decode())


def test_operations_and_refusals_are_scraped(listener: MetricsListener) -> None:
    telemetry = Telemetry(meter_provider=listener.meter_provider, tools=["echo"])
    telemetry.server_operation("tools/call", request_id=1, params={"name": "echo"}).end()
    telemetry.count_refused(-32700, "received")
    text = scrape(listener)
    assert "mcp_server_operation_duration_seconds_bucket{" in text
    assert 'gen_ai_tool_name="echo"' in text
    assert "mcp_schema_refused_total{" in text and 'rpc_response_status_code="-32700"' in text


@pytest.mark.parametrize(
    ("text", "address"),
    [("9464", ("127.0.0.1", 9464)), ("0.0.0.0:9464", ("0.0.0.0", 9464)), ("[::1]:80", ("::1", 80))],
)
def test_listen_address(text: str, address: tuple[str, int]) -> None:
    assert listen_address(text) == address


@pytest.mark.parametrize("text", ["", "host:", "host:99999", "host:x1", "[nope]:80", ":-1"])
def test_bad_listen_addresses_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        listen_address(text)
