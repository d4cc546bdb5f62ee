"""Tests for mcp_schema.broker and mcp_schema.redis_broker: one contract, both
brokers (the Redis one against a real redis-server on a loopback port)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from mcp_schema.broker import (
    MAX_NAME,
    Broker,
    BrokerError,
    InProcessBroker,
    Message,
    Subscription,
    SubscriptionOverflow,
)
from mcp_schema.errors import InvalidParamsError
from mcp_schema.redis_broker import RedisBroker
from mcp_schema.request_state import StateKeys, StateSealer

WAIT = 10.0  # seconds any one step may take before the test fails


PATIENT = 5.0
"""The command timeout of the Redis clients of the tests of what the broker
and the task store do, not of their bounds (tests/http/test_broker_faults.py):
a loaded machine must not fail them."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A redis-server of its own: loopback, a free port, no persistence, stopped after."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.fail("redis-server is not installed (Debian: apt-get install redis-server)")
    for _ in range(3):  # another process may take the free port first
        port = _free_port()
        process = subprocess.Popen(
            [
                server,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--protected-mode",
                "yes",
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + WAIT
        while process.poll() is None and time.monotonic() < deadline and not _answers_ping(port):
            time.sleep(0.05)
        if process.poll() is None and _answers_ping(port):
            break
        process.kill()
        process.wait(WAIT)
    else:
        pytest.fail("redis-server did not start on a free loopback port")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait(WAIT)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


Replicas = Callable[[], Any]


@pytest.fixture(params=["in-process", "redis"])
def replicas(request: pytest.FixtureRequest) -> Callable[[int], Any]:
    """``replicas(n)``: an async context of n brokers that share one backend,
    as n replicas of a server would (in one process, one broker n times)."""
    if request.param == "in-process":

        @asynccontextmanager
        async def in_process(n: int) -> AsyncIterator[list[Broker]]:
            async with InProcessBroker() as broker:
                yield [broker] * n

        return in_process
    url = request.getfixturevalue("redis_url")

    @asynccontextmanager
    async def on_redis(n: int) -> AsyncIterator[list[Broker]]:
        prefix = f"test-{uuid.uuid4().hex}:"  # each test its own namespace
        brokers = [
            RedisBroker.from_url(url, prefix=prefix, command_timeout=PATIENT) for _ in range(n)
        ]
        try:
            yield list(brokers)
        finally:
            for broker in brokers:
                await broker.aclose()

    return on_redis


def run(replicas: Callable[[int], Any], body: Callable[..., Awaitable[None]], n: int = 1) -> None:
    async def main() -> None:
        async with replicas(n) as brokers:
            await asyncio.wait_for(body(*brokers), 6 * WAIT)

    asyncio.run(main())


async def receive(subscription: Subscription) -> Message:
    return await asyncio.wait_for(subscription.__anext__(), WAIT)


async def eventually(check: Callable[[], Awaitable[bool]]) -> None:
    deadline = time.monotonic() + WAIT
    while not await check():
        assert time.monotonic() < deadline, "never happened"
        await asyncio.sleep(0.01)


# Publish and subscribe.


def test_a_message_reaches_every_replica_listening(replicas: Callable[[int], Any]) -> None:
    async def body(a: Broker, b: Broker, c: Broker) -> None:
        assert not await a.publish("tools", b"nobody")
        async with b.subscribe("tools") as on_b, c.subscribe("tools") as on_c:
            async with c.subscribe("prompts") as other:
                assert await a.publish("tools", b"changed")
                assert await receive(on_b) == Message("tools", b"changed")
                assert await receive(on_c) == Message("tools", b"changed")
                assert await a.publish("prompts", b"p")
                assert await receive(other) == Message("prompts", b"p")  # not the tools one

    run(replicas, body, 3)


def test_messages_arrive_in_order_on_several_channels(replicas: Callable[[int], Any]) -> None:
    async def body(a: Broker, b: Broker) -> None:
        async with b.subscribe("x", "y", "x") as sub:
            assert sub.channels == {"x", "y"}
            sent = [Message("x" if n % 3 else "y", str(n).encode()) for n in range(60)]
            for message in sent:
                await a.publish(message.channel, message.data)
            assert [await receive(sub) for _ in sent] == sent

    run(replicas, body, 2)


def test_a_subscription_receives_what_is_published_right_after_entering(
    replicas: Callable[[int], Any],
) -> None:
    async def body(a: Broker, b: Broker) -> None:
        for n in range(20):
            async with b.subscribe(f"stream-{n}") as sub:
                assert await a.publish(f"stream-{n}", b"first")
                assert (await receive(sub)).data == b"first"

    run(replicas, body, 2)


def test_leaving_stops_delivery_and_the_iteration(replicas: Callable[[int], Any]) -> None:
    async def body(a: Broker, b: Broker) -> None:
        kept = b.subscribe("c")
        async with kept:
            async with b.subscribe("c") as left:
                await a.publish("c", b"1")
                assert (await receive(left)).data == b"1"
            assert [m async for m in left] == []  # left: the iteration ends
            await a.publish("c", b"2")
            assert (await receive(kept)).data == b"1"
            assert (await receive(kept)).data == b"2"
        with pytest.raises(RuntimeError):
            await kept.__aenter__()  # once only

        async def nobody_listens() -> bool:
            return not await a.publish("c", b"3")

        await eventually(nobody_listens)

    run(replicas, body, 2)


def test_a_waiting_reader_is_woken_by_aclose(replicas: Callable[[int], Any]) -> None:
    async def body(broker: Broker) -> None:
        async with broker.subscribe("quiet") as sub:
            reader = asyncio.ensure_future(sub.__anext__())
            await asyncio.sleep(0.05)
            await sub.aclose()
            with pytest.raises(StopAsyncIteration):
                await asyncio.wait_for(reader, WAIT)

    run(replicas, body)


def test_reading_before_entering_is_an_error(replicas: Callable[[int], Any]) -> None:
    async def body(broker: Broker) -> None:
        with pytest.raises(RuntimeError, match="async with"):
            await broker.subscribe("c").__anext__()

    run(replicas, body)


def test_a_slow_reader_overflows_without_losing_a_message_silently(
    replicas: Callable[[int], Any],
) -> None:
    async def body(a: Broker, b: Broker) -> None:
        async with b.subscribe("busy", max_queued=3) as slow, b.subscribe("busy") as fast:
            async with b.subscribe("mark") as mark:
                for n in range(6):
                    await a.publish("busy", bytes([n]))
                await a.publish("mark", b"")  # after it, every "busy" message has arrived
                await receive(mark)
                assert [(await receive(slow)).data for _ in range(3)] == [b"\0", b"\1", b"\2"]
                with pytest.raises(SubscriptionOverflow):
                    await receive(slow)
                with pytest.raises(SubscriptionOverflow):  # and it stays ended
                    await receive(slow)
                # Another subscription to the same channel is not affected.
                assert [(await receive(fast)).data for _ in range(6)] == [
                    bytes([n]) for n in range(6)
                ]

    run(replicas, body, 2)


def test_closing_the_broker_ends_its_subscriptions(replicas: Callable[[int], Any]) -> None:
    async def body(broker: Broker) -> None:
        async with broker.subscribe("c") as sub:
            await broker.aclose()
            with pytest.raises(BrokerError, match="closed"):
                await receive(sub)
        for operation in (
            broker.publish("c", b""),
            broker.get("k"),
            broker.put("k", b"", 1),
            broker.claim("t", time.time() + 10),
        ):
            with pytest.raises(BrokerError, match="closed"):
                await operation
        with pytest.raises(BrokerError, match="closed"):
            async with broker.subscribe("c"):
                pass

    run(replicas, body)


# The key-value store.


def test_values_are_stored_replaced_and_deleted(replicas: Callable[[int], Any]) -> None:
    async def body(a: Broker, b: Broker) -> None:
        assert await a.get("session") is None
        await a.put("session", b"v1", 60)
        assert await b.get("session") == b"v1"
        await b.put("session", b"v2", 60)
        assert await a.get("session") == b"v2"
        assert await a.delete("session")
        assert not await b.delete("session")
        assert await b.get("session") is None
        await a.put("empty", b"", 60)
        assert await b.get("empty") == b""

    run(replicas, body, 2)


def test_put_if_absent_and_compare_and_set(replicas: Callable[[int], Any]) -> None:
    async def body(a: Broker, b: Broker) -> None:
        assert not await a.compare_and_set("s", b"", b"x", 60)  # nothing there
        assert await a.put_if_absent("s", b"one", 60)
        assert not await b.put_if_absent("s", b"two", 60)
        assert await b.get("s") == b"one"
        assert not await b.compare_and_set("s", b"two", b"three", 60)
        assert await b.compare_and_set("s", b"one", b"three", 60)
        assert await a.get("s") == b"three"

    run(replicas, body, 2)


def test_concurrent_writers_never_overwrite_one_another(replicas: Callable[[int], Any]) -> None:
    async def body(a: Broker, b: Broker) -> None:
        firsts = await asyncio.gather(
            *(
                broker.put_if_absent("once", str(n).encode(), 60)
                for n, broker in enumerate([a, b] * 10)
            )
        )
        assert firsts.count(True) == 1
        await a.put("counter", b"0", 60)

        async def increment(broker: Broker) -> None:
            while True:
                seen = await broker.get("counter")
                assert seen is not None
                if await broker.compare_and_set("counter", seen, str(int(seen) + 1).encode(), 60):
                    return

        await asyncio.gather(*(increment(broker) for broker in [a, b] * 10))
        assert await a.get("counter") == b"20"

    run(replicas, body, 2)


def test_values_expire(replicas: Callable[[int], Any]) -> None:
    async def body(a: Broker, b: Broker) -> None:
        await a.put("short", b"x", 0.05)
        assert await a.put_if_absent("gone", b"x", 0.05)
        await a.put("long", b"y", 60)

        async def expired() -> bool:
            return await b.get("short") is None and await b.get("gone") is None

        await eventually(expired)
        assert await b.put_if_absent("gone", b"again", 60)
        assert await b.get("long") == b"y"

    run(replicas, body, 2)


# Claims.


def test_a_claim_is_won_once_across_replicas(replicas: Callable[[int], Any]) -> None:
    async def body(a: Broker, b: Broker) -> None:
        later = time.time() + 60
        wins = await asyncio.gather(*(broker.claim("token", later) for broker in [a, b] * 5))
        assert wins.count(True) == 1
        assert await b.claim("other", later)
        assert not await a.claim("past", time.time() - 1)  # an expired token is never won
        assert await a.claim("brief", time.time() + 0.05)

        async def free_again() -> bool:
            return await b.claim("brief", time.time() + 60)

        await eventually(free_again)

    run(replicas, body, 2)


def test_a_broker_is_the_single_use_hook_of_request_state(replicas: Callable[[int], Any]) -> None:
    sealer = StateSealer(StateKeys("k" * 32))
    first: dict[str, Any] = {
        "method": "tools/call",
        "params": {"name": "redeem", "arguments": {"code": "X"}},
    }
    retry = {
        **first,
        "params": {**first["params"], "requestState": sealer.seal(first, principal=None)},
    }

    async def body(a: Broker, b: Broker) -> None:
        opened = sealer.open(retry, principal=None)
        assert opened is not None
        await opened.claim(a)
        with pytest.raises(InvalidParamsError, match="already used"):
            await opened.claim(b)

    run(replicas, body, 2)


# Arguments, checked the same for both.


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda b: b.publish("", b""), ValueError),
        (lambda b: b.publish("x" * (MAX_NAME + 1), b""), ValueError),
        (lambda b: b.publish("\ud800", b""), ValueError),
        (lambda b: b.publish(1, b""), TypeError),
        (lambda b: b.publish("c", "text"), TypeError),
        (lambda b: b.publish("c", bytearray(1)), TypeError),
        (lambda b: b.publish("c", b"x" * 65537), ValueError),
        (lambda b: b.get(b"key"), TypeError),
        (lambda b: b.put("k", b"x" * ((1 << 20) + 1), 1), ValueError),
        (lambda b: b.put("k", b"", 0), ValueError),
        (lambda b: b.put("k", b"", -1), ValueError),
        (lambda b: b.put("k", b"", float("nan")), ValueError),
        (lambda b: b.put("k", b"", float("inf")), ValueError),
        (lambda b: b.put("k", b"", True), ValueError),
        (lambda b: b.put("k", b"", 10**9), ValueError),
        (lambda b: b.put_if_absent("k", None, 1), TypeError),
        (lambda b: b.compare_and_set("k", "old", b"", 1), TypeError),
        (lambda b: b.delete(""), ValueError),
        (lambda b: b.claim("t", "soon"), TypeError),
        (lambda b: b.claim("", 1e12), ValueError),
    ],
)
def test_bad_arguments_are_refused_and_change_nothing(
    replicas: Callable[[int], Any], call: Callable[[Broker], Awaitable[Any]], error: type[Exception]
) -> None:
    async def body(broker: Broker) -> None:
        with pytest.raises(error):
            await call(broker)
        assert await broker.get("k") is None

    run(replicas, body)


