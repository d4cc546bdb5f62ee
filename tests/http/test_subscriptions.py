"""Tests for ``subscriptions/listen``: the core (mcp_schema.subscriptions),
the relay across replicas (mcp_schema.subscription_relay, through an
`InProcessBroker` and a real redis-server), and the listen's event stream
on the HTTP endpoint, sans-IO and under uvicorn (raw HTTP and the official
Python SDK client)."""

from __future__ import annotations

import asyncio
import http.client
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from mcp_schema.broker import Broker, InProcessBroker
from mcp_schema.errors import InvalidParamsError
from mcp_schema.http import Endpoint, Response
from mcp_schema.http.asgi import App
from mcp_schema.redis_broker import RedisBroker
from mcp_schema.session import Event, RequestReceived, ServerSession
from mcp_schema.shares import ShareExceededError
from mcp_schema.subscription_relay import CHANNEL, Relay
from mcp_schema.subscriptions import (
    NOTIFICATIONS,
    RESOURCE_UPDATED,
    SUBSCRIPTION_ID_KEY,
    TASKS,
    Filter,
    Listen,
    Subscriptions,
    checked_change,
    supported_by,
)
from mcp_schema.v2026_07_28 import ServerCapabilities
from tests.http.test_asgi import serving, waited_for

# The redis-server fixture, its brokers and their runner are test_broker's.
from tests.http.test_broker import WAIT, redis_url, replicas, run  # noqa: F401

TOOLS = "notifications/tools/list_changed"
PROMPTS = "notifications/prompts/list_changed"
RESOURCES = "notifications/resources/list_changed"
ACK = "notifications/subscriptions/acknowledged"
EVERYTHING = {
    "toolsListChanged": True,
    "promptsListChanged": True,
    "resourcesListChanged": True,
    "resourceSubscriptions": ["file:///a", "file:///b"],
}


def frames(listen: Listen) -> list[dict[str, Any]]:
    return [json.loads(frame) for frame in listen.take()]


def methods(listen: Listen) -> list[str | None]:
    return [f.get("method") for f in frames(listen)]


# -- the core ---------------------------------------------------------------------------


def test_the_acknowledgement_comes_first_with_the_filter_honored() -> None:
    subs = Subscriptions(supported={TOOLS, RESOURCE_UPDATED})
    listen = subs.open("s-1", EVERYTHING)
    subs.tools_list_changed()
    ack, change = frames(listen)
    assert ack == {
        "jsonrpc": "2.0",
        "method": ACK,
        "params": {
            "_meta": {SUBSCRIPTION_ID_KEY: "s-1"},
            "notifications": {
                "toolsListChanged": True,
                "resourceSubscriptions": ["file:///a", "file:///b"],
            },
        },
    }
    assert change["method"] == TOOLS and change["params"]["_meta"] == {SUBSCRIPTION_ID_KEY: "s-1"}


def test_a_change_before_the_listen_never_reaches_it() -> None:
    subs = Subscriptions()
    subs.tools_list_changed()
    listen = subs.open(1, {"toolsListChanged": True})
    assert methods(listen) == [ACK]
    assert listen.take() == []
    subs.tools_list_changed()
    assert methods(listen) == [TOOLS]


def test_what_the_server_does_not_send_is_neither_acknowledged_nor_sent() -> None:
    subs = Subscriptions(supported=supported_by({"tools": {"listChanged": True}, "prompts": {}}))
    listen = subs.open(1, EVERYTHING)
    (ack,) = frames(listen)
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert subs.prompts_list_changed() == 0 and subs.resource_updated("file:///a") == 0
    assert subs.tools_list_changed() == 1
    assert methods(listen) == [TOOLS]


