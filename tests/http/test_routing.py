"""`mcp_schema.http.routing`: frames go to their streams by their envelope
alone. The frames here carry bytes that are no JSON at all, so a route that
read them would fail."""

from __future__ import annotations

from mcp_schema.http.routing import SERVING, route
from mcp_schema.http.sessions import LiveSession, stream_key
from mcp_schema.http.stream import Stream
from mcp_schema.session import Frame, ServerSession

OPAQUE = b"\xff not json \xfe"


def live(*ids: str | int) -> tuple[LiveSession, dict[str | int, Stream], Stream]:
    """A handshake-era session with an open stream for each of ``ids`` and a GET stream."""
    session = LiveSession("s", ServerSession(info={"name": "t", "version": "1"}))
    streams = {}
    for rid in ids:
        stream = streams[rid] = Stream()
        stream.progress_token = stream_key(f"token-{rid}")
        session.streams[stream_key(rid)] = stream
    session.listener = Stream()
    return session, streams, session.listener


def test_a_response_ends_the_stream_of_the_request_it_answers() -> None:
    session, streams, listener = live(1, "1")
    route(session, [Frame(OPAQUE, None, "1", "1", None, -32603)])
    assert streams["1"].finished and streams["1"].error == -32603
    assert streams["1"].take_frames() == [OPAQUE]
    assert not streams[1].finished and stream_key("1") not in session.streams
    assert listener.frames == 0


def test_what_belongs_to_a_request_goes_to_its_stream() -> None:
    session, streams, _ = live(1, 2)
    route(session, [Frame(OPAQUE, "notifications/message", None, 2)], context=stream_key(1))
    route(session, [Frame(OPAQUE, "elicitation/create", 7, 2)])
    assert streams[2].take_frames() == [OPAQUE, OPAQUE] and streams[1].frames == 0


def test_progress_the_author_sent_goes_by_its_token() -> None:
    session, streams, _ = live(1, 2)
    frame = Frame(OPAQUE, "notifications/progress", None, None, "token-2")
    route(session, [frame], context=stream_key(1))
    assert streams[2].frames == 1 and streams[1].frames == 0


def test_what_belongs_to_no_request_goes_to_the_one_served_else_to_the_get_stream() -> None:
    session, streams, listener = live(1, 2)
    unrelated = Frame(OPAQUE, "notifications/tools/list_changed")
    route(session, [unrelated], context=stream_key(1))
    assert streams[1].frames == 1
    token = SERVING.set((session, 2))  # what a handler's task or callback inherits
    try:
        route(session, [unrelated])
    finally:
        SERVING.reset(token)
    assert streams[2].frames == 1
    route(session, [unrelated])
    assert listener.frames == 1


def test_a_json_stream_takes_only_its_answer_the_rest_goes_to_the_get_stream() -> None:
    session, streams, listener = live(1)
    json_only = session.streams[stream_key(1)] = Stream("application/json")
    route(session, [Frame(OPAQUE, "notifications/message", None, 1)])
    assert listener.frames == 1 and not json_only.finished
    route(session, [Frame(OPAQUE, None, 1, 1)])
    assert json_only.finished and json_only.take_frames() == [OPAQUE]
    assert streams[1].frames == 0
