"""``examples/http_server.py``: a stateless call touches the shared store 0
times. Its replica is built on a broker that counts every operation (reads,
writes, publishes, subscriptions), started, then sent 2026-07-28 calls of
every tool that needs no change and no client round, the lists, a resource
read and a prompt, through the ASGI app: the count does not move. (A change,
``toggle``, is a compare-and-set by design; the retry of an input-required
round claims its state once, against replays.)"""

from __future__ import annotations

import asyncio
import json
import runpy
from pathlib import Path
from typing import Any

import pytest

import mcp_schema.server.app as server_app
from mcp_schema.broker import InProcessBroker, Subscription
from mcp_schema.http_headers import request_headers
from tests.server.serving import message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "http_server.py"


class Counting(InProcessBroker):
    """The in-process broker, each public operation counted."""

    touched = 0

    async def get(self, key: str) -> bytes | None:
        Counting.touched += 1
        return await super().get(key)

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        Counting.touched += 1
        await super().put(key, value, ttl)

    async def put_if_absent(self, key: str, value: bytes, ttl: float) -> bool:
        Counting.touched += 1
        return await super().put_if_absent(key, value, ttl)

    async def compare_and_set(self, key: str, expected: bytes, value: bytes, ttl: float) -> bool:
        Counting.touched += 1
        return await super().compare_and_set(key, expected, value, ttl)

    async def delete(self, key: str) -> bool:
        Counting.touched += 1
        return await super().delete(key)

    async def claim(self, token_id: str, expires_at: float) -> bool:
        Counting.touched += 1
        return await super().claim(token_id, expires_at)

    async def publish(self, channel: str, data: bytes) -> bool:
        Counting.touched += 1
        return await super().publish(channel, data)

    def subscribe(self, *channels: str, max_queued: int = 1024) -> Subscription:
        Counting.touched += 1
        return super().subscribe(*channels, max_queued=max_queued)


async def call(app: Any, value: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps(value).encode()
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **{k.lower(): v for k, v in request_headers(value).items()},
    }
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
    }
    sent: list[dict[str, Any]] = []
    done = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if not sent:
            return {"type": "http.request", "body": body}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)
        if event["type"] == "http.response.body" and not event.get("more_body"):
            done.set()

    await asyncio.wait_for(app(scope, receive, send), 10)
    answer: dict[str, Any] = json.loads(b"".join(e.get("body", b"") for e in sent[1:]))
    return answer


async def lifespan(app: Any, inbox: asyncio.Queue[dict[str, Any]]) -> asyncio.Task[None]:
    """The app's lifespan, its startup done."""
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    running: asyncio.Task[None] = asyncio.ensure_future(
        app({"type": "lifespan"}, inbox.get, outbox.put)
    )
    await inbox.put({"type": "lifespan.startup"})
    started = await asyncio.wait_for(outbox.get(), 10)
    assert started["type"] == "lifespan.startup.complete"
    return running


def test_a_stateless_call_touches_the_shared_store_zero_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MCP_REDIS_URL", raising=False)
    monkeypatch.setattr(server_app, "InProcessBroker", Counting)
    Counting.touched = 0
    server = runpy.run_path(str(EXAMPLE), run_name="example")["server"]
    calls = [
        message("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        message("tools/call", {"name": "divide", "arguments": {"a": 1, "b": 2}}),
        message("tools/call", {"name": "count", "arguments": {}}),
        message("tools/call", {"name": "long_count", "arguments": {}}),  # no task taken
        message("tools/list"),
        message("resources/list"),
        message("resources/read", {"uri": "config://app"}),
        message("prompts/get", {"name": "review", "arguments": {"code": "x"}}),
    ]

    async def test() -> list[dict[str, Any]]:
        app = server.asgi(env={})
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        running = await lifespan(app, inbox)
        try:
            assert Counting.touched > 0  # the start read the tool set, the relay subscribed
            Counting.touched = 0
            answers = [await call(app, value) for value in calls for _ in range(2)]
            assert Counting.touched == 0
        finally:
            await inbox.put({"type": "lifespan.shutdown"})
            await asyncio.wait_for(running, 10)
        return answers

    answers = asyncio.run(test())
    assert all("result" in a and not a["result"].get("isError") for a in answers), answers
    assert answers[0]["result"]["structuredContent"] == {"text": "hi"}
