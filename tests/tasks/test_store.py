"""Tests for mcp_schema.tasks.store and its stores: one contract, three stores
(in memory, SQLite, and Redis against a real redis-server on a loopback port),
with n stores on one backend standing for n replicas."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
from redis.asyncio import Redis

from mcp_schema.errors import InternalError
from mcp_schema.tasks.redis_store import RedisTaskStore
from mcp_schema.tasks.sqlite_store import SqliteTaskStore
from mcp_schema.tasks.store import (
    ALLOWED,
    STATUSES,
    TERMINAL,
    WORKER_STOPPED,
    MemoryTaskStore,
    TaskLimitExceeded,
    TaskRecord,
    TaskStatus,
    TaskStore,
    TransitionRefused,
)

# The redis-server fixture and the helper that waits for it are test_broker's.
from tests.http.test_broker import PATIENT, WAIT, redis_url  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    """A clock the test moves, shared by every store of a test. It starts
    at the real time, so Redis's own key expiry stays behind it."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


Stores = Callable[..., Any]


@pytest.fixture(params=["memory", "sqlite", "redis"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    """``stores(n, **options)``: an async context of n stores on one backend,
    as n replicas would have (in memory: one store n times), and their clock."""
    kind = request.param
    url = request.getfixturevalue("redis_url") if kind == "redis" else ""
    prefix = f"test-{uuid.uuid4().hex}:"  # each test its own namespace

    @asynccontextmanager
    async def open_stores(n: int = 1, **options: Any) -> AsyncIterator[tuple[Clock, list[Any]]]:
        clock = Clock()
        made: list[TaskStore]
        if kind == "memory":
            made = [MemoryTaskStore(clock=clock, **options)] * n
        elif kind == "sqlite":
            made = [
                SqliteTaskStore(tmp_path / "tasks.db", clock=clock, **options) for _ in range(n)
            ]
        else:
            made = [
                RedisTaskStore(url, prefix=prefix, clock=clock, command_timeout=PATIENT, **options)
                for _ in range(n)
            ]
        try:
            yield clock, made
        finally:
            for store in made:
                await store.aclose()

    return open_stores


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), 6 * WAIT))


def task(clock: Clock, task_id: str = "t1", **fields: Any) -> TaskRecord:
    values: dict[str, Any] = {
        "task_id": task_id,
        "principal": "alice",
        "status": "working",
        "created_at": clock.now,
        "updated_at": clock.now,
        "ttl_ms": 60_000,
    }
    return TaskRecord(**{**values, **fields})


async def finish(store: TaskStore, record: TaskRecord, status: TaskStatus) -> TaskRecord:
    stored = await store.update(
        dataclasses.replace(record, status=status), revision=record.revision
    )
    assert stored is not None
    return stored


# Records kept.


def test_a_record_is_kept_exactly_and_read_by_every_replica(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2) as (clock, (a, b)):
            record = task(
                clock,
                "tk-\u00e9",
                principal="",
                status="input_required",
                created_at=clock.now - 0.123456789,
                ttl_ms=None,
                poll_interval_ms=0,
                status_message="waits for \u2603",
                outcome=b"",
                state=b'{"call": {"name": "x"}, "\\u0000": 1}',
                lease_owner="worker-1",
                lease_until=clock.now + 30.5,
            )
            created = await a.create(record)
            assert created == dataclasses.replace(record, revision=1)
            assert await b.get("tk-\u00e9", "") == created
            plain = await a.create(task(clock, "t2"))
            assert await b.get("t2", "alice") == plain
            assert plain.status_message is None and plain.outcome is None
            assert plain.lease_owner is None and plain.lease_until is None

    run(body)


def test_another_principals_or_an_unknown_task_is_none(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2) as (clock, (a, b)):
            created = await a.create(task(clock))
            assert await b.get("t1", "mallory") is None
            assert await b.get("t1", "") is None
            assert await b.get("t2", "alice") is None
            assert (
                await b.update(dataclasses.replace(created, principal="mallory"), revision=1)
                is None
            )
            assert not await b.renew("t1", "mallory", "w", clock.now + 10)
            assert await a.get("t1", "alice") == created  # untouched

    run(body)


