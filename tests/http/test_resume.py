"""Resumable event streams of handshake-era sessions (mcp_schema.http.resume),
sans-IO: event ids naming their stream, a client that goes away cancels
nothing, a GET with ``Last-Event-ID`` replays what followed on that stream
alone (the answer that came meanwhile included), the refusals, which change
nothing, and a detached stream that outgrows its buffer is cancellation."""

from __future__ import annotations

import http.client
import json
from typing import Any

from mcp_schema.http import Endpoint, Response
from mcp_schema.http.asgi import App
from mcp_schema.session import CancelRequested
from tests.http.test_asgi import serving, waited_for
from tests.http.test_binding import BASE, INIT, SEEN, call, endpoint, opened, post


def sse(response: Response) -> list[tuple[str, Any]]:
    """The events a stream has now: (id, message or None for the priming event)."""
    assert response.stream is not None
    found = []
    for event in response.stream.take().decode().split("\n\n"):
        if event:
            fields = dict(line.split(": ", 1) for line in event.splitlines())
            found.append((fields["id"], json.loads(fields["data"]) if fields["data"] else None))
    return found


def get(ep: Endpoint, session_id: str, last: str | None = None) -> Response:
    headers = {"mcp-session-id": session_id, "accept": "text/event-stream"}
    return ep.handle("GET", "/mcp", {**headers, **({"last-event-id": last} if last else {})})


def asked(ep: Endpoint) -> tuple[str, Response]:
    """A session, and the stream of its call 5, which asks the client (and takes progress)."""
    session_id = opened(ep)
    ask = {"name": "ask", "_meta": {"progressToken": "t5"}}
    message = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ask}
    return session_id, post(ep, message, {"mcp-session-id": session_id})


def answer(ep: Endpoint, session_id: str, question: dict[str, Any]) -> int:
    reply = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {}}}
    return post(ep, reply, {"mcp-session-id": session_id}).status


def test_a_stream_the_client_left_is_resumed_with_what_came_meanwhile() -> None:
    ep = endpoint(replay=8)
    session_id, ask = asked(ep)
    (priming, nothing), (first, question) = sse(ask)
    assert (priming, nothing, first, question["method"]) == (
        "1-0",
        None,
        "1-1",
        "elicitation/create",
    )
    assert ask.stream is not None
    ask.stream.abandon()  # the connection dropped: not cancellation
    assert not [e for e in SEEN if isinstance(e, CancelRequested)]
    assert answer(ep, session_id, question) == 202  # answered on another POST meanwhile
    resumed = get(ep, session_id, "1-0")  # the question was lost in transit too
    assert resumed.status == 200 and resumed.stream is ask.stream
    events = sse(resumed)
    assert [(i, m.get("method") or m["result"]["content"][0]["text"]) for i, m in events] == [
        ("1-1", "elicitation/create"),  # again, with its id
        ("1-2", "asked"),  # the answer, on the stream of the request it answers
    ]
    assert resumed.stream.done


def test_the_get_stream_is_resumed_and_a_fresh_get_replaces_a_detached_one() -> None:
    ep = endpoint(replay=8)
    session_id = opened(ep)
    listener = get(ep, session_id)
    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    post(ep, changed, {"mcp-session-id": session_id})
    assert [i for i, _ in sse(listener)] == ["1-0", "1-1"]
    assert listener.stream is not None
    listener.stream.abandon()
    post(ep, changed, {"mcp-session-id": session_id})  # kept for the client while it is away
    resumed = get(ep, session_id, "1-1")
    assert [(i, m["method"]) for i, m in sse(resumed)] == [
        ("1-2", "notifications/tools/list_changed")
    ]
    assert get(ep, session_id).status == 409  # attached again
    assert resumed.stream is not None
    resumed.stream.abandon()
    fresh = get(ep, session_id)  # no Last-Event-ID: a new GET stream instead
    assert fresh.status == 200 and fresh.stream is not listener.stream
    assert [i for i, _ in sse(fresh)] == ["2-0"]


def code(response: Response) -> tuple[int, int]:
    return response.status, json.loads(response.body)["error"]["code"]


