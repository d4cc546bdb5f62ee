"""mcp_schema.session: negotiation in both eras, the answers the session gives
itself, capability gates, cancellation, the input round-trip, handler
versions, the author's mistakes, and a client and a server session talking."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_schema import codec, v2024_11_05, v2025_11_25, v2026_07_28
from mcp_schema.errors import InternalError, InvalidParamsError, McpError
from mcp_schema.session import (
    CancelRequested,
    CapabilityError,
    ClientSession,
    Event,
    InputReceived,
    InputRequested,
    InvalidOutgoingError,
    Negotiated,
    NotificationReceived,
    ProtocolError,
    RequestReceived,
    ResponseReceived,
    ServerSession,
    SessionStateError,
    UnknownRequestError,
)
from mcp_schema.testing import invalid_messages, messages
from mcp_schema.versions import HANDSHAKE_VERSIONS, SUPPORTED_VERSIONS

INFO = {"name": "s", "version": "1"}
CAPS: dict[str, Any] = {"tools": {}, "logging": {}}
NEW = "2026-07-28"
ELICIT = {
    "method": "elicitation/create",
    "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
}


def server(**options: Any) -> ServerSession:
    return ServerSession(info=INFO, capabilities=options.pop("capabilities", CAPS), **options)


def feed(session: ServerSession | ClientSession, message: object) -> tuple[list[Event], list[Any]]:
    raw = message if isinstance(message, (bytes, str)) else json.dumps(message)
    events = session.receive(raw)
    return events, [json.loads(frame) for frame in session.data_to_send()]


def initialize(version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def opened(version: str = "2025-11-25", **caps: Any) -> ServerSession:
    session = server()
    feed(session, initialize(version, caps))
    return session


def meta(version: str = NEW, log_level: str | None = None, **caps: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": caps,
    }
    if log_level is not None:
        found["io.modelcontextprotocol/logLevel"] = log_level
    return found


def call(rid: int, name: str = "t", **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, **params}}


def only_request(events: list[Event]) -> RequestReceived:
    (event,) = [e for e in events if isinstance(e, RequestReceived)]
    return event


# -- negotiation -----------------------------------------------------------------------------


@pytest.mark.parametrize("offered", HANDSHAKE_VERSIONS)
def test_initialize_is_answered_with_the_clients_version(offered: str) -> None:
    session = server()
    events, frames = feed(session, initialize(offered))
    assert frames[0]["result"]["protocolVersion"] == offered
    assert frames[0]["result"]["serverInfo"] == INFO
    assert session.version == offered
    assert isinstance(events[0], Negotiated) and events[0].version == offered
    decoded = codec.decode(json.dumps(frames[0]), version=offered, method="initialize")
    assert codec.is_response(decoded)


@pytest.mark.parametrize("offered", ["1999-01-01", NEW, "2024-10-07"])
def test_initialize_of_another_version_gets_the_newest_handshake_one(offered: object) -> None:
    session = server()
    _, frames = feed(
        session,
        initialize("x") | {"params": {**initialize("x")["params"], "protocolVersion": offered}},
    )
    assert frames[0]["result"]["protocolVersion"] == HANDSHAKE_VERSIONS[-1]


def test_a_server_serving_some_versions_answers_within_them() -> None:
    session = server(versions=["2024-11-05", "2025-03-26"])
    _, frames = feed(session, initialize("2025-11-25"))
    assert frames[0]["result"]["protocolVersion"] == "2025-03-26"
    stateless_only = server(versions=[NEW])
    _, frames = feed(stateless_only, initialize("2025-11-25"))
    assert frames[0]["error"]["code"] == -32022
    assert frames[0]["error"]["data"]["supported"] == [NEW]
    assert stateless_only.version is None


def test_after_negotiation_another_version_is_refused_and_nothing_changes() -> None:
    session = opened("2025-06-18")
    named = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta()}}
    events, frames = feed(session, named)
    assert frames[0]["id"] == 3 and frames[0]["error"]["code"] == -32022
    assert frames[0]["error"]["data"] == {"requested": NEW, "supported": ["2025-06-18"]}
    assert isinstance(events[0], ProtocolError) and events[0].answered
    assert session.version == "2025-06-18"
    _, frames = feed(session, initialize("2025-11-25"))
    assert frames[0]["error"]["code"] == -32600  # initialized already
    assert session.version == "2025-06-18"
    events, _ = feed(session, call(4))
    assert only_request(events).version == "2025-06-18"


def test_stateless_era_fixes_on_the_first_request_not_on_discover() -> None:
    session = server()
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}}
    events, frames = feed(session, discover)
    assert events == [] and session.version is None
    result = frames[0]["result"]
    assert result["supportedVersions"] == list(reversed(SUPPORTED_VERSIONS))
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == INFO
    assert result["resultType"] == "complete"
    events, _ = feed(session, call(2, _meta=meta()))
    assert isinstance(events[0], Negotiated) and session.version == NEW
    session.respond(only_request(events), {"content": []})
    (answer,) = [json.loads(f) for f in session.data_to_send()]
    assert answer["result"]["resultType"] == "complete"
    assert answer["result"]["_meta"] == {"io.modelcontextprotocol/serverInfo": INFO}
    listed = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta()}}
    session.respond(only_request(feed(session, listed)[0]), {"tools": []})
    (answer,) = [json.loads(f) for f in session.data_to_send()]
    assert (answer["result"]["cacheScope"], answer["result"]["ttlMs"]) == ("private", 0)
    _, frames = feed(session, initialize("2025-11-25"))
    assert frames[0]["error"]["code"] == -32601  # 2026-07-28 has no initialize
    assert session.version == NEW


def test_requests_before_initialize_are_refused_but_ping_is_answered() -> None:
    session = server()
    _, frames = feed(session, call(1))
    assert frames[0]["error"]["code"] == -32600
    _, frames = feed(session, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert frames == [{"jsonrpc": "2.0", "id": 2, "result": {}}]


# -- what the session answers itself ------------------------------------------------------------


def test_ping_and_set_level_are_answered_unless_taken() -> None:
    session = opened()
    events, frames = feed(session, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert events == [] and frames == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    level = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "info"}}
    events, frames = feed(session, level)
    assert events == [] and frames[0]["result"] == {} and session.log_level == "info"
    taking = server(take=["ping"])
    feed(taking, initialize("2025-11-25"))
    events, frames = feed(taking, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert frames == [] and only_request(events).method == "ping"


def test_unknown_and_undeclared_methods_get_32601() -> None:
    session = opened()
    _, frames = feed(session, {"jsonrpc": "2.0", "id": 1, "method": "no/such"})
    assert frames[0]["error"]["code"] == -32601 and frames[0]["id"] == 1
    _, frames = feed(session, {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"})
    assert frames[0]["error"]["code"] == -32601  # prompts were not declared
    _, frames = feed(session, {"jsonrpc": "2.0", "id": 4, "method": "roots/list"})
    assert frames[0]["error"]["code"] == -32601  # the server's to send, not the client's
    no_logging = server(capabilities={"tools": {}})
    feed(no_logging, initialize("2025-11-25"))
    level = {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "info"}}
    _, frames = feed(no_logging, level)
    assert frames[0]["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"{oops", -32700),
        (b"[]", -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}', -32602),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
        (b'{"jsonrpc": "2.0", "id": {}, "method": "ping"}', -32600),
    ],
)
def test_bad_frames_become_error_frames(frame: bytes, code: int) -> None:
    session = opened()
    events, frames = feed(session, frame)
    assert [f["error"]["code"] for f in frames] == [code]
    assert isinstance(events[0], ProtocolError) and events[0].error.code == code


@pytest.mark.parametrize(
    "frame",
    [
        b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}',
        b'{"jsonrpc": "2.0", "id": 99, "result": {}}',
        b'{"jsonrpc": "2.0", "id": null, "error": {"code": 1, "message": "x"}}',
    ],
)
def test_what_json_rpc_does_not_answer_gets_no_frame(frame: bytes) -> None:
    session = opened()
    events, frames = feed(session, frame)
    assert frames == []
    assert isinstance(events[0], ProtocolError) and not events[0].answered


def test_the_in_flight_table_is_bounded_and_ids_are_not_reused_in_flight() -> None:
    session = server(max_pending=2)
    feed(session, initialize("2025-11-25"))
    feed(session, call(1))
    _, frames = feed(session, call(1))
    assert frames[0]["id"] == 1 and frames[0]["error"]["code"] == -32600
    feed(session, call(2))
    _, frames = feed(session, call(3))
    assert frames[0]["id"] == 3 and frames[0]["error"]["code"] == -32600
    assert session.in_flight == 2


# -- gates ---------------------------------------------------------------------------------------


def test_logging_is_sent_only_when_asked_and_at_the_level_asked() -> None:
    session = opened()
    request = only_request(feed(session, call(1))[0])
    assert not session.log("error", "too early")
    feed(
        session,
        {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "warning"}},
    )
    assert not session.log("info", "below")
    assert session.log("error", "above", logger="l")
    frames = [json.loads(f) for f in session.data_to_send()]
    assert frames == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "error", "data": "above", "logger": "l"},
        }
    ]
    with pytest.raises(InvalidOutgoingError):
        session.log("loud", "x")  # type: ignore[arg-type]
    session.respond(request, {"content": []})


def test_stateless_logging_follows_the_requests_level() -> None:
    session = server()
    quiet = only_request(feed(session, call(1, _meta=meta()))[0])
    loud = only_request(feed(session, call(2, _meta=meta(log_level="info")))[0])
    assert not session.log("emergency", "x", request=quiet)
    assert not session.log("debug", "x", request=loud)
    assert session.log("info", "x", request=loud)
    assert not session.log("info", "x")  # a stateless-era log belongs to a request


def test_progress_needs_the_requests_token_and_stops_with_the_request() -> None:
    session = opened()
    plain = only_request(feed(session, call(1))[0])
    assert not session.progress(plain, 1)
    tracked = only_request(feed(session, call(2, _meta={"progressToken": "p"}))[0])
    assert session.progress(tracked, 1, total=2, message="half")
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame["params"] == {"progressToken": "p", "progress": 1, "total": 2, "message": "half"}
    session.respond(tracked, {"content": []})
    with pytest.raises(UnknownRequestError):
        session.progress(tracked, 2)


def test_asking_a_client_that_did_not_declare_it_raises_and_sends_nothing() -> None:
    session = opened()
    request = only_request(feed(session, call(1))[0])
    assert not request.can_ask("elicitation/create")
    with pytest.raises(CapabilityError):
        session.ask(request, {"x": ELICIT})
    with pytest.raises(CapabilityError):
        session.request("roots/list")
    assert session.data_to_send() == [] and session.awaiting == 0
    old = opened("2024-11-05", elicitation={})
    request = only_request(feed(old, call(1))[0])
    assert not request.can_ask("elicitation/create")  # 2024-11-05 has no elicitation
    with pytest.raises(CapabilityError):
        old.ask(request, {"x": ELICIT})


# -- cancellation --------------------------------------------------------------------------------


def test_cancellation_is_an_event_and_drops_the_answer() -> None:
    session = opened()
    request = only_request(feed(session, call(1))[0])
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "bored"},
    }
    events, frames = feed(session, cancel)
    (cancelled,) = events
    assert frames == [] and isinstance(cancelled, CancelRequested)
    assert cancelled.request is request and cancelled.reason == "bored"
    assert session.cancelled(request) and session.in_flight == 0
    session.respond(request, {"content": []})  # dropped: nobody waits
    assert session.data_to_send() == []
    feed(session, cancel)  # a second cancellation changes nothing
    events, _ = feed(session, call(1))  # the id may be used again
    again = only_request(events)
    assert not session.cancelled(again)


def test_answering_twice_or_a_stranger_raises() -> None:
    session = opened()
    request = only_request(feed(session, call(1))[0])
    session.respond(request, {"content": []})
    with pytest.raises(UnknownRequestError):
        session.respond(request, {"content": []})
    with pytest.raises(UnknownRequestError):
        session.fail(request, InvalidParamsError("x"))


def test_a_result_its_method_refuses_raises_and_keeps_the_request() -> None:
    session = opened()
    request = only_request(feed(session, call(1))[0])
    with pytest.raises(InvalidOutgoingError, match="tools/call"):
        session.respond(request, {"content": "not a list"})
    with pytest.raises(InvalidOutgoingError):
        session.respond(request, ["not", "a", "result"])  # type: ignore[arg-type]
    assert session.data_to_send() == [] and session.in_flight == 1
    session.fail(request, InvalidParamsError("no"))
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no"}}


def test_notifications_are_checked_against_the_version() -> None:
    session = opened("2024-11-05")
    with pytest.raises(InvalidOutgoingError):
        session.notify("notifications/elicitation/complete", {"elicitationId": "x"})
    with pytest.raises(InvalidOutgoingError):
        session.notify("notifications/initialized")  # the client's
    session.notify("notifications/tools/list_changed")
    assert session.data_to_send() == [
        b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    ]
    with pytest.raises(SessionStateError):
        server().notify("notifications/tools/list_changed")


# -- the input round-trip ------------------------------------------------------------------------


def test_handshake_era_ask_sends_requests_and_returns_the_answers_with_the_call() -> None:
    session = opened(elicitation={}, roots={})
    request = only_request(feed(session, call(1))[0])
    session.ask(request, {"word": ELICIT, "where": {"method": "roots/list"}}, state="mine")
    sent = [json.loads(f) for f in session.data_to_send()]
    assert [s["method"] for s in sent] == ["elicitation/create", "roots/list"]
    first, second = (s["id"] for s in sent)
    events, _ = feed(session, {"jsonrpc": "2.0", "id": first, "result": {"action": "decline"}})
    assert events == []
    error = {"code": -32601, "message": "no roots"}
    events, _ = feed(session, {"jsonrpc": "2.0", "id": second, "error": error})
    (done,) = events
    assert isinstance(done, InputReceived) and done.request is request and done.state == "mine"
    assert isinstance(done.responses["word"], v2025_11_25.ElicitResult)
    assert isinstance(done.responses["where"], McpError) and done.responses["where"].code == -32601
    session.respond(done.request, {"content": []})
    assert json.loads(session.data_to_send()[0])["id"] == 1


def test_a_cancelled_call_cancels_what_it_asked() -> None:
    session = opened(elicitation={})
    request = only_request(feed(session, call(1))[0])
    session.ask(request, {"word": ELICIT})
    (asked,) = [json.loads(f) for f in session.data_to_send()]
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    _, (told,) = feed(session, cancel)
    assert told["method"] == "notifications/cancelled"
    assert told["params"]["requestId"] == asked["id"]
    events, frames = feed(
        session, {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "cancel"}}
    )
    assert frames == [] and isinstance(events[0], ProtocolError)  # no longer awaited


def test_stateless_ask_answers_input_required_and_reads_the_retry() -> None:
    session = server()
    request = only_request(feed(session, call(1, _meta=meta(elicitation={})))[0])
    session.ask(request, {"word": ELICIT}, state=42)
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    result = frame["result"]
    assert result["resultType"] == "input_required" and frame["id"] == 1
    assert result["inputRequests"] == {"word": ELICIT}
    assert session.in_flight == 0
    answers = {"word": {"action": "accept", "content": {"w": "x"}}}
    retry = call(
        2, _meta=meta(elicitation={}), requestState=result["requestState"], inputResponses=answers
    )
    (done,) = feed(session, retry)[0]
    assert isinstance(done, InputReceived) and done.state == 42 and done.request.id == 2
    assert isinstance(done.responses["word"], v2026_07_28.ElicitResult)
    _, frames = feed(session, retry | {"id": 3})  # the round is over
    assert frames[0]["error"]["code"] == -32602
    forged = call(4, _meta=meta(), requestState="forged", inputResponses=answers)
    assert feed(session, forged)[1][0]["error"]["code"] == -32602


# -- handler versions ----------------------------------------------------------------------------


def test_a_handler_version_reads_and_answers_in_its_own_models() -> None:
    session = server(handler_version=NEW)
    feed(session, initialize("2024-11-05"))
    request = only_request(feed(session, call(1, _meta={"progressToken": 7}))[0])
    assert isinstance(request.message, v2026_07_28.CallToolRequest)
    assert request.version == "2024-11-05" and request.context.progress_token == 7
    result = v2026_07_28.CallToolResult.model_validate(
        {"content": [], "structuredContent": {"a": 1}, "resultType": "complete"}
    )
    session.respond(request, result)
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame == {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
    listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    session.respond(only_request(feed(session, listed)[0]), {"tools": []})  # 2026-07-28 shaped
    assert json.loads(session.data_to_send()[0])["result"] == {"tools": []}  # nothing of 2026
    assert isinstance(
        codec.decode(json.dumps(frame), version="2024-11-05", method="tools/call"),
        codec.ResultResponse,
    )
    ping = server(handler_version=NEW, take=["ping"])
    feed(ping, initialize("2025-11-25"))
    _, frames = feed(ping, {"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert frames[0]["error"]["code"] == -32601  # 2026-07-28 has no ping to read it as


def test_a_handshake_handler_serves_a_stateless_client() -> None:
    session = server(handler_version="2025-11-25")
    request = only_request(feed(session, call(1, _meta=meta()))[0])
    assert isinstance(request.message, v2025_11_25.CallToolRequest)
    session.respond(request, v2025_11_25.CallToolResult(content=[]))
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame["result"]["resultType"] == "complete"
    assert frame["result"]["_meta"]["io.modelcontextprotocol/serverInfo"] == INFO


def test_results_of_any_version_are_projected_into_the_wire_version() -> None:
    session = opened("2024-11-05")
    request = only_request(feed(session, call(1))[0])
    session.respond(request, v2025_11_25.CallToolResult(content=[], structured_content={"a": 1}))
    assert json.loads(session.data_to_send()[0])["result"] == {"content": []}
    assert v2024_11_05.VERSION == session.version


# -- a session built like another (`ServerSession._like`, the HTTP endpoint's per request) --------


def test_a_session_built_like_another_starts_as_a_new_one() -> None:
    from mcp_schema.request_state import StateKeys, StateSealer
    from mcp_schema.tasks import TaskServer

    options: dict[str, Any] = {
        "request_state": StateSealer(StateKeys("a test key of at least thirty-two bytes")),
        "tasks": TaskServer(),
        "handler_version": NEW,
    }
    prototype = server(**options)
    request = call(1, _meta=meta(elicitation={}))
    feed(prototype, request)  # its state moved on: a version fixed, call 1 in flight
    assert prototype.subscriptions is not None  # built when first asked for
    like, built = prototype._like("alice"), server(**options, principal="alice")
    assert vars(like).keys() == vars(built).keys()
    # The arguments, read and never changed, and a cache of what they determine.
    arguments = {"tasks", "_sealer", "_extensions", "versions", "take", "_knowns", "telemetry"}
    for name, value in vars(like).items():
        if name not in arguments and type(value) not in (bool, int, str, type(None)):
            assert value is not vars(prototype)[name], name  # nothing of its state shared
    assert like.principal == "alice" and like.version is None and like.in_flight == 0
    assert (like.info, like.capabilities) == (built.info, built.capabilities)
    # It serves call 1 again, as a session built for it does, and seals for alice.
    events, frames = feed(like, request)
    assert [type(e) for e in events] == [type(e) for e in feed(built, request)[0]]
    like.ask(only_request(events), {"word": ELICIT})
    (asked,) = [json.loads(frame) for frame in [*frames, *like.data_to_send()]]
    answer = {"word": {"action": "accept", "content": {}}}
    retry = call(2, _meta=meta(elicitation={}), inputResponses=answer)
    retry["params"]["requestState"] = asked["result"]["requestState"]
    for principal, answered in (("alice", InputReceived), ("bob", ProtocolError)):
        found = server(**options, principal=principal).receive(json.dumps(retry))
        assert any(isinstance(e, answered) for e in found), principal


# -- a client session and a server session --------------------------------------------------------


def pump(client: ClientSession, serving: ServerSession, answer: Any) -> list[Event]:
    """Move frames both ways until both are quiet; the client's events."""
    seen: list[Event] = []
    while True:
        moved = False
        for frame in client.data_to_send():
            moved = True
            for event in serving.receive(frame):
                answer(serving, event)
        for frame in serving.data_to_send():
            moved = True
            for event in client.receive(frame):
                seen.append(event)
                if isinstance(event, InputRequested):
                    client.provide_input(
                        event,
                        {k: {"action": "accept", "content": {"w": "hi"}} for k in event.requests},
                    )
        if not moved:
            return seen


