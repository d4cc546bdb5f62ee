"""`mcp_schema.server.toolset`: one tool set for every replica. Two
`Server`s of the same code (two replicas), each with its relay on one
broker: a change through either is one transition, reaches the listens of
both once their replica has read it, and no request reads the store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp_schema.broker import InProcessBroker
from mcp_schema.server import Server
from mcp_schema.server.toolset import Refreshing
from mcp_schema.subscription_relay import Relay
from tests.server.serving import Handshake, Stateless, message

KEY = "mcp-schema/server/toggling/tools"


def code() -> Server:
    """The server's code, as every replica runs it."""
    server = Server("toggling")

    @server.tool()
    async def toggle() -> str:
        return "added" if await server.toggle("extra") else "removed"

    @server.tool(enabled=False)
    def extra() -> str:
        return "here"

    return server


class Counting(InProcessBroker):
    """A broker that counts the reads of its store."""

    reads = 0

    async def get(self, key: str) -> bytes | None:
        Counting.reads += 1
        return await super().get(key)


@asynccontextmanager
async def replicas(
    broker: InProcessBroker, count: int = 2
) -> AsyncIterator[list[tuple[Server, Refreshing]]]:
    made = []
    relays = []
    for _ in range(count):
        server = code()
        listens = Refreshing(server.tools)
        relay = Relay(listens, broker)
        server.tools.bind(broker, KEY, relay.tools_list_changed)
        await relay.start()
        await server.tools.load()
        made.append((server, listens))
        relays.append(relay)
    try:
        yield made
    finally:
        for relay in relays:
            await relay.aclose()


def names(server: Server) -> list[str]:
    return [t["name"] for t in server.tools.listed["tools"]]


async def heard(listens: Refreshing, server: Server) -> tuple[list[str], list[str]]:
    """What one listen of ``listens`` hears next, and the tools its replica
    lists at that moment."""
    listen = listens.open(1, {"toolsListChanged": True})
    ready = asyncio.Event()
    listen.on_ready = ready.set
    listen.take()  # the acknowledgement
    ready.clear()
    await asyncio.wait_for(ready.wait(), 5)
    frames = [json.loads(f)["method"] for f in listen.take()]
    return frames, names(server)


def test_a_change_through_one_replica_is_listed_by_the_other_once_its_listens_hear_it() -> None:
    async def test() -> None:
        async with replicas(InProcessBroker()) as [(first, _), (second, listens)]:
            hearing = asyncio.ensure_future(heard(listens, second))
            await asyncio.sleep(0)
            await first.toggle("extra")
            frames, listed = await hearing
            assert frames == ["notifications/tools/list_changed"]
            assert listed == ["toggle", "extra"]  # read before it was told
            assert first.tools.enabled("extra") and second.tools.enabled("extra")

    asyncio.run(test())


def test_racing_toggles_through_two_replicas_are_each_one_transition() -> None:
    async def test() -> list[bool]:
        async with replicas(InProcessBroker()) as [(first, _), (second, _)]:
            told = await asyncio.gather(
                *((first, second)[i % 2].toggle("extra") for i in range(12))
            )
            await asyncio.sleep(0.05)  # the last announcement read everywhere
            assert names(first) == names(second) == ["toggle"]  # off again
            return told

    told = asyncio.run(test())
    assert told.count(True) == told.count(False) == 6


def test_a_replica_started_later_reads_the_set_as_it_is() -> None:
    async def test() -> None:
        broker = InProcessBroker()
        async with replicas(broker, 1) as [(first, _)]:
            await first.enable("extra")
            async with replicas(broker, 1) as [(late, _)]:
                assert names(late) == ["toggle", "extra"]

    asyncio.run(test())


def test_listing_and_calling_read_no_store() -> None:
    async def test() -> None:
        async with replicas(Counting()) as [(first, _), _second]:
            await first.enable("extra")
            await asyncio.sleep(0.05)  # its announcement read
            served = Stateless(first)
            Counting.reads = 0
            for _ in range(5):
                (listed,) = await served.asend(message("tools/list"))
                assert len(listed["result"]["tools"]) == 2
                (called,) = await served.asend(message("tools/call", {"name": "extra"}))
                assert called["result"]["content"][0]["text"] == "here"
            assert Counting.reads == 0

    asyncio.run(test())


def test_the_handshake_session_that_changed_the_set_is_told() -> None:
    server = code()  # no broker: this process's set alone
    client = Handshake(server)
    frames = client.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "toggle"}}
    )
    assert [f.get("method") for f in frames] == [None, "notifications/tools/list_changed"]
    assert frames[0]["result"]["content"][0]["text"] == "added"
    listed: Any = client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})[0]
    assert [t["name"] for t in listed["result"]["tools"]] == ["toggle", "extra"]