def test_an_event_id_the_session_cannot_resume_from_is_refused_and_changes_nothing() -> None:
    ep = endpoint(replay=1)
    session_id, ask = asked(ep)
    assert get(ep, session_id, "1-0").status == 409  # still being written
    sse(ask)
    assert ask.stream is not None
    ask.stream.abandon()
    for last in ("1", "1-x", "x-1", "9-0", "1-5", "1-" + "9" * 20, "0-0"):
        assert code(get(ep, session_id, last)) == (400, -32600), last
    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    post(ep, changed, {"mcp-session-id": session_id})  # to no open stream: dropped
    assert get(ep, session_id, "1-1").status == 200  # the refusals changed nothing


def test_events_no_longer_kept_cannot_be_replayed_nor_a_stream_delivered() -> None:
    ep = endpoint(replay=1)
    session_id, ask = asked(ep)
    sse(ask)
    post(ep, {**call("poke", 7), "params": {"name": "poke"}}, {"mcp-session-id": session_id})
    assert [i for i, _ in sse(ask)] == ["1-2"]  # progress on 5: only this one is kept now
    assert ask.stream is not None
    ask.stream.abandon()
    assert code(get(ep, session_id, "1-0")) == (400, -32600)  # 1-1 is gone
    resumed = get(ep, session_id, "1-1")
    assert [i for i, _ in sse(resumed)] == ["1-2"]
    listener = get(ep, session_id)
    assert listener.stream is not None
    listener.stream.finish()  # delivered in full: nothing to resume
    sse(listener)
    assert code(get(ep, session_id, "2-0")) == (400, -32600)


def test_a_detached_stream_that_outgrows_its_buffer_is_cancellation() -> None:
    ep = endpoint(replay=8, max_buffer=1)
    session_id, ask = asked(ep)
    sse(ask)
    assert ask.stream is not None
    ask.stream.abandon()
    assert not [e for e in SEEN if isinstance(e, CancelRequested)]
    poke = post(ep, {**call("poke", 7), "params": {"name": "poke"}}, {"mcp-session-id": session_id})
    assert poke.status == 200  # its progress on 5 waits in 5's stream: nothing else fits
    assert not [e for e in SEEN if isinstance(e, CancelRequested)]
    post(ep, {**call("poke", 8), "params": {"name": "poke"}}, {"mcp-session-id": session_id})
    (cancelled,) = [e for e in SEEN if isinstance(e, CancelRequested)]
    assert cancelled.request.id == 5
    assert code(get(ep, session_id, "1-1")) == (400, -32600)


def read_event(stream: http.client.HTTPResponse) -> tuple[str, Any]:
    """The next event with data of an event stream: its id and message."""
    fields: dict[str, str] = {}
    while True:
        line = stream.readline().decode()
        assert line, "the stream ended"
        if line == "\n":
            if fields.get("data"):
                return fields["id"], json.loads(fields["data"])
            fields = {}
        else:
            name, _, value = line.rstrip("\n").partition(": ")
            fields[name] = value


def posted(
    host: str, port: int, message: Any, session_id: str | None = None
) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(host, port, timeout=10)
    named = {"mcp-session-id": session_id} if session_id else {}
    connection.request("POST", "/mcp", json.dumps(message), {**BASE, **named})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_under_uvicorn_a_dropped_connection_is_resumed_with_last_event_id() -> None:
    ep = endpoint(replay=8)
    with serving(App(ep)) as (host, port):
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
        session_id = posted(host, port, init).getheader("mcp-session-id") or ""
        ask = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "ask"}}
        connection = http.client.HTTPConnection(host, port, timeout=10)
        connection.request("POST", "/mcp", json.dumps(ask), {**BASE, "mcp-session-id": session_id})
        stream = connection.getresponse()
        event_id, question = read_event(stream)
        assert (event_id, question["method"]) == ("1-1", "elicitation/create")
        connection.close()  # the network drops it
        live = ep.sessions.get(session_id)
        assert live is not None and live.replays is not None
        waited_for(lambda: getattr(live.replays.get(1), "detached", False), 5)  # type: ignore[union-attr]
        reply = {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {}},
        }
        assert posted(host, port, reply, session_id).status == 202
        connection = http.client.HTTPConnection(host, port, timeout=10)
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": session_id,
            "last-event-id": "1-1",
        }
        connection.request("GET", "/mcp", headers=headers)
        resumed = connection.getresponse()
        assert resumed.status == 200
        event_id, result = read_event(resumed)
        connection.close()
    assert (event_id, result["id"], result["result"]["content"][0]["text"]) == ("1-2", 5, "asked")
    assert not [e for e in SEEN if isinstance(e, CancelRequested)]
