"""Hostile input to `TaskServer` behind an `Endpoint`: forged task ids,
another principal's task, answers of the wrong type, updates after the end,
a flood of tasks from one principal, a result too large to keep. Each ends
in a typed error or is ignored as the extension says, and nothing is stored
that should not be (the record's revision is the witness)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.http_headers import request_headers
from mcp_schema.tasks import MemoryTaskStore
from mcp_schema.tasks.protocol import NO_SUCH_TASK
from tests.hostile import raw
from tests.tasks.serving import BASE, Jobs, endpoint, get, post, request, settled, start


def run(test: Any) -> Any:
    return asyncio.run(asyncio.wait_for(test(), 5))


@settings(max_examples=25, deadline=None)
@given(st.text(max_size=40) | st.just("x" * 100_000))
def test_a_forged_task_id_is_unknown(forged: str) -> None:
    async def test() -> None:
        served = endpoint(Jobs())
        for method in ("tasks/get", "tasks/cancel"):
            found = await post(served, request(method, {"taskId": forged}))
            assert found["error"] == {"code": -32602, "message": NO_SUCH_TASK}
        update = request("tasks/update", {"taskId": forged, "inputResponses": {}})
        assert (await post(served, update))["error"]["code"] == -32602

    run(test)


def test_a_task_id_of_the_wrong_type_is_invalid_params() -> None:
    async def test() -> None:
        served = endpoint(Jobs())
        value = request("tasks/get", {"taskId": "t"})
        headers = {**BASE, **request_headers(value)}
        value["params"]["taskId"] = ["t"]
        response = await served.handle_async("POST", "/mcp", headers, raw(value))
        assert response.status == 400
        assert json.loads(response.body)["error"]["code"] == -32602

    run(test)


def test_another_principals_task_is_answered_as_unknown() -> None:
    async def test() -> None:
        store = MemoryTaskStore()
        served = endpoint(Jobs(), store, principal="alice")
        task_id = await start(served)
        theirs = await get(served, task_id, **{"x-user": "mallory"})
        unknown = await get(served, "no-such-task", **{"x-user": "mallory"})
        assert theirs["error"] == unknown["error"] == {"code": -32602, "message": NO_SUCH_TASK}
        cancel = request("tasks/cancel", {"taskId": task_id})
        assert (await post(served, cancel, **{"x-user": "mallory"}))["error"]["code"] == -32602
        kept = await store.get(task_id, "alice")
        assert kept is not None and kept.status == "working" and kept.revision == 1

    run(test)


def test_an_answer_of_the_wrong_type_is_refused_and_nothing_stored() -> None:
    async def test() -> None:
        store = MemoryTaskStore()
        served = endpoint(Jobs(), store)
        task_id = await start(served, ask=True)
        await settled(served, task_id, "input_required")
        before = await store.get(task_id, "")
        assert before is not None
        for wrong in ({"action": 5}, {"action": "accept", "content": "no object"}, [1]):
            answer = {"go": wrong}
            refused = await post(
                served, request("tasks/update", {"taskId": task_id, "inputResponses": answer})
            )
            assert refused["error"]["code"] == -32602, wrong
            assert (
                '"go"' in str(refused["error"])
                or "go" in refused["error"]["data"]["errors"][0]["path"]
            )
        after = await store.get(task_id, "")
        assert after == before

    run(test)


def test_updates_after_the_end_are_ignored_and_nothing_stored() -> None:
    async def test() -> None:
        store = MemoryTaskStore()
        jobs = Jobs()
        served = endpoint(jobs, store)
        jobs.go.set()
        task_id = await start(served)
        await settled(served, task_id, "completed")
        done = await store.get(task_id, "")
        answer = {"go": {"action": "accept", "content": {}}}
        ack = await post(
            served, request("tasks/update", {"taskId": task_id, "inputResponses": answer})
        )
        assert ack["result"]["resultType"] == "complete"
        assert (await post(served, request("tasks/cancel", {"taskId": task_id})))["result"]
        assert await store.get(task_id, "") == done

    run(test)


def test_a_flood_of_tasks_from_one_principal_is_bounded() -> None:
    async def test() -> None:
        store = MemoryTaskStore(max_live_per_principal=3)
        served = endpoint(Jobs(), store, principal="alice")
        for _ in range(3):
            await start(served)
        refused = await post(served, request("tools/call", {"name": "job", "arguments": {}}))
        assert refused["error"]["code"] == -32603 and "live tasks" in refused["error"]["message"]
        assert served.tasks is not None and served.tasks.running == 3
        await served.tasks.stop()

    run(test)


def test_a_result_too_large_to_keep_fails_the_task_with_a_typed_error() -> None:
    async def test() -> None:
        store = MemoryTaskStore(max_record=4096)
        jobs = Jobs()
        served = endpoint(jobs, store)
        jobs.go.set()
        task_id = await start(served, size=10_000)
        failed = await settled(served, task_id, "failed")
        assert failed["error"]["code"] == -32603 and "too large" in failed["error"]["message"]
        assert "result" not in failed

    run(test)
