"""The sans-IO parts of the bridge for 2026-07-28 clients in front of a
handshake-era server (`mcp_schema.gateway.bridge.stateless`), driven in process
against the example server's session (``examples/server.py``'s ``serve``,
serving 2025-06-18 only)."""

from __future__ import annotations

import json
import runpy
import secrets
from pathlib import Path
from typing import Any

import pytest

from mcp_schema import projection
from mcp_schema.gateway.bridge.stateless import (
    Call,
    HandshakeBridge,
    PendingCalls,
    Upstream,
    answer_of,
    carry,
    projected_capabilities,
    upstream_key,
)
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import (
    InputReceived,
    InputRequested,
    RequestReceived,
    ResponseReceived,
    ServerSession,
)
from mcp_schema.session.peer import Peer
from mcp_schema.session.sending import Sending
from mcp_schema.subscriptions import Subscriptions

EXAMPLE = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "server.py"))
SERVER_CAPABILITIES = {
    "tools": {"listChanged": True},
    "resources": {},
    "prompts": {},
    "logging": {},
}
INFO = {"name": "example-server", "version": "1.0.0"}


def meta(capabilities: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        **more,
    }


def call_body(rid: int, tool: str, capabilities: dict[str, Any], **more: Any) -> bytes:
    params = {"name": tool, "arguments": {}, "_meta": meta(capabilities), **more}
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    ).encode()


class Pair:
    """An `Upstream` wired to the example server's session, in process."""

    def __init__(self, capabilities: dict[str, Any]) -> None:
        self.server = ServerSession(
            info=INFO,
            capabilities=SERVER_CAPABILITIES,
            handler_version="2026-07-28",
            versions=["2025-06-18"],
        )
        self.upstream = Upstream("k", "2025-06-18", capabilities, SERVER_CAPABILITIES, INFO)
        assert self.pump() == []  # initialize, answered
        assert self.upstream.ready

    def pump(self) -> list[tuple[Call | None, Any]]:
        """Carry frames both ways until both are quiet: what the upstream routed."""
        routed: list[tuple[Call | None, Any]] = []
        while frames := self.upstream.client.data_to_send():
            for frame in frames:
                for event in self.server.receive(frame):
                    EXAMPLE["serve"](self.server, event)
            for frame in self.server.data_to_send():
                routed += [r for r in self.upstream.receive(frame) if r[0] is not None]
        return routed


@pytest.fixture
def bridge() -> HandshakeBridge:
    sealer = StateSealer(StateKeys(secrets.token_bytes(32)))
    return HandshakeBridge(
        version="2025-06-18", info=INFO, capabilities=SERVER_CAPABILITIES, sealer=sealer
    )


def started(bridge: HandshakeBridge, pair: Pair, body: bytes, principal: str | None = None) -> Call:
    front = bridge.front(principal)
    (request,) = [e for e in front.receive(body) if isinstance(e, RequestReceived)]
    call = Call(front, request, pair.upstream.token())
    pair.upstream.asking = call
    pair.upstream.start(call, *bridge.upstream_request(request, call.token))  # as the driver
    return call


def test_capabilities_are_projected_to_what_the_version_has_a_member_for() -> None:
    declared: dict[str, Any] = {
        "elicitation": {},
        "sampling": {},
        "roots": {},
        "extensions": {"x": {}},
    }
    assert projected_capabilities(declared, "2025-06-18") == {
        "elicitation": {},
        "sampling": {},
        "roots": {},
    }
    assert projected_capabilities(declared, "2024-11-05") == {"sampling": {}, "roots": {}}


def test_an_upstream_key_names_the_principal_and_the_capabilities() -> None:
    assert upstream_key("a", {"x": {}, "y": {}}) == upstream_key("a", {"y": {}, "x": {}})
    assert upstream_key("a", {}) != upstream_key("b", {})
    assert upstream_key(None, {}) != upstream_key(None, {"elicitation": {}})


