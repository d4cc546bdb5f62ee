"""The stdio front's front door (`StdioGatewayApp`), driven with ASGI
messages and under uvicorn: every request prechecked before any child is
started, in monitor and enforce mode alike (a rebound ``Host`` 421, a
foreign ``Origin`` 403, a slow body 408, a body too long 413); the
``precheck`` given is the one applied, its allowed origin's answers carry
their CORS headers; a request's era read from its body; and what the front
writes on an event stream reads back as SSE (`EventReader`)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_schema.gateway.child import Child
from mcp_schema.gateway.monitor.exchange import ExchangeValidator
from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
from mcp_schema.http.adapter import Message
from mcp_schema.http.precheck import Precheck
from mcp_schema.http.sse import EventReader
from mcp_schema.proxy import ReportLog
from tests.gateway.test_exchange import INIT
from tests.gateway.test_gateway import CALL, HEADERS, META, reported, serving
from tests.hostile import raw
from tests.http.test_adapter import chunks

TESTED = [sys.executable, str(Path(__file__).with_name("stdio_server.py"))]
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
OPENING = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
REQUESTS = {"stateless": (CALL, HEADERS), "handshake": (INITIALIZE, OPENING)}


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The commands of the children started (none really is)."""
    commands: list[list[str]] = []

    async def start(child: Child) -> None:
        commands.append(child.command)

    monkeypatch.setattr(Child, "start", start)
    return commands


def answered(
    app: StdioGatewayApp,
    headers: dict[str, str],
    receive: Callable[[], Awaitable[Message]],
    server: tuple[str, int] = ("127.0.0.1", 3000),
) -> tuple[int, bytes]:
    """The status and body ``app`` answers a POST with (``host`` 127.0.0.1 unless given)."""
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    pairs = [(k.encode(), v.encode()) for k, v in {"host": "127.0.0.1", **headers}.items()]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": pairs, "server": server}
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.parametrize("era", sorted(REQUESTS))
@pytest.mark.parametrize("enforce", [False, True])
@pytest.mark.parametrize(
    ("extra", "status"),
    [({"host": "evil.example"}, 421), ({"origin": "https://evil.example"}, 403)],
)
def test_a_rebound_host_or_a_foreign_origin_is_refused_before_any_child(
    started: list[list[str]], era: str, enforce: bool, extra: dict[str, str], status: int
) -> None:
    body, headers = REQUESTS[era]
    app = StdioGatewayApp(TESTED, enforce=enforce)
    got, answer = answered(app, {**headers, **extra}, chunks(raw(body)))
    assert got == status and json.loads(answer)["error"]["code"] == -32600
    assert started == [] and not app.sessions and app.shared is None


@pytest.mark.parametrize("era", sorted(REQUESTS))
@pytest.mark.parametrize("enforce", [False, True])
def test_a_slow_body_is_408_and_reaches_no_child(
    started: list[list[str]], era: str, enforce: bool
) -> None:
    body, headers = REQUESTS[era]
    app = StdioGatewayApp(TESTED, enforce=enforce, body_seconds=0.1)
    status, answer = answered(app, headers, chunks(raw(body)[:20], hang=True))
    assert status == 408 and json.loads(answer)["id"] is None
    assert started == [] and not app.sessions and app.shared is None


@pytest.mark.parametrize("enforce", [False, True])
def test_a_body_too_long_is_413_as_it_arrives_and_reaches_no_child(
    started: list[list[str]], enforce: bool
) -> None:
    app = StdioGatewayApp(TESTED, enforce=enforce, validator=ExchangeValidator(max_body=100))
    status, _ = answered(app, HEADERS, chunks(b"x" * 80, b"x" * 80, hang=True))
    assert status == 413 and started == []


def test_a_precheck_without_a_body_bound_still_reads_no_more_than_the_validator(
    started: list[list[str]],
) -> None:
    # The gateway command's precheck leaves body sizes to the validator (for
    # the HTTP front, which streams a long body on): the stdio front must
    # still read no more than the validator's max_body into a child's line.
    unbounded = Precheck(max_body=sys.maxsize)
    app = StdioGatewayApp(TESTED, validator=ExchangeValidator(max_body=100), precheck=unbounded)
    status, _ = answered(app, HEADERS, chunks(b"x" * 80, b"x" * 80, hang=True))
    assert status == 413 and started == []


def test_the_precheck_given_is_applied_and_its_origins_answers_carry_cors() -> None:
    precheck = Precheck(allowed_hosts=["127.0.0.1"], allowed_origins=["https://app.example"])
    with serving(StdioGatewayApp(TESTED, precheck=precheck)) as url:
        answer = httpx.post(
            url, content=raw(CALL), headers={**HEADERS, "origin": "https://app.example"}, timeout=20
        )
        assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "hi"
        assert answer.headers["access-control-allow-origin"] == "https://app.example"
        named = {**HEADERS, "host": "localhost"}  # a loopback name, not allowed here
        assert httpx.post(url, content=raw(CALL), headers=named).status_code == 421


def test_a_request_naming_its_version_in_its_meta_alone_is_of_the_stateless_era() -> None:
    # No MCP-Protocol-Version: the header rule alone took it for a session's request (400).
    log = ReportLog()
    headers = {k: v for k, v in HEADERS.items() if k != "mcp-protocol-version"}
    with serving(StdioGatewayApp(TESTED, reports=log)) as url:
        answer = httpx.post(url, content=raw(CALL), headers=headers, timeout=20)
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "hi"
    assert [r["code"] for r in reported(log)] == [-32020]  # the header it lacks, reported


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(StdioGatewayApp(TESTED)) as served:
        yield served


def test_what_the_front_writes_on_an_event_stream_reads_back_as_sse(url: str) -> None:
    # The child's log message holds a CR (JSON whitespace): one data line cut there is no JSON.
    meta = {**META, "io.modelcontextprotocol/logLevel": "info"}
    call: dict[str, Any] = {**CALL, "params": {"name": "cr", "arguments": {}, "_meta": meta}}
    headers = {**HEADERS, "mcp-name": "cr"}
    with httpx.stream("POST", url, content=raw(call), headers=headers, timeout=20) as answer:
        assert answer.headers["content-type"] == "text/event-stream"
        reader, events = EventReader(), []
        for chunk in answer.iter_raw():
            events += reader.feed(chunk)
    logged, last = (json.loads(event) for event in events)
    assert logged["method"] == "notifications/message" and logged["params"]["data"] == "cr"
    assert last["id"] == CALL["id"]
