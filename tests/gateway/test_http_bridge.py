"""`mcp_schema.gateway.bridge.links.HttpBridge` under uvicorn: the official
Python SDK client (``mcp`` 2.3.0) in 2026-07-28 mode through the bridge to
``examples/http_server.py`` serving only 2025-06-18 over Streamable HTTP:
every tool, ask and think included, with and without callbacks; an
upstream that serves 2026-07-28 itself needs no bridge (it says so). And
`GatewayApp` (``gateway --bridge --upstream URL``) sending a 2026-07-28
client there, a handshake-era one on the forwarding path. Every request is
prechecked (a rebound ``Host``, a foreign ``Origin``, a slow body) before
anything goes upstream."""

from __future__ import annotations

import asyncio
import contextlib
import json
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from mcp_schema.errors import McpError
from mcp_schema.gateway.bridge.links import HttpBridge
from mcp_schema.gateway.findings import UPSTREAM_FAILED
from mcp_schema.gateway.http_upstream import upstream_client
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.probe import Served, probe_upstream
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.http.pool import HttpClient
from mcp_schema.proxy import ReportLog
from mcp_schema.session import Event, RequestReceived, ServerSession
from tests.gateway.test_gateway import HEADERS, META, reported, serving
from tests.gateway.test_stdio_bridge import expected, session
from tests.http.test_adapter import chunks
from tests.http.upstream import RecordingClient

HTTP_SERVER = Path(__file__).resolve().parents[2] / "examples" / "http_server.py"
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


@pytest.fixture(scope="module")
def handshake_only() -> Iterator[str]:
    server = runpy.run_path(str(HTTP_SERVER))["server"]
    with serving(server.asgi(env={}, versions="2025-06-18")) as url:
        yield url


@pytest.mark.parametrize("callbacks", [True, False])
def test_the_sdk_client_in_2026_07_28_is_served_by_a_2025_06_18_http_server(
    handshake_only: str, callbacks: bool
) -> None:
    log = ReportLog()
    bridge = HttpBridge(handshake_only, reports=log)
    with serving(bridge) as url:
        seen = anyio.run(session, url, callbacks)
    want = expected(callbacks)
    want["tools"] = [*want["tools"], "long_count"]  # the HTTP example has one more
    assert seen == want
    assert bridge.core is not None and bridge.core.version == "2025-06-18"
    assert reported(log) == []


def test_a_server_that_speaks_2026_07_28_needs_no_bridge() -> None:
    server = runpy.run_path(str(HTTP_SERVER))["server"]
    with serving(server.asgi(env={})) as url:

        async def started() -> None:
            bridge = HttpBridge(url)
            try:
                await bridge.start()
            finally:
                await bridge.aclose()

        with pytest.raises(McpError, match="no bridge is needed"):
            asyncio.run(started())


def test_several_clients_at_once_over_http(handshake_only: str) -> None:
    seen: dict[int, dict[str, object]] = {}
    bridge = HttpBridge(handshake_only)

    async def all_at_once(url: str) -> None:
        async def one(n: int) -> None:
            seen[n] = await session(url, n % 2 == 0)

        async with anyio.create_task_group() as group:
            for n in range(4):
                group.start_soon(one, n)

    with serving(bridge) as url:
        anyio.run(all_at_once, url)
    for n, found in seen.items():
        want = expected(n % 2 == 0)
        want["tools"] = [*want["tools"], "long_count"]
        assert found == want
    assert len(seen) == 4


def probed(url: str) -> Served:
    """What ``gateway --bridge`` finds of ``url`` before it listens."""

    async def probing() -> Served:
        http = upstream_client()
        try:
            return await probe_upstream(url, http)
        finally:
            await http.aclose()

    return asyncio.run(probing())


def test_the_gateway_bridges_2026_07_28_clients_and_forwards_handshake_ones(
    handshake_only: str,
) -> None:
    served = probed(handshake_only)
    assert served.handshake and served.stateless == ()
    log = ReportLog()
    app = GatewayApp(handshake_only, reports=log, served=served)
    assert app.back is not None and app.front is None
    # The start-up probe initialized: the bridge speaks its version, probing nothing again.
    assert served.version == "2025-06-18" and app.back.core is not None
    with serving(app) as url:
        seen = anyio.run(session, url, True)  # 2026-07-28: through the bridge

        async def legacy() -> str | None:
            async with Client(url, mode="legacy", read_timeout_seconds=10, cache=None) as c:
                await c.list_tools()
                return c.protocol_version

        forwarded = anyio.run(legacy)  # the handshake era: forwarded as it is
    want = expected(True)
    want["tools"] = [*want["tools"], "long_count"]
    assert seen == want
    assert app.back.core is not None and app.back.core.version == "2025-06-18"
    assert forwarded == "2025-06-18"
    assert reported(log) == []