def test_capabilities_name_what_is_supported() -> None:
    declared = {"tools": {"listChanged": True}, "resources": {"subscribe": True}, "prompts": {}}
    assert supported_by(declared) == {TOOLS, RESOURCE_UPDATED}
    assert supported_by(None) == frozenset()
    model = ServerCapabilities(tools={"listChanged": True}, prompts={"listChanged": False})
    assert supported_by(model) == {TOOLS}
    everything = {
        "resources": {"listChanged": True, "subscribe": True},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }
    assert (
        supported_by(
            {**everything, "tools": {"listChanged": True}, "prompts": {"listChanged": True}}
        )
        == NOTIFICATIONS
    )


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("publish"), st.sampled_from([TOOLS, PROMPTS, RESOURCES]), st.none()),
        st.tuples(st.just("publish"), st.just(RESOURCE_UPDATED), st.sampled_from("abc")),
        st.tuples(st.just("take"), st.integers(0, 2), st.none()),
        st.tuples(st.just("open"), st.integers(0, 15), st.lists(st.sampled_from("abc"))),
    ),
    max_size=60,
)


def filter_of(bits: int, uris: list[str]) -> dict[str, Any]:
    return {
        "toolsListChanged": bool(bits & 1),
        "promptsListChanged": bool(bits & 2),
        "resourcesListChanged": bool(bits & 4),
        "resourceSubscriptions": uris if bits & 8 else [],
    }


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_changes_coalesce_deterministically_and_only_as_asked(ops: list[Any]) -> None:
    """Against a model: each take is the acknowledgement (first take only),
    then the distinct changes the filter asks for, published since the last
    take, in the order each was first published."""
    subs = Subscriptions()
    listens: list[tuple[Listen, Filter, list[tuple[str, str | None]], list[bool]]] = []
    for op, a, b in ops:
        if op == "open":
            wire = filter_of(a, b)
            listens.append((subs.open(len(listens), wire), Filter.of(wire), [], [False]))
        elif op == "publish":
            change = (a, None if b is None else f"file:///{b}")
            for _, asked, pending, _ in listens:
                if asked.wants(change) and change not in pending:
                    pending.append(change)
            subs.publish(*change)
        elif listens:
            listen, _, pending, acked = listens[a % len(listens)]
            expected: list[tuple[str, str | None]] = [] if acked[0] else [(ACK, None)]
            expected += pending
            got = frames(listen)
            assert [(f["method"], f["params"].get("uri")) for f in got] == expected
            assert all(f["params"]["_meta"] == {SUBSCRIPTION_ID_KEY: listen.id} for f in got)
            pending.clear()
            acked[0] = True


@given(
    st.integers(0, 15),
    st.lists(st.sampled_from("abc")),
    st.lists(st.sampled_from(sorted(NOTIFICATIONS - {TASKS}))),  # tasks: tests/tasks/
)
def test_no_notification_the_client_did_not_ask_for(
    bits: int, uris: list[str], sent: list[str]
) -> None:
    subs = Subscriptions()
    wire = filter_of(bits, [f"file:///{u}" for u in uris])
    listen = subs.open(7, wire)
    for method in sent:
        subs.publish(method, "file:///a" if method == RESOURCE_UPDATED else None)
    asked = Filter.of(wire)
    for got in frames(listen)[1:]:
        method, uri = got["method"], got["params"].get("uri")
        assert method in asked.methods()
        assert method != RESOURCE_UPDATED or uri in asked.resource_subscriptions


def test_the_number_of_listens_is_bounded() -> None:
    subs = Subscriptions(max_listens=2)
    first = subs.open(1, {"toolsListChanged": True})
    subs.open(2, {"toolsListChanged": True})
    with pytest.raises(ShareExceededError, match="holds 2 open subscriptions"):
        subs.open(3, {"toolsListChanged": True})
    assert len(subs) == 2
    first.abandon()
    subs.open(3, {"toolsListChanged": True})
    assert len(subs) == 2


def test_a_filter_is_bounded_and_checked() -> None:
    subs = Subscriptions(max_uris=2)
    with pytest.raises(InvalidParamsError, match="at most 2"):
        subs.open(1, {"resourceSubscriptions": ["a", "b", "c"]})
    bad: Any
    for bad in (
        {"toolsListChanged": 1},
        {"resourceSubscriptions": "a"},
        {"resourceSubscriptions": [1]},
    ):
        with pytest.raises(InvalidParamsError):
            subs.open(1, bad)
    bad = []  # a list is no filter: the caller's mistake
    with pytest.raises(TypeError):
        subs.open(1, bad)
    with pytest.raises(TypeError):
        subs.open(1.5, {})  # type: ignore[arg-type]
    assert len(subs) == 0
    assert Filter.of({"resourceSubscriptions": ["a", "b", "a"]}).resource_subscriptions == (
        "a",
        "b",
    )