def test_an_id_is_used_once(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2) as (clock, (a, b)):
            created = await a.create(task(clock, state=b'{"first": true}'))
            with pytest.raises(ValueError, match="exists"):
                await b.create(task(clock, state=b"{}"))
            with pytest.raises(ValueError, match="exists"):
                await b.create(task(clock, principal="bob"))
            assert await a.get("t1", "alice") == created
            assert await a.get("t1", "bob") is None

    run(body)


# Compare-and-set and the transitions.


def test_an_update_is_a_compare_and_set_on_the_revision(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2) as (clock, (a, b)):
            created = await a.create(task(clock))
            clock.advance(1)
            moved = dataclasses.replace(created, status_message="halfway", state=b'{"n": 1}')
            stored = await b.update(moved, revision=1)
            assert stored == dataclasses.replace(moved, revision=2, updated_at=clock.now)
            assert await a.get("t1", "alice") == stored
            assert await a.update(moved, revision=1) is None  # stale: re-read and retry
            assert await a.update(moved, revision=3) is None
            assert await a.update(moved, revision=0) is None
            assert await a.get("t1", "alice") == stored

    run(body)


def test_concurrent_writers_never_overwrite_one_another(stores: Stores) -> None:
    async def body() -> None:
        async with stores(3) as (clock, replicas):
            await replicas[0].create(task(clock, state=b"0"))

            async def increment(store: TaskStore) -> None:
                while True:
                    seen = await store.get("t1", "alice")
                    assert seen is not None
                    written = dataclasses.replace(seen, state=str(int(seen.state) + 1).encode())
                    if await store.update(written, revision=seen.revision):
                        return

            await asyncio.gather(*(increment(store) for store in replicas * 10))
            final = await replicas[1].get("t1", "alice")
            assert final is not None
            assert (final.state, final.revision) == (b"30", 31)

    run(body)


def test_every_transition_of_the_diagram_and_no_other(stores: Stores) -> None:
    async def body() -> None:
        async with stores() as (clock, (store,)):
            for old in sorted(STATUSES):
                for new in sorted(STATUSES):
                    task_id = f"{old}-{new}"
                    record = await store.create(task(clock, task_id))
                    if old != "working":
                        record = await finish(store, record, old)
                    attempt = dataclasses.replace(record, status=new, status_message="x")
                    if new in ALLOWED[old]:
                        stored = await store.update(attempt, revision=record.revision)
                        assert stored is not None and stored.status == new
                    else:
                        with pytest.raises(TransitionRefused):
                            await store.update(attempt, revision=record.revision)
                        assert await store.get(task_id, "alice") == record  # nothing stored
            assert set(ALLOWED["working"]) == set(ALLOWED["input_required"]) == set(STATUSES)
            assert all(not ALLOWED[status] for status in TERMINAL)

    run(body)


def test_created_at_never_changes(stores: Stores) -> None:
    async def body() -> None:
        async with stores() as (clock, (store,)):
            created = await store.create(task(clock))
            with pytest.raises(ValueError, match="created_at"):
                await store.update(dataclasses.replace(created, created_at=0.0), revision=1)
            assert await store.get("t1", "alice") == created

    run(body)


# Expiry.


def test_a_task_is_gone_when_its_ttl_passes(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2) as (clock, (a, b)):
            created = await a.create(task(clock, ttl_ms=1000, lease_owner="w"))
            kept = await a.create(task(clock, "forever", ttl_ms=None))
            clock.advance(0.999)
            assert await b.get("t1", "alice") == created
            clock.advance(0.001)
            assert await b.get("t1", "alice") is None
            assert await b.update(created, revision=1) is None
            assert not await b.renew("t1", "alice", "w", clock.now + 10)
            again = await b.create(task(clock))  # the id is free again
            assert again.created_at == clock.now
            clock.advance(365 * 86400)
            assert await a.get("forever", "alice") == kept

    run(body)


def test_an_update_may_change_the_ttl(stores: Stores) -> None:
    async def body() -> None:
        async with stores() as (clock, (store,)):
            created = await store.create(task(clock, ttl_ms=1000))
            assert await store.update(dataclasses.replace(created, ttl_ms=5000), revision=1)
            clock.advance(2)
            longer = await store.get("t1", "alice")
            assert longer is not None and longer.ttl_ms == 5000
            assert await store.update(dataclasses.replace(longer, ttl_ms=None), revision=2)
            clock.advance(3600)
            assert await store.get("t1", "alice") is not None

    run(body)


