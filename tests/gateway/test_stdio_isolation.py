"""The stdio front (`StdioGatewayApp`) keeps its clients apart, each attack
driven with ASGI messages against children that are recorded, never run: a
client naming an id of the shared child in a cancel, a progress
notification or an answer reaches nothing and is reported, while a closed
stream cancels the client's own request there; a log line goes to a client
only when it alone asked for logs; concurrent ``initialize`` requests never
spawn more children than ``max_sessions``; and a session whose question its
client leaves unanswered stops holding its slot after ``round_seconds``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_schema.gateway.child import Child
from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
from mcp_schema.http.adapter import Message
from mcp_schema.proxy import ReportLog
from tests.gateway.test_gateway import CALL, HEADERS, META, reported
from tests.gateway.test_stdio_precheck import INITIALIZE, OPENING, TESTED


class Children:
    """The children started (none really runs): what each was sent, and which were closed."""

    def __init__(self) -> None:
        self.started: list[Child] = []
        self.sent: dict[int, list[dict[str, Any]]] = {}
        self.closed: list[Child] = []


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> Iterator[Children]:
    seen = Children()

    async def start(child: Child) -> None:
        await asyncio.sleep(0.01)  # a real spawn takes a while: the requests overlap
        seen.started.append(child)
        child.alive = True

    def send(child: Child, frame: bytes) -> bool:
        seen.sent.setdefault(id(child), []).append(json.loads(frame))
        return True

    async def close(child: Child) -> None:
        if child.alive:
            child.alive = False
            seen.closed.append(child)
            child.on_exit()

    monkeypatch.setattr(Child, "start", start)
    monkeypatch.setattr(Child, "send", send)
    monkeypatch.setattr(Child, "close", close)
    yield seen


class Request:
    """One POST to the app, as a task: ``leave()`` is its client going away."""

    def __init__(self, app: StdioGatewayApp, body: dict[str, Any], headers: dict[str, str]):
        self.sent: list[Message] = []
        self._left = asyncio.Event()
        pairs = [(k.encode(), v.encode()) for k, v in {"host": "127.0.0.1", **headers}.items()]
        scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/mcp"}
        scope["headers"] = pairs
        messages = [{"type": "http.request", "body": json.dumps(body).encode()}]

        async def receive() -> Message:
            if messages:
                return messages.pop()
            await self._left.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            self.sent.append(message)

        scope["server"] = ("127.0.0.1", 3000)
        self.task = asyncio.ensure_future(app(scope, receive, send))

    def leave(self) -> None:
        self._left.set()

    @property
    def status(self) -> int | None:
        return self.sent[0]["status"] if self.sent else None


def notification(method: str, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    headers = {**HEADERS, "mcp-method": method}
    del headers["mcp-name"]
    return {"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": META}}, headers


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("enforce", [False, True])
@pytest.mark.parametrize(
    "named",
    [
        notification("notifications/cancelled", {"requestId": 1}),
        notification("notifications/progress", {"progressToken": "gw-1", "progress": 1}),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, HEADERS),  # an answer to nothing it was asked
    ],
    ids=["cancel", "progress", "answer"],
)
def test_a_client_naming_an_id_of_the_shared_child_reaches_nothing_and_is_reported(
    children: Children, enforce: bool, named: tuple[dict[str, Any], dict[str, str]]
) -> None:
    log = ReportLog()
    app = StdioGatewayApp(TESTED, enforce=enforce, reports=log)

    async def attack() -> None:
        victim = Request(app, {**CALL, "id": 1}, HEADERS)  # id 1 on the child too
        await settle()
        attacker = Request(app, *named)
        await asyncio.wait_for(attacker.task, 5)
        assert attacker.status == 202 or enforce  # enforce mode may refuse it for what it is
        (child,) = children.started
        assert [m.get("method") for m in children.sent[id(child)]] == ["tools/call"]
        assert not victim.task.done()
        victim.leave()  # the victim's own closed stream: its cancel, mapped to the child
        await asyncio.wait_for(victim.task, 5)
        cancel = children.sent[id(child)][-1]
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == 1  # the gateway's id of the victim's call

    asyncio.run(attack())
    reports = reported(log)
    assert reports and (enforce or any("not forwarded" in r["message"] for r in reports))


def test_a_log_line_goes_to_a_client_only_when_it_alone_asked_for_logs(
    children: Children,
) -> None:
    app = StdioGatewayApp(TESTED)
    logged = {**META, "io.modelcontextprotocol/logLevel": "info"}
    asking = {**CALL, "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": logged}}
    line = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}'

    async def two_then_one() -> tuple[int, int]:
        first, second = Request(app, asking, HEADERS), Request(app, asking, HEADERS)
        await settle()
        assert app.shared is not None
        app.shared._line(line)  # two asked: neither may read it
        dropped = app.unrouted_logs
        second.leave()
        await asyncio.wait_for(second.task, 5)
        app.shared._line(line)  # one asks: its own
        await settle()
        first.leave()
        await asyncio.wait_for(first.task, 5)
        told = sum(b"notifications/message" in m.get("body", b"") for m in first.sent)
        return dropped, told

    assert asyncio.run(two_then_one()) == (1, 1)
    assert app.unrouted_logs == 1


def test_forty_concurrent_initialize_requests_spawn_at_most_max_sessions_children(
    children: Children,
) -> None:
    app = StdioGatewayApp(TESTED, max_sessions=4)

    async def forty() -> list[int | None]:
        requests = [Request(app, INITIALIZE, OPENING) for _ in range(40)]
        await settle()
        for request in requests:
            request.leave()
        await asyncio.wait_for(asyncio.gather(*(r.task for r in requests)), 10)
        return [r.status for r in requests]

    statuses = asyncio.run(forty())
    assert len(children.started) == 4
    assert statuses.count(503) == 36


def test_a_session_whose_question_is_left_unanswered_gives_its_slot_to_a_newcomer(
    children: Children,
) -> None:
    app = StdioGatewayApp(TESTED, max_sessions=1, round_seconds=0.05)

    async def newcomer() -> tuple[int | None, int | None]:
        silent = Request(app, INITIALIZE, OPENING)  # its request waits, and nothing is said
        await settle()
        came = Request(app, INITIALIZE, OPENING)
        await asyncio.wait_for(silent.task, 5)  # its child was ended for the newcomer
        await settle()
        status = came.status
        came.leave()
        await asyncio.wait_for(came.task, 5)
        return silent.status, status

    silent, came = asyncio.run(newcomer())
    assert silent == 502 and came is None  # the newcomer's request went to a child of its own
    assert len(children.started) == 2 and children.closed == children.started[:1]


def test_round_seconds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="round_seconds"):
        StdioGatewayApp(TESTED, round_seconds=0)
