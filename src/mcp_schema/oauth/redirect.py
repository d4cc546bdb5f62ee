"""How the user's consent is asked for: the `Redirect` protocol (send the
user agent to the authorization URL, and return the URL it was redirected
back to), and two of them:

* `LoopbackRedirect`: a native client's, listening on 127.0.0.1 on a
  random port for the one redirect back, opening the browser with
  ``open_url`` (``webbrowser.open`` by default);
* `FollowRedirect`: a consent that needs no user (a test's authorization
  server, or the conformance suite's): the authorization URL is fetched and
  its redirect is the answer.
"""

from __future__ import annotations

import asyncio
import webbrowser
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urljoin, urlsplit

from mcp_schema.oauth.errors import AuthorizationResponseError
from mcp_schema.oauth.fetch import Fetcher, HttpFetcher, Request

__all__ = ["FollowRedirect", "LoopbackRedirect", "Redirect"]

_MAX_REQUEST = 8192  # bytes of the redirect back's request line and headers
_READ_SECONDS = 10.0
_PAGE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\nconnection: close\r\n"
    b"cache-control: no-store\r\n\r\n<!doctype html><title>Authorized</title>"
    b"<p>Authorization is done: this window can be closed.</p>"
)
_MISSING = b"HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


class Redirect(Protocol):
    """Where the user agent comes back (``redirect_uri``), and how it goes."""

    @property
    def redirect_uri(self) -> str: ...

    async def authorize(self, url: str) -> str:
        """Send the user agent to ``url``; the URL it came back to."""
        ...


class FollowRedirect:
    """A `Redirect` whose consent is a redirect straight back (see the module)."""

    def __init__(
        self, redirect_uri: str = "http://127.0.0.1/callback", fetcher: Fetcher | None = None
    ) -> None:
        self._redirect_uri = redirect_uri
        self._fetcher = fetcher if fetcher is not None else HttpFetcher()

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, url: str) -> str:
        answer = await self._fetcher.fetch(Request("GET", url, follow=False))
        location = answer.header("location")
        if not 300 <= answer.status < 400 or location is None:
            raise AuthorizationResponseError(
                f"the authorization endpoint answered {answer.status}, no redirect"
            )
        return urljoin(url, location)


class LoopbackRedirect:
    """A `Redirect` to a listener on 127.0.0.1 (see the module): use it as
    ``async with LoopbackRedirect() as redirect``; ``timeout``: seconds the
    user has to consent."""

    def __init__(
        self,
        open_url: Callable[[str], object] = webbrowser.open,
        *,
        path: str = "/callback",
        timeout: float = 300.0,
    ) -> None:
        self.open_url, self.path, self.timeout = open_url, path, timeout
        self._server: asyncio.Server | None = None
        self._port = 0
        self._waiter: asyncio.Future[str] | None = None

    async def __aenter__(self) -> LoopbackRedirect:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=_MAX_REQUEST)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    @property
    def redirect_uri(self) -> str:
        if self._server is None:
            raise RuntimeError("use the LoopbackRedirect in `async with` first")
        return f"http://127.0.0.1:{self._port}{self.path}"

    async def authorize(self, url: str) -> str:
        if self._server is None:
            raise RuntimeError("use the LoopbackRedirect in `async with` first")
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            self.open_url(url)
            return await asyncio.wait_for(asyncio.shield(self._waiter), self.timeout)
        except asyncio.TimeoutError:
            raise AuthorizationResponseError(
                f"no redirect back within {self.timeout:g} s"
            ) from None
        finally:
            self._waiter = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _READ_SECONDS)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        line = head[:_MAX_REQUEST].split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rpartition(" ")[0]
        waiting = self._waiter is not None and not self._waiter.done()
        if method == "GET" and urlsplit(target).path == self.path and waiting:
            assert self._waiter is not None
            self._waiter.set_result(f"http://127.0.0.1:{self._port}{target}")
            writer.write(_PAGE)
        else:
            writer.write(_MISSING)
        try:
            await writer.drain()
        finally:
            writer.close()