def test_a_reader_that_falls_behind_is_torn_down_with_cancelled() -> None:
    subs = Subscriptions(max_queued=2)
    listen = subs.open("x", {"resourceSubscriptions": ["u1", "u2", "u3"], "toolsListChanged": True})
    subs.resource_updated("u1")
    subs.resource_updated("u2")
    subs.resource_updated("u1")  # coalesced: still two pending
    assert not listen.ended
    subs.resource_updated("u3")
    assert listen.ended and len(subs) == 0
    assert frames(listen) == [
        frames_ack("x", {"toolsListChanged": True, "resourceSubscriptions": ["u1", "u2", "u3"]}),
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {
                "_meta": {SUBSCRIPTION_ID_KEY: "x"},
                "requestId": "x",
                "reason": "the subscription's reader fell behind",
            },
        },
    ]
    assert listen.done and subs.tools_list_changed() == 0


def frames_ack(request_id: str | int, honored: dict[str, Any]) -> dict[str, Any]:
    params = {"_meta": {SUBSCRIPTION_ID_KEY: request_id}, "notifications": honored}
    return {"jsonrpc": "2.0", "method": ACK, "params": params}


def test_the_client_cancelling_sends_nothing_more() -> None:
    subs = Subscriptions()
    listen = subs.open(1, {"toolsListChanged": True})
    subs.tools_list_changed()
    listen.abandon()
    assert listen.take() == [] and listen.done and len(subs) == 0
    assert subs.tools_list_changed() == 0
    listen.close()  # after the client left, nothing either
    assert listen.take() == []


def test_a_graceful_close_sends_what_is_pending_then_the_complete_result() -> None:
    subs = Subscriptions()
    listen = subs.open(5, {"toolsListChanged": True})
    subs.tools_list_changed()
    woken: list[bool] = []
    listen.on_ready = lambda: woken.append(True)
    subs.close()
    assert woken and len(subs) == 0
    got = frames(listen)
    assert [f.get("method") for f in got] == [ACK, TOOLS, None]
    assert got[-1] == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: 5}},
    }
    assert listen.done


def test_the_server_tearing_down_sends_cancelled_and_drops_what_is_pending() -> None:
    subs = Subscriptions()
    listen = subs.open(5, {"toolsListChanged": True})
    assert methods(listen) == [ACK]
    subs.tools_list_changed()
    with pytest.raises(ValueError, match="UTF-8"):
        listen.cancel("\ud800")  # no JSON text: refused, and nothing changes
    assert not listen.ended and len(subs) == 1
    subs.cancel("shutting down")
    (cancelled,) = frames(listen)
    assert cancelled["method"] == "notifications/cancelled"
    assert (
        cancelled["params"]["requestId"] == 5 and cancelled["params"]["reason"] == "shutting down"
    )
    assert listen.done


def test_bad_publications_and_bounds_are_refused() -> None:
    subs = Subscriptions()
    for method, uri in (
        (TOOLS, "file:///a"),
        (RESOURCE_UPDATED, None),
        ("notifications/message", None),
    ):
        with pytest.raises(ValueError):
            subs.publish(method, uri)
    with pytest.raises(ValueError):
        Subscriptions(max_queued=0)
    with pytest.raises(ValueError):
        Subscriptions(supported={"notifications/message"})
    assert checked_change(RESOURCE_UPDATED, "u") == (RESOURCE_UPDATED, "u")


# -- over HTTP, sans-IO -----------------------------------------------------------------

STATELESS = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"subscribe": True}}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": STATELESS,
    "mcp-method": "subscriptions/listen",
}


def listen_body(request_id: int | str, notifications: dict[str, Any]) -> dict[str, Any]:
    params = {"_meta": META, "notifications": notifications}
    return {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}


HANDLED: list[Event] = []


def endpoint(**options: Any) -> Endpoint:
    return Endpoint(
        lambda session, event: HANDLED.append(event),
        info={"name": "t", "version": "1"},
        capabilities=CAPABILITIES,
        **options,
    )


