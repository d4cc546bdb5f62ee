"""Answers that come after the handler returns (`mcp_schema.http.answers`),
through `mcp_schema.http.asgi.App` driven with ASGI messages in one event
loop: ``async def`` handlers in both eras, a sync handler answering from a
callback, the bound on the wait, a handler whose broker call fails (503), a
lost stream cancelling the handler's task, the bound on requests waiting, and
shutdown."""

from __future__ import annotations

import asyncio
import json
import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcp_schema.broker import BrokerError, InProcessBroker
from mcp_schema.errors import GatewayTimeoutError, InternalError, InvalidParamsError
from mcp_schema.http import AsyncHandler, Endpoint, Handler
from mcp_schema.http.asgi import App, Message
from mcp_schema.session import CancelRequested, Event, RequestReceived, ServerSession
from tests.http.test_binding import BASE, INIT, call, post

TEXT = {"content": [{"type": "text", "text": "done"}]}


def endpoint(handler: Handler | AsyncHandler, **options: Any) -> Endpoint:
    return Endpoint(
        handler, info={"name": "t", "version": "1"}, capabilities={"tools": {}}, **options
    )


class Exchange:
    """One POST to an ASGI app, in flight: what it sent back so far."""

    def __init__(self, app: App, message: dict[str, Any], headers: dict[str, str]) -> None:
        from mcp_schema.http_headers import request_headers

        mirrored = request_headers(message) if "_meta" in message.get("params", {}) else {}
        fields = {**BASE, "host": "localhost", **mirrored, **headers}
        self.scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": [(k.encode(), v.encode()) for k, v in fields.items()],
            "server": ("127.0.0.1", 8000),
        }
        self.body: bytes | None = json.dumps(message).encode()
        self.sent: list[Message] = []
        self.gone = asyncio.Event()
        self.task = asyncio.ensure_future(app(self.scope, self.receive, self.send))

    async def receive(self) -> Message:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    def leave(self) -> None:
        self.gone.set()

    @property
    def started(self) -> bool:
        return bool(self.sent)

    async def whole(self, seconds: float = 5) -> tuple[int, dict[str, str], bytes]:
        """The status, headers and whole body, once the app is done."""
        await asyncio.wait_for(asyncio.shield(self.task), seconds)
        start = self.sent[0]
        headers = {k.decode(): v.decode() for k, v in start["headers"]}
        body = b"".join(m.get("body", b"") for m in self.sent[1:])
        return start["status"], headers, body