def serve(session: ServerSession, event: Event) -> None:
    if isinstance(event, RequestReceived) and event.method == "tools/call":
        if event.can_ask("elicitation/create"):
            session.ask(event, {"word": ELICIT})
        else:
            session.respond(event, {"content": [{"type": "text", "text": "no"}]})
    elif isinstance(event, RequestReceived):
        session.respond(event, {"tools": []})
    elif isinstance(event, InputReceived):
        answer = event.responses["word"]
        words = getattr(answer, "content", None) or {}
        session.respond(event.request, {"content": [{"type": "text", "text": words["w"]}]})


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_client_session_talks_to_a_server_session(era: str) -> None:
    client = ClientSession(info={"name": "c", "version": "1"}, capabilities={"elicitation": {}})
    serving = server()
    first = client.initialize() if era == "handshake" else client.discover()
    (negotiated,) = pump(client, serving, serve)
    assert isinstance(negotiated, Negotiated)
    assert serving.version == (client.version if era == "handshake" else None)  # discover only asks
    assert client.version == (HANDSHAKE_VERSIONS[-1] if era == "handshake" else NEW)
    assert first == 1
    rid = client.request("tools/call", {"name": "t"})
    (answer,) = [e for e in pump(client, serving, serve) if isinstance(e, ResponseReceived)]
    assert answer.id == rid and answer.error is None
    assert getattr(answer.result, "content")[0].text == "hi"  # noqa: B009
    rid = client.request("tools/list")
    (listed,) = pump(client, serving, serve)
    assert isinstance(listed, ResponseReceived) and listed.id == rid


