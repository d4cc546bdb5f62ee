"""`mcp_schema.http.asgi.App` under a real ASGI server (uvicorn, on
127.0.0.1 and a free port), serving the handlers of ``examples/server.py``:
the official Python SDK client (``mcp`` 2.3.0) in the handshake era
(``legacy``) and in 2026-07-28 (its ``ask`` sealed in the ``requestState``), ``examples/http_server.py`` in ``auto``
mode, and raw HTTP for what a client library does not do (a body too long,
a client that hangs up, an idle stream's keep-alive)."""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import uvicorn
from mcp import Client

from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import CancelRequested, Event, ServerSession

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_spec = importlib.util.spec_from_file_location("example_server", EXAMPLES / "server.py")
assert _spec is not None and _spec.loader is not None
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
CAPABILITIES: dict[str, Any] = {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}
SEEN: list[Event] = []


def recorded(session: ServerSession, event: Event) -> None:
    SEEN.append(event)
    example.serve(session, event)


def app(**options: Any) -> App:
    endpoint = Endpoint(
        recorded,
        info={"name": "asgi-test", "version": "1"},
        capabilities=CAPABILITIES,
        handler_version="2026-07-28",
        max_body=options.pop("max_body", 4 << 20),
        request_state=StateSealer(StateKeys("a key for the tests, at least 32 bytes")),
    )
    return App(endpoint, **options)