def test_redis_expires_the_key_itself(redis_url: str) -> None:  # noqa: F811
    async def body() -> None:
        prefix = f"test-{uuid.uuid4().hex}:"
        client = Redis.from_url(redis_url)
        async with RedisTaskStore(client, prefix=prefix) as store:
            await store.create(task(Clock(), ttl_ms=50))
            await store.create(task(Clock(), "kept", ttl_ms=None))
            assert await client.exists(f"{prefix}task:t1")
            assert await client.pttl(f"{prefix}task:kept") == -1  # no expiry
            deadline = time.monotonic() + WAIT
            while await client.exists(f"{prefix}task:t1"):
                assert time.monotonic() < deadline, "the key never expired"
                await asyncio.sleep(0.02)
        await client.aclose()

    run(body)


# Leases.


def test_a_passed_lease_is_failed_for_every_replica_written_once(stores: Stores) -> None:
    async def body() -> None:
        async with stores(3) as (clock, replicas):
            a = replicas[0]
            created = await a.create(task(clock, lease_owner="w1", lease_until=clock.now + 10))
            assert await a.renew("t1", "alice", "w1", clock.now + 20)
            clock.advance(15)
            alive = await replicas[1].get("t1", "alice")
            assert alive is not None and alive.status == "working" and alive.revision == 2
            clock.advance(5)
            seen = await asyncio.gather(*(store.get("t1", "alice") for store in replicas * 4))
            assert all(record == seen[0] for record in seen)  # one write won; all read it
            failed = seen[0]
            assert failed is not None
            assert (failed.status, failed.revision, failed.updated_at) == ("failed", 3, clock.now)
            assert failed.status_message == WORKER_STOPPED
            assert failed.outcome is not None
            error = json.loads(failed.outcome)
            assert error["code"] == -32603 and "worker" in error["message"]
            assert (failed.state, failed.created_at) == (created.state, created.created_at)
            assert not await a.renew("t1", "alice", "w1", clock.now + 60)  # the worker stops
            with pytest.raises(TransitionRefused):
                await a.update(dataclasses.replace(failed, status="completed"), revision=3)

    run(body)


def test_a_worker_that_missed_its_lease_cannot_write(stores: Stores) -> None:
    async def body() -> None:
        async with stores() as (clock, (store,)):
            created = await store.create(task(clock, lease_owner="w", lease_until=clock.now + 1))
            clock.advance(1)
            done = dataclasses.replace(created, status="completed", outcome=b"{}")
            assert await store.update(done, revision=1) is None  # it was failed first
            failed = await store.get("t1", "alice")
            assert failed is not None and failed.status == "failed"

    run(body)


def test_only_the_owner_renews_a_task_not_terminal(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2) as (clock, (a, b)):
            created = await a.create(task(clock, lease_owner="w", lease_until=clock.now + 1))
            assert not await b.renew("t1", "alice", "other", clock.now + 60)
            assert await b.renew("t1", "alice", "w", clock.now + 60)
            renewed = await a.get("t1", "alice")
            assert renewed is not None
            assert (renewed.lease_until, renewed.revision) == (clock.now + 60, 2)
            assert renewed.updated_at == created.updated_at
            # An update that read before the heartbeat cannot put the old lease back.
            assert await a.update(created, revision=1) is None
            done = await finish(a, renewed, "completed")
            assert not await b.renew("t1", "alice", "w", clock.now + 120)
            assert await a.get("t1", "alice") == done
            unleased = await a.create(task(clock, "t2"))
            assert not await a.renew("t2", "alice", "w", clock.now + 1)
            assert await a.get("t2", "alice") == unleased

    run(body)


# Bounds.


def test_live_tasks_are_bounded_per_principal(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2, max_live_per_principal=3) as (clock, (a, b)):
            first = await a.create(task(clock, "t0"))
            await a.create(task(clock, "t1", ttl_ms=1000))
            await b.create(task(clock, "t2", lease_owner="w", lease_until=clock.now + 5))
            with pytest.raises(TaskLimitExceeded, match="3 live tasks") as refused:
                await b.create(task(clock, "t3"))
            assert refused.value.code == -32603
            assert await a.get("t3", "alice") is None  # nothing stored
            assert await b.create(task(clock, "b0", principal="bob"))  # another's bound
            await finish(a, first, "cancelled")  # a terminal task is not live
            await b.create(task(clock, "t3"))
            with pytest.raises(TaskLimitExceeded):
                await a.create(task(clock, "t4"))
            clock.advance(1)  # t1's ttl passed
            await a.create(task(clock, "t4"))
            clock.advance(4)  # t2's lease passed: its worker is dead
            await a.create(task(clock, "t5"))
            with pytest.raises(TaskLimitExceeded):
                await a.create(task(clock, "t6"))
            failed = await b.get("t2", "alice")
            assert failed is not None and failed.status == "failed"

    run(body)


