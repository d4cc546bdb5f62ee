"""The per-version typed decoders agree with the codec, and refuse the other
kind of message."""

from __future__ import annotations

import importlib
import json
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_schema.v2025_11_25 as old
import mcp_schema.v2026_07_28 as v
from mcp_schema._codec.messages import Kind
from mcp_schema.codec import ErrorResponse, ResultResponse, decode, encode, reply
from mcp_schema.errors import InvalidRequestError, MethodNotFoundError
from mcp_schema.registry import COMPILED
from mcp_schema.testing import WireMessage, messages

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


VERSION_PACKAGES = [importlib.import_module(c.package) for c in COMPILED if c.extension is None]


@pytest.mark.parametrize("package", VERSION_PACKAGES, ids=lambda p: p.VERSION)
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


HANDSHAKE_PACKAGES = [
    importlib.import_module(c.package)
    for c in COMPILED
    if c.extension is None and c.era == "handshake"
]


@pytest.mark.parametrize("package", HANDSHAKE_PACKAGES, ids=lambda p: p.VERSION)
def test_every_handshake_version_decodes_a_ping_and_its_answer(package: ModuleType) -> None:
    ping = package.decode_request(b'{"jsonrpc": "2.0", "id": 3, "method": "ping"}')
    assert isinstance(ping, package.PingRequest) and ping.id == 3
    answer = package.decode_response(encode(reply(ping, package.EmptyResult())), "ping")
    assert isinstance(answer, ResultResponse) and isinstance(answer.result, package.EmptyResult)
    assert answer.id == 3
    with pytest.raises(InvalidRequestError) as caught:
        package.decode_response(
            b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', "ping"
        )
    assert caught.value.answerable is False


@pytest.mark.parametrize("package", VERSION_PACKAGES, ids=lambda p: p.VERSION)
@pytest.mark.parametrize("kind", ["request", "notification", "result", "error"])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_typed_decoders_agree_with_decode(
    package: ModuleType, kind: Kind, data: st.DataObject
) -> None:
    message: WireMessage = data.draw(messages(package.VERSION, kind=kind))
    if kind in ("request", "notification"):
        typed = package.decode_request(message.raw)
        members = (*package.AnyRequest.__args__, *package.AnyNotification.__args__)
        assert isinstance(typed, members)
    else:
        typed = package.decode_response(message.raw, message.method or "")
        if kind == "result":
            assert isinstance(typed, ResultResponse)
            assert isinstance(typed.result, package.AnyResult.__args__)
    plain = decode(message.raw, version=package.VERSION, method=message.method)
    assert type(typed) is type(plain) and typed == plain
