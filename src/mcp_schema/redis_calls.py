"""Bounded calls to Redis, what `mcp_schema.redis_broker.RedisBroker` and
`mcp_schema.tasks.redis_store.RedisTaskStore` share (hand-written runtime
module; needs the ``redis`` extra).

A frozen Redis (``SIGSTOP``, a full disk, a partition) keeps its TCP
connections open and answers nothing, so no wait on it may be unbounded:

- a client made here (`client`) connects within ``connect`` seconds and
  reads each reply within ``command`` seconds (`Timeouts`, 1 s and 0.5 s by
  default), and redis-py's own retries are off: it would otherwise send a
  write again whose first sending may have been carried out;
- every call (`call`) is also bounded from outside, by ``connect + 2 *
  command`` seconds (a new connection, redis-py's hello on it, the reply),
  whatever client it runs on (one given by the application too);
- only an idempotent read is tried again, at most `READ_RETRIES` times, and
  only when its connection broke (a connection left from before a restart
  of Redis fails at once); a timeout is not retried, since Redis that did
  not answer in time will not answer a second ask sooner. A write, publish
  or claim that fails is never sent again: its outcome is unknown, and the
  caller fails closed (a 503 naming the request, at the HTTP edge).

Every bound is `within`, never `asyncio.wait_for`: before Python 3.12,
``wait_for`` drops a cancel that comes in the loop turn its inner await ends
in (it returns the result instead), and a task whose cancel is dropped runs
on. The broker's subscriber reader did, PINGing Redis for ever, so that
neither ``aclose`` nor the end of ``asyncio.run`` (which cancels what is
left, once, and waits for it) could stop it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from mcp_schema.errors import InternalError, clip

__all__ = [
    "DEFAULT_COMMAND_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "READ_RETRIES",
    "Timeouts",
    "call",
    "client",
    "seconds",
    "within",
]

DEFAULT_CONNECT_TIMEOUT = 1.0
"""Seconds to open a connection to Redis."""

DEFAULT_COMMAND_TIMEOUT = 0.5
"""Seconds Redis has to answer one command."""

READ_RETRIES = 2
"""Times an idempotent read is sent again after its connection broke."""

_T = TypeVar("_T")
_E = TypeVar("_E", bound=InternalError)


def seconds(value: object, name: str) -> float:
    """``value``, positive finite seconds (``TypeError``, ``ValueError`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    if not 0 < value < math.inf:
        raise ValueError(f"{name} must be positive seconds, not {value!r}")
    return float(value)


@dataclass(frozen=True)
class Timeouts:
    """How long Redis has: ``connect`` seconds to accept a connection,
    ``command`` seconds to answer a command."""

    connect: float = DEFAULT_CONNECT_TIMEOUT
    command: float = DEFAULT_COMMAND_TIMEOUT

    def __post_init__(self) -> None:
        object.__setattr__(self, "connect", seconds(self.connect, "connect_timeout"))
        object.__setattr__(self, "command", seconds(self.command, "command_timeout"))

    @property
    def bound(self) -> float:
        """The longest one call may take: a new connection, the client's
        hello on it, then the reply."""
        return self.connect + 2 * self.command


def client(url: str, timeouts: Timeouts) -> Redis:
    """A client for ``url`` (bytes, not decoded) bounded by ``timeouts``,
    redis-py's retries off (see the module)."""
    return Redis.from_url(
        url,
        socket_connect_timeout=timeouts.connect,
        socket_timeout=timeouts.command,
        retry=Retry(NoBackoff(), 0),
    )


_SETTLE_SECONDS = 1.0
"""How long a cancelled call is given to end (redis-py closes its connection)."""


async def within(work: Awaitable[_T], seconds: float) -> _T:
    """``await work``, or `asyncio.TimeoutError` after ``seconds``; a cancel
    of the caller always reaches it (see the module). Either way ``work`` is
    cancelled and given `_SETTLE_SECONDS` to end, as ``wait_for`` waits."""
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait((task,), timeout=seconds)
    except asyncio.CancelledError:
        await _stop(task)
        raise
    if not done:
        await _stop(task)
        raise asyncio.TimeoutError
    return task.result()


async def _stop(task: asyncio.Future[_T]) -> None:
    task.cancel()
    await asyncio.wait((task,), timeout=_SETTLE_SECONDS)
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: what it failed with after the bound is moot


async def call(
    work: Callable[[], Awaitable[_T]],
    timeouts: Timeouts,
    what: str,
    error: Callable[[str], _E],
    *,
    read: bool = False,
) -> _T:
    """``work()`` within ``timeouts.bound`` seconds, tried again when it is a
    ``read`` whose connection broke (see the module); any failure is
    ``error(message)``, the message naming ``what`` failed."""
    retries = READ_RETRIES if read else 0
    while True:
        try:
            return await within(work(), timeouts.bound)
        except asyncio.TimeoutError:
            raise error(
                f"Redis did not {what} within {timeouts.bound:g} s (its outcome is unknown)"
            ) from None
        except RedisTimeoutError as exc:
            raise error(_failed(what, exc)) from None
        except (RedisConnectionError, OSError) as exc:
            if retries == 0:
                raise error(_failed(what, exc)) from None
            retries -= 1
        except RedisError as exc:
            raise error(_failed(what, exc)) from None


def _failed(what: str, exc: BaseException) -> str:
    return f"Redis failed to {what}: {clip(f'{type(exc).__name__}: {exc}')}"
