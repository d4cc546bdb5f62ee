"""`mcp_schema.gateway.ExchangeValidator`, sans-IO: a client's request read
by the codec with its headers, then the upstream's answer checked against
it (its id, its method's result type, a listen's filter), in both eras."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_schema.gateway import Exchange, ExchangeValidator, SseEvent, bad_gateway
from tests.hostile import META, call, raw

STATELESS = {
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "t",
}
RESULT = {"resultType": "complete", "content": [{"type": "text", "text": "hi"}]}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "c", "version": "1"},
}
INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "s", "version": "1"},
}
JSON = [("content-type", "application/json")]


def answer(rid: Any, result: Any) -> bytes:
    return raw({"jsonrpc": "2.0", "id": rid, "result": result})


def stateless_call(validator: ExchangeValidator | None = None) -> Exchange:
    exchange = (validator or ExchangeValidator()).request("POST", STATELESS, raw(call()))
    assert exchange.reports == [] and exchange.refusal is None
    return exchange


def test_a_valid_stateless_call_and_its_answer_report_nothing() -> None:
    exchange = stateless_call()
    assert (exchange.rpc_method, exchange.request_id, exchange.stateless) == ("tools/call", 1, True)
    exchange.head(200, JSON)
    assert exchange.answer(answer(1, RESULT)) is None
    assert exchange.end() == []


def test_a_header_mismatch_is_refused_400_with_the_codecs_error() -> None:
    exchange = ExchangeValidator().request("POST", {**STATELESS, "mcp-name": "other"}, raw(call()))
    assert exchange.refusal is not None and exchange.refusal.status == 400
    body = json.loads(exchange.refusal.body)
    assert body["id"] == 1 and body["error"]["code"] == -32020
    assert body["error"]["data"]["header"] == "Mcp-Name"
    [report] = exchange.reports
    assert (report["direction"], report["code"], report["id"]) == ("client->server", -32020, 1)


def test_an_unknown_method_is_refused_with_404_as_the_endpoint_does() -> None:
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"_meta": META}}
    headers = {**STATELESS}
    del headers["mcp-name"]
    exchange = ExchangeValidator().request("POST", headers, raw(message))
    assert exchange.refusal is not None and exchange.refusal.status == 400  # params.name missing
    assert json.loads(exchange.refusal.body)["error"]["code"] == -32602


def test_the_result_is_read_as_the_methods_result() -> None:
    exchange = stateless_call()
    exchange.head(200, JSON)
    report = exchange.answer(answer(1, {"content": "not a list", "resultType": "complete"}))
    assert report is not None
    assert (report["direction"], report["code"], report["id"]) == ("server->client", -32602, None)


def test_a_response_to_another_id_is_reported() -> None:
    exchange = stateless_call()
    exchange.head(200, JSON)
    report = exchange.answer(answer(7, RESULT))
    assert report is not None and "a response to id 7" in report["message"]


def test_ids_are_matched_by_the_codecs_rule() -> None:
    exchange = ExchangeValidator().request("POST", STATELESS, raw({**call(), "id": 1.0}))
    assert exchange.request_id == 1
    exchange.head(200, JSON)
    assert exchange.answer(answer(1, RESULT)) is None
    other = stateless_call()
    other.head(200, JSON)
    assert other.answer(answer("1", RESULT)) is not None  # "1" is not 1


def test_a_get_stream_may_replay_responses() -> None:
    validator = ExchangeValidator()
    session = handshake(validator)
    exchange = validator.request("GET", {"mcp-session-id": session})
    exchange.head(200, [("content-type", "text/event-stream")])
    assert exchange.answer(answer(3, {"tools": []})) is None
    assert exchange.end() == []


def test_a_second_response_is_reported() -> None:
    exchange = stateless_call()
    exchange.head(200, [("content-type", "text/event-stream")])
    assert exchange.answer(answer(1, RESULT)) is None
    report = exchange.answer(answer(1, RESULT))
    assert report is not None and "a second response" in report["message"]


def test_a_stateless_stream_ending_without_the_response_is_reported() -> None:
    exchange = stateless_call()
    exchange.head(200, [("content-type", "text/event-stream")])
    [report] = exchange.end()
    assert "ended without the response to request 1" in report["message"]


def test_a_client_that_left_is_no_finding() -> None:
    exchange = stateless_call()
    exchange.head(200, [("content-type", "text/event-stream")])
    assert exchange.end(cut=True) == []


def test_reports_number_the_messages_of_each_direction() -> None:
    validator = ExchangeValidator()
    for expected in (1, 2):
        exchange = stateless_call(validator)
        exchange.head(200, JSON)
        report = exchange.answer(b"{}")
        assert report is not None and report["line"] == expected


def handshake(validator: ExchangeValidator) -> str:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
    exchange = validator.request("POST", {"content-type": "application/json"}, raw(init))
    assert exchange.refusal is None
    exchange.head(200, [*JSON, ("mcp-session-id", "s1")])
    assert exchange.answer(answer(0, INIT_RESULT)) is None
    assert exchange.session == "s1" and validator.sessions == 1
    return "s1"


def test_a_handshake_session_is_followed_by_its_id() -> None:
    validator = ExchangeValidator()
    session = handshake(validator)
    headers = {"content-type": "application/json", "mcp-session-id": session}
    listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    exchange = validator.request("POST", headers, raw(listed))
    assert exchange.refusal is None
    assert exchange.correlator.version == "2025-11-25"  # the session's, from initialize
    exchange.head(200, [("content-type", "text/event-stream")])
    # A server's request on the stream, answered by the client on another POST.
    asked = {"jsonrpc": "2.0", "id": 5, "method": "roots/list"}
    assert exchange.answer(raw(asked)) is None
    reply = validator.request("POST", headers, answer(5, {"roots": []}))
    assert reply.reports == [] and reply.request_id is None
    bad = validator.request("POST", headers, answer(5, {"roots": []}))
    assert bad.reports == []  # answered already: read generically, as the proxy reads it
    assert exchange.answer(answer(1, {"tools": []})) is None
    assert exchange.end() == []


def test_delete_forgets_the_session() -> None:
    validator = ExchangeValidator()
    session = handshake(validator)
    exchange = validator.request("DELETE", {"mcp-session-id": session})
    exchange.head(200, [])
    assert validator.sessions == 0


def test_sessions_are_bounded_and_none_is_forgotten_to_make_room() -> None:
    validator = ExchangeValidator(max_sessions=1)
    handshake(validator)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
    exchange = validator.request("POST", {"content-type": "application/json"}, raw(init))
    assert exchange.busy is not None and exchange.busy.status == 429
    exchange.head(200, [*JSON, ("mcp-session-id", "s2")])
    assert validator.sessions == 1
    kept = {"content-type": "application/json", "mcp-session-id": "s1"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert validator.request("POST", kept, raw(ping)).correlator.version == "2025-11-25"


def listen(uris: list[str]) -> Exchange:
    params = {
        "_meta": META,
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": uris},
    }
    message = {"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen", "params": params}
    headers = {**STATELESS, "mcp-method": "subscriptions/listen"}
    del headers["mcp-name"]
    exchange = ExchangeValidator().request("POST", headers, raw(message))
    assert exchange.refusal is None, exchange.reports
    exchange.head(200, [("content-type", "text/event-stream")])
    return exchange


def note(method: str, listen_id: Any = "L", **params: Any) -> bytes:
    meta = {"io.modelcontextprotocol/subscriptionId": listen_id}
    return raw({"jsonrpc": "2.0", "method": method, "params": {"_meta": meta, **params}})


def test_a_listen_carries_what_its_filter_asks_for() -> None:
    exchange = listen(["file:///a"])
    assert exchange.answer(note("notifications/tools/list_changed")) is None
    assert exchange.answer(note("notifications/resources/updated", uri="file:///a")) is None


@pytest.mark.parametrize(
    ("frame", "found"),
    [
        (note("notifications/prompts/list_changed"), "does not ask for"),
        (note("notifications/resources/updated", uri="file:///b"), 'of "file:///b"'),
        (note("notifications/tools/list_changed", listen_id="other"), "must name the listen"),
    ],
)
def test_a_listen_notification_the_filter_refuses_is_reported(frame: bytes, found: str) -> None:
    report = listen(["file:///a"]).answer(frame)
    assert report is not None and found in report["message"]


def test_an_event_without_data_is_no_message_and_one_cut_short_is_reported() -> None:
    exchange = stateless_call()
    exchange.head(200, [("content-type", "text/event-stream")])
    assert exchange.event(SseEvent(b": keep-alive\n\n", None, 14)) is None
    report = exchange.event(SseEvent(b"data: {", None, 7, unfinished=True))
    assert report is not None and report["code"] == -32700


def test_bad_gateway_names_the_finding_to_the_requests_id() -> None:
    exchange = stateless_call()
    exchange.head(200, JSON)
    report = exchange.answer(answer(1, {"content": 1, "resultType": "complete"}))
    assert report is not None
    response = bad_gateway(report, exchange.request_id)
    body = json.loads(response.body)
    assert response.status == 502 and body["id"] == 1 and body["error"]["code"] == -32603
    assert body["error"]["data"]["finding"]["code"] == report["code"]


# -- Mcp-Param-* headers, learned from the tools/list answers --------------------------------

ANNOTATED = {
    "name": "t",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "where": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
        },
    },
}
LISTED = {"resultType": "complete", "cacheScope": "private", "ttlMs": 0}
LIST = {**STATELESS, "mcp-method": "tools/list"}
del LIST["mcp-name"]


def listed(validator: ExchangeValidator, *tools: dict[str, Any]) -> None:
    """``tools`` answered to a tools/list through ``validator``."""
    message = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": META}}
    exchange = validator.request("POST", LIST, raw(message))
    assert exchange.refusal is None, exchange.reports
    exchange.head(200, JSON)
    assert exchange.answer(answer(9, {**LISTED, "tools": list(tools)})) is None


def called(validator: ExchangeValidator, headers: dict[str, str], **arguments: Any) -> Exchange:
    return validator.request("POST", {**STATELESS, **headers}, raw(call(arguments=arguments)))


def mismatch(exchange: Exchange) -> dict[str, Any]:
    """The -32020 refusal's data (the exchange must be refused with it, 400)."""
    assert exchange.refusal is not None and exchange.refusal.status == 400
    body = json.loads(exchange.refusal.body)
    assert body["id"] == 1 and body["error"]["code"] == -32020
    [report] = exchange.reports
    assert (report["direction"], report["code"], report["id"]) == ("client->server", -32020, 1)
    data: dict[str, Any] = body["error"]["data"]
    return data


