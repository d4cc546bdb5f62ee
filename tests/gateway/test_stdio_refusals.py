"""What a hostile peer sends the stdio front and its bridge: a server's line
too long, not JSON, or answering no request (reported, never forwarded, the
session going on); a client's request for no session, a malformed
``_meta`` or a forged ``requestState`` (refused, and reported); a body too
long (refused before it is read)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_schema.gateway.bridge.links import StdioBridge
from mcp_schema.gateway.monitor.exchange import ExchangeValidator
from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
from mcp_schema.proxy import ReportLog
from tests.gateway.test_gateway import HEADERS, META, reported, serving
from tests.hostile import raw

TESTED = [sys.executable, str(Path(__file__).with_name("stdio_server.py"))]


def calling(tool: str, **params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    body["params"] = {"name": tool, "arguments": {"text": "hi"}, "_meta": META, **params}
    return body


def post(url: str, body: Any, **headers: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else raw(body)
    return httpx.post(url, content=content, headers={**HEADERS, **headers}, timeout=20)


@pytest.mark.parametrize(
    ("tool", "code", "said"),
    [
        ("long", -32700, "longer than the limit of 400"),
        ("garbage", -32700, "not JSON"),
        ("stray", -32600, "a response to no request"),
    ],
)
def test_a_servers_bad_line_is_reported_and_the_request_still_answered(
    tool: str, code: int, said: str
) -> None:
    log = ReportLog()
    with serving(StdioGatewayApp(TESTED, reports=log, max_line_bytes=400)) as url:
        answer = post(url, calling(tool), **{"mcp-name": tool})
    assert answer.status_code == 200 and answer.json()["id"] == 3  # the unknown tool's error
    [report] = reported(log)
    assert report["code"] == code and said in report["message"]
    assert report["direction"] == "server->client"


@pytest.fixture(scope="module")
def bridged() -> Iterator[tuple[str, ReportLog]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_VERSIONS", "2025-06-18")
        log = ReportLog()
        validator = ExchangeValidator(max_body=2000)
        app = StdioGatewayApp(TESTED, reports=log, validator=validator, bridge=StdioBridge)
        with serving(app) as url:
            yield url, log


def test_a_handshake_era_request_names_a_live_session(bridged: tuple[str, ReportLog]) -> None:
    url = bridged[0]
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    plain = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    assert httpx.post(url, content=raw(listing), headers=plain).status_code == 400
    named = {**plain, "mcp-session-id": "nobody"}
    assert httpx.post(url, content=raw(listing), headers=named).status_code == 404
    assert httpx.get(url, headers={"mcp-session-id": "nobody"}).status_code == 404
    assert httpx.put(url).status_code == 405


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (
            calling("echo", _meta={**META, "io.modelcontextprotocol/clientCapabilities": 7}),
            400,
            -32602,
        ),
        (calling("ask", requestState="v1.forged", inputResponses={}), 400, -32602),
        (b'{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/call"}', 400, -32600),
    ],
)
def test_the_bridge_refuses_a_hostile_request_and_reports_it(
    bridged: tuple[str, ReportLog], body: Any, status: int, code: int
) -> None:
    url, log = bridged
    content = body if isinstance(body, bytes) else raw(body)
    answer = post(url, content, **{"mcp-name": "ask" if b'"ask"' in content else "echo"})
    assert answer.status_code == status and answer.json()["error"]["code"] == code
    reports = reported(log)
    assert [r["code"] for r in reports][-1:] == [code]
    assert reports[-1]["direction"] == "client->server"


def test_a_body_too_long_for_the_bridge_is_refused_before_it_is_read(
    bridged: tuple[str, ReportLog],
) -> None:
    # By its Content-Length (the precheck's 413): an HTTP refusal, not a finding of the bridge's.
    answer = post(bridged[0], calling("echo", pad="x" * 3000))
    assert answer.status_code == 413 and answer.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Payload Too Large: at most 2,000 bytes"},
    }


def test_a_bridged_child_that_dies_fails_its_request_with_502_and_its_id(
    bridged: tuple[str, ReportLog],
) -> None:
    url = bridged[0]
    answer = post(url, calling("die"), **{"mcp-name": "die"})
    assert answer.status_code == 502, answer.text
    assert answer.json()["id"] == 3 and answer.json()["error"]["code"] == -32603
    again = post(url, calling("echo"), **{"mcp-name": "echo"})
    assert again.status_code == 200  # a fresh child
    assert again.json()["result"]["content"][0]["text"] == "hi"
