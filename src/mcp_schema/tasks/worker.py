"""The work of one task, where the application runs it: `TaskContext`, what
the work gets, and `run`, which runs it under a lease kept in the store
(hand-written runtime module).

The lease is the task's heartbeat: `run` renews it every third of
``lease_seconds``; a worker whose process dies stops renewing, and every
replica then reads the task as ``failed`` (the store's rule). A renewal
refused (the task was cancelled, or is gone) stops the work: its asyncio task
is cancelled; a renewal the store fails to answer is tried again at the next
beat, until the lease held has passed. Every write is a compare-and-set on
the record's revision, retried on a fresh read, so a worker and a
``tasks/update`` or ``tasks/cancel`` served by another replica never
overwrite one another.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel

from mcp_schema._codec.encoding import encode
from mcp_schema._codec.wire import to_wire
from mcp_schema.base import McpModel
from mcp_schema.codec import decode_dict
from mcp_schema.errors import InternalError, McpError
from mcp_schema.rounds import answered_inputs, input_required
from mcp_schema.tasks.protocol import TaskProtocol, read_state
from mcp_schema.tasks.store import TERMINAL, TaskRecord, TaskStore, TransitionRefused
from mcp_schema.versions import protocol

__all__ = ["TaskContext", "TaskOver", "Work", "run"]

_LOG = logging.getLogger("mcp_schema.tasks")
_MAX_TRIES = 64
"""Compare-and-set attempts of one write before it gives up (a task written
that often meanwhile is being fought over)."""


class TaskOver(Exception):
    """The task ended while its work ran (cancelled, expired, or its lease
    lost): the work stops, and nothing more is written."""


class TaskContext:
    """What a task's work gets: the call it runs (``request``: the request
    model, ``arguments`` of a ``tools/call``), and the task's record, which it
    changes only through `report` (a status message) and `ask` (input from
    the client, answered by ``tasks/update``)."""

    def __init__(
        self,
        store: TaskStore,
        rules: TaskProtocol,
        record: TaskRecord,
        request: McpModel,
        version: str,
        *,
        published: Callable[[TaskRecord], None] = lambda _: None,
    ) -> None:
        self.store, self.rules, self.record = store, rules, record
        self.request, self.version = request, version
        self._published = published

    @property
    def task_id(self) -> str:
        return self.record.task_id

    @property
    def arguments(self) -> dict[str, Any]:
        """The ``arguments`` of the ``tools/call`` the task runs."""
        params = to_wire(self.request).get("params", {})
        found = params.get("arguments") if isinstance(params, dict) else None
        return found if isinstance(found, dict) else {}

    def can_ask(self, method: str) -> bool:
        """Whether the client declared, on the call, what ``method``
        (``elicitation/create``, ``sampling/createMessage``...) needs, so
        `ask` may ask it."""
        return method in read_state(self.record)["askable"]

    async def _write(self, change: Callable[[TaskRecord], TaskRecord | None]) -> TaskRecord:
        """Store ``change`` of the current record, by compare-and-set, retried
        on a fresh read; `TaskOver` when the task is over or gone."""
        record = self.record
        for _ in range(_MAX_TRIES):
            if record.status in TERMINAL:
                raise TaskOver(f"the task is {record.status}")
            new = change(record)
            if new is None:
                return record
            try:
                stored = await self.store.update(new, revision=record.revision)
            except TransitionRefused:
                stored = None
            if stored is not None:
                self.record = stored
                self._published(stored)
                return stored
            fresh = await self.store.get(record.task_id, record.principal)
            if fresh is None:
                raise TaskOver("the task is gone (expired)")
            record = self.record = fresh
        raise TaskOver("the task changed too often to be written")

    async def report(self, message: str) -> None:
        """Set the task's ``statusMessage`` (the extension's way to tell progress)."""
        if not isinstance(message, str):
            raise TypeError(f"message must be a string, not {type(message).__name__}")
        await self._write(lambda r: _replace(r, status_message=message))

    async def ask(
        self, asks: Mapping[str, BaseModel | Mapping[str, Any]], *, message: str | None = None
    ) -> dict[str, McpModel]:
        """Ask the client for input (``asks``: key -> input request, as
        ``ServerSession.ask`` takes them): the task is ``input_required``
        until ``tasks/update`` answers every key; the answers, keyed alike,
        each a result model of the method asked. A key is asked once in a
        task's life; only methods the client declared on the call."""
        asked: dict[str, tuple[str, dict[str, Any]]] = {}
        for key, ask in asks.items():
            wire = to_wire(ask) if isinstance(ask, BaseModel) else dict(ask)
            asked[key] = (wire.get("method"), wire.get("params", {}))  # type: ignore[assignment]
        self._checked_asks(asked)

        def asking(record: TaskRecord) -> TaskRecord:
            new = self.rules.asking(record, asked)
            return new if message is None else _replace(new, status_message=message)

        await self._write(asking)
        wait = max(0.05, min(1.0, (self.record.poll_interval_ms or 1000) / 1000))
        while True:
            answers = read_state(self.record)["answers"]
            if all(key in answers for key in asked):
                break
            await asyncio.sleep(wait)
            fresh = await self.store.get(self.record.task_id, self.record.principal)
            if fresh is None or fresh.status in TERMINAL:
                raise TaskOver("the task ended while it waited for input")
            self.record = fresh
        got = {key: answers[key] for key in asked}
        await self._write(lambda r: self.rules.taken(r, got))
        compiled = protocol(self.version)
        assert compiled is not None  # the call was read in it
        methods = {key: method for key, (method, _) in asked.items()}
        models, _ = answered_inputs(got, methods, compiled.package)
        return models

    def _checked_asks(self, asked: Mapping[str, tuple[str, dict[str, Any]]]) -> None:
        """``ValueError`` unless ``asked`` are input requests of the task's version."""
        if not asked:
            raise ValueError("asks must name at least one input request")
        for key, (method, params) in asked.items():
            if (
                not isinstance(key, str)
                or not isinstance(method, str)
                or not isinstance(params, dict)
            ):
                raise ValueError(f"asks[{key!r}] is no input request with params")
        wire = {
            key: {"method": method, "params": params} for key, (method, params) in asked.items()
        }
        input_required(self.version, wire)  # what the client will read under inputRequests

    async def _finish(
        self, result: BaseModel | Mapping[str, Any] | None, error: McpError | None
    ) -> None:
        wire: dict[str, Any] | None = None
        if error is None:
            wire = to_wire(result) if isinstance(result, BaseModel) else dict(result or {})
            wire.setdefault("resultType", "complete")
            method = read_state(self.record)["method"]
            value = {"jsonrpc": "2.0", "id": 0, "result": wire}
            try:
                decode_dict(encode(value), version=self.version, method=method)
            except (McpError, ValueError) as exc:
                _LOG.error("task %s: not a valid %s result: %s", self.task_id, method, exc)
                wire, error = (
                    None,
                    InternalError(f"the task's result is not a valid {method} result"),
                )
        try:
            await self._write(lambda r: self.rules.finished(r, result=wire, error=error))
        except ValueError as exc:  # the store's bound: the result is too large to keep
            _LOG.error("task %s: %s", self.task_id, exc)
            refused = InternalError("the task's result is too large to keep")
            await self._write(lambda r: self.rules.finished(r, error=refused))


