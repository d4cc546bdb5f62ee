"""The official Python SDK client (``mcp``, the ``peers`` extra) drives
``examples/server.py`` in its legacy (``initialize``) and auto (2026-07-28)
modes, directly and through ``examples/proxy.py``, which must report nothing."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SERVER = [str(EXAMPLES / "server.py")]
PROXIED = [str(EXAMPLES / "proxy.py"), "--", sys.executable, *SERVER]


def text(block: object) -> object:
    """The text of a content block or resource contents (None for other kinds)."""
    return getattr(block, "text", None)


async def elicit(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"text": "yes"})


async def session(mode: str, args: list[str], errlog: Any) -> dict[str, Any]:
    reported: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    transport = stdio_client(StdioServerParameters(command=sys.executable, args=args), errlog)
    seen: dict[str, Any] = {}
    async with Client(
        transport, mode=mode, elicitation_callback=elicit, read_timeout_seconds=20, cache=None
    ) as c:
        seen["version"] = c.protocol_version
        seen["tools"] = [t.name for t in (await c.list_tools()).tools]
        echo = await c.call_tool("echo", {"text": "hi"})
        seen["echo"] = (text(echo.content[0]), echo.structured_content)
        seen["divide"] = (await c.call_tool("divide", {"a": 1, "b": 0})).is_error
        await c.call_tool("count", {}, progress_callback=on_progress)
        seen["progress"] = reported
        seen["ask"] = text((await c.call_tool("ask", {})).content[0])
        seen["read"] = text((await c.read_resource("config://app")).contents[0])
        seen["prompt"] = text((await c.get_prompt("review", {"code": "x"})).messages[0].content)
    return seen


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
@pytest.mark.parametrize("route", ["direct", "proxy"])
def test_official_client_drives_the_example_server(mode: str, version: str, route: str) -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        seen = anyio.run(session, mode, SERVER if route == "direct" else PROXIED, errlog)
        errlog.seek(0)
        reports = errlog.read()
    assert reports == ""
    assert seen == {
        "version": version,
        "tools": ["echo", "divide", "count", "ask"],
        "echo": ("hi", {"text": "hi"}),
        "divide": True,
        "progress": [1.0, 2.0, 3.0],
        "ask": "you said yes",
        "read": '{"debug": false}',
        "prompt": "Hi",
    }


def test_the_proxy_reports_what_it_cannot_decode_and_passes_it_on() -> None:
    echo = [sys.executable, "-c", "import sys\nfor line in sys.stdin: print(line, end='')"]
    frames = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n{"jsonrpc": "2.0", "id": 2}\n'
    run = subprocess.run(
        [sys.executable, PROXIED[0], "--", *echo], input=frames, capture_output=True, timeout=30
    )
    assert run.stdout == frames
    reason = (
        "-32600 Invalid Request: neither a request, a notification nor a response"
        ' (no "method", "result" or "error")'
    )
    assert run.stderr.decode().splitlines() == [
        f"proxy client->server: {reason}",
        f"proxy server->client: {reason}",
    ]
