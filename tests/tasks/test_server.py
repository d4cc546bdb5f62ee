"""`TaskServer` behind `Endpoint(tasks=)`: a call answered with a task, then
followed through ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` to each
end the extension has (completed, failed, cancelled, a dead worker failed on
another replica), and the capability rules (-32021)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_schema.errors import UnavailableError
from mcp_schema.session import CapabilityError, RequestReceived, ServerSession
from mcp_schema.tasks import MemoryTaskStore, TaskServer
from mcp_schema.tasks.store import WORKER_STOPPED
from mcp_schema.versions import TASKS_EXTENSION
from tests.tasks.serving import (
    PLAIN,
    Jobs,
    endpoint,
    get,
    post,
    request,
    settled,
    start,
)


def run(test: Any) -> Any:
    return asyncio.run(asyncio.wait_for(test(), 5))


def test_a_task_from_creation_to_its_result() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs)
        created = await post(served, request("tools/call", {"name": "job", "arguments": {}}))
        task = created["result"]
        assert task["resultType"] == "task" and task["status"] == "working"
        assert task["pollIntervalMs"] == 10 and task["ttlMs"] == 3_600_000
        assert task["createdAt"].endswith("Z")
        assert not {"result", "error", "inputRequests"} & set(task)
        working = await settled(served, task["taskId"], "working")
        assert working["resultType"] == "complete" and "result" not in working
        jobs.go.set()
        done = await settled(served, task["taskId"], "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "done"}]
        assert done["result"]["resultType"] == "complete"

    run(test)


def test_input_through_tasks_update() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs)
        jobs.go.set()
        task_id = await start(served, ask=True)
        waiting = await settled(served, task_id, "input_required")
        assert waiting["statusMessage"] == "waiting"
        assert waiting["inputRequests"]["go"]["method"] == "elicitation/create"
        answer = {"go": {"action": "accept", "content": {"go": True}}, "other": {"x": 1}}
        ack = await post(
            served, request("tasks/update", {"taskId": task_id, "inputResponses": answer})
        )
        assert ack["result"] == {"resultType": "complete", "_meta": ack["result"]["_meta"]}
        done = await settled(served, task_id, "completed")
        assert done["statusMessage"] == "answered accept"

    run(test)


def test_an_error_of_the_work_fails_the_task_with_it() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs)
        jobs.go.set()
        failed = await settled(served, await start(served, fail=True), "failed")
        assert failed["error"]["code"] == -32602
        assert "result" not in failed

    run(test)


def test_an_invalid_result_fails_the_task_with_an_internal_error() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs)
        jobs.go.set()
        failed = await settled(served, await start(served, bad=True), "failed")
        assert (
            failed["error"]["code"] == -32603
            and "not a valid tools/call" in failed["error"]["message"]
        )

    run(test)


def test_cancel_ends_the_task_and_its_work_and_is_idempotent() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs)
        task_id = await start(served)
        for _ in range(2):  # a terminal task acknowledges alike
            ack = await post(served, request("tasks/cancel", {"taskId": task_id}))
            assert ack["result"]["resultType"] == "complete" and "taskId" not in ack["result"]
        assert (await settled(served, task_id, "cancelled"))["status"] == "cancelled"
        jobs.go.set()  # the work may finish now: the task stays cancelled
        await asyncio.sleep(0.05)
        assert (await get(served, task_id))["result"]["status"] == "cancelled"
        assert served.tasks is not None
        for _ in range(200):  # the lost lease stops the work
            if not served.tasks.running:
                break
            await asyncio.sleep(0.01)
        assert served.tasks.running == 0

    run(test)


def test_a_dead_worker_is_reported_failed_by_another_replica() -> None:
    async def test() -> None:
        now = [1_000_000.0]
        store = MemoryTaskStore(clock=lambda: now[0])
        one, other = endpoint(Jobs(), store), endpoint(Jobs(), store)
        assert one.tasks is not None and other.tasks is not None
        one.tasks.clock = other.tasks.clock = store.clock
        task_id = await start(one)
        await one.tasks.stop()  # its process dies: no more heartbeats
        assert (await get(other, task_id))["result"]["status"] == "working"
        now[0] += 2  # past the lease
        failed = (await get(other, task_id))["result"]
        assert failed["status"] == "failed" and failed["statusMessage"] == WORKER_STOPPED
        assert failed["error"]["code"] == -32603

    run(test)


def test_without_the_extension_a_call_is_ordinary_and_tasks_are_refused() -> None:
    async def test() -> None:
        served = endpoint(Jobs())
        plain = await post(served, request("tools/call", {"name": "job", "arguments": {}}, PLAIN))
        assert plain["result"]["content"][0]["text"] == "at once"
        required = await post(served, request("tools/call", {"name": "required"}, PLAIN))
        assert required["error"]["code"] == -32021
        wanted = required["error"]["data"]["requiredCapabilities"]
        assert wanted == {"extensions": {TASKS_EXTENSION: {}}}
        for method, params in (
            ("tasks/get", {"taskId": "x"}),
            ("tasks/update", {"taskId": "x", "inputResponses": {}}),
            ("tasks/cancel", {"taskId": "x"}),
        ):
            refused = await post(served, request(method, params, PLAIN))
            assert refused["error"]["code"] == -32021, method

    run(test)


def test_the_server_declares_the_extension() -> None:
    async def test() -> None:
        served = endpoint(Jobs())
        found = await post(served, request("server/discover", {}))
        assert found["result"]["capabilities"]["extensions"] == {TASKS_EXTENSION: {}}

    run(test)


def test_run_as_task_needs_a_declaring_client_and_queues_nothing_until_stored() -> None:
    session = ServerSession(
        info={"name": "s", "version": "1"}, capabilities={"tools": {}}, tasks=TaskServer()
    )
    events = session.receive(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":'
        '{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientCapabilities":{}}}}'
    )
    (event,) = [e for e in events if isinstance(e, RequestReceived)]
    assert not session.accepts_task(event)

    async def work(task: Any) -> dict[str, Any]:
        return {}

    with pytest.raises(CapabilityError):
        session.run_as_task(event, work)
    assert session.pending_tasks() == [] and session.data_to_send() == []


class Unanswering(MemoryTaskStore):
    """A store whose renewals fail (as Redis does when frozen) ``failing`` times."""

    def __init__(self, failing: int) -> None:
        super().__init__()
        self.failing = failing

    async def _renew(
        self, task_id: str, principal: str, owner: str, until: float, now: float
    ) -> bool:
        if self.failing > 0:
            self.failing -= 1
            raise UnavailableError("the store did not answer")
        return await super()._renew(task_id, principal, owner, until, now)


def test_a_renewal_the_store_fails_is_tried_again_while_the_lease_holds() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs, Unanswering(failing=1), lease_seconds=0.3)
        task_id = await start(served)
        await asyncio.sleep(0.75)  # beats at 0.1 (failed), 0.2, 0.3...: past the first lease
        assert (await get(served, task_id))["result"]["status"] == "working"
        jobs.go.set()
        assert (await settled(served, task_id, "completed", "failed"))["status"] == "completed"

    run(test)


def test_the_work_stops_once_its_lease_passes_unrenewed() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs, Unanswering(failing=1_000), lease_seconds=0.3)
        task_id = await start(served)
        assert served.tasks is not None
        for _ in range(200):
            if not served.tasks.running:
                break
            await asyncio.sleep(0.01)
        assert served.tasks.running == 0
        failed = (await get(served, task_id))["result"]
        assert failed["status"] == "failed" and failed["statusMessage"] == WORKER_STOPPED

    run(test)


def _received(session: ServerSession, method: str, params: str, capabilities: str) -> Any:
    events = session.receive(
        f'{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}"_meta":'
        '{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        f'"io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}}}'
    )
    (event,) = [e for e in events if isinstance(e, RequestReceived)]
    return event


def test_a_started_task_is_pending_until_its_driver_takes_it() -> None:
    session = ServerSession(
        info={"name": "s", "version": "1"}, capabilities={"tools": {}}, tasks=TaskServer()
    )
    declaring = f'{{"extensions":{{"{TASKS_EXTENSION}":{{}}}}}}'
    event = _received(session, "tools/call", '"name":"t",', declaring)
    assert not session.has_pending_tasks

    async def work(task: Any) -> dict[str, Any]:
        return {}

    session.run_as_task(event, work)
    assert session.has_pending_tasks
    (pending,) = session.pending_tasks()
    assert pending.request is event
    assert not session.has_pending_tasks and session.pending_tasks() == []


def test_the_task_server_serves_the_tasks_requests_alone() -> None:
    server = TaskServer()
    declaring = f'{{"extensions":{{"{TASKS_EXTENSION}":{{}}}}}}'

    def received(method: str, params: str) -> Any:
        session = ServerSession(
            info={"name": "s", "version": "1"}, capabilities={"tools": {}}, tasks=server
        )
        return _received(session, method, params, declaring)

    assert server.serves(received("tasks/get", '"taskId":"x",'))
    assert not server.serves(received("tools/call", '"name":"t",'))
    assert not server.serves(object())
