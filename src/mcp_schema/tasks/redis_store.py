"""`mcp_schema.tasks.store.TaskStore` on Redis, shared by every replica that
names the same server and ``prefix`` (hand-written runtime module; needs the
``redis`` extra: ``pip install "mcp-schema[redis]"``).

The layout, under ``prefix``:

- ``task:{task_id}``: a hash, one field per `TaskRecord` field set (a field
  that is ``None`` is absent) and ``x``, when it expires (epoch seconds), expiring
  with the task (``PEXPIREAT``);
- ``live:{principal}``: a sorted set of that principal's tasks not terminal,
  scored by when they stop being live (the ttl's end or the lease's, the
  sooner): its count from now on is the live count, with no scan;
- ``kept``: every task kept, scored by its ttl's end; ``finished``: the
  terminal ones, scored by when they finished (the first dropped when the
  store is full); ``leases``: the tasks not terminal that have a lease,
  scored by its end (dropped next, once it has passed).

Every write is one Lua script, one atomic step on the server: a creation
checks both bounds and writes; an update compares the revision and the
transition and writes; a renewal, an update and a read that finds a passed
lease first store the task `failed`, so every replica sees it at its next
read and exactly one of them writes it (any other read is one ``HGETALL``). The keys of one store are on one server
(standalone Redis, not a cluster: a script touches keys it cannot declare).
A failure of Redis is an `mcp_schema.errors.UnavailableError` (HTTP 503). Every call is
bounded (`mcp_schema.redis_calls`: ``connect_timeout`` and
``command_timeout``, 1 s and 0.5 s by default); only the plain read
(``HGETALL``) is tried again after a broken connection, and a write that
failed may or may not have been carried out (the request fails; a retry
reads what is stored).

Run Redis with the append-only file (``appendonly yes``, ``appendfsync
everysec``): a task then survives a restart once it is a second old. A
Redis restarted without it has lost every task, and ``tasks/get`` answers
for one as for any task it does not know.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

from redis.asyncio import Redis

from mcp_schema import redis_calls
from mcp_schema.errors import UnavailableError
from mcp_schema.tasks.record import (
    ALLOWED,
    DEFAULT_MAX_LIVE_PER_PRINCIPAL,
    DEFAULT_MAX_RECORD,
    DEFAULT_MAX_TASKS,
    TERMINAL,
    WORKER_STOPPED,
    WORKER_STOPPED_OUTCOME,
    TaskLimitExceeded,
    TaskRecord,
    TaskStatus,
    TransitionRefused,
)
from mcp_schema.tasks.store import TaskStore

__all__ = ["RedisTaskStore"]

# The hash's fields, in the order the scripts receive their values.
_FIELDS = ("p", "s", "c", "u", "t", "i", "m", "o", "d", "w", "l", "r")


def _lua_set(statuses: frozenset[str]) -> str:
    return "{" + ", ".join(f"['{s}'] = true" for s in sorted(statuses)) + "}"


# What every script shares: the record's fields from ARGV, and a passed lease
# stored failed. KEYS[1] the task, KEYS[2] its principal's live set, KEYS[3]
# the finished set, KEYS[4] the leases; ARGV[1] now, ARGV[2] the task id,
# ARGV[3] the principal.
_PRELUDE = f"""
local FIELDS = {{{", ".join(f"'{f}'" for f in _FIELDS)}}}
local TERMINAL = {_lua_set(TERMINAL)}
local now = tonumber(ARGV[1])

-- The stored task as this principal may see it (nil: none), a passed lease
-- stored failed first.
local function current()
  local p, s, l, x = unpack(redis.call('HMGET', KEYS[1], 'p', 's', 'l', 'x'))
  if not p or p ~= ARGV[3] or (x and tonumber(x) <= now) then
    return nil
  end
  if not TERMINAL[s] and l and tonumber(l) <= now then
    redis.call('HSET', KEYS[1], 's', 'failed', 'm', {WORKER_STOPPED!r}, 'o',
      {WORKER_STOPPED_OUTCOME.decode()!r}, 'u', ARGV[1])
    redis.call('HINCRBY', KEYS[1], 'r', 1)
    redis.call('ZREM', KEYS[2], ARGV[2])
    redis.call('ZADD', KEYS[3], now, ARGV[2])
    redis.call('ZREM', KEYS[4], ARGV[2])
    s = 'failed'
  end
  return s
