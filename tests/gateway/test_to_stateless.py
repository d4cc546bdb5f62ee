"""`mcp_schema.gateway.bridge.handshake.StatelessCalls`, sans-IO, in memory: a
handshake-era `ClientSession` (the client) talks to the bridge's
`ServerSession`, whose calls go to ``examples/server.py``'s handlers served
2026-07-28-only by an `Endpoint` (the upstream), every byte through the
Streamable HTTP binding of each side."""

from __future__ import annotations

import json
import runpy
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import pytest

from mcp_schema.codec import encode, to_wire
from mcp_schema.errors import InternalError, McpError
from mcp_schema.gateway.bridge.handshake import BRIDGED_VERSION, StatelessCalls
from mcp_schema.http import Endpoint
from mcp_schema.http.binding import Post
from mcp_schema.http.stream import Response
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import (
    CancelRequested,
    ClientSession,
    Event,
    InputReceived,
    InputRequested,
    Negotiated,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    ServerSession,
)
from mcp_schema.session.peer import Peer
from mcp_schema.session.sending import Sending
from mcp_schema.versions import HANDSHAKE_VERSIONS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SERVER = runpy.run_path(str(EXAMPLES / "server.py"))
CAPABILITIES = {"tools": {"listChanged": True}, "resources": {}, "prompts": {}, "logging": {}}


def upstream() -> Endpoint:
    """``examples/server.py``'s handlers, 2026-07-28 only, over the package's endpoint."""
    return Endpoint(
        SERVER["serve"],
        info={"name": "up", "version": "1"},
        capabilities=CAPABILITIES,
        versions=[BRIDGED_VERSION],
        handler_version=BRIDGED_VERSION,
        request_state=StateSealer(StateKeys(secrets.token_urlsafe(32))),
    )


class Upstream(Protocol):
    def handle(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> Response: ...


class Bridged:
    """A client, the bridge's session of it, and the upstream, all in memory.
    ``hold``: the upstream posts wait in ``held`` instead of being answered."""

    def __init__(
        self,
        capabilities: Mapping[str, Any],
        answers: Mapping[str, Any] | None = None,
        version: str = HANDSHAKE_VERSIONS[-1],
        up: Upstream | None = None,
    ) -> None:
        self.up: Upstream = upstream() if up is None else up
        self.hold = False
        self.held: list[Post] = []
        self.client = ClientSession(
            info={"name": "c", "version": "1"}, capabilities=capabilities, versions=[version]
        )
        self.server = ServerSession(
            info={"name": "up", "version": "1"},
            capabilities=CAPABILITIES,
            versions=HANDSHAKE_VERSIONS,
            handler_version=BRIDGED_VERSION,
        )
        self.answers = dict(answers or {})
        self.got: list[Event] = []
        self.calls: StatelessCalls | None = None
        self.upstream_posts: list[Post] = []
        self.cut: list[int] = []
        self.client.initialize(version)
        self.pump()
        assert self.calls is not None

    def pump(self) -> None:
        """Carry every frame both ways until nothing moves."""
        while True:
            moved = False
            for frame in self.client.data_to_send():
                moved = True
                for event in self.server.receive(frame):
                    self.serve(event)
            for frame in self.server.data_to_send():
                moved = True
                for event in self.client.receive(frame):
                    self.client_saw(event)
            if not moved:
                return

    def client_saw(self, event: Event) -> None:
        if isinstance(event, InputRequested):
            (method,) = [getattr(m, "method", "") for m in event.requests.values()]
            if method in self.answers:
                self.client.provide_input(event, {k: self.answers[method] for k in event.requests})
                return
        self.got.append(event)
        if False:
            self.got.append(event)

    def serve(self, event: Event) -> None:
        if isinstance(event, Negotiated):
            self.calls = StatelessCalls(self.server, event)
            self.send(self.calls.start())
            return
        assert self.calls is not None
        if isinstance(event, RequestReceived):
            self.send(self.calls.call(event))
        elif isinstance(event, InputReceived):
            self.send(self.calls.input(event))
        elif isinstance(event, CancelRequested):
            self.cut += self.calls.cancel(event)
        elif isinstance(event, NotificationReceived):
            self.calls.notified(event)

    def send(self, posts: list[Post]) -> None:
        """Each post to the upstream endpoint, its answer to the bridge."""
        assert self.calls is not None
        for post in posts:
            self.upstream_posts.append(post)
            if self.hold:
                self.held.append(post)
                continue
            response = self.up.handle(post.method, "/mcp", list(post.headers), post.body)
            reply = self.calls.binding.reply(post, response.status, response.headers)
            body = response.body if response.stream is None else response.stream.take()
            events = reply.feed(body) + reply.end()
            self.send(self.calls.answer(post, events))

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> ResponseReceived:
        self.got.clear()
        rid = self.client.request(method, params)
        self.pump()
        found = [e for e in self.got if isinstance(e, ResponseReceived) and e.id == rid]
        assert len(found) == 1, self.got
        return found[0]

    def call(self, name: str, **arguments: Any) -> Any:
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        assert answer.error is None, answer.error
        return answer.result


def texts(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


ELICITED = {"action": "accept", "content": {"text": "blue"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "green"}, "model": "m"}
ASKING: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}}
ANSWERS = {"elicitation/create": ELICITED, "sampling/createMessage": SAMPLED}


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_calls_are_carried_in_every_handshake_version(version: str) -> None:
    bridged = Bridged({}, version=version)
    assert bridged.client.version == version
    assert texts(bridged.call("echo", text="hi")) == "hi"
    assert texts(bridged.call("divide", a=1, b=0)) == "division by zero"
    listed = bridged.request("tools/list").result
    assert [t.name for t in listed.tools][:3] == ["echo", "divide", "count"]  # type: ignore[union-attr]
    # Every upstream request is a self-contained 2026-07-28 one, with its headers.
    sent = bridged.upstream_posts[-1]
    headers = dict(sent.headers)
    assert headers["mcp-protocol-version"] == BRIDGED_VERSION
    assert headers["mcp-method"] == "tools/list"
    assert b'"io.modelcontextprotocol/protocolVersion":"2026-07-28"' in sent.body