def test_the_bridges_clients_keep_no_cookie_of_any_upstream_answer() -> None:
    sent: list[bytes | None] = []

    async def cookie_setter(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        sent.append(dict(scope["headers"]).get(b"cookie"))
        headers = [(b"content-type", b"application/json"), (b"set-cookie", b"s=secret; Path=/")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    async def offered_twice(client: HttpClient, url: str) -> None:
        for _ in range(2):
            answer = await client.request("GET", url)
            assert answer.header("set-cookie") == "s=secret; Path=/"  # it was offered one
        await client.aclose()

    with serving(cookie_setter) as url:
        bridge = HttpBridge(url)  # the back bridge's client, and the app's (the front's)
        app = GatewayApp(url, served=Served(stateless=("2026-07-28",), handshake=False))
        asyncio.run(offered_twice(bridge.client, url))
        asyncio.run(offered_twice(app.client, url))
    assert sent == [None] * 4


def asked_upstream() -> tuple[RecordingClient, list[Any]]:
    """A client whose every request is recorded (and fails)."""
    client = RecordingClient()
    return client, client.requests


def status_answered(
    bridge: HttpBridge, method: str, headers: dict[bytes, bytes], receive: Any
) -> int:
    """The status ``bridge`` (on 127.0.0.1) answers one request with."""
    pairs = list({b"host": b"127.0.0.1", **headers}.items())
    scope = {"type": "http", "method": method, "path": "/mcp", "headers": pairs}
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(bridge({**scope, "server": ("127.0.0.1", 3000)}, receive, send))
    return int(sent[0]["status"])


@pytest.mark.parametrize(
    ("method", "extra", "status"),
    [
        ("POST", {b"host": b"evil.example"}, 421),
        ("POST", {b"origin": b"https://evil.example"}, 403),
        ("POST", {b"content-type": b"text/plain"}, 415),
        ("GET", {b"mcp-session-id": b"s"}, 405),
    ],
)
def test_the_bridge_prechecks_every_request_before_anything_goes_upstream(
    method: str, extra: dict[bytes, bytes], status: int
) -> None:
    client, requests = asked_upstream()
    bridge = HttpBridge("http://upstream.example/mcp", client=client)
    headers = {b"content-type": b"application/json", b"accept": b"*/*", **extra}
    receive = chunks(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    assert status_answered(bridge, method, headers, receive) == status and requests == []


def test_a_slow_body_is_408_before_anything_goes_upstream() -> None:
    client, requests = asked_upstream()
    bridge = HttpBridge("http://upstream.example/mcp", client=client, body_seconds=0.1)
    headers = {b"content-type": b"application/json"}
    assert status_answered(bridge, "POST", headers, chunks(b"{", hang=True)) == 408
    assert requests == []


def test_before_its_probe_the_bridge_answers_503_and_asks_nothing_upstream() -> None:
    client, requests = asked_upstream()
    bridge = HttpBridge("http://upstream.example/mcp", client=client)
    headers = {b"content-type": b"application/json"}
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    assert status_answered(bridge, "POST", headers, chunks(body)) == 503 and requests == []


def test_an_upstream_gone_after_the_probe_is_502_with_the_requests_id() -> None:
    server = runpy.run_path(str(HTTP_SERVER))["server"]
    call: dict[str, Any] = {"jsonrpc": "2.0", "id": 5, "method": "tools/call"}
    call["params"] = {"name": "echo", "arguments": {"text": "hi"}, "_meta": META}
    headers = {**HEADERS, "mcp-name": "echo"}
    log = ReportLog()
    with contextlib.ExitStack() as upstream_runs:
        upstream = upstream_runs.enter_context(serving(server.asgi(env={}, versions="2025-06-18")))
        with serving(HttpBridge(upstream, reports=log)) as url:
            first = httpx.post(url, content=json.dumps(call), headers=headers, timeout=20)
            assert first.status_code == 200 and first.json()["id"] == 5
            upstream_runs.close()  # the server stops; the bridge goes on
            call["id"] = 6
            gone = httpx.post(url, content=json.dumps(call), headers=headers, timeout=20)
    assert gone.status_code == 502, gone.text
    assert gone.json()["id"] == 6 and gone.json()["error"]["code"] == -32603
    assert gone.json()["error"]["message"] == UPSTREAM_FAILED  # not the upstream's address
    # The operator's report says why, naming the upstream the client is not told of.
    [finding] = [r for r in reported(log) if r["direction"] == "server->client"]
    assert finding["code"] == -32603 and "exchange with the upstream" in finding["message"]
    assert upstream.split("//")[1].split("/")[0] in finding["message"]


def _silent(session: ServerSession, event: Event) -> None:
    """A handshake-era server that lists one tool and never answers a call of it."""
    if isinstance(event, RequestReceived) and event.method == "tools/list":
        session.respond(event, {"tools": [{"name": "wait", "inputSchema": {"type": "object"}}]})


def test_an_upstream_silent_past_the_bound_is_504_with_the_requests_id() -> None:
    upstream = App(
        Endpoint(
            _silent,
            info={"name": "silent", "version": "1"},
            versions=["2025-06-18"],
            capabilities={"tools": {}},
            answer_seconds=20,
        )
    )
    call: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
    call["params"] = {"name": "wait", "arguments": {}, "_meta": META}
    with (
        serving(upstream) as upstream_url,
        serving(HttpBridge(upstream_url, answer_seconds=0.5)) as url,
    ):
        late = httpx.post(
            url, content=json.dumps(call), headers={**HEADERS, "mcp-name": "wait"}, timeout=20
        )
    assert late.status_code == 504, late.text
    error = late.json()["error"]
    assert late.json()["id"] == 7 and error["code"] == -32603
    assert error["message"] == "Gateway timeout: no answer within 0.5 s"
