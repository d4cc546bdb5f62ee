"""`mcp_schema.session.handlers` and `ServerSession.changed`: a request
answered by what a function returns (its result, the `McpError` it raises,
nothing when it returns None), the client's answers to a question going to
the same function; the stdio loop, a line in and its answers out; a change
told to 2026-07-28 listens or, in the handshake era, as the notification."""

from __future__ import annotations

import io
import json
from typing import Any

from mcp_schema.errors import InvalidParamsError
from mcp_schema.session import (
    InputReceived,
    RequestReceived,
    ServerSession,
    answered_by,
    serve_stdio,
)
from tests.hostile import META

INFO = {"name": "s", "version": "1"}
CAPABILITIES = {"tools": {"listChanged": True}}
ASKABLE = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
QUESTION = {
    "method": "elicitation/create",
    "params": {"message": "A word?", "requestedSchema": {"type": "object", "properties": {}}},
}


def line(rid: int, method: str, **params: Any) -> bytes:
    value = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": ASKABLE, **params}}
    return json.dumps(value).encode() + b"\n"


def answer(session: ServerSession, event: RequestReceived | InputReceived) -> Any:
    if isinstance(event, InputReceived):
        return {"content": [{"type": "text", "text": "answered"}]}
    name = getattr(getattr(event.message, "params", None), "name", None)
    if name == "fails":
        raise InvalidParamsError("no such thing", {"name": name})
    if name == "asks":
        return session.ask(event, {"word": QUESTION})  # None: answered later
    return {"tools": []} if event.method == "tools/list" else None


def served(*lines: bytes, session: ServerSession | None = None) -> list[dict[str, Any]]:
    if session is None:
        session = ServerSession(info=INFO, capabilities=CAPABILITIES, handler_version="2026-07-28")
    out = io.BytesIO()
    serve_stdio(session, answered_by(answer), lines, out)
    return [json.loads(frame) for frame in out.getvalue().splitlines()]


def test_a_request_is_answered_with_what_the_function_returns_or_raises() -> None:
    listed, failed = served(line(1, "tools/list"), line(2, "tools/call", name="fails"))
    assert listed["id"] == 1 and listed["result"]["tools"] == []
    assert failed["id"] == 2 and failed["error"]["code"] == -32602


def test_a_question_answers_the_call_and_its_answer_reaches_the_same_function() -> None:
    session = ServerSession(info=INFO, capabilities=CAPABILITIES, handler_version="2026-07-28")
    (asked,) = served(line(3, "tools/call", name="asks"), session=session)
    assert asked["id"] == 3 and asked["result"]["resultType"] == "input_required"
    retry = {
        "name": "asks",
        "inputResponses": {"word": {"action": "accept", "content": {}}},
        "requestState": asked["result"].get("requestState"),
    }
    retry = {k: v for k, v in retry.items() if v is not None}
    (done,) = served(line(4, "tools/call", **retry), session=session)
    assert done["id"] == 4 and done["result"]["content"][0]["text"] == "answered"


def test_a_change_reaches_the_listens_that_asked_or_the_handshake_client() -> None:
    stateless = ServerSession(info=INFO, capabilities=CAPABILITIES)
    stateless.receive(line(5, "subscriptions/listen", notifications={"toolsListChanged": True}))
    stateless.data_to_send()  # the acknowledgement
    assert stateless.changed("notifications/tools/list_changed") == 1
    (told,) = [json.loads(f) for f in stateless.data_to_send()]
    assert told["method"] == "notifications/tools/list_changed"
    assert "io.modelcontextprotocol/subscriptionId" in told["params"]["_meta"]

    handshake = ServerSession(info=INFO, capabilities=CAPABILITIES)
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO}
    handshake.receive(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    )
    handshake.receive(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    handshake.data_to_send()
    assert handshake.changed("notifications/tools/list_changed") == 1
    (notified,) = [json.loads(f) for f in handshake.data_to_send()]
    assert notified == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
