"""What must cross replicas, behind one small asyncio interface (hand-written
runtime module).

A stateless-era server keeps no state between requests, so any replica can
serve any request; three things still have to reach every replica, and
`Broker` is them:

- **publish/subscribe** of small byte messages on named channels: a change
  published on one replica reaches the subscriptions of every replica (a
  tools-list change to every open ``subscriptions/listen`` stream; a message
  to whichever replica holds a stream, on a channel named for it). Delivery is
  at most once, in publication order per publisher and channel, to the
  subscriptions open when the message is published; nothing is kept for later.
- a **key-value store** with expiry (bytes under a name, for a time): the
  records of handshake-era sessions, with set-if-absent and compare-and-set
  so concurrent replicas do not overwrite one another.
- **single-use claims**: `Broker.claim` is the
  `mcp_schema.request_state.SingleUse` hook, so a sealed ``requestState`` can
  be served once across every replica.

`InProcessBroker` is the default: one process, nothing to install, bounded.
`mcp_schema.redis_broker.RedisBroker` (the ``redis`` extra) is the same
contract across processes. Every name and size is checked here, the same for
both: a name is 1 to `MAX_NAME` characters UTF-8 can carry, a message at most
``max_message`` bytes, a value at most ``max_value`` bytes, a ``ttl`` positive
and at most `MAX_TTL` seconds; past that a ``ValueError`` (``TypeError`` for
the wrong type), and nothing changes.

A subscription is bounded: at most ``max_queued`` messages wait for its reader.
A reader that falls further behind overflows: it still gets every message
queued before, then `SubscriptionOverflow`, and nothing after. A slow reader
never slows a publisher or another subscription, and never loses a message
silently (a server answers an overflow by ending the stream; the client may
listen again).
"""

from __future__ import annotations

import abc
import asyncio
import collections
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from mcp_schema.errors import InternalError, UnavailableError

# The one expiring table of this package: request_state's single-use store
# and this module's key-value store share its bounds and purge.
from mcp_schema.request_state import InMemorySingleUse, _Expiring

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

_T = TypeVar("_T")

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "DEFAULT_MAX_QUEUED",
    "DEFAULT_MAX_VALUE",
    "MAX_NAME",
    "MAX_TTL",
    "Broker",
    "BrokerError",
    "Fanout",
    "InProcessBroker",
    "Message",
    "Subscription",
    "SubscriptionOverflow",
]

MAX_NAME = 512
"""Longest channel, key or claim name, in characters."""

MAX_TTL = 366 * 86400.0
"""Longest ``ttl`` of a stored value, in seconds (a year)."""

DEFAULT_MAX_MESSAGE = 65536
"""Largest published message, in bytes, unless the broker is given another."""

DEFAULT_MAX_VALUE = 1 << 20
"""Largest stored value, in bytes, unless the broker is given another."""

DEFAULT_MAX_QUEUED = 256
"""Messages a subscription holds for its reader before it overflows."""


class BrokerError(UnavailableError):
    """-32603: the broker could not do what was asked (unreachable, full,
    closed): an `UnavailableError`, so a handler's call that fails with it
    is answered 503 over HTTP."""


class SubscriptionOverflow(BrokerError):
    """A subscription's reader fell more than ``max_queued`` messages behind."""


@dataclass(frozen=True)
class Message:
    """A published message as a subscription receives it."""

    channel: str
    data: bytes


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a string, not {type(name).__name__}")
    if not 0 < len(name) <= MAX_NAME:
        raise ValueError(f"{what} must have 1 to {MAX_NAME} characters, not {len(name)}")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not UTF-8 text (a lone surrogate)") from None
    return name


def _check_bytes(data: object, limit: int, what: str) -> bytes:
    if not isinstance(data, bytes):
        raise TypeError(f"{what} must be bytes, not {type(data).__name__}")
    if len(data) > limit:
        raise ValueError(f"{what} has {len(data)} bytes, over the limit of {limit}")
    return data


def _check_ttl(ttl: object) -> float:
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl <= MAX_TTL:
        raise ValueError(f"ttl must be a number of seconds above 0 and at most {MAX_TTL}")
    return float(ttl)


