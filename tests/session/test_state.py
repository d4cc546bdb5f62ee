"""mcp_schema.session.state: what a connection remembers, and that a failed
call leaves it as it was: the peer's requests in flight, cancellation (a fact
of the request, not of its id), and answers that cannot be sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_schema.errors import InternalError
from mcp_schema.session import (
    CancelRequested,
    ClientSession,
    InputRequested,
    InvalidOutgoingError,
    RequestReceived,
    ServerSession,
)

INFO = {"name": "s", "version": "1"}


def opened(**caps: Any) -> ServerSession:
    session = ServerSession(info=INFO, capabilities={"tools": {}, "logging": {}})
    opening = {
        "protocolVersion": "2025-11-25",
        "capabilities": caps,
        "clientInfo": {"name": "c", "version": "1"},
    }
    session.receive(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": opening})
    )
    session.receive(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    session.data_to_send()
    return session


def called(session: ServerSession, rid: int, **meta: Any) -> RequestReceived:
    params: dict[str, Any] = {"name": "t"}
    if meta:
        params["_meta"] = meta
    events = session.receive(
        json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    )
    (event,) = events
    assert isinstance(event, RequestReceived)
    return event


def cancel(session: ServerSession, rid: int) -> None:
    cancelled = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid},
    }
    (event,) = session.receive(json.dumps(cancelled))
    assert isinstance(event, CancelRequested)


def test_a_cancelled_request_stays_cancelled_when_its_id_is_used_again() -> None:
    session = opened()
    session.receive(
        json.dumps(
            {"jsonrpc": "2.0", "method": "logging/setLevel", "id": 9, "params": {"level": "debug"}}
        )
    )
    old = called(session, 1, progressToken="p")
    cancel(session, 1)
    new = called(session, 1, progressToken="p")
    session.data_to_send()
    assert session.cancelled(old) and not session.cancelled(new)
    # Everything aimed at the old request is dropped, not an error.
    session.respond(old, {"content": []})
    session.fail(old, InternalError("late"))
    assert session.progress(old, 0.5) is False
    assert session.log("error", "x", request=old) is False
    assert session.data_to_send() == [] and session.in_flight == 1
    session.respond(new, {"content": []})
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame["id"] == 1 and "result" in frame
    assert session.cancelled(old)


UNSENDABLE = [
    {"content": [], "structuredContent": {"ratio": 1 / 5e-324}},  # inf
    {"content": [{"type": "text", "text": "\ud800"}]},  # a lone surrogate
]


@pytest.mark.parametrize("result", UNSENDABLE)
def test_a_result_with_no_json_text_raises_and_the_request_can_still_fail(
    result: dict[str, Any],
) -> None:
    session = opened()
    request = called(session, 1)
    with pytest.raises(InvalidOutgoingError, match="not JSON"):
        session.respond(request, result)
    assert session.data_to_send() == [] and session.in_flight == 1
    session.fail(request, InternalError("could not encode the result"))
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame["id"] == 1 and frame["error"]["code"] == -32603
    assert session.in_flight == 0


def test_a_client_answer_with_no_json_text_raises_and_the_request_can_still_fail() -> None:
    client = ClientSession(info={"name": "c", "version": "1"}, capabilities={"roots": {}})
    client.initialize()
    client.data_to_send()
    answer = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": INFO},
    }
    client.receive(json.dumps(answer))
    client.data_to_send()
    (asked,) = client.receive(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "roots/list"}))
    assert isinstance(asked, InputRequested)
    with pytest.raises(InvalidOutgoingError, match="not JSON"):
        client.provide_input(asked, {"roots/list": {"roots": [{"uri": "file:///\ud800"}]}})
    assert client.data_to_send() == [] and client.in_flight == 1
    client.provide_input(asked, {"roots/list": {"roots": []}})
    (frame,) = [json.loads(f) for f in client.data_to_send()]
    assert frame == {"jsonrpc": "2.0", "id": 5, "result": {"roots": []}}
    with pytest.raises(InvalidOutgoingError, match="provided already"):
        client.provide_input(asked, {"roots/list": {"roots": []}})
