"""The handlers of ``examples/server.py`` over Streamable HTTP, both eras on
one endpoint, as an ASGI application for any ASGI server:
``python -m uvicorn --app-dir examples http_server:app --port 3001`` serves
``http://127.0.0.1:3001/mcp``.

Nothing here is glue but the endpoint's options: the same
``serve(session, event)`` answers a stateless 2026-07-28 request (with a
session built for it alone) and the requests of an ``initialize`` session
(``Mcp-Session-Id``), whose ``ask`` goes to the client on the request's
event stream.

With ``MCP_REDIS_URL`` set (``redis://127.0.0.1:6379/0``), it is one
replica of many: the session records and the forwarding between replicas go
through Redis, so any replica serves any session (``docs/guide/serving.md``,
Deployment). Unset, everything stays in this process.

The task store follows the broker: with ``MCP_REDIS_URL``, a `RedisTaskStore`
on the same Redis (any replica answers for any task); else with
``MCP_TASKS_DB`` naming a file, a `SqliteTaskStore` there (one process's
tasks, kept across its restarts); else this process's memory.
``MCP_TASK_LEASE_SECONDS`` (default 30) is the lease a task's worker renews:
a task whose process died is reported ``failed`` once it passes
(``docs/guide/tasks.md``, Deployment).

A 2026-07-28 ``ask`` (tools ``ask`` and ``think``) seals its round into the
``requestState`` under ``MCP_STATE_KEY`` (at least 32 bytes; ``new,old``
while rotating), so its retry completes on any replica given the same key.
Unset, a random key serves this one process.

``MCP_VERSIONS`` (comma-separated, say ``2026-07-28``) names the versions it
serves, as for ``examples/server.py``; unset, every version the package knows.

The tool ``toggle`` adds the tool ``extra``, or removes it: the tool set is
one key of the broker's store (Redis, or this process's), which each request
reads before its handler runs. The toggle's write (a compare-and-set on what
the request read) and its ``tools/list_changed`` (through a `Relay`, to the
``subscriptions/listen`` streams of every replica) are done before its result
is sent; when another toggle changed the set first, nothing has been sent,
and the request is served again on what that one left, so racing toggles
are each one transition, none lost."""

import asyncio
import contextvars
import os
import runpy
import secrets
from pathlib import Path
from typing import Any

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.broker import Broker, InProcessBroker
from mcp_schema.http import Endpoint, Handler
from mcp_schema.http.asgi import App, Receive, Scope, Send
from mcp_schema.http.forward import ClusterApp
from mcp_schema.http.shared_sessions import BrokerSessions
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import Event, RequestReceived, ServerSession
from mcp_schema.subscription_relay import Relay
from mcp_schema.tasks import DEFAULT_LEASE_SECONDS, TaskContext, TaskServer, TaskStore

example = runpy.run_path(str(Path(__file__).with_name("server.py")))
serve: Handler = example["serve"]
CAPABILITIES = {"tools": {"listChanged": True}, "resources": {}, "prompts": {}, "logging": {}}
INFO = {"name": "example-http-server", "version": "1.0.0"}
EXTRA_KEY, DAY = "example/extra", 86_400.0
# Per request (each its own asyncio task): the tool set as the request found
# it, and the writes a toggle leaves to be done before its answer is sent.
stored: contextvars.ContextVar[bytes | None] = contextvars.ContextVar("stored", default=None)
pending: contextvars.ContextVar[list[asyncio.Task[bool]]] = contextvars.ContextVar("pending")


class Raced(Exception): ...  # another toggle changed the tool set since this request read it


def toggling(relay: Relay) -> Handler:
    """``serve``, with ``toggle`` and ``extra``."""

    async def toggled(found: bytes | None, on: bool) -> bool:
        """Compare and set: whether the tool set was still ``found`` (and ``on`` now)."""
        value = b"on" if on else b"off"
        if found is None:
            won = await relay.broker.put_if_absent(EXTRA_KEY, value, DAY)
        else:
            won = await relay.broker.compare_and_set(EXTRA_KEY, found, value, DAY)
        if won:
            await relay.tools_list_changed()
        return won

    def answer(request: Any) -> Any:
        extra = stored.get() == b"on"
        if isinstance(request, mcp.ListToolsRequest):
            return {"tools": [*example["TOOLS"], *([example["EXTRA"]] if extra else [])]}
        name = request.params.name if isinstance(request, mcp.CallToolRequest) else None
        if name == "toggle":
            pending.get().append(asyncio.ensure_future(toggled(stored.get(), not extra)))
            return example["text"]("extra removed" if extra else "extra added")
        return example["text"]("extra is here") if name == "extra" and extra else None

    def handler(session: ServerSession, event: Event) -> None:
        if isinstance(event, RequestReceived) and (result := answer(event.message)) is not None:
            return session.respond(event, result)
        serve(session, event)

    return handler


