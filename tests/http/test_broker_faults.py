"""Tests for the bounds of mcp_schema.redis_calls, mcp_schema.redis_broker and
mcp_schema.tasks.redis_store against a fake Redis on loopback that misbehaves
as a real one does when it fails: it accepts connections and never answers
(frozen, as under SIGSTOP: TCP stays open), closes a connection as soon as a
command arrives (a restart), or confirms a subscription and then answers
nothing, not even PING."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from redis.asyncio.client import PubSub

from mcp_schema import redis_calls
from mcp_schema.broker import BrokerError
from mcp_schema.errors import UnavailableError
from mcp_schema.redis_broker import RedisBroker
from mcp_schema.tasks.redis_store import RedisTaskStore

FAST: dict[str, float] = {"connect_timeout": 0.3, "command_timeout": 0.2}
# For tests of what follows a broken connection, not of a bound: on a loaded
# machine a loopback connect (and its hello) can take longer than FAST allows.
PATIENT: dict[str, float] = {"connect_timeout": 10.0, "command_timeout": 10.0}


async def _command(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> list[bytes] | None:
    """The next RESP command (an array of bulk strings) but the client's
    hello on connecting (``CLIENT SETINFO``, answered OK), or None at the end."""
    while True:
        head = await reader.readline()
        if not head.startswith(b"*"):
            return None
        parts = []
        for _ in range(int(head[1:])):
            size = int((await reader.readline())[1:])
            parts.append((await reader.readexactly(size + 2))[:-2])
        if parts[0].upper() != b"CLIENT":
            return parts
        writer.write(b"+OK\r\n")
        await writer.drain()


class FakeRedis:
    """What the fake saw: the commands, by connection."""

    def __init__(self) -> None:
        self.commands: list[list[bytes]] = []
        self.connections = 0


Behaviour = Callable[[FakeRedis, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def fake(behaviour: Behaviour) -> AsyncIterator[tuple[str, FakeRedis]]:
    seen = FakeRedis()
    held: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.connections += 1
        held.append(writer)
        try:
            await behaviour(seen, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"redis://127.0.0.1:{port}/0", seen
    finally:
        for writer in held:
            writer.close()
        server.close()


async def frozen(
    seen: FakeRedis, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    while (command := await _command(reader, writer)) is not None:
        seen.commands.append(command)  # and no answer, ever


async def restarting(
    seen: FakeRedis, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Closes the first two connections at their first command; then a
    Redis whose every key is missing."""
    while (command := await _command(reader, writer)) is not None:
        seen.commands.append(command)
        if seen.connections <= 2:
            writer.close()
            return
        writer.write(b"$-1\r\n")
        await writer.drain()


def _confirm(writer: asyncio.StreamWriter, channels: list[bytes]) -> None:
    """Confirms a SUBSCRIBE to each of ``channels``, as Redis does."""
    for channel in channels:
        writer.write(b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(channel), channel))


