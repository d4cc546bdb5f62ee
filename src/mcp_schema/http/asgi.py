"""`App`: an ASGI 3 application serving an `Endpoint`, with no framework
under it: ``uvicorn.run(App(endpoint))``, or mounted in any ASGI router.

* On a loopback address, a request whose ``Host`` is no loopback name
  (`mcp_schema.http.rules.LOOPBACK_HOSTS`) is refused, 421, unless the
  endpoint names its own ``allowed_hosts``: a page whose name an attacker
  rebinds to 127.0.0.1 reaches a local server with its own name as ``Host``.
* Refusals that need no body (`Endpoint.precheck`) are sent before the
  body is read; the body is read chunk by chunk and refused with 413 as
  soon as it grows beyond the endpoint's ``max_body``.
* A `Stream` is written as it fills: each wake-up sends what is waiting,
  in one chunk. An event stream idle for ``keepalive`` seconds gets an SSE
  comment (`KEEPALIVE`).
* The client disconnecting (``http.disconnect``) before a stream is done
  abandons it: the endpoint cancels the request it answers
  (`mcp_schema.http.endpoint`). The buffering rule is the stream's: a
  reader that falls ``max_buffer`` bytes behind has its stream cut, which
  is cancellation too.
* ``lifespan``: startup starts ``relay`` (a
  `mcp_schema.subscription_relay.Relay`, if given: changes published on any
  replica reach this one's listens, and the endpoint's task status
  notifications every replica's: `Relay.carry`); shutdown stops it and terminates every
  session and listen, which ends their open streams. A server may wait for open responses before it gets there (a
  GET stream lasts until its client leaves): give it a graceful-shutdown
  timeout (uvicorn's ``--timeout-graceful-shutdown``).

Handlers run in the event loop, synchronously, as the endpoint calls
them: a handler that blocks, blocks the server. One that needs to wait
for the client answers later through the protocol (``session.ask``),
never by waiting.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp_schema.http.endpoint import Endpoint
from mcp_schema.http.rules import LOOPBACK_HOSTS, allowed_host, host_refusal, refusal
from mcp_schema.http.stream import KEEPALIVE, Response, Stream
from mcp_schema.http_headers import received_headers
from mcp_schema.subscription_relay import Relay

__all__ = ["KEEPALIVE_SECONDS", "App"]

KEEPALIVE_SECONDS = 15.0
"""Seconds an event stream may stay silent before a keep-alive comment."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class App:
    """The ASGI 3 application of ``endpoint``."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        keepalive: float = KEEPALIVE_SECONDS,
        relay: Relay | None = None,
    ) -> None:
        if not isinstance(endpoint, Endpoint):
            raise TypeError(f"endpoint must be an Endpoint, not {type(endpoint).__name__}")
        if not isinstance(keepalive, (int, float)) or not keepalive > 0:
            raise ValueError(f"keepalive must be a positive number of seconds, not {keepalive!r}")
        self.endpoint = endpoint
        self.keepalive = float(keepalive)
        self.relay = relay
        if relay is not None and endpoint.tasks is not None:
            relay.carry(endpoint.tasks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return None  # a websocket is not an MCP transport: the server closes it
        method, path = scope["method"], scope["path"]
        # The headers read into one dict and the precheck made once, before the
        # body: the endpoint's own steps of `Endpoint.handle` (its private steps:
        # `precheck` then `handle` would read the headers and precheck twice).
        received = received_headers(scope["headers"])
        if self.endpoint.allowed_hosts is None and _loopback(scope.get("server")):
            if not allowed_host(received.get("host"), LOOPBACK_HOSTS):
                return await _send_whole(send, host_refusal())
        endpoint = self.endpoint
        early = endpoint._cors(received, endpoint._precheck(method, path, received))
        if early is not None:
            return await _send_whole(send, early)
        body = b""
        if method == "POST":
            read = await self._body(receive)
            if read is None:
                return None  # the client left
            if isinstance(read, Response):
                return await _send_whole(send, read)
            body = read
        response = await endpoint._prechecked_async(method, received, body)
        endpoint._cors(received, response)  # adds the CORS headers, in place
        if response.stream is None:
            return await _send_whole(send, response)
        return await self._drain(response, response.stream, receive, send)

    async def _body(self, receive: Receive) -> bytes | Response | None:
        """The body, its refusal once it is too long, or None (the client left)."""
        limit = self.endpoint.max_body
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return refusal(413, f"Payload Too Large: at most {limit:,} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _drain(
        self, response: Response, stream: Stream, receive: Receive, send: Send
    ) -> None:
        ready = asyncio.Event()
        stream.on_ready = ready.set
        left = asyncio.ensure_future(_disconnect(receive))
        try:
            await send(_start(response))
            while True:
                ready.clear()
                chunk = stream.take()
                if chunk:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                if stream.done:
                    break
                if ready.is_set():
                    continue  # more came while that was sent
                woken = asyncio.ensure_future(ready.wait())
                finished, _ = await asyncio.wait(
                    {woken, left}, timeout=self.keepalive, return_when=asyncio.FIRST_COMPLETED
                )
                woken.cancel()
                if left in finished:
                    stream.abandon()
                    return
                if not finished and stream.media == "text/event-stream":
                    await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the connection broke under a send
            stream.abandon()
        finally:
            stream.on_ready = None
            left.cancel()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self.relay is not None:
                    await self.relay.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.relay is not None:
                    await self.relay.aclose()
                self.endpoint.close()
                if (
                    self.endpoint.tasks is not None
                ):  # its work stops; the store says so once the leases pass
                    await self.endpoint.tasks.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


@functools.lru_cache(maxsize=16)
def _loopback_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _loopback(server: object) -> bool:
    """Whether the server socket a request arrived on is a loopback address."""
    return isinstance(server, (tuple, list)) and bool(server) and _loopback_address(str(server[0]))


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _start(response: Response) -> Message:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers]
    return {"type": "http.response.start", "status": response.status, "headers": headers}


async def _send_whole(send: Send, response: Response) -> None:
    start = _start(response)
    start["headers"].append((b"content-length", str(len(response.body)).encode()))
    await send(start)
    await send({"type": "http.response.body", "body": response.body, "more_body": False})
