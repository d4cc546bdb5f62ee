"""`mcp_schema.http.binding.ClientBinding` against the package's own
`Endpoint`, in this process (no network): both eras, the auto mode's
fallback, input rounds, the standard and ``Mcp-Param-*`` headers, and a
``subscriptions/listen`` stream."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from mcp_schema.errors import UnsupportedProtocolVersionError
from mcp_schema.http import Endpoint, Stream
from mcp_schema.http.binding import ClientBinding, Mode, Post, Reply
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import (
    ClientSession,
    Event,
    InputRequested,
    Negotiated,
    NotificationReceived,
    ResponseReceived,
    ServerSession,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_spec = importlib.util.spec_from_file_location("example_server", EXAMPLES / "server.py")
assert _spec is not None and _spec.loader is not None
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)
CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": True}, "resources": {}, "prompts": {}}
INFO = {"name": "client-test", "version": "1"}
ANNOTATED = {
    "name": "route",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    },
}
INVALID = {
    "name": "broken",
    "inputSchema": {"type": "object", "properties": {"a": {"type": "object", "x-mcp-header": "A"}}},
}


def endpoint(versions: list[str] | None = None, handler: Any = None) -> Endpoint:
    return Endpoint(
        handler or example.serve,
        info={"name": "endpoint", "version": "1"},
        capabilities=CAPABILITIES,
        versions=versions,
        handler_version="2026-07-28",
        request_state=StateSealer(StateKeys("a key for the tests, at least 32 bytes")),
    )


def binding(mode: Mode = "auto", asks: bool = False) -> ClientBinding:
    capabilities: dict[str, Any] = {"elicitation": {}} if asks else {}
    return ClientBinding(ClientSession(info=INFO, capabilities=capabilities), mode)


class Wire:
    """Each `Post` of ``client`` handled by ``server``, its response fed back
    as it is written (streams drained while they stay open); every ask
    answered with the word "yes". ``sent``: the posts, in order."""

    def __init__(self, server: Endpoint, client: ClientBinding) -> None:
        self.server, self.client = server, client
        self.sent: list[Post] = []
        self.open: list[tuple[Reply, Stream]] = []

    def run(self) -> list[Event]:
        events: list[Event] = []
        while True:
            found: list[Event] = []
            posts = self.client.posts()
            for post in posts:
                self.sent.append(post)
                response = self.server.handle(post.method, "/mcp", post.headers, post.body)
                reply = self.client.reply(post, response.status, response.headers)
                if response.stream is None:
                    found += reply.feed(response.body) + reply.end()
                else:
                    self.open.append((reply, response.stream))
            for reply, stream in list(self.open):
                found += reply.feed(stream.take())
                if stream.done or reply.done:
                    found += reply.end()
                    self.open.remove((reply, stream))
            for event in found:
                if isinstance(event, InputRequested):
                    answer = {"action": "accept", "content": {"text": "yes"}}
                    self.client.session.provide_input(event, dict.fromkeys(event.requests, answer))
            events += found
            if not found and not posts:
                return events


def connected(server: Endpoint, client: ClientBinding) -> tuple[Wire, Negotiated]:
    wire = Wire(server, client)
    client.connect()
    (negotiated,) = [e for e in wire.run() if isinstance(e, Negotiated)]
    return wire, negotiated


def answer(wire: Wire, method: str, params: dict[str, Any]) -> ResponseReceived:
    rid = wire.client.request(method, params)
    (found,) = [e for e in wire.run() if isinstance(e, ResponseReceived) and e.id == rid]
    return found


def text(response: ResponseReceived) -> str:
    assert response.error is None and response.result is not None
    return str(response.result.content[0].text)  # type: ignore[attr-defined]


def test_auto_mode_speaks_2026_to_a_server_of_both_eras() -> None:
    wire, negotiated = connected(endpoint(), binding())
    assert negotiated.version == "2026-07-28" and wire.client.session_id is None
    assert text(answer(wire, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})) == "hi"
    headers = dict(wire.sent[-1].headers)
    assert headers["mcp-method"] == "tools/call" and headers["mcp-name"] == "echo"
    assert headers["mcp-protocol-version"] == "2026-07-28"
    assert headers["accept"] == "application/json, text/event-stream"
    assert [p.rpc_method for p in wire.sent] == ["server/discover", "tools/call"]


def test_auto_mode_falls_back_to_initialize_on_a_handshake_era_server() -> None:
    wire, negotiated = connected(endpoint(["2025-11-25"]), binding())
    assert negotiated.version == "2025-11-25" and wire.client.session_id is not None
    assert [p.rpc_method for p in wire.sent] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
    ]
    assert text(answer(wire, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})) == "hi"
    headers = dict(wire.sent[-1].headers)
    assert headers["mcp-session-id"] == wire.client.session_id
    assert headers["mcp-protocol-version"] == "2025-11-25" and "mcp-method" not in headers
    delete = wire.client.close()
    assert delete is not None and delete.method == "DELETE"
    assert wire.server.handle("DELETE", "/mcp", delete.headers).status == 200
    assert wire.client.session_id is None and wire.client.close() is None


def test_handshake_mode_initializes_a_server_of_both_eras() -> None:
    wire, negotiated = connected(endpoint(), binding("handshake"))
    assert negotiated.version == "2025-11-25"
    assert [p.rpc_method for p in wire.sent] == ["initialize", "notifications/initialized"]


def test_stateless_mode_does_not_fall_back() -> None:
    client = binding("stateless")
    wire = Wire(endpoint(["2025-11-25"]), client)
    client.connect()
    events = wire.run()
    (refused,) = [e for e in events if isinstance(e, ResponseReceived)]
    assert isinstance(refused.error, UnsupportedProtocolVersionError)
    assert client.session.version is None
    assert [p.rpc_method for p in wire.sent] == ["server/discover"]


def test_an_ask_is_answered_in_both_eras() -> None:
    for versions, era in ((None, "2026-07-28"), (["2025-11-25"], "2025-11-25")):
        wire, negotiated = connected(endpoint(versions), binding(asks=True))
        assert negotiated.version == era
        assert text(answer(wire, "tools/call", {"name": "ask"})) == "you said yes"


def test_a_client_that_cannot_be_asked_is_not_asked() -> None:
    wire, _ = connected(endpoint(), binding())
    called = answer(wire, "tools/call", {"name": "ask"})
    assert text(called) == "this client cannot be asked"


def tools_handler(session: ServerSession, event: Event) -> None:
    method = getattr(event, "method", None)
    if method == "tools/list":
        session.respond(event, {"tools": [ANNOTATED, INVALID]})  # type: ignore[arg-type]
    elif method == "tools/call":
        session.respond(event, example.text("routed"))  # type: ignore[arg-type]
    else:
        example.serve(session, event)


def test_listed_tools_with_invalid_annotations_are_left_out_and_params_mirrored() -> None:
    wire, _ = connected(endpoint(handler=tools_handler), binding())
    listed = answer(wire, "tools/list", {})
    assert listed.result is not None
    assert [t.name for t in listed.result.tools] == ["route"]  # type: ignore[attr-defined]
    assert list(wire.client.rejected_tools) == ["broken"]
    called = answer(wire, "tools/call", {"name": "route", "arguments": {"region": "eu west"}})
    assert text(called) == "routed"  # the endpoint checked the header against the body
    assert dict(wire.sent[-1].headers)["mcp-param-region"] == "eu west"


def test_a_listen_stream_brings_its_notifications() -> None:
    wire, _ = connected(endpoint(), binding())
    wire.client.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    events = wire.run()
    (acknowledged,) = [e for e in events if isinstance(e, NotificationReceived)]
    assert acknowledged.method == "notifications/subscriptions/acknowledged"
    (reply, stream) = wire.open[0]
    assert not reply.done and not stream.done  # still open: the listen goes on
    wire.server.subscriptions.tools_list_changed()
    (changed,) = reply.feed(stream.take())
    assert isinstance(changed, NotificationReceived)
    assert changed.method == "notifications/tools/list_changed"