def post_listen(ep: Endpoint, request_id: int | str = 1, **notifications: Any) -> Response:
    body = json.dumps(listen_body(request_id, notifications)).encode()
    return ep.handle("POST", "/mcp", list(HEADERS.items()), body)


def events(response: Response) -> list[dict[str, Any]]:
    assert response.stream is not None
    chunk = response.stream.take().decode()
    return [json.loads(e.removeprefix("event: message\ndata: ")) for e in chunk.split("\n\n") if e]


def test_a_listen_is_an_event_stream_that_stays_open() -> None:
    HANDLED.clear()
    ep = endpoint()
    response = post_listen(ep, 3, toolsListChanged=True, promptsListChanged=True)
    assert response.status == 200 and response.header("content-type") == "text/event-stream"
    assert response.header("x-accel-buffering") == "no"
    assert events(response) == [frames_ack(3, {"toolsListChanged": True})]
    for _ in range(3):
        ep.subscriptions.tools_list_changed()
    ep.subscriptions.resource_updated("file:///a")  # not asked for
    assert [e["method"] for e in events(response)] == [TOOLS]
    assert response.stream is not None and not response.stream.done
    ep.close()
    assert events(response)[-1]["result"]["resultType"] == "complete"
    assert response.stream.done
    assert not HANDLED  # the endpoint serves it, not the handler


def test_a_hostile_filter_is_refused_with_the_listens_id() -> None:
    ep = endpoint(subscriptions=Subscriptions(max_uris=2))
    for notifications in (
        {"toolsListChanged": "yes"},
        {"resourceSubscriptions": "file:///a"},
        {"resourceSubscriptions": ["a", "b", "c"]},
    ):
        refused = post_listen(ep, 4, **notifications)
        assert refused.status == 400 and refused.stream is None
        answer = json.loads(refused.body)
        assert answer["id"] == 4 and answer["error"]["code"] == -32602
    assert len(ep.subscriptions) == 0


def test_closing_the_stream_cancels_the_listen() -> None:
    ep = endpoint()
    response = post_listen(ep, toolsListChanged=True)
    assert response.stream is not None and len(ep.subscriptions) == 1
    response.stream.abandon()
    assert len(ep.subscriptions) == 0 and ep.subscriptions.tools_list_changed() == 0


def test_a_stream_that_overflows_cancels_the_listen() -> None:
    ep = endpoint(max_buffer=200)
    uris = [f"file:///{'x' * 50}{i}" for i in range(8)]
    response = post_listen(ep, resourceSubscriptions=uris)
    for uri in uris:
        ep.subscriptions.resource_updated(uri)
    assert events(response) == []  # more than the stream holds: cut
    assert response.stream is not None and response.stream.overflowed
    assert len(ep.subscriptions) == 0


def test_a_client_that_cannot_read_an_event_stream_is_refused() -> None:
    ep = endpoint()
    body = json.dumps(listen_body(6, {"toolsListChanged": True})).encode()
    headers = {**HEADERS, "accept": "application/json"}
    refused = ep.handle("POST", "/mcp", list(headers.items()), body)
    assert refused.status == 406 and json.loads(refused.body)["id"] == 6
    assert len(ep.subscriptions) == 0


def test_a_listen_beyond_the_bound_is_refused_with_its_id() -> None:
    ep = endpoint(subscriptions=Subscriptions(max_listens=1))
    post_listen(ep, 1, toolsListChanged=True)
    refused = post_listen(ep, "two", toolsListChanged=True)
    assert refused.status == 429 and refused.stream is None
    assert refused.header("retry-after") == "5"
    answer = json.loads(refused.body)
    assert answer["id"] == "two" and answer["error"]["code"] == -31429
    assert len(ep.subscriptions) == 1


# -- across replicas, through a broker --------------------------------------------------


