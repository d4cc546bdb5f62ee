"""`mcp_schema.http.h1.ResponseParser` against answers built to hurt: the
pieces of HTTP framing in any order and split anywhere, a whole answer
followed by anything (another answer, a switch of protocols, a body longer
than it declared), heads of megabytes in one read and heads sent in small
pieces. Each ends in an answer or an `UpstreamProtocolError` of bounded
text, in time linear in its size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.http.h1 import ResponseParser, ResponseTooLarge, UpstreamProtocolError
from tests.hostile import bounded, costs_linearly

PIECES = st.sampled_from(
    [
        b"HTTP/1.1 ",
        b"HTTP/1.0 ",
        b"200 OK",
        b"101 Switching Protocols",
        b"100 Continue",
        b"204 No Content",
        b"2OO",
        b"\r\n",
        b"\n",
        b" ",
        b"\0",
        b"content-length: 2",
        b"content-length: -1",
        b"content-length: 99999999999999999999999",
        b"transfer-encoding: chunked",
        b"connection: close",
        b"connection: upgrade",
        b"upgrade: h2c",
        b"x: y",
        b"{}",
        b"5;x=y\r\n",
        b"ffffffffffffffffffff\r\n",
        b"0\r\n\r\n",
    ]
)
WHOLE = [
    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}",
    b"HTTP/1.1 204 No Content\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}",
]
AFTER = st.sampled_from(
    [
        b"HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\nconnection: upgrade\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}",
        b"{}{}{}",  # a body longer than it declared
    ]
) | st.binary(min_size=1, max_size=40).filter(lambda b: b.strip(b"\r\n"))


def fed(data: bytes, cuts: list[int], **bounds: int | None) -> ResponseParser:
    parser = ResponseParser(max_head=bounds.pop("max_head", 1024), **bounds)  # type: ignore[arg-type]
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        parser.feed(data[start:cut])
        start = cut
    return parser


@settings(max_examples=30)
@given(st.lists(PIECES, max_size=30).map(b"".join), st.lists(st.integers(0, 400), max_size=5))
def test_framing_in_any_order_split_anywhere_is_an_answer_or_a_bounded_typed_error(
    data: bytes, cuts: list[int]
) -> None:
    try:
        parser = fed(data, cuts, max_body=100)
        parser.eof()
    except UpstreamProtocolError as exc:
        bounded(exc)
        return
    assert parser.complete and parser.body_bytes <= 100


@settings(max_examples=25)
@given(st.sampled_from(WHOLE), AFTER, st.lists(st.integers(0, 200), max_size=3))
def test_a_whole_answer_followed_by_anything_is_read_and_spoils_the_connection(
    whole: bytes, after: bytes, cuts: list[int]
) -> None:
    # A switch of protocols after a whole answer once escaped as httptools'
    # own HttpParserUpgrade (no HttpParserError) when it came in the same read.
    parser = fed(whole + after, cuts, max_body=None)
    parser.eof()
    assert parser.complete and not parser.reusable
    assert parser.status in (200, 204) and parser.take() in (b"{}", b"")


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 200 OK " + b"x" * (4 << 20),  # a status line of megabytes
        b"HTTP/1.1 200 OK\r\nx: " + b"y" * (4 << 20),
        b"HTTP/1.1 200 OK\r\n" + b"x: y\r\n" * (1 << 18),
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1;" + b"e" * (4 << 20),
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}" * 3 + b"HTTP/1.1 200 OK " * (1 << 18),
    ],
    ids=["status-line", "header-line", "many-fields", "chunk-extension", "answers-after"],
)
def test_megabytes_in_one_read_end_at_their_bound_in_bounded_text(data: bytes) -> None:
    parser = ResponseParser(max_body=1 << 20)
    try:
        parser.feed(data)
    except ResponseTooLarge as exc:
        bounded(exc)
    else:  # the answer ended before the bytes it did not ask for
        assert parser.complete and not parser.reusable and parser.take() == b"{}"


def test_a_head_sent_in_small_pieces_costs_time_linear_in_its_size() -> None:
    # httptools joins a field given in pieces piece by piece: fed as it came,
    # a 2 MiB header line in 32-byte reads cost 64 times a 256 KiB one.
    def in_pieces(data: bytes) -> None:
        parser = ResponseParser(max_head=4 << 20, max_body=None)
        for i in range(0, len(data), 32):
            parser.feed(data[i : i + 32])
        assert not parser.head_done

    def head(size: int) -> bytes:
        return b"HTTP/1.1 200 OK\r\nx: " + b"y" * size

    costs_linearly(in_pieces, head(256 << 10), head(2 << 20))
