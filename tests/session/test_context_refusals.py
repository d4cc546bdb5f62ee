"""The request context helpers on hostile input: bad ``_meta`` is -32602, a caller's wrong types are ``TypeError``.

Each must end in a result or a typed `McpError` (a wrong argument type from the
calling program: ``TypeError``), in linear cost, with bounded error output.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_schema import codec, context
from mcp_schema.errors import InvalidParamsError
from tests.hostile import META, call, raw


def handshake_request(meta: dict[str, Any]) -> Any:
    return codec.decode(raw(call(meta)), version="2025-11-25")


@pytest.mark.parametrize(
    ("meta", "path"),
    [
        (
            {**META, "io.modelcontextprotocol/clientCapabilities": 5},
            '$.params._meta["io.modelcontextprotocol/clientCapabilities"]',
        ),
        (
            {**META, "io.modelcontextprotocol/clientCapabilities": [1]},
            '$.params._meta["io.modelcontextprotocol/clientCapabilities"]',
        ),
        (
            {**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": 5}},
            '$.params._meta["io.modelcontextprotocol/clientCapabilities"]["sampling"]',
        ),
        (
            {**META, "io.modelcontextprotocol/clientInfo": 5},
            '$.params._meta["io.modelcontextprotocol/clientInfo"]',
        ),
        (
            {**META, "io.modelcontextprotocol/protocolVersion": 5},
            '$.params._meta["io.modelcontextprotocol/protocolVersion"]',
        ),
        (
            {**META, "io.modelcontextprotocol/logLevel": ["debug"]},
            '$.params._meta["io.modelcontextprotocol/logLevel"]',
        ),
    ],
)
def test_request_context_refuses_bad_meta_with_invalid_params(
    meta: dict[str, Any], path: str
) -> None:
    # A handshake-era request: decode does not read these keys, so they reach the helper.
    request = handshake_request(meta)
    with pytest.raises(InvalidParamsError) as info:
        context.RequestContext.from_request(request)
    assert info.value.errors[0]["path"] == path


def test_require_client_capabilities_refuses_non_object_capabilities() -> None:
    request = handshake_request({"io.modelcontextprotocol/clientCapabilities": 5})
    with pytest.raises(InvalidParamsError):
        context.require_client_capabilities(request, {"sampling": {}})


def test_context_helpers_refuse_wrong_caller_types() -> None:
    with pytest.raises(TypeError):
        context.RequestContext.from_request({"method": "x"})  # type: ignore[arg-type]
    note = codec.decode(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    with pytest.raises(TypeError):
        context.RequestContext.from_request(note)
    request = codec.decode(raw(call()))
    with pytest.raises(TypeError):
        context.require_client_capabilities(request, 5)  # type: ignore[arg-type]


def input_required() -> Any:
    response = codec.decode(
        raw(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "resultType": "input_required",
                    "requestState": "s",
                    "inputRequests": {
                        "q": {
                            "method": "elicitation/create",
                            "params": {
                                "message": "?",
                                "requestedSchema": {"type": "object", "properties": {}},
                            },
                        }
                    },
                },
            }
        ),
        version="2026-07-28",
        method="tools/call",
    )
    assert isinstance(response, codec.ResultResponse)
    return response.result


def test_retry_with_a_bad_action_is_invalid_params() -> None:
    request = codec.decode(raw(call()))
    with pytest.raises(InvalidParamsError) as info:
        context.retry_with_input(request, input_required(), {"q": {"action": "maybe"}})
    assert any("inputResponses" in e["path"] for e in info.value.errors)
    with pytest.raises(TypeError):
        context.retry_with_input(request, input_required(), {"q": 5})  # type: ignore[dict-item]
