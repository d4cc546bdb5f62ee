"""The official Python SDK client (``mcp`` 2.3.0, the ``peers`` group) drives
``examples/server.py`` over stdio: legacy mode offering each handshake-era
version, auto mode (2026-07-28), with and without elicitation and sampling
callbacks, directly and through ``python -m mcp_schema proxy`` (which must
report nothing until a bad line is slipped in); and ``examples/client.py``
drives a server built with the SDK. Each row is one client process session
running every check; the server must write nothing to stderr."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.client.session as sdk_session
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SERVER = [str(EXAMPLES / "server.py")]
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
ELICITING = ("2025-06-18", "2025-11-25", "2026-07-28")
"""The versions that have elicitation."""
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


async def sample(context: Any, params: Any) -> types.CreateMessageResult:
    reply = types.TextContent(type="text", text="maybe")
    return types.CreateMessageResult(role="assistant", content=reply, model="stub")


@contextmanager
def offering(version: str | None) -> Iterator[None]:
    """The SDK's legacy mode offers its newest handshake version; make it offer ``version``."""
    module = vars(sdk_session)  # what initialize() reads when it is called
    newest = module["LATEST_HANDSHAKE_VERSION"]
    module["LATEST_HANDSHAKE_VERSION"] = version or newest
    try:
        yield
    finally:
        module["LATEST_HANDSHAKE_VERSION"] = newest


async def session(mode: str, callbacks: bool, args: list[str], errlog: Any) -> dict[str, Any]:
    reported: list[float] = []
    logged: list[object] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    transport = stdio_client(StdioServerParameters(command=sys.executable, args=args), errlog)
    extra: dict[str, Any] = {}
    if callbacks:
        extra = {"elicitation_callback": elicit, "sampling_callback": sample}
        if mode == "auto":
            extra["log_level"] = "info"  # 2026-07-28: every request asks for logs
    seen: dict[str, Any] = {}
    async with Client(
        transport,
        mode=mode,
        read_timeout_seconds=20,
        cache=None,
        logging_callback=on_log,
        **extra,
    ) as c:
        seen["version"] = c.protocol_version
        seen["tools"] = [t.name for t in (await c.list_tools()).tools]
        echo = await c.call_tool("echo", {"text": "hi"})
        seen["echo"] = (text(echo.content[0]), echo.structured_content)
        seen["divide"] = (await c.call_tool("divide", {"a": 1, "b": 0})).is_error
        await c.call_tool("count", {}, progress_callback=on_progress)
        seen["progress"] = reported
        if mode == "legacy" and callbacks:  # the count above logged nothing: not asked yet
            await c.set_logging_level("info")
            await c.call_tool("count", {})
        seen["logs"] = logged
        for tool in ("ask", "think"):
            answer = await c.call_tool(tool, {})
            seen[tool] = (text(answer.content[0]), answer.is_error)
        seen["read"] = text((await c.read_resource("config://app")).contents[0])
        try:
            await c.read_resource("memo://x")
        except MCPError as err:  # not config://app: no such resource
            seen["unknown resource"] = err.error.code
        seen["prompt"] = text((await c.get_prompt("review", {"code": "x"})).messages[0].content)
    return seen


def expected(mode: str, version: str, callbacks: bool) -> dict[str, Any]:
    structured = version >= "2025-06-18"  # older versions cannot carry structuredContent
    cannot = ("this client cannot be asked", True)
    return {
        "version": version,
        "tools": ["echo", "divide", "count", "ask", "think", "toggle"],
        "echo": ("hi", {"text": "hi"} if structured else None),
        "divide": True,
        "progress": [1.0, 2.0, 3.0],
        "logs": ["counted to 3"] if callbacks else [],
        "ask": ("you said yes", False) if callbacks and version in ELICITING else cannot,
        "think": ("you said maybe", False) if callbacks else cannot,
        "read": '{"debug": false}',
        "unknown resource": -32602,
        "prompt": "Hi",
    }


MATRIX = [
    *(("legacy", v, c) for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25") for c in (False, True)),
    ("auto", "2026-07-28", False),
    ("auto", "2026-07-28", True),
]  # fmt: skip


def run(mode: str, version: str, callbacks: bool, args: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryFile("w+") as errlog, offering(version if mode == "legacy" else None):
        seen = anyio.run(session, mode, callbacks, args, errlog)
        errlog.seek(0)
        assert errlog.read() == ""
    return seen


@pytest.mark.parametrize(("mode", "version", "callbacks"), MATRIX)
def test_official_client_drives_the_example_server(
    mode: str, version: str, callbacks: bool
) -> None:
    assert run(mode, version, callbacks, SERVER) == expected(mode, version, callbacks)


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_official_client_through_the_proxy(mode: str, version: str) -> None:
    assert run(mode, version, True, PROXIED) == expected(mode, version, True)


PEER_SERVER = Path(__file__).resolve().parents[1] / "peers" / "py_server.py"


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_the_example_client_drives_an_official_sdk_server(mode: str, version: str) -> None:
    command = [sys.executable, str(EXAMPLES / "client.py"), mode, "--"]
    done = subprocess.run(
        [*command, sys.executable, str(PEER_SERVER)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    tools = "add_tool,connect_account,divide,echo,get_weather,rate_forecast,show_roots,slow_count,summarize,wait_forever"
    assert done.stdout.splitlines() == [
        f"version {version}",
        f"tools {tools}",
        "echo hi",
        "divide 0.25",
        "count counted to 3",
        "elicit Oslo: confidence=0.9 note='ok'",  # a form: an elicitation answered
        "sample model stub said: sunny",  # sampling answered
        "roots file:///tmp",  # roots answered
        'read {"theme": "dark", "retries": 3}',
        "prompt Please review this python code:",
        "progress 3",
    ]


def test_the_proxy_reports_a_bad_line_the_server_slips_in() -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        seen = anyio.run(session, "legacy", True, SPOILED, errlog)
        errlog.seek(0)
        reports = [json.loads(line) for line in errlog.read().splitlines()]
    assert seen["echo"] == ("hi", {"text": "hi"})  # forwarded, and the session went on
    assert [(r["direction"], r["line"], r["code"], r["frame"]) for r in reports] == [
        ("server->client", 1, -32602, BAD_LINE.decode())
    ]
    assert reports[0]["message"].startswith("Invalid params: $.params.level: Input should be")
