"""What the era bridges carry and refuse, counted
(``mcp_schema.bridge.messages``), in both directions: by the side a message
goes toward, the outcome and the era of the bridge's clients; and the tools
the upstream listed named on the bridge's spans."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.server import Server
from tests.gateway.test_gateway import serving
from tests.gateway.test_handshake_front import Hand
from tests.gateway.test_http_bridge import probed
from tests.telemetry.conftest import Recorded

BRIDGED = "mcp_schema.bridge.messages"
STATELESS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
GATEWAY = "http://127.0.0.1/mcp"
"""The gateway, in process (the upstream is over TCP: the bridges call it so)."""
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def upstream(versions: str) -> Any:
    server = Server("upstream")

    @server.tool()
    def echo(text: str) -> str:
        """``text`` back."""
        return text

    return server.asgi(env={}, versions=versions, telemetry=False)


def counts(recorded: Recorded) -> dict[tuple[str, ...], int]:
    """The bridge's counts, by (direction, outcome, era[, code])."""
    found: dict[tuple[str, ...], int] = {}
    for point in recorded.points(BRIDGED):
        attributes = dict(point.attributes)
        key = tuple(
            str(attributes[k])
            for k in (
                "mcp_schema.direction",
                "mcp_schema.outcome",
                "mcp_schema.era",
                "rpc.response.status_code",
            )
            if k in attributes
        )
        found[key] = point.value
    return found


def test_the_handshake_front_counts_what_it_carries_and_refuses(recorded: Recorded) -> None:
    with serving(upstream("2026-07-28")) as url:
        app = GatewayApp(url, served=probed(url), telemetry=recorded.fresh())
        front = app.front
        assert front is not None

        async def run() -> None:
            transport = httpx.ASGITransport(app, client=("127.0.0.1", 5555))
            try:
                async with httpx.AsyncClient(transport=transport, timeout=10) as http:
                    hand = Hand(http, GATEWAY)
                    await hand.initialize({})
                    call = hand.message("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
                    answer = await http.post(GATEWAY, headers=hand.headers(), json=call)
                    assert '"hi"' in answer.text, answer.text
                    again = hand.message(
                        "tools/call", {"name": "echo", "arguments": {"text": "hi"}}
                    )
                    await http.post(GATEWAY, headers=hand.headers(), json=again)
                    # 2026-07-28 has no roots/list_changed from clients: refused, reported.
                    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
                    await http.post(GATEWAY, headers=hand.headers(), json=changed)
            finally:
                front.close()
                await app.aclose()

        asyncio.run(run())
    found = counts(recorded)
    # Up: server/discover, the bridge's tools/list before the first call, both calls.
    assert found[("received", "carried", "handshake")] == 4, found
    assert found[("sent", "carried", "handshake")] == 2, found
    assert found[("received", "refused", "handshake", "-32601")] == 1, found
    assert not any(key[2] != "handshake" for key in found), found
    # The tools the upstream listed (to the bridge, after the first call's
    # span began, before it went upstream) name that call too, as it ends.
    calls = [s.name for s in recorded.spans() if s.name.startswith("tools/call")]
    assert calls == ["tools/call echo", "tools/call echo"], calls


def test_the_stateless_bridge_counts_what_it_carries_and_refuses(recorded: Recorded) -> None:
    with serving(upstream("2025-06-18")) as url:
        app = GatewayApp(url, served=probed(url), telemetry=recorded.fresh())
        assert app.back is not None
        headers = {
            **HEADERS,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "echo",
        }
        params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": STATELESS}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}

        async def run() -> None:
            transport = httpx.ASGITransport(app, client=("127.0.0.1", 5555))
            try:
                async with httpx.AsyncClient(transport=transport, timeout=10) as http:
                    answer = await http.post(GATEWAY, json=call, headers=headers)
                    assert '"hi"' in answer.text, answer.text
                    # A tools/call naming no tool: the front session refuses it.
                    unnamed = {**call, "id": 2, "params": {"_meta": STATELESS}}
                    refused = await http.post(GATEWAY, json=unnamed, headers=headers)
                    assert refused.status_code >= 400, refused.text
            finally:
                await app.aclose()
                assert app.back is not None
                await app.back.aclose()

        asyncio.run(run())
    found = counts(recorded)
    assert found[("received", "carried", "stateless")] == 1, found
    assert found[("sent", "carried", "stateless")] == 1, found
    refusals = {k: v for k, v in found.items() if k[:3] == ("received", "refused", "stateless")}
    assert sum(refusals.values()) == 1, found
    # Nothing listed the tools here: the bridge's front span cannot name it.
    assert "tools/call _OTHER" in [s.name for s in recorded.spans()]
