"""`TaskServer`: the Tasks extension served from a `TaskStore`, for any
transport (hand-written runtime module).

A `mcp_schema.session.ServerSession` given ``tasks=TaskServer(store)``
(the session's `mcp_schema.session.extensions.TaskHook`) reads the
extension's methods, gates them (-32021 for a request whose client did not
declare the extension), and lets a handler answer a call with a task
(``session.run_as_task``); it does no I/O. The transport's driver, an
asyncio coroutine, does the rest with this object:

* `TaskServer.serve` answers a ``tasks/get``, ``tasks/update`` or
  ``tasks/cancel`` event from the store (-32602 for a task id unknown,
  expired or another principal's, never told apart);
* `TaskServer.flush` stores the tasks the handler started (each within its
  caller's share of the tasks whose work runs here: at most ``max_live``,
  ``max_live_per_key`` per caller, `mcp_schema.shares`; past it, the call is
  answered -31429, nothing stored), then queues each
  ``CreateTaskResult`` (never before the task is stored: a ``tasks/get``
  right after resolves), and starts each task's work (`mcp_schema.tasks.worker.run`)
  as an asyncio task of the application's event loop, kept here until it
  ends (`TaskServer.aclose` cancels what still runs).

`mcp_schema.http.Endpoint` (``tasks=``) drives both; on stdio, the loop that
feeds the session calls them after each ``receive``. ``on_change`` hears
every record a worker or a request of this process stored (the status
notifications of ``subscriptions/listen`` are sent from it).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeGuard

from pydantic import BaseModel

from mcp_schema._codec.schemas import Target, validator
from mcp_schema._codec.wire import to_wire
from mcp_schema.errors import InternalError, InvalidParamsError, McpError
from mcp_schema.session.events import RequestReceived
from mcp_schema.shares import Share
from mcp_schema.tasks.protocol import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_POLL_INTERVAL_MS,
    DEFAULT_TTL_MS,
    NO_SUCH_TASK,
    TASK_METHODS,
    TASK_SUPPORTED,
    TaskProtocol,
)
from mcp_schema.tasks.store import MemoryTaskStore, TaskRecord, TaskStore, TransitionRefused
from mcp_schema.tasks.traced import link_work, not_started, traced, work_span
from mcp_schema.tasks.worker import TaskContext, lease_owner, run
from mcp_schema.versions import TASKS_EXTENSION, protocol

if TYPE_CHECKING:  # the session takes a TaskServer: at run time it is only called
    from mcp_schema.session.server import ServerSession

__all__ = ["MAX_LIVE", "TaskServer"]

MAX_LIVE = 1000
"""Tasks at work in one process at once, by default (a tenth of them per caller)."""

_MAX_TRIES = 64


class TaskServer(TaskProtocol):
    """The extension's rules (`TaskProtocol`: ``ttl_ms``, ``poll_interval_ms``,
    ``lease_seconds``) over ``store`` (default a `MemoryTaskStore`); at most
    ``max_live`` tasks at work here at once, ``max_live_per_key`` per caller
    (a task waiting for input is at work: its worker waits)."""

    extension = TASKS_EXTENSION
    requests = TASK_METHODS
    supported = TASK_SUPPORTED

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        ttl_ms: int | None = DEFAULT_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        clock: Callable[[], float] = time.time,
        max_live: int = MAX_LIVE,
        max_live_per_key: int | None = None,
    ) -> None:
        super().__init__(
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms,
            lease_seconds=lease_seconds,
            clock=clock,
        )
        if store is not None and not isinstance(store, TaskStore):
            raise TypeError(f"store must be a TaskStore, not {type(store).__name__}")
        self.store: TaskStore = MemoryTaskStore() if store is None else store
        self.on_change: Callable[[TaskRecord], None] | None = None
        """Called with each record this process stores (a worker's or a request's)."""
        self._running: set[asyncio.Task[None]] = set()
        self.share = Share("live tasks", total=max_live, per_key=max_live_per_key)
        """The bound on the tasks at work here, per caller and in all."""

    def set_aside(
        self, value: dict[str, Any], version: str
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A ``tasks/update`` as the session reads it, and the answers set aside.

        The extension ignores answers under keys a task does not ask, whatever
        they hold; only the store knows which keys those are. So the answers
        of a ``tasks/update`` that are no input response at all are set aside
        (the session hands them back: `ServerSession.unread_answers`), the rest
        read as usual, and `serve` refuses any set aside under a key the task
        asks (-32602), ignoring the others."""
        if value.get("method") != "tasks/update":
            return value, {}  # every other request (the session asks of each)
        params = value.get("params")
        if not isinstance(params, dict):
            return value, {}
        responses = params.get("inputResponses")
        if type(responses) is not dict:
            return value, {}
        compiled = protocol(version)
        assert compiled is not None  # the session read the version
        check = validator(Target(compiled.package, "InputResponse"))
        unread = {k: v for k, v in responses.items() if not check.is_valid(v)}
        if not unread:
            return value, {}
        kept = {k: v for k, v in responses.items() if k not in unread}
        return {**value, "params": {**params, "inputResponses": kept}}, unread

    def _changed(self, record: TaskRecord) -> None:
        if self.on_change is not None:
            self.on_change(record)

    @property
    def running(self) -> int:
        """The tasks whose work runs in this process."""
        return len(self._running)

    @staticmethod
    def serves(event: object) -> TypeGuard[RequestReceived]:
        """Whether ``event`` is a ``tasks/*`` request, which `serve` answers:
        asked first, so that any other event costs no coroutine."""
        return isinstance(event, RequestReceived) and event.method in TASK_METHODS

    async def serve(self, session: ServerSession, event: object) -> bool:
        """Answer ``event`` when it is a ``tasks/*`` request (then True)."""
        if not self.serves(event):
            return False
        try:
            answer = await self._answer(session, event)
        except McpError as err:
            session.fail(event, err)
        else:
            session.respond(event, answer)
        return True

    async def _answer(self, session: ServerSession, event: RequestReceived) -> dict[str, Any]:
        params = getattr(event.message, "params", None)
        task_id = getattr(params, "task_id", None)
        principal = session.principal or ""
        for attempt in range(_MAX_TRIES):
            record = (
                None if not isinstance(task_id, str) else await self.store.get(task_id, principal)
            )
            if record is None:
                raise InvalidParamsError(NO_SUCH_TASK)
            if attempt == 0 and event.method != "tasks/cancel":
                link_work(session, event, record)  # its span to the work's
            if event.method == "tasks/get":
                return self.detailed(record)
            if event.method == "tasks/update":
                compiled = protocol(event.version)
                assert compiled is not None  # the session read the request in it
                assert isinstance(params, BaseModel)  # the codec read a tasks/update
                responses = to_wire(params).get("inputResponses", {})
                unread = session.unread_answers(event)
                new = self.updated(record, {**unread, **responses}, compiled.package)
            else:
                new = self.cancelled(record)
            if new is None:
                return {}
            try:
                stored = await self.store.update(new, revision=record.revision)
            except TransitionRefused:
                continue  # it moved on meanwhile: read it again
            if stored is not None:
                self._changed(stored)
                return {}
        raise InternalError("the task changed too often to be updated")

    async def flush(
        self, session: ServerSession, key: str | None = None
    ) -> list[asyncio.Task[None]]:
        """Store the tasks ``session``'s handler started for the caller of
        ``key`` (`mcp_schema.http.caller.Caller.key`; None: not told apart),
        answer each call with its ``CreateTaskResult`` (or the refusal: -31429
        past the caller's share, -32603 past the store's bound on live tasks;
        nothing stored), and start their work; the asyncio tasks started."""
        started: list[asyncio.Task[None]] = []
        for pending in session.pending_tasks():
            if not self.share.acquire(key):
                session.fail(pending.request, self.share.refused(key))
                continue
            until = self.clock() + self.lease_seconds
            record, span = work_span(session, pending)  # before the answer ends the call's span
            leased = TaskRecord(
                **{**record.__dict__, "lease_owner": lease_owner(), "lease_until": until}
            )
            try:
                created = await self.store.create(leased)
            except (McpError, ValueError) as err:
                self.share.release(key)
                not_started(span)
                unstored = InternalError("the task could not be stored")
                error = err if isinstance(err, McpError) else unstored
                session.fail(pending.request, error)
                continue
            except BaseException:
                self.share.release(key)
                not_started(span)
                raise
            session.respond(pending.request, self.created(created))
            self._changed(created)
            context = TaskContext(
                self.store,
                self,
                created,
                pending.request.message,
                pending.request.version,
                published=self._changed,
            )
            task = asyncio.ensure_future(traced(span, run(context, pending.work), context))
            self._running.add(task)
            task.add_done_callback(functools.partial(self._ended, key))
            started.append(task)
        return started

    def _ended(self, key: str | None, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self.share.release(key)

    async def stop(self) -> None:
        """Cancel the work still running here (a replica shutting down): the
        store reports each of its tasks failed once its lease passes."""
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def aclose(self) -> None:
        """`stop`, then close the store."""
        await self.stop()
        await self.store.aclose()
