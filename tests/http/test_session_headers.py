"""Streamable HTTP headers read with a frame: ``ServerSession.receive(frame,
headers=..., tools=...)`` checks them in the same pass, and a refusal answers
the request it refuses (its id, never null)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_schema.errors import HeaderMismatchError
from mcp_schema.http_headers import ToolHeaders, check_request_headers, request_headers
from mcp_schema.session import ProtocolError, RequestReceived, ServerSession

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
TOOL: dict[str, Any] = {
    "name": "deploy",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    },
}


def call(rid: int, region: str = "eu") -> dict[str, Any]:
    params = {"name": "deploy", "arguments": {"region": region}, "_meta": META}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def session() -> ServerSession:
    return ServerSession(info={"name": "s", "version": "1"}, capabilities={"tools": {}})


def test_a_header_refusal_answers_the_requests_id() -> None:
    headers = request_headers(call(7), TOOL) | {"Mcp-Param-Region": "us"}
    with pytest.raises(HeaderMismatchError) as refusal:
        check_request_headers(headers, call(7), TOOL)
    assert refusal.value.to_response()["id"] == 7


@pytest.mark.parametrize("given", [[TOOL], [ToolHeaders(TOOL)], None])
def test_receive_checks_the_param_headers_of_the_tool_called(given: list[Any] | None) -> None:
    serving = session()
    if given is None:  # the tools the session listed
        listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
        (request,) = [
            e for e in serving.receive(json.dumps(listed)) if isinstance(e, RequestReceived)
        ]
        serving.respond(request, {"tools": [TOOL]})
        serving.data_to_send()
    good = call(2)
    events = serving.receive(json.dumps(good), headers=request_headers(good, TOOL), tools=given)
    assert [type(e) for e in events if not isinstance(e, RequestReceived)] in (
        [],
        [type(events[0])],
    )
    assert any(isinstance(e, RequestReceived) for e in events)
    lying = request_headers(call(3), TOOL) | {"Mcp-Param-Region": "us"}
    (refused,) = serving.receive(json.dumps(call(3)), headers=lying, tools=given)
    assert isinstance(refused, ProtocolError) and refused.error.code == -32020
    (frame,) = [json.loads(f) for f in serving.data_to_send()]
    assert frame["id"] == 3 and frame["error"]["data"]["header"] == "Mcp-Param-Region"


def test_the_version_header_must_agree_with_the_body() -> None:
    serving = session()
    listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    headers = request_headers(listed) | {"MCP-Protocol-Version": "2025-11-25"}
    (refused,) = serving.receive(json.dumps(listed), headers=headers)
    assert isinstance(refused, ProtocolError) and refused.error.code == -32020
    assert serving.version is None