class ToggleApp(App):
    """The ASGI app reading the tool set before each request, and writing a
    toggle's before its answer: if another toggle came first, nothing has
    been sent yet, and the request is served again on what that one left."""

    def __init__(self, endpoint: Endpoint, relay: Relay) -> None:
        super().__init__(endpoint, relay=relay)
        self.broker: Broker = relay.broker

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body: list[Any] = []  # the request's body as it came, to serve it again
        while True:
            try:
                return await self.served(scope, receive, send, body)
            except Raced:
                pass  # another toggle came first, and nothing was sent: on what it left

    async def served(self, scope: Scope, receive: Receive, send: Send, body: list[Any]) -> None:
        again = iter(list(body))
        stored.set(await self.broker.get(EXTRA_KEY) if scope["type"] == "http" else None)
        pending.set(writes := list[asyncio.Task[bool]]())

        async def replayed() -> Any:
            if (message := next(again, None)) is None:
                body.append(message := await receive())
            return message

        async def sent(message: Any) -> None:
            if not all([await writes.pop() for _ in list(writes)]):  # every toggle's write
                raise Raced
            await send(message)

        await super().__call__(scope, replayed, sent)


# -- long_count: a task where the client declared the Tasks extension --------------------
# (statusMessage tells the progress: the extension has no progress notifications for tasks)
LONG_COUNT = {
    "name": "long_count",
    "description": "Count to 3, slowly",
    "inputSchema": {"type": "object"},
}
example["TOOLS"].append(LONG_COUNT)  # what serve lists


async def long_count(task: TaskContext) -> Any:
    """A second per step, told through the status message; one question on the way."""
    for step in range(1, 4):
        await task.report(f"counted {step} of 3")
        await asyncio.sleep(1)
        if step == 2 and task.can_ask("elicitation/create"):
            ask: dict[str, Any] = {
                "message": "Count on?",
                "requestedSchema": {"type": "object", "properties": {}},
            }
            await task.ask({"go_on": {"method": "elicitation/create", "params": ask}})
    return example["text"]("counted to 3")


def counting(inner: Handler) -> Handler:
    """``inner``, with ``long_count``: a task when the call may be one, else at once."""

    def handler(session: ServerSession, event: Event) -> None:
        call = event.message if isinstance(event, RequestReceived) else None
        if not isinstance(call, mcp.CallToolRequest) or call.params.name != "long_count":
            return inner(session, event)
        assert isinstance(event, RequestReceived)
        if session.accepts_task(event):
            session.run_as_task(event, long_count, poll_interval_ms=500)
        else:
            session.respond(event, example["text"]("counted to 3"))

    return handler


def sealer(key: str | None) -> StateSealer:
    """The sealer of ``MCP_STATE_KEY``; a key too short stops the server at start-up."""
    try:
        return StateSealer(StateKeys.from_env(key or secrets.token_urlsafe(32)))
    except ValueError as exc:
        raise SystemExit(f"MCP_STATE_KEY: {exc}") from None


def task_store(redis_url: str | None, tasks_db: str | None) -> TaskStore | None:
    """The broker's Redis, else the SQLite file, else None (this process's memory)."""
    if redis_url:
        from mcp_schema.tasks.redis_store import RedisTaskStore  # the ``redis`` extra

        return RedisTaskStore(redis_url)
    if tasks_db:
        from mcp_schema.tasks.sqlite_store import SqliteTaskStore

        return SqliteTaskStore(tasks_db)
    return None


def application(
    redis_url: str | None,
    state_key: str | None = None,
    tasks_db: str | None = None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    versions: str | None = None,
) -> App | ClusterApp:
    """One replica: sessions and tasks in this process, or shared through Redis
    (the tasks in ``tasks_db`` without Redis)."""
    broker: Broker = InProcessBroker()
    sessions = None
    if redis_url:
        from mcp_schema.redis_broker import RedisBroker  # the ``redis`` extra

        broker = RedisBroker.from_url(redis_url)
        sessions = BrokerSessions(broker)
    options: dict[str, Any] = {"capabilities": CAPABILITIES, "handler_version": mcp.VERSION}
    options["versions"] = [v for v in (versions or "").split(",") if v] or None  # None: all
    options["request_state"] = sealer(state_key)
    store = task_store(redis_url, tasks_db)
    options["tasks"] = TaskServer(store, lease_seconds=lease_seconds)
    handler: list[Handler] = []  # the relay needs the endpoint, the handler the relay
    try:
        endpoint = Endpoint(lambda s, e: handler[0](s, e), info=INFO, sessions=sessions, **options)
    except ValueError as exc:  # a version the package does not know
        raise SystemExit(f"MCP_VERSIONS: {exc}") from None
    relay = Relay(endpoint.subscriptions, broker)
    handler.append(counting(toggling(relay)))
    app = ToggleApp(endpoint, relay)
    return app if sessions is None else ClusterApp(app)


env = os.environ.get
lease = float(env("MCP_TASK_LEASE_SECONDS") or DEFAULT_LEASE_SECONDS)  # TaskServer checks it
app = application(
    env("MCP_REDIS_URL"), env("MCP_STATE_KEY"), env("MCP_TASKS_DB"), lease, env("MCP_VERSIONS")
)
