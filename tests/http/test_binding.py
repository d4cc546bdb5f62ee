"""`mcp_schema.http.Endpoint`, sans-IO: hand-made HTTP requests, the
refusals of each rule, and the good paths of both eras (a JSON answer, an
event stream with progress, a handshake-era session from ``initialize`` to
DELETE, the client asked on a request's stream, cancellation by a closed
stream, the GET stream)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.errors import (
    InvalidParamsError,
    MethodNotFoundError,
    MissingRequiredClientCapabilityError,
)
from mcp_schema.http import Endpoint, MemorySessions, Response
from mcp_schema.http_headers import request_headers
from mcp_schema.session import (
    CancelRequested,
    Event,
    InputReceived,
    NotificationReceived,
    RequestReceived,
    ServerSession,
)

STATELESS = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
}
BASE = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"elicitation": {}},
    "clientInfo": {"name": "c", "version": "1"},
}
ELICIT = {
    "method": "elicitation/create",
    "params": {"message": "A word?", "requestedSchema": {"type": "object", "properties": {}}},
}
SEEN: list[Event] = []


def handler(session: ServerSession, event: Event) -> None:
    SEEN.append(event)
    if isinstance(event, InputReceived):
        session.respond(event.request, {"content": [{"type": "text", "text": "asked"}]})
    elif isinstance(event, NotificationReceived):
        session.notify("notifications/tools/list_changed")  # relates to no request
    elif isinstance(event, RequestReceived):
        if event.method == "tools/list":
            session.respond(event, {"tools": []})
            return
        name = event.message.params.name  # type: ignore[attr-defined]
        if name == "count":
            for step in range(1, 4):
                session.progress(event, step, total=3)
            session.log("info", "counted", request=event)  # only if the call asked for logs
            session.respond(event, {"content": [{"type": "text", "text": "1 2 3"}]})
        elif name == "ask":
            session.ask(event, {"word": ELICIT})
        elif name == "poke":  # progress on another request, still open: the first "ask"
            asked = next(e for e in SEEN if isinstance(e, RequestReceived) and e.id == 5)
            session.progress(asked, 1)
            session.respond(event, {"content": []})
        elif name == "boom":
            raise RuntimeError("a bug")
        elif name == "unknown":
            raise InvalidParamsError("Unknown tool: unknown")
        elif name == "needs":
            raise MissingRequiredClientCapabilityError(required_capabilities={"sampling": {}})
        elif name == "gone":
            raise MethodNotFoundError("Method not found: tools/call")
        elif name != "silent":
            session.respond(event, {"content": [{"type": "text", "text": name}]})


def endpoint(**options: Any) -> Endpoint:
    SEEN.clear()
    capabilities: dict[str, Any] = {"tools": {}, "logging": {}}
    return Endpoint(
        handler, info={"name": "t", "version": "1"}, capabilities=capabilities, **options
    )


def request(method: str, params: dict[str, Any] | None = None, rid: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {"_meta": dict(META), **(params or {})},
    }


def call(name: str, rid: int = 1, /, **meta: Any) -> dict[str, Any]:
    message = request("tools/call", {"name": name, "arguments": {}}, rid)
    message["params"]["_meta"] = {**META, **meta}
    return message


def post(
    ep: Endpoint, message: dict[str, Any] | bytes, headers: dict[str, str] | None = None
) -> Response:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    mirrored: dict[str, str] = {}
    if isinstance(message, dict) and "method" in message:
        mirrored = request_headers(message)
    return ep.handle("POST", "/mcp", {**BASE, **mirrored, **(headers or {})}, body)


def error_of(response: Response) -> tuple[Any, int]:
    answer = json.loads(response.body)
    return answer["id"], answer["error"]["code"]


def events(response: Response) -> list[dict[str, Any]]:
    assert response.stream is not None
    chunk = response.stream.take().decode()
    return [json.loads(e.removeprefix("event: message\ndata: ")) for e in chunk.split("\n\n") if e]


def opened(ep: Endpoint) -> str:
    response = post(ep, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    assert response.status == 200
    assert json.loads(response.body)["result"]["protocolVersion"] == "2025-11-25"
    session_id = response.header("mcp-session-id")
    assert session_id is not None
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(ep, initialized, {"mcp-session-id": session_id}).status == 202
    return session_id


# -- refusals before the body ---------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "headers", "status"),
    [
        ("PUT", {}, 405),
        ("GET", {}, 405),
        ("DELETE", {}, 405),
        ("GET", {"mcp-session-id": "nope"}, 404),
        ("DELETE", {"mcp-session-id": "nope"}, 404),
        ("POST", {"content-type": "text/plain"}, 415),
        ("POST", {"content-type": "application/json; charset=latin-1"}, 415),
        ("POST", {"accept": "text/html"}, 406),
        ("POST", {"accept": "application/json;q=0, text/event-stream;q=0"}, 406),
        ("POST", {"origin": "http://evil.example.com"}, 403),
        ("POST", {"origin": "null"}, 403),
        ("POST", {"origin": "http://localhost:99999"}, 403),
        ("POST", {"content-length": str(4 << 20 | 1)}, 413),
        ("POST", {"content-length": "12x"}, 400),
    ],
)
def test_refused_before_the_body(method: str, headers: dict[str, str], status: int) -> None:
    ep = endpoint()
    sent = {**BASE, **headers}
    early = ep.precheck(method, "/mcp", sent)
    assert early is not None and early.status == status
    assert ep.handle(method, "/mcp", sent, b"{}").status == status
    assert error_of(early)[0] is None  # a JSON-RPC error without an id
    if status == 405:
        assert early.header("allow") == "POST, GET, DELETE"


def test_another_path_is_not_the_endpoint() -> None:
    response = endpoint().handle("POST", "/other", BASE, b"{}")
    assert (response.status, response.body) == (404, b"")


@pytest.mark.parametrize(
    "origin", ["http://localhost:8080", "http://127.0.0.1", "https://[::1]:3000", "http://a.b"]
)
def test_loopback_and_configured_origins_are_allowed(origin: str) -> None:
    ep = endpoint(allowed_origins=["http://a.b"])
    assert post(ep, call("echo"), {"origin": origin}).status == 200
    strict = endpoint(loopback_origins=False)
    assert post(strict, call("echo"), {"origin": origin}).status == 403


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("mcp.example.com", 200),
        ("MCP.example.com:8443", 200),
        ("[::1]:3000", 200),
        ("evil.example.com", 421),
        ("mcp.example.com.evil.com", 421),
        ("user@mcp.example.com", 421),
        ("mcp.example.com:99999", 421),
        ("mcp.example.com/x", 421),
        (None, 421),
    ],
)
def test_allowed_hosts_refuse_any_other_host(host: str | None, status: int) -> None:
    ep = endpoint(allowed_hosts=["mcp.example.com", "::1"])
    sent = {} if host is None else {"host": host}
    assert post(ep, call("echo"), sent).status == status
    early = ep.precheck("POST", "/mcp", {**BASE, **sent})
    assert (early is None) == (status == 200)
    assert post(endpoint(), call("echo"), sent).status == 200  # not checked unless named


def test_a_body_beyond_the_limit_is_refused_whatever_its_length_header_says() -> None:
    ep = endpoint(max_body=300)
    assert post(ep, call("echo", padding="x" * 200)).status == 413
    assert post(ep, call("echo")).status == 200


@pytest.mark.parametrize(
    "accept", ["application/json", "application/*", "*/*;q=1, text/event-stream;q=0"]
)
def test_a_client_accepting_only_json_gets_the_answer_alone(accept: str) -> None:
    response = post(endpoint(), call("count", progressToken=1), {"accept": accept})
    assert response.header("content-type") == "application/json"
    assert json.loads(response.body)["result"]["content"][0]["text"] == "1 2 3"


# -- refusals of the body -------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({"mcp-name": "other"}, -32020),
        ({"mcp-method": "tools/list"}, -32020),
        ({"mcp-protocol-version": "2025-11-25"}, -32020),
    ],
)
def test_headers_that_disagree_with_the_body(headers: dict[str, str], code: int) -> None:
    response = post(endpoint(), call("echo", 7), headers)
    assert response.status == 400
    assert error_of(response) == (7, code)


def test_missing_mirrored_headers() -> None:
    body = json.dumps(call("echo", 8)).encode()
    response = endpoint().handle("POST", "/mcp", BASE, body)
    assert (response.status, error_of(response)) == (400, (8, -32020))
    assert json.loads(response.body)["error"]["data"]["reason"] == "missing"


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe"]
)
def test_stateless_requests_of_handshake_only_methods(method: str) -> None:
    params = {**INIT, "level": "info", "uri": "x://y"}
    response = post(endpoint(), request(method, params, rid=3))
    assert (response.status, error_of(response)) == (404, (3, -32601))


def test_an_unknown_method_is_404() -> None:
    response = post(endpoint(), request("tools/dance", rid=4))
    assert (response.status, error_of(response)) == (404, (4, -32601))


@pytest.mark.parametrize("version", ["2025-11-25", "1900-01-01", 5])
def test_a_per_request_version_not_served_per_request(version: object) -> None:
    message = request("server/discover", rid=5)
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = version
    body = json.dumps(message).encode()
    response = endpoint().handle("POST", "/mcp", {**BASE, "mcp-method": "server/discover"}, body)
    assert (response.status, error_of(response)) == (400, (5, -32022))
    assert json.loads(response.body)["error"]["data"]["supported"] == [STATELESS]


@pytest.mark.parametrize(
    "meta",
    [None, {"io.modelcontextprotocol/clientCapabilities": {}}],
    ids=["no _meta", "no protocolVersion"],
)
def test_a_per_request_header_on_a_body_without_its_meta_is_invalid_params(
    meta: dict[str, Any] | None,
) -> None:
    params = {} if meta is None else {"_meta": meta}
    message = {"jsonrpc": "2.0", "id": 6, "method": "server/discover", "params": params}
    headers = {"mcp-protocol-version": STATELESS, "mcp-method": "server/discover"}
    response = endpoint().handle("POST", "/mcp", {**BASE, **headers}, json.dumps(message).encode())
    assert (response.status, error_of(response)) == (400, (6, -32602))


def test_a_version_header_naming_another_version_than_the_body_is_a_mismatch() -> None:
    message = request("server/discover", rid=7)
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999.0.0"
    headers = {"mcp-protocol-version": STATELESS, "mcp-method": "server/discover"}
    response = endpoint().handle("POST", "/mcp", {**BASE, **headers}, json.dumps(message).encode())
    assert (response.status, error_of(response)) == (400, (7, -32020))
    agreeing = endpoint().handle(
        "POST",
        "/mcp",
        {**BASE, **headers, "mcp-protocol-version": "v999.0.0"},
        json.dumps(message).encode(),
    )
    assert (agreeing.status, error_of(agreeing)) == (400, (7, -32022))


@pytest.mark.parametrize(
    ("body", "code"), [(b"{", -32700), (b"[]", -32600), (b'{"jsonrpc": "2.0", "id": 9}', -32600)]
)
def test_what_is_not_a_message(body: bytes, code: int) -> None:
    response = endpoint().handle("POST", "/mcp", BASE, body)
    assert response.status == 400 and error_of(response)[1] == code


def test_invalid_params_carry_the_request_id() -> None:
    message = request("tools/call", {"name": 42}, rid=11)
    headers = {"mcp-protocol-version": STATELESS, "mcp-method": "tools/call", "mcp-name": "42"}
    response = endpoint().handle("POST", "/mcp", {**BASE, **headers}, json.dumps(message).encode())
    assert (response.status, error_of(response)) == (400, (11, -32602))


def test_handshake_requests_need_a_live_session() -> None:
    ep = endpoint()
    listed = {"jsonrpc": "2.0", "id": 12, "method": "tools/list"}
    missing = post(ep, listed)
    assert (missing.status, error_of(missing)) == (400, (12, -32600))
    unknown = post(ep, listed, {"mcp-session-id": "forged"})
    assert (unknown.status, error_of(unknown)) == (404, (12, -32600))


def test_a_stateless_only_endpoint_refuses_initialize_naming_its_versions() -> None:
    ep = endpoint(versions=[STATELESS])
    response = post(ep, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    assert (response.status, error_of(response)) == (400, (0, -32022))
    assert json.loads(response.body)["error"]["data"]["supported"] == [STATELESS]
    assert ep.precheck("GET", "/mcp", {"mcp-session-id": "x"}) is not None


# -- stateless era --------------------------------------------------------------------


def test_a_json_answer_and_nothing_kept() -> None:
    ep = endpoint()
    response = post(ep, call("echo"), {"mcp-session-id": "ignored"})
    assert response.status == 200 and response.header("content-type") == "application/json"
    assert response.header("mcp-session-id") is None
    assert json.loads(response.body)["result"]["content"][0]["text"] == "echo"
    assert isinstance(ep.sessions, MemorySessions) and len(ep.sessions) == 0


def test_an_event_stream_with_progress() -> None:
    response = post(endpoint(), call("count", progressToken="p"))
    assert response.header("content-type") == "text/event-stream"
    assert response.header("x-accel-buffering") == "no"
    sent = events(response)
    assert [e.get("params", {}).get("progress") for e in sent[:3]] == [1, 2, 3]
    assert sent[-1]["result"]["content"][0]["text"] == "1 2 3"
    assert response.stream is not None and response.stream.done


@pytest.mark.parametrize("rid", [1.0, 2])
def test_an_integral_float_id_is_answered_as_the_integer(rid: float) -> None:
    ep = endpoint()
    session_id = opened(ep)
    listed = post(
        ep, {"jsonrpc": "2.0", "id": rid, "method": "tools/list"}, {"mcp-session-id": session_id}
    )
    assert listed.status == 200 and json.loads(listed.body)["id"] == int(rid)
    pinged = post(
        ep, {"jsonrpc": "2.0", "id": rid, "method": "ping"}, {"mcp-session-id": session_id}
    )
    assert json.loads(pinged.body) == {"jsonrpc": "2.0", "id": int(rid), "result": {}}
    stateless = post(ep, call("count", rid, progressToken=1))  # type: ignore[arg-type]
    assert events(stateless)[-1]["id"] == int(rid)


def test_a_log_asked_for_makes_an_event_stream() -> None:
    response = post(endpoint(), call("count", **{"io.modelcontextprotocol/logLevel": "info"}))
    assert response.header("content-type") == "text/event-stream"
    logged, answer = events(response)
    assert (logged["method"], logged["params"]["data"]) == ("notifications/message", "counted")
    assert answer["result"]["content"][0]["text"] == "1 2 3"


def test_discover_names_the_versions_served_per_request() -> None:
    response = post(endpoint(session_options={"ttl_ms": 60_000}), request("server/discover"))
    result = json.loads(response.body)["result"]
    assert (result["supportedVersions"], result["ttlMs"]) == ([STATELESS], 60_000)


@pytest.mark.parametrize(
    ("name", "code"), [("boom", -32603), ("silent", -32603), ("unknown", -32602)]
)
def test_a_handler_that_fails_or_does_not_answer(name: str, code: int) -> None:
    response = post(endpoint(), call(name, 13))
    assert response.status == 200 and error_of(response) == (13, code)


@pytest.mark.parametrize(
    ("name", "status", "code"), [("needs", 400, -32021), ("gone", 404, -32601)]
)
def test_a_handler_error_the_specification_gives_a_status_gets_it(
    name: str, status: int, code: int
) -> None:
    response = post(endpoint(), call(name, 14))
    assert (response.status, error_of(response)) == (status, (14, code))
    ep = endpoint()
    in_session = {"mcp-session-id": opened(ep)}
    handshake = {"jsonrpc": "2.0", "id": 15, "method": "tools/call", "params": {"name": name}}
    answered = post(ep, handshake, in_session)  # a session's answers are 200, as 2025-11-25's
    assert (answered.status, error_of(answered)) == (200, (15, code))


def test_a_stateless_ask_of_what_the_client_did_not_declare_is_32021() -> None:
    # The call's _meta declares no elicitation: the handler's ask cannot be
    # sent, and the call is answered with the missing capability, not -32603.
    response = post(endpoint(), call("ask", 16))
    answer = json.loads(response.body)
    assert (response.status, error_of(response)) == (400, (16, -32021))
    assert answer["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_a_stream_cut_for_a_slow_reader_drops_what_waits() -> None:
    response = post(endpoint(max_buffer=150), call("count", progressToken=1))
    assert response.stream is not None
    assert response.stream.overflowed and response.stream.done and response.stream.take() == b""


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | st.from_regex(rb'\{"jsonrpc": ?"2.0".{0,80}\}', fullmatch=True))
def test_any_body_ends_in_a_status_and_a_json_rpc_answer_or_none(body: bytes) -> None:
    response = endpoint().handle("POST", "/mcp", BASE, body)
    assert response.status in (200, 202, 400, 404)
    if response.body:
        assert "error" in json.loads(response.body) or response.status == 200


# -- handshake era --------------------------------------------------------------------


def test_a_session_from_initialize_to_delete() -> None:
    ep = endpoint()
    session_id = opened(ep)
    assert len(session_id) >= 32 and session_id != opened(ep)
    listed = post(
        ep, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"mcp-session-id": session_id}
    )
    assert listed.status == 200 and json.loads(listed.body)["result"] == {"tools": []}
    assert listed.header("mcp-session-id") == session_id
    for version, status in (("2025-06-18", 200), ("2026-07-28", 400), ("1999-01-01", 400)):
        # Another version served in sessions: read in the negotiated one. One
        # not served in sessions, or unknown: refused (-32020).
        header = {"mcp-session-id": session_id, "mcp-protocol-version": version}
        other = post(ep, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, header)
        assert other.status == status
        assert status == 200 or error_of(other) == (2, -32020)
    assert ep.handle("DELETE", "/mcp", {"mcp-session-id": session_id}).status == 200
    after = post(
        ep, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, {"mcp-session-id": session_id}
    )
    assert (after.status, error_of(after)) == (404, (3, -32600))


def test_the_client_asked_on_the_request_stream_answers_on_another_post() -> None:
    ep = endpoint()
    session_id = opened(ep)
    asked = post(ep, {**call("ask", 5), "params": {"name": "ask"}}, {"mcp-session-id": session_id})
    assert asked.status == 200 and asked.header("content-type") == "text/event-stream"
    (question,) = events(asked)
    assert question["method"] == "elicitation/create"
    assert asked.stream is not None and not asked.stream.finished
    answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}
    assert post(ep, answer, {"mcp-session-id": session_id}).status == 202
    (final,) = events(asked)
    assert final == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"content": [{"type": "text", "text": "asked"}]},
    }
    assert asked.stream.done


def test_progress_goes_to_the_stream_of_the_request_it_reports_on() -> None:
    ep = endpoint()
    session_id = opened(ep)
    in_session = {"mcp-session-id": session_id}
    ask = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "ask"}}
    ask["params"]["_meta"] = {"progressToken": "t5"}  # type: ignore[index]
    asked = post(ep, ask, in_session)
    assert [e["method"] for e in events(asked)] == ["elicitation/create"]
    poke = {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "poke"}}
    poked = post(ep, poke, in_session)
    assert poked.header("content-type") == "application/json"  # nothing else for it
    (progress,) = events(asked)
    assert progress["params"] == {"progressToken": "t5", "progress": 1}


def test_closing_a_request_stream_cancels_the_request() -> None:
    ep = endpoint()
    session_id = opened(ep)
    listener = ep.handle(
        "GET", "/mcp", {"mcp-session-id": session_id, "accept": "text/event-stream"}
    )
    assert listener.stream is not None
    asked = post(ep, {**call("ask", 6), "params": {"name": "ask"}}, {"mcp-session-id": session_id})
    (question,) = events(asked)
    assert asked.stream is not None
    asked.stream.abandon()
    (cancelled,) = [e for e in SEEN if isinstance(e, CancelRequested)]
    assert cancelled.request.id == 6
    # The server's own question is withdrawn, on the stream that relates to no request.
    (withdrawn,) = events(listener)
    assert withdrawn["method"] == "notifications/cancelled"
    assert withdrawn["params"]["requestId"] == question["id"]


def test_the_get_stream_carries_what_relates_to_no_request() -> None:
    ep = endpoint()
    session_id = opened(ep)
    get = {"mcp-session-id": session_id, "accept": "text/event-stream"}
    listener = ep.handle("GET", "/mcp", get)
    assert listener.status == 200 and listener.header("content-type") == "text/event-stream"
    assert ep.handle("GET", "/mcp", get).status == 409
    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    assert post(ep, changed, {"mcp-session-id": session_id}).status == 202
    assert [e["method"] for e in events(listener)] == ["notifications/tools/list_changed"]
    assert ep.handle("GET", "/mcp", {**get, "accept": "application/json"}).status == 406
    ep.handle("DELETE", "/mcp", get)
    assert listener.stream is not None and listener.stream.done


def test_a_full_store_refuses_initialize_and_keeps_every_session() -> None:
    ep = endpoint(sessions=MemorySessions(max_sessions=1))
    first = opened(ep)
    refused = post(ep, {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": INIT})
    assert refused.status == 429 and refused.header("retry-after") == "5"
    assert error_of(refused) == (7, -31429)
    listed = post(
        ep, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"mcp-session-id": first}
    )
    assert listed.status == 200


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"allowed_origins": "http://a.b"}, TypeError),
        ({"max_body": True}, TypeError),
        ({"max_body": 0}, ValueError),
        ({"path": "mcp"}, ValueError),
        ({"loopback_origins": 1}, TypeError),
        ({"versions": ["1900-01-01"]}, ValueError),
        ({"versions": []}, ValueError),
        ({"session_options": {"ttl_ms": -1}}, ValueError),
        ({"info": 5}, TypeError),
    ],
)
def test_arguments_are_checked_when_the_endpoint_is_built(
    options: dict[str, Any], error: type[Exception]
) -> None:
    arguments: dict[str, Any] = {"info": {"name": "t", "version": "1"}, **options}
    with pytest.raises(error):
        Endpoint(handler, **arguments)


def test_a_json_only_client_asked_in_a_session_gets_its_answer_later() -> None:
    ep = endpoint()
    session_id = opened(ep)
    get = {"mcp-session-id": session_id, "accept": "text/event-stream"}
    listener = ep.handle("GET", "/mcp", get)
    ask = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}}
    asked = post(ep, ask, {"mcp-session-id": session_id, "accept": "application/json"})
    assert asked.header("content-type") == "application/json" and asked.stream is not None
    assert asked.stream.take() == b""  # nothing yet: the question went to the GET stream
    (question,) = events(listener)
    answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}
    assert post(ep, answer, {"mcp-session-id": session_id}).status == 202
    assert json.loads(asked.stream.take())["id"] == 7 and asked.stream.done


@pytest.mark.parametrize("header", [{}, {"mcp-protocol-version": "2025-03-26"}])
def test_an_older_session_needs_no_version_header(header: dict[str, str]) -> None:
    ep = endpoint()
    init = {**INIT, "protocolVersion": "2025-03-26"}
    opened_ = post(ep, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    assert json.loads(opened_.body)["result"]["protocolVersion"] == "2025-03-26"
    session = {"mcp-session-id": opened_.header("mcp-session-id") or "", **header}
    listed = post(ep, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session)
    assert (listed.status, json.loads(listed.body)["result"]) == (200, {"tools": []})


def test_deleting_a_session_ends_its_open_streams() -> None:
    ep = endpoint()
    session_id = opened(ep)
    ask = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "ask"}}
    asked = post(ep, ask, {"mcp-session-id": session_id})
    assert asked.stream is not None and not asked.stream.finished
    assert ep.handle("DELETE", "/mcp", {"mcp-session-id": session_id}).status == 200
    events(asked)  # the question, then nothing more
    assert asked.stream.done


def test_an_initialize_with_a_version_header_opens_a_session() -> None:
    # The header of an initialize names no session version yet: not checked against it.
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
    response = post(endpoint(), message, {"mcp-protocol-version": "2025-06-18"})
    assert response.status == 200 and response.header("mcp-session-id") is not None
