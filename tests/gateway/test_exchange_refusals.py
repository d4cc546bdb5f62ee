"""Hostile input to `mcp_schema.gateway.ExchangeValidator`, from either
side: each ends in a report (and, for a client's request, a refusal in the
status the specification gives), never a foreign exception, the reports
bounded whatever the size of what came."""

from __future__ import annotations

import json

import pytest

from mcp_schema.codec import decode_dict
from mcp_schema.errors import McpError
from mcp_schema.gateway import EventSplitter, ExchangeValidator
from mcp_schema.http.rules import status_of
from mcp_schema.proxy import MAX_REPORT_BYTES, report_line
from tests.hostile import META, call, raw

HEADERS = {
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "t",
}


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}',  # a duplicate member
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n":1e400}}',
        b"[" * 100_000,  # nesting
        b"\xff\xfe not UTF-8",
        raw([call()]),  # a batch
        raw(call(arguments={"x": "\ud800"})).replace(b"\\\\", b"\\"),  # a lone surrogate
        raw({**call(), "id": "x" * 100_000}),  # an id longer than any
        raw(call(name=7)),
    ],
)
def test_a_body_the_codec_refuses_is_refused_with_its_error_and_reported(body: bytes) -> None:
    with pytest.raises(McpError) as codec:
        decode_dict(body, headers=HEADERS)
    exchange = ExchangeValidator().request("POST", HEADERS, body)
    assert exchange.refusal is not None
    assert exchange.refusal.status == status_of(codec.value)
    assert json.loads(exchange.refusal.body)["error"]["code"] == codec.value.code
    [report] = exchange.reports
    assert report["code"] == codec.value.code and len(report_line(report)) <= MAX_REPORT_BYTES


def test_a_body_over_the_limit_is_413_and_not_read() -> None:
    exchange = ExchangeValidator(max_body=100).request("POST", HEADERS, b"x" * 10_000)
    assert exchange.refusal is not None and exchange.refusal.status == 413
    [report] = exchange.reports
    assert report["code"] == -32700 and report["length"] == 10_000
    assert len(report["frame"]) <= 1024


def test_a_body_that_is_not_json_by_its_content_type_is_415() -> None:
    exchange = ExchangeValidator().request("POST", {**HEADERS, "content-type": "text/plain"}, b"{}")
    assert exchange.refusal is not None and exchange.refusal.status == 415


def test_a_version_header_disagreeing_with_the_body_is_minus_32020() -> None:
    exchange = ExchangeValidator().request(
        "POST", {**HEADERS, "mcp-protocol-version": "2025-11-25"}, raw(call())
    )
    assert exchange.refusal is not None and exchange.refusal.status == 400
    assert json.loads(exchange.refusal.body)["error"]["code"] == -32020


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_body_naming_initialize_elsewhere_still_has_its_version_header_checked(
    era: str,
) -> None:
    # A handshake-era initialize is read without MCP-Protocol-Version; a
    # request that only holds the word has it checked all the same, and its
    # refusal changes nothing.
    validator = ExchangeValidator()
    message = call(arguments={"x": "initialize"})
    if era != "2026-07-28":
        del message["params"]["_meta"]
    good = {**HEADERS, "mcp-protocol-version": era}
    bad = {**good, "mcp-protocol-version": "2025-06-18" if era == "2026-07-28" else "1999-01-01"}
    with pytest.raises(McpError) as codec:
        decode_dict(raw(message), headers=bad)
    exchange = validator.request("POST", bad, raw(message))
    assert exchange.refusal is not None
    assert json.loads(exchange.refusal.body)["error"]["code"] == codec.value.code
    assert exchange.correlator.pending == 0
    assert validator.request("POST", good, raw(message)).refusal is None


def test_headers_that_are_not_pairs_are_a_type_error_not_a_report() -> None:
    with pytest.raises(TypeError):
        ExchangeValidator().request("POST", [("a",)], raw(call()))  # type: ignore[list-item]


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        b"not json",
        b'{"jsonrpc":"2.0","id":1,"result":{},"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[],"x":1e999}}',
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":1}}',
        raw({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": 1}}),
    ],
)
def test_an_upstream_message_the_codec_refuses_is_reported(frame: bytes) -> None:
    exchange = ExchangeValidator().request("POST", HEADERS, raw(call()))
    exchange.head(200, {"content-type": "text/event-stream"})
    report = exchange.answer(frame)
    assert report is not None and report["direction"] == "server->client"
    assert len(report_line(report)) <= MAX_REPORT_BYTES


def test_an_upstream_message_over_the_limit_is_not_read() -> None:
    exchange = ExchangeValidator(max_message=64).request("POST", HEADERS, raw(call()))
    exchange.head(200, {"content-type": "application/json"})
    report = exchange.answer(b"[" * 1_000_000)
    assert report is not None and report["code"] == -32700 and report["length"] == 1_000_000


def test_an_overlong_event_is_reported_with_its_size() -> None:
    exchange = ExchangeValidator(max_message=64).request("POST", HEADERS, raw(call()))
    exchange.head(200, {"content-type": "text/event-stream"})
    [event] = EventSplitter(64).feed(b"data: " + b"x" * 5000 + b"\n\n")
    report = exchange.event(event)
    assert report is not None and report["code"] == -32700 and report["length"] == 5008


def test_a_huge_error_list_is_bounded_in_its_report() -> None:
    exchange = ExchangeValidator().request("POST", HEADERS, raw(call()))
    exchange.head(200, {"content-type": "application/json"})
    content = [{"type": "nope", "n": i} for i in range(20_000)]
    report = exchange.answer(raw({"jsonrpc": "2.0", "id": 1, "result": {"content": content}}))
    assert report is not None and len(report_line(report)) <= MAX_REPORT_BYTES


def test_a_listen_filter_of_many_uris_is_read_not_refused_by_the_gateway() -> None:
    uris = [f"file:///{i}" for i in range(5_000)]
    params = {"_meta": META, "notifications": {"resourceSubscriptions": uris}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params}
    headers = {**HEADERS, "mcp-method": "subscriptions/listen"}
    del headers["mcp-name"]
    exchange = ExchangeValidator().request("POST", headers, raw(message))
    assert exchange.refusal is None  # the upstream decides its own limits
