"""`mcp_schema.gateway.monitor.carried`: which of an upstream answer's fields
reach the client."""

from __future__ import annotations

import pytest

from mcp_schema.gateway.monitor.carried import answered

UPSTREAM = [
    (b"content-type", b"application/json"),
    (b"date", b"Thu, 03 Dec 2026 12:00:00 GMT"),
    (b"server", b"uvicorn"),
    (b"mcp-session-id", b"abc"),
    (b"connection", b"keep-alive"),
]


@pytest.mark.parametrize("origin", [None, "http://localhost:3000"])
def test_an_answer_goes_on_without_the_upstreams_date_and_server(origin: str | None) -> None:
    # The server the gateway runs in writes its own: forwarded too, the client would get two.
    names = [name for name, _ in answered(UPSTREAM, (), origin)]
    assert b"date" not in names and b"server" not in names
    assert names[:2] == [b"content-type", b"mcp-session-id"]
    assert (b"access-control-allow-origin" in names) is (origin is not None)


def test_an_answer_goes_on_without_what_the_caller_drops_too() -> None:
    names = [name for name, _ in answered(UPSTREAM, (b"content-length", b"mcp-session-id"), None)]
    assert names == [b"content-type"]
