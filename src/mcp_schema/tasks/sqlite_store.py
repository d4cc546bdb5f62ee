"""`mcp_schema.tasks.store.TaskStore` in an SQLite file: one machine, any
number of processes, and a restart of any of them loses nothing (hand-written
runtime module; standard library only).

Every call runs on one thread of its own per store, never on the event loop.
The file is in WAL mode (readers never wait for a writer), with a busy
timeout for the processes that share it. Each write is one atomic step of
SQLite: an update and a renewal are single ``UPDATE`` statements conditioned
on the revision read (compare-and-set); a creation counts, purges, makes room
and inserts in one ``BEGIN IMMEDIATE`` transaction, so the bounds hold across
processes. A count of the kept rows is kept by triggers, so the bound on them
costs no scan. A file still locked past the timeout is an
`mcp_schema.errors.UnavailableError` (HTTP 503); any other failure of SQLite
(a full disk) is an `mcp_schema.errors.InternalError`; either way nothing
changed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

from mcp_schema.errors import InternalError, UnavailableError, clip
from mcp_schema.tasks.record import (
    DEFAULT_MAX_LIVE_PER_PRINCIPAL,
    DEFAULT_MAX_RECORD,
    DEFAULT_MAX_TASKS,
    TERMINAL,
    TaskLimitExceeded,
    TaskRecord,
    check_transition,
    worker_stopped,
)
from mcp_schema.tasks.store import TaskStore

__all__ = ["SqliteTaskStore"]

T = TypeVar("T")

_COLUMNS = (
    "task_id, principal, status, created_at, updated_at, ttl_ms, poll_interval_ms,"
    " status_message, outcome, state, lease_owner, lease_until, revision"
)
_RUNNING = "status IN ('working', 'input_required')"
_UNEXPIRED = "(expires_at IS NULL OR expires_at > :now)"
_LEASE_HELD = "(lease_until IS NULL OR lease_until > :now)"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    ttl_ms INTEGER,
    poll_interval_ms INTEGER,
    status_message TEXT,
    outcome BLOB,
    state BLOB NOT NULL,
    lease_owner TEXT,
    lease_until REAL,
    revision INTEGER NOT NULL,
    expires_at REAL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tasks_by_principal ON tasks (principal, status);
CREATE INDEX IF NOT EXISTS tasks_by_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_finished ON tasks (updated_at) WHERE NOT {_RUNNING};
CREATE INDEX IF NOT EXISTS tasks_leases ON tasks (lease_until) WHERE {_RUNNING};
CREATE TABLE IF NOT EXISTS kept (n INTEGER NOT NULL);
INSERT INTO kept SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM kept);
CREATE TRIGGER IF NOT EXISTS kept_insert AFTER INSERT ON tasks BEGIN UPDATE kept SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS kept_delete AFTER DELETE ON tasks BEGIN UPDATE kept SET n = n - 1; END;
"""

# What makes a stored row the record given: the revision read, still unexpired.
_WRITE = f"""
UPDATE tasks SET status = :status, updated_at = :updated_at, ttl_ms = :ttl_ms,
    poll_interval_ms = :poll_interval_ms, status_message = :status_message,
    outcome = :outcome, state = :state, lease_owner = :lease_owner,
    lease_until = :lease_until, revision = :revision, expires_at = :expires_at
WHERE task_id = :task_id AND principal = :principal AND revision = :revision - 1
    AND {_UNEXPIRED}
"""


def _row(record: TaskRecord) -> dict[str, Any]:
    expires_at = record.expires_at
    return {
        "task_id": record.task_id,
        "principal": record.principal,
        "status": record.status,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "ttl_ms": record.ttl_ms,
        "poll_interval_ms": record.poll_interval_ms,
        "status_message": record.status_message,
        "outcome": record.outcome,
        "state": record.state,
        "lease_owner": record.lease_owner,
        "lease_until": record.lease_until,
        "revision": record.revision,
        "expires_at": None if math.isinf(expires_at) else expires_at,
    }


def _record(row: tuple[Any, ...]) -> TaskRecord:
    return TaskRecord(*row)


