"""`mcp_schema.gateway.bridge.links.StdioBridge` under uvicorn: the official
Python SDK client (``mcp`` 2.3.0) in 2026-07-28 mode through the bridge to
``examples/server.py`` serving only 2025-06-18 over stdio: every tool (ask
and think included, with and without callbacks), resources and prompts, a
listen hearing the tools list change, several clients at once; a retry
whose call was answered already, refused (a call is never replayed)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import jiter
import pytest
from mcp import Client

from mcp_schema.gateway.bridge.links import StdioBridge
from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
from mcp_schema.proxy import ReportLog
from mcp_schema.session import Frame, ServerSession
from tests.examples.test_sdk_client import elicit, sample, text
from tests.gateway.test_gateway import HEADERS, reported, serving

EXAMPLE = [sys.executable, str(Path(__file__).resolve().parents[2] / "examples" / "server.py")]
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


@pytest.fixture(scope="module")
def bridged() -> Iterator[tuple[str, ReportLog, StdioGatewayApp]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_VERSIONS", "2025-06-18")  # the children inherit it
        log = ReportLog()
        app = StdioGatewayApp(EXAMPLE, reports=log, bridge=StdioBridge)
        with serving(app) as url:
            yield url, log, app


async def session(url: str, callbacks: bool) -> dict[str, Any]:
    reported_progress: list[float] = []
    logged: list[object] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported_progress.append(progress)

    async def on_log(params: Any) -> None:
        logged.append(params.data)

    extra: dict[str, Any] = {}
    if callbacks:
        extra = {"elicitation_callback": elicit, "sampling_callback": sample, "log_level": "info"}
    seen: dict[str, Any] = {}
    with anyio.fail_after(30):
        async with Client(
            url,
            mode="2026-07-28",
            read_timeout_seconds=10,
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
            seen["progress"], seen["logs"] = reported_progress, logged
            for tool in ("ask", "think"):
                answer = await c.call_tool(tool, {})
                seen[tool] = (text(answer.content[0]), answer.is_error)
            seen["resources"] = [r.uri for r in (await c.list_resources()).resources]
            seen["read"] = text((await c.read_resource("config://app")).contents[0])
            seen["prompts"] = [p.name for p in (await c.list_prompts()).prompts]
            seen["prompt"] = text((await c.get_prompt("review", {"code": "x"})).messages[0].content)
    return seen


def expected(callbacks: bool) -> dict[str, Any]:
    cannot = ("this client cannot be asked", True)
    return {
        "version": "2026-07-28",
        "tools": ["echo", "divide", "count", "ask", "think", "toggle"],
        "echo": ("hi", {"text": "hi"}),
        "divide": True,
        "progress": [1.0, 2.0, 3.0],
        "logs": ["counted to 3"] if callbacks else [],
        "ask": ("you said yes", False) if callbacks else cannot,
        "think": ("you said maybe", False) if callbacks else cannot,
        "resources": ["config://app"],
        "read": '{"debug": false}',
        "prompts": ["review"],
        "prompt": "Hi",
    }


@pytest.mark.parametrize("callbacks", [True, False])
def test_the_sdk_client_in_2026_07_28_is_served_by_a_2025_06_18_server(
    bridged: tuple[str, ReportLog, StdioGatewayApp], callbacks: bool
) -> None:
    url, _, app = bridged
    assert anyio.run(session, url, callbacks) == expected(callbacks)
    bridge = app.bridge
    assert isinstance(bridge, StdioBridge) and bridge.core is not None
    assert bridge.core.version == "2025-06-18"  # carried across, not served by the child itself


def test_several_clients_at_once_each_get_their_own_answers(
    bridged: tuple[str, ReportLog, StdioGatewayApp],
) -> None:
    url = bridged[0]
    seen: dict[int, dict[str, Any]] = {}

    async def all_at_once() -> None:
        async def one(n: int) -> None:
            seen[n] = await session(url, n % 2 == 0)

        async with anyio.create_task_group() as group:
            for n in range(4):
                group.start_soon(one, n)

    anyio.run(all_at_once)
    assert seen == {n: expected(n % 2 == 0) for n in range(4)}


async def listening(url: str) -> list[Any]:
    seen: list[Any] = []
    with anyio.fail_after(30):
        async with Client(url, mode="2026-07-28", read_timeout_seconds=10, cache=None) as c:
            async with c.listen(tools_list_changed=True, prompts_list_changed=True) as tools:
                seen.append(tools.honored.model_dump(by_alias=True, exclude_none=True))
                for _ in range(2):  # on, then off again
                    seen.append(text((await c.call_tool("toggle", {})).content[0]))
                    with anyio.fail_after(10):
                        seen.append(type(await tools.__anext__()).__name__)
                    listed = [t.name for t in (await c.list_tools()).tools]
                    seen.append(listed[5:])
                    if "extra" in listed:
                        seen.append(text((await c.call_tool("extra", {})).content[0]))
    return seen


def test_a_listen_hears_the_tools_list_change_upstream(
    bridged: tuple[str, ReportLog, StdioGatewayApp],
) -> None:
    assert anyio.run(listening, bridged[0]) == [
        {"toolsListChanged": True},  # the server declares no prompts.listChanged
        "extra added",
        "ToolsListChanged",
        ["toggle", "extra"],
        "extra is here",
        "extra removed",
        "ToolsListChanged",
        ["toggle"],
    ]


def test_a_retry_is_answered_once_and_never_replayed(
    bridged: tuple[str, ReportLog, StdioGatewayApp],
) -> None:
    url = bridged[0]
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    call: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "ask", "arguments": {}, "_meta": meta}
    headers = {**HEADERS, "mcp-name": "ask"}
    first = httpx.post(url, content=json.dumps(call), headers=headers, timeout=20).json()
    assert first["result"]["resultType"] == "input_required"
    answers = {"input": {"action": "accept", "content": {"text": "hey"}}}
    call["params"] |= {"requestState": first["result"]["requestState"], "inputResponses": answers}
    retry = httpx.post(url, content=json.dumps(call), headers=headers, timeout=20).json()
    assert retry["result"]["content"][0]["text"] == "you said hey"
    again = httpx.post(url, content=json.dumps(call), headers=headers, timeout=20).json()
    assert again["error"]["code"] == -32602 and "no longer pending" in again["error"]["message"]


def test_nothing_was_reported_on_good_traffic(
    bridged: tuple[str, ReportLog, StdioGatewayApp],
) -> None:
    url = bridged[0]
    anyio.run(session, url, True)
    assert reported(bridged[1]) == []


def test_a_round_the_client_leaves_unanswered_holds_up_no_other_call(
    bridged: tuple[str, ReportLog, StdioGatewayApp],
) -> None:
    # The pending call keeps its upstream session's turn (a server's request
    # there belongs to it); the next call of the same capabilities takes another.
    url, _, app = bridged
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "roots": {}},
    }
    call: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "ask", "arguments": {}, "_meta": meta}
    headers = {**HEADERS, "mcp-name": "ask"}
    first = httpx.post(url, content=json.dumps(call), headers=headers, timeout=20).json()
    assert first["result"]["resultType"] == "input_required"  # and never answered
    call["params"] |= {"name": "echo", "arguments": {"text": "next"}}
    headers["mcp-name"] = "echo"
    echo = httpx.post(url, content=json.dumps(call), headers=headers, timeout=10).json()
    assert echo["result"]["content"][0]["text"] == "next"
    bridge = app.bridge
    assert bridge is not None
    [key] = [k for k in bridge.links if "roots" in k]
    assert len(bridge.links[key]) == 2  # the pending call's session, and the echo's


def test_a_server_that_speaks_2026_07_28_itself_is_not_bridged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MCP_VERSIONS", raising=False)
    app = StdioGatewayApp(EXAMPLE, bridge=StdioBridge)
    with serving(app) as url:
        assert anyio.run(session, url, True) == expected(True)
        assert app.bridge is not None and app.bridge.core is None  # the shared child served it
        assert app.shared is not None and app.shared.child.alive


def test_the_bridge_never_parses_what_its_own_front_sessions_wrote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each frame leaves the session with its envelope (`Frame`): the driver
    # answers by it, and reads none of the bytes again. (Told apart by
    # identity: the child may write the very same bytes, which are read.)
    written: list[bytes] = []
    parsed: list[Any] = []  # each kept: no id is reused meanwhile
    frames_to_send = ServerSession.frames_to_send

    def recorded(session: ServerSession) -> list[Frame]:
        frames = frames_to_send(session)
        written.extend(frame.data for frame in frames)
        return frames

    from_json = jiter.from_json

    def parsing(data: bytes, *args: Any, **kwargs: Any) -> Any:
        parsed.append(data)
        return from_json(data, *args, **kwargs)

    monkeypatch.setattr(ServerSession, "frames_to_send", recorded)
    monkeypatch.setattr(jiter, "from_json", parsing)
    monkeypatch.setenv("MCP_VERSIONS", "2025-06-18")  # the children inherit it
    with serving(StdioGatewayApp(EXAMPLE, bridge=StdioBridge)) as url:
        seen = anyio.run(session, url, True)
    assert seen == expected(True)
    assert written and parsed  # both were watched
    assert not {id(data) for data in written} & {id(data) for data in parsed}
