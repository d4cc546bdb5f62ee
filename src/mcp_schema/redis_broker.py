"""`mcp_schema.broker.Broker` across processes, on Redis (hand-written runtime
module; needs the ``redis`` extra: ``pip install "mcp-schema[redis]"``).

Every replica gives a `RedisBroker` the same Redis server and ``prefix``:

- publish/subscribe is Redis ``PUBLISH``/``SUBSCRIBE`` on ``{prefix}ch:{channel}``,
  over one subscriber connection per broker whatever the number of
  subscriptions (a reader task fans each message out to this process's
  subscriptions, each bounded as `mcp_schema.broker` says). Entering a
  subscription waits until Redis confirms it (at most ``subscribe_timeout``
  seconds), so what is published after reaches it.
- values are strings under ``{prefix}kv:{key}`` with a millisecond expiry
  (``SET ... PX``; set-if-absent is ``NX``, compare-and-set a Lua script, one
  atomic step on the server);
- claims are ``SET {prefix}claim:{token_id} NX PX``, expiring with their token.

A failure of Redis is a `mcp_schema.broker.BrokerError`; a lost subscriber
connection ends every subscription of the broker with one (the client's own
reconnection may first bridge a short outage, losing what was published
meanwhile: delivery is at most once).
"""

from __future__ import annotations

import asyncio
import collections
import math
import time
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from mcp_schema.broker import (
    DEFAULT_MAX_MESSAGE,
    DEFAULT_MAX_VALUE,
    Broker,
    BrokerError,
    Fanout,
    Subscription,
)
from mcp_schema.errors import clip

__all__ = ["RedisBroker"]

# One atomic step: GET of a missing key is false in Lua, never equal to a string.
_COMPARE_AND_SET = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""


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
    ``prefix``. `from_url` makes the client and closes it with the broker;
    a client given here is the caller's to close."""

    def __init__(
        self,
        client: Redis,
        *,
        prefix: str = "mcp-schema:",
        subscribe_timeout: float = 5.0,
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
        if not isinstance(subscribe_timeout, (int, float)) or not 0 < subscribe_timeout < math.inf:
            raise ValueError(
                f"subscribe_timeout must be positive seconds, not {subscribe_timeout!r}"
            )
        self._client = client
        self._prefix = prefix.encode("utf-8")
        self._subscribe_timeout = float(subscribe_timeout)
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
    def from_url(cls, url: str, **options: Any) -> RedisBroker:
        """A broker on a new client for ``url`` (``redis://127.0.0.1:6379/0``),
        closed with the broker; ``options`` are the broker's."""
        return cls(Redis.from_url(url), close_client=True, **options)

    def _key(self, kind: bytes, name: str) -> bytes:
        return self._prefix + kind + name.encode("utf-8")

    def _open(self) -> None:
        if self._closed:
            raise BrokerError("the broker is closed")

    async def _publish(self, channel: str, data: bytes) -> bool:
        self._open()
        try:
            receivers = await self._client.publish(self._key(b"ch:", channel), data)
        except (RedisError, OSError) as exc:
            raise _failure("publish", exc) from None
        return int(receivers) > 0

    async def _attach(self, subscription: Subscription) -> None:
        async with self._lock:
            self._open()
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
            await asyncio.wait_for(asyncio.gather(*waiting), self._subscribe_timeout)
        except (RedisError, OSError) as exc:
            raise _failure("subscribe", exc) from None
        except asyncio.TimeoutError:
            raise BrokerError(
                f"Redis did not confirm the subscription in {self._subscribe_timeout} s"
            ) from None
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
            if gone and self._pubsub is not None and not self._closed:
                try:
                    await self._pubsub.unsubscribe(*gone)
                except (RedisError, OSError):
                    # Leaving must not raise over the reader's own error; a
                    # channel left subscribed only delivers to nobody, and the
                    # reader reports the broken connection to every subscription.
                    pass

    async def _read(self, pubsub: PubSub) -> None:
        try:
            while True:
                message = await pubsub.get_message(timeout=None)
                if message is not None:
                    self._dispatch(message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # any failure of the connection ends every subscription
            self._broken(_failure("keep the subscriptions", exc))
            await _close(pubsub)

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
        reader, pubsub = self._reader, self._pubsub
        self._broken(BrokerError("the broker is closed"))
        if reader is not None:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
        if pubsub is not None:
            await _close(pubsub)
        if self._close_client:
            await self._client.aclose()

    async def _get(self, key: str) -> bytes | None:
        self._open()
        try:
            value = await self._client.get(self._key(b"kv:", key))
        except (RedisError, OSError) as exc:
            raise _failure("get", exc) from None
        return value if isinstance(value, bytes) else None

    async def _set(self, kind: bytes, name: str, value: bytes, ttl: float, absent: bool) -> bool:
        self._open()
        try:
            stored = await self._client.set(
                self._key(kind, name), value, px=_milliseconds(ttl), nx=absent
            )
        except (RedisError, OSError) as exc:
            raise _failure("set", exc) from None
        return bool(stored)

    async def _put(self, key: str, value: bytes, ttl: float) -> None:
        await self._set(b"kv:", key, value, ttl, absent=False)

    async def _put_if_absent(self, key: str, value: bytes, ttl: float) -> bool:
        return await self._set(b"kv:", key, value, ttl, absent=True)

    async def _compare_and_set(self, expected: bytes, key: str, value: bytes, ttl: float) -> bool:
        self._open()
        try:
            stored = await self._script(
                keys=[self._key(b"kv:", key)], args=[expected, value, _milliseconds(ttl)]
            )
        except (RedisError, OSError) as exc:
            raise _failure("compare and set", exc) from None
        return bool(stored == 1)

    async def _delete(self, key: str) -> bool:
        self._open()
        try:
            removed = await self._client.delete(self._key(b"kv:", key))
        except (RedisError, OSError) as exc:
            raise _failure("delete", exc) from None
        return int(removed) > 0

    async def _claim(self, token_id: str, ttl: float) -> bool:
        return await self._set(b"claim:", token_id, b"1", ttl, absent=True)
