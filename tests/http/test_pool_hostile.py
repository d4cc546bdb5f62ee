"""`mcp_schema.http.pool.HttpClient` against a hostile upstream on loopback:
endless headers, a huge body, a slowloris answer, a garbage status line, a
truncated chunked body, a connection closed mid-answer, bytes past an
answer's end or on an idle connection. Each ends in a typed `UpstreamError`
within its bound, and the connection it broke is never reused: the next
request opens a new one."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import pytest

from mcp_schema.errors import McpError
from mcp_schema.http.h1 import (
    ResponseTooLarge,
    UpstreamError,
    UpstreamProtocolError,
    UpstreamTimeout,
)
from mcp_schema.http.pool import HttpClient, Limits, Timeouts
from tests.http.upstream import OK, Reader, Script, Writer, request_of, upstream

READ = 0.3
BOUND = Timeouts(connect=1.0, read=READ, idle=5.0, pool=1.0)


def first_then_ok(hostile: Callable[[Writer], Awaitable[None]]) -> Script:
    """The first connection's first request gets ``hostile``; every other request OK."""
    seen = {"connections": 0}

    async def script(reader: Reader, writer: Writer) -> None:
        seen["connections"] += 1
        first = seen["connections"] == 1
        while await request_of(reader):
            if first:
                await hostile(writer)
                first = False
                continue
            writer.write(OK)
            await writer.drain()

    return script


async def endless_headers(writer: Writer) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\n")
    for n in range(100_000):
        writer.write(b"x-%d: %s\r\n" % (n, b"a" * 50))
        await writer.drain()


async def endless_header_value(writer: Writer) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nx-long: ")
    for _ in range(10_000):
        writer.write(b"a" * 4096)
        await writer.drain()


async def huge_body(writer: Writer) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100000000\r\n\r\n")
    for _ in range(10_000):
        writer.write(b"a" * 65536)
        await writer.drain()


async def slowloris(writer: Writer) -> None:
    for byte in b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}":
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(0.05)


async def garbage_status(writer: Writer) -> None:
    writer.write(b"HTTP/1.1 2OO GOOD\r\n\r\n")
    await writer.drain()
    await asyncio.sleep(1)


async def truncated_chunked(writer: Writer) -> None:
    writer.write(b'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10\r\n{"jsonrpc":')
    await writer.drain()
    writer.close()


async def closed_mid_answer(writer: Writer) -> None:
    writer.write(b'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"jsonrpc"')
    await writer.drain()
    writer.close()


async def closed_before_head(writer: Writer) -> None:
    writer.close()


async def endless_chunk_extension(writer: Writer) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1;a=")
    for _ in range(10_000):
        writer.write(b"b" * 4096)
        await writer.drain()


async def silent_after_head(writer: Writer) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{")
    await writer.drain()
    await asyncio.sleep(5)


CASES = [
    (endless_headers, ResponseTooLarge),
    (endless_header_value, ResponseTooLarge),
    (huge_body, ResponseTooLarge),
    (slowloris, UpstreamTimeout),
    (garbage_status, UpstreamProtocolError),
    (truncated_chunked, UpstreamProtocolError),
    (closed_mid_answer, UpstreamProtocolError),
    (closed_before_head, UpstreamProtocolError),
    (endless_chunk_extension, ResponseTooLarge),
    (silent_after_head, UpstreamTimeout),
]


@pytest.mark.parametrize(("hostile", "error"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_hostile_answer_is_a_typed_error_in_bound_and_its_connection_is_not_reused(
    hostile: Callable[[Writer], Awaitable[None]], error: type[UpstreamError]
) -> None:
    async def run() -> tuple[BaseException, float, int, int]:
        async with upstream(first_then_ok(hostile)) as served:
            client = HttpClient(timeouts=BOUND, limits=Limits(max_body=1 << 20))
            started = time.monotonic()
            with pytest.raises(UpstreamError) as failed:
                await client.request("POST", served.url, [(b"content-type", b"x")], b"{}")
            took = time.monotonic() - started
            after = await client.request("POST", served.url, [], b"{}")
            assert after.status == 200 and after.body == b"{}"
            await client.aclose()
            return failed.value, took, served.accepted, client.open_connections

    failed, took, accepted, left = asyncio.run(run())
    assert isinstance(failed, error) and isinstance(failed, McpError)
    assert failed.code == -32603
    # The head's bound, then the body's (and room for a machine shared with other work).
    assert took < 2 * READ + 2.5
    assert accepted == 2  # the broken connection was closed, the next request had a new one
    assert left == 0


def accepted(script: Script, exchange: Callable[[HttpClient, str], Awaitable[None]]) -> int:
    """The connections ``script`` accepted while ``exchange(client, url)`` ran."""

    async def run() -> int:
        async with upstream(script) as served:
            client = HttpClient(timeouts=BOUND)
            await exchange(client, served.url)
            await client.aclose()
            return served.accepted

    return asyncio.run(run())


async def two_posts(client: HttpClient, url: str) -> None:
    for _ in range(2):
        assert (await client.request("POST", url, [], b"{}")).status == 200


@pytest.mark.parametrize(
    "past_the_end",
    [
        OK,  # one more answer than asked
        b"{}{}",  # a body longer than it declared
        b"HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\nconnection: upgrade\r\n\r\n",
    ],
    ids=["two-answers", "longer-body", "switch"],
)
def test_bytes_past_an_answers_end_spoil_the_connection(
    past_the_end: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    async def hostile(writer: Writer) -> None:
        writer.write(OK + past_the_end)  # the connection cannot be trusted after it
        await writer.drain()

    assert accepted(first_then_ok(hostile), two_posts) == 2
    # Read as bytes past the end, not failed in data_received (which asyncio logs).
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_bytes_on_an_idle_connection_keep_it_from_being_reused() -> None:
    async def script(reader: Reader, writer: Writer) -> None:
        while await request_of(reader):
            writer.write(OK)
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.write(b"HTTP/1.1 408 Request Timeout\r\n\r\n")  # unasked
            await writer.drain()

    async def posts_apart(client: HttpClient, url: str) -> None:
        await client.request("POST", url, [], b"{}")
        await asyncio.sleep(0.2)
        await client.request("POST", url, [], b"{}")

    assert accepted(script, posts_apart) == 2


def test_a_stream_left_before_its_end_closes_its_connection() -> None:
    async def script(reader: Reader, writer: Writer) -> None:
        while await request_of(reader):
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
            writer.write(b"transfer-encoding: chunked\r\n\r\n")
            writer.write(b"a\r\ndata: {}\n\n\r\n")
            await writer.drain()

    async def streams_left(client: HttpClient, url: str) -> None:
        async with client.stream("POST", url, [], b"{}") as response:
            assert await response.receive() == b"data: {}\n\n"
        assert client.open_connections == 0
        async with client.stream("POST", url, [], b"{}") as response:
            await response.receive()

    assert accepted(script, streams_left) == 2