def _busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" (SQLITE_BUSY): another
    process holds the file, which may be free again soon."""
    return "locked" in str(exc)


def _enter_wal(connection: sqlite3.Connection, patience: float) -> None:
    """Switch the file to WAL, waiting up to ``patience`` seconds for the
    processes opening it at the same moment: SQLite's busy handler does not
    cover the switch, which fails at once ("database is locked") while
    another connection makes the same switch."""
    deadline = time.monotonic() + patience
    pause = 0.001
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


class SqliteTaskStore(TaskStore):
    """`TaskStore` in the SQLite file at ``path`` (created with its table if
    missing; every process that shares the tasks names the same file).
    ``busy_timeout`` is how long, in seconds, a call waits for another
    process's write before it fails."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
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
        if not isinstance(busy_timeout, (int, float)) or not 0 < busy_timeout < math.inf:
            raise ValueError(f"busy_timeout must be positive seconds, not {busy_timeout!r}")
        self._path = os.fspath(path)
        self._busy_timeout = float(busy_timeout)
        # One thread per store: SQLite's connection is not shared between
        # threads, and calls of one store run in the order they were made.
        self._thread = concurrent.futures.ThreadPoolExecutor(1, "sqlite-task-store")
        self._connection: sqlite3.Connection | None = None
        self._closed = False

    async def _run(self, what: str, call: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise InternalError("the task store is closed")

        def step() -> T:
            try:
                return call(self._connect())
            except sqlite3.Error as exc:
                # A file locked past the busy timeout may be free again soon
                # (503, sent again later); anything else is the server's own.
                error = UnavailableError if _busy(exc) else InternalError
                raise error(
                    f"SQLite failed to {what}: {clip(f'{type(exc).__name__}: {exc}')}"
                ) from None

        return await asyncio.get_running_loop().run_in_executor(self._thread, step)

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(
                self._path,
                timeout=self._busy_timeout,
                isolation_level=None,  # autocommit; transactions are explicit
                check_same_thread=False,  # made on the store's thread, used only there
            )
            try:
                _enter_wal(connection, self._busy_timeout)
                connection.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints
                # One transaction: processes opening the file at once make one table.
                connection.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;")
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True

        def close() -> None:
            if self._connection is not None:
                self._connection.close()

        await asyncio.get_running_loop().run_in_executor(self._thread, close)
        self._thread.shutdown(wait=True)

    @staticmethod
    def _read(
        db: sqlite3.Connection, task_id: str, principal: str, now: float
    ) -> TaskRecord | None:
        """The task as every reader must see it: a passed lease stored failed
        first (compare-and-set; the loser of a race reads the winner's row)."""
        for _ in range(8):  # each lost race is another writer's progress
            row = db.execute(
                f"SELECT {_COLUMNS} FROM tasks WHERE task_id = :id AND principal = :principal"
                f" AND {_UNEXPIRED}",
                {"id": task_id, "principal": principal, "now": now},
            ).fetchone()
            if row is None:
                return None
            record = _record(row)
            if not record.lease_passed(now):
                return record
            failed = worker_stopped(record, now)
            if db.execute(_WRITE, {**_row(failed), "now": now}).rowcount == 1:
                return failed
        raise InternalError("the task changed too often to be read")

    async def _create(self, record: TaskRecord, now: float) -> TaskRecord:
        def create(db: sqlite3.Connection) -> TaskRecord:
            db.execute("BEGIN IMMEDIATE")
            try:
                self._admit(db, record, now)
                db.execute(
                    f"INSERT INTO tasks ({_COLUMNS}, expires_at) VALUES (:task_id, :principal,"
                    " :status, :created_at, :updated_at, :ttl_ms, :poll_interval_ms,"
                    " :status_message, :outcome, :state, :lease_owner, :lease_until,"
                    " :revision, :expires_at)",
                    _row(record),
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return record

        return await self._run("create a task", create)

    def _admit(self, db: sqlite3.Connection, record: TaskRecord, now: float) -> None:
        """Purge, check the bounds and make room for ``record`` (in the
        creation's transaction); the error that refuses it, if one does."""
        clock = {"now": now}
        db.execute("DELETE FROM tasks WHERE expires_at <= :now", clock)
        if db.execute("SELECT 1 FROM tasks WHERE task_id = ?", (record.task_id,)).fetchone():
            raise ValueError("a task with this id exists")
        if record.live(now) and record.principal:  # the empty one: see TaskStore
            # Tasks whose worker died are failed now, so they stop counting
            # (and this principal's running rows stay near the bound).
            self._fail_dead(db, "principal = :principal AND", {"principal": record.principal}, now)
            (live,) = db.execute(
                f"SELECT COUNT(*) FROM tasks WHERE principal = :principal AND {_RUNNING}"
                f" AND {_UNEXPIRED}",
                {"principal": record.principal, **clock},
            ).fetchone()
            if live >= self.max_live_per_principal:
                raise TaskLimitExceeded(
                    f"this principal has {self.max_live_per_principal} live tasks, the most it may"
                )
        (kept,) = db.execute("SELECT n FROM kept").fetchone()
        if kept >= self.max_tasks:
            self._fail_dead(db, "", {}, now)  # so that they can be dropped too
            db.execute(
                f"DELETE FROM tasks WHERE task_id IN (SELECT task_id FROM tasks"
                f" WHERE NOT {_RUNNING} ORDER BY updated_at LIMIT ?)",
                (kept - self.max_tasks + 1,),
            )
            (kept,) = db.execute("SELECT n FROM kept").fetchone()
            if kept >= self.max_tasks:
                raise TaskLimitExceeded(f"the task store keeps {self.max_tasks} live tasks")

    @staticmethod
    def _fail_dead(db: sqlite3.Connection, where: str, params: dict[str, Any], now: float) -> None:
        """Store failed every task ``where`` says whose lease has passed."""
        clock = {**params, "now": now}
        for row in db.execute(
            f"SELECT {_COLUMNS} FROM tasks WHERE {where} {_RUNNING} AND lease_until <= :now", clock
        ).fetchall():
            db.execute(_WRITE, {**_row(worker_stopped(_record(row), now)), "now": now})

    async def _get(self, task_id: str, principal: str, now: float) -> TaskRecord | None:
        return await self._run("read a task", lambda db: self._read(db, task_id, principal, now))

    async def _update(self, record: TaskRecord, now: float) -> TaskRecord | None:
        def update(db: sqlite3.Connection) -> TaskRecord | None:
            stored = self._read(db, record.task_id, record.principal, now)
            if stored is None or stored.revision != record.revision - 1:
                return None
            check_transition(stored, record)
            # The row may have moved since it was read: the revision decides.
            written = db.execute(_WRITE, {**_row(record), "now": now}).rowcount
            return record if written == 1 else None

        return await self._run("update a task", update)

    async def _renew(
        self, task_id: str, principal: str, owner: str, until: float, now: float
    ) -> bool:
        def renew(db: sqlite3.Connection) -> bool:
            stored = self._read(db, task_id, principal, now)
            if stored is None or stored.status in TERMINAL or stored.lease_owner != owner:
                return False
            return bool(
                db.execute(
                    "UPDATE tasks SET lease_until = :until, revision = revision + 1"
                    " WHERE task_id = :id AND revision = :revision",
                    {"until": until, "id": task_id, "revision": stored.revision},
                ).rowcount
            )

        return await self._run("renew a lease", renew)
