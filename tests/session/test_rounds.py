"""Input rounds through a session: a retry is bound to the call it answers
(the same params, answers that are results of the methods asked), keys not
asked are ignored, and what is left unanswered is asked again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_schema import codec, v2026_07_28
from mcp_schema.context import check_input_responses, input_required
from mcp_schema.errors import InvalidParamsError
from mcp_schema.session import InputReceived, ProtocolError, RequestReceived, ServerSession

INFO = {"name": "s", "version": "1"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "roots": {}},
}
ELICIT = {
    "method": "elicitation/create",
    "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
}
ROOTS = {"method": "roots/list"}
ACCEPT = {"action": "accept", "content": {"ok": True}}


def call(rid: int, **params: Any) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "pay", "arguments": {"amount": 10}, "_meta": META, **params},
    }
    return json.dumps(message).encode()


def asked(asks: dict[str, Any]) -> tuple[ServerSession, str]:
    """A session that answered call 1 by asking ``asks``; the requestState."""
    session = ServerSession(info=INFO, capabilities={"tools": {}})
    (request,) = [e for e in session.receive(call(1)) if isinstance(e, RequestReceived)]
    session.ask(request, asks)
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    return session, frame["result"]["requestState"]


def refused(session: ServerSession, raw: bytes) -> dict[str, Any]:
    events = session.receive(raw)
    assert [type(e) for e in events] == [ProtocolError]
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    return frame["error"]  # type: ignore[no-any-return]


def test_an_answer_of_another_method_is_refused() -> None:
    session, state = asked({"confirm": ELICIT})
    error = refused(session, call(2, requestState=state, inputResponses={"confirm": {"roots": []}}))
    assert error["code"] == -32602
    assert error["data"]["errors"][0]["path"].startswith('$.params.inputResponses["confirm"]')


def test_a_retry_of_another_call_is_refused() -> None:
    session, state = asked({"confirm": ELICIT})
    changed = call(
        2,
        arguments={"amount": 10_000_000},
        requestState=state,
        inputResponses={"confirm": ACCEPT},
    )
    error = refused(session, changed)
    assert error["code"] == -32602 and "not the call" in error["message"]
    # The round is still open: the real retry is answered.
    events = session.receive(call(3, requestState=state, inputResponses={"confirm": ACCEPT}))
    assert [type(e) for e in events] == [InputReceived]


def test_keys_not_asked_are_ignored() -> None:
    session, state = asked({"confirm": ELICIT})
    answers = {"confirm": ACCEPT, "stray": {"roots": []}}
    (done,) = session.receive(call(2, requestState=state, inputResponses=answers))
    assert isinstance(done, InputReceived) and list(done.responses) == ["confirm"]
    assert isinstance(done.responses["confirm"], v2026_07_28.ElicitResult)


def test_what_is_left_unanswered_is_asked_again() -> None:
    session, state = asked({"confirm": ELICIT, "where": ROOTS})
    events = session.receive(call(2, requestState=state, inputResponses={"confirm": ACCEPT}))
    assert events == []
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame["id"] == 2 and frame["result"]["resultType"] == "input_required"
    assert [(k, v["method"]) for k, v in frame["result"]["inputRequests"].items()] == [
        ("where", "roots/list")
    ]
    again = frame["result"]["requestState"]
    assert again != state
    assert refused(session, call(3, requestState=state, inputResponses={}))["code"] == -32602
    (done,) = session.receive(call(4, requestState=again, inputResponses={"where": {"roots": []}}))
    assert isinstance(done, InputReceived) and done.request.id == 4
    assert set(done.responses) == {"confirm", "where"}
    assert isinstance(done.responses["where"], v2026_07_28.ListRootsResult)


def _retry(answers: dict[str, Any]) -> Any:
    return codec.decode(call(2, requestState="s", inputResponses=answers))


def test_check_input_responses_ignores_keys_not_asked_and_checks_each_answers_method() -> None:
    ask = input_required("2026-07-28", {"confirm": ELICIT}, state="s")
    assert isinstance(ask, v2026_07_28.InputRequiredResult)
    answers = check_input_responses(_retry({"confirm": ACCEPT, "stray": {"roots": []}}), ask)
    assert list(answers) == ["confirm"]
    with pytest.raises(InvalidParamsError) as refusal:
        check_input_responses(_retry({"confirm": {"roots": []}}), ask)
    assert refusal.value.message.startswith('Invalid params: $.params.inputResponses["confirm"]')
