"""`mcp_schema.server.dispatch` on an event loop: async functions await it
and sync ones run in a worker thread, so one slow call never stalls another
on the app (but those declared ``inline``, run in the loop and answered at once); a call past the bound is cancelled, answered -32603 and logged;
where no loop runs, an async function that waits on one is told it cannot."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

import pytest

from mcp_schema.codec import encode
from mcp_schema.server import Server
from mcp_schema.session import ServerSession
from tests.http.test_answers import Exchange
from tests.server.serving import BASE, message, post, replica, text


def waiting() -> tuple[Server, dict[str, Any]]:
    server = Server("async-test", timeout=0.2)
    seen: dict[str, Any] = {"go": asyncio.Event(), "thread": threading.Event()}

    @server.tool()
    async def slow() -> str:
        await seen["go"].wait()  # until the test lets it go
        return "slow done"

    @server.tool()
    def blocking() -> str:
        seen["thread"].wait(5)  # blocks its thread, not the loop
        seen["ran_in"] = threading.current_thread()
        return "blocking done"

    @server.tool()
    def fast() -> str:
        return "fast done"

    @server.tool()
    async def never() -> str:
        await asyncio.Event().wait()
        return "never"

    return server, seen


def call(name: str, id: int = 7) -> dict[str, Any]:
    return message("tools/call", {"name": name, "arguments": {}}, id=id)


def test_an_async_tool_that_waits_does_not_stall_a_call_beside_it() -> None:
    server, seen = waiting()
    served = replica(server)

    async def test() -> list[str]:
        slow = asyncio.ensure_future(post(served, call("slow", 1)))
        fast = await post(served, call("fast", 2))  # answered while slow still waits
        assert not slow.done()
        seen["go"].set()
        return [text(fast["result"]), text((await slow)["result"])]

    assert asyncio.run(test()) == ["fast done", "slow done"]


def test_a_sync_tool_runs_in_a_worker_thread() -> None:
    server, seen = waiting()
    served = replica(server)

    async def test() -> list[str]:
        blocking = asyncio.ensure_future(post(served, call("blocking", 1)))
        fast = await post(served, call("fast", 2))  # the loop is free meanwhile
        seen["thread"].set()
        return [text(fast["result"]), text((await blocking)["result"])]

    assert asyncio.run(test()) == ["fast done", "blocking done"]
    assert seen["ran_in"] is not threading.main_thread()


def test_an_inline_sync_function_runs_in_the_loop_and_is_answered_at_once() -> None:
    server = Server("inline-test", inline=True)
    ran: dict[str, threading.Thread] = {}

    @server.tool()
    def here() -> str:
        ran["here"] = threading.current_thread()
        return "here"

    @server.tool(inline=False)  # the item's own choice over the server's
    def threaded() -> str:
        ran["threaded"] = threading.current_thread()
        return "threaded"

    @server.resource("config://here")
    def config() -> str:
        ran["config"] = threading.current_thread()
        return "{}"

    @server.prompt()
    def greet() -> str:
        ran["greet"] = threading.current_thread()
        return "Hi"

    session = ServerSession(
        info=server.info, capabilities=server.capabilities, handler_version="2026-07-28"
    )

    async def test() -> list[bool]:
        answered = []
        reads = [
            call("here", 1),
            call("threaded", 2),
            message("resources/read", {"uri": "config://here"}, id=3),
            message("prompts/get", {"name": "greet"}, id=4),
        ]
        for request in reads:
            *_, event = session.receive(encode(request))
            rest = server.handler(session, event)
            answered.append(rest is None)  # None: answered now, nothing left to await
            if rest is not None:
                await rest
        return answered

    assert asyncio.run(test()) == [True, False, True, True]
    assert ran["threaded"] is not threading.main_thread()
    assert all(ran[n] is threading.main_thread() for n in ("here", "config", "greet"))


def test_a_call_past_the_bound_is_cancelled_answered_with_its_id_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, _ = waiting()
    served = replica(server)
    with caplog.at_level(logging.WARNING, logger="mcp_schema.http"):
        answer = asyncio.run(post(served, call("never", 9)))
    assert answer["id"] == 9 and answer["error"]["code"] == -32603
    assert "0.2 s" in answer["error"]["message"]
    (record,) = [r for r in caplog.records if "no answer" in r.getMessage()]
    assert '"never"' in record.getMessage() and "9" in record.getMessage()


def test_where_no_loop_runs_an_async_tool_that_waits_on_one_is_told_it_cannot() -> None:
    server, _ = waiting()

    @server.tool()
    async def yields() -> str:
        await asyncio.sleep(0)  # hands the loop its turn: none is there
        return "never"

    served = replica(server)
    headers = {**BASE, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}

    def handled(name: str) -> dict[str, Any]:  # Endpoint.handle, from plain code
        sent = {**headers, "mcp-name": name}
        answer = served.handle("POST", "/mcp", sent, json.dumps(call(name, 3)).encode())
        found: dict[str, Any] = json.loads(answer.body)
        return found

    refused = handled("yields")
    assert refused["id"] == 3 and refused["error"]["code"] == -32603
    assert "awaited more than its context" in refused["error"]["message"]
    assert (
        text(handled("fast")["result"]) == "fast done"
    )  # a sync tool runs there, in the caller's thread


def test_server_handle_awaits_what_the_function_awaits() -> None:
    server, seen = waiting()
    session = ServerSession(
        info=server.info, capabilities=server.capabilities, handler_version="2026-07-28"
    )

    async def test() -> dict[str, Any]:
        *_, event = session.receive(encode(call("slow", 4)))  # after Negotiated
        served = asyncio.ensure_future(server.handle(session, event))
        await asyncio.sleep(0)
        assert not served.done()
        seen["go"].set()
        await served
        (frame,) = session.data_to_send()
        answer: dict[str, Any] = json.loads(frame)
        return answer

    assert text(asyncio.run(test())["result"]) == "slow done"


def test_a_client_that_leaves_cancels_the_function_it_waits_for() -> None:
    server = Server("leaving")
    cancelled = asyncio.Event()

    @server.tool()
    async def forever() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    async def test() -> None:
        exchange = Exchange(server.asgi(env={}), call("forever", 10), {})
        await asyncio.sleep(0.05)
        exchange.leave()
        await asyncio.wait_for(cancelled.wait(), 5)
        await exchange.task

    asyncio.run(test())


def test_a_stateless_call_is_answered_in_one_json_body() -> None:
    server, _ = waiting()

    async def test() -> tuple[int, dict[str, str], bytes]:
        app = server.asgi(env={})
        return await Exchange(app, call("fast", 11), {}).whole()

    status, headers, body = asyncio.run(test())
    assert (status, headers["content-type"]) == (200, "application/json")
    assert text(json.loads(body)["result"]) == "fast done"