async def deaf_after_subscribing(
    seen: FakeRedis, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    while (command := await _command(reader, writer)) is not None:
        seen.commands.append(command)
        if command[0].upper() == b"SUBSCRIBE":
            _confirm(writer, command[1:])
            await writer.drain()


async def healthy_subscriber(
    seen: FakeRedis, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Confirms every SUBSCRIBE and answers every PING, as a subscribed Redis does."""
    while (command := await _command(reader, writer)) is not None:
        seen.commands.append(command)
        if command[0].upper() == b"SUBSCRIBE":
            _confirm(writer, command[1:])
        elif command[0].upper() == b"PING":
            writer.write(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")
        await writer.drain()


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), 30))


def test_a_frozen_redis_fails_every_broker_call_within_its_bound() -> None:
    async def body() -> None:
        async with fake(frozen) as (url, seen):
            async with RedisBroker.from_url(url, **FAST) as broker:
                calls = {
                    "get": broker.get("k"),
                    "set": broker.put("k", b"v", 5),
                    "publish": broker.publish("c", b"m"),
                    "claim": broker.claim("t", time.time() + 60),
                    "compare and set": broker.compare_and_set("k", b"a", b"b", 5),
                }
                for name, call in calls.items():
                    began = time.monotonic()
                    with pytest.raises(BrokerError, match="Redis"):
                        await call
                    assert time.monotonic() - began < 0.6, name  # 0.2 s command + slack
            sent = [c[0].upper() for c in seen.commands]
            assert sent.count(b"SET") == 2 and sent.count(b"PUBLISH") == 1  # never sent twice
            assert sent.count(b"GET") == 1  # a timeout is not retried

    run(body)


def test_a_read_is_retried_twice_after_a_broken_connection_and_a_write_never() -> None:
    async def body() -> None:
        async with fake(restarting) as (url, seen):
            async with RedisBroker.from_url(url, **PATIENT) as broker:
                assert await broker.get("k") is None  # two connections lost, the third answers
                assert seen.connections == 3
        async with fake(restarting) as (url, seen):
            async with RedisBroker.from_url(url, **PATIENT) as broker:
                with pytest.raises(BrokerError, match="Redis failed to set"):
                    await broker.put("k", b"v", 5)
                assert [c[0] for c in seen.commands] == [b"SET"]  # its outcome unknown: once

    run(body)


def test_a_subscription_to_a_frozen_redis_is_refused_within_its_bound() -> None:
    async def body() -> None:
        async with fake(frozen) as (url, _):
            async with RedisBroker.from_url(url, **FAST) as broker:
                began = time.monotonic()
                entries = [broker.subscribe(f"c{i}").__aenter__() for i in range(5)]
                outcomes = await asyncio.gather(*entries, return_exceptions=True)
                assert all(isinstance(o, BrokerError) for o in outcomes), outcomes
                # One bound for all: they do not queue behind each other's waits.
                assert time.monotonic() - began < 1.0

    run(body)


def test_a_subscriber_connection_that_stops_answering_ping_is_lost() -> None:
    async def body() -> None:
        async with fake(deaf_after_subscribing) as (url, seen):
            async with RedisBroker.from_url(url, ping_interval=0.2, **FAST) as broker:
                async with broker.subscribe("c") as subscription:
                    began = time.monotonic()
                    with pytest.raises(BrokerError, match="PING"):
                        await subscription.__anext__()
                    assert time.monotonic() - began < 0.2 + 0.5 + 0.3 + 0.3
                assert [c[0].upper() for c in seen.commands].count(b"PING") == 1

    run(body)


@dataclass
class HeldRead:
    """The subscriber's next read once ``armed``: it says it is ``reading``,
    then waits for ``gate`` and ends empty, in the loop turn the test cancels."""

    armed: asyncio.Event = field(default_factory=asyncio.Event)
    reading: asyncio.Event = field(default_factory=asyncio.Event)
    gate: asyncio.Event = field(default_factory=asyncio.Event)


@pytest.fixture
def held_read(monkeypatch: pytest.MonkeyPatch) -> HeldRead:
    held, real = HeldRead(), PubSub.get_message

    async def held_once(self: PubSub, **options: Any) -> Any:
        if held.armed.is_set() and not held.gate.is_set():
            held.reading.set()
            await held.gate.wait()
            return None
        return await real(self, **options)

    monkeypatch.setattr(PubSub, "get_message", held_once)
    return held


def test_closing_ends_the_reader_when_its_read_ends_as_it_is_cancelled(
    held_read: HeldRead,
) -> None:
    # Before Python 3.12, asyncio.wait_for drops a cancel that arrives in the
    # loop turn its inner read ends in: the reader would go on reading (and
    # Redis on answering its PINGs), and aclose would wait for it forever.
    async def body() -> None:
        async with fake(healthy_subscriber) as (url, _):
            broker = RedisBroker.from_url(url, ping_interval=0.2, **PATIENT)
            async with broker.subscribe("c"):  # confirmed: the next read is held
                held_read.armed.set()
                await asyncio.wait_for(held_read.reading.wait(), 5)
                held_read.gate.set()
                closing = asyncio.ensure_future(broker.aclose())
                await asyncio.wait_for(closing, 2)  # within a read and a PING (0.1 + 0.7 s)

    run(body)


def test_one_cancel_ends_the_reader_of_a_broker_never_closed(held_read: HeldRead) -> None:
    # As at the end of asyncio.run (one cancel of each task left, then a wait
    # for them), with the cancel coming in the turn the reader's read ends.
    async def body() -> None:
        async with fake(healthy_subscriber) as (url, _):
            broker = RedisBroker.from_url(url, ping_interval=0.2, **PATIENT)
            async with broker.subscribe("c"):
                held_read.armed.set()
                await asyncio.wait_for(held_read.reading.wait(), 5)
                readers = set(broker._readers)
                held_read.gate.set()
                for reader in readers:
                    reader.cancel()
                _, running = await asyncio.wait(readers, timeout=2)
                assert not running
            await broker.aclose()

    run(body)


def test_the_task_store_is_bounded_on_a_frozen_redis() -> None:
    async def body() -> None:
        async with fake(frozen) as (url, seen):
            store = RedisTaskStore(url, connect_timeout=0.3, command_timeout=0.2)
            try:
                began = time.monotonic()
                with pytest.raises(UnavailableError, match="Redis"):  # HTTP 503
                    await store.get("t", "p")
                assert time.monotonic() - began < 0.6
            finally:
                await store.aclose()
            assert len(seen.commands) == 1

    run(body)


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), True, "1"])
def test_timeouts_are_positive_finite_seconds(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        redis_calls.Timeouts(connect=bad)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError)):
        RedisBroker.from_url("redis://127.0.0.1:1/0", command_timeout=bad)  # type: ignore[arg-type]