end

-- Write the record whose presence mask and values start at ARGV[first];
-- expires_at ('' for none) and the live score ('' when terminal) before them.
local function write(first)
  local mask, sets, dels, lease = ARGV[first], {{}}, {{}}, nil
  for n, field in ipairs(FIELDS) do
    if string.sub(mask, n, n) == '1' then
      table.insert(sets, field)
      table.insert(sets, ARGV[first + n])
      if field == 'l' then lease = ARGV[first + n] end
    else
      table.insert(dels, field)
    end
  end
  local expires, live = ARGV[first - 2], ARGV[first - 1]
  if expires == '' then
    table.insert(dels, 'x')
  else
    table.insert(sets, 'x')
    table.insert(sets, expires)
  end
  redis.call('HSET', KEYS[1], unpack(sets))
  if expires == '' then
    redis.call('PERSIST', KEYS[1])
  else
    redis.call('PEXPIREAT', KEYS[1], math.ceil(tonumber(expires) * 1000))
  end
  if #dels > 0 then redis.call('HDEL', KEYS[1], unpack(dels)) end
  if live == '' then
    redis.call('ZREM', KEYS[2], ARGV[2])
    redis.call('ZADD', KEYS[3], now, ARGV[2])
  else
    redis.call('ZADD', KEYS[2], live, ARGV[2])
    redis.call('ZREM', KEYS[3], ARGV[2])
  end
  if live ~= '' and lease then
    redis.call('ZADD', KEYS[4], lease, ARGV[2])
  else
    redis.call('ZREM', KEYS[4], ARGV[2])
  end
end
"""

# KEYS[5] the kept set; ARGV[4] max live per principal, ARGV[5] max tasks,
# ARGV[6] the store's prefix, ARGV[7..] what `write` reads. When the store is
# full it drops the task that finished first, or else one whose lease passed
# (its worker died and nobody read it since: it is failed either way).
_CREATE = (
    _PRELUDE
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then
  local x = redis.call('HGET', KEYS[1], 'x')
  if not x or tonumber(x) > now then return 'exists' end
  redis.call('DEL', KEYS[1])  -- expired on the store's clock, not yet on Redis's
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'LIMIT', 0, 64)) do
  redis.call('ZREM', KEYS[5], id)
  redis.call('ZREM', KEYS[3], id)
  redis.call('ZREM', KEYS[4], id)
end
if ARGV[8] ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if ARGV[3] ~= '' and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
    return 'principal'
  end
end
while redis.call('ZCOUNT', KEYS[5], '(' .. ARGV[1], '+inf') >= tonumber(ARGV[5]) do
  local id = redis.call('ZPOPMIN', KEYS[3])[1]
  if not id then
    id = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 1)[1]
    if not id then return 'full' end
    redis.call('ZREM', KEYS[4], id)
    local owner = redis.call('HGET', ARGV[6] .. 'task:' .. id, 'p')
    if owner then redis.call('ZREM', ARGV[6] .. 'live:' .. owner, id) end
  end
  redis.call('DEL', ARGV[6] .. 'task:' .. id)
  redis.call('ZREM', KEYS[5], id)
end
write(9)
redis.call('ZADD', KEYS[5], ARGV[7] == '' and '+inf' or ARGV[7], ARGV[2])
return 'ok'
"""
)

_ALLOWED = (
    "local ALLOWED = {"
    + ", ".join(f"['{old}'] = {_lua_set(new)}" for old, new in sorted(ALLOWED.items()))
    + "}\n"
)

# ARGV[4] the revision expected, ARGV[5] the new status, ARGV[6] created_at,
# ARGV[7..] what `write` reads.
_UPDATE = (
    _PRELUDE
    + _ALLOWED
    + """
local s = current()
if not s or redis.call('HGET', KEYS[1], 'r') ~= ARGV[4] then return {'moved'} end
if not ALLOWED[s][ARGV[5]] then return {'refused', s} end
if redis.call('HGET', KEYS[1], 'c') ~= ARGV[6] then return {'created'} end
write(9)
return {'ok'}
"""
)

