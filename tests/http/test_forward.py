"""Tests for mcp_schema.http.forward and mcp_schema.http.shared_sessions:
replicas of one `ClusterApp` in one event loop, on one `InProcessBroker`,
driven as an ASGI server would (the cross-process run, through nginx and
Redis, is tests/cluster/)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcp_schema.broker import InProcessBroker
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.http.forward import ClusterApp
from mcp_schema.http.shared_sessions import BrokerSessions
from mcp_schema.session import Event, InputReceived, RequestReceived, ServerSession
from mcp_schema.subscription_relay import Relay
from mcp_schema.subscriptions import Subscriptions

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "c", "version": "1"},
    },
}
ELICIT = {
    "method": "elicitation/create",
    "params": {"message": "A word?", "requestedSchema": {"type": "object", "properties": {}}},
}


def handler(session: ServerSession, event: Event) -> None:
    if isinstance(event, InputReceived):
        session.respond(event.request, {"content": [{"type": "text", "text": "asked"}]})
    elif isinstance(event, RequestReceived):
        if event.method == "tools/list":
            session.respond(event, {"tools": []})
        elif event.method == "tools/call":
            session.ask(event, {"word": ELICIT})


class Exchange:
    """One HTTP request to an ASGI app, read as the app sends."""

    def __init__(
        self,
        app: Any,
        method: str,
        headers: dict[str, str],
        body: bytes,
        server: tuple[str, int] | None = None,
        client: tuple[str, int] | None = None,
    ) -> None:
        self.sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.incoming.put_nowait({"type": "http.request", "body": body, "more_body": False})
        scope = {
            "type": "http",
            "method": method,
            "path": "/mcp",
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
            "server": server,
            "client": client,
        }
        self.task = asyncio.ensure_future(app(scope, self.incoming.get, self._send))

    async def _send(self, message: dict[str, Any]) -> None:
        await self.sent.put(message)

    async def start(self) -> tuple[int, dict[str, str]]:
        message = await asyncio.wait_for(self.sent.get(), 5)
        assert message["type"] == "http.response.start"
        headers = {k.decode(): v.decode() for k, v in message["headers"]}
        return message["status"], headers

    async def chunk(self) -> tuple[bytes, bool]:
        message = await asyncio.wait_for(self.sent.get(), 5)
        return message["body"], message["more_body"]

    async def whole(self) -> tuple[int, dict[str, str], bytes]:
        status, headers = await self.start()
        body, more = b"", True
        while more:
            chunk, more = await self.chunk()
            body += chunk
        await asyncio.wait_for(self.task, 5)
        return status, headers, body


def post(
    app: Any,
    message: dict[str, Any],
    session_id: str | None = None,
    client: tuple[str, int] | None = None,
) -> Exchange:
    headers = {**HEADERS, **({"mcp-session-id": session_id} if session_id else {})}
    return Exchange(app, "POST", headers, json.dumps(message).encode(), client=client)


@asynccontextmanager
async def replicas(n: int, **options: Any) -> AsyncIterator[list[ClusterApp]]:
    broker = InProcessBroker()
    apps = []
    for i in range(n):
        sessions = BrokerSessions(broker, replica=f"r{i}")
        info = {"name": "t", "version": "1"}
        endpoint = Endpoint(handler, info=info, capabilities={"tools": {}}, sessions=sessions)
        apps.append(ClusterApp(App(endpoint), **options))
    for app in apps:
        await app.start()
    try:
        yield apps
    finally:
        for app in apps:
            await app.stop()


async def opened(app: ClusterApp) -> str:
    status, headers, body = await post(app, INIT).whole()
    assert status == 200 and json.loads(body)["id"] == 0
    session_id = headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await post(app, initialized, session_id).whole())[0] == 202
    return session_id


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), 30))


def test_a_session_opened_on_one_replica_is_served_by_another() -> None:
    async def body() -> None:
        async with replicas(2) as (a, b):
            session_id = await opened(a)
            assert await a.sessions.holder(session_id) == "r0"
            status, headers, answer = await post(
                b, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session_id
            ).whole()
            assert (status, json.loads(answer)) == (
                200,
                {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
            )
            assert headers["mcp-session-id"] == session_id

    run(body)


def test_a_request_for_another_replicas_session_is_prechecked_where_it_arrived() -> None:
    # On a loopback address, a rebound name is 421 before anything is
    # forwarded: the holder serves forwarded requests with no address of its
    # own, so it could not apply the loopback Host rule itself.
    async def body() -> None:
        async with replicas(2) as (a, b):
            session_id = await opened(a)
            served = len(a._forwards)
            listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
            headers = {**HEADERS, "mcp-session-id": session_id, "host": "rebound.example:80"}
            loopback = ("127.0.0.1", 8000)
            status, _, answer = await Exchange(b, "POST", headers, listing, loopback).whole()
            assert status == 421 and b"Host" in answer
            assert len(a._forwards) == served
            headers["host"] = "127.0.0.1:8000"
            status, _, answer = await Exchange(b, "POST", headers, listing, loopback).whole()
            assert (status, json.loads(answer)["result"]) == (200, {"tools": []})

    run(body)


def test_an_elicitation_answered_through_a_third_replica() -> None:
    async def body() -> None:
        async with replicas(3) as (a, b, c):
            session_id = await opened(a)
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}}
            stream = post(b, call, session_id)
            status, headers = await stream.start()
            assert (status, headers["content-type"]) == (200, "text/event-stream")
            event, more = await stream.chunk()
            assert more and b"elicitation/create" in event
            asked = json.loads(event.split(b"data: ", 1)[1])
            answer = {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {"action": "accept", "content": {}},
            }
            assert (await post(c, answer, session_id).whole())[0] == 202
            rest = b""
            while more:
                chunk, more = await stream.chunk()
                rest += chunk
            assert (
                json.loads(rest.split(b"data: ", 1)[1])["result"]["content"][0]["text"] == "asked"
            )

    run(body)


def test_hanging_up_on_a_relayed_stream_cancels_the_request_at_the_holder() -> None:
    async def body() -> None:
        async with replicas(2) as (a, b):
            session_id = await opened(a)
            call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "ask"}}
            stream = post(b, call, session_id)
            await stream.start()
            assert b"elicitation/create" in (await stream.chunk())[0]
            live = a.sessions.get(session_id)
            assert live is not None and len(live.streams) == 1
            stream.incoming.put_nowait({"type": "http.disconnect"})
            await asyncio.wait_for(stream.task, 5)
            for _ in range(100):
                if not live.streams:
                    break
                await asyncio.sleep(0.01)
            assert not live.streams and not live.server.in_flight

    run(body)


def test_delete_from_another_replica_ends_the_session_everywhere() -> None:
    async def body() -> None:
        async with replicas(2) as (a, b):
            session_id = await opened(a)
            headers = {**HEADERS, "mcp-session-id": session_id}
            assert (await Exchange(b, "DELETE", headers, b"").whole())[0] == 200
            assert await a.sessions.holder(session_id) is None
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            for app in (a, b):
                assert (await post(app, listing, session_id).whole())[0] == 404

    run(body)


def test_a_replica_stopping_terminates_its_sessions_and_deletes_their_records() -> None:
    async def body() -> None:
        async with replicas(2) as (a, b):
            session_id = await opened(a)
            live = a.sessions.get(session_id)
            assert live is not None and not live.closed
            await a.stop()
            assert live.closed and await b.sessions.holder(session_id) is None

    run(body)


def test_a_cluster_app_starts_its_apps_relay() -> None:
    async def body() -> None:
        broker = InProcessBroker()
        capabilities = {"tools": {"listChanged": True}}
        info = {"name": "t", "version": "1"}
        endpoint = Endpoint(
            handler, info=info, capabilities=capabilities, sessions=BrokerSessions(broker)
        )
        app = ClusterApp(App(endpoint, relay=Relay(endpoint.subscriptions, broker)))
        listen = endpoint.subscriptions.open(1, {"toolsListChanged": True})
        listen.take()  # the acknowledgement
        other = Relay(Subscriptions(), broker)  # another replica's
        await app.start()
        await other.tools_list_changed()
        await asyncio.sleep(0.05)  # the relay's turn to deliver
        assert b"notifications/tools/list_changed" in b"".join(listen.take())
        await app.stop()

    run(body)


def test_a_dead_holder_is_found_at_once_and_its_record_forgotten() -> None:
    async def body() -> None:
        async with replicas(2) as (a, b):
            session_id = await opened(a)
            await a.stop()  # a replica that stopped listening: nobody hears its channel
            await a.sessions.broker.put("mcp-session:" + session_id, b"r0", 30)
            listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
            status, _, answer = await post(b, listing, session_id).whole()
            assert (status, json.loads(answer)["id"]) == (404, 3)
            assert await b.sessions.holder(session_id) is None

    run(body)


def test_a_holder_that_does_not_take_the_request_is_a_503_naming_it() -> None:
    async def body() -> None:
        async with replicas(1, timeout=0.2) as (b,):
            broker = b.broker
            await broker.put("mcp-session:silent", b"ghost", 30)
            async with broker.subscribe("mcp-replica:ghost"):  # hears, never answers
                listing = {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
                status, _, answer = await post(b, listing, "silent").whole()
            error = json.loads(answer)
            assert (status, error["id"], error["error"]["code"]) == (503, 4, -32603)

    run(body)


def test_a_holder_that_takes_the_request_but_does_not_answer_in_time_is_a_504() -> None:
    async def body() -> None:
        async with replicas(1, timeout=0.2) as (b,):
            broker = b.broker
            await broker.put("mcp-session:silent", b"ghost", 30)

            async def ghost() -> None:  # takes every request, answers none
                async with broker.subscribe("mcp-replica:ghost") as heard:
                    async for message in heard:
                        header = json.loads(message.data.partition(b"\n")[0])
                        if header["t"] == "open":
                            await broker.publish("mcp-reply:" + header["f"], b'{"t":"ack"}\n')

            taking = asyncio.ensure_future(ghost())
            await asyncio.sleep(0.01)
            listing = {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
            status, _, answer = await post(b, listing, "silent").whole()
            taking.cancel()
            error = json.loads(answer)
            assert (status, error["id"], error["error"]["code"]) == (504, 4, -32603)

    run(body)


def test_one_clients_forwarded_requests_leave_the_holders_slots_to_others() -> None:
    alice, bob = ("192.0.2.1", 4000), ("192.0.2.2", 4000)

    async def body() -> None:
        async with replicas(2, max_forwards=4, max_forwards_per_key=2) as (a, b):
            session_id = await opened(a)

            def asking(rid: int, client: tuple[str, int]) -> Exchange:
                called = {"jsonrpc": "2.0", "id": rid, "method": "tools/call"}
                called["params"] = {"name": "ask", "arguments": {}}
                return post(b, called, session_id, client)  # forwarded to a, held there

            held = [asking(n, alice) for n in (1, 2)]  # the elicitation keeps them open
            for exchange in held:
                assert (await exchange.start())[0] == 200
            status, headers, refused = await asking(3, alice).whole()
            assert status == 429 and headers["retry-after"] == "5"
            answer = json.loads(refused)
            assert answer["id"] == 3 and answer["error"]["code"] == -31429
            assert len(a.share) == 2 and a.share.held("address 192.0.2.1") == 2
            assert (await asking(4, bob).start())[0] == 200  # Bob's is served
            assert a.share.held("address 192.0.2.2") == 1

    run(body)


def test_what_is_not_a_forwarded_request_is_ignored_by_the_holder() -> None:
    async def body() -> None:
        async with replicas(2) as (a, b):
            session_id = await opened(a)
            for junk in (b"", b"\n", b"[1]\n", b'{"t":"open","f":"x"}\n', b'{"t":"body","f":1}\n'):
                assert await a.broker.publish("mcp-replica:r0", junk)
            listing = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
            status, _, answer = await post(b, listing, session_id).whole()
            assert (status, json.loads(answer)["id"]) == (200, 5)

    run(body)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"ttl": 0}, ValueError),
        ({"ttl": "5"}, TypeError),
        ({"timeout": float("nan")}, ValueError),
        ({"replica": 5}, TypeError),
        ({"replica": ""}, ValueError),
        ({"prefix": "p" * 129}, ValueError),
    ],
)
def test_broker_sessions_refuse_bad_options(options: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        BrokerSessions(InProcessBroker(), **options)


def test_a_cluster_app_needs_broker_sessions_and_sane_bounds() -> None:
    info = {"name": "t", "version": "1"}
    with pytest.raises(TypeError):
        ClusterApp(App(Endpoint(handler, info=info)))  # sessions in memory: nothing to share
    shared = App(Endpoint(handler, info=info, sessions=BrokerSessions(InProcessBroker())))
    for options, error in (({"timeout": -1}, ValueError), ({"max_forwards": True}, TypeError)):
        with pytest.raises(error):
            ClusterApp(shared, **options)
