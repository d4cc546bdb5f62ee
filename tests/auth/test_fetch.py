"""`HttpFetcher`: https only (http on loopback), a redirect followed only for
a GET and only within its origin, the answer bounded in size (before and
while it is read, never decompressed) and the whole fetch in time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest

from mcp_schema.auth import FetchError, HttpFetcher
from tests.auth.tokens import run

Handler = Callable[[httpx.Request], Coroutine[Any, Any, httpx.Response]]


def fetched(
    handler: Handler, url: str = "https://auth.example.com/jwks", **options: object
) -> bytes:
    async def main() -> bytes:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        try:
            return await HttpFetcher(client=client, **options).fetch(url)  # type: ignore[arg-type]
        finally:
            await client.aclose()

    result: bytes = run(main())
    return result


def streamed(status: int, body: bytes = b"", **headers: str) -> httpx.Response:
    """An answer as the network gives it: its body still to be read."""
    return httpx.Response(status, headers=headers, stream=httpx.ByteStream(body))


async def ok(request: httpx.Request) -> httpx.Response:
    return streamed(200, b'{"keys": []}')


def test_a_200_answer_is_its_body() -> None:
    assert fetched(ok) == b'{"keys": []}'
    assert fetched(ok, "http://127.0.0.1:9/jwks") == b'{"keys": []}'


@pytest.mark.parametrize("url", ["http://auth.example.com/jwks", "file:///etc/passwd", "ftp://a/b"])
def test_only_https_is_fetched_off_loopback(url: str) -> None:
    with pytest.raises(FetchError, match="https"):
        fetched(ok, url)


def test_a_redirect_is_followed_within_its_origin_only() -> None:
    async def moved(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/old":
            return httpx.Response(302, headers={"location": "/jwks"})
        if request.url.path == "/away":
            return httpx.Response(302, headers={"location": "https://evil.example.com/jwks"})
        if request.url.path == "/loop":
            return httpx.Response(302, headers={"location": "/loop"})
        return await ok(request)

    assert fetched(moved, "https://auth.example.com/old") == b'{"keys": []}'
    with pytest.raises(FetchError, match="another origin"):
        fetched(moved, "https://auth.example.com/away")
    with pytest.raises(FetchError, match="redirects"):
        fetched(moved, "https://auth.example.com/loop")


def test_a_post_follows_no_redirect() -> None:
    async def moved(request: httpx.Request) -> httpx.Response:
        return httpx.Response(307, headers={"location": "/elsewhere"})

    async def main() -> None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(moved))
        with pytest.raises(FetchError, match="307"):
            await HttpFetcher(client=client).fetch("https://a.example.com/x", form={"token": "t"})
        await client.aclose()

    run(main())


def test_an_answer_past_the_size_limit_is_refused() -> None:
    async def big(request: httpx.Request) -> httpx.Response:
        return streamed(200, b"x" * 5000)

    with pytest.raises(FetchError, match="longer"):
        fetched(big, max_bytes=4096)
    assert len(fetched(big, max_bytes=5000)) == 5000


def test_a_compressed_answer_is_refused_unread() -> None:
    async def gzipped(request: httpx.Request) -> httpx.Response:
        assert request.headers["accept-encoding"] == "identity"
        return streamed(200, b"\x1f\x8b", **{"content-encoding": "gzip"})

    with pytest.raises(FetchError, match="encoding"):
        fetched(gzipped)


def test_another_status_is_refused() -> None:
    async def missing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404)

    with pytest.raises(FetchError, match="404"):
        fetched(missing)


def test_the_whole_fetch_is_bounded_in_time() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return await ok(request)

    with pytest.raises(FetchError, match="within"):
        fetched(slow, seconds=0.05)


def test_a_transport_failure_is_a_fetch_error() -> None:
    async def broken(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(FetchError, match="ConnectError"):
        fetched(broken)