_GET = (
    _PRELUDE
    + """
if not current() then return false end
return redis.call('HGETALL', KEYS[1])
"""
)

# ARGV[4] the owner, ARGV[5] the lease's new end.
_RENEW = (
    _PRELUDE
    + """
local s = current()
if not s or TERMINAL[s] or redis.call('HGET', KEYS[1], 'w') ~= ARGV[4] then return 0 end
redis.call('HSET', KEYS[1], 'l', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'r', 1)
local x = redis.call('HGET', KEYS[1], 'x')
local ends = ARGV[5]
if x and tonumber(x) < tonumber(ends) then ends = x end
redis.call('ZADD', KEYS[2], ends, ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[2])
return 1
"""
)


def _number(value: float) -> str:
    return repr(float(value))  # exact: repr round-trips a float


def _values(record: TaskRecord) -> list[Any]:
    """``record`` as `write` reads it: expires_at, live score, mask, values."""
    fields: list[str | bytes | None] = [
        record.principal,
        record.status,
        _number(record.created_at),
        _number(record.updated_at),
        None if record.ttl_ms is None else str(record.ttl_ms),
        None if record.poll_interval_ms is None else str(record.poll_interval_ms),
        record.status_message,
        record.outcome,
        record.state,
        record.lease_owner,
        None if record.lease_until is None else _number(record.lease_until),
        str(record.revision),
    ]
    expires_at = record.expires_at
    expires = "" if math.isinf(expires_at) else _number(expires_at)
    live = ""
    if record.status not in TERMINAL:
        live = _number(
            min(expires_at, math.inf if record.lease_until is None else record.lease_until)
        )
        live = "+inf" if live == "inf" else live
    mask = "".join("0" if value is None else "1" for value in fields)
    return [expires, live, mask, *("" if value is None else value for value in fields)]


def _record(task_id: str, fields: dict[bytes, bytes]) -> TaskRecord:
    stored = {name.decode(): value for name, value in fields.items()}

    def text(field: str) -> str | None:
        value = stored.get(field)
        return None if value is None else value.decode("utf-8")

    def number(field: str) -> float | None:
        value = stored.get(field)
        return None if value is None else float(value)

    def integer(field: str) -> int | None:
        value = stored.get(field)
        return None if value is None else int(value)

    return TaskRecord(
        task_id=task_id,
        principal=stored["p"].decode("utf-8"),
        status=cast(TaskStatus, stored["s"].decode("ascii")),  # written from a TaskStatus
        created_at=float(stored["c"]),
        updated_at=float(stored["u"]),
        ttl_ms=integer("t"),
        poll_interval_ms=integer("i"),
        status_message=text("m"),
        outcome=stored.get("o"),
        state=stored["d"],
        lease_owner=text("w"),
        lease_until=number("l"),
        revision=int(stored["r"]),
    )


