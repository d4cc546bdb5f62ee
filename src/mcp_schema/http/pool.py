"""`HttpClient`: a lean pooled HTTP/1.1 client (asyncio), what the gateway
reaches its upstream with and what a sans-IO client (an OAuth flow) can be
driven by: a method, a URL, header fields and a body in; a status, header
fields and a body (`Response`) or a stream of the body's chunks
(`StreamedResponse`) out. The wire is `mcp_schema.http.h1`'s (httptools).

Why not httpx: a proxy's upstream client is on every request's path, and
httpx spends more than the gateway's own reading of the messages (its
request and response models, header normalisation, the transport stack, a
task per stream). This client writes a request's head and body in one
write, parses the answer in C as it arrives, and wakes its reader once per
read. ``docs/guide/gateway.md`` has the numbers.

What it keeps (`Timeouts`, `Limits`):

* https with the certificate verified and the host name checked
  (`ssl.create_default_context`, or the ``ssl_context`` given);
* a connect timeout, a read timeout (each wait for the answer's bytes;
  None: none, for a stream that may stay silent), and an idle one: a kept
  connection unused that long is closed, not reused (below the usual
  servers' keep-alive, so that they seldom close one as it is reused);
* a bounded pool (``max_connections`` across origins; a request waits up
  to ``Timeouts.pool`` for one), and a connection reused only after a
  whole answer, kept alive, with nothing after it: anything else (an
  error, a timeout, a cancelled request, a stream left before its end)
  closes it;
* no redirect followed (a 3xx is an answer like any other), no cookies,
  no proxies from the environment, no content decoding;
* bounds on the answer's head, fields and body (`ResponseTooLarge`).

Its failures are `mcp_schema.http.h1.UpstreamError`: `UpstreamUnreachable`
and `UpstreamProtocolError` (502 to a gateway's client), `UpstreamTimeout`
(504). A request whose connection was reused and closed before a byte of
its answer is tried once more on a new one when its method is idempotent
(as aiohttp does; a POST never is).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import cast

from mcp_schema.http.connection import Body, Connection
from mcp_schema.http.h1 import (
    MAX_FIELDS,
    MAX_HEAD,
    ResponseParser,
    Target,
    UpstreamProtocolError,
    UpstreamTimeout,
    UpstreamUnreachable,
    request_head,
)

__all__ = ["MAX_BODY", "HttpClient", "Limits", "Response", "StreamedResponse", "Timeouts"]

MAX_BODY = 16 << 20
"""The body `HttpClient.request` reads whole, by default, in bytes."""

Headers = Iterable[tuple[bytes, bytes]] | Iterable[tuple[str, str]]

_IDEMPOTENT = frozenset(["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"])


@dataclass(frozen=True)
class Timeouts:
    """In seconds: ``connect``; ``read``, each wait for the answer's bytes
    (None: no bound); ``idle``, how long a kept connection may wait for its
    next request; ``pool``, the wait for a free connection."""

    connect: float = 10.0
    read: float | None = 60.0
    idle: float = 4.0
    pool: float = 10.0


@dataclass(frozen=True)
class Limits:
    """``max_connections`` open at once (all origins); an answer's head
    (``max_head`` bytes, ``max_fields`` fields) and the body `HttpClient.request`
    reads whole (``max_body``)."""

    max_connections: int = 100
    max_head: int = MAX_HEAD
    max_fields: int = MAX_FIELDS
    max_body: int = MAX_BODY


@dataclass(frozen=True)
class Response:
    """A whole answer: ``status``, ``headers`` (names lower-case), ``body``."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first field named ``name`` (any case), as text."""
        key = name.lower().encode("latin-1")
        return next((v.decode("latin-1") for k, v in self.headers if k == key), None)


class StreamedResponse:
    """An answer whose head came: ``status``, ``headers`` (names
    lower-case); its body by `receive` (or ``async for``), or whole by
    `read`. `aclose` (or leaving ``async with``) gives the connection back:
    to the pool after a whole answer, else closed."""

    __slots__ = ("_client", "_conn", "_parser", "_read", "deadline", "headers", "status")

    def __init__(
        self, client: HttpClient, conn: Connection, parser: ResponseParser, read: float | None
    ) -> None:
        self._client, self._conn, self._parser, self._read = client, conn, parser, read
        self.status, self.headers = parser.status, parser.headers
        self.deadline: float | None = None
        """The loop's time by which the body must be whole (None: each read
        waits up to the read timeout, as a stream's silences may last)."""

    async def receive(self) -> bytes:
        """The body's next bytes; b"" at its end (`UpstreamError` when it breaks off)."""
        parser, conn = self._parser, self._conn
        while True:
            data = parser.take()
            if data:
                return data
            if parser.complete:
                self._done()
                return b""
            if conn.error is not None:
                raise conn.error
            if conn.closed:  # ended where its framing did not say
                raise UpstreamProtocolError("the upstream closed the connection mid-answer")
            await conn.wait(self._read, self.deadline)

    @property
    def complete(self) -> bool:
        """Whether the whole body has been received (the reader took it all)."""
        return self._parser.complete and not self._parser.body

    def __aiter__(self) -> StreamedResponse:
        return self

    async def __anext__(self) -> bytes:
        data = await self.receive()
        if not data:
            raise StopAsyncIteration
        return data

    async def read(self) -> bytes:
        """The rest of the body, whole."""
        parts = []
        while data := await self.receive():
            parts.append(data)
        return b"".join(parts)

    def _done(self) -> None:
        if self._conn.parser is self._parser:
            self._client._release(self._conn)

    async def aclose(self) -> None:
        self._done()

    async def __aenter__(self) -> StreamedResponse:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._done()


