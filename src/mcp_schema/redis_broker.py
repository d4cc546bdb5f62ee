"""`mcp_schema.broker.Broker` across processes, on Redis (hand-written runtime
module; needs the ``redis`` extra: ``pip install "mcp-schema[redis]"``).

Every replica gives a `RedisBroker` the same Redis server and ``prefix``:

- publish/subscribe is Redis ``PUBLISH``/``SUBSCRIBE`` on ``{prefix}ch:{channel}``,
  over one subscriber connection per broker whatever the number of
  subscriptions (a reader task fans each message out to this process's
  subscriptions, each bounded as `mcp_schema.broker` says). Entering a
  subscription waits until Redis confirms it (at most ``subscribe_timeout``
  seconds, by default ``connect_timeout + 2 * command_timeout``), so what
  is published after reaches it.
- values are strings under ``{prefix}kv:{key}`` with a millisecond expiry
  (``SET ... PX``; set-if-absent is ``NX``, compare-and-set a Lua script, one
  atomic step on the server);
- claims are ``SET {prefix}claim:{token_id} NX PX``, expiring with their token.

Every call is bounded (`mcp_schema.redis_calls`: ``connect_timeout``, 1 s,
and ``command_timeout``, 0.5 s, by default; only ``GET`` is tried again, after
a broken connection). A failure of Redis is a `mcp_schema.broker.BrokerError`,
and a write, publish or claim that failed may or may not have been carried
out: the caller fails closed.

The subscriber connection is checked: after ``ping_interval`` seconds without
a message its reader sends ``PING``, and a ``PING`` unanswered within
``connect_timeout + 2 * command_timeout`` seconds (a frozen Redis keeps its TCP
connection open) counts as a lost connection. A lost subscriber connection
ends every subscription of the broker with a `BrokerError`; the next
subscription opens a new connection. What was published meanwhile is lost
(delivery is at most once): whoever resubscribes must assume it missed
changes (`mcp_schema.subscription_relay`, `mcp_schema.http.forward`).
"""

from __future__ import annotations

import asyncio
import collections
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from mcp_schema import redis_calls
from mcp_schema.broker import (
    DEFAULT_MAX_MESSAGE,
    DEFAULT_MAX_VALUE,
    Broker,
    BrokerError,
    Fanout,
    Subscription,
)
from mcp_schema.errors import clip

__all__ = ["PING_INTERVAL", "RedisBroker"]

PING_INTERVAL = 1.0
"""Seconds of silence on the subscriber connection before its reader sends ``PING``."""

# One atomic step: GET of a missing key is false in Lua, never equal to a string.
_COMPARE_AND_SET = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""


_T = TypeVar("_T")


def _milliseconds(ttl: float) -> int:
    return max(1, math.ceil(ttl * 1000))


def _failure(what: str, exc: BaseException) -> BrokerError:
    return BrokerError(f"Redis failed to {what}: {clip(f'{type(exc).__name__}: {exc}')}")


async def _close(pubsub: PubSub) -> None:
    try:
        await pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
    except (RedisError, OSError):
        pass  # a connection already broken needs no closing


