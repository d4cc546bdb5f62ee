"""Streamable HTTP header helpers on hostile input: header pairs and values of every shape, cyclic and deep input schemas.

Each must end in a result or a typed `McpError` (a wrong argument type from the
calling program: ``TypeError``), in linear cost, with bounded error output.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_schema import http_headers
from mcp_schema.errors import HeaderMismatchError
from tests.hostile import call

TOOL = {
    "name": "t",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string", "x-mcp-header": "City"}},
    },
}


def test_asgi_byte_pairs_are_read_like_a_mapping() -> None:
    request = call(arguments={"city": "Oslo"})
    mapping = http_headers.request_headers(request, TOOL)
    pairs = [(k.lower().encode(), v.encode()) for k, v in mapping.items()]
    http_headers.check_request_headers(pairs, request, TOOL)
    bad = [(k, b"Bergen" if k == b"mcp-param-city" else v) for k, v in pairs]
    with pytest.raises(HeaderMismatchError) as info:
        http_headers.check_request_headers(bad, request, TOOL)
    assert info.value.data["header"] == "Mcp-Param-City"


def test_non_ascii_header_bytes_are_an_invalid_header() -> None:
    request = call()
    pairs = [
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", "t\u00e9".encode()),
    ]
    with pytest.raises(HeaderMismatchError) as info:
        http_headers.check_request_headers(pairs, request)
    assert info.value.data["reason"] == "invalid"


@pytest.mark.parametrize(
    "headers",
    [{"MCP-Protocol-Version": 5}, ["Mcp-Method"], "Mcp-Method: x", 5, [(b"a", b"b", b"c")]],
)
def test_wrong_header_types_are_type_errors(headers: Any) -> None:
    with pytest.raises(TypeError):
        http_headers.check_request_headers(headers, call())
    with pytest.raises(TypeError):
        http_headers.decode_header_value(b"x")  # type: ignore[arg-type]


def test_many_case_variants_of_one_header_are_joined_once() -> None:
    variants = [
        ("".join(c.upper() if (i >> j) & 1 else c for j, c in enumerate("mcp-name")), "t")
        for i in range(256)
    ]
    assert http_headers.received_headers(variants)["mcp-name"] == ", ".join(["t"] * 256)


def test_tool_headers_are_read_once_and_reused() -> None:
    properties = {f"p{i}": {"type": "string", "x-mcp-header": f"H{i}"} for i in range(5000)}
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": properties}}
    compiled = http_headers.ToolHeaders(tool)
    assert len(compiled.headers) == 5000
    request = call(arguments={"p4999": "v"})
    headers = http_headers.request_headers(request, compiled)
    assert headers["Mcp-Param-H4999"] == "v" and len(headers) == 4
    http_headers.check_request_headers(headers, request, compiled)
    assert http_headers.validate_tool_headers(compiled) == compiled.headers


def test_cyclic_and_deep_input_schemas_are_invalid_tool_headers() -> None:
    cyclic: dict[str, Any] = {"type": "object"}
    cyclic["properties"] = {"self": cyclic}
    with pytest.raises(http_headers.InvalidToolHeaderError, match="contains itself"):
        http_headers.validate_tool_headers({"name": "t", "inputSchema": cyclic})
    deep: Any = {"type": "string"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"a": deep}}
    with pytest.raises(http_headers.InvalidToolHeaderError, match="nested deeper"):
        http_headers.validate_tool_headers({"name": "t", "inputSchema": deep})
    listed: Any = []
    for _ in range(5000):
        listed = [listed]
    with pytest.raises(http_headers.InvalidToolHeaderError, match="nested deeper"):
        http_headers.validate_tool_headers({"name": "t", "inputSchema": {"anyOf": listed}})
