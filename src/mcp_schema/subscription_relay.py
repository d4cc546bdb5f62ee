"""`Relay`: publications of ``subscriptions/listen`` changes across
replicas, through a `mcp_schema.broker.Broker` (hand-written runtime module).

`Relay.publish` (and its four spellings) publishes a change on the
broker's ``channel``; each process runs one relay (`start`, or
``async with``), subscribed once to that channel, which hands every change
it receives to its local `mcp_schema.subscriptions.Subscriptions`, and so
to every listen open on this replica that asks for it. The default broker
is an `InProcessBroker` (one process: every replica is this one).

On the replica that publishes, a change reaches the listens open when
`publish` returns, and none opened after (the relay hands it to them at
once and ignores its own message when the broker brings it back). On
another replica it reaches the listens open when that relay receives it:
one published just before a listen opened there may still reach it (a
spare notification, which a client answers by refetching; never a lost
one). Messages are small JSON objects (``from``: the publishing relay,
``method``, ``uri``); one that is not a change is ignored and logged. A relay that falls behind
the broker (`SubscriptionOverflow`) may have missed changes, so it tears
down every local listen (``notifications/cancelled``: the clients listen
again and refetch) and subscribes again; a broker that fails tears them
down too and the relay stops.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from types import TracebackType

import jiter

from mcp_schema.broker import (
    DEFAULT_MAX_QUEUED,
    Broker,
    BrokerError,
    InProcessBroker,
    Subscription,
    SubscriptionOverflow,
)
from mcp_schema.subscriptions import (
    PROMPTS,
    RESOURCE_UPDATED,
    RESOURCES,
    TOOLS,
    Change,
    Subscriptions,
    checked_change,
)

__all__ = ["CHANNEL", "Relay"]

CHANNEL = "mcp-schema/subscriptions"
"""The broker channel a relay publishes and listens on by default."""

_LOG = logging.getLogger("mcp_schema.subscriptions")
_MISSED = "the server may have missed changes: listen again"
_BROKEN = "the server lost its broker"


def _change_of(data: bytes) -> tuple[str, Change] | None:
    """The publishing relay and the change of a broker message; None for another message."""
    try:
        value = jiter.from_json(data)
        if not isinstance(value, dict) or set(value) - {"from", "method", "uri"}:
            return None
        origin, method, uri = value.get("from"), value.get("method"), value.get("uri")
        if not isinstance(origin, str) or not isinstance(method, str):
            return None
        if not isinstance(uri, (str, type(None))):
            return None
        return origin, checked_change(method, uri)
    except ValueError:
        return None


class Relay:
    """Changes published on every replica, delivered to ``subscriptions``
    (see the module). ``max_queued``: broker messages waiting for the relay."""

    def __init__(
        self,
        subscriptions: Subscriptions,
        broker: Broker | None = None,
        *,
        channel: str = CHANNEL,
        max_queued: int = DEFAULT_MAX_QUEUED,
    ) -> None:
        if not isinstance(subscriptions, Subscriptions):
            raise TypeError(
                f"subscriptions must be Subscriptions, not {type(subscriptions).__name__}"
            )
        self.subscriptions = subscriptions
        self.broker: Broker = InProcessBroker() if broker is None else broker
        self.channel = channel
        self.broker.subscribe(channel, max_queued=max_queued)  # checks both, once
        self._max_queued = max_queued
        self._task: asyncio.Task[None] | None = None
        self._origin = secrets.token_hex(8)

    async def publish(self, method: str, uri: str | None = None) -> None:
        """Publish notification ``method`` (``uri``: of the resource updated)
        to the listens of every replica."""
        change = checked_change(method, uri)
        message = {"from": self._origin, "method": method, **({} if uri is None else {"uri": uri})}
        await self.broker.publish(self.channel, json.dumps(message).encode())
        self.subscriptions.publish(*change)  # here at once: the listens open now, no later one

    async def tools_list_changed(self) -> None:
        await self.publish(TOOLS)

    async def prompts_list_changed(self) -> None:
        await self.publish(PROMPTS)

    async def resources_list_changed(self) -> None:
        await self.publish(RESOURCES)

    async def resource_updated(self, uri: str) -> None:
        await self.publish(RESOURCE_UPDATED, uri)

    async def start(self) -> None:
        """Subscribe: every change published from now on reaches this
        replica's listens. Once."""
        if self._task is not None:
            raise RuntimeError("a relay is started once")
        subscription = self.broker.subscribe(self.channel, max_queued=self._max_queued)
        await subscription.__aenter__()
        self._task = asyncio.ensure_future(self._pump(subscription))

    async def _pump(self, subscription: Subscription) -> None:
        while True:
            try:
                async for message in subscription:
                    received = _change_of(message.data)
                    if received is None:
                        _LOG.warning("ignored a broker message that is no change")
                    elif received[0] != self._origin:  # this relay's own went out at once
                        self.subscriptions.publish(*received[1])
                return  # closed
            except SubscriptionOverflow:
                self.subscriptions.cancel(_MISSED)
            except BrokerError:
                _LOG.exception("the subscriptions relay lost its broker")
                self.subscriptions.cancel(_BROKEN)
                return
            finally:
                await subscription.aclose()
            subscription = self.broker.subscribe(self.channel, max_queued=self._max_queued)
            await subscription.__aenter__()

    async def aclose(self) -> None:
        """Stop relaying (the broker stays open: it is the caller's)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def __aenter__(self) -> Relay:
        await self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