class RedisTaskStore(TaskStore):
    """`TaskStore` on ``client`` (a ``redis.asyncio.Redis`` that returns bytes,
    or a URL: ``redis://127.0.0.1:6379/0``, its client closed with the store;
    a client given is the caller's to close), keys under ``prefix``; Redis
    has ``connect_timeout`` and ``command_timeout`` seconds (see the module)."""

    def __init__(
        self,
        client: Redis | str,
        *,
        prefix: str = "mcp-schema:tasks:",
        connect_timeout: float = redis_calls.DEFAULT_CONNECT_TIMEOUT,
        command_timeout: float = redis_calls.DEFAULT_COMMAND_TIMEOUT,
        max_live_per_principal: int = DEFAULT_MAX_LIVE_PER_PRINCIPAL,
        max_tasks: int = DEFAULT_MAX_TASKS,
        max_record: int = DEFAULT_MAX_RECORD,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(
            max_live_per_principal=max_live_per_principal,
            max_tasks=max_tasks,
            max_record=max_record,
            clock=clock,
        )
        if not isinstance(prefix, str) or len(prefix) > 128:
            raise ValueError("prefix must be a string of at most 128 characters")
        self.timeouts = redis_calls.Timeouts(connect_timeout, command_timeout)
        self._close_client = isinstance(client, str)
        if isinstance(client, str):
            client = redis_calls.client(client, self.timeouts)
        if not isinstance(client, Redis):
            raise TypeError(f"client must be a redis.asyncio.Redis, not {type(client).__name__}")
        if client.connection_pool.connection_kwargs.get("decode_responses"):
            raise ValueError(
                "the Redis client must return bytes: create it without decode_responses"
            )
        self._client = client
        self._prefix = prefix
        self._create_script = client.register_script(_CREATE)
        self._update_script = client.register_script(_UPDATE)
        self._get_script = client.register_script(_GET)
        self._renew_script = client.register_script(_RENEW)
        self._closed = False

    def _keys(self, task_id: str, principal: str) -> list[str]:
        prefix = self._prefix
        return [
            f"{prefix}task:{task_id}",
            f"{prefix}live:{principal}",
            f"{prefix}finished",
            f"{prefix}leases",
        ]

    async def _call(
        self, what: str, call: Callable[[], Awaitable[Any]], *, read: bool = False
    ) -> Any:
        if self._closed:
            raise UnavailableError("the task store is closed")
        return await redis_calls.call(call, self.timeouts, what, UnavailableError, read=read)

    async def _hgetall(self, key: str) -> dict[bytes, bytes]:
        # redis-py types a command for its sync and async clients at once.
        reply = cast("Awaitable[dict[bytes, bytes]]", self._client.hgetall(key))
        return await reply

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._close_client:
                await self._client.aclose()

    async def _create(self, record: TaskRecord, now: float) -> TaskRecord:
        keys = [*self._keys(record.task_id, record.principal), f"{self._prefix}kept"]
        args = [
            _number(now),
            record.task_id,
            record.principal,
            self.max_live_per_principal,
            self.max_tasks,
            self._prefix,
            *_values(record),
        ]
        answer = await self._call(
            "create a task", lambda: self._create_script(keys=keys, args=args)
        )
        if answer == b"exists":
            raise ValueError("a task with this id exists")
        if answer == b"principal":
            raise TaskLimitExceeded(
                f"this principal has {self.max_live_per_principal} live tasks, the most it may"
            )
        if answer == b"full":
            raise TaskLimitExceeded(f"the task store keeps {self.max_tasks} live tasks")
        return record

    async def _get(self, task_id: str, principal: str, now: float) -> TaskRecord | None:
        # One HGETALL is the read; the script (which stores a passed lease
        # failed, atomically) runs only when that read sees one passed.
        keys = self._keys(task_id, principal)
        stored = await self._call("read a task", lambda: self._hgetall(keys[0]), read=True)
        if not stored:
            return None
        record = _record(task_id, stored)
        if record.principal != principal or record.expires_at <= now:
            return None
        if not record.lease_passed(now):
            return record
        args = [_number(now), task_id, principal]
        flat = await self._call("read a task", lambda: self._get_script(keys=keys, args=args))
        if not flat:
            return None
        return _record(task_id, {flat[n]: flat[n + 1] for n in range(0, len(flat), 2)})

    async def _update(self, record: TaskRecord, now: float) -> TaskRecord | None:
        args = [
            _number(now),
            record.task_id,
            record.principal,
            str(record.revision - 1),
            record.status,
            _number(record.created_at),
            *_values(record),
        ]
        keys = self._keys(record.task_id, record.principal)
        answer = await self._call(
            "update a task", lambda: self._update_script(keys=keys, args=args)
        )
        if answer[0] == b"refused":
            raise TransitionRefused(f"a task {answer[1].decode()} cannot become {record.status}")
        if answer[0] == b"created":
            raise ValueError("created_at never changes")
        return record if answer[0] == b"ok" else None

    async def _renew(
        self, task_id: str, principal: str, owner: str, until: float, now: float
    ) -> bool:
        args = [_number(now), task_id, principal, owner, _number(until)]
        keys = self._keys(task_id, principal)
        renewed = await self._call(
            "renew a lease", lambda: self._renew_script(keys=keys, args=args)
        )
        return bool(renewed == 1)