def test_a_publish_on_one_endpoint_reaches_a_listen_on_another(
    replicas: Callable[[int], Any],  # noqa: F811
) -> None:
    async def body(a: Broker, b: Broker) -> None:
        channel = f"test-{uuid.uuid4().hex}"
        one, two = endpoint(), endpoint()
        async with (
            Relay(one.subscriptions, a, channel=channel) as here,
            Relay(two.subscriptions, b, channel=channel),
        ):
            held = post_listen(two, 9, toolsListChanged=True, resourceSubscriptions=["file:///a"])
            assert [e["method"] for e in events(held)] == [ACK]
            await here.tools_list_changed()
            await here.resource_updated("file:///b")  # not asked for
            await here.resource_updated("file:///a")
            got: list[dict[str, Any]] = []
            while len(got) < 2:
                await asyncio.sleep(0.01)
                got += events(held)
            assert [(e["method"], e["params"].get("uri")) for e in got] == [
                (TOOLS, None),
                (RESOURCE_UPDATED, "file:///a"),
            ]
            assert all(e["params"]["_meta"] == {SUBSCRIPTION_ID_KEY: 9} for e in got)

    run(replicas, body, 2)


def test_a_change_published_here_before_a_listen_opened_never_reaches_it(
    replicas: Callable[[int], Any],  # noqa: F811
) -> None:
    async def body(broker: Broker) -> None:
        ep = endpoint()
        async with Relay(ep.subscriptions, broker, channel=f"test-{uuid.uuid4().hex}") as relay:
            before = post_listen(ep, 1, toolsListChanged=True)
            await relay.tools_list_changed()
            after = post_listen(ep, 2, toolsListChanged=True)  # before the broker delivers it
            await asyncio.sleep(0.2)  # what the broker delivers back arrives meanwhile
            assert [e["method"] for e in events(before)] == [ACK, TOOLS]
            assert [e["method"] for e in events(after)] == [ACK]
            await relay.tools_list_changed()
            await asyncio.sleep(0.2)
            assert [e["method"] for e in events(before)] == [TOOLS]
            assert [e["method"] for e in events(after)] == [TOOLS]

    run(replicas, body)


def test_the_relay_ignores_what_is_no_change() -> None:
    async def body() -> None:
        async with InProcessBroker() as broker:
            ep = endpoint()
            async with Relay(ep.subscriptions, broker):
                held = post_listen(ep, toolsListChanged=True)
                events(held)
                for junk in (
                    b"{",
                    b"[]",
                    b'{"method": "x"}',
                    b'{"method": 1}',
                    b'{"uri": "a", "b": 1}',
                    b'{"from": 1, "method": "notifications/tools/list_changed"}',
                    b'{"from": "o", "method": "notifications/tools/list_changed", "uri": 5}',
                ):
                    await broker.publish(CHANNEL, junk)
                await Relay(Subscriptions(), broker).tools_list_changed()  # another replica
                got: list[dict[str, Any]] = []
                while not got:
                    await asyncio.sleep(0.01)
                    got = events(held)
                assert [e["method"] for e in got] == [TOOLS]

    asyncio.run(asyncio.wait_for(body(), WAIT))


def test_a_relay_that_falls_behind_tears_its_listens_down() -> None:
    async def body() -> None:
        async with InProcessBroker() as broker:
            ep = endpoint()
            async with Relay(ep.subscriptions, broker, max_queued=1) as relay:
                held = post_listen(ep, toolsListChanged=True)
                for _ in range(3):  # no await in between: the relay cannot keep up
                    await relay.tools_list_changed()
                while len(ep.subscriptions):
                    await asyncio.sleep(0.01)
                assert events(held)[-1]["method"] == "notifications/cancelled"
                held = post_listen(ep, 2, toolsListChanged=True)  # it listens again
                events(held)
                await relay.tools_list_changed()
                while not (got := events(held)):
                    await asyncio.sleep(0.01)
                assert [e["method"] for e in got] == [TOOLS]

    asyncio.run(asyncio.wait_for(body(), WAIT))


def test_a_relay_that_loses_its_broker_tears_its_listens_down() -> None:
    async def body() -> None:
        broker = InProcessBroker()
        ep = endpoint()
        async with Relay(ep.subscriptions, broker):
            held = post_listen(ep, toolsListChanged=True)
            events(held)
            await broker.aclose()
            while len(ep.subscriptions):
                await asyncio.sleep(0.01)
            (cancelled,) = events(held)
            assert cancelled["method"] == "notifications/cancelled"
            assert cancelled["params"]["reason"] == "the server lost its broker"

    asyncio.run(asyncio.wait_for(body(), WAIT))


# -- under uvicorn ----------------------------------------------------------------------


