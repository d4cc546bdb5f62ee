"""A real Prometheus server (Debian's ``prometheus``) scrapes the metrics
listeners of the three replicas (``python -m mcp_schema serve --metrics``)
and of a ``gateway --metrics`` in front of them; its HTTP API then answers
the questions an operator asks: requests by method and era, and the
refusals after a hostile request, at the replicas and at the gateway."""

from __future__ import annotations

import json
import shutil
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from mcp_schema.http_headers import request_headers
from tests.cluster.harness import WAIT, Cluster, _started, running
from tests.http.test_broker import _free_port

pytestmark = pytest.mark.cluster

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
STATELESS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
CONFIG = """\
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: replicas
    static_configs:
      - targets: [{replicas}]
  - job_name: gateway
    static_configs:
      - targets: ["{gateway}"]
"""


@dataclass
class Scraped:
    cluster: Cluster
    gateway: str  # the gateway's MCP endpoint
    prometheus: str  # Prometheus's base URL


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("prometheus is not installed (Debian: apt-get install prometheus)")
    work = tmp_path_factory.mktemp("prometheus")
    with running(work, metrics=True) as cluster, ExitStack() as stack:
        port, metrics = _free_port(), f"127.0.0.1:{_free_port()}"
        command = [sys.executable, "-m", "mcp_schema", "gateway", "--listen", f"127.0.0.1:{port}"]
        command += ["--upstream", cluster.url, "--metrics", metrics]
        _started(stack, command, port, "gateway", work / "gateway.log")
        targets = ", ".join(f'"{r.metrics}"' for r in cluster.replicas)
        config = work / "prometheus.yml"
        config.write_text(CONFIG.format(replicas=targets, gateway=metrics))
        web = _free_port()
        command = [binary, f"--config.file={config}", f"--storage.tsdb.path={work / 'tsdb'}"]
        command += [f"--web.listen-address=127.0.0.1:{web}"]
        _started(stack, command, web, "prometheus", work / "prometheus.log")
        yield Scraped(cluster, f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{web}")


def query(scraped: Scraped, promql: str) -> list[dict[str, Any]]:
    url = f"{scraped.prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as answer:
        found = json.loads(answer.read())
    assert found["status"] == "success", found
    result: list[dict[str, Any]] = found["data"]["result"]
    return result


def waited(
    scraped: Scraped, promql: str, labels: tuple[str, ...], enough: Any
) -> dict[tuple[str, ...], float]:
    """The query's values by the values of ``labels``, once ``enough`` of
    them (within WAIT)."""
    deadline = time.monotonic() + WAIT
    while True:
        values = {
            tuple(r["metric"].get(label, "") for label in labels): float(r["value"][1])
            for r in query(scraped, promql)
        }
        if enough(values) or time.monotonic() > deadline:
            return values
        time.sleep(0.5)


def post(http: httpx.Client, url: str, value: dict[str, Any], **headers: str) -> httpx.Response:
    sent = {**HEADERS, **request_headers(value), **headers}
    return http.post(url, content=json.dumps(value), headers=sent)


def test_prometheus_counts_requests_by_method_and_era(scraped: Scraped) -> None:
    with httpx.Client(timeout=30) as http:
        for i in range(3):
            call = {"name": "echo", "arguments": {"text": "hi"}, "_meta": STATELESS}
            value = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}
            assert post(http, scraped.gateway, value).status_code == 200
        opened = post(http, scraped.gateway, INIT)
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        post(http, scraped.gateway, initialized, **{"mcp-session-id": session})
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        post(http, scraped.gateway, listing, **{"mcp-session-id": session})
    promql = (
        "sum by (mcp_method_name, mcp_schema_era) "
        '(mcp_server_operation_duration_seconds_count{job="replicas"})'
    )

    labels = ("mcp_method_name", "mcp_schema_era")

    # Each replica is scraped on its own schedule: wait for every count.
    def enough(v: dict[tuple[str, ...], float]) -> bool:
        return ("tools/list", "handshake") in v and v.get(("tools/call", "stateless"), 0) >= 3

    values = waited(scraped, promql, labels, enough)
    assert values[("tools/call", "stateless")] >= 3
    assert values[("initialize", "handshake")] >= 1
    assert values[("tools/list", "handshake")] >= 1


def test_prometheus_counts_a_hostile_requests_refusal(scraped: Scraped) -> None:
    with httpx.Client(timeout=30) as http:
        call = {"name": "echo", "arguments": {"text": "hi"}, "_meta": STATELESS}
        value = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call}
        evil = post(http, scraped.cluster.url, value, origin="https://evil.example")
        assert evil.status_code == 403
        # Arguments that are no object: the gateway reports it, the replica refuses it.
        invalid = {**value, "id": 10, "params": {**call, "arguments": "no object"}}
        post(http, scraped.gateway, invalid, **request_headers(value))
    at_replicas = 'sum by (http_response_status_code) (mcp_schema_refused_total{job="replicas"})'
    values = waited(scraped, at_replicas, ("http_response_status_code",), lambda v: ("403",) in v)
    assert values[("403",)] >= 1
    at_gateway = (
        "sum by (rpc_response_status_code, mcp_schema_direction) "
        '(mcp_schema_refused_total{job="gateway"})'
    )
    values = waited(scraped, at_gateway, ("rpc_response_status_code", "mcp_schema_direction"), bool)
    assert any(direction == "received" for _, direction in values), values
