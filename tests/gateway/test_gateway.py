"""`mcp_schema.gateway.monitor.asgi.GatewayApp` under uvicorn, end to end: the
official Python SDK client (``mcp`` 2.3.0, auto mode, and the handshake
era) through monitor mode to ``examples/http_server.py``; an upstream that
answers wrong (reported in monitor mode, refused in enforce mode); a
hand-made client whose headers disagree with its body; a client leaving
an event stream, which cancels the upstream's."""

from __future__ import annotations

import asyncio
import json
import runpy
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from mcp import Client

from mcp_schema.gateway import ExchangeValidator
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.proxy import ReportLog

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "hand", "version": "1"},
}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "echo",
}
CALL = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": META},
}


def waited_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@contextmanager
def serving(application: Any) -> Iterator[str]:
    """``application`` under uvicorn in a thread: its ``/mcp`` URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(application, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        waited_for(lambda: server.started)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def reported(log: ReportLog) -> list[dict[str, Any]]:
    """Every report line the log kept, once the session is over."""
    log.finish()
    lines = []
    while (data := log.take()) is not None:
        lines += [json.loads(line) for line in data.splitlines()]
    return lines


@pytest.fixture(scope="module")
def example() -> Iterator[str]:
    with serving(runpy.run_path(str(EXAMPLES / "http_server.py"))["app"]) as url:
        yield url


async def use(url: str, mode: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    reported_progress: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported_progress.append(progress)

    with anyio.fail_after(30):
        async with Client(url, mode=mode, read_timeout_seconds=10, cache=None) as c:
            seen["version"] = c.protocol_version
            seen["tools"] = [t.name for t in (await c.list_tools()).tools]
            echo = await c.call_tool("echo", {"text": "hi"})
            seen["echo"] = getattr(echo.content[0], "text", None)
            await c.call_tool("count", {}, progress_callback=on_progress)
            seen["progress"] = reported_progress
            seen["ask"] = (await c.call_tool("ask", {})).is_error  # no callback: told so
            read = await c.read_resource("config://app")
            seen["read"] = getattr(read.contents[0], "text", None)
    return seen


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_sdk_client_through_monitor_mode_is_served_and_nothing_reported(
    example: str, mode: str, version: str
) -> None:
    log = ReportLog()
    with serving(GatewayApp(example, reports=log)) as url:
        seen = anyio.run(use, url, mode)
    assert seen == {
        "version": version,
        "tools": ["echo", "divide", "count", "ask", "think", "toggle", "long_count"],
        "echo": "hi",
        "progress": [1.0, 2.0, 3.0],
        "ask": True,
        "read": '{"debug": false}',
    }
    assert reported(log) == []


# -- an upstream that answers wrong -------------------------------------------------------

WRONG = {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete", "content": "oops"}}


async def corrupt(scope: Any, receive: Any, send: Any) -> None:
    """An upstream answering every POST with a tools/call result the schema refuses,
    as JSON or (``?sse``) as one event after a good notification."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    body = json.dumps(WRONG).encode()
    if scope["query_string"] == b"sse":
        note: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/message"}
        note["params"] = {"level": "info", "data": "working"}
        events = [b"data: " + json.dumps(note).encode() + b"\n\n", b"data: " + body + b"\n\n"]
        media = b"text/event-stream"
    else:
        events, media = [body], b"application/json"
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", media)]}
    )
    for event in events:
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


@pytest.fixture(scope="module")
def corrupted() -> Iterator[str]:
    with serving(corrupt) as url:
        yield url


def post(url: str, body: Any, headers: dict[str, str] = HEADERS) -> httpx.Response:
    return httpx.post(url, content=json.dumps(body).encode(), headers=headers, timeout=10)


def test_monitor_mode_passes_a_wrong_answer_unchanged_and_reports_it(corrupted: str) -> None:
    log = ReportLog()
    with serving(GatewayApp(corrupted, reports=log)) as url:
        answer = post(url, CALL)
    assert answer.status_code == 200 and answer.json() == WRONG
    [report] = reported(log)
    assert report["direction"] == "server->client" and report["code"] == -32602
    assert "content" in json.dumps(report["data"])


def test_enforce_mode_turns_a_wrong_answer_into_502_to_the_requests_id(corrupted: str) -> None:
    log = ReportLog()
    with serving(GatewayApp(corrupted, enforce=True, reports=log)) as url:
        answer = post(url, CALL)
    assert answer.status_code == 502
    error = answer.json()
    assert error["id"] == 7 and error["error"]["code"] == -32603
    assert error["error"]["data"]["finding"]["code"] == -32602
    assert [r["code"] for r in reported(log)] == [-32602]


