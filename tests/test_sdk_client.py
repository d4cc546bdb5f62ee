"""The official Python SDK client (``mcp``, the ``peers`` extra) drives
``examples/server.py`` in its legacy (``initialize``) and auto (2026-07-28)
modes, directly and through ``python -m mcp_schema proxy``, which must report
nothing, until a bad line is slipped in."""

from __future__ import annotations

import json
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
PROXIED = ["-m", "mcp_schema", "proxy", "--", sys.executable, *SERVER]
# The server, after one line no client should get (a log level the schema lacks).
BAD_LINE = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":1}}'
SPOILED = [
    "-m",
    "mcp_schema",
    "proxy",
    "--",
    sys.executable,
    "-c",
    f"import os, runpy; os.write(1, {BAD_LINE!r} + b'\\n'); "
    f"runpy.run_path({SERVER[0]!r}, run_name='__main__')",
]


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


def test_the_proxy_reports_a_bad_line_the_server_slips_in() -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        seen = anyio.run(session, "legacy", SPOILED, errlog)
        errlog.seek(0)
        reports = [json.loads(line) for line in errlog.read().splitlines()]
    assert seen["echo"] == ("hi", {"text": "hi"})  # forwarded, and the session went on
    assert [(r["direction"], r["line"], r["code"], r["frame"]) for r in reports] == [
        ("server->client", 1, -32602, BAD_LINE.decode())
    ]
    assert reports[0]["message"].startswith("Invalid params: $.params.level: Input should be")
