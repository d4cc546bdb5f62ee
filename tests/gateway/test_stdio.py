"""`mcp_schema.gateway.monitor.stdio.StdioGatewayApp` under uvicorn in front of
``examples/server.py`` over stdio: the official Python SDK client (``mcp``
2.3.0) in auto mode (2026-07-28: one shared child) and in the handshake era
(a child per session), with and without callbacks; hand-made clients that both use id 1 at once; a
session ended by DELETE, or dropped past ``max_sessions``; a child that
dies before it answers; a wrong answer, reported (monitor) or refused
(enforce)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
from mcp_schema.proxy import ReportLog
from tests.examples.test_sdk_client import elicit, sample, text
from tests.gateway.test_gateway import HEADERS, META, reported, serving, use

EXAMPLE = [sys.executable, str(Path(__file__).resolve().parents[2] / "examples" / "server.py")]
TESTED = [sys.executable, str(Path(__file__).with_name("stdio_server.py"))]
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


@pytest.fixture(scope="module")
def front() -> Iterator[tuple[str, ReportLog, StdioGatewayApp]]:
    log = ReportLog()
    app = StdioGatewayApp(EXAMPLE, reports=log, max_sessions=2)
    with serving(app) as url:
        yield url, log, app


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_sdk_client_is_served_in_both_eras_and_nothing_reported(
    mode: str, version: str
) -> None:
    log = ReportLog()
    with serving(StdioGatewayApp(EXAMPLE, reports=log)) as url:
        seen = anyio.run(use, url, mode)
    assert seen == {
        "version": version,
        "tools": ["echo", "divide", "count", "ask", "think", "toggle"],
        "echo": "hi",
        "progress": [1.0, 2.0, 3.0],
        "ask": True,
        "read": '{"debug": false}',
    }
    assert reported(log) == []


def counting(rid: int, token: int) -> dict[str, Any]:
    meta = {**META, "progressToken": token}
    params = {"name": "count", "arguments": {}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def test_two_clients_using_id_1_at_once_each_get_their_own_answers(
    front: tuple[str, ReportLog, StdioGatewayApp],
) -> None:
    url = front[0]
    headers = {**HEADERS, "mcp-name": "count"}

    async def both() -> list[httpx.Response]:
        answers: list[httpx.Response] = []
        async with httpx.AsyncClient(timeout=20) as client:

            async def one(token: int) -> None:
                body = json.dumps(counting(1, token))
                answers.append(await client.post(url, content=body, headers=headers))

            async with anyio.create_task_group() as group:
                group.start_soon(one, 1)
                group.start_soon(one, 1)
        return answers

    answers = anyio.run(both)
    for answer in answers:
        got = events(answer.text)
        assert [g["params"]["progressToken"] for g in got[:3]] == [1, 1, 1]
        assert [g["params"]["progress"] for g in got[:3]] == [1, 2, 3]
        assert got[3]["id"] == 1 and got[3]["result"]["content"][0]["text"] == "1 2 3"
        assert len(got) == 4


def initialize(url: str) -> str:
    params = {"protocolVersion": "2025-06-18", "capabilities": {}}
    params["clientInfo"] = {"name": "hand", "version": "1"}
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    answer = httpx.post(url, content=json.dumps(body), headers=headers, timeout=20)
    assert answer.status_code == 200 and answer.json()["result"]["protocolVersion"] == "2025-06-18"
    return answer.headers["mcp-session-id"]


def listed(url: str, session: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
    }
    return httpx.post(url, content=json.dumps(body), headers=headers, timeout=20).status_code


def test_a_session_has_a_child_of_its_own_ended_by_delete(
    front: tuple[str, ReportLog, StdioGatewayApp],
) -> None:
    url, _, app = front
    session = initialize(url)
    child = app.sessions[session].child
    assert child.alive and listed(url, session) == 200
    assert httpx.delete(url, headers={"mcp-session-id": session}).status_code == 200
    assert not child.alive and session not in app.sessions
    assert listed(url, session) == 404


def test_past_max_sessions_the_least_recently_used_idle_session_is_dropped(
    front: tuple[str, ReportLog, StdioGatewayApp],
) -> None:
    url, _, app = front
    first, second = initialize(url), initialize(url)
    assert listed(url, first) == 200  # first is now the more recent
    third = initialize(url)  # max_sessions=2: second goes
    assert listed(url, second) == 404
    assert listed(url, first) == listed(url, third) == 200
    assert len(app.sessions) == 2


def test_a_child_that_dies_fails_its_request_with_502_and_a_report() -> None:
    log = ReportLog()
    call: dict[str, Any] = {"jsonrpc": "2.0", "id": 9, "method": "tools/call"}
    call["params"] = {"name": "die", "arguments": {}, "_meta": META}
    with serving(StdioGatewayApp(TESTED, reports=log)) as url:
        answer = httpx.post(url, content=json.dumps(call), headers={**HEADERS, "mcp-name": "die"})
        assert answer.status_code == 502
        assert answer.json()["id"] == 9 and answer.json()["error"]["code"] == -32603
        echo = {**call, "params": {**call["params"], "name": "echo", "arguments": {"text": "hi"}}}
        again = httpx.post(url, content=json.dumps(echo), headers=HEADERS, timeout=20)
        assert again.json()["result"]["content"][0]["text"] == "hi"  # a fresh child
    assert [r["code"] for r in reported(log)] == [-32603]


@pytest.mark.parametrize("enforce", [False, True])
def test_a_wrong_answer_is_reported_or_refused(enforce: bool) -> None:
    log = ReportLog()
    call: dict[str, Any] = {"jsonrpc": "2.0", "id": 4, "method": "tools/call"}
    call["params"] = {"name": "wrong", "arguments": {}, "_meta": META}
    with serving(StdioGatewayApp(TESTED, reports=log, enforce=enforce)) as url:
        answer = httpx.post(url, content=json.dumps(call), headers={**HEADERS, "mcp-name": "wrong"})
    if enforce:
        assert answer.status_code == 502 and answer.json()["error"]["code"] == -32603
    else:
        assert answer.status_code == 200 and answer.json()["result"] == {"content": "oops"}
    [report] = reported(log)
    assert report["direction"] == "server->client" and report["id"] is None


async def asked(url: str, mode: str) -> tuple[list[object], list[object]]:
    logged: list[object] = []

    async def on_log(params: Any) -> None:
        logged.append(params.data)

    extra: dict[str, Any] = {"log_level": "info"} if mode == "auto" else {}
    with anyio.fail_after(30):
        async with Client(
            url,
            mode=mode,
            read_timeout_seconds=10,
            cache=None,
            elicitation_callback=elicit,
            sampling_callback=sample,
            logging_callback=on_log,
            **extra,
        ) as c:
            if mode == "legacy":
                await c.set_logging_level("info")
            said = [text((await c.call_tool(t, {})).content[0]) for t in ("ask", "think", "count")]
    return said, logged


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_client_with_callbacks_is_asked_and_logged_to_in_both_eras(
    front: tuple[str, ReportLog, StdioGatewayApp], mode: str
) -> None:
    # legacy: the server's requests on the call's event stream, answered by POSTs;
    # auto: input-required rounds, and the one request asking for logs gets them.
    assert anyio.run(asked, front[0], mode) == (
        ["you said yes", "you said maybe", "1 2 3"],
        ["counted to 3"],
    )