def test_enforce_mode_ends_an_event_stream_with_the_error_for_a_wrong_event(
    corrupted: str,
) -> None:
    with serving(GatewayApp(corrupted + "?sse", enforce=True)) as url:
        answer = post(url, CALL)
    assert answer.headers["content-type"].startswith("text/event-stream")
    datas = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]
    assert [d.get("method") for d in datas] == ["notifications/message", None]
    assert datas[1]["id"] == 7 and datas[1]["error"]["code"] == -32603


def test_enforce_mode_refuses_a_header_body_mismatch_and_forwards_nothing(example: str) -> None:
    log = ReportLog()
    with serving(GatewayApp(example, enforce=True, reports=log)) as url:
        answer = post(url, CALL, {**HEADERS, "mcp-name": "divide"})
        good = post(url, CALL)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == -32020 and error["data"]["header"] == "Mcp-Name"
    assert answer.json()["id"] == 7
    assert good.status_code == 200 and good.json()["result"]["content"][0]["text"] == "hi"
    [report] = reported(log)
    assert (report["direction"], report["code"], report["id"]) == ("client->server", -32020, 7)


def test_monitor_mode_forwards_a_mismatch_and_reports_it(example: str) -> None:
    log = ReportLog()
    with serving(GatewayApp(example, reports=log)) as url:
        answer = post(url, CALL, {**HEADERS, "mcp-name": "divide"})
    assert answer.status_code == 400  # the example's own refusal, unchanged
    assert [r["code"] for r in reported(log)] == [-32020]


@pytest.mark.parametrize("enforce", [False, True])
def test_an_unreachable_upstream_is_502_and_reported_once_with_a_count(enforce: bool) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nobody listens there
    log = ReportLog()
    with serving(GatewayApp(f"http://127.0.0.1:{port}/mcp", enforce=enforce, reports=log)) as url:
        answers = [post(url, CALL) for _ in range(20)]
    assert {(a.status_code, a.json()["id"], a.json()["error"]["code"]) for a in answers} == {
        (502, 7, -32603)
    }
    first, last = reported(log)  # the run of the same failure: its first, then its count
    assert (first["direction"], first["code"], first["id"]) == ("server->client", -32603, 7)
    assert "cannot be reached" in first["message"]
    assert first["message"] == answers[0].json()["error"]["message"]
    assert (first["repeats"], last["repeats"], last["message"]) == (0, 19, first["message"])


# -- Mcp-Param-* headers, of the tools the upstream listed --------------------------------

REGION = {
    "name": "where",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    },
}


