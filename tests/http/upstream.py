"""A scripted upstream on loopback for the tests of `mcp_schema.http.pool`:
each connection it accepts is handed to ``script`` (reader, writer), and
it counts the connections it accepted, so a test can tell a new one from a
reused one."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

from mcp_schema.http.h1 import Target, UpstreamUnreachable
from mcp_schema.http.pool import HttpClient, StreamedResponse

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

Reader: TypeAlias = asyncio.StreamReader
Writer: TypeAlias = asyncio.StreamWriter
OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


class Upstream:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.accepted = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            await self.script(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


@contextlib.asynccontextmanager
async def upstream(script: Script, **options: object) -> AsyncIterator[Upstream]:
    """``script`` serving on a free loopback port (``options``: ``asyncio.start_server``'s)."""
    served = Upstream(script)
    server = await asyncio.start_server(served._handle, "127.0.0.1", 0, **options)  # type: ignore[arg-type]
    served.port = server.sockets[0].getsockname()[1]
    try:
        yield served
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 1)


async def request_of(reader: asyncio.StreamReader) -> bytes:
    """One request's head and its ``Content-Length`` body (b"" at the connection's end)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return b""
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return head + await reader.readexactly(length)


def answering(*answers: bytes, then_close: bool = False) -> Script:
    """Each request on a connection gets the next of ``answers`` (the last one
    again after them), until the client leaves (or, ``then_close``, after the last)."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        turn = 0
        while await request_of(reader):
            writer.write(answers[min(turn, len(answers) - 1)])
            await writer.drain()
            turn += 1
            if then_close and turn >= len(answers):
                return

    return script


class RecordingClient(HttpClient):
    """A client that sends nothing: it records each request (method, target,
    fields) and fails it as an unreachable upstream would."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, object, list[tuple[bytes, bytes]]]] = []

    async def open(
        self, method: str, url: str | Target, headers: Any = (), body: Any = b"", **options: Any
    ) -> StreamedResponse:
        self.requests.append((method, url, list(headers)))
        raise UpstreamUnreachable("recorded, not sent")