def test_concurrent_creators_stay_within_the_bound(stores: Stores) -> None:
    async def body() -> None:
        async with stores(3, max_live_per_principal=5) as (clock, replicas):
            outcomes = await asyncio.gather(
                *(store.create(task(clock, f"t{n}")) for n, store in enumerate(replicas * 6)),
                return_exceptions=True,
            )
            assert sum(isinstance(o, TaskRecord) for o in outcomes) == 5
            assert all(isinstance(o, (TaskRecord, TaskLimitExceeded)) for o in outcomes)
            kept = [await replicas[0].get(f"t{n}", "alice") for n in range(18)]
            assert sum(record is not None for record in kept) == 5

    run(body)


def test_the_store_drops_the_first_finished_task_when_full(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2, max_tasks=3) as (clock, (a, b)):
            one = await a.create(task(clock, "one"))
            two = await a.create(task(clock, "two", principal="bob"))
            three = await a.create(task(clock, "three"))
            with pytest.raises(TaskLimitExceeded, match="keeps 3"):
                await b.create(task(clock, "four"))  # every kept one is live
            clock.advance(1)
            await finish(a, two, "completed")
            clock.advance(1)
            await finish(a, one, "failed")
            four = await b.create(task(clock, "four"))
            assert await a.get("two", "bob") is None  # the first to finish went
            assert await a.get("one", "alice") is not None
            assert await b.get("three", "alice") == three
            assert await b.get("four", "alice") == four

    run(body)


def test_a_full_store_drops_a_task_whose_worker_died_unread(stores: Stores) -> None:
    async def body() -> None:
        async with stores(2, max_tasks=3) as (clock, (a, b)):
            for n, ends in enumerate([2, 1]):  # never read after, and no ttl
                leased = task(clock, f"dead{n}", ttl_ms=None, lease_owner="w")
                await a.create(dataclasses.replace(leased, lease_until=clock.now + ends))
            alive = await a.create(
                task(clock, "alive", lease_owner="w", lease_until=clock.now + 60)
            )
            with pytest.raises(TaskLimitExceeded, match="keeps 3"):
                await b.create(task(clock, "new", principal="bob"))  # every kept one is live
            clock.advance(3)  # both leases passed: their workers died
            await b.create(task(clock, "new", principal="bob"))
            await b.create(task(clock, "newer", principal="bob"))
            assert await a.get("dead0", "alice") is None  # both dropped to make room
            assert await a.get("dead1", "alice") is None
            assert await a.get("alive", "alice") == alive
            with pytest.raises(TaskLimitExceeded, match="keeps 3"):
                await b.create(task(clock, "newest", principal="bob"))

    run(body)


def test_an_id_used_again_after_it_expired_is_the_new_principals(stores: Stores) -> None:
    async def body() -> None:
        async with stores(max_live_per_principal=1) as (clock, (store,)):
            await store.create(task(clock, "a", ttl_ms=1000))
            clock.advance(1)  # expired while working
            again = await store.create(task(clock, "a", principal="carol"))
            await store.create(task(clock, "b"))  # "a" is no longer alice's
            assert await store.get("a", "carol") == again
            assert await store.get("a", "alice") is None

    run(body)


def test_an_id_finished_and_used_again_is_not_dropped_as_finished(stores: Stores) -> None:
    async def body() -> None:
        async with stores(max_tasks=2) as (clock, (store,)):
            await finish(store, await store.create(task(clock, "f", ttl_ms=1000)), "completed")
            clock.advance(1)  # expired once finished
            again = await store.create(task(clock, "f", principal="dave"))
            await store.create(task(clock, "b"))
            with pytest.raises(TaskLimitExceeded, match="keeps 2"):
                await store.create(task(clock, "c"))  # "f" is live now: never dropped
            assert await store.get("f", "dave") == again

    run(body)


