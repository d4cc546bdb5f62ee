"""One `RequestContext` for both eras: a handshake-era request with its session's
``initialize`` reads like the same request projected into 2026-07-28."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from mcp_schema.codec import decode
from mcp_schema.context import RequestContext
from mcp_schema.errors import McpError
from mcp_schema.projection import ProjectionError, Session, project

CAPTURES = sorted((Path(__file__).parents[1] / "data" / "captures").glob("*2025-11-25.jsonl"))


def _fields(context: RequestContext) -> dict[str, Any]:
    return {
        "method": context.method,
        "request_id": context.request_id,
        "client_capabilities": context.client_capabilities.model_dump(
            mode="json", by_alias=True, exclude_unset=True
        ),
        "client_info": context.client_info.model_dump(
            mode="json", by_alias=True, exclude_unset=True
        )
        if context.client_info is not None
        else None,
        "log_level": context.log_level,
        "progress_token": context.progress_token,
    }


def _sessions() -> list[tuple[BaseModel, list[BaseModel]]]:
    sessions = []
    for capture in CAPTURES:
        initialize: BaseModel | None = None
        requests: list[BaseModel] = []
        for line in capture.read_text().splitlines():
            record = json.loads(line)
            message = record.get("message")
            if record["dir"] != "c2s" or not isinstance(message, dict):
                continue
            if "method" not in message or "id" not in message:
                continue
            try:
                decoded = decode(json.dumps(message), version="2025-11-25")
            except McpError:
                continue
            if message["method"] == "initialize":
                initialize = decoded
            elif initialize is not None:
                requests.append(decoded)
        if initialize is not None and requests:
            sessions.append((initialize, requests))
    return sessions


def test_both_eras_give_the_same_context_for_captured_requests() -> None:
    compared = 0
    for initialize, requests in _sessions():
        params = json.loads(initialize.model_dump_json(by_alias=True, exclude_unset=True))["params"]
        session = Session(params.get("capabilities", {}), params["clientInfo"], "warning")
        for request in requests:
            older = RequestContext.from_session(request, initialize, log_level="warning")
            try:
                newer = project(request, "2026-07-28", session=session).message
            except ProjectionError:
                continue  # a method 2026-07-28 does not have (tasks/*)
            stateless = RequestContext.from_request(newer)
            assert (older.protocol_version, stateless.protocol_version) == (
                "2025-11-25",
                "2026-07-28",
            )
            assert _fields(older) == _fields(stateless)
            compared += 1
    assert compared >= 100, compared


def test_progress_token_and_client_facts_come_through() -> None:
    initialize = decode(
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"2"}}}',
        version="2025-06-18",
    )
    request = decode(
        '{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"t",'
        '"_meta":{"progressToken":7}}}',
        version="2025-06-18",
    )
    context = RequestContext.from_session(request, initialize)
    assert _fields(context) == {
        "method": "tools/call",
        "request_id": "r",
        "client_capabilities": {"roots": {}},
        "client_info": {"name": "c", "version": "2"},
        "log_level": None,
        "progress_token": 7,
    }
    assert context.protocol_version == "2025-06-18"
    with pytest.raises(TypeError, match="initialize"):
        RequestContext.from_session(request, request)
