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
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import (
    InputReceived,
    InvalidOutgoingError,
    Negotiated,
    ProtocolError,
    RequestReceived,
    ServerSession,
)

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


# -- sealed rounds: the retry served by a new session holding the same keys -----------

KEY = "a test key of at least thirty-two bytes, never used"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def sealing(
    keys: StateKeys | None = None, clock: Clock | None = None, principal: str | None = "alice"
) -> ServerSession:
    sealer = StateSealer(keys or StateKeys(KEY), clock=clock or Clock())
    return ServerSession(
        info=INFO, capabilities={"tools": {}}, request_state=sealer, principal=principal
    )


def sealed(asks: dict[str, Any], state: object = None, **options: Any) -> str:
    """The requestState a sealing session answered call 1 with, asking ``asks``."""
    session = sealing(**options)
    (request,) = [e for e in session.receive(call(1)) if isinstance(e, RequestReceived)]
    session.ask(request, asks, state=state)
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame["result"]["resultType"] == "input_required"
    return frame["result"]["requestState"]  # type: ignore[no-any-return]


def test_a_sealed_round_is_answered_by_a_new_session() -> None:
    state = sealed({"confirm": ELICIT}, state={"step": 1, "items": ["a"]})
    events = sealing().receive(call(2, requestState=state, inputResponses={"confirm": ACCEPT}))
    (done,) = [e for e in events if isinstance(e, InputReceived)]
    assert done.request.id == 2 and done.state == {"step": 1, "items": ["a"]}
    assert isinstance(done.responses["confirm"], v2026_07_28.ElicitResult)
    assert done.responses["confirm"].content == {"ok": True}


def test_a_sealed_round_keeps_nothing_in_the_session() -> None:
    clock = Clock()
    session = sealing(clock=clock)
    (request,) = [e for e in session.receive(call(1)) if isinstance(e, RequestReceived)]
    session.ask(request, {"confirm": ELICIT})
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    state = frame["result"]["requestState"]
    for rid in (2, 3):  # nothing is closed: valid until it expires, however often presented
        retry = call(rid, requestState=state, inputResponses={"confirm": ACCEPT})
        (done,) = session.receive(retry)
        assert isinstance(done, InputReceived)
        session.respond(done.request, {"content": []})
        assert json.loads(session.data_to_send()[0])["id"] == rid


def test_what_is_left_unanswered_in_a_sealed_round_is_asked_again_by_any_session() -> None:
    state = sealed({"confirm": ELICIT, "where": ROOTS}, state="s")
    sealing().receive(call(2, requestState=state, inputResponses={"confirm": ACCEPT}))
    second = sealing()
    assert [
        type(e)
        for e in second.receive(call(2, requestState=state, inputResponses={"confirm": ACCEPT}))
    ] != [InputReceived]
    (frame,) = [json.loads(f) for f in second.data_to_send()]
    assert list(frame["result"]["inputRequests"]) == ["where"]
    again = frame["result"]["requestState"]
    (done,) = [
        e
        for e in sealing().receive(
            call(3, requestState=again, inputResponses={"where": {"roots": []}})
        )
        if isinstance(e, InputReceived)
    ]
    assert set(done.responses) == {"confirm", "where"} and done.state == "s"
    assert isinstance(done.responses["confirm"], v2026_07_28.ElicitResult)


def refused_sealed(session: ServerSession, raw: bytes) -> dict[str, Any]:
    events = session.receive(raw)
    assert [type(e) for e in events if not isinstance(e, Negotiated)] == [ProtocolError]
    (frame,) = [json.loads(f) for f in session.data_to_send()]
    assert frame["error"]["code"] == -32602
    return frame["error"]["data"]["errors"][0]  # type: ignore[no-any-return]


def test_a_tampered_sealed_state_is_refused() -> None:
    state = sealed({"confirm": ELICIT})
    tampered = state[:-2] + ("AA" if state[-2:] != "AA" else "BB")
    found = refused_sealed(
        sealing(), call(2, requestState=tampered, inputResponses={"confirm": ACCEPT})
    )
    assert found["path"] == "$.params.requestState"


def test_an_expired_sealed_state_is_refused() -> None:
    clock = Clock()
    state = sealed({"confirm": ELICIT}, clock=clock)
    clock.now += 601
    found = refused_sealed(
        sealing(clock=clock), call(2, requestState=state, inputResponses={"confirm": ACCEPT})
    )
    assert found == {"path": "$.params.requestState", "reason": "expired"}