def changing(relay: Relay) -> Callable[[ServerSession, Event], None]:
    """A handler whose tool ``change`` publishes a tools-list change through ``relay``."""
    tasks: set[asyncio.Task[None]] = set()

    def handler(session: ServerSession, event: Event) -> None:
        if isinstance(event, RequestReceived):
            if event.method == "tools/list":
                session.respond(
                    event, {"tools": [{"name": "change", "inputSchema": {"type": "object"}}]}
                )
                return
            task = asyncio.ensure_future(relay.tools_list_changed())  # handlers run in the loop
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            session.respond(event, {"content": []})

    return handler


def served(broker: Broker | None = None) -> tuple[App, Endpoint]:
    subs = Subscriptions(supported=supported_by(CAPABILITIES))
    relay = Relay(subs, broker)
    ep = Endpoint(
        changing(relay),
        info={"name": "t", "version": "1"},
        capabilities=CAPABILITIES,
        subscriptions=subs,
    )
    return App(ep, relay=relay), ep


def read_event(response: http.client.HTTPResponse) -> dict[str, Any]:
    lines = []
    while (line := response.readline()) not in (b"\n", b""):
        lines.append(line)
    assert lines and lines[-1].startswith(b"data: "), lines
    found: dict[str, Any] = json.loads(lines[-1].removeprefix(b"data: "))
    return found


@pytest.fixture
def listening() -> Iterator[Callable[[App], Any]]:
    opened: list[http.client.HTTPConnection] = []

    def open_listen(
        host: str, port: int, **notifications: Any
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        connection = http.client.HTTPConnection(host, port, timeout=WAIT)
        opened.append(connection)
        body = json.dumps(listen_body(1, notifications))
        connection.request("POST", "/mcp", body, HEADERS)
        response = connection.getresponse()
        assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
        assert read_event(response)["method"] == ACK
        return connection, response

    yield open_listen  # type: ignore[misc]
    for connection in opened:
        connection.close()


def test_under_uvicorn_a_published_change_reaches_the_listen(listening: Any) -> None:
    application, ep = served()
    with serving(application) as (host, port):
        connection, stream = listening(host, port, toolsListChanged=True)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"_meta": META, "name": "change"},
        }
        caller = http.client.HTTPConnection(host, port, timeout=WAIT)
        caller.request(
            "POST",
            "/mcp",
            json.dumps(call),
            {**HEADERS, "mcp-method": "tools/call", "mcp-name": "change"},
        )
        assert caller.getresponse().status == 200
        caller.close()
        changed = read_event(stream)
        assert changed["method"] == TOOLS and changed["params"]["_meta"] == {SUBSCRIPTION_ID_KEY: 1}
        connection.close()  # the client hangs up: the listen is cancelled
        waited_for(lambda: len(ep.subscriptions) == 0, WAIT)


def test_under_uvicorn_a_publish_on_another_replica_reaches_the_listen(
    listening: Any,
    redis_url: str,  # noqa: F811
) -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    application, _ = served(RedisBroker.from_url(redis_url, prefix=prefix))
    with serving(application) as (host, port):
        connection, stream = listening(host, port, resourceSubscriptions=["file:///a"])

        async def publish() -> None:  # another replica: its own loop, its own broker
            async with RedisBroker.from_url(redis_url, prefix=prefix) as broker:
                await Relay(Subscriptions(), broker).resource_updated("file:///a")

        asyncio.run(publish())
        changed = read_event(stream)
        assert changed["method"] == RESOURCE_UPDATED and changed["params"]["uri"] == "file:///a"
        connection.close()


def test_the_sdk_client_listens_and_hears_a_tools_list_change() -> None:
    application, _ = served()

    async def session(url: str) -> list[Any]:
        heard: list[Any] = []
        with anyio.fail_after(30):
            async with Client(url, mode="2026-07-28", read_timeout_seconds=10, cache=None) as c:
                async with c.listen(tools_list_changed=True) as sub:
                    assert sub.honored.tools_list_changed
                    await c.call_tool("change", {})
                    async for event in sub:
                        heard.append(event)
                        break
        return heard

    with serving(application) as (host, port):
        heard = anyio.run(session, f"http://{host}:{port}/mcp")
    assert [type(e).__name__ for e in heard] == ["ToolsListChanged"]
