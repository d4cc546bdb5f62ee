"""`mcp_schema.http.adapter.Leaving`, the watch for a client that leaves
while its request runs: no watch (no ``receive``) for a request answered
within ``after``, the request cancelled when its client leaves after it,
and the one timer of a loop's requests serving each of them."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_schema.http.adapter import Leaving, Message


class Client:
    """An ASGI ``receive`` whose body was read: it waits until `leave`."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()
        self.asked = 0

    async def receive(self) -> Message:
        self.asked += 1
        await self.gone.wait()
        return {"type": "http.disconnect"}

    def leave(self) -> None:
        self.gone.set()


async def request(client: Client, seconds: float, after: float = 0.02) -> tuple[bool, bool]:
    """A request running ``seconds`` under the watch: whether it ran to its
    end, and whether its client's leaving cancelled it."""
    watch = Leaving(client.receive, after)
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        if not watch.absorbed():
            raise
        return False, True
    finally:
        watch.stop()
    return True, watch.absorbed()


def test_a_request_answered_in_time_is_never_watched() -> None:
    async def body() -> None:
        client = Client()
        assert await request(client, 0) == (True, False)
        client.leave()
        await asyncio.sleep(0.05)  # past the timer: it starts no watch for a request over
        assert client.asked == 0

    asyncio.run(body())


def test_a_client_leaving_a_long_request_cancels_it() -> None:
    async def body() -> None:
        client = Client()
        running = asyncio.ensure_future(request(client, 10))
        await asyncio.sleep(0.05)
        assert client.asked == 1  # watched once its time came
        client.leave()
        assert await asyncio.wait_for(running, 5) == (False, True)

    asyncio.run(body())


def test_one_timer_watches_each_request_still_going_when_its_time_comes() -> None:
    async def body() -> None:
        quick, slow, later = Client(), Client(), Client()
        requests: list[asyncio.Future[Any]] = [asyncio.ensure_future(request(quick, 0.01, 0.2))]
        requests.append(asyncio.ensure_future(request(slow, 10, 0.2)))
        await asyncio.sleep(0.1)
        requests.append(asyncio.ensure_future(request(later, 10, 0.2)))
        await asyncio.sleep(0.15)  # past the slow one's time, before the later one's
        assert (quick.asked, slow.asked, later.asked) == (0, 1, 0)
        await asyncio.sleep(0.1)
        assert later.asked == 1
        later.leave()
        slow.leave()
        assert await asyncio.gather(*requests) == [(True, False), (False, True), (False, True)]

    asyncio.run(body())


def test_each_event_loop_watches_its_own_requests() -> None:
    for _ in range(2):  # the second loop's request is watched by a timer of its own
        test_a_client_leaving_a_long_request_cancels_it()
