"""Where the Tasks extension keeps its tasks, behind one small asyncio
interface (hand-written runtime module).

A task outlives the request that created it, so its record lives in a
`TaskStore`: `MemoryTaskStore` (the default, one process),
`mcp_schema.tasks.sqlite_store.SqliteTaskStore` (one machine, survives a
restart) and `mcp_schema.tasks.redis_store.RedisTaskStore` (shared by
replicas). The protocol layer owns what a record means; the store owns what
the extension asks of storage, the same in all three:

- **statuses and transitions**: a task starts ``working``; `ALLOWED` is the
  extension's state diagram (a non-terminal status may also be rewritten to
  itself); a terminal task never changes again. `TaskStore.update` is a
  compare-and-set on the record's ``revision``: two replicas writing at once
  never overwrite one another, and an illegal transition is
  `TransitionRefused`, nothing stored.
- **expiry**: a task whose ``created_at + ttl_ms`` has passed is gone (as if it
  never was); ``ttl_ms=None`` keeps it until the store's bound drops it.
- **leases**: the work runs where the application runs it, under a lease
  (``lease_owner``, ``lease_until``) its worker renews. A task not terminal
  whose lease has passed is `failed` for every reader: the first read (or
  write, or renewal) by any process stores that, by compare-and-set, with a
  status message saying its worker stopped and an outcome that is a JSON-RPC
  error object (-32603).
- **auth binding**: every read and write names the task's principal; another
  principal's task is answered as if it did not exist. Task ids are minted by
  the protocol layer (unguessable) and opaque here.
- **bounds**: at most ``max_live_per_principal`` live tasks (not terminal,
  not expired, lease not passed) per principal (but the empty one: the tasks
  of callers with no principal are one principal's for reading, and many
  clients' for counting, which `mcp_schema.tasks.TaskServer` does per client
  on each replica: `mcp_schema.shares`), and at most ``max_tasks``
  kept in all (when full, the task that finished first is dropped to make
  room, as the extension lets a server purge a task, or else one whose lease
  passed, unread since; when every kept task is live, `TaskLimitExceeded`);
  at most ``max_record`` bytes of ``state``,
  ``outcome`` and ``status_message`` per record; ids, principals and owners
  of bounded length. Past a bound: a typed error, nothing stored.
"""

from __future__ import annotations

import abc
import collections
import dataclasses
import heapq
import math
import time
from collections.abc import Callable
from types import TracebackType

# The one expiring table of this package (see mcp_schema.broker): its bound,
# its heap of expiries and its purge are what the in-memory store needs.
from mcp_schema.errors import InternalError
from mcp_schema.request_state import _Expiring
from mcp_schema.tasks.record import (
    ALLOWED,
    DEFAULT_MAX_LIVE_PER_PRINCIPAL,
    DEFAULT_MAX_RECORD,
    DEFAULT_MAX_TASKS,
    MAX_ID,
    MAX_PRINCIPAL,
    MAX_TTL_MS,
    STATUSES,
    TERMINAL,
    WORKER_STOPPED,
    TaskLimitExceeded,
    TaskRecord,
    TaskStatus,
    TransitionRefused,
    check_transition,
    worker_stopped,
)

__all__ = [
    "ALLOWED",
    "DEFAULT_MAX_LIVE_PER_PRINCIPAL",
    "DEFAULT_MAX_RECORD",
    "DEFAULT_MAX_TASKS",
    "MAX_ID",
    "MAX_PRINCIPAL",
    "MAX_TTL_MS",
    "STATUSES",
    "TERMINAL",
    "WORKER_STOPPED",
    "MemoryTaskStore",
    "TaskLimitExceeded",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "TransitionRefused",
]