def test_a_client_refuses_a_version_it_does_not_speak() -> None:
    client = ClientSession(info={"name": "c", "version": "1"}, versions=["2025-11-25"])
    client.initialize()
    client.data_to_send()
    answer = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": INFO},
    }
    (refused,) = client.receive(json.dumps(answer))
    assert isinstance(refused, ProtocolError) and refused.error.code == -32022
    assert client.version is None and client.data_to_send() == []


def test_a_client_hears_a_discover_refusal_and_may_fall_back() -> None:
    client = ClientSession(info={"name": "c", "version": "1"})
    client.discover()
    client.data_to_send()
    error = {"code": -32601, "message": "Method not found"}
    (refused,) = client.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}))
    assert isinstance(refused, ResponseReceived) and refused.error is not None
    client.initialize()
    assert json.loads(client.data_to_send()[0])["method"] == "initialize"


def test_a_client_answers_ping_and_refuses_what_it_did_not_declare() -> None:
    client = ClientSession(info={"name": "c", "version": "1"})
    client.initialize()
    client.data_to_send()
    client.receive(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": INFO},
            }
        )
    )
    assert json.loads(client.data_to_send()[0])["method"] == "notifications/initialized"
    _, frames = feed(client, {"jsonrpc": "2.0", "id": "s1", "method": "ping"})
    assert frames == [{"jsonrpc": "2.0", "id": "s1", "result": {}}]
    _, frames = feed(client, {"jsonrpc": "2.0", "id": "s2", **{k: v for k, v in ELICIT.items()}})
    assert frames[0]["error"]["code"] == -32601
    events, _ = feed(client, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    assert isinstance(events[0], NotificationReceived)


# -- any frames, valid or hostile ---------------------------------------------------------------

FRAMES = st.one_of(
    st.sampled_from(SUPPORTED_VERSIONS).flatmap(lambda v: messages(v)).map(lambda m: m.raw),
    st.sampled_from(SUPPORTED_VERSIONS).flatmap(invalid_messages).map(lambda m: m.raw),
    st.just(json.dumps(initialize("2025-06-18", {"elicitation": {}})).encode()),
    st.builds(
        lambda i: json.dumps(call(i % 4, _meta=meta(elicitation={}))).encode(), st.integers()
    ),
    st.builds(lambda i: json.dumps(call(i % 4)).encode(), st.integers()),
    st.binary(max_size=40),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=st.lists(FRAMES, max_size=12), choices=st.lists(st.integers(0, 3), min_size=12))
def test_any_frames_leave_the_session_consistent(frames: list[bytes], choices: list[int]) -> None:
    session = server(capabilities={"tools": {}, "resources": {}, "prompts": {}}, max_pending=3)
    fed_ids: list[object] = [None]
    fixed: str | None = None
    for raw, choice in zip(frames, choices[: len(frames)], strict=True):
        try:
            fed_ids.append(json.loads(raw).get("id"))
        except (ValueError, AttributeError):
            pass
        for event in session.receive(raw):  # never raises
            if isinstance(event, RequestReceived):
                try:
                    if choice == 0:
                        session.respond(event, {"content": []})
                    elif choice == 1:
                        session.fail(event, InvalidParamsError("no"))
                    elif choice == 2 and event.can_ask("elicitation/create"):
                        session.ask(event, {"w": ELICIT})
                except (InvalidOutgoingError, CapabilityError):
                    session.fail(event, InvalidParamsError("refused"))
        for frame in session.data_to_send():
            sent = json.loads(frame)
            decoded = codec.decode(frame, version=session.version)  # every frame decodes
            if codec.is_response(decoded):
                assert sent["id"] in fed_ids  # it answers what the peer sent
        assert session.in_flight <= 3 and session.awaiting <= 3
        if fixed is not None:
            assert session.version == fixed  # a negotiated version never changes
        fixed = session.version


# -- a property test aimed at a server's own tools (mcp_schema.testing.messages) ---------------

ARGUMENTS = st.fixed_dictionaries(
    {}, optional={"text": st.text(max_size=5), "a": st.integers(), "b": st.integers(-2, 2)}
)


@settings(max_examples=40, deadline=None)
@given(
    message=st.sampled_from(SUPPORTED_VERSIONS).flatmap(
        lambda v: messages(
            v, method="tools/call", kind="request", tools=["echo", "divide"], arguments=ARGUMENTS
        )
    )
)
def test_messages_aim_at_a_servers_own_tools(message: Any) -> None:
    value = message.value
    assert value["method"] == "tools/call" and value["params"]["name"] in ("echo", "divide")
    assert set(value["params"]["arguments"]) <= {"text", "a", "b"}
    decoded = codec.decode(message.raw, version=message.version)
    assert codec.is_request(decoded) and decoded.method == "tools/call"
    session = server(handler_version=NEW)
    if message.version in HANDSHAKE_VERSIONS:
        feed(session, initialize(message.version))
    events, frames = feed(session, message.raw)
    if "requestState" in value["params"]:  # a round this session never started
        assert [f["error"]["code"] for f in frames] == [-32602]
        return
    request = only_request(events)
    assert isinstance(request.message, v2026_07_28.CallToolRequest)
    assert request.message.params.name == value["params"]["name"]
    session.respond(request, {"content": [{"type": "text", "text": "ok"}]})
    assert len(session.data_to_send()) == 1


def test_messages_refuses_what_cannot_be_drawn() -> None:
    with pytest.raises(TypeError):
        messages(NEW, tools="echo")
    with pytest.raises(ValueError):
        messages(NEW, tools=[])
    assert messages(NEW, method=["ping", "tools/list"], kind="request") is not None


def opened_client(version: str) -> ClientSession:
    client = ClientSession(
        info={"name": "c", "version": "1"}, capabilities={"elicitation": {}, "roots": {}}
    )
    answer: dict[str, Any]
    if version in HANDSHAKE_VERSIONS:
        client.initialize(version)
        answer = {"protocolVersion": version, "capabilities": {}, "serverInfo": INFO}
        client.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "result": answer}))
    else:
        client.discover(version)
        answer = {
            "supportedVersions": [version],
            "capabilities": {},
            "resultType": "complete",
            "cacheScope": "private",
            "ttlMs": 0,
        }
        client.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "result": answer}))
    client.data_to_send()
    return client


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    version=st.sampled_from(SUPPORTED_VERSIONS),
    frames=st.lists(
        st.one_of(
            st.sampled_from(SUPPORTED_VERSIONS).flatmap(lambda v: messages(v)).map(lambda m: m.raw),
            st.binary(max_size=30),
        ),
        max_size=8,
    ),
)
def test_any_frames_leave_a_client_session_consistent(version: str, frames: list[bytes]) -> None:
    client = opened_client(version)
    assert client.version == version
    client.request("tools/list")
    for raw in frames:
        for event in client.receive(raw):  # never raises
            if isinstance(event, InputRequested):
                try:
                    client.provide_input(event, {k: {"roots": []} for k in event.requests})
                except InvalidOutgoingError:
                    pass
            elif isinstance(event, RequestReceived):
                try:
                    client.respond(event, {})  # an empty result, where the method allows it
                except InvalidOutgoingError:
                    client.fail(event, InternalError("no result to give"))
        for frame in client.data_to_send():
            codec.decode(frame, version=version, allow_unknown_methods=True)
        assert client.version == version and client.in_flight <= 1000


