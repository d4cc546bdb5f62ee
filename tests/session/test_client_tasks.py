"""`ClientSession` following a task, sans-IO, against `Endpoint(tasks=)`:
the call's `TaskChanged`, polls at the server's interval, the task's input
requests surfaced once each as `InputRequested` and answered with
``tasks/update``, the end as the call's `ResponseReceived`; `cancel_task`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_schema.http import Endpoint
from mcp_schema.http_headers import request_headers
from mcp_schema.session import (
    ClientSession,
    Event,
    InputRequested,
    ResponseReceived,
    SessionStateError,
    TaskChanged,
)
from tests.tasks.serving import BASE, DECLARING, Jobs, endpoint


async def exchange(client: ClientSession, served: Endpoint) -> list[Event]:
    """Every frame the client queued, POSTed; the events of the answers."""
    events: list[Event] = []
    for frame in client.data_to_send():
        headers = {**BASE, **request_headers(json.loads(frame))}
        response = await served.handle_async("POST", "/mcp", headers, frame)
        if response.body:
            events += client.receive(response.body)
    return events


async def opened(served: Endpoint) -> ClientSession:
    client = ClientSession(info={"name": "c", "version": "1"}, capabilities=DECLARING)
    client.discover()
    await exchange(client, served)
    return client


def run(test: Any) -> Any:
    return asyncio.run(asyncio.wait_for(test(), 5))


def test_a_task_followed_to_its_result_with_input_on_the_way() -> None:
    async def test() -> None:
        jobs = Jobs()
        jobs.go.set()
        served = endpoint(jobs)
        client = await opened(served)
        call = client.request("tools/call", {"name": "job", "arguments": {"ask": True}})
        (changed,) = await exchange(client, served)
        assert isinstance(changed, TaskChanged) and changed.call == call
        assert client.poll_interval(call) == 0.01
        asked: list[InputRequested] = []
        for _ in range(300):
            await asyncio.sleep(client.poll_interval(call))
            client.poll(call)
            events = await exchange(client, served)
            asked += [e for e in events if isinstance(e, InputRequested)]
            for event in events:
                if isinstance(event, InputRequested):
                    client.provide_input(
                        event, {"go": {"action": "accept", "content": {"go": True}}}
                    )
                    acked = await exchange(client, served)
                    assert isinstance(acked[0], ResponseReceived) and acked[0].error is None
            ended = [e for e in events if isinstance(e, ResponseReceived) and e.id == call]
            if ended:
                break
        assert len(asked) == 1 and list(asked[0].requests) == ["go"]  # surfaced once
        (end,) = ended
        assert end.error is None and type(end.result).__name__ == "CallToolResult"
        with pytest.raises(SessionStateError):
            client.poll(call)  # over: no longer followed

    run(test)


def test_a_failed_task_ends_the_call_with_its_error_and_cancel_stops_following() -> None:
    async def test() -> None:
        jobs = Jobs()
        served = endpoint(jobs)
        client = await opened(served)
        failing = client.request("tools/call", {"name": "job", "arguments": {"fail": True}})
        waiting = client.request("tools/call", {"name": "job", "arguments": {}})
        await exchange(client, served)
        client.cancel_task(waiting)
        assert isinstance((await exchange(client, served))[0], ResponseReceived)
        with pytest.raises(SessionStateError):
            client.poll(waiting)
        jobs.go.set()
        for _ in range(300):
            await asyncio.sleep(0.01)
            client.poll(failing)
            ended = [e for e in await exchange(client, served) if isinstance(e, ResponseReceived)]
            if ended:
                break
        assert ended[0].error is not None and ended[0].error.code == -32602

    run(test)
