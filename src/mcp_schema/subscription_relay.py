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
``method``, ``uri``; a task's status: ``principal`` and ``task``, its
``DetailedTask``); one that is not a change is ignored and logged.

Task status notifications: `Relay.carry` makes a `TaskServer`'s
``on_change`` hand each record to this replica's listens at once and queue
it for the broker, sent in order by one sender; while it waits, a task's
newer status replaces its older one (the coalescing of listens), so what
waits is bounded by the tasks the store holds. A relay that falls behind
the broker (`SubscriptionOverflow`) may have missed changes, so it tears
down every local listen (``notifications/cancelled``: the clients listen
again and refetch) and subscribes again. A broker that fails (Redis
restarted, or frozen: `mcp_schema.redis_broker` checks its connection with
``PING``) tears them down too, and the relay subscribes again, after a pause
that grows from 0.05 s to `RESUBSCRIBE_MAX` while it fails. Once it is
subscribed again, the listens opened while it was deaf are told the lists
may have changed (``notifications/tools/list_changed``, prompts' and
resources'), so their clients refetch; a task status published meanwhile
is not repeated (``tasks/get`` reads it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Mapping
from types import TracebackType
from typing import Any

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
    TASKS,
    TOOLS,
    Change,
    Subscriptions,
    checked_change,
)
from mcp_schema.tasks.server import TaskServer
from mcp_schema.tasks.store import TaskRecord

__all__ = ["CHANNEL", "CLOSE_SECONDS", "RESUBSCRIBE_MAX", "Relay"]

CHANNEL = "mcp-schema/subscriptions"
"""The broker channel a relay publishes and listens on by default."""

RESUBSCRIBE_MAX = 0.4
"""Longest pause, in seconds, between two attempts to subscribe again after the broker failed."""

CLOSE_SECONDS = 2.0
"""How long `Relay.aclose` waits for each of its tasks once cancelled: a
broker stuck closing its subscription is left behind, not waited for."""

_RESUBSCRIBE_MIN = 0.05
_LOG = logging.getLogger("mcp_schema.subscriptions")
_MISSED = "the server may have missed changes: listen again"
_BROKEN = "the server lost its broker"


_TaskStatus = tuple[str, Mapping[str, Any]]
"""A task's status published: its principal, its ``DetailedTask``."""


def _task_of(value: dict[str, Any]) -> _TaskStatus | None:
    principal, task = value.get("principal"), value.get("task")
    if set(value) != {"from", "method", "principal", "task"} or not isinstance(principal, str):
        return None
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        return None
    return principal, task


def _change_of(data: bytes) -> tuple[str, Change | _TaskStatus] | None:
    """The publishing relay and the change (or task status) of a broker
    message; None for another message."""
    try:
        value = jiter.from_json(data)
        if not isinstance(value, dict):
            return None
        if value.get("method") == TASKS and isinstance(value.get("from"), str):
            task = _task_of(value)
            return None if task is None else (value["from"], task)
        if set(value) - {"from", "method", "uri"}:
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
        self._outbox: dict[tuple[str, str], bytes] = {}  # (principal, task id): its latest
        self._sender: asyncio.Task[None] | None = None

    async def publish(self, method: str, uri: str | None = None) -> None:
        """Publish notification ``method`` (``uri``: of the resource updated)
        to the listens of every replica."""
        change = checked_change(method, uri)
        message = {"from": self._origin, "method": method, **({} if uri is None else {"uri": uri})}
        await self.broker.publish(self.channel, json.dumps(message).encode())
        self.subscriptions.publish(*change)  # here at once: the listens open now, no later one

    def carry(self, tasks: TaskServer) -> None:
        """Make ``tasks``' ``on_change`` send task status notifications to the
        listens of every replica (replacing the endpoint's, which reaches this
        replica's only). The hook is called in the event loop running ``tasks``."""

        def changed(record: TaskRecord) -> None:
            task = tasks.detailed(record)
            message = {"from": self._origin, "method": TASKS, "principal": record.principal}
            key = (record.principal, record.task_id)
            self._outbox.pop(key, None)  # the newer status goes last
            self._outbox[key] = json.dumps({**message, "task": task}).encode()
            self.subscriptions.task_changed(record.principal, task)
            if self._sender is None:
                self._sender = asyncio.ensure_future(self._send())

        tasks.on_change = changed

    async def _send(self) -> None:
        """Publish the task statuses queued, oldest first, until none is left."""
        try:
            while self._outbox:
                key = next(iter(self._outbox))
                await self.broker.publish(self.channel, self._outbox.pop(key))
        except BrokerError:
            _LOG.exception("the subscriptions relay could not publish a task's status")
            self._outbox.clear()
        finally:
            self._sender = None

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
                        self._deliver(received[1])
                return  # closed
            except SubscriptionOverflow:
                self.subscriptions.cancel(_MISSED)
            except BrokerError as exc:
                _LOG.warning("the subscriptions relay lost its broker: %s", exc.message)
                self.subscriptions.cancel(_BROKEN)
            finally:
                await subscription.aclose()
            subscription = await self._subscribe_again()

    async def _subscribe_again(self) -> Subscription:
        """A new subscription, tried until the broker gives one; then the
        listens opened meanwhile are told what may have changed."""
        pause = _RESUBSCRIBE_MIN
        while True:
            subscription = self.broker.subscribe(self.channel, max_queued=self._max_queued)
            try:
                await subscription.__aenter__()
            except BrokerError:
                await asyncio.sleep(pause)
                pause = min(2 * pause, RESUBSCRIBE_MAX)
                continue
            for method in (TOOLS, PROMPTS, RESOURCES):
                self.subscriptions.publish(method)
            _LOG.info("the subscriptions relay listens again")
            return subscription

    def _deliver(self, received: Change | _TaskStatus) -> None:
        """A change (or a task's status) another replica published, to this one's listens."""
        subject, detail = received
        if isinstance(detail, Mapping):
            self.subscriptions.task_changed(subject, detail)
        else:
            self.subscriptions.publish(subject, detail)

    async def aclose(self) -> None:
        """Stop relaying (the broker stays open: it is the caller's); the
        task statuses not sent yet are dropped. Each of its tasks is waited
        for at most `CLOSE_SECONDS` once cancelled."""
        self._outbox.clear()
        for task in (self._task, self._sender):
            if task is None:
                continue
            task.cancel()
            # A cancelled pump still closes its subscription (the broker's
            # round trip), which may never end: waited for within a bound.
            done, _ = await asyncio.wait({task}, timeout=CLOSE_SECONDS)
            if not done:
                _LOG.warning("the subscriptions relay's task did not end in %g s", CLOSE_SECONDS)
            elif not task.cancelled():
                task.result()  # what it raised, as before
        self._task = self._sender = None

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
