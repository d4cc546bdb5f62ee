"""One trace across real peers: the official Python SDK client (``mcp``,
its OpenTelemetry tracer recording in memory) calls
``examples/http_server.py`` through ``gateway`` in monitor mode, each in a
process of its own; the gateway and the server write their spans to files
(`tests.telemetry.exported`). The client's span, the gateway's two and the
server's share one trace id, each the parent of the next, in both eras."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.harness import _started
from tests.http.test_broker import _free_port

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXPORTED = [sys.executable, "-m", "tests.telemetry.exported"]


@pytest.fixture(scope="module")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    work = tmp_path_factory.mktemp("traced")
    with ExitStack() as stack:
        port = _free_port()
        command = [*EXPORTED, str(work / "server.jsonl"), "-m", "uvicorn"]
        command += ["--app-dir", str(EXAMPLES), "http_server:app", "--port", str(port)]
        command += ["--log-level", "warning"]
        _started(stack, command, port, "server", work / "server.log", OTEL_SERVICE_NAME="server")
        listen = _free_port()
        command = [*EXPORTED, str(work / "gateway.jsonl"), "-m", "mcp_schema", "gateway"]
        command += ["--listen", f"127.0.0.1:{listen}", "--upstream", f"http://127.0.0.1:{port}/mcp"]
        log = work / "gateway.log"
        _started(stack, command, listen, "gateway", log, OTEL_SERVICE_NAME="gateway")
        yield f"http://127.0.0.1:{listen}/mcp", work


def spans_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.slow  # three processes: about 4 s
@pytest.mark.parametrize(("mode", "era"), [("auto", "stateless"), ("legacy", "handshake")])
def test_one_trace_from_the_sdk_client_through_the_gateway_to_the_server(
    peers: tuple[str, Path], mode: str, era: str
) -> None:
    url, work = peers
    ran = subprocess.run(
        [sys.executable, "-m", "tests.telemetry.sdk_client", url, mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    spans = json.loads(ran.stdout)  # the SDK names its own "MCP send tools/call echo"
    client = [s for s in spans if s["attributes"].get("mcp.method.name") == "tools/call"]
    assert len(client) == 1 and client[0]["kind"] == "CLIENT", client
    (start,) = client
    everything = [*spans_of(work / "gateway.jsonl"), *spans_of(work / "server.jsonl"), start]
    trace = [s for s in everything if s["trace_id"] == start["trace_id"]]
    chain = [start]
    while children := [s for s in trace if s["parent_id"] == chain[-1]["span_id"]]:
        assert len(children) == 1, children
        chain.append(children[0])
    shown = [(s["service"], s["kind"]) for s in chain]
    assert shown == [
        ("client", "CLIENT"),
        ("gateway", "SERVER"),
        ("gateway", "CLIENT"),
        ("server", "SERVER"),
    ]
    # The server declares its tools; the gateway learned them from the list the client asked.
    assert [s["name"] for s in chain[1:]] == ["tools/call echo"] * 3
    assert {s["attributes"]["mcp_schema.era"] for s in chain[1:]} == {era}
    (work / f"trace-{mode}.json").write_text(json.dumps(chain))  # docs/guide/trace_picture.py