@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("number", [1e16, float(2**53), 1e300, -6.02214076e23, 5e-324])
def test_large_and_tiny_floats_in_an_answer_reach_the_client_as_sent(
    era: str, number: float
) -> None:
    # What the server's encode writes, the client's decode reads back to the
    # same double: nothing is left pending behind a -32700.
    client = ClientSession(info={"name": "c", "version": "1"})
    serving = server()
    client.initialize() if era == "handshake" else client.discover()
    pump(client, serving, serve)

    def structured(session: ServerSession, event: Event) -> None:
        if isinstance(event, RequestReceived):  # the stateless era's first is Negotiated
            session.respond(event, {"content": [], "structuredContent": {"v": number}})

    rid = client.request("tools/call", {"name": "t", "arguments": {"v": number}})
    (answer,) = pump(client, serving, structured)
    assert isinstance(answer, ResponseReceived) and answer.id == rid and answer.error is None
    assert getattr(answer.result, "structured_content") == {"v": number}  # noqa: B009
    assert client.awaiting == 0 and serving.in_flight == 0


def test_a_response_naming_another_request_than_the_one_answered_is_refused() -> None:
    client = ClientSession(info=INFO)
    probe = client.discover()
    client.data_to_send()
    result = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    result.update(supportedVersions=[NEW], capabilities={})
    answer = json.dumps({"jsonrpc": "2.0", "id": probe, "result": result})
    (refused,) = client.receive(answer, answering=probe + 1)
    assert isinstance(refused, ProtocolError) and not refused.answered
    assert client.awaiting == 1 and client.data_to_send() == []  # still due, nothing sent
    (negotiated,) = client.receive(answer, answering=probe)
    assert isinstance(negotiated, Negotiated) and client.awaiting == 0


def test_a_request_the_transport_lost_is_answered_with_its_error_once() -> None:
    client = ClientSession(info=INFO)
    probe = client.discover()
    lost = InternalError("the connection was reset")
    (answer,) = client.transport_failed(probe, lost)
    assert isinstance(answer, ResponseReceived) and answer.error is lost
    assert answer.id == probe and answer.method == "server/discover"
    assert client.transport_failed(probe, lost) == [] and client.awaiting == 0
