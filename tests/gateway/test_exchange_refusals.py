"""Hostile input to `mcp_schema.gateway.ExchangeValidator`, from either
side: each ends in a report (and, for a client's request, a refusal in the
status the specification gives), never a foreign exception, the reports
bounded whatever the size of what came."""

from __future__ import annotations

import json
from typing import Any

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


# -- Mcp-Param-* headers of a listed tool -----------------------------------------------------

TOOL = {
    "name": "t",
    "inputSchema": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "x-mcp-header": "Text"},
            "n": {"type": "integer", "x-mcp-header": "N"},
        },
    },
}
LISTED = {"resultType": "complete", "cacheScope": "private", "ttlMs": 0, "tools": [TOOL]}


def knowing() -> ExchangeValidator:
    """A validator that saw ``TOOL`` listed."""
    validator = ExchangeValidator()
    headers = {**HEADERS, "mcp-method": "tools/list"}
    del headers["mcp-name"]
    message = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": META}}
    exchange = validator.request("POST", headers, raw(message))
    exchange.head(200, {"content-type": "application/json"})
    assert exchange.answer(raw({"jsonrpc": "2.0", "id": 9, "result": LISTED})) is None
    return validator


def refused(exchange: Any) -> dict[str, Any]:
    """The -32020 data of a refused exchange, its report bounded."""
    assert exchange.refusal is not None and exchange.refusal.status == 400
    body = json.loads(exchange.refusal.body)
    assert body["error"]["code"] == -32020 and body["id"] == 1
    [report] = exchange.reports
    assert report["code"] == -32020 and len(report_line(report)) <= MAX_REPORT_BYTES
    data: dict[str, Any] = body["error"]["data"]
    return data


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),  # the specification's examples
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("us-west1", "us-west1"),
    ],
)
def test_an_encoded_value_is_decoded_before_it_is_compared(text: str, sent: str) -> None:
    validator = knowing()
    good = validator.request(
        "POST", {**HEADERS, "mcp-param-text": sent}, raw(call(arguments={"text": text}))
    )
    assert good.refusal is None and good.reports == []
    other = validator.request(
        "POST", {**HEADERS, "mcp-param-text": sent}, raw(call(arguments={"text": text + "!"}))
    )
    assert refused(other)["reason"] == "mismatch"


@pytest.mark.parametrize(
    "sent",
    [
        "=?base64?not base64!?=",  # a malformed payload
        "=?base64?/w==?=",  # base64 of bytes that are not UTF-8
        "=?base64?=",  # the markers overlap
        b"caf\xc3\xa9",  # raw UTF-8 bytes in the field: not a plain header value
        b"\xff",
        " x",  # whitespace an HTTP hop would strip
        "a\tb\x00",  # a control character
    ],
)
def test_a_value_that_is_not_a_valid_header_value_is_invalid(sent: str | bytes) -> None:
    validator = knowing()
    # The raw (name, value) pairs an ASGI server hands over.
    headers = [(k.encode(), v.encode()) for k, v in HEADERS.items()]
    headers.append((b"mcp-param-text", sent if isinstance(sent, bytes) else sent.encode()))
    exchange = validator.request("POST", headers, raw(call(arguments={"text": "café"})))
    assert refused(exchange)["reason"] == "invalid"


def test_an_overlong_value_is_refused_its_error_and_report_bounded() -> None:
    validator = knowing()
    long = "x" * 1_000_000
    exchange = validator.request(
        "POST", {**HEADERS, "mcp-param-text": long}, raw(call(arguments={"text": "short"}))
    )
    data = refused(exchange)
    assert data["reason"] == "mismatch" and len(data["received"]) < 1000
    assert exchange.refusal is not None and len(exchange.refusal.body) < 10_000


def test_many_headers_it_does_not_recognize_pass_and_the_ones_it_does_are_checked() -> None:
    validator = knowing()
    many = {f"mcp-param-p{i}": "v" * 100 for i in range(5_000)}
    good = validator.request(
        "POST", {**HEADERS, **many, "mcp-param-n": "7"}, raw(call(arguments={"n": 7}))
    )
    assert good.refusal is None
    bad = validator.request(
        "POST", {**HEADERS, **many, "mcp-param-n": "8"}, raw(call(arguments={"n": 7}))
    )
    assert refused(bad)["header"] == "Mcp-Param-N"


def test_a_repeated_param_header_is_one_joined_value() -> None:
    # Two field lines are one value joined by ", " (RFC 9110): never the first one trusted.
    validator = knowing()
    headers = [(k.encode(), v.encode()) for k, v in HEADERS.items()]
    headers += [(b"mcp-param-n", b"7"), (b"Mcp-Param-N", b"7")]
    assert (
        refused(validator.request("POST", headers, raw(call(arguments={"n": 7}))))["received"]
        == "7, 7"
    )


@pytest.mark.parametrize("sent", ["1e400", "7e-99999999999999999999", "0x7", "NaN", "7.5", "+7"])
def test_an_integer_header_that_is_not_the_arguments_number_is_a_mismatch(sent: str) -> None:
    exchange = knowing().request(
        "POST", {**HEADERS, "mcp-param-n": sent}, raw(call(arguments={"n": 7}))
    )
    assert refused(exchange)["reason"] == "mismatch"
