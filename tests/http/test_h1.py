"""`mcp_schema.http.h1.ResponseParser`, sans-IO: any bytes, split anywhere,
end in an answer or an `UpstreamProtocolError` (never the parser's own
error), within the bounds; a valid answer reads the same however it is
split; `request_head` writes its own framing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.http.h1 import (
    ResponseParser,
    ResponseTooLarge,
    Target,
    UpstreamProtocolError,
    request_head,
)

CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"6\r\nhello \r\n5;ext=1\r\nworld\r\n0\r\nTrailer: x\r\n\r\n"
)


def fed(data: bytes, cuts: list[int], **bounds: int | None) -> ResponseParser:
    parser = ResponseParser(max_head=bounds.pop("max_head", 1024), **bounds)  # type: ignore[arg-type]
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        parser.feed(data[start:cut])
        start = cut
    return parser


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=5))
def test_any_bytes_end_in_an_answer_or_a_typed_error(data: bytes, cuts: list[int]) -> None:
    try:
        parser = fed(b"HTTP/1.1 " + data, cuts, max_body=100)
        parser.eof()
    except UpstreamProtocolError:
        return
    assert parser.complete and 100 <= parser.status <= 999 and parser.body_bytes <= 100


@given(st.lists(st.integers(0, len(CHUNKED)), max_size=8))
def test_a_chunked_answer_reads_the_same_however_it_is_split(cuts: list[int]) -> None:
    parser = fed(CHUNKED, cuts, max_body=None)
    assert parser.complete and parser.reusable
    assert parser.take() == b"hello world"
    assert (b"content-type", b"text/event-stream") in parser.headers
    assert all(name != b"trailer" for name, _ in parser.headers)  # a trailer is not a field


@pytest.mark.parametrize(
    ("data", "bounds"),
    [
        (b"HTTP/1.1 200 OK\r\n" + b"x: y\r\n" * 300, {"max_fields": 200}),
        (b"HTTP/1.1 200 OK\r\nx: " + b"y" * 2000, {}),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n" + b"a" * 500, {"max_body": 100}),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1;" + b"e" * 3000, {}),
    ],
)
def test_each_bound_is_a_typed_error(data: bytes, bounds: dict[str, int]) -> None:
    with pytest.raises(ResponseTooLarge):
        fed(data, [], **{"max_body": None, **bounds})


def test_an_answer_cut_short_or_followed_by_more_is_not_reusable() -> None:
    cut = fed(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab", [], max_body=None)
    with pytest.raises(UpstreamProtocolError):
        cut.eof()
    more = fed(b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", [], max_body=None)
    assert more.complete and more.status == 204 and not more.reusable
    closing = fed(
        b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n", [], max_body=0
    )
    assert closing.complete and not closing.reusable


def test_a_request_head_writes_its_own_framing() -> None:
    target = Target.of("http://up.example:8080/mcp?a=1")
    given_fields = [(b"Content-Length", b"1"), (b"Connection", b"close"), (b"x-a", b"b")]
    head = request_head("POST", target, given_fields, 2)
    assert head == (
        b"POST /mcp?a=1 HTTP/1.1\r\nx-a: b\r\nhost: up.example:8080\r\ncontent-length: 2\r\n\r\n"
    )
    assert b"host: client.example\r\n" in request_head(
        "GET", target, [(b"host", b"client.example")], 0
    )


@given(st.lists(st.tuples(st.binary(min_size=1, max_size=8), st.binary(max_size=8)), max_size=6))
def test_a_request_head_is_refused_exactly_when_a_field_would_split_it(
    fields: list[tuple[bytes, bytes]],
) -> None:
    splitting = any(
        b":" in name or any(bad in name + value for bad in (b"\r", b"\n", b"\0"))
        for name, value in fields
    )
    try:
        head = request_head("POST", Target.of("http://up/mcp"), fields, 0)
    except ValueError:
        assert splitting
        return
    assert not splitting and head.endswith(b"content-length: 0\r\n\r\n")
