"""The bare forwarder ``bench.gateway`` measures the gateway against: an
ASGI app that hands each request to the upstream (``BENCH_UPSTREAM``, its
MCP endpoint) with httpx and relays the answer as it comes, validating
nothing: the gateway's stack (uvicorn + httpx) with none of its work
(``python -m uvicorn bench.gateway_reference:app``)."""

from __future__ import annotations

import os
import socket
from typing import Any

import httpx

UPSTREAM = os.environ.get("BENCH_UPSTREAM", "http://127.0.0.1:3001/mcp")
_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"host", b"content-length"}
client = httpx.AsyncClient(  # as the gateway's: TCP_NODELAY, or each body waits for an ACK
    timeout=httpx.Timeout(30.0, read=None),
    transport=httpx.AsyncHTTPTransport(
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    ),
)


async def app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    headers = [(k, v) for k, v in scope["headers"] if k not in _HOP]
    request = client.build_request(scope["method"], UPSTREAM, headers=headers, content=body)
    response = await client.send(request, stream=True)
    try:
        down = [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in _HOP]
        await send({"type": "http.response.start", "status": response.status_code, "headers": down})
        async for chunk in response.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        await response.aclose()