def test_a_sealed_state_with_another_call_is_refused() -> None:
    state = sealed({"confirm": ELICIT})
    swapped = call(
        2, arguments={"amount": 10_000}, requestState=state, inputResponses={"confirm": ACCEPT}
    )
    found = refused_sealed(sealing(), swapped)
    assert found["reason"] == "sealed for a call with other params"


def test_a_sealed_state_of_another_principal_is_refused() -> None:
    state = sealed({"confirm": ELICIT})
    retry = call(2, requestState=state, inputResponses={"confirm": ACCEPT})
    for other in ("mallory", None):
        found = refused_sealed(sealing(principal=other), retry)
        assert found["reason"] == "sealed for another principal"


def test_an_answer_of_another_type_to_a_sealed_round_is_refused() -> None:
    state = sealed({"confirm": ELICIT})
    retry = call(2, requestState=state, inputResponses={"confirm": {"roots": []}})
    found = refused_sealed(sealing(), retry)
    assert found["path"].startswith('$.params.inputResponses["confirm"]')


def test_an_in_memory_state_is_refused_by_a_sealing_session_and_the_reverse() -> None:
    _, state = asked({"confirm": ELICIT})
    retry = call(2, requestState=state, inputResponses={"confirm": ACCEPT})
    assert refused_sealed(sealing(), retry)["path"] == "$.params.requestState"
    stranger = ServerSession(info=INFO, capabilities={"tools": {}})
    retry = call(2, requestState=sealed({"confirm": ELICIT}), inputResponses={"confirm": ACCEPT})
    assert refused_sealed(stranger, retry)["reason"] == "unknown or expired"


def test_a_state_the_application_sealed_itself_is_not_a_round() -> None:
    sealer = StateSealer(StateKeys(KEY), clock=Clock())
    own = sealer.seal(codec.decode(call(1)), principal="alice", data={"step": "mine"})
    found = refused_sealed(sealing(), call(2, requestState=own, inputResponses={}))
    assert found["reason"] == "not a request state of this server's input rounds"


def test_a_sealed_round_survives_key_rotation() -> None:
    old = "the old key, at least thirty-two bytes long"
    state = sealed({"confirm": ELICIT}, keys=StateKeys(old))
    retry = call(2, requestState=state, inputResponses={"confirm": ACCEPT})
    rotated = sealing(keys=StateKeys(KEY, old))
    assert [type(e) for e in rotated.receive(retry) if not isinstance(e, Negotiated)] == [
        InputReceived
    ]
    dropped = refused_sealed(sealing(keys=StateKeys(KEY)), retry)
    assert dropped["reason"] == "sealed with a key this server does not hold"


@pytest.mark.parametrize("state", [object(), {1: "a"}, float("nan"), "x" * 70_000])
def test_a_state_that_cannot_be_sealed_is_the_authors_error(state: object) -> None:
    session = sealing()
    (request,) = [e for e in session.receive(call(1)) if isinstance(e, RequestReceived)]
    with pytest.raises(InvalidOutgoingError):
        session.ask(request, {"confirm": ELICIT}, state=state)
    assert session.data_to_send() == [] and session.in_flight == 1  # nothing changed
    session.respond(request, {"content": []})
    assert json.loads(session.data_to_send()[0])["result"]["content"] == []


def test_answers_too_large_to_carry_are_refused() -> None:
    sealer = StateSealer(StateKeys(KEY), max_length=4000, clock=Clock())
    options: dict[str, Any] = {"request_state": sealer, "principal": "alice"}
    first = ServerSession(info=INFO, capabilities={"tools": {}}, **options)
    (request,) = [e for e in first.receive(call(1)) if isinstance(e, RequestReceived)]
    first.ask(request, {"confirm": ELICIT, "where": ROOTS})
    state = json.loads(first.data_to_send()[0])["result"]["requestState"]
    big = {"action": "accept", "content": {"ok": "x" * 5000}}
    second = ServerSession(info=INFO, capabilities={"tools": {}}, **options)
    found = refused_sealed(second, call(2, requestState=state, inputResponses={"confirm": big}))
    assert found == {
        "path": "$.params.inputResponses",
        "reason": "too large to carry to the next round",
    }


def test_the_sealing_options_are_checked() -> None:
    with pytest.raises(TypeError):
        ServerSession(info=INFO, request_state="key")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ServerSession(info=INFO, principal=1)  # type: ignore[arg-type]
