"""`ClientBinding`'s streams in a handshake-era session: the GET of the
server's own stream, and a request's event stream that ends before its
answer resumed with ``Last-Event-ID`` after its ``retry`` (bounded), its
answer then read from the resumed stream; in 2026-07-28 there is neither."""

from __future__ import annotations

import json
from typing import Any

from mcp_schema.http.binding import ClientBinding, Post, TransportError
from mcp_schema.http.sse import EventReader
from mcp_schema.session import ClientSession, Event, Negotiated, ResponseReceived
from tests.http.test_client_refusals import JSON, SSE, respond, stateless

INFO = {"name": "streams", "version": "1"}
INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "s", "version": "1"},
}


def answer(rid: int | None, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def handshake() -> ClientBinding:
    client = ClientBinding(ClientSession(info=INFO), "handshake", resumes=True)
    client.connect()
    (post,) = client.posts()
    headers = [*JSON, ("mcp-session-id", "s-1")]
    events = respond(client, post, 200, headers, answer(post.request_id, INITIALIZED))
    assert any(isinstance(e, Negotiated) for e in events)
    client.posts()  # notifications/initialized
    return client


def listing(client: ClientBinding) -> Post:
    client.request("tools/list", {})
    (post,) = client.posts()
    return post


def test_the_servers_own_stream_is_a_get_of_the_session() -> None:
    client = handshake()
    own = client.stream()
    assert own is not None and own.method == "GET" and own.request_id is None
    headers = dict(own.headers)
    assert headers["accept"] == "text/event-stream" and headers["mcp-session-id"] == "s-1"
    assert "last-event-id" not in headers
    assert respond(client, own, 405, []) == []  # a server without one: nothing to read


def test_a_stream_ending_before_the_answer_is_resumed_where_it_stopped() -> None:
    client = handshake()
    post = listing(client)
    reply = client.reply(post, 200, SSE)
    assert reply.feed(b"id: e-1\nretry: 500\ndata: \n\n") == [] and reply.end() == []
    assert reply.resume is not None
    assert (reply.resume.last_event_id, reply.resume.retry) == ("e-1", 0.5)
    again = client.stream(post.request_id, reply.resume.last_event_id)
    assert again is not None and dict(again.headers)["last-event-id"] == "e-1"
    event = b"event: message\nid: e-2\ndata: " + answer(post.request_id, {"tools": []}) + b"\n\n"
    (listed,) = respond(client, again, 200, SSE, event)
    assert isinstance(listed, ResponseReceived) and listed.error is None


def test_a_stream_without_an_event_id_or_not_resumed_ends_the_request() -> None:
    client = handshake()
    post = listing(client)
    (failed,) = respond(client, post, 200, SSE, b": keep-alive\n\n")
    assert isinstance(failed, ResponseReceived) and isinstance(failed.error, TransportError)
    post = listing(client)
    reply = client.reply(post, 200, SSE)
    reply.feed(b"id: e-1\n\n")
    reply.end()
    assert reply.resume is not None
    again = client.stream(post.request_id, reply.resume.last_event_id)
    assert again is not None
    (refused,) = respond(client, again, 404, [])
    assert isinstance(refused, ResponseReceived) and isinstance(refused.error, TransportError)


def test_a_binding_whose_driver_does_not_resume_ends_the_request() -> None:
    client = handshake()
    client.resumes = False
    post = listing(client)
    (failed,) = respond(client, post, 200, SSE, b"id: e-1\nretry: 5\ndata: \n\n")
    assert isinstance(failed, ResponseReceived) and isinstance(failed.error, TransportError)


def test_the_stateless_era_has_no_stream_to_get_or_resume() -> None:
    client, post = stateless()
    assert client.stream() is None
    events: list[Event] = respond(client, post, 200, SSE, b"id: e-1\nretry: 10\n\n")
    (failed,) = events
    assert isinstance(failed, ResponseReceived) and isinstance(failed.error, TransportError)


def test_the_event_reader_keeps_the_last_id_and_retry_it_can_read() -> None:
    reader = EventReader()
    reader.feed(b"id: a\nretry: 20\n\nid: \xff\nretry: soon\nid: b c\n\n")
    assert (reader.last_id, reader.retry) == ("a", 20)
    reader.feed(b"id: " + b"x" * 300 + b"\nretry: 1000000000\n\n")
    assert (reader.last_id, reader.retry) == ("a", 20)