def test_pending_calls_are_bounded_bound_to_their_principal_and_expire() -> None:
    now = [0.0]
    pending = PendingCalls(max_calls=1, seconds=10, clock=lambda: now[0])
    first, second = (Call(None, None, "gw-1"), Call(None, None, "gw-2"))  # type: ignore[arg-type]
    name = pending.put(first, "alice")
    assert name is not None and first.pending == name
    assert pending.put(second, "alice") is None  # full
    assert pending.take(name, "bob") is None  # another principal's
    assert pending.take(name, "alice") is first and len(pending) == 0
    assert pending.take(name, "alice") is None  # taken once
    name = pending.put(second, None)
    now[0] = 10.0
    assert pending.take(name, None) is None  # expired
    assert pending.expired() == [second] and len(pending) == 0


def test_an_ask_becomes_a_sealed_input_required_result_and_the_retry_answers_the_same_call(
    bridge: HandshakeBridge,
) -> None:
    pair = Pair({"elicitation": {}})
    call = started(bridge, pair, call_body(1, "ask", {"elicitation": {}}), "alice")
    [(routed, asked)] = pair.pump()
    assert routed is call and isinstance(asked, InputRequested)
    assert bridge.pending.put(call, "alice") is not None
    assert carry(call, asked) == "asked"
    [frame] = call.front.data_to_send()
    result = json.loads(frame)["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"]["input"]["method"] == "elicitation/create"

    # The retry, read by a front session of its own, names the pending call.
    answers = {"input": {"action": "accept", "content": {"text": "hey"}}}
    retry = call_body(
        2, "ask", {"elicitation": {}}, requestState=result["requestState"], inputResponses=answers
    )
    front = bridge.front("alice")
    (resumed,) = [e for e in front.receive(retry) if isinstance(e, InputReceived)]
    assert isinstance(resumed.state, dict)
    assert bridge.pending.take(resumed.state["call"], "alice") is call
    call.front, call.request = front, resumed.request
    answer = answer_of(call, resumed.responses, "2025-06-18")
    pair.upstream.client.provide_input(asked, {"elicitation/create": answer})  # type: ignore[dict-item]
    [(routed, response)] = pair.pump()
    assert routed is call and isinstance(response, ResponseReceived)
    assert carry(call, response) == "answered"
    [frame] = front.data_to_send()
    done = json.loads(frame)
    assert done["id"] == 2 and done["result"]["resultType"] == "complete"
    assert done["result"]["content"][0]["text"] == "you said hey"


def test_a_retry_for_another_principal_is_refused(bridge: HandshakeBridge) -> None:
    pair = Pair({"elicitation": {}})
    call = started(bridge, pair, call_body(1, "ask", {"elicitation": {}}), "alice")
    [(_, asked)] = pair.pump()
    bridge.pending.put(call, "alice")
    carry(call, asked)
    state = json.loads(call.front.data_to_send()[0])["result"]["requestState"]
    answers = {"input": {"action": "accept", "content": {"text": "hey"}}}
    retry = call_body(2, "ask", {"elicitation": {}}, requestState=state, inputResponses=answers)
    front = bridge.front("mallory")
    assert not [e for e in front.receive(retry) if isinstance(e, InputReceived)]
    error = json.loads(front.data_to_send()[0])["error"]
    assert error["code"] == -32602  # the sealed state names alice


def test_progress_reaches_the_call_whose_token_it_names_in_the_clients_own_token(
    bridge: HandshakeBridge,
) -> None:
    pair = Pair({})
    body = call_body(1, "count", {})
    calls = []
    for _ in range(2):  # both clients use id 1 and progress token 7
        value = json.loads(body)
        value["params"]["_meta"]["progressToken"] = 7
        calls.append(started(bridge, pair, json.dumps(value).encode()))
    assert len({c.token for c in calls}) == 2
    routed = pair.pump()
    for call in calls:
        mine = [event for owner, event in routed if owner is call]
        assert [carry(call, event) for event in mine] == ["sent"] * 3 + ["answered"]
        frames = [json.loads(f) for f in call.front.data_to_send()]
        assert [f["params"]["progressToken"] for f in frames[:3]] == [7, 7, 7]
        assert [f["params"]["progress"] for f in frames[:3]] == [1, 2, 3]
        assert frames[3]["id"] == 1


