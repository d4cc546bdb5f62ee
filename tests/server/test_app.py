"""`mcp_schema.server.app` and `mcp_schema.server.health`: the replica's
ASGI app answers ``/healthz`` and ``/readyz`` under the endpoint's own Host
and Origin rules; its drain turns readiness off, ends every listen, and
hands each running task back so that any replica reads it failed at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_schema.http.adapter import Message
from mcp_schema.server import Context, Server
from mcp_schema.server.app import ServerApp
from mcp_schema.tasks.sqlite_store import SqliteTaskStore
from mcp_schema.tasks.store import WORKER_STOPPED
from tests.server.serving import DECLARING, message, post

LOOPBACK = ("127.0.0.1", 8000)
KEY = "a state key of the tests of 32 bytes or more"


def served(**settings: Any) -> ServerApp:
    server = Server("app-test")

    @server.tool(task=True)
    async def report(days: int, ctx: Context) -> str:
        await asyncio.Event().wait()  # runs until stopped
        return "never"

    app: ServerApp = server.asgi(env={}, **settings)
    return app


async def request(
    app: ServerApp,
    path: str,
    method: str = "GET",
    headers: tuple[tuple[bytes, bytes], ...] = ((b"host", b"127.0.0.1:8000"),),
    server: tuple[str, int] | None = LOOPBACK,
) -> tuple[int, dict[str, Any]]:
    """The status and JSON body ``app`` answers."""
    scope: dict[str, Any] = {"type": "http", "method": method, "path": path}
    scope.update(headers=list(headers), server=server)
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return int(sent[0]["status"]), json.loads(body) if body else {}


def test_liveness_and_readiness_are_routes_beside_the_endpoint() -> None:
    app = served()
    assert asyncio.run(request(app, "/healthz")) == (200, {"status": "ok"})
    assert asyncio.run(request(app, "/readyz")) == (200, {"status": "ok"})
    assert asyncio.run(request(app, "/readyz", "HEAD")) == (200, {})
    assert asyncio.run(request(app, "/readyz", "POST"))[0] == 405
    assert asyncio.run(request(app, "/mcp"))[0] == 405  # the endpoint's: a GET without a session


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        (((b"host", b"rebound.example"),), 421),  # a loopback server: loopback names only
        (((b"host", b"localhost:8000"), (b"origin", b"https://evil.example")), 403),
    ],
)
def test_the_health_routes_keep_the_endpoints_host_and_origin_rules(
    headers: tuple[tuple[bytes, bytes], ...], status: int
) -> None:
    app = served()
    for path in ("/healthz", "/readyz"):
        assert asyncio.run(request(app, path, headers=headers))[0] == status


def test_a_host_the_replica_is_given_is_served_its_health() -> None:
    allowed = served(allowed_hosts="rebound.example")
    named = ((b"host", b"rebound.example"),)
    assert asyncio.run(request(allowed, "/healthz", headers=named))[0] == 200


def test_readiness_is_off_when_redis_does_not_answer() -> None:
    app = served(redis_url="redis://127.0.0.1:1/0", state_key=KEY)
    status, body = asyncio.run(request(app, "/readyz"))
    assert (status, body["reason"]) == (503, "Redis does not answer")
    assert asyncio.run(request(app, "/healthz"))[0] == 200  # alive all the same


def test_the_drain_turns_readiness_off_and_ends_every_listen() -> None:
    app = served()
    listen = app.endpoint.subscriptions.open(5, {"toolsListChanged": True})
    app.drain()
    status, body = asyncio.run(request(app, "/readyz"))
    assert (status, body["status"]) == (503, "unavailable") and "draining" in body["reason"]
    frames = [json.loads(f) for f in listen.take()]
    assert frames[-1]["method"] == "notifications/cancelled"
    assert frames[-1]["params"]["requestId"] == 5 and listen.done


def test_stopping_hands_a_running_task_back_so_it_reads_failed_at_once(tmp_path: Path) -> None:
    database = tmp_path / "tasks.db"
    app = served(tasks_db=str(database), drain_seconds=0.1)

    async def test() -> dict[str, Any]:
        await app.start()
        call = {"name": "report", "arguments": {"days": 5}}
        created = await post(app.endpoint, message("tools/call", call, capabilities=DECLARING))
        task_id = created["result"]["taskId"]
        await asyncio.sleep(0.05)  # its work has begun
        await app.stop()
        async with SqliteTaskStore(database) as store:  # as another replica reads it
            found = await store.get(task_id, "")
        assert found is not None
        return {"status": found.status, "message": found.status_message}

    assert asyncio.run(test()) == {"status": "failed", "message": WORKER_STOPPED}


def test_with_a_resource_server_the_tool_sees_the_verified_caller() -> None:
    from mcp_schema.http_headers import request_headers
    from tests.auth.tokens import ISSUER, METADATA_URL, claims, resource_server, sign
    from tests.tasks.serving import BASE

    server = Server("auth-test")

    @server.tool()
    def whoami(ctx: Context) -> str:
        caller = ctx.caller
        assert caller is not None and caller.verified is not None
        return json.dumps([ctx.principal, sorted(caller.verified.scopes)])

    @server.tool(scopes=["files:write"])
    def write() -> str:
        return "written"

    app = server.asgi(env={}, auth=resource_server())
    writing = message("tools/call", {"name": "write", "arguments": {}})
    reader = {"authorization": f"Bearer {sign(claims(scope='files:read'))}"}
    stepped = asyncio.run(
        app.endpoint.handle_async(
            "POST",
            "/mcp",
            {**BASE, **request_headers(writing), **reader},
            json.dumps(writing).encode(),
        )
    )
    challenge = stepped.header("www-authenticate") or ""
    assert stepped.status == 403 and f'resource_metadata="{METADATA_URL}"' in challenge
    call = message("tools/call", {"name": "whoami", "arguments": {}})
    refused = asyncio.run(post(app.endpoint, call))
    assert refused["error"]["code"] < 0  # no token: the 401's JSON-RPC error
    token = sign(claims(sub="alice", scope="files:read mcp"))
    answer = asyncio.run(post(app.endpoint, call, authorization=f"Bearer {token}"))
    said = json.loads(answer["result"]["content"][0]["text"])
    assert said == [
        json.dumps([ISSUER, "sub", "alice"], separators=(",", ":")),
        ["files:read", "mcp"],
    ]