def _check_limit(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, not {value!r}")
    return value


class Subscription:
    """Messages of some channels, from the moment it is entered until it is
    left: ``async with broker.subscribe("tools") as sub: async for m in sub``.

    One task reads it. Leaving it (or `aclose`) ends the iteration; a broker
    that fails ends it with `BrokerError`, a reader that falls behind with
    `SubscriptionOverflow` (see the module).
    """

    def __init__(
        self,
        channels: tuple[str, ...],
        max_queued: int,
        attach: Callable[[Subscription], Awaitable[None]],
        detach: Callable[[Subscription], Awaitable[None]],
    ) -> None:
        self.channels = frozenset(channels)
        self._max_queued = max_queued
        self._attach = attach
        self._detach = detach
        self._queue: collections.deque[Message] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._failure: BrokerError | None = None
        self._state = "new"  # then "open", then "closed"

    async def __aenter__(self) -> Subscription:
        if self._state != "new":
            raise RuntimeError("a subscription is entered once")
        await self._attach(self)  # raises, and nothing is attached, or it is open
        self._state = "open"
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop receiving; what is still queued is dropped."""
        if self._state == "open":
            self._state = "closed"
            self._queue.clear()
            self._wake()
            await self._detach(self)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Message:
        while True:
            if self._queue:
                return self._queue.popleft()
            if self._state == "closed":
                raise StopAsyncIteration
            if self._state == "new":
                raise RuntimeError("enter the subscription (async with) before reading it")
            if self._failure is not None:
                raise self._failure
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def deliver(self, message: Message) -> None:
        """Queue ``message`` for the reader (what a broker calls; never blocks)."""
        if self._state != "open" or self._failure is not None:
            return
        if len(self._queue) >= self._max_queued:
            self.fail(SubscriptionOverflow(f"the reader fell {self._max_queued} messages behind"))
            return
        self._queue.append(message)
        self._wake()

    def fail(self, error: BrokerError) -> None:
        """End the iteration with ``error`` once the queue is read (a broker's failure)."""
        if self._failure is None:
            self._failure = error
            self._wake()


class Fanout:
    """The open subscriptions of one process by channel: what both brokers
    deliver a received message through."""

    def __init__(self) -> None:
        self._by_channel: dict[str, set[Subscription]] = {}

    def add(self, subscription: Subscription) -> list[str]:
        """Register ``subscription``; the channels nobody here listened to before."""
        new = [channel for channel in subscription.channels if channel not in self._by_channel]
        for channel in subscription.channels:
            self._by_channel.setdefault(channel, set()).add(subscription)
        return new

    def remove(self, subscription: Subscription) -> list[str]:
        """Forget ``subscription``; the channels nobody here listens to any more."""
        gone = []
        for channel in subscription.channels:
            listeners = self._by_channel.get(channel)
            if listeners is not None:
                listeners.discard(subscription)
                if not listeners:
                    del self._by_channel[channel]
                    gone.append(channel)
        return gone

    def deliver(self, channel: str, data: bytes) -> int:
        """Queue the message for every subscription to ``channel``; how many there were."""
        listeners = self._by_channel.get(channel, ())
        message = Message(channel, data)
        for subscription in listeners:
            subscription.deliver(message)
        return len(listeners)

    def fail_all(self, error: BrokerError) -> None:
        """End every subscription here with ``error`` (the broker closed or lost its backend)."""
        for subscription in {s for listeners in self._by_channel.values() for s in listeners}:
            subscription.fail(error)


class Broker(abc.ABC):
    """The interface (see the module). The public methods check their
    arguments, then call the ``_``-named method an implementation provides."""

    def __init__(
        self,
        *,
        max_message: int = DEFAULT_MAX_MESSAGE,
        max_value: int = DEFAULT_MAX_VALUE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.max_message = _check_limit(max_message, "max_message")
        self.max_value = _check_limit(max_value, "max_value")
        self.clock = clock
        self.telemetry: Telemetry | None = None
        """Where each round trip is counted (`Telemetry.count_broker`), or None."""

    async def _round(self, operation: str, pending: Awaitable[_T]) -> _T:
        """``pending``, one round trip, counted by ``operation`` and outcome."""
        telemetry = self.telemetry
        if telemetry is None or not telemetry.active:
            return await pending
        try:
            result = await pending
        except BrokerError:
            telemetry.count_broker(operation, "error")
            raise
        telemetry.count_broker(operation, "ok")
        return result

    async def publish(self, channel: str, data: bytes) -> bool:
        """Send ``data`` to every subscription to ``channel``, on every replica;
        whether one was listening (a channel named for one stream tells whether
        some replica still holds it)."""
        _check_name(channel, "channel")
        data = _check_bytes(data, self.max_message, "message")
        return await self._round("publish", self._publish(channel, data))

    def subscribe(self, *channels: str, max_queued: int = DEFAULT_MAX_QUEUED) -> Subscription:
        """A `Subscription` to ``channels`` (one or more), receiving from the
        moment it is entered: every message published after ``async with``
        has entered it reaches it."""
        if not channels:
            raise ValueError("subscribe needs at least one channel")
        names = tuple(dict.fromkeys(_check_name(c, "channel") for c in channels))
        return Subscription(
            names, _check_limit(max_queued, "max_queued"), self._attach, self._detach
        )

    async def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None`` (never stored, deleted or expired)."""
        return await self._round("get", self._get(_check_name(key, "key")))

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        """Store ``value`` under ``key`` for ``ttl`` seconds, replacing what was there."""
        await self._round("put", self._put(*self._entry(key, value, ttl)))

    async def put_if_absent(self, key: str, value: bytes, ttl: float) -> bool:
        """Store ``value`` under ``key`` for ``ttl`` seconds unless a value is
        there; whether it was stored."""
        return await self._round(
            "put_if_absent", self._put_if_absent(*self._entry(key, value, ttl))
        )

    async def compare_and_set(self, key: str, expected: bytes, value: bytes, ttl: float) -> bool:
        """Store ``value`` under ``key`` for ``ttl`` seconds if the value there
        is ``expected``; whether it was stored (never when nothing is there)."""
        _check_bytes(expected, self.max_value, "expected")
        entry = self._entry(key, value, ttl)
        return await self._round("compare_and_set", self._compare_and_set(expected, *entry))

    async def delete(self, key: str) -> bool:
        """Remove ``key``; whether a value was there."""
        return await self._round("delete", self._delete(_check_name(key, "key")))

    async def claim(self, token_id: str, expires_at: float) -> bool:
        """`mcp_schema.request_state.SingleUse`: true the first time ``token_id``
        is claimed, false after, until ``expires_at`` (seconds since the epoch,
        on ``clock``); false for an ``expires_at`` already past."""
        _check_name(token_id, "token_id")
        if isinstance(expires_at, bool) or not isinstance(expires_at, (int, float)):
            raise TypeError(f"expires_at must be a number, not {type(expires_at).__name__}")
        ttl = expires_at - self.clock()
        if not ttl > 0:  # NaN too
            return False
        return await self._round("claim", self._claim(token_id, min(ttl, MAX_TTL)))

    async def __aenter__(self) -> Broker:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _entry(self, key: str, value: bytes, ttl: float) -> tuple[str, bytes, float]:
        return (
            _check_name(key, "key"),
            _check_bytes(value, self.max_value, "value"),
            _check_ttl(ttl),
        )

    @abc.abstractmethod
    async def aclose(self) -> None:
        """End every subscription and release what the broker holds."""

    @abc.abstractmethod
    async def _publish(self, channel: str, data: bytes) -> bool: ...

    @abc.abstractmethod
    async def _attach(self, subscription: Subscription) -> None: ...

    @abc.abstractmethod
    async def _detach(self, subscription: Subscription) -> None: ...

    @abc.abstractmethod
    async def _get(self, key: str) -> bytes | None: ...

    @abc.abstractmethod
    async def _put(self, key: str, value: bytes, ttl: float) -> None: ...

    @abc.abstractmethod
    async def _put_if_absent(self, key: str, value: bytes, ttl: float) -> bool: ...

    @abc.abstractmethod
    async def _compare_and_set(
        self, expected: bytes, key: str, value: bytes, ttl: float
    ) -> bool: ...

    @abc.abstractmethod
    async def _delete(self, key: str) -> bool: ...

    @abc.abstractmethod
    async def _claim(self, token_id: str, ttl: float) -> bool: ...


class InProcessBroker(Broker):
    """`Broker` within one process: every replica is this one. At most
    ``max_entries`` unexpired values and as many claims (past that a write is
    a `BrokerError` and changes nothing); expired entries go as time passes.
    Each operation is atomic under asyncio (none awaits inside)."""

    def __init__(
        self,
        *,
        max_entries: int = 100_000,
        max_message: int = DEFAULT_MAX_MESSAGE,
        max_value: int = DEFAULT_MAX_VALUE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(max_message=max_message, max_value=max_value, clock=clock)
        self._fanout = Fanout()
        self._values: _Expiring[bytes] = _Expiring(max_entries, clock, "key-value store")
        self._claims = InMemorySingleUse(max_entries, clock)
        self._closed = False

    def _open(self) -> None:
        if self._closed:
            raise BrokerError("the broker is closed")

    async def aclose(self) -> None:
        self._closed = True
        self._fanout.fail_all(BrokerError("the broker is closed"))

    async def _publish(self, channel: str, data: bytes) -> bool:
        self._open()
        return self._fanout.deliver(channel, data) > 0

    async def _attach(self, subscription: Subscription) -> None:
        self._open()
        self._fanout.add(subscription)

    async def _detach(self, subscription: Subscription) -> None:
        self._fanout.remove(subscription)

    def _set(self, key: str, value: bytes, ttl: float) -> None:
        try:
            self._values.set(key, value, self.clock() + ttl)
        except InternalError as full:
            raise BrokerError(full.message) from None

    async def _get(self, key: str) -> bytes | None:
        self._open()
        return self._values.get(key)

    async def _put(self, key: str, value: bytes, ttl: float) -> None:
        self._open()
        self._set(key, value, ttl)

    async def _put_if_absent(self, key: str, value: bytes, ttl: float) -> bool:
        self._open()
        if self._values.get(key) is not None:
            return False
        self._set(key, value, ttl)
        return True

    async def _compare_and_set(self, expected: bytes, key: str, value: bytes, ttl: float) -> bool:
        self._open()
        if self._values.get(key) != expected:
            return False
        self._set(key, value, ttl)
        return True

    async def _delete(self, key: str) -> bool:
        self._open()
        return self._values.delete(key)

    async def _claim(self, token_id: str, ttl: float) -> bool:
        self._open()
        try:
            return await self._claims.claim(token_id, self.clock() + ttl)
        except InternalError as full:
            raise BrokerError(full.message) from None
