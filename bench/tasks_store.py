"""The task stores: ``python -m bench.tasks_store [--quick]``.

Each store (in memory, SQLite in a temporary file, Redis on a redis-server of
its own on loopback) creates ``TASKS`` tasks, then polls each of them
``POLLS`` times (``get``, what a ``tasks/get`` costs the store), one call at a
time from one client. The reference is the same backend's raw key-value
store, measured in the same run, rounds alternating: the broker's ``put`` and
``get`` (`mcp_schema.broker.InProcessBroker`, `mcp_schema.redis_broker.RedisBroker`)
and, for SQLite, an ``INSERT``/``SELECT`` of one blob on the store's own kind of
thread and file settings. Reported: operations per second, and the store over
its reference (what the bounds, the compare-and-set and the lease check cost
on top of the backend). Nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import sqlite3
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcp_schema.broker import Broker, InProcessBroker
from mcp_schema.redis_broker import RedisBroker
from mcp_schema.tasks.redis_store import RedisTaskStore
from mcp_schema.tasks.sqlite_store import SqliteTaskStore
from mcp_schema.tasks.store import MemoryTaskStore, TaskRecord, TaskStore

# The redis-server the broker's tests start: loopback, a free port, no persistence.
from tests.http.test_broker import redis_server

TASKS = 2000
POLLS = 5
ROUNDS = 5
STATE = b'{"call":{"method":"tools/call","params":{"name":"long_count"}}}'


@dataclass
class Rates:
    """Best operations per second over the rounds."""

    create: float
    poll: float


@dataclass
class Result:
    store: Rates
    reference: Rates

    @property
    def create_ratio(self) -> float:
        return self.store.create / self.reference.create

    @property
    def poll_ratio(self) -> float:
        return self.store.poll / self.reference.poll


class _SqliteReference:
    """The backend alone: one blob per key, on one thread, WAL, like the store."""

    def __init__(self, path: Path) -> None:
        self._thread = concurrent.futures.ThreadPoolExecutor(1)
        self._path = path
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID")
        return self._db

    async def _run(self, call: Callable[[sqlite3.Connection], Any]) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, lambda: call(self._connect()))

    async def put(self, key: str, value: bytes) -> None:
        await self._run(lambda db: db.execute("INSERT INTO kv VALUES (?, ?)", (key, value)))

    async def get(self, key: str) -> bytes | None:
        row = await self._run(
            lambda db: db.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        )
        return None if row is None else bytes(row[0])

    async def aclose(self) -> None:
        if self._db is not None:
            await self._run(lambda db: db.close())
        self._thread.shutdown()


async def _timed(calls: Callable[[], Awaitable[None]], count: int) -> float:
    started = time.perf_counter()
    await calls()
    return count / (time.perf_counter() - started)


async def _tasks(store: TaskStore, tasks: int, polls: int, round_: int) -> Rates:
    now = time.time()
    ids = [f"r{round_}-{n}" for n in range(tasks)]

    async def create() -> None:
        for n, task_id in enumerate(ids):
            principal = f"p{n % 50}"  # well within the live bound of each
            await store.create(
                TaskRecord(task_id, principal, "working", now, now, 600_000, state=STATE)
            )

    async def poll() -> None:
        for _ in range(polls):
            for n, task_id in enumerate(ids):
                await store.get(task_id, f"p{n % 50}")

    return Rates(await _timed(create, tasks), await _timed(poll, tasks * polls))


async def _raw(backend: Broker | _SqliteReference, tasks: int, polls: int, round_: int) -> Rates:
    ids = [f"r{round_}-{n}" for n in range(tasks)]

    async def put() -> None:
        for key in ids:
            if isinstance(backend, Broker):
                await backend.put(key, STATE, 600)
            else:
                await backend.put(key, STATE)

    async def get() -> None:
        for _ in range(polls):
            for key in ids:
                await backend.get(key)

    return Rates(await _timed(put, tasks), await _timed(get, tasks * polls))


@contextlib.asynccontextmanager
async def _backends(
    kind: str, workdir: Path, redis_url: str
) -> AsyncIterator[tuple[TaskStore, Broker | _SqliteReference]]:
    store: TaskStore
    reference: Broker | _SqliteReference
    if kind == "memory":
        store, reference = MemoryTaskStore(max_live_per_principal=10**6), InProcessBroker()
    elif kind == "sqlite":
        store = SqliteTaskStore(workdir / "tasks.db", max_live_per_principal=10**6)
        reference = _SqliteReference(workdir / "reference.db")
    else:
        store = RedisTaskStore(redis_url, prefix="bench:", max_live_per_principal=10**6)
        reference = RedisBroker.from_url(redis_url, prefix="bench:")
    try:
        yield store, reference
    finally:
        await store.aclose()
        await reference.aclose()


def _best(rates: list[Rates]) -> Rates:
    return Rates(max(r.create for r in rates), max(r.poll for r in rates))


def measure(tasks: int = TASKS, polls: int = POLLS, rounds: int = ROUNDS) -> dict[str, Result]:
    """Every store and its reference, ``rounds`` alternating rounds each."""
    with tempfile.TemporaryDirectory() as tmp, redis_server(Path(tmp)) as url:
        return {
            kind: asyncio.run(_measure(kind, Path(tmp), url, tasks, polls, rounds))
            for kind in ("memory", "sqlite", "redis")
        }


async def _measure(kind: str, tmp: Path, url: str, tasks: int, polls: int, rounds: int) -> Result:
    workdir = tmp / kind
    workdir.mkdir()
    ours: list[Rates] = []
    theirs: list[Rates] = []
    async with _backends(kind, workdir, url) as (store, reference):
        for n in range(rounds):
            ours.append(await _tasks(store, tasks, polls, n))
            theirs.append(await _raw(reference, tasks, polls, n))
    return Result(_best(ours), _best(theirs))


def report(results: dict[str, Result], tasks: int = TASKS, polls: int = POLLS) -> None:
    print(
        f"\nTask stores: {tasks} tasks created, each polled {polls} times, one client;"
        " reference: the same backend's raw put/get"
    )
    print(
        f"  {'store':<8} {'create/s':>10} {'ref put/s':>10} {'ratio':>6}"
        f" {'poll/s':>10} {'ref get/s':>10} {'ratio':>6}"
    )
    for kind, r in results.items():
        print(
            f"  {kind:<8} {r.store.create:>10,.0f} {r.reference.create:>10,.0f}"
            f" {r.create_ratio:>6.2f} {r.store.poll:>10,.0f} {r.reference.poll:>10,.0f}"
            f" {r.poll_ratio:>6.2f}"
        )


def jsonable(results: dict[str, Result]) -> dict[str, Any]:
    return {
        kind: {
            "store": asdict(r.store),
            "reference": asdict(r.reference),
            "create_ratio": r.create_ratio,
            "poll_ratio": r.poll_ratio,
        }
        for kind, r in results.items()
    }


def settings(quick: bool) -> tuple[int, int, int]:
    """Tasks, polls of each and rounds."""
    return (500, 2, 2) if quick else (TASKS, POLLS, ROUNDS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tasks_store", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer tasks and rounds")
    args = parser.parse_args(argv)
    tasks, polls, rounds = settings(args.quick)
    report(measure(tasks, polls, rounds), tasks, polls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