def _replace(record: TaskRecord, **changes: Any) -> TaskRecord:
    return dataclasses.replace(record, **changes)


Work = Callable[[TaskContext], Awaitable[BaseModel | Mapping[str, Any]]]
"""A task's work: given its `TaskContext`, the result of the call (a model
or wire mapping); an `McpError` raised fails the task with it."""


def lease_owner() -> str:
    """A fresh worker name (the lease's owner)."""
    return secrets.token_urlsafe(12)


async def run(context: TaskContext, work: Work) -> None:
    """Run ``work`` for the task of ``context`` (created with a lease this
    worker owns) to its end, renewing the lease meanwhile: its result
    completes the task, an `McpError` it raises fails it (any other
    exception fails it with -32603, logged); the task ended elsewhere
    (cancelled) stops it."""
    record = context.record
    owner = record.lease_owner
    assert owner is not None, "a task runs under a lease"
    current = asyncio.current_task()
    lease = context.rules.lease_seconds
    lost = False

    async def heartbeat() -> None:
        nonlocal lost
        held = record.lease_until if record.lease_until is not None else context.rules.clock()
        while True:
            await asyncio.sleep(lease / 3)
            now = context.rules.clock()
            try:
                renewed = await context.store.renew(
                    record.task_id, record.principal, owner, now + lease
                )
            except McpError as err:
                # The store did not answer (Redis frozen, a file locked): the
                # lease still held is kept, and the next beat tries again.
                _LOG.warning("task %s: the lease was not renewed: %s", record.task_id, err)
                renewed = now < held
            else:
                held = now + lease if renewed else held
            if not renewed:  # refused, or passed: every replica reads the task failed
                lost = True
                if current is not None:
                    current.cancel()
                return

    beat = asyncio.ensure_future(heartbeat())
    try:
        try:
            result = await work(context)
        except McpError as err:
            await context._finish(None, err)
        except (TaskOver, asyncio.CancelledError):
            if not lost:
                raise
        except Exception:
            _LOG.exception("task %s failed", record.task_id)
            await context._finish(None, InternalError("the task failed"))
        else:
            await context._finish(result, None)
    except TaskOver:
        pass  # ended elsewhere: nothing more to write
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