def test_a_record_too_large_is_refused_and_changes_nothing(stores: Stores) -> None:
    async def body() -> None:
        async with stores(max_record=100) as (clock, (store,)):
            with pytest.raises(ValueError, match="over the limit of 100"):
                await store.create(task(clock, state=b"x" * 101))
            assert await store.get("t1", "alice") is None
            created = await store.create(task(clock, state=b"x" * 50, status_message="m" * 50))
            too_large = dataclasses.replace(created, outcome=b"{}")  # 102 bytes in all
            with pytest.raises(ValueError, match="102 bytes"):
                await store.update(too_large, revision=1)
            assert await store.get("t1", "alice") == created

    run(body)


def test_a_closed_store_refuses_every_call(stores: Stores) -> None:
    async def body() -> None:
        async with stores() as (clock, (store,)):
            await store.create(task(clock))
            await store.aclose()
            for call in (
                store.create(task(clock, "t2")),
                store.get("t1", "alice"),
                store.update(task(clock), revision=1),
                store.renew("t1", "alice", "w", clock.now),
            ):
                with pytest.raises(InternalError, match="closed"):
                    await call

    run(body)


def test_an_unreachable_redis_is_an_internal_error() -> None:
    from tests.http.test_broker import _free_port  # nothing listens there

    async def body() -> None:
        async with RedisTaskStore(f"redis://127.0.0.1:{_free_port()}/0") as store:
            with pytest.raises(InternalError, match="Redis failed to read a task"):
                await store.get("t1", "alice")
            with pytest.raises(InternalError, match="Redis failed to create a task"):
                await store.create(task(Clock()))

    run(body)


def test_redis_needs_a_client_that_returns_bytes(redis_url: str) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="decode_responses"):
        RedisTaskStore(Redis.from_url(redis_url, decode_responses=True))
    with pytest.raises(TypeError):
        RedisTaskStore(42)  # type: ignore[arg-type]


# Processes: a restart, and a worker killed.

_PROCESS = """
import asyncio, dataclasses, json, os, sys, time
from mcp_schema.tasks.redis_store import RedisTaskStore
from mcp_schema.tasks.sqlite_store import SqliteTaskStore
from mcp_schema.tasks.store import TaskRecord

def open_store():
    kind, where = sys.argv[1], sys.argv[2]
    if kind == "sqlite":
        return SqliteTaskStore(where)
    return RedisTaskStore(where, prefix=sys.argv[3])
"""


def _python(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_PROCESS) + textwrap.dedent(script), *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )


_READ = """
async def main():
    async with open_store() as store:
        record = await store.get("t1", "alice")
        print(json.dumps(None if record is None else {
            "status": record.status, "revision": record.revision,
            "state": record.state.decode(), "message": record.status_message}))
asyncio.run(main())
"""


def _read_elsewhere(*args: str) -> Any:
    reader = _python(_READ, *args)
    out, _ = reader.communicate(timeout=6 * WAIT)
    assert reader.returncode == 0
    return json.loads(out)


def _read_here(kind: str, *where: str) -> TaskRecord | None:
    async def read() -> TaskRecord | None:
        store: TaskStore = (
            SqliteTaskStore(where[0])
            if kind == "sqlite"
            else RedisTaskStore(where[0], prefix=where[1])
        )
        async with store:
            return await store.get("t1", "alice")

    return asyncio.run(read())


@pytest.mark.slow  # two interpreters start
def test_an_sqlite_store_survives_a_restart(tmp_path: Path) -> None:
    path = str(tmp_path / "tasks.db")
    writer = _python(
        """
        async def main():
            async with open_store() as store:
                now = time.time()
                await store.create(TaskRecord("t1", "alice", "working", now, now, None,
                                              state=b'{"written": "before"}'))
        asyncio.run(main())
        """,
        "sqlite",
        path,
    )
    assert writer.wait(6 * WAIT) == 0

    async def restarted() -> None:
        async with SqliteTaskStore(path) as store:
            record = await store.get("t1", "alice")
            assert record is not None and record.state == b'{"written": "before"}'
            assert await store.update(dataclasses.replace(record, status="completed"), revision=1)

    run(restarted)
    assert _read_elsewhere("sqlite", path) == {
        "status": "completed",
        "revision": 2,
        "state": '{"written": "before"}',
        "message": None,
    }


_WORKER = """
async def main():
    async with open_store() as store:
        now = time.time()
        await store.create(TaskRecord("t1", "alice", "working", now, now, 60000,
                                      lease_owner="w", lease_until=now + 1))
        print("running", flush=True)
        while await store.renew("t1", "alice", "w", time.time() + 1):
            await asyncio.sleep(0.1)
asyncio.run(main())
"""