def test_a_listed_tools_param_headers_are_checked_against_its_arguments() -> None:
    validator = ExchangeValidator()
    assert called(validator, {}, region="eu").refusal is None  # not listed yet: not checked
    listed(validator, ANNOTATED)
    assert set(validator.tools) == {"t"}
    good = {"mcp-param-region": "eu", "mcp-param-n": "42", "mcp-param-zone": "b"}
    assert called(validator, good, region="eu", n=42, where={"zone": "b"}).reports == []
    assert called(validator, {"Mcp-Param-N": "42.0"}, n=42).reports == []  # numerically
    assert called(validator, {}).reports == []  # no argument, no header
    assert called(validator, {"mcp-param-other": "x"}).reports == []  # not one it names


@pytest.mark.parametrize(
    ("headers", "arguments", "reason", "header"),
    [
        ({}, {"region": "eu"}, "missing", "Mcp-Param-Region"),
        ({"mcp-param-region": "eu"}, {}, "unexpected", "Mcp-Param-Region"),
        ({"mcp-param-region": "eu"}, {"region": None}, "unexpected", "Mcp-Param-Region"),
        ({"mcp-param-region": "us"}, {"region": "eu"}, "mismatch", "Mcp-Param-Region"),
        ({"mcp-param-region": "EU"}, {"region": "eu"}, "mismatch", "Mcp-Param-Region"),
        ({"mcp-param-n": "41"}, {"n": 42}, "mismatch", "Mcp-Param-N"),
        ({"mcp-param-zone": "a"}, {"where": {"zone": "b"}}, "mismatch", "Mcp-Param-Zone"),
        ({}, {"where": {"zone": "b"}}, "missing", "Mcp-Param-Zone"),
    ],
)
def test_a_param_header_missing_extra_or_disagreeing_is_minus_32020(
    headers: dict[str, str], arguments: dict[str, Any], reason: str, header: str
) -> None:
    validator = ExchangeValidator()
    listed(validator, ANNOTATED)
    data = mismatch(called(validator, headers, **arguments))
    assert (data["reason"], data["header"]) == (reason, header)


