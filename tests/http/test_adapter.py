"""`mcp_schema.http.adapter`, the ASGI kit of every front door: the body
reader's size limit and deadline, the forwarding of header fields, SSE
framing, and lifespan; driven with ASGI messages, no server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.http import Endpoint
from mcp_schema.http.adapter import (
    HOP_BY_HOP,
    Message,
    end_to_end,
    read_body,
    read_head,
    serve_lifespan,
    sse_event,
)
from mcp_schema.http.asgi import App
from mcp_schema.http.sse import EventReader
from mcp_schema.http.stream import Response
from mcp_schema.session import Event, ServerSession


def chunks(*parts: bytes, hang: bool = False) -> Callable[[], Awaitable[Message]]:
    """An ASGI ``receive`` giving ``parts`` as one body; with ``hang``, the
    body never finishes (the client stops sending)."""
    queue = list(parts)

    async def receive() -> Message:
        if queue:
            part = queue.pop(0)
            return {"type": "http.request", "body": part, "more_body": bool(queue) or hang}
        await asyncio.Event().wait()  # nothing more ever comes
        raise AssertionError("unreachable")

    return receive


def run(coroutine: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 10))


def test_a_body_is_read_whole_across_chunks() -> None:
    assert run(read_body(chunks(b"ab", b"cd", b"e"), 10)) == b"abcde"


def test_a_body_past_the_limit_is_refused_before_it_ends() -> None:
    refused = run(read_body(chunks(b"x" * 6, b"x" * 6, hang=True), 10))
    assert isinstance(refused, Response) and refused.status == 413
    assert json.loads(refused.body)["error"]["code"] == -32600


def test_a_body_not_whole_in_time_is_refused_408() -> None:
    async def timed() -> tuple[object, float]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        read = await read_body(chunks(b"{", hang=True), 100, seconds=0.2)
        return read, loop.time() - started

    refused, took = run(timed())
    assert isinstance(refused, Response) and refused.status == 408
    assert b"0.2 s" in refused.body
    assert 0.15 < took < 2.0


def test_a_body_that_never_starts_is_refused_408() -> None:
    async def nothing() -> Message:
        await asyncio.Event().wait()  # the head came, the body never does
        raise AssertionError("unreachable")

    refused = run(read_body(nothing, 100, seconds=0.05))
    assert isinstance(refused, Response) and refused.status == 408


def test_a_body_there_already_is_read_without_a_timer() -> None:
    async def read() -> tuple[object, int]:
        loop = asyncio.get_running_loop()
        armed = 0
        call_later = loop.call_later

        def counted(*args: Any) -> asyncio.TimerHandle:
            nonlocal armed
            armed += 1
            return call_later(*args)

        loop.call_later = counted  # type: ignore[method-assign,assignment]
        whole = await read_body(chunks(b"ab", b"cd"), 10, seconds=5)
        return whole, armed

    assert run(read()) == (b"abcd", 0)


def test_a_body_that_waits_is_read_whole_after_the_wait() -> None:
    async def read() -> object:
        queue: asyncio.Queue[Message] = asyncio.Queue()

        async def later() -> None:
            await asyncio.sleep(0.01)
            await queue.put({"type": "http.request", "body": b"ab", "more_body": True})
            await asyncio.sleep(0.01)
            await queue.put({"type": "http.request", "body": b"cd", "more_body": False})

        feeding = asyncio.ensure_future(later())
        whole = await read_body(queue.get, 10, seconds=5)
        await feeding
        return whole

    assert run(read()) == b"abcd"


def test_the_deadline_leaves_the_task_uncancelled() -> None:
    async def read_then_sleep() -> bool:
        await read_body(chunks(b"{", hang=True), 100, seconds=0.05)
        await asyncio.sleep(0.01)  # would raise CancelledError if the cancel leaked
        return True

    assert run(read_then_sleep())


def test_a_cancellation_from_outside_still_cancels() -> None:
    async def cancelled() -> bool:
        task = asyncio.ensure_future(read_body(chunks(b"{", hang=True), 100, seconds=5))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True
        return False

    assert run(cancelled())


def test_the_client_leaving_is_none() -> None:
    async def receive() -> Message:
        return {"type": "http.disconnect"}

    assert run(read_body(receive, 10)) is None


def test_a_head_past_the_limit_says_more_is_to_come() -> None:
    assert run(read_head(chunks(b"x" * 6, b"y" * 6, b"z"), 10)) == (b"x" * 6 + b"y" * 6, True)
    assert run(read_head(chunks(b"abc"), 10)) == (b"abc", False)


def test_the_app_answers_a_slow_body_408() -> None:
    def serve(session: ServerSession, event: Event) -> None:
        raise AssertionError("a body that never came reached the handler")

    app = App(Endpoint(serve, info={"name": "t", "version": "1"}), body_seconds=0.1)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
        ],
        "server": ("127.0.0.1", 8000),
    }
    run(app(scope, chunks(b'{"jsonrpc":', hang=True), send))
    assert sent[0]["status"] == 408


NAME = st.from_regex(rb"[a-z][a-z0-9-]{0,12}", fullmatch=True)


def test_hop_by_hop_fields_and_those_connection_names_are_dropped() -> None:
    headers = [
        (b"connection", b"keep-alive, X-Secret , close"),
        (b"x-secret", b"1"),
        (b"keep-alive", b"timeout=5"),
        (b"transfer-encoding", b"chunked"),
        (b"upgrade", b"h2c"),
        (b"te", b"trailers"),
        (b"host", b"a.test"),
        (b"mcp-session-id", b"s"),
    ]
    assert end_to_end(headers, {b"host"}) == [(b"mcp-session-id", b"s")]


@given(st.lists(st.tuples(NAME, st.binary(max_size=20)), max_size=12), st.sets(NAME, max_size=4))
def test_what_is_forwarded_is_exactly_the_end_to_end_fields(
    headers: list[tuple[bytes, bytes]], named: set[bytes]
) -> None:
    sent = [*headers, (b"connection", b", ".join(sorted(named)))] if named else headers
    connection = {
        part.strip() for name, value in sent if name == b"connection" for part in value.split(b",")
    }
    kept = end_to_end(sent)
    assert kept == [(k, v) for k, v in sent if k not in HOP_BY_HOP and k not in connection]


@given(st.binary(max_size=200))
def test_an_event_reads_back_as_the_data_it_was_given(data: bytes) -> None:
    # Every line break reads back as LF (the SSE rules join data lines with LF).
    expected = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    assert EventReader().feed(sse_event(data)) == [expected]
    assert EventReader().feed(sse_event(data, b"7-1")) == [expected]


def lifespan(messages: list[str]) -> tuple[Callable[[], Awaitable[Message]], list[Message]]:
    queue = [{"type": f"lifespan.{m}"} for m in messages]
    sent: list[Message] = []

    async def receive() -> Message:
        return queue.pop(0)

    return receive, sent


def test_lifespan_runs_startup_then_shutdown() -> None:
    done: list[str] = []

    async def startup() -> None:
        done.append("up")

    async def shutdown() -> None:
        done.append("down")

    receive, sent = lifespan(["startup", "shutdown"])
    run(serve_lifespan(receive, _sender(sent), startup, shutdown))
    assert done == ["up", "down"]
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_a_startup_that_raises_fails_saying_why() -> None:
    async def startup() -> None:
        raise RuntimeError("the command cannot be served: no such file")

    receive, sent = lifespan(["startup"])
    run(serve_lifespan(receive, _sender(sent), startup))
    assert sent == [
        {"type": "lifespan.startup.failed", "message": "the command cannot be served: no such file"}
    ]


def _sender(sent: list[Message]) -> Callable[[Message], Awaitable[None]]:
    async def send(message: Message) -> None:
        sent.append(message)

    return send


@pytest.mark.parametrize("seconds", [0, -1.0])
def test_the_body_deadline_must_be_positive(seconds: float) -> None:
    endpoint = Endpoint(lambda s, e: None, info={"name": "t", "version": "1"})
    with pytest.raises(ValueError, match="body_seconds"):
        App(endpoint, body_seconds=seconds)
