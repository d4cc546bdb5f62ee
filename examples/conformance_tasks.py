"""The Tasks extension's fixtures of the official conformance suite
(0.2.0-alpha.12's ``tasks-*`` scenarios), for examples/conformance_server.py
to wire in: its tools list gains `TOOLS`, its handler tries `serve` first,
and its `Endpoint` gets ``tasks=TaskServer()``.

``python examples/conformance_tasks.py [PORT]`` serves these fixtures alone
(2026-07-28, on 127.0.0.1), printing the URL, for running the suite's tasks
scenarios by themselves.
"""

from __future__ import annotations

import asyncio
import importlib
import secrets
import sys
from typing import Any

from mcp_schema.errors import InternalError
from mcp_schema.session import Event, InputReceived, RequestReceived, ServerSession
from mcp_schema.tasks import TaskContext

NONE: dict[str, Any] = {"type": "object", "properties": {}}
NAMED = {"type": "object", "properties": {"name": {"type": "string"}}}
TIMED = {
    "type": "object",
    "properties": {"seconds": {"type": "number"}, "label": {"type": "string"}},
}
FILE = {"type": "object", "properties": {"filename": {"type": "string"}}}


def _tool(name: str, schema: dict[str, Any] = NONE) -> dict[str, Any]:
    return {"name": name, "description": f"Tasks conformance fixture {name}", "inputSchema": schema}


TOOLS = [
    _tool("greet", NAMED),
    _tool("slow_compute", TIMED),
    _tool("failing_job"),
    _tool("protocol_error_job"),
    _tool("confirm_delete", FILE),
    _tool("multi_input"),
    _tool("test_tool_with_task"),
]
NAMES = frozenset(t["name"] for t in TOOLS)


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def elicit(message: str, *fields: str) -> dict[str, Any]:
    properties = {name: {"type": "string"} for name in fields}
    schema = {"type": "object", "properties": properties}
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


async def slow_compute(task: TaskContext) -> dict[str, Any]:
    seconds = float(task.arguments.get("seconds", 0))
    await task.report(f"computing for {seconds:g} s")
    await asyncio.sleep(seconds)
    return text(f"computed {task.arguments.get('label', '')}")


async def failing_job(task: TaskContext) -> dict[str, Any]:
    await asyncio.sleep(1)
    return text("the job failed", error=True)  # a tool error: the task completes


async def protocol_error_job(task: TaskContext) -> dict[str, Any]:
    raise InternalError("the job hit a protocol error")  # the task fails with it


async def confirm_delete(task: TaskContext) -> dict[str, Any]:
    filename = task.arguments.get("filename", "")
    answers = await task.ask({"confirm": elicit(f"Delete {filename}?", "confirm")})
    return text(f"{filename}: {getattr(answers['confirm'], 'action', '?')}")


async def multi_input(task: TaskContext) -> dict[str, Any]:
    answers = await task.ask(
        {"first": elicit("First?", "name"), "second": elicit("Second?", "name")}
    )
    return text(f"got {len(answers)} answers")


def greeting(name: str) -> Any:
    async def greet(task: TaskContext) -> dict[str, Any]:
        return text(f"Hello, {name}!")

    return greet


WORK = {
    "slow_compute": slow_compute,
    "failing_job": failing_job,
    "protocol_error_job": protocol_error_job,
    "confirm_delete": confirm_delete,
    "multi_input": multi_input,
}
REQUIRED = frozenset({"failing_job", "test_tool_with_task"})
"""The tools that run only as tasks: -32021 to a client without the extension."""


def serve(session: ServerSession, event: Event) -> bool:
    """Answer ``event`` if it is a call of one of `TOOLS`; whether it was."""
    if isinstance(event, InputReceived):  # test_tool_with_task's second round
        if (
            getattr(getattr(event.request.message, "params", None), "name", None)
            != "test_tool_with_task"
        ):
            return False
        answer = event.responses.get("user_name")
        content: Any = getattr(answer, "content", None) or {}  # an ElicitResult's: an object
        session.run_as_task(event.request, greeting(str(content.get("name", ""))))
        return True
    if not isinstance(event, RequestReceived) or event.method != "tools/call":
        return False
    params = getattr(event.message, "params", None)
    name = getattr(params, "name", None)
    if not isinstance(name, str) or name not in NAMES:
        return False
    arguments: dict[str, Any] = getattr(params, "arguments", None) or {}
    if name in REQUIRED and not session.require_task(event):
        return True
    if name == "greet":
        session.respond(event, text(f"Hello, {arguments.get('name', '')}!"))
    elif name == "test_tool_with_task":
        session.ask(event, {"user_name": elicit("Your name?", "name")})
    elif (name == "slow_compute" and not arguments.get("seconds")) or not session.accepts_task(
        event
    ):
        session.respond(event, text(f"computed {arguments.get('label', '')} at once"))
    else:
        session.run_as_task(event, WORK[name], poll_interval_ms=200)
    return True


def main() -> None:
    uvicorn: Any = importlib.import_module(
        "uvicorn"
    )  # the test group's ASGI server (not a runtime dependency)

    from mcp_schema.http import Endpoint
    from mcp_schema.http.asgi import App
    from mcp_schema.request_state import StateKeys, StateSealer
    from mcp_schema.tasks import TaskServer
    from mcp_schema.versions import STATELESS_VERSIONS

    def handler(session: ServerSession, event: Event) -> None:
        if isinstance(event, RequestReceived) and event.method == "tools/list":
            return session.respond(event, {"tools": TOOLS})
        serve(session, event)

    endpoint = Endpoint(
        handler,
        info={"name": "conformance-tasks", "version": "1.0.0"},
        capabilities={"tools": {}},
        versions=STATELESS_VERSIONS,
        tasks=TaskServer(),
        request_state=StateSealer(StateKeys.from_env(secrets.token_urlsafe(32))),
    )
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    config = uvicorn.Config(App(endpoint), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)

    async def serving() -> None:
        task = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.05)
        bound = server.servers[0].sockets[0].getsockname()[1]
        print(f"serving http://127.0.0.1:{bound}/mcp", flush=True)
        await task

    asyncio.run(serving())


if __name__ == "__main__":
    main()
