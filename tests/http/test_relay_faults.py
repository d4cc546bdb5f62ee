"""Tests for mcp_schema.subscription_relay when its broker fails: the relay
tears its listens down, subscribes again with backoff once the broker is
back, tells the listens opened while it was deaf that the lists may have
changed, and hears other replicas again."""

from __future__ import annotations

import asyncio

import pytest

from mcp_schema import subscription_relay
from mcp_schema.broker import BrokerError, Fanout, InProcessBroker, Subscription
from mcp_schema.subscription_relay import CHANNEL, Relay
from tests.http.test_broker import WAIT
from tests.http.test_subscriptions import TOOLS, endpoint, events, post_listen


class Flaky(InProcessBroker):
    """An `InProcessBroker` that can lose its subscriptions and refuse
    everything while ``down`` (Redis restarted, or frozen)."""

    down = False

    def lose(self) -> None:
        fanout, self._fanout = self._fanout, Fanout()
        self.down = True
        fanout.fail_all(BrokerError("Redis failed to keep the subscriptions"))

    def listened(self, channel: str) -> bool:
        return bool(self._fanout._by_channel.get(channel))

    async def _attach(self, subscription: Subscription) -> None:
        if self.down:
            raise BrokerError("Redis failed to subscribe")
        await super()._attach(subscription)

    async def _publish(self, channel: str, data: bytes) -> bool:
        if self.down:
            raise BrokerError("Redis failed to publish")
        return await super()._publish(channel, data)


def test_a_relay_subscribes_again_once_its_broker_is_back_and_resyncs() -> None:
    async def body() -> None:
        broker = Flaky()
        here, there = endpoint(), endpoint()
        async with (
            Relay(here.subscriptions, broker) as publishing,
            Relay(there.subscriptions, broker),
        ):
            held = post_listen(there, toolsListChanged=True)
            events(held)
            broker.lose()
            while len(there.subscriptions):
                await asyncio.sleep(0.01)
            (cancelled,) = events(held)
            assert cancelled["params"]["reason"] == "the server lost its broker"
            deaf = post_listen(there, 2, toolsListChanged=True)  # opened while deaf
            events(deaf)
            await asyncio.sleep(0.3)  # a few attempts fail meanwhile
            assert not broker.listened(CHANNEL)
            broker.down = False
            began = asyncio.get_running_loop().time()
            while not (told := events(deaf)):
                await asyncio.sleep(0.01)
            assert [e["method"] for e in told] == [TOOLS]  # what may have changed
            assert asyncio.get_running_loop().time() - began < 0.5  # the backoff's bound
            heard = post_listen(there, 3, toolsListChanged=True)
            events(heard)
            await publishing.tools_list_changed()  # another replica's change reaches it again
            while not (got := events(heard)):
                await asyncio.sleep(0.01)
            assert [e["method"] for e in got] == [TOOLS]

    asyncio.run(asyncio.wait_for(body(), WAIT))


class Stuck(InProcessBroker):
    """An `InProcessBroker` whose subscriptions never finish closing (a
    broker's round trip that never comes back)."""

    async def _detach(self, subscription: Subscription) -> None:
        await asyncio.Event().wait()


def test_closing_a_relay_waits_for_its_cancelled_pump_within_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(subscription_relay, "CLOSE_SECONDS", 0.05)

    async def body() -> None:
        relay = Relay(endpoint().subscriptions, Stuck())
        await relay.start()
        await asyncio.sleep(0)  # the pump waits for messages
        began = asyncio.get_running_loop().time()
        await asyncio.wait_for(relay.aclose(), 1.0)  # unbounded, it never returns
        assert asyncio.get_running_loop().time() - began < 0.5

    asyncio.run(asyncio.wait_for(body(), WAIT))