def annotating(calls: list[bytes]) -> Any:
    """An upstream listing `REGION` and answering each call (kept in ``calls``)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        if request["method"] == "tools/list":
            result: dict[str, Any] = {"tools": [REGION], "cacheScope": "private", "ttlMs": 0}
        else:
            calls.append(body)
            result = {"content": []}
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"resultType": "complete", **result},
        }
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(answer).encode()})

    return app


def region_call(region: str) -> dict[str, Any]:
    params = {"name": "where", "arguments": {"region": region}, "_meta": META}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


@pytest.mark.parametrize("enforce", [False, True])
def test_param_headers_are_checked_against_the_tools_the_upstream_listed(enforce: bool) -> None:
    calls: list[bytes] = []
    log = ReportLog()
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    to_list = {**HEADERS, "mcp-method": "tools/list"}
    del to_list["mcp-name"]
    calling = {**HEADERS, "mcp-name": "where"}
    with (
        serving(annotating(calls)) as upstream,
        serving(GatewayApp(upstream, enforce=enforce, reports=log)) as url,
    ):
        before = post(url, region_call("eu"), calling)  # not listed yet: not checked
        assert post(url, listing, to_list).json()["result"]["tools"] == [REGION]
        good = post(url, region_call("eu"), {**calling, "mcp-param-region": "eu"})
        missing = post(url, region_call("eu"), calling)
        wrong = post(url, region_call("eu"), {**calling, "Mcp-Param-Region": "us"})
    assert before.status_code == good.status_code == 200
    found = reported(log)
    assert [(r["direction"], r["code"], r["id"]) for r in found] == [
        ("client->server", -32020, 7)
    ] * 2
    assert [r["data"]["reason"] for r in found] == ["missing", "mismatch"]
    if enforce:  # refused, never forwarded
        assert len(calls) == 2
        for refused in (missing, wrong):
            assert refused.status_code == 400
            assert refused.json()["id"] == 7 and refused.json()["error"]["code"] == -32020
    else:  # forwarded as they came
        assert len(calls) == 4 and missing.status_code == wrong.status_code == 200


def test_a_client_leaving_an_event_stream_cancels_the_upstreams() -> None:
    gone = threading.Event()

    async def endless(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await receive()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    with serving(endless) as upstream, serving(GatewayApp(upstream)) as url:
        with httpx.stream("POST", url, content=json.dumps(CALL), headers=HEADERS) as answer:
            assert next(answer.iter_raw()) == b": open\n\n"
        assert gone.wait(10)


@pytest.mark.parametrize(
    ("sent", "reason"),
    [
        (b"caf\xc3\xa9", "invalid"),  # raw UTF-8: it must have been encoded
        (b"=?base64?ZXU=?=", None),  # "eu", encoded: decoded before it is compared
        (b"=?base64?ZXU?=", "invalid"),  # no valid base64
        (b"e" * 8000, "mismatch"),
    ],
)
def test_hostile_param_headers_through_enforce_mode(sent: bytes, reason: str | None) -> None:
    calls: list[bytes] = []
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    to_list = {**HEADERS, "mcp-method": "tools/list"}
    del to_list["mcp-name"]
    with (
        serving(annotating(calls)) as upstream,
        serving(GatewayApp(upstream, enforce=True)) as url,
    ):
        post(url, listing, to_list)
        headers = [(k.encode(), v.encode()) for k, v in {**HEADERS, "mcp-name": "where"}.items()]
        headers.append((b"mcp-param-region", sent))
        body = json.dumps(region_call("eu")).encode()
        answer = httpx.post(url, content=body, headers=headers, timeout=10)
    if reason is None:
        assert answer.status_code == 200 and len(calls) == 1
        return
    assert answer.status_code == 400 and calls == []
    error = answer.json()["error"]
    assert error["code"] == -32020 and error["data"]["reason"] == reason
    assert len(answer.content) < 4096  # the value is cut in the error


def test_one_clients_cookies_never_reach_the_upstream_with_anothers_request() -> None:
    seen: list[dict[bytes, bytes]] = []

    async def cookie_setter(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        seen.append(dict(scope["headers"]))
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": []}}).encode()
        headers = [(b"content-type", b"application/json"), (b"set-cookie", b"s=secret; Path=/")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    with serving(cookie_setter) as upstream, serving(GatewayApp(upstream)) as url:
        first = post(url, CALL)  # each post is a client of its own
        second = post(url, CALL, {**HEADERS, "user-agent": "mine"})
    assert first.headers["set-cookie"] == "s=secret; Path=/"  # passed on to its client
    assert second.status_code == 200
    assert [h.get(b"cookie") for h in seen] == [None, None]  # and kept by no one else
    assert seen[1][b"user-agent"] == b"mine" and b"cookie" not in seen[0]


@pytest.mark.parametrize("enforce", [False, True])
def test_a_body_over_the_limit_is_forwarded_whole_in_monitor_mode_and_413_in_enforce(
    enforce: bool,
) -> None:
    sizes: list[int] = []

    async def measuring(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        size, more = 0, True
        while more:
            message = await receive()
            size, more = size + len(message.get("body", b"")), message.get("more_body", False)
        sizes.append(size)
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": []}}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    log = ReportLog()
    big = json.loads(json.dumps(CALL))
    big["params"]["arguments"]["text"] = "x" * 300_000
    with serving(measuring) as upstream:
        app = GatewayApp(
            upstream, enforce=enforce, reports=log, validator=ExchangeValidator(max_body=1000)
        )
        with serving(app) as url:
            answer = post(url, big)
    assert answer.status_code == (413 if enforce else 200)
    assert sizes == ([] if enforce else [len(json.dumps(big))])
    assert [r["code"] for r in reported(log)] == [-32700]


def test_other_paths_are_404_and_not_forwarded(example: str) -> None:
    with serving(GatewayApp(example)) as url:
        assert httpx.get(url.replace("/mcp", "/other")).status_code == 404


@pytest.mark.parametrize("enforce", [False, True])
def test_an_event_stream_is_relayed_event_by_event(enforce: bool) -> None:
    # The upstream sends its second event only once the client has the first:
    # a gateway holding the stream whole would never answer.
    first_read = threading.Event()
    note: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/message"}
    note["params"] = {"level": "info", "data": "working"}
    done = {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete", "content": []}}

    async def stepwise(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await receive()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        event = b"data: " + json.dumps(note).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": event, "more_body": True})
        while not first_read.is_set():
            await asyncio.sleep(0.01)
        event = b"data: " + json.dumps(done).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": event, "more_body": False})

    log = ReportLog()
    with (
        serving(stepwise) as upstream,
        serving(GatewayApp(upstream, enforce=enforce, reports=log)) as url,
    ):
        with httpx.stream("POST", url, content=json.dumps(CALL), headers=HEADERS) as answer:
            chunks = answer.iter_raw()
            assert b"working" in next(chunks)
            first_read.set()
            assert b'"id":7' in b"".join(chunks).replace(b" ", b"")
    assert reported(log) == []