def _text(value: object, what: str, limit: int, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, not {type(value).__name__}")
    if len(value) > limit or (not value and not empty):
        raise ValueError(f"{what} must have {0 if empty else 1} to {limit} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not UTF-8 text (a lone surrogate)") from None
    return value


def _time(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number of seconds")
    return float(value)


def _milliseconds(value: object, what: str, low: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_TTL_MS:
        raise ValueError(f"{what} must be null or an integer from {low} to {MAX_TTL_MS}")


def _bytes(value: object, what: str) -> None:
    if not isinstance(value, bytes):
        raise TypeError(f"{what} must be bytes, not {type(value).__name__}")


def _limit(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, not {value!r}")
    return value


def _known(task_id: object, principal: object) -> bool:
    """Whether a task could be stored under these (a forged id of absurd
    length, say, is answered as unknown, in time that does not grow with it)."""
    if not isinstance(task_id, str) or not isinstance(principal, str):
        raise TypeError("task_id and principal must be strings")
    if not 0 < len(task_id) <= MAX_ID or len(principal) > MAX_PRINCIPAL:
        return False
    try:  # no store keeps a lone surrogate, and Redis and SQLite cannot be asked for one
        task_id.encode("utf-8")
        principal.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class TaskStore(abc.ABC):
    """The interface (see the module). The public methods check their
    arguments, then call the ``_``-named method an implementation provides;
    every method is bounded in time and memory."""

    def __init__(
        self,
        *,
        max_live_per_principal: int = DEFAULT_MAX_LIVE_PER_PRINCIPAL,
        max_tasks: int = DEFAULT_MAX_TASKS,
        max_record: int = DEFAULT_MAX_RECORD,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.max_live_per_principal = _limit(max_live_per_principal, "max_live_per_principal")
        self.max_tasks = _limit(max_tasks, "max_tasks")
        self.max_record = _limit(max_record, "max_record")
        self.clock = clock

    def check(self, record: object) -> TaskRecord:
        """``record`` if the store can keep it; ``TypeError``/``ValueError`` if not."""
        if not isinstance(record, TaskRecord):
            raise TypeError(f"record must be a TaskRecord, not {type(record).__name__}")
        _text(record.task_id, "task_id", MAX_ID)
        _text(record.principal, "principal", MAX_PRINCIPAL, empty=True)
        if record.status not in STATUSES:
            raise ValueError(f"status must be one of {sorted(STATUSES)}")
        _time(record.created_at, "created_at")
        _time(record.updated_at, "updated_at")
        _milliseconds(record.ttl_ms, "ttl_ms", 1)
        _milliseconds(record.poll_interval_ms, "poll_interval_ms", 0)
        if record.status_message is not None:
            _text(record.status_message, "status_message", self.max_record, empty=True)
        if record.outcome is not None:
            _bytes(record.outcome, "outcome")
        _bytes(record.state, "state")
        if record.lease_owner is not None:
            _text(record.lease_owner, "lease_owner", MAX_ID)
        if record.lease_until is not None:
            _time(record.lease_until, "lease_until")
        size = record.size()
        if size > self.max_record:
            raise ValueError(
                f"the task record has {size} bytes, over the limit of {self.max_record}"
            )
        return record

    async def create(self, record: TaskRecord) -> TaskRecord:
        """Store a new task (revision 1) and return it. `TaskLimitExceeded`
        past a bound on live tasks; ``ValueError`` for an id already used or a
        record too large. Nothing stored on an error."""
        record = dataclasses.replace(self.check(record), revision=1)
        return await self._create(record, self.clock())

    async def get(self, task_id: str, principal: str) -> TaskRecord | None:
        """The task, or ``None`` (unknown, expired or another principal's: never
        told apart). A task whose lease passed is returned, and stored, failed."""
        if not _known(task_id, principal):
            return None
        return await self._get(task_id, principal, self.clock())

    async def update(self, record: TaskRecord, *, revision: int) -> TaskRecord | None:
        """Compare-and-set: when the stored task (same id and principal) has
        ``revision``, store ``record`` as revision + 1, ``updated_at`` now, and
        return it; ``None`` when the revision moved (re-read and retry) or the
        task is gone. `TransitionRefused` for a status change `ALLOWED` does
        not have; nothing stored."""
        self.check(record)
        if isinstance(revision, bool) or not isinstance(revision, int):
            raise TypeError(f"revision must be an integer, not {type(revision).__name__}")
        if revision < 1:
            return None
        now = self.clock()
        new = dataclasses.replace(record, revision=revision + 1, updated_at=now)
        return await self._update(new, now)

    async def renew(self, task_id: str, principal: str, owner: str, until: float) -> bool:
        """The worker's heartbeat: set ``lease_until`` to ``until`` when the
        task is ``owner``'s and not terminal (its lease not passed); false
        otherwise, and the worker should stop. A renewal is a write (one
        revision on, ``updated_at`` kept), so an `update` that read the task
        before it cannot put the old lease back."""
        _text(owner, "owner", MAX_ID)
        until = _time(until, "until")
        if not _known(task_id, principal):
            return False
        return await self._renew(task_id, principal, owner, until, self.clock())

    async def __aenter__(self) -> TaskStore:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release what the store holds; every call after is an error."""

    @abc.abstractmethod
    async def _create(self, record: TaskRecord, now: float) -> TaskRecord: ...

    @abc.abstractmethod
    async def _get(self, task_id: str, principal: str, now: float) -> TaskRecord | None: ...

    @abc.abstractmethod
    async def _update(self, record: TaskRecord, now: float) -> TaskRecord | None:
        """Store ``record`` (its revision already the new one) if the stored
        revision is one less."""

    @abc.abstractmethod
    async def _renew(
        self, task_id: str, principal: str, owner: str, until: float, now: float
    ) -> bool: ...


class MemoryTaskStore(TaskStore):
    """`TaskStore` in one process (the default). Each operation is atomic
    under asyncio (none awaits inside); expired tasks go as time passes."""

    def __init__(
        self,
        *,
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
        self._tasks: _Expiring[TaskRecord] = _Expiring(self.max_tasks, clock, "task store")
        # The ids not terminal when last written, per principal: what the live
        # bound counts (pruned when a principal reaches it, and all of them
        # every max_tasks creations, so ids that expired unread do not pile up).
        self._running: dict[str, set[str]] = {}
        self._creations = 0
        # Terminal ids in the order they finished: the first to drop when full.
        self._finished: collections.OrderedDict[str, None] = collections.OrderedDict()
        # (lease_until, id) of every lease written: when full, the tasks whose
        # worker died (unread since) are failed, so they can be dropped too.
        self._leases: list[tuple[float, str]] = []
        self._closed = False

    def _open(self) -> None:
        if self._closed:
            raise InternalError("the task store is closed")

    async def aclose(self) -> None:
        self._closed = True

    def _full(self, principal: str, now: float) -> bool:
        """Whether ``principal`` has its bound of live tasks (counted, and the
        ids no longer live pruned, only when the ids kept reach the bound)."""
        ids = self._running.get(principal)
        if not principal or ids is None or len(ids) < self.max_live_per_principal:
            return False
        ids.difference_update([i for i in ids if not self._is_live(i, principal, now)])
        return len(ids) >= self.max_live_per_principal

    def _sweep(self, now: float) -> None:
        for principal, ids in list(self._running.items()):
            ids.difference_update([i for i in ids if not self._is_live(i, principal, now)])
            if not ids:
                del self._running[principal]

    def _is_live(self, task_id: str, principal: str, now: float) -> bool:
        record = self._tasks.get(task_id)  # the id may be another principal's by now
        return record is not None and record.principal == principal and record.live(now)

    def _make_room(self, now: float) -> None:
        while len(self._tasks) >= self.max_tasks:
            if self._finished:
                self._tasks.delete(self._finished.popitem(last=False)[0])
            elif not self._fail_a_dead_task(now):
                raise TaskLimitExceeded(f"the task store keeps {self.max_tasks} live tasks")
        if len(self._finished) > 2 * len(self._tasks) + 64:  # expired ones left behind
            self._finished = collections.OrderedDict(
                (task_id, None) for task_id in self._finished if self._is_finished(task_id)
            )

    def _fail_a_dead_task(self, now: float) -> bool:
        """Store failed the task whose lease passed first; whether there was one."""
        while self._leases and self._leases[0][0] <= now:
            until, task_id = heapq.heappop(self._leases)
            record = self._tasks.get(task_id)
            if record is not None and record.lease_until == until and record.lease_passed(now):
                self._put(worker_stopped(record, now))
                return True
        return False

    def _is_finished(self, task_id: str) -> bool:
        record = self._tasks.get(task_id)
        return record is not None and record.status in TERMINAL

    def _put(self, record: TaskRecord) -> TaskRecord:
        self._tasks.set(record.task_id, record, record.expires_at)
        if record.status in TERMINAL:
            self._finished[record.task_id] = None
            ids = self._running.get(record.principal)
            if ids is not None:
                ids.discard(record.task_id)
                if not ids:
                    del self._running[record.principal]
        else:
            self._finished.pop(record.task_id, None)  # an id used again after it expired
            self._running.setdefault(record.principal, set()).add(record.task_id)
            if record.lease_until is not None:
                heapq.heappush(self._leases, (record.lease_until, record.task_id))
                if len(self._leases) > 2 * len(self._tasks) + 64:  # renewed, finished, expired
                    self._leases = sorted(set(filter(self._lease_kept, self._leases)))  # a heap
        return record

    def _lease_kept(self, entry: tuple[float, str]) -> bool:
        """Whether ``entry`` is still the lease of a task not terminal (else stale)."""
        until, task_id = entry
        record = self._tasks.get(task_id)
        return record is not None and record.status not in TERMINAL and record.lease_until == until

    def _current(self, task_id: str, principal: str, now: float) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is None or record.principal != principal or record.expires_at <= now:
            return None
        if record.lease_passed(now):
            return self._put(worker_stopped(record, now))
        return record

    async def _create(self, record: TaskRecord, now: float) -> TaskRecord:
        self._open()
        if self._tasks.get(record.task_id) is not None:
            raise ValueError("a task with this id exists")
        if record.live(now) and self._full(record.principal, now):
            raise TaskLimitExceeded(
                f"this principal has {self.max_live_per_principal} live tasks, the most it may"
            )
        self._make_room(now)
        self._creations += 1
        if self._creations % self.max_tasks == 0:
            self._sweep(now)
        return self._put(record)

    async def _get(self, task_id: str, principal: str, now: float) -> TaskRecord | None:
        self._open()
        return self._current(task_id, principal, now)

    async def _update(self, record: TaskRecord, now: float) -> TaskRecord | None:
        self._open()
        stored = self._current(record.task_id, record.principal, now)
        if stored is None or stored.revision != record.revision - 1:
            return None
        check_transition(stored, record)
        return self._put(record)

    async def _renew(
        self, task_id: str, principal: str, owner: str, until: float, now: float
    ) -> bool:
        self._open()
        stored = self._current(task_id, principal, now)
        if stored is None or stored.status in TERMINAL or stored.lease_owner != owner:
            return False
        self._put(dataclasses.replace(stored, lease_until=until, revision=stored.revision + 1))
        return True
