"""The share of live tasks (`TaskServer`'s ``max_live`` and
``max_live_per_key``, `mcp_schema.shares`): one anonymous client's tasks
waiting for input fill its own share, never the others' (the store has no
bound of its own for the empty principal, which every anonymous caller
shares); a task that ends gives its place back; the server's bound holds."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp_schema.http import Endpoint
from mcp_schema.http.caller import Caller
from mcp_schema.http_headers import request_headers
from mcp_schema.tasks import MemoryTaskStore, TaskServer
from tests.tasks.serving import BASE, VERSION, Jobs, request, settled

ALICE, BOB = Caller(address="192.0.2.1"), Caller(address="192.0.2.2")


def served(jobs: Jobs, **bounds: Any) -> Endpoint:
    return Endpoint(
        jobs.handler,
        info={"name": "tasks-test", "version": "1"},
        capabilities={"tools": {}},
        versions=[VERSION],
        tasks=TaskServer(MemoryTaskStore(), lease_seconds=1.0, **bounds),
    )


async def call(ep: Endpoint, caller: Caller, **arguments: Any) -> tuple[int, dict[str, Any]]:
    """The status and answer of a ``job`` call sent by ``caller``."""
    message = request("tools/call", {"name": "job", "arguments": arguments})
    headers = {**BASE, **request_headers(message)}
    response = await ep.handle_async(
        "POST", "/mcp", headers, json.dumps(message).encode(), caller=caller
    )
    response = ep.settled(response)
    answer: dict[str, Any] = json.loads(response.body)
    return response.status, answer


def test_tasks_waiting_for_input_fill_one_clients_share_only() -> None:
    async def test() -> None:
        jobs = Jobs()
        ep = served(jobs)  # the defaults: 1,000 tasks at work, 100 per caller
        for _ in range(100):
            status, created = await call(ep, ALICE, ask=True)
            assert status == 200 and created["result"]["resultType"] == "task"
        status, refused = await call(ep, ALICE, ask=True)
        assert status == 429 and refused["id"] == 7
        assert refused["error"]["code"] == -31429
        assert refused["error"]["data"] == {"table": "live tasks", "retryAfter": 5}
        status, bobs = await call(ep, BOB, ask=True)  # the store's empty principal is not full
        assert status == 200 and bobs["result"]["resultType"] == "task"
        assert ep.tasks is not None and ep.tasks.running == 101
        await ep.tasks.stop()
        assert len(ep.tasks.share) == 0  # every task's place given back

    asyncio.run(test())


def test_a_task_that_ends_gives_its_place_back_and_the_total_holds() -> None:
    async def test() -> None:
        jobs = Jobs()
        ep = served(jobs, max_live=3, max_live_per_key=2)
        first = (await call(ep, ALICE))[1]["result"]["taskId"]
        await call(ep, ALICE)
        assert (await call(ep, ALICE))[0] == 429
        assert (await call(ep, BOB))[0] == 200
        status, full = await call(ep, Caller(address="192.0.2.3"))
        assert status == 429 and "the server holds 3 live tasks" in full["error"]["message"]
        jobs.go.set()  # every task completes: their places come back
        await settled(ep, first, "completed")
        for _ in range(100):
            if ep.tasks is not None and ep.tasks.running == 0:
                break
            await asyncio.sleep(0.01)
        assert (await call(ep, ALICE))[0] == 200

    asyncio.run(test())
