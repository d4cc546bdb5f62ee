"""`mcp_schema.gateway.http_bridge.HttpBridge` under uvicorn: the official
Python SDK client (``mcp`` 2.3.0) in 2026-07-28 mode through the bridge to
``examples/http_server.py`` serving only 2025-06-18 over Streamable HTTP:
every tool, ask and think included, with and without callbacks; an
upstream that serves 2026-07-28 itself needs no bridge (it says so)."""

from __future__ import annotations

import asyncio
import runpy
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mcp_schema.errors import McpError
from mcp_schema.gateway.http_bridge import HttpBridge
from mcp_schema.proxy import ReportLog
from tests.gateway.test_gateway import reported, serving
from tests.gateway.test_stdio_bridge import expected, session

HTTP_SERVER = Path(__file__).resolve().parents[2] / "examples" / "http_server.py"
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


@pytest.fixture(scope="module")
def handshake_only() -> Iterator[str]:
    application = runpy.run_path(str(HTTP_SERVER))["application"]
    with serving(application(None, versions="2025-06-18")) as url:
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
    application = runpy.run_path(str(HTTP_SERVER))["application"]
    with serving(application(None)) as url:

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
