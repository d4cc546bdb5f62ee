"""Hostile ``subscriptions/listen`` filters naming tasks: forged ids and
another principal's (acknowledged alike, never heard of), a client that did
not declare the extension (-32021), filters too large or of the wrong type
(-32602), nothing opened; broker messages that are no task status, ignored."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.broker import InProcessBroker
from mcp_schema.errors import InvalidParamsError
from mcp_schema.http import Endpoint, Response
from mcp_schema.http_headers import request_headers
from mcp_schema.subscription_relay import CHANNEL, Relay
from mcp_schema.subscriptions import MAX_TASK_IDS, Subscriptions
from mcp_schema.tasks import MemoryTaskStore
from tests.hostile import raw
from tests.tasks.serving import BASE, PLAIN, Jobs, endpoint, request, settled, start
from tests.tasks.test_notifications import events, open_listen, task

SSE = {**BASE, "accept": "application/json, text/event-stream"}


def run(test: Any) -> Any:
    return asyncio.run(asyncio.wait_for(test(), 5))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=5))
def test_another_principals_task_is_acknowledged_like_a_forged_one_and_never_heard_of(
    forged: list[str],
) -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs, MemoryTaskStore(), principal="alice")
        task_id = await start(served)
        theirs = await open_listen(served, task_id, *forged, **{"x-user": "mallory"})
        unknown = await open_listen(served, "no-such-task", *forged, **{"x-user": "mallory"})
        own = await open_listen(served, task_id)
        acked = [events(r)[0]["params"]["notifications"]["taskIds"] for r in (theirs, unknown)]
        assert acked == [list(dict.fromkeys([i, *forged])) for i in (task_id, "no-such-task")]
        events(own)
        jobs.go.set()
        await settled(served, task_id, "completed")
        assert [e["params"]["status"] for e in events(own)] == ["completed"]
        assert events(theirs) == [] and events(unknown) == []

    run(test)


async def refused(served: Endpoint, notifications: Any, capabilities: Any = None) -> Response:
    value = request("subscriptions/listen", {"notifications": notifications})
    if capabilities is not None:
        value["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
    headers = {**SSE, **request_headers(value)}
    response = await served.handle_async("POST", "/mcp", headers, raw(value))
    assert response.stream is None and len(served.subscriptions) == 0  # nothing opened
    return response


def test_a_client_without_the_extension_asking_for_tasks_is_refused_32021() -> None:
    async def test() -> None:
        served = endpoint(Jobs())
        response = await refused(served, {"taskIds": ["t"], "toolsListChanged": True}, PLAIN)
        error = json.loads(response.body)["error"]
        assert error["code"] == -32021
        assert error["data"]["requiredCapabilities"] == {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }

    run(test)


@pytest.mark.parametrize(
    "notifications",
    [
        {"taskIds": [f"t{n}" for n in range(MAX_TASK_IDS + 1)]},
        {"taskIds": ["x" * 10] * 100_000},  # huge, even when it repeats one id
        {"taskIds": "t"},
        {"taskIds": ["t", 1]},
        {"taskIds": [None]},
    ],
    ids=["too-many", "huge", "not-a-list", "not-strings", "null"],
)
def test_a_task_filter_too_large_or_of_the_wrong_type_is_invalid_params(
    notifications: dict[str, Any],
) -> None:
    async def test() -> None:
        response = await refused(endpoint(Jobs()), notifications)
        error = json.loads(response.body)["error"]
        assert error["code"] == -32602 and "taskIds" in error["message"]
        assert len(response.body) < 1000  # the refusal is bounded, whatever was sent

    run(test)


def test_the_bound_on_task_ids_is_the_registrys() -> None:
    subs = Subscriptions(max_task_ids=2)
    with pytest.raises(InvalidParamsError, match="at most 2"):
        subs.open(1, {"taskIds": ["a", "b", "c"]})
    with pytest.raises(InvalidParamsError, match="at most 2"):
        subs.open(1, {"taskIds": ["a", "a", "a"]})  # the bound is on what was sent
    assert len(subs) == 0
    assert subs.open(1, {"taskIds": ["a", "a"]}).filter.task_ids == ("a",)
    with pytest.raises(ValueError, match="task_changed"):
        subs.publish("notifications/tasks", "a")  # a task's status needs its principal


@pytest.mark.parametrize(
    "message",
    [
        {"from": "x", "method": "notifications/tasks", "principal": "", "task": {"taskId": 1}},
        {"from": "x", "method": "notifications/tasks", "principal": 1, "task": {"taskId": "t"}},
        {"from": "x", "method": "notifications/tasks", "principal": "", "task": ["t"]},
        {"from": "x", "method": "notifications/tasks", "principal": ""},
        {"from": "x", "method": "notifications/tasks", "uri": "t"},
        {"from": 1, "method": "notifications/tasks", "principal": "", "task": {"taskId": "t"}},
    ],
)
def test_a_broker_message_that_is_no_task_status_is_ignored(message: dict[str, Any]) -> None:
    async def test() -> None:
        broker, subs = InProcessBroker(), Subscriptions()
        listen = subs.open(1, {"taskIds": ["t"]})
        listen.take()
        async with Relay(subs, broker):
            await broker.publish(CHANNEL, raw(message))
            good = {**message, "from": "x", "principal": "", "task": task("t")}
            good.pop("uri", None)
            await broker.publish(CHANNEL, raw(good))  # after it: a status that is one
            sent = listen.take()
            for _ in range(100):
                if sent:
                    break
                await asyncio.sleep(0.005)
                sent = listen.take()
        assert [json.loads(frame)["params"]["taskId"] for frame in sent] == ["t"]

    run(test)
