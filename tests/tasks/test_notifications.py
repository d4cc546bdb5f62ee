"""Task status notifications (``notifications/tasks``) on
``subscriptions/listen``: sans-IO in `Subscriptions` and a stdio
`ServerSession`, then through an `Endpoint` (every status change of a task,
the detailed task as ``tasks/get`` gives it) and across two replicas through
a `Relay`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp_schema.broker import InProcessBroker
from mcp_schema.http import Endpoint, Response
from mcp_schema.http.asgi import App
from mcp_schema.http_headers import request_headers
from mcp_schema.session import ProtocolError, ServerSession
from mcp_schema.subscription_relay import Relay
from mcp_schema.subscriptions import SUBSCRIPTION_ID_KEY, TASKS, Subscriptions
from mcp_schema.tasks import MemoryTaskStore, TaskRecord, TaskServer
from mcp_schema.tasks.notifications import notifier
from mcp_schema.v2026_07_28.tasks import TaskStatusNotification
from tests.tasks.serving import BASE, PLAIN, Jobs, endpoint, post, request, settled, start

ACK = "notifications/subscriptions/acknowledged"


def run(test: Any) -> Any:
    return asyncio.run(asyncio.wait_for(test(), 5))


def frames(listen: Any) -> list[dict[str, Any]]:
    return [json.loads(frame) for frame in listen.take()]


def task(task_id: str, status: str = "working", **more: Any) -> dict[str, Any]:
    times = {"createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:01Z"}
    return {"taskId": task_id, "status": status, "ttlMs": 1000, **times, **more}


def test_a_task_reaches_the_listens_of_its_principal_naming_it() -> None:
    subs = Subscriptions()
    alice = subs.open(1, {"taskIds": ["t1", "t2", "t1"]}, principal="alice")
    other = subs.open(2, {"taskIds": ["t1"]}, principal="bob")
    unnamed = subs.open(3, {"toolsListChanged": True}, principal="alice")
    (ack,) = frames(alice)
    assert ack["method"] == ACK and ack["params"]["notifications"] == {"taskIds": ["t1", "t2"]}
    assert len(frames(other)) == len(frames(unnamed)) == 1  # their acknowledgements
    assert subs.task_changed("alice", task("t1")) == 1
    assert subs.task_changed("alice", task("t3")) == 0  # named by no listen
    (sent,) = frames(alice)
    assert sent["method"] == TASKS
    assert sent["params"] == {"_meta": {SUBSCRIPTION_ID_KEY: 1}, **task("t1")}
    TaskStatusNotification.model_validate(sent)  # the extension's own notification
    assert frames(other) == [] and frames(unnamed) == []


def test_a_task_coalesces_to_its_latest_status_in_first_published_order() -> None:
    subs = Subscriptions()
    listen = subs.open("l", {"taskIds": ["a", "b"]})
    frames(listen)
    subs.task_changed("", task("a", statusMessage="one"))
    subs.task_changed("", task("b"))
    subs.task_changed("", task("a", "completed", result={"content": []}))
    got = frames(listen)
    assert [(f["params"]["taskId"], f["params"]["status"]) for f in got] == [
        ("a", "completed"),
        ("b", "working"),
    ]
    assert got[0]["params"]["result"] == {"content": []}


def test_a_server_not_sending_task_status_does_not_acknowledge_task_ids() -> None:
    subs = Subscriptions(supported=[])
    listen = subs.open(1, {"taskIds": ["t"]})
    (ack,) = frames(listen)
    assert ack["params"]["notifications"] == {}
    assert subs.task_changed("", task("t")) == 0 and frames(listen) == []


def listen_frame(rid: int, capabilities: dict[str, Any], **notifications: Any) -> bytes:
    return json.dumps(
        request("subscriptions/listen", {"notifications": notifications}, capabilities)
        | {"id": rid}
    ).encode()


def test_a_stdio_session_serves_task_status_to_declaring_clients_only() -> None:
    tasks = TaskServer()
    session = ServerSession(info={"name": "s", "version": "1"}, tasks=tasks, principal="alice")
    tasks.on_change = notifier(tasks, session.subscriptions)
    (refused,) = session.receive(listen_frame(1, PLAIN, taskIds=["t"]))
    assert isinstance(refused, ProtocolError)
    (answer,) = [json.loads(f) for f in session.data_to_send()]
    assert answer["id"] == 1 and answer["error"]["code"] == -32021
    assert answer["error"]["data"]["requiredCapabilities"] == {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }
    assert len(session.subscriptions) == 0
    session.receive(
        listen_frame(2, {"extensions": {"io.modelcontextprotocol/tasks": {}}}, taskIds=["t"])
    )
    (ack,) = [json.loads(f) for f in session.data_to_send()]
    assert ack["params"]["notifications"] == {"taskIds": ["t"]}
    assert session.subscriptions.task_changed("alice", task("t")) == 1
    (sent,) = [json.loads(f) for f in session.data_to_send()]
    assert sent["method"] == TASKS and sent["params"]["_meta"] == {SUBSCRIPTION_ID_KEY: 2}


def test_a_server_without_the_extension_ignores_task_ids_of_any_client() -> None:
    session = ServerSession(info={"name": "s", "version": "1"}, capabilities={"tools": {}})
    session.receive(listen_frame(1, PLAIN, taskIds=["t"], toolsListChanged=True))
    (ack,) = [json.loads(f) for f in session.data_to_send()]
    assert ack["method"] == ACK and ack["params"]["notifications"] == {}
    assert session.subscriptions.task_changed("", task("t")) == 0


async def open_listen(served: Endpoint, *task_ids: str, **headers: str) -> Response:
    value = request("subscriptions/listen", {"notifications": {"taskIds": list(task_ids)}})
    sent = {**BASE, "accept": "application/json, text/event-stream", **request_headers(value)}
    response = await served.handle_async(
        "POST", "/mcp", {**sent, **headers}, json.dumps(value).encode()
    )
    assert response.status == 200 and response.stream is not None, response.body
    return response


def events(response: Response) -> list[dict[str, Any]]:
    assert response.stream is not None
    chunk = response.stream.take().decode()
    return [json.loads(line[6:]) for line in chunk.split("\n") if line.startswith("data: ")]


def detailed(result: dict[str, Any]) -> dict[str, Any]:
    """The ``DetailedTask`` of a ``tasks/get`` result (without the result's own members)."""
    return {k: v for k, v in result.items() if k not in ("_meta", "resultType")}


def statuses(response: Response) -> list[str]:
    return [e["params"]["status"] for e in events(response) if e["method"] == TASKS]


def test_every_status_change_reaches_a_listener_through_the_endpoint() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs)
        task_id = await start(served, ask=True)
        listening = await open_listen(served, task_id)
        (ack,) = events(listening)
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}
        await settled(served, task_id, "input_required")
        assert statuses(listening)[-1] == "input_required"
        answer = {"go": {"action": "accept", "content": {"go": True}}}
        await post(served, request("tasks/update", {"taskId": task_id, "inputResponses": answer}))
        await asyncio.sleep(0.05)
        working = [e["params"] for e in events(listening)]
        assert working[-1]["status"] == "working"
        assert working[-1]["statusMessage"] == "answered accept"  # a statusMessage update
        jobs.go.set()
        done = await settled(served, task_id, "completed")
        (last,) = events(listening)
        assert last["params"] == {
            "_meta": {SUBSCRIPTION_ID_KEY: 7},
            **detailed(done),
        }  # as tasks/get
        TaskStatusNotification.model_validate(last)

    run(test)


