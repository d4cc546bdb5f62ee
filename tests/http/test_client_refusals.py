"""`ClientBinding` reading a hostile server: every response ends in a
result or a typed `McpError` for the request it answers, never a foreign
exception, and what is held stays bounded (an event, a body)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.errors import (
    HeaderMismatchError,
    InvalidRequestError,
    McpError,
    ParseError,
    UnsupportedProtocolVersionError,
)
from mcp_schema.http.binding import ClientBinding, Mode, Post, TransportError
from mcp_schema.http.sse import EventReader, EventTooLarge
from mcp_schema.session import (
    ClientSession,
    Event,
    Negotiated,
    ProtocolError,
    ResponseReceived,
)
from tests.hostile import raw

INFO = {"name": "refusals", "version": "1"}
JSON = [("content-type", "application/json")]
SSE = [("content-type", "text/event-stream")]
DISCOVERED = {
    "resultType": "complete",
    "ttlMs": 0,
    "cacheScope": "private",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
}
LISTED = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": []}


def answered(post: Post, result: dict[str, Any]) -> bytes:
    return raw({"jsonrpc": "2.0", "id": post.request_id, "result": result})


def respond(
    client: ClientBinding, post: Post, status: int, headers: Any, *chunks: bytes
) -> list[Event]:
    reply = client.reply(post, status, headers)
    events: list[Event] = []
    for chunk in chunks:
        events += reply.feed(chunk)
    return events + reply.end()


def probing(mode: Mode = "auto", **options: Any) -> tuple[ClientBinding, Post]:
    client = ClientBinding(ClientSession(info=INFO), mode, **options)
    client.connect()
    (post,) = client.posts()
    return client, post


def stateless(**options: Any) -> tuple[ClientBinding, Post]:
    """A client negotiated in 2026-07-28, with its ``tools/list`` request posted."""
    client, probe = probing(**options)
    (negotiated,) = respond(client, probe, 200, JSON, answered(probe, DISCOVERED))
    assert isinstance(negotiated, Negotiated)
    client.request("tools/list", {})
    (post,) = client.posts()
    return client, post


def failure(events: list[Event]) -> McpError:
    (answer,) = [e for e in events if isinstance(e, ResponseReceived)]
    assert answer.result is None and answer.error is not None
    return answer.error


def test_an_event_beyond_the_bound_is_refused_and_not_held() -> None:
    client, post = stateless(max_event=1000)
    reply = client.reply(post, 200, SSE)
    assert reply.feed(b"data: " + b"x" * 600) == []
    assert reply.feed(b"x" * 600) == []  # beyond: refused, and nothing more is read
    assert reply.feed(b"\n\n" + answered(post, LISTED)) == []
    error = failure(reply.end())
    assert isinstance(error, TransportError) and "1,000 bytes" in error.message
    assert client.session.awaiting == 0


def test_a_json_body_beyond_the_bound_is_refused() -> None:
    client, post = stateless(max_event=1000)
    error = failure(respond(client, post, 200, JSON, b"{" + b" " * 600, b" " * 600))
    assert isinstance(error, TransportError)


def test_bad_json_is_a_protocol_error_and_the_request_fails() -> None:
    for headers, body in ((JSON, b"{not json"), (SSE, b"data: {not json\n\n")):
        client, post = stateless()
        events = respond(client, post, 200, headers, body)
        refused = [e for e in events if isinstance(e, ProtocolError)]
        assert len(refused) == 1 and isinstance(refused[0].error, ParseError)
        assert isinstance(failure(events), TransportError)
        assert client.posts() == []  # an error to what had no id: nothing to send


def test_a_response_to_another_request_is_refused_and_that_request_still_awaited() -> None:
    client, post = stateless()
    other = client.request("tools/list", {})
    client.posts()
    stray = raw({"jsonrpc": "2.0", "id": other, "result": LISTED})
    events = respond(client, post, 200, SSE, b"data: " + stray + b"\n\n")
    refused = [e for e in events if isinstance(e, ProtocolError)]
    assert len(refused) == 1 and isinstance(refused[0].error, InvalidRequestError)
    assert isinstance(failure(events), TransportError)
    assert client.session.awaiting == 1  # ``other`` is still due, on its own POST


def test_content_types_that_are_neither_json_nor_an_event_stream() -> None:
    for headers in (
        [("content-type", "text/html")],
        [],
        [("content-type", "application/json; charset=latin-1")],
    ):
        client, post = stateless()
        error = failure(respond(client, post, 200, headers, answered(post, LISTED)))
        assert isinstance(error, TransportError) and error.status == 200


def test_accepted_is_no_answer_to_a_request() -> None:
    client, post = stateless()
    error = failure(respond(client, post, 202, []))
    assert isinstance(error, TransportError) and error.status == 202


def test_an_error_status_with_a_jsonrpc_error_is_typed() -> None:
    client, post = stateless()
    body = raw({"jsonrpc": "2.0", "id": post.request_id, "error": {"code": -32020, "message": "m"}})
    assert isinstance(failure(respond(client, post, 400, JSON, body)), HeaderMismatchError)
    client, post = stateless()
    body = raw({"jsonrpc": "2.0", "id": None, "error": {"code": -32020, "message": "m"}})
    assert isinstance(failure(respond(client, post, 400, JSON, body)), HeaderMismatchError)


def test_an_error_status_naming_another_request_or_no_jsonrpc_is_a_transport_error() -> None:
    client, post = stateless()
    body = raw({"jsonrpc": "2.0", "id": 99, "error": {"code": -32020, "message": "m"}})
    assert isinstance(failure(respond(client, post, 400, JSON, body)), TransportError)
    client, post = stateless()
    error = failure(respond(client, post, 500, [("content-type", "text/plain")], b"x" * 100_000))
    assert isinstance(error, TransportError) and error.status == 500
    assert len(error.message) < 1000  # what the server said is cut, never copied whole


def test_a_stream_that_ends_without_the_answer() -> None:
    client, post = stateless()
    error = failure(respond(client, post, 200, SSE, b": keep-alive\n\n"))
    assert isinstance(error, TransportError)


def test_a_connection_lost_fails_the_request() -> None:
    client, post = stateless()
    assert isinstance(failure(client.lost(post, "reset")), TransportError)
    assert client.lost(post, "again") == []  # answered already


# -- the auto mode's fallback ---------------------------------------------------------


def methods(client: ClientBinding) -> list[str | None]:
    return [p.rpc_method for p in client.posts()]


def test_falls_back_on_400_404_405_without_a_modern_error() -> None:
    legacy = raw({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "no session"}})
    for status, headers, body in (
        (400, JSON, legacy),
        (404, [("content-type", "text/plain")], b"Not Found"),
        (405, [], b""),
    ):
        client, probe = probing()
        assert respond(client, probe, status, headers, body) == []  # the probe's failure is kept
        assert methods(client) == ["initialize"]


def test_no_fallback_on_a_modern_error_another_status_or_another_mode() -> None:
    mismatch = raw({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "m"}})
    for mode, status, body in (
        ("auto", 400, mismatch),
        ("auto", 500, b""),
        ("stateless", 404, b""),
    ):
        client, probe = probing(mode)  # type: ignore[arg-type]
        assert isinstance(failure(respond(client, probe, status, JSON, body)), McpError)
        assert methods(client) == []


def unsupported(post: Post, supported: list[str]) -> bytes:
    data = {"supported": supported, "requested": "2026-07-28"}
    error = {"code": -32022, "message": "Unsupported protocol version", "data": data}
    return raw({"jsonrpc": "2.0", "id": post.request_id, "error": error})


def test_an_unsupported_version_retries_a_listed_one_a_bounded_number_of_times() -> None:
    client, post = probing()
    for _ in range(2):
        assert respond(client, post, 400, JSON, unsupported(post, ["2026-07-28"])) == []
        (post,) = client.posts()
        assert post.rpc_method == "server/discover"
        assert (
            json.loads(post.body)["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            == "2026-07-28"
        )
    error = failure(respond(client, post, 400, JSON, unsupported(post, ["2026-07-28"])))
    assert isinstance(error, UnsupportedProtocolVersionError) and methods(client) == []


def test_an_unsupported_version_listing_handshake_versions_initializes() -> None:
    client, post = probing()
    assert respond(client, post, 400, JSON, unsupported(post, ["2025-06-18", "x"])) == []
    (post,) = client.posts()
    assert post.rpc_method == "initialize"
    assert json.loads(post.body)["params"]["protocolVersion"] == "2025-06-18"


def test_a_session_id_that_is_not_visible_ascii_is_not_kept() -> None:
    client, probe = probing("handshake")
    initialized = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    headers = [*JSON, ("mcp-session-id", "a b\u00e9")]
    events = respond(client, probe, 200, headers, answered(probe, initialized))
    assert isinstance(events[0], Negotiated) and client.session_id is None


# -- the event reader ------------------------------------------------------------------

EVENTS = st.lists(st.binary(max_size=50).filter(lambda b: b"\r" not in b and b"\n" not in b))


@given(EVENTS, st.sampled_from([b"\n", b"\r\n", b"\r"]), st.data())
def test_events_read_the_same_however_the_stream_is_cut(
    datas: list[bytes], newline: bytes, data: st.DataObject
) -> None:
    stream = b"".join(b": c" + newline + b"data: " + d + newline + newline for d in datas)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    reader, got = EventReader(), []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += reader.feed(stream[start:end])
    assert got == datas


@given(st.binary(max_size=2000), st.integers(1, 300))
def test_any_bytes_end_in_events_or_the_bound(stream: bytes, bound: int) -> None:
    reader = EventReader(bound)
    try:
        for data in reader.feed(stream):
            assert len(data) <= bound
    except EventTooLarge:
        pass
    assert len(reader._line) + len(reader._data) <= bound


@given(st.binary(max_size=300), st.sampled_from([JSON, SSE, []]), st.sampled_from([200, 400, 500]))
def test_any_response_ends_in_a_result_or_a_typed_error(
    body: bytes, headers: list[tuple[str, str]], status: int
) -> None:
    client, post = stateless(max_event=250)
    events = respond(client, post, status, headers, body[:150], body[150:])
    answers = [e for e in events if isinstance(e, ResponseReceived)]
    assert len(answers) == 1 and (answers[0].result is None) != (answers[0].error is None)
    assert client.session.awaiting == 0
