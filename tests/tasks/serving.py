"""What the tasks tests serve: an `Endpoint` with a `TaskServer`, whose tool
``job`` runs as a task (its work waits for a step the test gives), and POSTs
of 2026-07-28 messages through `Endpoint.handle_async`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp_schema.errors import InvalidParamsError
from mcp_schema.http import Endpoint
from mcp_schema.http_headers import request_headers
from mcp_schema.session import Event, RequestReceived, ServerSession
from mcp_schema.tasks import TaskContext, TaskServer, TaskStore
from mcp_schema.versions import TASKS_EXTENSION

VERSION = "2026-07-28"
PLAIN: dict[str, Any] = {"elicitation": {}}
DECLARING: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}
BASE = {"content-type": "application/json", "accept": "application/json"}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Go on?",
        "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean"}}},
    },
}


def meta(capabilities: dict[str, Any] = DECLARING) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


def request(
    method: str, params: dict[str, Any], capabilities: dict[str, Any] = DECLARING
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": method,
        "params": {**params, "_meta": meta(capabilities)},
    }


class Jobs:
    """The tool ``job``: its work reports, asks when ``arguments.ask``, and
    returns what ``arguments`` say once the test sets `go`; ``required``
    only runs as a task."""

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def work(self, task: TaskContext) -> dict[str, Any]:
        arguments = task.arguments
        await task.report("started")
        if arguments.get("ask"):
            answers = await task.ask({"go": ELICIT}, message="waiting")
            action = getattr(answers["go"], "action", None)
            await task.report(f"answered {action}")
        await self.go.wait()
        if arguments.get("fail"):
            raise InvalidParamsError("the job refused its arguments")
        if arguments.get("bad"):
            return {"content": "not a list"}
        size = arguments.get("size", 0)
        return {"content": [{"type": "text", "text": "x" * size or "done"}]}

    def handler(self, session: ServerSession, event: Event) -> None:
        if not isinstance(event, RequestReceived):
            return
        name = getattr(getattr(event.message, "params", None), "name", None)
        if name == "required" and not session.require_task(event):
            return
        if session.accepts_task(event):
            session.run_as_task(event, self.work, poll_interval_ms=10)
        else:
            session.respond(event, {"content": [{"type": "text", "text": "at once"}]})


def endpoint(
    jobs: Jobs,
    store: TaskStore | None = None,
    principal: str | None = None,
    lease_seconds: float = 1.0,
) -> Endpoint:
    return Endpoint(
        jobs.handler,
        info={"name": "tasks-test", "version": "1"},
        capabilities={"tools": {}},
        versions=[VERSION],
        tasks=TaskServer(store, lease_seconds=lease_seconds),
        principal=None if principal is None else (lambda headers: headers.get("x-user", principal)),
    )


async def post(served: Endpoint, value: dict[str, Any], **headers: str) -> dict[str, Any]:
    """The JSON-RPC answer to a POST of ``value``; one an async handler gives
    later is awaited on its stream (five seconds at most)."""
    sent = {**BASE, **request_headers(value), **headers}
    response = await served.handle_async("POST", "/mcp", sent, json.dumps(value).encode())
    if response.stream is None:
        answer: dict[str, Any] = json.loads(response.body)
        return answer
    stream = response.stream
    for _ in range(1000):
        if stream.finished:
            break
        await asyncio.sleep(0.005)
    framed = [json.loads(frame) for frame in stream.take_frames()]
    found: list[dict[str, Any]] = [f for f in framed if "method" not in f]  # after notifications
    (answered,) = found
    return answered


async def start(served: Endpoint, **arguments: Any) -> str:
    """A new task of ``job`` with ``arguments``: its id."""
    created = await post(served, request("tools/call", {"name": "job", "arguments": arguments}))
    assert created["result"]["resultType"] == "task", created
    task_id: str = created["result"]["taskId"]
    return task_id


async def get(served: Endpoint, task_id: str, **headers: str) -> dict[str, Any]:
    return await post(served, request("tasks/get", {"taskId": task_id}), **headers)


async def settled(served: Endpoint, task_id: str, *statuses: str) -> dict[str, Any]:
    """The task once its status is one of ``statuses`` (a second at most)."""
    for _ in range(200):
        found = await get(served, task_id)
        if found.get("result", {}).get("status") in statuses:
            return found["result"]  # type: ignore[no-any-return]
        await asyncio.sleep(0.005)
    raise AssertionError(f"task {task_id} never reached {statuses}: {found}")