@contextmanager
def serving(application: App) -> Iterator[tuple[str, int]]:
    """``application`` under uvicorn in a thread: its host and port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(application, log_level="warning", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        waited_for(lambda: server.started, 10)
        yield "127.0.0.1", sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
    assert not thread.is_alive()


def waited_for(condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(app()) as (host, port):
        yield f"http://{host}:{port}/mcp"


async def elicit(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"text": "yes"})


async def sample(context: Any, params: Any) -> types.CreateMessageResult:
    reply = types.TextContent(type="text", text="maybe")
    return types.CreateMessageResult(role="assistant", content=reply, model="stub")


async def session(url: Any, mode: str) -> dict[str, Any]:
    """The tools the example serves, called by the SDK client of ``url`` (a
    URL, or a transport) in ``mode``: what each answered."""
    reported: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    seen: dict[str, Any] = {}
    with anyio.fail_after(30):
        async with Client(
            url,
            mode=mode,
            read_timeout_seconds=10,
            cache=None,
            elicitation_callback=elicit,
            sampling_callback=sample,
        ) as c:
            seen["version"] = c.protocol_version
            seen["tools"] = [t.name for t in (await c.list_tools()).tools]
            echo = await c.call_tool("echo", {"text": "hi"})
            seen["echo"] = (getattr(echo.content[0], "text", None), echo.structured_content)
            seen["divide"] = (await c.call_tool("divide", {"a": 1, "b": 0})).is_error
            await c.call_tool("count", {}, progress_callback=on_progress)
            seen["progress"] = reported
            # Handshake era: asked on the request's stream, answered on another POST;
            # 2026-07-28: an input-required result, and the retry, sealed, a new request.
            for tool in ("ask", "think"):
                answer = await c.call_tool(tool, {})
                seen[tool] = getattr(answer.content[0], "text", None)
            read = await c.read_resource("config://app")
            seen["read"] = getattr(read.contents[0], "text", None)
            prompt = await c.get_prompt("review", {"code": "x"})
            seen["prompt"] = getattr(prompt.messages[0].content, "text", None)
    return seen


async def unaskable(url: str, mode: str) -> dict[str, Any]:
    """What ``ask`` and ``think`` answer a client with no elicitation or sampling callback."""
    with anyio.fail_after(30):
        async with Client(url, mode=mode, read_timeout_seconds=10, cache=None) as c:
            answers = {tool: await c.call_tool(tool, {}) for tool in ("ask", "think")}
    return {t: (getattr(a.content[0], "text", None), a.is_error) for t, a in answers.items()}


COMMON = {
    "tools": ["echo", "divide", "count", "ask", "think", "toggle"],
    "ask": "you said yes",
    "think": "you said maybe",
    "echo": ("hi", {"text": "hi"}),
    "divide": True,
    "progress": [1.0, 2.0, 3.0],
    "read": '{"debug": false}',
    "prompt": "Hi",
}


def test_the_sdk_client_in_the_handshake_era(url: str) -> None:
    assert anyio.run(session, url, "legacy") == {**COMMON, "version": "2025-11-25"}


def test_the_sdk_client_in_2026_07_28(url: str) -> None:
    assert anyio.run(session, url, "2026-07-28") == {**COMMON, "version": "2026-07-28"}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_client_that_cannot_be_asked_is_told_so(url: str, mode: str) -> None:
    cannot = ("this client cannot be asked", True)
    assert anyio.run(unaskable, url, mode) == {"ask": cannot, "think": cannot}


def test_the_example_http_server_in_auto_mode() -> None:
    command = [sys.executable, "-m", "uvicorn", "--app-dir", str(EXAMPLES), "http_server:app"]
    server = subprocess.Popen([*command, "--port", "0"], stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(60, server.kill)  # a server that never starts ends the wait
    watchdog.start()
    try:
        assert server.stderr is not None
        started = ""
        while "running on" not in started:  # uvicorn logs the port it bound
            started = server.stderr.readline()
            assert started, "uvicorn exited"
        address = started.split("running on ")[1].split()[0]
        seen = anyio.run(session, f"{address}/mcp", "auto")
    finally:
        watchdog.cancel()
        server.terminate()
        _, errors = server.communicate(timeout=10)
    tools = [*COMMON["tools"], "long_count"]  # type: ignore[misc]  # the example's (no extra)
    assert seen == {**COMMON, "tools": tools, "version": "2026-07-28"}
    assert "Traceback" not in errors


def test_the_example_http_server_refuses_a_short_state_key_at_start_up() -> None:
    command = [sys.executable, "-m", "uvicorn", "--app-dir", str(EXAMPLES), "http_server:app"]
    env = {**os.environ, "MCP_STATE_KEY": "too short"}
    done = subprocess.run(
        [*command, "--port", "0"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "MCP_STATE_KEY: keys[0] has 9 bytes; a key needs at least 32" in done.stderr


# -- raw HTTP -------------------------------------------------------------------------

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def initialized(host: str, port: int) -> str:
    connection = http.client.HTTPConnection(host, port, timeout=10)
    connection.request("POST", "/mcp", json.dumps(INIT), HEADERS)
    response = connection.getresponse()
    assert response.status == 200 and json.loads(response.read())["id"] == 0
    session_id = response.getheader("mcp-session-id")
    assert session_id is not None
    connection.close()
    return session_id


def asgi_call(
    application: App,
    server: tuple[str, int] | None,
    host: bytes,
    method: str = "POST",
    extra: tuple[tuple[bytes, bytes], ...] = (),
) -> tuple[int, dict[bytes, bytes]]:
    """The status and head ``application`` answers a request (a POST of a
    notification, or a bodiless ``method``) that reached ``server`` naming ``host``."""
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    headers = [(b"host", host), (b"content-type", b"application/json"), (b"accept", b"*/*")]
    scope: dict[str, Any] = {"type": "http", "method": method, "path": "/mcp"}
    scope.update(headers=[*headers, *extra], server=server)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body if method == "POST" else b""}

    async def send(message: Any) -> None:
        sent.append(message)

    anyio.run(application, scope, receive, send)
    return int(sent[0]["status"]), dict(sent[0]["headers"])


def asgi_post(application: App, server: tuple[str, int] | None, host: bytes) -> int:
    """The status ``application`` answers a POST that reached ``server`` naming ``host``."""
    return asgi_call(application, server, host)[0]


def test_the_adapter_gives_an_allowed_origin_its_cors_headers() -> None:
    origin = b"https://app.example.com"
    endpoint = Endpoint(
        recorded, info={"name": "t", "version": "1"}, allowed_origins=[origin.decode()]
    )
    asking = ((b"origin", origin), (b"access-control-request-method", b"POST"))
    status, head = asgi_call(App(endpoint), ("127.0.0.1", 80), b"127.0.0.1", "OPTIONS", asking)
    assert status == 204 and head[b"access-control-allow-origin"] == origin  # the preflight
    status, head = asgi_call(App(endpoint), ("127.0.0.1", 80), b"127.0.0.1", "POST", asking[:1])
    assert status == 400 and head[b"access-control-allow-origin"] == origin  # no session: readable
    assert b"access-control-allow-origin" not in asgi_call(App(endpoint), None, b"h")[1]


@pytest.mark.parametrize(
    ("server", "host", "status"),
    [
        (("127.0.0.1", 3001), b"127.0.0.1:3001", 400),  # past the Host check: no session
        (("127.0.0.1", 3001), b"localhost:3001", 400),
        (("::1", 3001), b"[::1]:3001", 400),
        (("127.0.0.1", 3001), b"evil.example.com:3001", 421),
        (("127.0.0.2", 3001), b"rebound.example.com", 421),
        (("10.0.0.1", 3001), b"mcp.example.com", 400),  # not on loopback: not checked
        (None, b"mcp.example.com", 400),  # a Unix socket
    ],
)
def test_on_loopback_only_loopback_hosts_are_served(
    server: tuple[str, int] | None, host: bytes, status: int
) -> None:
    assert asgi_post(app(), server, host) == status


def test_the_endpoints_allowed_hosts_replace_the_loopback_default() -> None:
    endpoint = Endpoint(recorded, info={"name": "t", "version": "1"}, allowed_hosts=["mcp.test"])
    assert asgi_post(App(endpoint), ("127.0.0.1", 80), b"mcp.test") == 400
    assert asgi_post(App(endpoint), ("127.0.0.1", 80), b"127.0.0.1") == 421


def test_a_body_too_long_is_refused_as_it_arrives() -> None:
    with serving(app(max_body=1000)) as (host, port):
        # Chunked, with no Content-Length to refuse on, and never finished: the
        # refusal comes while the body is still arriving.
        with socket.create_connection((host, port), timeout=10) as raw:
            head = "".join(f"{k}: {v}\r\n" for k, v in HEADERS.items())
            raw.sendall(f"POST /mcp HTTP/1.1\r\nHost: {host}\r\n{head}".encode())
            raw.sendall(b"Transfer-Encoding: chunked\r\n\r\n" + b"7d0\r\n" + b"x" * 2000 + b"\r\n")
            answer = raw.recv(65536)
            while b"Payload Too Large" not in answer and (more := raw.recv(65536)):
                answer += more  # the head and the body may come in two segments
            assert answer.startswith(b"HTTP/1.1 413 ")
            assert b"Payload Too Large" in answer
        connection = http.client.HTTPConnection(host, port, timeout=10)
        connection.putrequest("POST", "/mcp")
        for name, value in {**HEADERS, "Content-Length": "5000"}.items():
            connection.putheader(name, value)
        connection.endheaders()  # no body sent: refused on the header alone
        assert connection.getresponse().status == 413
        connection.close()


def test_hanging_up_on_a_request_stream_cancels_the_request() -> None:
    SEEN.clear()
    with serving(app()) as (host, port):
        session_id = initialized(host, port)
        asked = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}}
        connection = http.client.HTTPConnection(host, port, timeout=10)
        connection.request(
            "POST", "/mcp", json.dumps(asked), {**HEADERS, "Mcp-Session-Id": session_id}
        )
        response = connection.getresponse()
        assert response.getheader("content-type") == "text/event-stream"
        assert b"elicitation/create" in response.readline() + response.readline()
        connection.close()  # before the answer: cancellation
        waited_for(lambda: any(isinstance(e, CancelRequested) for e in SEEN), 10)
        (cancelled,) = [e for e in SEEN if isinstance(e, CancelRequested)]
        assert cancelled.request.id == 1


def test_an_idle_stream_gets_keep_alive_comments() -> None:
    with serving(app(keepalive=0.05)) as (host, port):
        session_id = initialized(host, port)
        connection = http.client.HTTPConnection(host, port, timeout=10)
        get = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id}
        connection.request("GET", "/mcp", headers=get)
        response = connection.getresponse()
        assert response.status == 200
        assert [response.readline() for _ in range(4)] == [b":\n", b"\n", b":\n", b"\n"]
        connection.close()
        deleted = http.client.HTTPConnection(host, port, timeout=10)
        deleted.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session_id})
        assert deleted.getresponse().status == 200
        deleted.close()