def messages(headers: dict[str, str], body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a body: one JSON answer, or each SSE event's."""
    if headers["content-type"] == "application/json":
        return [json.loads(body)]
    return [
        json.loads(event.split("data: ", 1)[1])
        for event in body.decode().split("\n\n")
        if "data: " in event and event.split("data: ", 1)[1].strip()
    ]


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


async def opened(app: App) -> str:
    """A handshake-era session opened through ``app``: its id."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
    status, headers, _ = await Exchange(app, init, {}).whole()
    assert status == 200
    session_id = headers["mcp-session-id"]
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    status, _, _ = await Exchange(app, ready, {"mcp-session-id": session_id}).whole()
    assert status == 202
    return session_id


def handshake_call(name: str, rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}}


# -- async handlers ---------------------------------------------------------------------


async def slept(session: ServerSession, event: Event) -> None:
    if isinstance(event, RequestReceived):
        await asyncio.sleep(0.01)
        session.respond(event, TEXT)


def test_an_async_stateless_handler_answers_later_in_one_json_body() -> None:
    async def test() -> None:
        app = App(endpoint(slept))
        status, headers, body = await Exchange(app, call("slow", 3), {}).whole()
        assert (status, headers["content-type"]) == (200, "application/json")
        (answer,) = messages(headers, body)
        assert answer["id"] == 3 and answer["result"]["content"] == TEXT["content"]

    run(test)


def test_an_async_handshake_handler_answers_later_on_its_stream() -> None:
    async def test() -> None:
        app = App(endpoint(slept))
        session_id = await opened(app)
        headers = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
        status, sent, body = await Exchange(app, handshake_call("slow", 4), headers).whole()
        assert status == 200 and sent["mcp-session-id"] == session_id
        (answer,) = messages(sent, body)
        assert answer["id"] == 4 and answer["result"] == TEXT

    run(test)


def test_while_one_handler_waits_another_request_on_the_app_is_served() -> None:
    async def test() -> None:
        go = asyncio.Event()

        async def serve(session: ServerSession, event: Event) -> None:
            if isinstance(event, RequestReceived):
                if event.message.params.name == "slow":  # type: ignore[attr-defined]
                    await go.wait()
                session.respond(event, TEXT)

        app = App(endpoint(serve))
        slow = Exchange(app, call("slow", 1), {})
        _, _, body = await Exchange(app, call("fast", 2), {}).whole()
        assert json.loads(body)["id"] == 2
        assert not slow.task.done()  # still waiting, not in the way
        go.set()
        _, _, body = await slow.whole()
        assert json.loads(body)["id"] == 1

    run(test)


def test_progress_before_a_later_answer_makes_an_event_stream() -> None:
    async def test() -> None:
        go = asyncio.Event()

        async def serve(session: ServerSession, event: Event) -> None:
            if isinstance(event, RequestReceived):
                session.progress(event, 1, total=2)
                await go.wait()
                session.respond(event, TEXT)

        app = App(endpoint(serve))
        exchange = Exchange(app, call("slow", 5, progressToken="p"), {})
        for _ in range(100):
            if exchange.started:
                break
            await asyncio.sleep(0.01)
        assert exchange.sent[0]["status"] == 200  # the stream started before the answer
        go.set()
        _, headers, body = await exchange.whole()
        assert headers["content-type"] == "text/event-stream"
        progress, answer = messages(headers, body)
        assert progress["params"] == {"progressToken": "p", "progress": 1, "total": 2}
        assert answer["id"] == 5 and "result" in answer

    run(test)


def test_a_sync_stateless_handler_may_answer_later_from_a_callback() -> None:
    async def test() -> None:
        def serve(session: ServerSession, event: Event) -> None:
            if isinstance(event, RequestReceived):
                loop = asyncio.get_running_loop()
                loop.call_later(0.02, session.respond, event, TEXT)

        app = App(endpoint(serve))
        _, headers, body = await Exchange(app, call("later", 6), {}).whole()
        (answer,) = messages(headers, body)
        assert answer["id"] == 6 and answer["result"]["content"] == TEXT["content"]

    run(test)


# -- failures ---------------------------------------------------------------------------


def test_an_async_handler_that_raises_answers_32603_with_the_id_and_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def test() -> None:
        async def serve(session: ServerSession, event: Event) -> None:
            await asyncio.sleep(0)
            if isinstance(event, RequestReceived):
                raise RuntimeError("a bug")

        app = App(endpoint(serve))
        status, _, body = await Exchange(app, call("boom", 7), {}).whole()
        answer = json.loads(body)
        assert (status, answer["id"], answer["error"]["code"]) == (200, 7, -32603)

    with caplog.at_level(logging.ERROR, "mcp_schema.http"):
        run(test)
    (record,) = [r for r in caplog.records if r.exc_info]
    assert 'tools/call of tool "boom" (request id 7)' in record.getMessage()


class Unreachable(InProcessBroker):
    """A broker whose store Redis cannot serve: every write fails, its outcome unknown."""

    async def _put(self, key: str, value: bytes, ttl: float) -> None:
        raise BrokerError("Redis did not set within 2 s (its outcome is unknown)")


def test_a_handler_whose_broker_call_fails_answers_503_naming_the_request() -> None:
    async def test() -> None:
        broker = Unreachable()

        async def serve(session: ServerSession, event: Event) -> None:
            if isinstance(event, RequestReceived):
                await broker.put("toggled", b"1", 30)  # raises: the session answers the error
                session.respond(event, TEXT)

        app = App(endpoint(serve))
        status, _, body = await Exchange(app, call("toggle", 7), {}).whole()
        answer = json.loads(body)
        assert (status, answer["id"], answer["error"]["code"]) == (503, 7, -32603)

    run(test)


def test_in_a_session_a_broker_failure_known_before_the_answer_starts_is_503() -> None:
    async def test() -> None:
        def serve(session: ServerSession, event: Event) -> None:
            if isinstance(event, RequestReceived):
                raise BrokerError("Redis did not set within 2 s (its outcome is unknown)")

        app = App(endpoint(serve))
        session_id = await opened(app)
        asked = Exchange(app, handshake_call("toggle", 8), {"mcp-session-id": session_id})
        status, headers, body = await asked.whole()
        (answer,) = messages(headers, body)
        assert (status, answer["id"], answer["error"]["code"]) == (503, 8, -32603)
        assert headers["mcp-session-id"] == session_id  # the session lives on

    run(test)


def test_a_request_never_answered_gets_32603_after_the_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cancelled: list[bool] = []

    async def test() -> None:
        async def serve(session: ServerSession, event: Event) -> None:
            if isinstance(event, RequestReceived):
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    cancelled.append(True)
                    raise

        app = App(endpoint(serve, answer_seconds=0.05))
        _, _, body = await Exchange(app, call("forever", 8), {}).whole()
        answer = json.loads(body)
        assert (answer["id"], answer["error"]["code"]) == (8, -32603)
        await asyncio.sleep(0)

    with caplog.at_level(logging.WARNING, "mcp_schema.http"):
        run(test)
    assert cancelled == [True]
    (line,) = [r.getMessage() for r in caplog.records if "no answer" in r.getMessage()]
    assert 'tools/call of tool "forever" (request id 8)' in line


def test_a_sync_handler_that_never_answers_gets_32603_after_the_bound() -> None:
    async def test() -> None:
        seen: list[Event] = []
        app = App(endpoint(lambda session, event: seen.append(event), answer_seconds=0.05))
        _, _, body = await Exchange(app, call("silent", 9), {}).whole()
        assert json.loads(body)["error"]["code"] == -32603
        assert isinstance(seen[-1], CancelRequested)  # the handler hears it is over

    run(test)


@pytest.mark.parametrize(
    ("late", "status", "said"),
    [(None, 200, "Internal error"), (GatewayTimeoutError, 504, "Gateway timeout")],
)
def test_the_answer_past_the_bound_is_the_endpoints_late_error(
    late: type[InternalError] | None, status: int, said: str
) -> None:
    async def test() -> None:
        served = endpoint(lambda session, event: None, answer_seconds=0.05)
        if late is not None:
            served.late = late
        answered, _, body = await Exchange(App(served), call("silent", 9), {}).whole()
        assert answered == status
        error = json.loads(body)["error"]
        assert (error["code"], error["message"]) == (-32603, f"{said}: no answer within 0.05 s")

    run(test)


def test_the_late_error_is_an_internal_error() -> None:
    served = endpoint(lambda session, event: None)
    for wrong in (InvalidParamsError, ValueError, InternalError("an instance")):
        with pytest.raises(TypeError, match="late must be InternalError"):
            served.late = wrong  # type: ignore[assignment]
    assert served.late is InternalError  # a refused one changes nothing


def test_a_lost_stream_cancels_the_handlers_task() -> None:
    async def test() -> None:
        cancelled = asyncio.Event()
        seen: list[Event] = []

        async def serve(session: ServerSession, event: Event) -> None:
            seen.append(event)
            if isinstance(event, RequestReceived):
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    cancelled.set()
                    raise

        served = endpoint(serve)
        exchange = Exchange(App(served), call("forever", 10), {})
        await asyncio.sleep(0.05)
        assert served.waiting == 1
        exchange.leave()
        await asyncio.wait_for(cancelled.wait(), 5)
        await exchange.task
        assert isinstance(seen[-1], CancelRequested) and seen[-1].request.id == 10
        assert served.waiting == 0

    run(test)


def test_past_max_waiting_a_request_is_refused_before_its_handler_runs() -> None:
    async def test() -> None:
        ran: list[object] = []

        async def serve(session: ServerSession, event: Event) -> None:
            if isinstance(event, RequestReceived):
                ran.append(event.id)
                await asyncio.Event().wait()

        served = endpoint(serve, max_waiting=1)
        app = App(served)
        first = Exchange(app, call("forever", 11), {})
        await asyncio.sleep(0.05)
        status, headers, body = await Exchange(app, call("forever", 12), {}).whole()
        answer = json.loads(body)
        assert (status, answer["id"], answer["error"]["code"]) == (429, 12, -31429)
        assert headers["retry-after"] == "5"
        assert "1 requests awaiting their answer" in answer["error"]["message"]
        assert ran == [11]
        first.leave()
        await first.task

    run(test)


def test_shutting_down_answers_what_waits_and_cancels_the_tasks() -> None:
    async def test() -> None:
        async def serve(session: ServerSession, event: Event) -> None:
            if isinstance(event, RequestReceived):
                await asyncio.Event().wait()

        served = endpoint(serve)
        exchange = Exchange(App(served), call("forever", 13), {})
        await asyncio.sleep(0.05)
        await served.aclose()
        _, _, body = await exchange.whole()
        answer = json.loads(body)
        assert (answer["id"], answer["error"]["code"]) == (13, -32603)
        assert served.waiting == 0

    run(test)


# -- the sans-IO handle ------------------------------------------------------------------


def test_handle_with_no_event_loop_refuses_an_async_handler() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the coroutine is closed, not left unawaited
        response = post(endpoint(slept), call("slow", 14))
    answer = json.loads(response.body)
    assert (answer["id"], answer["error"]["code"]) == (14, -32603)
    assert "handle_async" in answer["error"]["message"]


def test_handle_with_no_event_loop_answers_an_unanswered_stateless_request_at_once() -> None:
    response = post(endpoint(lambda session, event: None), call("silent", 15))
    assert json.loads(response.body)["error"]["code"] == -32603


def test_handle_in_an_event_loop_streams_an_async_handlers_answer() -> None:
    async def test() -> None:
        response = post(endpoint(slept), call("slow", 16))
        stream = response.stream
        assert stream is not None and not stream.finished
        for _ in range(100):
            if stream.finished:
                break
            await asyncio.sleep(0.01)
        assert json.loads(stream.take().split(b"data: ", 1)[1])["id"] == 16

    run(test)
