"""A session's server span runs from reading a request to queueing its
answer, in both eras, with the outcome the answer carries."""

from __future__ import annotations

import json

import pytest
from opentelemetry.trace import SpanKind

from mcp_schema.errors import InvalidParamsError
from mcp_schema.session import RequestReceived, ServerSession
from mcp_schema.telemetry import telemetry_for
from tests import hostile
from tests.hostile import raw
from tests.telemetry.conftest import Recorded

INFO = {"name": "s", "version": "1"}
NEW = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": NEW,
    "io.modelcontextprotocol/clientCapabilities": {},
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
}


def server(recorded: Recorded) -> ServerSession:
    return ServerSession(info=INFO, capabilities={"tools": {}}, telemetry=recorded.telemetry)


def call(rid: int, name: str = "echo") -> bytes:
    return raw(hostile.call(META, rid=rid, name=name, arguments={}))


def request_of(session: ServerSession, frame: bytes) -> RequestReceived:
    (event,) = [e for e in session.receive(frame) if isinstance(e, RequestReceived)]
    return event


def test_span_ends_when_the_answer_is_queued(recorded: Recorded) -> None:
    session = server(recorded)
    request = request_of(session, call(1))
    assert recorded.spans() == []  # open until answered
    session.respond(request, {"content": [], "isError": True})
    (span,) = recorded.spans()
    assert span.kind is SpanKind.SERVER and span.name == "tools/call echo"
    attributes = dict(span.attributes or {})
    assert attributes["mcp_schema.era"] == "stateless"
    assert attributes["mcp.protocol.version"] == NEW
    assert attributes["error.type"] == "tool_error"
    assert f"{span.context.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"


def test_a_failed_request_records_its_code(recorded: Recorded) -> None:
    session = server(recorded)
    session.fail(request_of(session, call(1)), InvalidParamsError("no such argument"))
    (span,) = recorded.spans()
    assert span.attributes is not None and span.attributes["error.type"] == "-32602"
    (point,) = recorded.points("mcp.server.operation.duration")
    assert dict(point.attributes)["error.type"] == "-32602"


def test_a_stateless_session_made_per_request_keeps_the_telemetry(recorded: Recorded) -> None:
    fresh = server(recorded)._like(None)
    fresh.respond(request_of(fresh, call(5)), {"content": []})
    (span,) = recorded.spans()
    assert span.attributes is not None and span.attributes["jsonrpc.request.id"] == "5"


def test_a_handshake_session_names_the_session_era(recorded: Recorded) -> None:
    session = server(recorded)
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    session.receive(json.dumps(hello))  # the session answers initialize itself
    (span,) = recorded.spans()
    assert span.name == "initialize"
    assert span.attributes is not None and span.attributes["mcp_schema.era"] == "handshake"


def test_telemetry_false_records_nothing(recorded: Recorded) -> None:
    session = ServerSession(info=INFO, capabilities={"tools": {}}, telemetry=False)
    assert session.telemetry is None
    session.respond(request_of(session, call(1)), {"content": []})
    assert recorded.spans() == []


def test_the_api_without_an_sdk_is_inactive() -> None:
    # The global providers are the API's proxies in this process (the tests
    # give providers explicitly): nothing is started per request.
    default = telemetry_for(None)
    assert default is not None and not default.active
    assert telemetry_for(None) is default


def test_refusals_and_requests_are_counted(recorded: Recorded) -> None:
    session = server(recorded)
    session.receive(b'{"jsonrpc":"2.0","id":1,"method":"tools/call"')  # cut short
    session.receive(b'{"jsonrpc":"2.0","id":2,"method":"no/such","params":{"_meta":{}}}')
    session.respond(request_of(session, call(3)), {"content": []})
    codes = {
        (dict(p.attributes)["rpc.response.status_code"], dict(p.attributes)["mcp.method.name"])
        for p in recorded.points("mcp_schema.refused")
    }
    assert ("-32700", "_OTHER") in codes
    assert any(method == "_OTHER" and code != "-32700" for code, method in codes)
    (requests,) = recorded.points("mcp.server.operation.duration")  # its count: the requests
    assert requests.count == 1 and dict(requests.attributes)["mcp_schema.era"] == "stateless"


def test_a_handshake_session_records_its_duration_when_it_closes(recorded: Recorded) -> None:
    from mcp_schema.http.sessions import LiveSession

    LiveSession(None, server(recorded)).close()  # a stateless request's: no session
    assert recorded.points("mcp.server.session.duration") == []
    LiveSession("abc", server(recorded)).close()
    (point,) = recorded.points("mcp.server.session.duration")
    assert point.count == 1 and dict(point.attributes) == {"network.transport": "tcp"}


def test_without_an_sdk_the_globals_are_asked_at_most_once_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp_schema.telemetry import recorder

    asked: list[bool] = []

    def behind() -> bool:
        asked.append(True)
        return len(asked) > 1  # an SDK appears after the first look

    monkeypatch.setattr(recorder, "_sdk_behind_globals", behind)
    clock = [100.0]
    monkeypatch.setattr("mcp_schema.telemetry.recorder.time.monotonic", lambda: clock[0])
    telemetry = recorder.Telemetry()
    assert not telemetry.active and not telemetry.active  # asked once
    assert len(asked) == 1
    clock[0] += recorder.RECHECK_SECONDS
    assert telemetry.active and telemetry.active  # found, and kept
    assert len(asked) == 2


def test_a_refused_sealed_state_is_counted_by_its_reason(recorded: Recorded) -> None:
    from mcp_schema.request_state import StateKeys, StateSealer

    sealer = StateSealer(StateKeys("a key of thirty-two bytes or more, surely"))
    session = ServerSession(
        info=INFO, capabilities={"tools": {}}, request_state=sealer, telemetry=recorded.telemetry
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "echo", "arguments": {}, "requestState": "forged!", "_meta": meta}
    request = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
    session.receive(json.dumps(request).encode())
    reasons = {
        p.attributes["mcp_schema.reason"]: p.value
        for p in recorded.points("mcp_schema.state.refused")
    }
    assert reasons == {"not_sealed_here": 1}
