"""Tests for mcp_schema.http.forward and mcp_schema.http.shared_sessions when
the broker fails or forgets: records lost by a restart of Redis are found by
asking the holders, and written again (at once when a replica sees its
marker gone); right after an outage of the broker, a holder that has not
subscribed again yet is waited for and asked again; an ``initialize`` whose
record cannot be written is refused 503 naming the request, its session
dropped; a lookup the broker cannot answer is a 503 naming the request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp_schema.broker import Broker, BrokerError, InProcessBroker, Subscription
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.http.forward import WATCH_SECONDS, ClusterApp
from mcp_schema.http.forward_wire import inbox
from mcp_schema.http.shared_sessions import BrokerSessions
from tests.http.test_forward import INIT, handler, opened, post, run


class Forgetful(InProcessBroker):
    """An `InProcessBroker` that can forget its keys (Redis restarted without
    its data) and fail writes or reads."""

    fail_puts = False
    fail_gets = False

    def forget_everything(self) -> None:
        type(self._values).__init__(self._values, 100_000, self.clock, "key-value store")

    async def _put(self, key: str, value: bytes, ttl: float) -> None:
        if self.fail_puts:
            raise BrokerError("Redis failed to set: TimeoutError")
        await super()._put(key, value, ttl)

    async def _get(self, key: str) -> bytes | None:
        if self.fail_gets:
            raise BrokerError("Redis failed to get: TimeoutError")
        return await super()._get(key)


class Deafening(Forgetful):
    """A `Forgetful` whose outage ends every subscription (each replica's
    subscriber connection failed the PING check of a frozen Redis), then
    refuses new ones to the channels in ``deaf`` (a replica that has not
    subscribed again yet), while every other call succeeds."""

    def __init__(self) -> None:
        super().__init__()
        self.deaf: set[str] = set()
        self._entered: list[Subscription] = []

    def outage(self, *deaf: str) -> None:
        self.deaf.update(deaf)
        for subscription in self._entered:
            subscription.fail(BrokerError("Redis did not answer PING within 2 s"))
        self._entered.clear()

    async def _attach(self, subscription: Subscription) -> None:
        if subscription.channels & self.deaf:
            raise BrokerError("Redis failed to subscribe: TimeoutError")
        await super()._attach(subscription)
        self._entered.append(subscription)


@asynccontextmanager
async def cluster(broker: Broker) -> AsyncIterator[list[ClusterApp]]:
    apps = []
    for i in range(2):
        sessions = BrokerSessions(broker, replica=f"r{i}")
        info = {"name": "t", "version": "1"}
        endpoint = Endpoint(handler, info=info, capabilities={"tools": {}}, sessions=sessions)
        apps.append(ClusterApp(App(endpoint)))
    for app in apps:
        await app.start()
    try:
        yield apps
    finally:
        for app in apps:
            await app.stop()


LIST = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}


def test_a_session_whose_record_was_lost_is_found_by_asking_its_holder() -> None:
    async def body() -> None:
        broker = Forgetful()
        async with cluster(broker) as (a, b):
            session_id = await opened(a)
            broker.forget_everything()  # and the marker with it
            status, headers, answer = await post(b, LIST, session_id).whole()
            assert (status, json.loads(answer)["id"]) == (200, 5)
            assert headers["mcp-session-id"] == session_id
            assert await b.sessions.holder(session_id) == "r0"  # the holder wrote it again

    run(body)


def test_a_replica_that_sees_its_marker_gone_writes_its_records_again() -> None:
    async def body() -> None:
        broker = Forgetful()
        async with cluster(broker) as (a, _):
            session_id = await opened(a)
            broker.forget_everything()
            await asyncio.sleep(2 * WATCH_SECONDS + 0.2)
            assert await a.sessions.holder(session_id) == "r0"

    run(body)


def test_a_holder_subscribing_again_keeps_its_sessions() -> None:
    async def body() -> None:
        broker = Deafening()
        async with cluster(broker) as (a, b):
            session_id = await opened(a)
            broker.outage(inbox("r0"))  # r0 subscribes again later than r1
            asyncio.get_running_loop().call_later(0.2, broker.deaf.clear)
            status, _, answer = await post(b, LIST, session_id).whole()
            assert (status, json.loads(answer)["id"]) == (200, 5)
            assert await b.sessions.holder(session_id) == "r0"  # its record kept

    run(body)


def test_a_record_lost_while_its_holder_subscribes_again_is_found_by_asking_again() -> None:
    async def body() -> None:
        broker = Deafening()
        async with cluster(broker) as (a, b):
            session_id = await opened(a)
            broker.forget_everything()  # Redis restarted without its data
            broker.outage(inbox("r0"))
            asyncio.get_running_loop().call_later(0.3, broker.deaf.clear)  # past ASK_SECONDS
            status, _, answer = await post(b, LIST, session_id).whole()
            assert (status, json.loads(answer)["id"]) == (200, 5)

    run(body)


def test_an_unknown_session_is_still_404_after_asking() -> None:
    async def body() -> None:
        async with cluster(InProcessBroker()) as (_, b):
            status, _, answer = await post(b, LIST, "no-such-session").whole()
            assert (status, json.loads(answer)["id"]) == (404, 5)

    run(body)


def test_an_initialize_whose_record_cannot_be_written_is_refused_and_dropped() -> None:
    async def body() -> None:
        broker = Forgetful()
        async with cluster(broker) as (a, _):
            broker.fail_puts = True
            status, headers, answer = await post(a, INIT).whole()
            refused = json.loads(answer)
            assert (status, refused["id"], refused["error"]["code"]) == (503, 0, -32603)
            assert "mcp-session-id" not in headers and len(a.sessions) == 0

    run(body)


def test_a_lookup_the_broker_cannot_answer_is_503_naming_the_request() -> None:
    async def body() -> None:
        broker = Forgetful()
        async with cluster(broker) as (a, b):
            session_id = await opened(a)
            broker.fail_gets = True
            status, _, answer = await post(b, LIST, session_id).whole()
            assert (status, json.loads(answer)["id"]) == (503, 5)

    run(body)
