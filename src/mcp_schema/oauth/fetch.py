"""How the OAuth client reaches metadata, registration and token endpoints:
the `Fetcher` protocol (one bounded HTTP exchange), `BoundedFetcher`, the
bounds every fetcher here keeps, and `HttpFetcher`, the default, on the
package's own pooled client (`mcp_schema.http.pool.HttpClient`: the
``http`` extra's httptools, no httpx). `mcp_schema.oauth.fetch_httpx`
holds one on a caller's ``httpx.AsyncClient``.

Every fetch is bounded in time (`FETCH_SECONDS`, redirects included), in
size (`MAX_FETCHED` bytes of body) and in redirects (`MAX_REDIRECTS`,
followed for a GET only, and only within the origin it went to). With
``guard`` (a client inside a server, such as the gateway: the
server-side request forgery guard), every URL must be https and every
address its host resolves to a global one: no loopback, private, link-local
or reserved address is ever contacted. A name is resolved before the
exchange and again when the connection opens; a resolver that answers
differently the second time (DNS rebinding) is out of its reach, so a
guarded deployment also resolves through a resolver it trusts.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json as jsonlib
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlencode, urljoin, urlsplit

from mcp_schema.errors import clip, quote
from mcp_schema.oauth.errors import FetchError
from mcp_schema.oauth.urls import endpoint, origin

if TYPE_CHECKING:
    from mcp_schema.http.pool import HttpClient

__all__ = [
    "FETCH_SECONDS",
    "MAX_FETCHED",
    "MAX_REDIRECTS",
    "BoundedFetcher",
    "Fetcher",
    "HttpFetcher",
    "Request",
    "Response",
    "shown",
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

    def encoded(self) -> tuple[dict[str, str], bytes]:
        """Its header fields (lower-case names) and body, as sent."""
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.form is not None:
            headers["content-type"] = "application/x-www-form-urlencoded"
            return headers, urlencode(dict(self.form)).encode("ascii")
        if self.json is not None:
            headers["content-type"] = "application/json"
            return headers, jsonlib.dumps(self.json, separators=(",", ":")).encode()
        return headers, b""


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


def shown(url: str) -> str:
    """``url`` for a message: never its query (a code, a state)."""
    parts = urlsplit(url)
    return quote(f"{parts.scheme}://{parts.netloc}{parts.path}")


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
            raise FetchError(f"{shown(url)}: its host does not resolve") from None
        addresses = [ipaddress.ip_address(info[4][0]) for info in found]
    for address in addresses:
        if not address.is_global or address.is_multicast:
            raise FetchError(f"{shown(url)}: its host is a non-global address, refused")


class BoundedFetcher:
    """The bounds of the module around one exchange (`exchange`, a
    subclass's): the whole fetch within ``timeout``, redirects followed
    within the origin, each URL checked (and, with ``guard``, its
    addresses) before it is contacted."""

    def __init__(
        self,
        *,
        timeout: float = FETCH_SECONDS,
        max_bytes: int = MAX_FETCHED,
        max_redirects: int = MAX_REDIRECTS,
        guard: bool = False,
    ) -> None:
        self.timeout, self.max_bytes, self.max_redirects = timeout, max_bytes, max_redirects
        self.guard = guard

    async def aclose(self) -> None:
        """Close what the fetcher opened itself."""

    async def exchange(self, request: Request, url: str) -> Response:
        """One exchange of ``request`` with ``url``, no redirect followed,
        at most ``max_bytes`` of body (`FetchError` else)."""
        raise NotImplementedError

    async def fetch(self, request: Request) -> Response:
        try:
            return await asyncio.wait_for(self._fetch(request), self.timeout)
        except asyncio.TimeoutError:
            raise FetchError(f"{shown(request.url)}: no answer within {self.timeout:g} s") from None

    async def _fetch(self, request: Request) -> Response:
        url, hops = request.url, 0
        while True:
            endpoint(url, "a fetched URL", loopback_http=not self.guard)
            if self.guard:
                await _check_address(url)
            answer = await self.exchange(request, url)
            location = answer.header("location")
            redirected = 300 <= answer.status < 400 and location is not None
            if not redirected or not request.follow or request.method != "GET":
                return answer
            assert location is not None
            target = urljoin(url, location)
            if origin(target) != origin(request.url):
                raise FetchError(f"{shown(request.url)} redirects to another origin, refused")
            hops += 1
            if hops > self.max_redirects:
                raise FetchError(f"{shown(request.url)}: more than {self.max_redirects} redirects")
            url = target


class HttpFetcher(BoundedFetcher):
    """The `Fetcher` on `mcp_schema.http.pool.HttpClient` (see the module).
    ``http``: a pool of the caller's (kept open by `aclose`); by default
    one of its own, verifying certificates, with the fetch's timeout on
    connecting and on each read."""

    def __init__(
        self,
        http: HttpClient | None = None,
        *,
        timeout: float = FETCH_SECONDS,
        max_bytes: int = MAX_FETCHED,
        max_redirects: int = MAX_REDIRECTS,
        guard: bool = False,
    ) -> None:
        from mcp_schema.http.pool import Limits, Timeouts

        super().__init__(
            timeout=timeout, max_bytes=max_bytes, max_redirects=max_redirects, guard=guard
        )
        self._given = http
        self._times = Timeouts(connect=timeout, read=timeout, idle=4.0, pool=timeout)
        self._limits = Limits(max_connections=16)
        self._own: tuple[asyncio.AbstractEventLoop, HttpClient] | None = None

    def _http(self) -> HttpClient:
        """The caller's pool, else its own of the running loop (a gateway
        probes its upstream in one loop and serves in another: a connection
        belongs to the loop that opened it)."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        if self._own is None or self._own[0] is not loop:
            from mcp_schema.http.pool import HttpClient

            self._own = (loop, HttpClient(timeouts=self._times, limits=self._limits))
        return self._own[1]

    async def aclose(self) -> None:
        if self._own is not None:
            own, self._own = self._own[1], None
            await own.aclose()

    async def exchange(self, request: Request, url: str) -> Response:
        from mcp_schema.http.h1 import ResponseTooLarge, UpstreamError

        headers, body = request.encoded()
        try:
            answer = await self._http().request(
                request.method, url, list(headers.items()), body, max_body=self.max_bytes
            )
        except ResponseTooLarge:
            raise FetchError(f"{shown(url)}: an answer over {self.max_bytes:,} bytes") from None
        except UpstreamError as exc:
            raise FetchError(f"{shown(url)}: {clip(exc.message)}") from None
        except ValueError:  # a URL or header field the wire cannot carry
            raise FetchError(f"{shown(url)}: not a request this client sends") from None
        fields = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in answer.headers)
        return Response(answer.status, fields, answer.body)
