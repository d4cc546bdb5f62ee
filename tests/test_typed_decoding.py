"""The per-version typed decoders agree with the codec, and refuse the other
kind of message."""

from __future__ import annotations

import json

import pytest

import mcp_schema.v2025_11_25 as old
import mcp_schema.v2026_07_28 as v
from mcp_schema.codec import ErrorResponse, ResultResponse, encode, reply
from mcp_schema.errors import InvalidRequestError, MethodNotFoundError

REQUEST = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}'


def test_decode_request_gives_the_request_class() -> None:
    request = old.decode_request(REQUEST)
    assert isinstance(request, old.CallToolRequest)
    with pytest.raises(MethodNotFoundError):
        old.decode_request(REQUEST.replace(b"tools/call", b"tools/nope"))
    generic = old.decode_request(REQUEST.replace(b"tools/call", b"x/y"), allow_unknown_methods=True)
    assert isinstance(generic, old.JSONRPCRequest)


def test_decode_request_refuses_a_response() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        old.decode_request(b'{"jsonrpc": "2.0", "id": 1, "result": {}}')
    assert caught.value.answerable is False


def test_decode_response_gives_each_result_or_an_error() -> None:
    done = v.decode_response(encode(reply(1, v.CallToolResult(content=[]))), "tools/call")
    assert isinstance(done, ResultResponse) and isinstance(done.result, v.CallToolResult)
    asked = v.decode_response(encode(reply(1, v.InputRequiredResult())), "tools/call")
    assert isinstance(asked, ResultResponse) and isinstance(asked.result, v.InputRequiredResult)
    failed = v.decode_response(encode(reply(1, MethodNotFoundError())), "tools/call")
    assert isinstance(failed, ErrorResponse)
    assert isinstance(failed.exception(), MethodNotFoundError)
    with pytest.raises(InvalidRequestError):
        old.decode_response(REQUEST, "tools/call")


@pytest.mark.parametrize("package", [old, v], ids=lambda p: p.VERSION)
def test_any_result_covers_every_result_of_the_tables(package: object) -> None:
    tables = package.REQUESTS  # type: ignore[attr-defined]
    results = {e.result for e in tables.values()} | {
        alt for e in tables.values() for alt in e.alternatives
    }
    assert set(package.AnyResult.__args__) == results  # type: ignore[attr-defined]
    requests = {e.request for e in tables.values()}
    assert set(package.AnyRequest.__args__) == requests  # type: ignore[attr-defined]


def test_results_of_every_method_round_trip_through_decode_response() -> None:
    raw = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}).encode()
    listed = old.decode_response(raw, "tools/list")
    assert isinstance(listed, ResultResponse)
    assert encode(listed) == encode(reply(2, old.ListToolsResult(tools=[])))