def test_a_status_changed_on_one_replica_reaches_a_listener_on_another() -> None:
    async def test() -> None:
        broker, store = InProcessBroker(), MemoryTaskStore()
        here, there = Jobs(), Jobs()
        one, two = endpoint(here, store), endpoint(there, store)
        relays = [Relay(ep.subscriptions, broker) for ep in (one, two)]
        for ep, relay in zip((one, two), relays, strict=True):
            App(ep, relay=relay)  # carries the endpoint's task status through the relay
            await relay.start()
        try:
            task_id = await start(one)
            listening = await open_listen(two, task_id)
            events(listening)
            here.go.set()
            done = await settled(two, task_id, "completed")
            for _ in range(100):
                if listening.stream is not None and listening.stream.frames:
                    break
                await asyncio.sleep(0.005)
            (last,) = events(listening)
            assert last["params"] == {"_meta": {SUBSCRIPTION_ID_KEY: 7}, **detailed(done)}
        finally:
            for relay in relays:
                await relay.aclose()

    run(test)


class Recording(InProcessBroker):
    """A broker that keeps what is published, each publication awaiting once."""

    def __init__(self) -> None:
        super().__init__()
        self.published: list[dict[str, Any]] = []

    async def _publish(self, channel: str, data: bytes) -> bool:
        await asyncio.sleep(0)
        self.published.append(json.loads(data))
        return await super()._publish(channel, data)


def test_statuses_waiting_for_the_broker_coalesce_per_task_newest_last() -> None:
    async def test() -> None:
        broker, tasks = Recording(), TaskServer()
        relay = Relay(Subscriptions(), broker)
        relay.carry(tasks)
        listen = relay.subscriptions.open(1, {"taskIds": ["a", "b"]}, principal="p")
        listen.take()
        assert tasks.on_change is not None
        for task_id, status in (("a", "working"), ("b", "working"), ("a", "completed")):
            record = TaskRecord(task_id, "p", status, 0.0, 1.0, None)  # type: ignore[arg-type]
            tasks.on_change(record)
        assert len(listen.take()) == 2  # this replica's listens at once, coalesced there too
        for _ in range(20):
            await asyncio.sleep(0)
        sent = [(m["task"]["taskId"], m["task"]["status"]) for m in broker.published]
        assert sent == [("b", "working"), ("a", "completed")]
        assert {m["principal"] for m in broker.published} == {"p"}
        await relay.aclose()

    run(test)