class HttpClient:
    """A pool of HTTP/1.1 connections (see the module): ``timeouts`` and
    ``limits`` by default (each request may give its own timeouts),
    ``ssl_context`` for https (by default the system's, verifying). One
    event loop; `aclose` closes every connection."""

    def __init__(
        self,
        *,
        timeouts: Timeouts | None = None,
        limits: Limits | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.timeouts = Timeouts() if timeouts is None else timeouts
        self.limits = Limits() if limits is None else limits
        if not isinstance(self.timeouts, Timeouts) or not isinstance(self.limits, Limits):
            raise TypeError("timeouts must be a Timeouts and limits a Limits")
        if self.limits.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self._ssl = ssl_context
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._open = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._closed = False

    @property
    def open_connections(self) -> int:
        """Connections open or opening (busy and idle)."""
        return self._open

    async def request(
        self,
        method: str,
        url: str | Target,
        headers: Headers = (),
        body: Body = b"",
        *,
        timeouts: Timeouts | None = None,
        max_body: int | None = None,
    ) -> Response:
        """The answer to a request, read whole (at most ``max_body`` bytes, by
        default ``Limits.max_body``): its head within the read timeout, and
        its body within as long again."""
        limit = self.limits.max_body if max_body is None else max_body
        async with await self.open(
            method, url, headers, body, timeouts=timeouts, max_body=limit
        ) as streamed:
            read = (self.timeouts if timeouts is None else timeouts).read
            if read is not None:
                streamed.deadline = asyncio.get_running_loop().time() + read
            return Response(streamed.status, streamed.headers, await streamed.read())

    def stream(
        self,
        method: str,
        url: str | Target,
        headers: Headers = (),
        body: Body = b"",
        *,
        timeouts: Timeouts | None = None,
        max_body: int | None = None,
    ) -> _Opening:
        """``async with client.stream(...) as response``: `open`, then `StreamedResponse.aclose`."""
        return _Opening(self.open(method, url, headers, body, timeouts=timeouts, max_body=max_body))

    async def open(
        self,
        method: str,
        url: str | Target,
        headers: Headers = (),
        body: Body = b"",
        *,
        timeouts: Timeouts | None = None,
        max_body: int | None = None,
    ) -> StreamedResponse:
        """The answer to a request once its head came, within the read
        timeout in all (a head sent slowly fails as a silent one); its body
        unbounded unless ``max_body``, each of its reads within the read
        timeout. The caller `StreamedResponse.aclose`s it."""
        if self._closed:
            raise UpstreamUnreachable("the client is closed")
        if method == "HEAD" or method == "CONNECT":
            raise ValueError(f"{method} is not sent by this client")
        target = url if isinstance(url, Target) else Target.of(url)
        times = self.timeouts if timeouts is None else timeouts
        length = len(body) if isinstance(body, bytes) else None
        head = request_head(method, target, _encoded(headers), length)
        retry = method in _IDEMPOTENT and length is not None
        limits = self.limits
        while True:
            # A kept connection is taken without a wait (a coroutine less per request).
            conn: Connection | None = self._kept(target.origin)
            reused = conn is not None
            if conn is None:
                conn, reused = await self._acquire(target, times)
            loop = conn.loop  # the running one (one loop per client): asking costs a getpid(2)
            now = loop.time()
            parser = ResponseParser(
                max_head=limits.max_head, max_fields=limits.max_fields, max_body=max_body
            )
            conn.parser = parser
            try:
                if isinstance(body, bytes):
                    conn.write(head, body)
                else:
                    await conn.stream(head, body)
                    now = loop.time()
                # The read timeout from the request's write (its body streamed: its end).
                deadline = None if times.read is None else now + times.read
                while not parser.head_done:
                    if conn.error is not None:
                        raise conn.error
                    if conn.closed:
                        raise UpstreamProtocolError("the upstream closed the connection")
                    await conn.wait(times.read, deadline)
            except UpstreamProtocolError:
                self._release(conn)
                if retry and reused and parser.received == 0:
                    retry = False
                    continue  # a kept connection the server had closed: once more, anew
                raise
            except BaseException:
                self._release(conn)
                raise
            return StreamedResponse(self, conn, parser, times.read)

    # -- the pool ------------------------------------------------------------------------

    async def _acquire(self, target: Target, times: Timeouts) -> tuple[Connection, bool]:
        """A connection to ``target``'s origin: a kept one still fresh, else a new one
        once the pool has room; and whether it was kept."""
        origin = target.origin
        while True:
            conn = self._kept(origin)
            if conn is not None:
                return conn, True
            if self._open < self.limits.max_connections or self._evict():
                break
            await self._wait_free(times.pool)
        self._open += 1
        try:
            return await self._connect(target, times.connect), False
        except BaseException:
            self._open -= 1
            self._wake_one()
            raise

    def _kept(self, origin: tuple[str, str, int]) -> Connection | None:
        """A kept connection to ``origin`` still fresh, or None (the stale ones closed)."""
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if not conn.closed and conn.loop.time() - conn.idle_since <= self.timeouts.idle:
                return conn
            self._discard(conn)
        return None

    async def _connect(self, target: Target, seconds: float) -> Connection:
        loop = asyncio.get_running_loop()
        context = None
        if target.scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()  # verifies, checks the host name
            context = self._ssl
        opening = loop.create_connection(
            lambda: Connection(target.origin, self._lost, loop),
            target.host,
            target.port,
            ssl=context,
            server_hostname=target.host if context is not None else None,
        )
        where = f"{target.host}:{target.port}"
        try:
            _, conn = await asyncio.wait_for(opening, seconds)
        except asyncio.TimeoutError:
            raise UpstreamTimeout(f"connecting to {where} took over {seconds:g} s") from None
        except ssl.SSLError as exc:
            raise UpstreamUnreachable(f"no TLS with {where}: {str(exc)[:160]}") from None
        except OSError as exc:
            raise UpstreamUnreachable(f"cannot connect to {where}: {exc.strerror or exc}") from None
        return conn

    async def _wait_free(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters.append(waiter)
        timer = loop.call_later(seconds, _pool_expired, waiter, seconds)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._wake_one()  # woken, then cancelled before it ran: the next one's turn
            raise
        finally:
            timer.cancel()
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _evict(self) -> bool:
        """Close a kept connection to another origin to make room; whether there was one."""
        for kept in self._idle.values():
            if kept:
                self._discard(kept.pop(0))
                return True
        return False

    def _release(self, conn: Connection) -> None:
        """``conn`` back from a request: kept when its answer allows, else closed."""
        parser, conn.parser = conn.parser, None
        conn.resume()
        if parser is not None and parser.reusable and not conn.closed and not self._closed:
            if conn.error is None:
                conn.idle_since = conn.loop.time()
                self._idle.setdefault(conn.origin, []).append(conn)
                self._wake_one()
                return
        self._discard(conn)

    def _discard(self, conn: Connection) -> None:
        if conn.counted:  # counted once: a connection lost while kept is gone already
            conn.counted = False
            self._open -= 1
            conn.close()
            self._wake_one()

    def _lost(self, conn: Connection) -> None:
        """A kept connection the server closed."""
        kept = self._idle.get(conn.origin)
        if kept is not None and conn in kept:
            kept.remove(conn)
        self._discard(conn)

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def aclose(self) -> None:
        """Close every kept connection; those busy close as their requests end."""
        self._closed = True
        for kept in self._idle.values():
            while kept:
                self._discard(kept.pop())
        self._idle.clear()

    def __repr__(self) -> str:
        return f"HttpClient(open={self._open}, max={self.limits.max_connections})"


def _pool_expired(waiter: asyncio.Future[None], seconds: float) -> None:
    if not waiter.done():
        waiter.set_exception(UpstreamTimeout(f"no free upstream connection in {seconds:g} s"))


class _Opening:
    """`HttpClient.stream`'s context manager."""

    __slots__ = ("_opening", "_response")

    def __init__(self, opening: Awaitable[StreamedResponse]) -> None:
        self._opening = opening
        self._response: StreamedResponse | None = None

    async def __aenter__(self) -> StreamedResponse:
        response = self._response = await self._opening
        return response

    async def __aexit__(self, *exc_info: object) -> None:
        if self._response is not None:
            await self._response.aclose()


def _encoded(headers: Headers) -> Iterable[tuple[bytes, bytes]]:
    """Header fields as bytes (text as Latin-1, as HTTP/1.1 carries it)."""
    if isinstance(headers, list) and (not headers or isinstance(headers[0][0], bytes)):
        return cast("list[tuple[bytes, bytes]]", headers)  # the gateway's: bytes already
    return [
        (
            k if isinstance(k, bytes) else k.encode("latin-1"),
            v if isinstance(v, bytes) else v.encode("latin-1"),
        )
        for k, v in headers
    ]
