"""How the OAuth client reaches metadata, registration and token endpoints:
the `Fetcher` protocol (one bounded HTTP exchange) and `HttpxFetcher`, the
one on httpx (the ``http`` extra).

Every fetch is bounded in time (`FETCH_SECONDS`, redirects included), in
size (`MAX_FETCHED` bytes of body) and in redirects (`MAX_REDIRECTS`,
followed for a GET only, and only within the origin it went to). With
``guard`` (a client inside a server, such as the gateway: the
server-side request forgery guard), every URL must be https and every
address its host resolves to a global one: no loopback, private, link-local
or reserved address is ever contacted. A name is resolved before the
exchange and again by httpx when it connects; a resolver that answers
differently the second time (DNS rebinding) is out of its reach, so a
guarded deployment also resolves through a resolver it trusts.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

import httpx

from mcp_schema.errors import clip, quote
from mcp_schema.oauth.errors import FetchError
from mcp_schema.oauth.urls import endpoint, origin

__all__ = [
    "FETCH_SECONDS",
    "MAX_FETCHED",
    "MAX_REDIRECTS",
    "Fetcher",
    "HttpxFetcher",
    "Request",
    "Response",
]

MAX_FETCHED = 256 * 1024
"""Bytes of one answer read at most (a metadata document, a token answer)."""

FETCH_SECONDS = 10.0
"""Seconds one fetch may take, redirects included."""

MAX_REDIRECTS = 3
"""Redirects one GET follows at most (within its origin)."""


@dataclass(frozen=True)
class Request:
    """One HTTP request of the OAuth client."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    form: Mapping[str, str] | None = field(default=None, repr=False)
    json: Any = field(default=None, repr=False)
    follow: bool = True
    """Follow redirects (a GET, within its origin); False: a 3xx is the answer."""


@dataclass(frozen=True)
class Response:
    """Its answer: the status, the headers (names lowercased) and the body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = field(repr=False)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)


class Fetcher(Protocol):
    """One bounded HTTP exchange: the `Response`, or `FetchError`."""

    async def fetch(self, request: Request) -> Response: ...


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return quote(f"{parts.scheme}://{parts.netloc}{parts.path}")  # never the query


async def _check_address(url: str) -> None:
    host = urlsplit(url).hostname or ""
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            found = await asyncio.get_running_loop().getaddrinfo(
                host, None, type=socket.SOCK_STREAM
            )
        except OSError:
            raise FetchError(f"{_shown(url)}: its host does not resolve") from None
        addresses = [ipaddress.ip_address(info[4][0]) for info in found]
    for address in addresses:
        if not address.is_global or address.is_multicast:
            raise FetchError(f"{_shown(url)}: its host is a non-global address, refused")


class HttpxFetcher:
    """The `Fetcher` on httpx (see the module). ``http``: an
    ``httpx.AsyncClient`` of the caller's (its own redirect following is
    not used)."""

    def __init__(
        self,
        http: httpx.AsyncClient | None = None,
        *,
        timeout: float = FETCH_SECONDS,
        max_bytes: int = MAX_FETCHED,
        max_redirects: int = MAX_REDIRECTS,
        guard: bool = False,
    ) -> None:
        self._http = httpx.AsyncClient() if http is None else http
        self._owned = http is None
        self.timeout, self.max_bytes, self.max_redirects = timeout, max_bytes, max_redirects
        self.guard = guard

    async def aclose(self) -> None:
        if self._owned:
            await self._http.aclose()

    async def fetch(self, request: Request) -> Response:
        try:
            return await asyncio.wait_for(self._fetch(request), self.timeout)
        except asyncio.TimeoutError:
            raise FetchError(
                f"{_shown(request.url)}: no answer within {self.timeout:g} s"
            ) from None

    async def _fetch(self, request: Request) -> Response:
        url, hops = request.url, 0
        while True:
            answer = await self._once(request, url)
            location = answer.header("location")
            redirected = 300 <= answer.status < 400 and location is not None
            if not redirected or not request.follow or request.method != "GET":
                return answer
            assert location is not None
            target = urljoin(url, location)
            if origin(target) != origin(request.url):
                raise FetchError(f"{_shown(request.url)} redirects to another origin, refused")
            hops += 1
            if hops > self.max_redirects:
                raise FetchError(f"{_shown(request.url)}: more than {self.max_redirects} redirects")
            url = target

    async def _once(self, request: Request, url: str) -> Response:
        endpoint(url, "a fetched URL", loopback_http=not self.guard)
        if self.guard:
            await _check_address(url)
        try:
            async with self._http.stream(
                request.method,
                url,
                headers=dict(request.headers),
                data=dict(request.form) if request.form is not None else None,
                json=request.json,
                follow_redirects=False,
                timeout=self.timeout,
            ) as answer:
                declared = answer.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_bytes:
                    raise FetchError(f"{_shown(url)}: an answer over {self.max_bytes:,} bytes")
                body = bytearray()
                async for chunk in answer.aiter_bytes():
                    body += chunk
                    if len(body) > self.max_bytes:
                        raise FetchError(f"{_shown(url)}: an answer over {self.max_bytes:,} bytes")
                headers = tuple((k.lower(), v) for k, v in answer.headers.multi_items())
                return Response(answer.status_code, headers, bytes(body))
        except httpx.HTTPError as exc:
            reason = clip(str(exc)) or type(exc).__name__
            raise FetchError(f"{_shown(url)}: {reason}") from None