def test_a_carried_call_is_read_once_each_way(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bridge's two sessions (the client's side, the upstream's): neither
    # reads again what it sends (the request its server session projected to
    # 2026-07-28, the result projected back): each was validated as it was built.
    bridged = Bridged({})
    checked: list[tuple[object, str]] = []
    sent_check, answer_check = Sending._checked, Peer._checked_answer

    def sending(self: Sending, value: Any, version: str) -> Any:
        checked.append((self, "request"))
        return sent_check(self, value, version)

    def answering(self: Peer, value: Any, method: str, version: str, **more: Any) -> Any:
        checked.append((self, "answer"))
        return answer_check(self, value, method, version, **more)

    monkeypatch.setattr(Sending, "_checked", sending)
    monkeypatch.setattr(Peer, "_checked_answer", answering)
    assert bridged.request("tools/list").error is None  # carried too (else the bridge asks it)
    assert texts(bridged.call("echo", text="hi")) == "hi"
    assert bridged.calls is not None
    sides = (bridged.server, bridged.calls.client)
    assert [what for who, what in checked if who in sides] == []
    assert any(who is bridged.client for who, _ in checked)  # the spy sees the others' checks


def test_an_elicitation_and_a_sampling_round_reach_the_client() -> None:
    bridged = Bridged(ASKING, ANSWERS)
    assert texts(bridged.call("ask")) == "you said blue"
    assert texts(bridged.call("think")) == "you said green"
    assert bridged.calls is not None and bridged.calls.pending() == 0


def test_a_client_without_the_capabilities_is_not_asked() -> None:
    bridged = Bridged({})
    answer = bridged.call("ask")
    assert texts(answer) == "this client cannot be asked" and answer.is_error
    assert b"elicitation" not in bridged.upstream_posts[-1].body  # its own capabilities went up


def test_progress_and_logs_reach_the_request() -> None:
    bridged = Bridged({})
    bridged.request("logging/setLevel", {"level": "info"})
    answer = bridged.request(
        "tools/call", {"name": "count", "arguments": {}, "_meta": {"progressToken": "t"}}
    )
    assert texts(answer.result) == "1 2 3"
    notes = [e for e in bridged.got if isinstance(e, NotificationReceived)]
    assert [n.method for n in notes] == ["notifications/progress"] * 3 + ["notifications/message"]
    assert [to_wire(n.message)["params"]["progress"] for n in notes[:3]] == [1, 2, 3]
    assert b'"io.modelcontextprotocol/logLevel":"info"' in bridged.upstream_posts[-1].body


def test_an_upstream_error_answers_the_client() -> None:
    bridged = Bridged({})
    answer = bridged.request("tools/call", {"name": "nope", "arguments": {}})
    assert isinstance(answer.error, McpError) and answer.error.code == -32602
    assert "Unknown tool" in answer.error.message


def test_a_client_refusing_an_ask_fails_its_call_and_is_reported() -> None:
    bridged = Bridged(ASKING)
    bridged.got.clear()
    rid = bridged.client.request("tools/call", {"name": "ask", "arguments": {}})
    bridged.pump()  # the client is asked; it answers with an error instead of a result
    (asked,) = [e for e in bridged.got if isinstance(e, InputRequested)]
    (question,) = asked.requests.values()
    refusal = InternalError("no").to_response(to_wire(question)["id"])
    bridged.got.clear()
    for event in bridged.server.receive(encode(refusal)):
        bridged.serve(event)
    bridged.pump()
    (answer,) = [e for e in bridged.got if isinstance(e, ResponseReceived) and e.id == rid]
    assert answer.error is not None and answer.error.message == "no"  # its own error, back
    assert bridged.calls is not None
    (finding,) = bridged.calls.take_findings()
    assert finding["direction"] == "client->server" and "refused" in finding["message"]


def test_a_cancelled_call_cuts_its_upstream_exchange_and_its_late_answer_is_dropped() -> None:
    bridged = Bridged({})
    bridged.request("tools/list")
    bridged.hold = True
    rid = bridged.client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    bridged.pump()
    (held,) = bridged.held
    assert bridged.calls is not None and bridged.calls.pending() == 1
    bridged.client.cancel(rid, reason="enough")
    bridged.got.clear()
    bridged.pump()
    assert bridged.cut == [held.request_id] and bridged.calls.pending() == 0
    bridged.hold = False
    bridged.send([held])  # the upstream answers all the same: nobody hears it
    bridged.pump()
    assert not [e for e in bridged.got if isinstance(e, ResponseReceived)]


def test_calls_before_the_upstream_session_negotiated_wait_for_it() -> None:
    bridged = Bridged({})
    assert bridged.calls is not None
    assert bridged.calls.start() == []  # negotiated already: nothing more to ask
    assert texts(bridged.call("echo", text="after")) == "after"


def test_a_call_before_any_list_has_the_tools_listed_first_for_its_headers() -> None:
    tool = {
        "name": "weather",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    }

    def serve(session: ServerSession, event: Event) -> None:
        if isinstance(event, RequestReceived) and event.method == "tools/list":
            session.respond(event, {"tools": [tool]})
        elif isinstance(event, RequestReceived):
            session.respond(event, {"content": [{"type": "text", "text": "sunny"}]})

    up = Endpoint(
        serve,
        info={"name": "up", "version": "1"},
        capabilities={"tools": {}},
        versions=[BRIDGED_VERSION],
        handler_version=BRIDGED_VERSION,
    )
    bridged = Bridged({}, up=up)
    assert texts(bridged.call("weather", region="north")) == "sunny"
    listed, called = bridged.upstream_posts[-2:]
    assert dict(listed.headers)["mcp-method"] == "tools/list"
    assert dict(called.headers)["mcp-param-region"] == "north"
    assert texts(bridged.call("weather", region="south")) == "sunny"
    methods = [dict(p.headers).get("mcp-method") for p in bridged.upstream_posts]
    assert methods.count("tools/list") == 1  # listed once


def test_a_call_cancelled_before_it_was_sent_is_never_sent() -> None:
    bridged = Bridged({})
    bridged.hold = True
    rid = bridged.client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    bridged.pump()  # held: the bridge's own tools/list, the call waiting for it
    (listing,) = bridged.held
    assert bridged.calls is not None and bridged.calls.pending() == 1
    bridged.client.cancel(rid)
    bridged.pump()
    assert bridged.calls.pending() == 0
    bridged.hold = False
    bridged.send([listing])  # the list comes: no call follows it
    assert [dict(p.headers)["mcp-method"] for p in bridged.upstream_posts[-1:]] == ["tools/list"]


def test_a_roots_round_reaches_the_client_and_its_answer_the_retry() -> None:
    def serve(session: ServerSession, event: Event) -> None:
        if isinstance(event, InputReceived):
            roots = getattr(event.responses["r"], "roots", [])
            session.respond(event.request, {"content": [{"type": "text", "text": roots[0].uri}]})
        elif isinstance(event, RequestReceived):
            session.ask(event, {"r": {"method": "roots/list", "params": {}}})

    up = Endpoint(
        serve,
        info={"name": "up", "version": "1"},
        capabilities={"tools": {}},
        versions=[BRIDGED_VERSION],
        handler_version=BRIDGED_VERSION,
        request_state=StateSealer(StateKeys(secrets.token_urlsafe(32))),
    )
    answers = {"roots/list": {"roots": [{"uri": "file:///work", "name": "work"}]}}
    bridged = Bridged({"roots": {}}, answers, up=up)
    assert texts(bridged.call("where")) == "file:///work"
    retry = json.loads(bridged.upstream_posts[-1].body)["params"]
    assert retry["inputResponses"]["r"]["roots"][0]["uri"] == "file:///work"
    assert isinstance(retry["requestState"], str)  # sealed by the upstream, which accepted it


def test_a_task_augmented_call_is_served_as_a_plain_call_and_tasks_are_refused() -> None:
    bridged = Bridged({})
    task = {"name": "echo", "arguments": {"text": "hi"}, "task": {"ttl": 1000}}
    answer = bridged.request("tools/call", task)
    assert answer.error is None and texts(answer.result) == "hi"
    assert b'"task"' not in bridged.upstream_posts[-1].body
    refused = bridged.request("tasks/list", {})
    assert refused.error is not None and refused.error.code == -32601