class RedisBroker(Broker):
    """`mcp_schema.broker.Broker` on ``client`` (a ``redis.asyncio.Redis`` that
    returns bytes: ``decode_responses`` off), its keys and channels under
    ``prefix``. `from_url` makes the client, bounded by the timeouts, and
    closes it with the broker; a client given here is the caller's to close
    (its own socket timeouts and retries apply inside the broker's bounds)."""

    def __init__(
        self,
        client: Redis,
        *,
        prefix: str = "mcp-schema:",
        connect_timeout: float = redis_calls.DEFAULT_CONNECT_TIMEOUT,
        command_timeout: float = redis_calls.DEFAULT_COMMAND_TIMEOUT,
        ping_interval: float = PING_INTERVAL,
        subscribe_timeout: float | None = None,
        max_message: int = DEFAULT_MAX_MESSAGE,
        max_value: int = DEFAULT_MAX_VALUE,
        clock: Callable[[], float] = time.time,
        close_client: bool = False,
    ) -> None:
        super().__init__(max_message=max_message, max_value=max_value, clock=clock)
        if not isinstance(client, Redis):
            raise TypeError(f"client must be a redis.asyncio.Redis, not {type(client).__name__}")
        if client.connection_pool.connection_kwargs.get("decode_responses"):
            raise ValueError(
                "the Redis client must return bytes: create it without decode_responses"
            )
        if not isinstance(prefix, str) or len(prefix) > 128:
            raise ValueError("prefix must be a string of at most 128 characters")
        self.timeouts = redis_calls.Timeouts(connect_timeout, command_timeout)
        self._ping_interval = redis_calls.seconds(ping_interval, "ping_interval")
        self._subscribe_timeout = (
            self.timeouts.bound
            if subscribe_timeout is None
            else redis_calls.seconds(subscribe_timeout, "subscribe_timeout")
        )
        self._client = client
        self._prefix = prefix.encode("utf-8")
        self._close_client = close_client
        self._script = client.register_script(_COMPARE_AND_SET)
        self._fanout = Fanout()
        self._pubsub: PubSub | None = None
        self._reader: asyncio.Task[None] | None = None
        # Every reader not yet finished: one that lost its connection is still
        # closing it, and `aclose` waits for that rather than cut it short.
        self._readers: set[asyncio.Task[None]] = set()
        # Futures waiting for Redis to confirm a SUBSCRIBE, oldest first per channel.
        self._confirming: dict[bytes, collections.deque[asyncio.Future[None]]] = {}
        self._lock = asyncio.Lock()  # one SUBSCRIBE/UNSUBSCRIBE change at a time
        self._closed = False

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        connect_timeout: float = redis_calls.DEFAULT_CONNECT_TIMEOUT,
        command_timeout: float = redis_calls.DEFAULT_COMMAND_TIMEOUT,
        **options: Any,
    ) -> RedisBroker:
        """A broker on a new client for ``url`` (``redis://127.0.0.1:6379/0``)
        whose sockets have the timeouts, closed with the broker; ``options``
        are the broker's."""
        timeouts = redis_calls.Timeouts(connect_timeout, command_timeout)
        return cls(
            redis_calls.client(url, timeouts),
            close_client=True,
            connect_timeout=connect_timeout,
            command_timeout=command_timeout,
            **options,
        )

    def _key(self, kind: bytes, name: str) -> bytes:
        return self._prefix + kind + name.encode("utf-8")

    async def _call(self, what: str, work: Callable[[], Awaitable[_T]], read: bool = False) -> _T:
        if self._closed:
            raise BrokerError("the broker is closed")
        return await redis_calls.call(work, self.timeouts, what, BrokerError, read=read)

    async def _publish(self, channel: str, data: bytes) -> bool:
        key = self._key(b"ch:", channel)
        receivers = await self._call("publish", lambda: self._client.publish(key, data))
        return int(receivers) > 0

    async def _attach(self, subscription: Subscription) -> None:
        # One bound for the whole entry, the wait for the lock included: a
        # frozen Redis must not make subscriptions queue behind each other.
        try:
            await redis_calls.within(self._attach_now(subscription), self._subscribe_timeout)
        except asyncio.TimeoutError:
            raise BrokerError(
                f"Redis did not confirm the subscription in {self._subscribe_timeout:g} s"
            ) from None

    async def _attach_now(self, subscription: Subscription) -> None:
        async with self._lock:
            if self._closed:
                raise BrokerError("the broker is closed")
            new = [self._key(b"ch:", name) for name in self._fanout.add(subscription)]
            if not new:
                return
            fanout = self._fanout
            try:
                await self._subscribe(new)
            except BaseException:
                fanout.remove(subscription)
                raise

    async def _subscribe(self, channels: list[bytes]) -> None:
        loop = asyncio.get_running_loop()
        waiting = [loop.create_future() for _ in channels]
        for channel, future in zip(channels, waiting, strict=True):
            self._confirming.setdefault(channel, collections.deque()).append(future)
        try:
            if self._pubsub is None:
                self._pubsub = self._client.pubsub()
            pubsub = self._pubsub
            await pubsub.subscribe(*channels)
            if self._reader is None:
                self._reader = loop.create_task(self._read(pubsub))
                self._readers.add(self._reader)
                self._reader.add_done_callback(self._readers.discard)
            await asyncio.gather(*waiting)
        except (RedisError, OSError) as exc:
            raise _failure("subscribe", exc) from None
        finally:
            for channel, future in zip(channels, waiting, strict=True):
                queue = self._confirming.get(channel)
                if queue is not None and future in queue:
                    queue.remove(future)
                if not queue:
                    self._confirming.pop(channel, None)

    async def _detach(self, subscription: Subscription) -> None:
        async with self._lock:
            gone = [self._key(b"ch:", name) for name in self._fanout.remove(subscription)]
            pubsub = self._pubsub
            if gone and pubsub is not None and not self._closed:
                try:
                    await redis_calls.within(pubsub.unsubscribe(*gone), self.timeouts.bound)
                except (RedisError, OSError, asyncio.TimeoutError):
                    # Leaving must not raise over the reader's own error; a
                    # channel left subscribed only delivers to nobody, and the
                    # reader reports the broken connection to every subscription.
                    pass

    async def _read(self, pubsub: PubSub) -> None:
        try:
            await self._receive(pubsub)
        except asyncio.CancelledError:
            raise
        except BrokerError as exc:
            self._broken(exc)
            await _close(pubsub)
        except Exception as exc:  # any failure of the connection ends every subscription
            self._broken(_failure("keep the subscriptions", exc))
            await _close(pubsub)

    async def _receive(self, pubsub: PubSub) -> None:
        """Dispatch what arrives, sending ``PING`` after ``ping_interval``
        seconds of silence; a `BrokerError` once one goes unanswered."""
        loop = asyncio.get_running_loop()
        step = self._ping_interval / 2
        heard, pinged = loop.time(), math.inf
        # Not `while True`: the reader also stops on its own once the broker
        # is closed, whatever becomes of a cancel.
        while not self._closed:
            read = pubsub.get_message(timeout=step)
            message = await redis_calls.within(read, step + self.timeouts.bound)
            now = loop.time()
            if message is not None:
                heard, pinged = now, math.inf
                self._dispatch(message)
            elif now - pinged > self.timeouts.bound:
                raise BrokerError(
                    f"Redis did not answer PING within {self.timeouts.bound:g} s: "
                    "the subscriber connection is lost"
                )
            elif pinged == math.inf and now - heard >= self._ping_interval:
                await redis_calls.within(pubsub.ping(), self.timeouts.bound)
                pinged = now

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind, channel, data = message.get("type"), message.get("channel"), message.get("data")
        if not isinstance(channel, bytes):
            return
        if kind == "message" and isinstance(data, bytes):
            prefix = self._prefix + b"ch:"
            if channel.startswith(prefix):
                self._fanout.deliver(channel[len(prefix) :].decode("utf-8", "replace"), data)
        elif kind == "subscribe":
            queue = self._confirming.get(channel)
            if queue:
                future = queue.popleft()
                if not future.done():
                    future.set_result(None)

    def _broken(self, error: BrokerError) -> None:
        # A new fanout: the next subscription subscribes again on a new connection.
        fanout, self._fanout = self._fanout, Fanout()
        self._pubsub, self._reader = None, None
        for queue in self._confirming.values():
            for future in queue:
                if not future.done():
                    future.set_exception(error)
        self._confirming.clear()
        fanout.fail_all(error)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        pubsub = self._pubsub
        self._broken(BrokerError("the broker is closed"))
        # The readers are cancelled, and cancelled again until they end (a
        # cancel redis-py swallows is not the end of them), and a closed
        # broker's reader ends by itself within a read and a PING.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._ping_interval + self.timeouts.bound
        while self._readers and loop.time() < deadline:
            for task in self._readers:
                task.cancel()
            await asyncio.wait(set(self._readers), timeout=self._ping_interval / 2)
        if pubsub is not None:
            await _close(pubsub)
        if self._close_client:
            await self._client.aclose()

    async def _get(self, key: str) -> bytes | None:
        name = self._key(b"kv:", key)
        value = await self._call("get", lambda: self._client.get(name), read=True)
        return value if isinstance(value, bytes) else None

    async def _set(self, kind: bytes, name: str, value: bytes, ttl: float, absent: bool) -> bool:
        key, px = self._key(kind, name), _milliseconds(ttl)
        stored = await self._call("set", lambda: self._client.set(key, value, px=px, nx=absent))
        return bool(stored)

    async def _put(self, key: str, value: bytes, ttl: float) -> None:
        await self._set(b"kv:", key, value, ttl, absent=False)

    async def _put_if_absent(self, key: str, value: bytes, ttl: float) -> bool:
        return await self._set(b"kv:", key, value, ttl, absent=True)

    async def _compare_and_set(self, expected: bytes, key: str, value: bytes, ttl: float) -> bool:
        keys = [self._key(b"kv:", key)]
        args: list[bytes | int] = [expected, value, _milliseconds(ttl)]
        stored = await self._call("compare and set", lambda: self._script(keys=keys, args=args))
        return bool(stored == 1)

    async def _delete(self, key: str) -> bool:
        name = self._key(b"kv:", key)
        removed = await self._call("delete", lambda: self._client.delete(name))
        return int(removed) > 0

    async def _claim(self, token_id: str, ttl: float) -> bool:
        return await self._set(b"claim:", token_id, b"1", ttl, absent=True)