def test_log_messages_come_at_the_requests_own_level(bridge: HandshakeBridge) -> None:
    pair = Pair({})
    pair.upstream.client.request("logging/setLevel", {"level": "debug"})
    pair.pump()
    quiet = started(bridge, pair, call_body(1, "count", {}))
    routed = pair.pump()
    assert [carry(quiet, e) for c, e in routed if c is quiet] == ["sent", "answered"]
    assert [json.loads(f).get("method") for f in quiet.front.data_to_send()] == [None]
    value = json.loads(call_body(2, "count", {}))
    value["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "info"
    loud = started(bridge, pair, json.dumps(value).encode())
    assert [carry(loud, e) for c, e in pair.pump() if c is loud] == ["sent", "answered"]
    frames = [json.loads(f) for f in loud.front.data_to_send()]
    assert [f.get("method") for f in frames] == ["notifications/message", None]
    assert frames[0]["params"]["data"] == "counted to 3"


def test_a_carried_call_is_validated_once_each_way(
    bridge: HandshakeBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every check the bridge's own sessions make of what they send, and every
    # projection: the request is read by its front session, projected (its
    # validation in the upstream's version) and sent unread; the answer is
    # read by the upstream session and projected back, not checked again.
    pair = Pair({})
    checked: list[tuple[object, str]] = []
    projected: list[str] = []
    sent_check, answer_check, project = Sending._checked, Peer._checked_answer, projection._project

    def sending(self: Sending, value: Any, version: str) -> Any:
        checked.append((self, "request"))
        return sent_check(self, value, version)

    def answering(self: Peer, value: Any, method: str, version: str, **more: Any) -> Any:
        checked.append((self, "answer"))
        return answer_check(self, value, method, version, **more)

    def projecting(message: Any, version: str, *more: Any) -> Any:
        projected.append(version)
        return project(message, version, *more)

    monkeypatch.setattr(Sending, "_checked", sending)
    monkeypatch.setattr(Peer, "_checked_answer", answering)
    with monkeypatch.context() as bridging:  # the bridge's steps (the server projects its own)
        bridging.setattr(projection, "_project", projecting)
        call = started(bridge, pair, call_body(1, "divide", {}, arguments={"a": 6, "b": 3}))
    [(routed, response)] = pair.pump()
    with monkeypatch.context() as bridging:
        bridging.setattr(projection, "_project", projecting)
        assert routed is call and carry(call, response) == "answered"
    [frame] = call.front.data_to_send()
    assert json.loads(frame)["result"]["content"][0]["text"] == "2.0"
    bridges = (pair.upstream.client, call.front)
    assert [what for who, what in checked if who in bridges] == []  # nothing read twice
    assert projected == ["2025-06-18", "2026-07-28"]  # once each way


def test_a_list_change_upstream_reaches_the_listens_of_that_session() -> None:
    pair = Pair({})
    listen = Subscriptions().open(5, {"toolsListChanged": True})
    listen.take()  # the acknowledgement
    pair.upstream.listens.add(listen)  # fed by this session (the driver adds it)
    pair.upstream.client.request("tools/call", {"name": "toggle", "arguments": {}})
    pair.pump()
    [frame] = listen.take()
    note = json.loads(frame)
    assert note["method"] == "notifications/tools/list_changed"
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 5
    EXAMPLE["TOOLS"].remove(EXAMPLE["EXTRA"])  # the example's module state, as it was


def test_a_task_status_or_an_update_naming_no_resource_from_the_server_is_dropped() -> None:
    pair = Pair({})
    listen = Subscriptions().open(5, {"toolsListChanged": True, "resourceSubscriptions": ["a"]})
    listen.take()
    pair.upstream.listens.add(listen)
    for method in ("notifications/resources/updated", "notifications/tasks"):
        note = json.dumps({"jsonrpc": "2.0", "method": method, "params": {}}).encode()
        pair.upstream.receive(note)  # no ValueError: nothing a listen can carry
    assert listen.take() == []


def test_a_server_request_outside_a_call_that_may_ask_is_refused_with_32601() -> None:
    pair = Pair({"elicitation": {}})
    request = {"jsonrpc": "2.0", "id": 40, "method": "elicitation/create"}
    request["params"] = {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}
    [(owner, event)] = pair.upstream.receive(json.dumps(request).encode())
    assert owner is None and isinstance(event, InputRequested)
    refusal = json.loads(pair.upstream.refuse(event))
    assert refusal["id"] == 40 and refusal["error"]["code"] == -32601