@pytest.mark.slow  # waits out a lease
@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_killed_worker_is_seen_failed_by_another_process(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    where = [str(tmp_path / "tasks.db")]
    if kind == "redis":
        where = [request.getfixturevalue("redis_url"), f"test-{uuid.uuid4().hex}:"]
    worker = _python(_WORKER, kind, *where)
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline() == "running\n"
        time.sleep(1.2)  # past the first lease: only renewals keep it working
        alive = _read_here(kind, *where)
        assert alive is not None and alive.status == "working" and alive.revision > 2
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(WAIT)
    time.sleep(1.1)  # the last lease runs out
    failed = _read_here(kind, *where)
    assert failed is not None
    assert (failed.status, failed.status_message) == ("failed", WORKER_STOPPED)
    assert _read_here(kind, *where) == failed  # written once, by the first reader


# The contract as a model: any sequence of calls, on any store, agrees with it.

_IDS = st.sampled_from(["a", "b", "c"])
_PRINCIPALS = st.sampled_from(["alice", "bob"])
_STATUS = st.sampled_from(sorted(STATUSES))


class StoreMachine(RuleBasedStateMachine):
    """Creations, compare-and-set updates (the revision right, stale or ahead;
    every transition) and reads, checked against a dict of what must be kept."""

    def __init__(self, make: Callable[[Clock], TaskStore]) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = Clock()
        self.store = make(self.clock)
        self.model: dict[str, TaskRecord] = {}

    def call(self, awaitable: Awaitable[Any]) -> Any:
        return self.loop.run_until_complete(awaitable)

    @rule(task_id=_IDS, principal=_PRINCIPALS, status=_STATUS)
    def create(self, task_id: str, principal: str, status: TaskStatus) -> None:
        now = self.clock.now
        record = TaskRecord(task_id, principal, status, now, now, None)
        if task_id in self.model:
            with pytest.raises(ValueError):
                self.call(self.store.create(record))
        else:
            self.model[task_id] = self.call(self.store.create(record))
            assert self.model[task_id] == dataclasses.replace(record, revision=1)

    @rule(
        task_id=_IDS,
        principal=_PRINCIPALS,
        status=_STATUS,
        offset=st.integers(-1, 1),
        message=st.text(max_size=4),
    )
    def update(
        self, task_id: str, principal: str, status: TaskStatus, offset: int, message: str
    ) -> None:
        stored = self.model.get(task_id)
        now = self.clock.now
        base = stored or TaskRecord(task_id, principal, "working", now, now, None, revision=1)
        attempt = dataclasses.replace(
            base, principal=principal, status=status, status_message=message
        )
        revision = base.revision + offset
        self.clock.advance(0.25)
        if stored is None or stored.principal != principal or offset:
            assert self.call(self.store.update(attempt, revision=revision)) is None
        elif status not in ALLOWED[stored.status]:
            with pytest.raises(TransitionRefused):
                self.call(self.store.update(attempt, revision=revision))
        else:
            written = self.call(self.store.update(attempt, revision=revision))
            expected = dataclasses.replace(
                attempt, revision=revision + 1, updated_at=self.clock.now
            )
            assert written == expected
            self.model[task_id] = expected

    @rule(task_id=_IDS, principal=_PRINCIPALS)
    def get(self, task_id: str, principal: str) -> None:
        stored = self.model.get(task_id)
        expected = stored if stored is not None and stored.principal == principal else None
        assert self.call(self.store.get(task_id, principal)) == expected

    def teardown(self) -> None:
        self.call(self.store.aclose())
        self.loop.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
def test_every_store_follows_the_model(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("redis_url") if kind == "redis" else ""

    def make(clock: Clock) -> TaskStore:
        name = uuid.uuid4().hex  # each example its own store
        if kind == "memory":
            return MemoryTaskStore(clock=clock)
        if kind == "sqlite":
            return SqliteTaskStore(tmp_path / f"{name}.db", clock=clock)
        return RedisTaskStore(url, prefix=f"test-{name}:", clock=clock, command_timeout=PATIENT)

    run_state_machine_as_test(  # type: ignore[no-untyped-call]  # hypothesis leaves it unannotated
        lambda: StoreMachine(make),
        settings=settings(max_examples=25, stateful_step_count=20, deadline=None),
    )
