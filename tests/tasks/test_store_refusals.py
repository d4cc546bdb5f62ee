"""Hostile input to the task stores: forged ids of any length, records the
store cannot keep. Each ends in a typed error or an answer of "unknown", in
time that does not grow with the input, and nothing is stored."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_schema.tasks.store import MAX_ID, MAX_PRINCIPAL, MAX_TTL_MS
from tests.http.test_broker import redis_url  # noqa: F401  # the redis-server stores needs
from tests.tasks.test_store import Stores, run, stores, task  # noqa: F401

HUGE = "x" * 10_000_000


@pytest.mark.parametrize(
    ("task_id", "principal"),
    [
        (HUGE, "alice"),
        ("t1", HUGE),
        ("x" * (MAX_ID + 1), "alice"),
        ("", "alice"),
        ("t1\ud800", "alice"),
        ("t1", "alice\udfff"),
        ("t1\x00", "alice"),
    ],
)
def test_a_forged_id_or_principal_is_an_unknown_task(
    stores: Stores,  # noqa: F811
    task_id: str,
    principal: str,
) -> None:
    async def body() -> None:
        async with stores() as (clock, (store,)):
            created = await store.create(task(clock))
            started = time.perf_counter()
            assert await store.get(task_id, principal) is None
            assert not await store.renew(task_id, principal, "w", clock.now + 10)
            assert time.perf_counter() - started < 1.0  # never a scan of the input
            assert await store.get("t1", "alice") == created

    run(body)


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"task_id": "x" * (MAX_ID + 1)}, ValueError),
        ({"task_id": HUGE}, ValueError),
        ({"task_id": ""}, ValueError),
        ({"task_id": "\ud800"}, ValueError),
        ({"task_id": 1}, TypeError),
        ({"principal": "p" * (MAX_PRINCIPAL + 1)}, ValueError),
        ({"principal": None}, TypeError),
        ({"status": "done"}, ValueError),
        ({"status": ["working"]}, TypeError),
        ({"created_at": float("nan")}, ValueError),
        ({"created_at": True}, ValueError),
        ({"updated_at": "now"}, ValueError),
        ({"ttl_ms": 0}, ValueError),
        ({"ttl_ms": -1}, ValueError),
        ({"ttl_ms": MAX_TTL_MS + 1}, ValueError),
        ({"ttl_ms": 1.5}, ValueError),
        ({"ttl_ms": True}, ValueError),
        ({"poll_interval_ms": -1}, ValueError),
        ({"poll_interval_ms": 10**30}, ValueError),
        ({"status_message": "\ud800"}, ValueError),
        ({"status_message": b"bytes"}, TypeError),
        ({"outcome": "{}"}, TypeError),
        ({"state": "{}"}, TypeError),
        ({"state": bytearray(b"{}")}, TypeError),
        ({"state": b"x" * ((1 << 20) + 1)}, ValueError),
        ({"status_message": "\u2603" * 400_000}, ValueError),  # 1.2 MB of UTF-8
        ({"lease_owner": ""}, ValueError),
        ({"lease_owner": HUGE}, ValueError),
        ({"lease_until": float("inf")}, ValueError),
    ],
)
def test_a_record_the_store_cannot_keep_is_refused(
    stores: Stores,  # noqa: F811
    fields: dict[str, Any],
    error: type[Exception],
) -> None:
    async def body() -> None:
        async with stores() as (clock, (store,)):
            bad = task(clock, **{"task_id": "t2", **fields})
            with pytest.raises(error):
                await store.create(bad)
            assert await store.get("t2", "alice") is None  # nothing stored
            created = await store.create(task(clock))
            with pytest.raises(error):
                await store.update(task(clock, **{"task_id": "t1", **fields}), revision=1)
            assert await store.get("t1", "alice") == created

    run(body)


def test_bad_calls_are_refused_and_change_nothing(
    stores: Stores,  # noqa: F811
) -> None:
    async def body() -> None:
        async with stores() as (clock, (store,)):
            created = await store.create(task(clock, lease_owner="w", lease_until=clock.now + 5))
            calls: list[tuple[Any, type[Exception]]] = [
                (lambda s: s.create({"task_id": "t2"}), TypeError),
                (lambda s: s.update(created, revision=True), TypeError),
                (lambda s: s.update(created, revision="1"), TypeError),
                (lambda s: s.get(b"t1", "alice"), TypeError),
                (lambda s: s.renew("t1", "alice", "", clock.now + 10), ValueError),
                (lambda s: s.renew("t1", "alice", HUGE, clock.now + 10), ValueError),
                (lambda s: s.renew("t1", "alice", "w", float("nan")), ValueError),
            ]
            for call, error in calls:
                with pytest.raises(error):
                    await call(store)
            assert await store.get("t1", "alice") == created

    run(body)


@pytest.mark.parametrize(
    "limit", [{"max_record": 0}, {"max_tasks": -1}, {"max_live_per_principal": True}]
)
def test_limits_are_checked(
    stores: Stores,  # noqa: F811
    limit: dict[str, Any],
) -> None:
    async def body() -> None:
        with pytest.raises(ValueError):
            async with stores(**limit):
                pass

    run(body)
