"""`mcp_schema.http.proxies.UVICORN_OPTIONS`: under the uvicorn the package
runs, a loopback client's ``X-Forwarded-For`` does not change the address an
app sees (only `TrustedProxies` decides whose forwarding headers count)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

from mcp_schema.http.proxies import UVICORN_OPTIONS

FORWARDED = b"203.0.113.9"


class _Seen:
    """An ASGI app answering 204 that keeps each request's ``scope["client"]``."""

    def __init__(self) -> None:
        self.clients: list[Any] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.clients.append(scope["client"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


@contextmanager
def _served(app: _Seen, options: Mapping[str, Any]) -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _client_seen(options: Mapping[str, Any]) -> str:
    app = _Seen()
    with _served(app, options) as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: " + FORWARDED + b"\r\n"
            b"Connection: close\r\n\r\n"
        )
        while conn.recv(4096):
            pass
    (client,) = app.clients
    return str(client[0])


@pytest.mark.parametrize(
    ("options", "seen"),
    [
        # uvicorn's default: its middleware trusts 127.0.0.1 and takes the header's word.
        ({}, FORWARDED.decode()),
        (UVICORN_OPTIONS, "127.0.0.1"),
    ],
    ids=["uvicorn's default", "the package's options"],
)
def test_a_loopback_clients_forwarded_for_names_no_address_under_the_packages_options(
    options: Mapping[str, Any], seen: str
) -> None:
    assert _client_seen(options) == seen
