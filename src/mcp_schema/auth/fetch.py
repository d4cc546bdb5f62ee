"""How a verifier reaches its authorization server: the `Fetcher` protocol
(one bounded HTTP request, its body as bytes), and `HttpFetcher`, the one
on httpx (the ``auth`` extra brings it).

Every fetch is bounded in time and size, goes to https URLs only (http on
loopback), and follows a redirect only for a GET and only within the
origin it went to: an authorization server's metadata, keys and
introspection answers come from where it was configured, or not at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Protocol
from urllib.parse import urljoin, urlsplit

import httpx

from mcp_schema._args import check
from mcp_schema.auth.urls import secure_url

__all__ = ["FETCH_SECONDS", "MAX_FETCHED", "FetchError", "Fetcher", "HttpFetcher"]

MAX_FETCHED = 1 << 20
"""Bytes of one answer read at most (a metadata document, a key set)."""

FETCH_SECONDS = 10.0
"""Seconds one fetch may take, redirects included."""

_MAX_REDIRECTS = 3


class FetchError(Exception):
    """A fetch that did not end in a whole 200 answer within its bounds;
    ``status``: the answer's status, when it was another."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Fetcher(Protocol):
    """One HTTP request to an authorization server: a GET of ``url``, or a
    POST of ``form`` (``application/x-www-form-urlencoded``) when given,
    with ``headers``; the body of its 200 answer, or `FetchError`."""

    async def fetch(
        self,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> bytes: ...


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


class HttpFetcher:
    """A `Fetcher` on an ``httpx.AsyncClient`` (``client``, else one of its
    own): ``connect_seconds`` to connect, ``read_seconds`` between two reads,
    ``seconds`` for the whole fetch, ``max_bytes`` of answer."""

    def __init__(
        self,
        *,
        connect_seconds: float = 5.0,
        read_seconds: float = 5.0,
        seconds: float = FETCH_SECONDS,
        max_bytes: int = MAX_FETCHED,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        for value, name in ((connect_seconds, "connect_seconds"), (read_seconds, "read_seconds")):
            check(value, float, name)
            if not value > 0:
                raise ValueError(f"{name} must be positive, not {value!r}")
        check(seconds, float, "seconds")
        check(max_bytes, int, "max_bytes")
        if not seconds > 0 or max_bytes < 1:
            raise ValueError("seconds and max_bytes must be positive")
        self.seconds, self.max_bytes = float(seconds), max_bytes
        timeout = httpx.Timeout(read_seconds, connect=connect_seconds)
        self._own = client is None
        self._client = client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)

    async def fetch(
        self,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        """The body of the 200 answer to ``url`` (see `Fetcher`)."""
        try:
            return await asyncio.wait_for(self._fetch(url, form, headers), self.seconds)
        except asyncio.TimeoutError:
            raise FetchError(f"no whole answer within {self.seconds:g} s") from None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as error:
            raise FetchError(f"the request failed ({type(error).__name__})") from None

    async def _fetch(
        self, url: str, form: Mapping[str, str] | None, headers: Mapping[str, str] | None
    ) -> bytes:
        sent = {"accept": "application/json", "accept-encoding": "identity", **(headers or {})}
        for _ in range(_MAX_REDIRECTS + 1):
            try:
                secure_url(url, "a fetched URL", query=True)
            except ValueError:
                raise FetchError("not an https URL (http only on loopback)") from None
            method = "GET" if form is None else "POST"
            async with self._client.stream(method, url, data=form, headers=sent) as answer:
                if answer.is_redirect and form is None:
                    moved = urljoin(url, answer.headers.get("location", ""))
                    if _origin(moved) != _origin(url):
                        raise FetchError("redirected to another origin")
                    url = moved
                    continue
                if answer.status_code != 200:
                    raise FetchError(f"answered {answer.status_code}", answer.status_code)
                if answer.headers.get("content-encoding", "identity") != "identity":
                    raise FetchError("answered with a content encoding")
                body = bytearray()
                async for chunk in answer.aiter_raw():
                    body += chunk
                    if len(body) > self.max_bytes:
                        raise FetchError(f"the answer is longer than {self.max_bytes:,} bytes")
                return bytes(body)
        raise FetchError(f"more than {_MAX_REDIRECTS} redirects")

    async def aclose(self) -> None:
        """Close the client, when it is this fetcher's own."""
        if self._own:
            await self._client.aclose()
