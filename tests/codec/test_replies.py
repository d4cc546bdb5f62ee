"""Answering: ``reply``, and what a decode error knows about the message it
could not decode."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mcp_schema.v2025_11_25 as old
from mcp_schema.codec import Correlator, decode, encode, reply
from mcp_schema.errors import (
    InvalidParamsError,
    InvalidRequestError,
    McpError,
    MethodNotFoundError,
    ParseError,
    UnsupportedProtocolVersionError,
)
from mcp_schema.versions import PROTOCOL_VERSION_KEY


def failure(raw: bytes, **options: Any) -> McpError:
    with pytest.raises(McpError) as caught:
        decode(raw, **options)
    return caught.value


def test_reply_to_a_request_with_a_result() -> None:
    request = decode(
        b'{"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "t"}}'
    )
    assert isinstance(request, old.CallToolRequest)
    response = reply(request, old.CallToolResult(content=[old.TextContent(text="ok")]))
    assert response.result.content[0] == old.TextContent(text="ok")
    assert json.loads(encode(response)) == {
        "jsonrpc": "2.0",
        "id": "a",
        "result": {"content": [{"type": "text", "text": "ok"}]},
    }
    again = decode(encode(response), method="tools/call")
    assert encode(again) == encode(response)


def test_reply_with_an_error() -> None:
    response = reply(3, MethodNotFoundError("no such tool", {"name": "t"}))
    assert json.loads(encode(response)) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32601, "message": "no such tool", "data": {"name": "t"}},
    }
    assert json.loads(encode(reply(None, ParseError())))["id"] is None


def test_a_result_needs_an_id() -> None:
    with pytest.raises(TypeError):
        reply(None, old.CallToolResult(content=[]))


def test_a_failed_request_knows_its_id() -> None:
    err = failure(b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 42}}')
    assert isinstance(err, InvalidParamsError)
    assert (err.request_id, err.answerable) == (8, True)
    assert json.loads(encode(err.to_response()))["id"] == 8
    assert err.to_response(9)["id"] == 9


@pytest.mark.parametrize(
    ("raw", "answerable"),
    [
        (b"not json", True),
        (b"[]", True),
        (b'{"jsonrpc": "2.0"}', True),
        (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', True),
        (b'{"jsonrpc": "1.0", "id": null, "method": "ping"}', True),
        (b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}', False),
        (b'{"jsonrpc": "2.0", "id": 4, "result": {"content": 1}}', False),
        (b'{"jsonrpc": "2.0", "id": 4, "error": {"code": "x"}}', False),
    ],
)
def test_unanswerable_or_unreadable_ids(raw: bytes, answerable: bool) -> None:
    err = failure(raw, method="tools/call")
    assert err.answerable is answerable
    assert err.request_id is None
    assert err.to_response()["id"] is None


@given(st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=20)))
def test_any_request_id_comes_back_on_its_error(rid: int | str) -> None:
    raw = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "no/such", "params": {}})
    err = failure(raw.encode())
    assert isinstance(err, MethodNotFoundError)
    assert err.request_id == rid and err.answerable
    assert json.loads(encode(err.to_response()))["id"] == rid
    with pytest.raises(McpError) as caught:
        Correlator().decode(raw)
    assert caught.value.request_id == rid


@pytest.mark.parametrize("through", ["decode", "Correlator"])
def test_a_request_with_a_broken_envelope_is_answered_by_id(through: str) -> None:
    raw = b'{"jsonrpc": "1.0", "id": 9, "method": "ping"}'
    read = decode if through == "decode" else Correlator().decode
    with pytest.raises(InvalidRequestError) as caught:
        read(raw)
    assert (caught.value.request_id, caught.value.answerable) == (9, True)


def test_a_request_naming_a_null_version_is_answered_by_id() -> None:
    meta = {PROTOCOL_VERSION_KEY: None}
    raw = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"_meta": meta}})
    err = failure(raw.encode())
    assert isinstance(err, UnsupportedProtocolVersionError)
    assert (err.request_id, err.answerable) == (5, True)