@pytest.mark.parametrize(
    ("channels", "options", "error"),
    [
        ((), {}, ValueError),
        (("",), {}, ValueError),
        (("c",), {"max_queued": 0}, ValueError),
        (("c",), {"max_queued": True}, ValueError),
    ],
)
def test_bad_subscriptions_are_refused(
    replicas: Callable[[int], Any],
    channels: tuple[str, ...],
    options: dict[str, Any],
    error: type[Exception],
) -> None:
    async def body(broker: Broker) -> None:
        with pytest.raises(error):
            broker.subscribe(*channels, **options)

    run(replicas, body)


# What only one of them has.


def test_the_in_process_store_is_bounded() -> None:
    async def body() -> None:
        async with InProcessBroker(max_entries=2) as broker:
            await broker.put("a", b"1", 60)
            await broker.put("b", b"2", 60)
            with pytest.raises(BrokerError, match="full"):
                await broker.put("c", b"3", 60)
            assert await broker.get("c") is None
            await broker.put("a", b"again", 60)  # replacing takes no room
            assert await broker.claim("t1", time.time() + 60)
            assert await broker.claim("t2", time.time() + 60)
            with pytest.raises(BrokerError, match="full"):
                await broker.claim("t3", time.time() + 60)

    asyncio.run(body())


