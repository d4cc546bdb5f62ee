"""What only the SQLite task store does: opening one new file that another
process is writing at the same moment."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from mcp_schema.errors import UnavailableError
from mcp_schema.tasks.record import TaskRecord
from mcp_schema.tasks.sqlite_store import SqliteTaskStore

RECORD = TaskRecord(
    task_id="t1", principal="alice", status="working", created_at=1.0, updated_at=1.0, ttl_ms=None
)


def test_the_first_call_waits_for_a_writer_that_holds_the_new_file(tmp_path: Path) -> None:
    # Another process's write transaction on a file still in rollback mode:
    # SQLite refuses the switch to WAL at once, without its busy handler.
    path = tmp_path / "tasks.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE other (a)")
    released = threading.Timer(0.2, writer.execute, ("COMMIT",))
    released.start()

    async def create() -> tuple[TaskRecord, TaskRecord | None]:
        async with SqliteTaskStore(path, busy_timeout=5.0, clock=lambda: 1.0) as store:
            return await store.create(RECORD), await store.get("t1", "alice")

    try:
        created, read = asyncio.run(asyncio.wait_for(create(), 10))
        assert created == read
        assert (created.task_id, created.status) == ("t1", "working")
    finally:
        released.join(5)
        writer.close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_file_locked_past_the_busy_timeout_is_unavailable_and_nothing_changed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")

    async def create_twice() -> TaskRecord | None:
        async with SqliteTaskStore(path, busy_timeout=0.1, clock=lambda: 1.0) as store:
            writer.execute("BEGIN IMMEDIATE")
            with pytest.raises(UnavailableError, match="locked"):
                await store.create(RECORD)
            writer.execute("ROLLBACK")
            assert await store.get("t1", "alice") is None
            await store.create(RECORD)
            return await store.get("t1", "alice")

    try:
        kept = asyncio.run(asyncio.wait_for(create_twice(), 10))
    finally:
        writer.close()
    assert kept is not None and kept.task_id == "t1"