def test_a_refused_call_leaves_nothing_pending() -> None:
    validator = ExchangeValidator()
    listed(validator, ANNOTATED)
    refused = called(validator, {}, region="eu")
    assert refused.refusal is not None and refused.correlator.pending == 0


def test_a_handshake_era_call_need_not_mirror_but_what_it_sends_must_agree() -> None:
    validator = ExchangeValidator()
    session = handshake(validator)
    headers = {"content-type": "application/json", "mcp-session-id": session}
    listing = validator.request(
        "POST", headers, raw({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    )
    listing.head(200, JSON)
    assert listing.answer(answer(1, {"tools": [ANNOTATED]})) is None
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    message["params"] = {"name": "t", "arguments": {"region": "eu"}}
    assert validator.request("POST", headers, raw(message)).refusal is None
    message["id"] = 3
    wrong = validator.request("POST", {**headers, "mcp-param-region": "us"}, raw(message))
    assert wrong.refusal is not None and json.loads(wrong.refusal.body)["error"]["code"] == -32020


def test_a_new_listing_replaces_what_was_known_of_a_tool() -> None:
    validator = ExchangeValidator()
    listed(validator, ANNOTATED)
    plain = {"name": "t", "inputSchema": {"type": "object"}}
    listed(validator, plain)  # no annotations any more: nothing to check
    assert validator.tools == {} and validator.tool_bytes == 0
    assert called(validator, {}, region="eu").reports == []


def test_a_tool_with_invalid_annotations_is_not_checked_and_forgets_the_old_ones() -> None:
    validator = ExchangeValidator()
    listed(validator, ANNOTATED)
    invalid = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"type": "number", "x-mcp-header": "X"}},  # no number
        },
    }
    listed(validator, invalid)
    assert validator.tools == {}
    assert called(validator, {}, region="eu").reports == []