def test_the_in_process_store_follows_its_clock() -> None:
    now = [1000.0]

    async def body() -> None:
        async with InProcessBroker(clock=lambda: now[0]) as broker:
            await broker.put("k", b"v", 10)
            assert await broker.claim("t", 1010.0)
            now[0] = 1009.9
            assert await broker.get("k") == b"v"
            assert not await broker.claim("t", 1010.0)
            now[0] = 1010.0
            assert await broker.get("k") is None
            assert not await broker.claim("t", 1010.0)  # expired: never won
            assert await broker.claim("t", 1020.0)

    asyncio.run(body())


@pytest.mark.parametrize("limit", [{"max_message": 0}, {"max_value": -1}, {"max_entries": 1.5}])
def test_in_process_limits_are_checked(limit: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        InProcessBroker(**limit)


def test_redis_needs_a_client_that_returns_bytes(redis_url: str) -> None:
    with pytest.raises(ValueError, match="decode_responses"):
        RedisBroker(Redis.from_url(redis_url, decode_responses=True))
    with pytest.raises(TypeError):
        RedisBroker("redis://127.0.0.1")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RedisBroker(Redis.from_url(redis_url), subscribe_timeout=0)


def test_an_unreachable_redis_is_a_broker_error() -> None:
    url = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there

    async def body() -> None:
        async with RedisBroker.from_url(url, subscribe_timeout=2) as broker:
            for operation in (broker.get("k"), broker.put("k", b"", 1), broker.publish("c", b"")):
                with pytest.raises(BrokerError, match="Redis failed"):
                    await operation
            with pytest.raises(BrokerError):
                async with broker.subscribe("c"):
                    pass

    asyncio.run(body())


def test_a_client_given_to_the_broker_stays_open(redis_url: str) -> None:
    async def body() -> None:
        client = Redis.from_url(redis_url)
        async with RedisBroker(client, prefix="given:") as broker:
            await broker.put("k", b"v", 60)
        assert await client.get("given:kv:k") == b"v"  # the layout the module names
        await client.aclose()

    asyncio.run(body())


def test_entering_waits_until_redis_confirms(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A slow link to Redis: the SUBSCRIBE leaves 0.2 s late. A subscription
    # that did not wait for Redis's confirmation would miss the message
    # published right after it was entered.
    sent = PubSub.execute_command
    late: list[asyncio.Future[None]] = []

    async def slowly(self: PubSub, *args: Any) -> None:
        await self.connect()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated

        async def send() -> None:
            await asyncio.sleep(0.2)
            await sent(self, *args)

        late.append(asyncio.ensure_future(send()))

    monkeypatch.setattr(PubSub, "execute_command", slowly)

    async def body() -> None:
        async with RedisBroker.from_url(redis_url, prefix="slow:") as a:
            async with RedisBroker.from_url(redis_url, prefix="slow:") as b:
                async with b.subscribe("c") as sub:
                    assert await a.publish("c", b"right after")
                    assert (await receive(sub)).data == b"right after"
                # The UNSUBSCRIBE too, before the broker closes.
                await asyncio.wait_for(asyncio.gather(*late), WAIT)

    asyncio.run(body())


def test_a_lost_redis_ends_every_subscription(tmp_path: Path) -> None:
    async def body(url: str, stop: Callable[[], None]) -> None:
        async with RedisBroker.from_url(url) as broker:
            async with broker.subscribe("a") as one, broker.subscribe("b") as other:
                await broker.publish("a", b"before")
                assert (await receive(one)).data == b"before"
                stop()
                for sub in (one, other):
                    with pytest.raises(BrokerError, match="Redis failed"):
                        await asyncio.wait_for(sub.__anext__(), 3 * WAIT)

    with ExitStack() as stack:
        url = stack.enter_context(redis_server(tmp_path))
        asyncio.run(body(url, stack.close))
