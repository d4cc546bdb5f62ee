"""``MCP_VERSIONS``: the versions ``examples/server.py`` (stdio) and
``examples/http_server.py`` (HTTP) serve; every known one when unset, and a
name the package does not know stops the server at start-up."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_schema.http import Endpoint
from mcp_schema.versions import HANDSHAKE_VERSIONS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}}


def stdio(versions: str | None, *messages: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MCP_VERSIONS"}
    if versions is not None:
        env["MCP_VERSIONS"] = versions
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "server.py")],
        input=lines,
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )


def test_the_stdio_server_serves_only_the_versions_named() -> None:
    done = stdio("2025-06-18", INITIALIZE, LIST)
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["result"]["protocolVersion"] == "2025-06-18"  # not the 2025-11-25 asked for
    assert second["error"]["code"] == -32022  # 2026-07-28 is not served
    assert second["error"]["data"]["supported"] == ["2025-06-18"]


def test_the_stdio_server_serves_every_version_when_unset() -> None:
    done = stdio(None, INITIALIZE)
    assert json.loads(done.stdout)["result"]["protocolVersion"] == "2025-11-25"


def test_an_unknown_version_stops_the_stdio_server() -> None:
    done = stdio("2025-06-18,2099-01-01", INITIALIZE)
    assert done.returncode != 0 and done.stdout == ""
    assert "2099-01-01" in done.stderr.splitlines()[-1]  # the error names it


def test_the_http_server_serves_only_the_versions_named() -> None:
    example = runpy.run_path(str(EXAMPLES / "http_server.py"))
    served: Endpoint = example["server"].asgi(env={}, versions="2026-07-28").endpoint
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    answer = served.handle("POST", "/mcp", headers, json.dumps(INITIALIZE).encode())
    refused = json.loads(answer.body)["error"]
    assert answer.status == 400 and refused["code"] == -32022  # no session is served
    assert refused["data"]["supported"] == ["2026-07-28"]
    listed = served.handle(
        "POST",
        "/mcp",
        {**headers, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"},
        json.dumps(LIST).encode(),
    )
    assert listed.status == 200 and "tools" in json.loads(listed.body)["result"]
    both: Endpoint = example["server"].asgi(env={}).endpoint
    assert both.handshake == HANDSHAKE_VERSIONS and served.handshake == ()


def test_an_unknown_version_stops_the_http_server() -> None:
    example = runpy.run_path(str(EXAMPLES / "http_server.py"))
    with pytest.raises(SystemExit, match=r"MCP_VERSIONS: .*2099-01-01"):
        example["server"].asgi(env={}, versions="2099-01-01")