def test_only_the_answer_to_a_tools_list_teaches_tools() -> None:
    validator = ExchangeValidator()
    exchange = stateless_call(validator)  # a tools/call, whose result names no tools
    exchange.head(200, JSON)
    assert exchange.answer(answer(1, RESULT)) is None
    other = validator.request("POST", LIST, raw({**call(), "method": "tools/list"}))
    other.head(200, JSON)
    report = other.answer(answer(5, {**LISTED, "tools": [ANNOTATED]}))
    assert report is not None and "a response to id 5" in report["message"]
    assert validator.tools == {}


def test_the_tools_kept_are_bounded_the_least_recently_listed_forgotten() -> None:
    validator = ExchangeValidator(max_tool_bytes=1000)
    tools = [{**ANNOTATED, "name": f"t{i}"} for i in range(20)]
    listed(validator, *tools)
    assert 0 < validator.tool_bytes <= 1000
    kept = list(validator.tools)
    assert kept == [f"t{i}" for i in range(20 - len(kept), 20)]  # the last ones listed
    listed(validator, tools[0])
    assert list(validator.tools)[-1] == "t0" and validator.tool_bytes <= 1000
    properties = {f"p{i}": {"type": "string", "x-mcp-header": f"P{i}"} for i in range(100)}
    huge = {"name": "h", "inputSchema": {"type": "object", "properties": properties}}
    listed(validator, huge)  # heavier than the whole bound: never kept, nothing evicted
    assert "h" not in validator.tools and "t0" in validator.tools


def refused_by_null(message: str = "Forbidden: the request's Origin is not allowed") -> bytes:
    """An error the upstream could not address: it refused the POST before reading its id."""
    return raw({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}})


@pytest.mark.parametrize("media", ["application/json", "text/event-stream"])
def test_an_error_with_a_null_id_answers_the_request_it_refused(media: str) -> None:
    exchange = stateless_call()
    exchange.head(403, [("content-type", media)])
    assert exchange.answer(refused_by_null()) is None
    assert exchange.answered
    assert exchange.end() == []  # answered: no "ended without the response"


def test_a_null_id_refusal_in_a_session_leaves_nothing_pending() -> None:
    validator = ExchangeValidator()
    session = handshake(validator)
    headers = {"content-type": "application/json", "mcp-session-id": session}
    exchange = validator.request(
        "POST", headers, raw({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    )
    assert exchange.correlator.pending == 1
    exchange.head(421, JSON)
    assert exchange.answer(refused_by_null("Misdirected Request")) is None
    assert exchange.correlator.pending == 0 and exchange.end() == []


def test_a_null_id_refusal_answers_a_notification_too() -> None:
    validator = ExchangeValidator()
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    exchange = validator.request("POST", {"content-type": "application/json"}, raw(note))
    assert exchange.request_id is None and exchange.reports == []
    exchange.head(403, JSON)
    assert exchange.answer(refused_by_null()) is None


def test_a_second_answer_after_a_null_id_refusal_is_reported() -> None:
    exchange = stateless_call()
    exchange.head(200, [("content-type", "text/event-stream")])
    assert exchange.answer(refused_by_null()) is None
    report = exchange.answer(answer(1, RESULT))
    assert report is not None and "a second response to request 1" in report["message"]


def test_a_result_with_a_null_id_is_still_reported() -> None:
    exchange = stateless_call()
    exchange.head(200, JSON)
    assert exchange.answer(answer(None, RESULT)) is not None
