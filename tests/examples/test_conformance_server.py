"""The official Python SDK client (the ``peers`` extra) drives
``examples/conformance_server.py`` over Streamable HTTP on 127.0.0.1: content
kinds, notifications on the event stream, and the server's own sampling and
elicitation requests answered on a second POST. Hand-made requests for the
rest: the refusals, and a 2026-07-28 input round sealed by one process and
completed by another holding the same ``MCP_STATE_KEY``. ``make interop``
runs the official conformance suite against the same server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
SERVER = Path(__file__).resolve().parents[2] / "examples" / "conformance_server.py"


KEY = "the key of the conformance tests: at least 32 bytes"


@contextmanager
def started() -> Iterator[str]:
    """A fixture server of its own, sealing under `KEY`: its URL."""
    env = {**os.environ, "MCP_STATE_KEY": KEY}
    command = [sys.executable, str(SERVER), "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        yield server.stdout.readline().split()[-1]
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with started() as found:
        yield found


async def sample(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    said = getattr(params.messages[0].content, "text", None)
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"heard {said}"), model="m"
    )


async def elicit(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"username": "ann", "email": "a@b.c"})


async def session(url: str) -> dict[str, Any]:
    logs: list[object] = []
    reported: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    seen: dict[str, Any] = {}
    async with Client(
        url,
        mode="legacy",
        sampling_callback=sample,
        elicitation_callback=elicit,
        logging_callback=on_log,
        read_timeout_seconds=20,
        cache=None,
    ) as c:
        seen["tools"] = len((await c.list_tools()).tools)
        seen["image"] = (await c.call_tool("test_image_content", {})).content[0].type
        seen["error"] = (await c.call_tool("test_error_handling", {})).is_error
        await c.set_logging_level("info")  # the session sends logs once asked for
        await c.call_tool("test_tool_with_logging", {})
        await c.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        seen["logs"], seen["progress"] = logs, reported
        sampled = await c.call_tool("test_sampling", {"prompt": "hi"})
        seen["sampling"] = getattr(sampled.content[0], "text", None)
        elicited = await c.call_tool("test_elicitation", {"message": "who?"})
        seen["elicitation"] = getattr(elicited.content[0], "text", None)
        read = await c.read_resource("test://template/7/data")
        seen["template"] = getattr(read.contents[0], "text", None)
    return seen


def test_official_client_drives_the_conformance_server(url: str) -> None:
    seen = anyio.run(session, url)
    assert seen["tools"] == 26 + 7  # the fixtures of the suite, then those of its tasks scenarios
    assert seen["image"] == "image"
    assert seen["error"] is True
    assert seen["logs"] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert seen["progress"] == [0, 50, 100]
    assert seen["sampling"] == "LLM response: heard hi"
    assert "action=accept" in seen["elicitation"] and "ann" in seen["elicitation"]
    assert seen["template"] == '{"id":"7","templateTest":true,"data":"Data for ID: 7"}'


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example.com"}, 421),
        ({"Origin": "http://evil.example.com"}, 403),
        ({"Content-Type": "text/plain"}, 415),
        ({"Content-Length": "x"}, 400),
    ],
)
def test_foreign_or_malformed_posts_are_refused(
    url: str, headers: dict[str, str], status: int
) -> None:
    request = urllib.request.Request(url, data=b"{}", method="POST", headers=headers)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == status


def test_undecodable_body_is_answered_with_its_error(url: str) -> None:
    body = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}'
    request = urllib.request.Request(url, data=body, method="POST", headers=JSON)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
    assert b'"id":5' in refused.value.read()


def post(url: str, body: bytes, headers: dict[str, str]) -> Any:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    return urllib.request.urlopen(request, timeout=10)


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
)
PING = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
SSE = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
JSON = {"Content-Type": "application/json"}


def stateless(rid: int, **params: Any) -> tuple[bytes, dict[str, str]]:
    """A 2026-07-28 call of the elicitation fixture, and its headers."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    name = "test_input_required_result_request_state"
    params = {"name": name, "arguments": {}, **params, "_meta": meta}
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    mirrored = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
    return body.encode(), {**SSE, **mirrored}


def answer(url: str, rid: int, **params: Any) -> Any:
    try:
        with post(url, *stateless(rid, **params)) as answered:
            return json.loads(answered.read())
    except urllib.error.HTTPError as refused:
        return json.loads(refused.read())


def test_a_sealed_round_completes_on_another_process_and_a_tampered_one_is_refused(
    url: str,
) -> None:
    asked = answer(url, 1)["result"]
    assert asked["resultType"] == "input_required" and list(asked["inputRequests"]) == ["confirm"]
    answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
    with started() as other:  # another process, holding the same key
        done = answer(other, 2, inputResponses=answers, requestState=asked["requestState"])
    assert done["result"]["content"][0]["text"].startswith("state-ok")
    tampered = asked["requestState"] + "-TAMPERED"
    refused = answer(url, 3, inputResponses=answers, requestState=tampered)
    assert refused["error"]["code"] == -32602 and "result" not in refused
    unsealed = answer(url, 4, inputResponses=answers)  # answers without the state: asked again
    assert unsealed["result"]["resultType"] == "input_required"


def test_a_terminated_or_unknown_session_is_not_found(url: str) -> None:
    with post(url, INITIALIZE, SSE) as answered:
        named = answered.headers["Mcp-Session-Id"]
    with post(url, PING, {**SSE, "Mcp-Session-Id": named}) as answered:
        assert answered.status == 200
    ended = urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": named})
    urllib.request.urlopen(ended, timeout=10).close()
    for gone in (named, "never-issued"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            post(url, PING, {**SSE, "Mcp-Session-Id": gone})
        assert refused.value.code == 404
