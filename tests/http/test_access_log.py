"""The opt-in access log: one JSON line per request with its method, tool,
era, status, duration and principal, never a token, an argument or a
result; its file created 0600."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.http import Endpoint
from mcp_schema.http.access_log import AccessLog
from mcp_schema.http.asgi import App
from mcp_schema.http_headers import request_headers
from mcp_schema.server import Server

SECRET = "Bearer the-token-that-must-never-be-logged"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(text: str, id: int = 1) -> dict[str, Any]:
    params = {"name": "echo", "arguments": {"text": text}, "_meta": META}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


async def post(served: Any, *bodies: dict[str, Any], path: str = "/mcp") -> list[int]:
    transport = httpx.ASGITransport(app=served)
    statuses = []
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        for body in bodies:
            headers = {**HEADERS, **request_headers(body), "authorization": SECRET}
            statuses.append((await http.post(path, json=body, headers=headers)).status_code)
    return statuses


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.anyio
async def test_one_line_per_request_and_nothing_secret(tmp_path: Path) -> None:
    path = tmp_path / "access.jsonl"
    log = AccessLog(str(path))
    served = App(Endpoint(lambda s, e: None, info={"name": "e", "version": "1"}), access_log=log)
    assert await post(served, call("the argument"), path="/elsewhere") == [404]
    log.close()
    assert os.stat(path).st_mode & 0o777 == 0o600
    (line,) = lines(path)
    assert set(line) == {"time", "http", "method", "tool", "era", "status", "duration", "principal"}
    assert (line["http"], line["status"], line["method"], line["principal"]) == (
        "POST",
        404,
        None,
        None,
    )
    text = path.read_text()
    assert "the-token" not in text and "the argument" not in text


@pytest.mark.anyio
async def test_a_servers_lines_name_method_tool_and_era(tmp_path: Path) -> None:
    path = tmp_path / "access.jsonl"
    server = Server("logged")

    @server.tool()
    def echo(text: str) -> str:
        """``text`` back."""
        return text

    served = server.asgi(env={"MCP_ACCESS_LOG": str(path)})
    assert await post(served, call("kept out"), call("kept out too", 2)) == [200, 200]
    found = lines(path)
    assert [(f["method"], f["tool"], f["era"], f["status"]) for f in found] == [
        ("tools/call", "echo", "stateless", 200)
    ] * 2
    assert all(0 <= f["duration"] < 30 for f in found)
    text = path.read_text()
    assert "kept out" not in text and "the-token" not in text


@settings(max_examples=25, deadline=None)
@given(name=st.text(max_size=300), argument=st.text(max_size=64))
def test_a_peers_names_are_clipped_and_its_arguments_never_logged(
    tmp_path_factory: pytest.TempPathFactory, name: str, argument: str
) -> None:
    from mcp_schema.http.access_log import SEEN, noted

    path = tmp_path_factory.mktemp("log") / "access.jsonl"
    log = AccessLog(str(path))
    seen = log.begin()
    secret = "SECRET" + argument  # what no line may hold (a name has no upper case here)
    message = {"method": "tools/call", "params": {"name": name.lower(), "arguments": secret}}
    noted(message, True)
    assert SEEN.get() is seen
    log.write("POST", seen, 200)
    log.close()
    (line,) = lines(path)
    assert line["tool"] == name.lower()[:128]
    assert "SECRET" not in path.read_text()
