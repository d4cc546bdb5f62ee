"""The Tasks extension's protocol, sans-IO: what a stored `TaskRecord` means
on the wire, and what each request makes of it (hand-written runtime module).

The rules are the extension's specification page (2026-07-28; in the
specification repository, ``docs/ext-tasks/specification/2026-07-28/tasks.md``).
Nothing here reads or writes a store, a clock aside: `TaskProtocol` turns a
call into a new record (`TaskProtocol.new`), a record into the
``CreateTaskResult`` answering the call (`TaskProtocol.created`) and into
the ``DetailedTask`` of ``tasks/get`` and ``notifications/tasks``
(`TaskProtocol.detailed`), and a record plus a ``tasks/update`` or
``tasks/cancel`` into the record to store next (`TaskProtocol.updated`,
`TaskProtocol.cancelled`). `mcp_schema.tasks.server.TaskServer` does the
storing; `mcp_schema.session.ServerSession` uses this for ``run_as_task``.

What the protocol keeps in a record's ``state`` (JSON, opaque to the store):
the method and version of the call, the input requests outstanding
(``asked``, key -> ``{"method", "params"}``), the answers given and not yet
taken by the worker (``answers``), every key ever asked (``keys``: a key is
never asked twice in a task's life), the input methods the client
declared on the call (``askable``), and, when its work is traced, the
context of the work's span (``trace``, `mcp_schema.tasks.traced`).
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import time
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel

from mcp_schema._codec.wire import to_wire
from mcp_schema.errors import (
    InvalidParamsError,
    McpError,
    MissingRequiredClientCapabilityError,
    quote,
)
from mcp_schema.rounds import answered_inputs
from mcp_schema.session.extensions import declares_extension, missing_extension
from mcp_schema.tasks.store import MAX_TTL_MS, TERMINAL, TaskRecord, TaskStatus
from mcp_schema.versions import TASKS_EXTENSION, extensions_of

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_POLL_INTERVAL_MS",
    "DEFAULT_TTL_MS",
    "NO_SUCH_TASK",
    "TASK_METHODS",
    "TASK_SUPPORTED",
    "TaskProtocol",
    "declares_tasks",
    "missing_tasks",
    "read_state",
]

TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
"""The extension's requests, answered from the store."""

TASK_SUPPORTED = frozenset({"tools/call"})
"""The requests the extension lets a server answer with a task."""

DEFAULT_TTL_MS = 3_600_000
"""How long a task is kept by default (an hour from its creation)."""

DEFAULT_POLL_INTERVAL_MS = 1_000
"""The polling interval suggested by default."""

DEFAULT_LEASE_SECONDS = 30.0
"""How long a worker's lease lasts between two heartbeats, by default."""

NO_SUCH_TASK = "Failed to retrieve task: Task not found"
"""The one message of an unknown, expired or foreign task id: never told apart."""


def declares_tasks(capabilities: BaseModel | Mapping[str, Any] | None) -> bool:
    """Whether ``capabilities`` (a request's ``ClientCapabilities``, model or
    wire mapping) declare the Tasks extension."""
    return declares_extension(capabilities, TASKS_EXTENSION)


def missing_tasks(what: str) -> MissingRequiredClientCapabilityError:
    """The extension's -32021 for ``what`` (a method, a tool) asked by a client
    that did not declare the extension."""
    return missing_extension(what, TASKS_EXTENSION)


def has_tasks(version: str) -> bool:
    """Whether ``version`` has the extension compiled (2026-07-28 on)."""
    return TASKS_EXTENSION in extensions_of(version)


def _iso(when: float) -> str:
    moment = datetime.fromtimestamp(when, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def read_state(record: TaskRecord) -> dict[str, Any]:
    """The protocol's state of ``record`` (what this module wrote)."""
    state = json.loads(record.state)
    assert isinstance(state, dict)  # written by `_json` of a dict only
    return state


def with_state(record: TaskRecord, state: Mapping[str, Any], **changes: Any) -> TaskRecord:
    """``record`` with ``state`` and ``changes``: the record to store next."""
    return dataclasses.replace(record, state=_json(dict(state)), **changes)


def _milliseconds(value: object, what: str, *, none: bool) -> None:
    if value is None and none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TTL_MS:
        raise ValueError(f"{what} must be an integer from 1 to {MAX_TTL_MS}, not {value!r}")


class TaskProtocol:
    """The extension's rules for one server (see the module).

    * ``ttl_ms``: how long a task is kept from its creation (None: until the
      store's bound drops it); ``poll_interval_ms``: the interval suggested
      to clients; both the defaults of `new`.
    * ``lease_seconds``: how long a worker's lease lasts between heartbeats.
    """

    def __init__(
        self,
        *,
        ttl_ms: int | None = DEFAULT_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        _milliseconds(ttl_ms, "ttl_ms", none=True)
        _milliseconds(poll_interval_ms, "poll_interval_ms", none=False)
        if isinstance(lease_seconds, bool) or not isinstance(lease_seconds, (int, float)):
            raise TypeError("lease_seconds must be a number")
        if not 0 < lease_seconds <= 86_400:
            raise ValueError(f"lease_seconds must be positive (a day at most), not {lease_seconds}")
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.lease_seconds = float(lease_seconds)
        self.clock = clock

    # -- a new task -----------------------------------------------------------------------

    def new(
        self,
        method: str,
        version: str,
        principal: str,
        *,
        askable: Collection[str] = (),
        ttl_ms: int | Literal["default"] | None = "default",
        poll_interval_ms: int | None = None,
        status_message: str | None = None,
    ) -> TaskRecord:
        """A new ``working`` task for a call of ``method`` in ``version`` by
        ``principal``, with an unguessable id; ``askable``: the input methods
        the client declared on the call (what the worker may ask)."""
        if method not in TASK_SUPPORTED:
            raise ValueError(f"the extension runs no {method!r} as a task")
        ttl = self.ttl_ms if ttl_ms == "default" else ttl_ms
        _milliseconds(ttl, "ttl_ms", none=True)
        assert not isinstance(ttl, str)  # checked just above
        poll = self.poll_interval_ms if poll_interval_ms is None else poll_interval_ms
        _milliseconds(poll, "poll_interval_ms", none=False)
        now = self.clock()
        state = {
            "method": method,
            "version": version,
            "asked": {},
            "answers": {},
            "keys": [],
            "askable": sorted(askable),
        }
        return TaskRecord(
            task_id=secrets.token_urlsafe(16),
            principal=principal,
            status="working",
            created_at=now,
            updated_at=now,
            ttl_ms=ttl,
            poll_interval_ms=poll,
            status_message=status_message,
            state=_json(state),
        )

    # -- the wire -------------------------------------------------------------------------

    def _task(self, record: TaskRecord) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "taskId": record.task_id,
            "status": record.status,
            "createdAt": _iso(record.created_at),
            "lastUpdatedAt": _iso(record.updated_at),
            "ttlMs": record.ttl_ms,
        }
        if record.status_message is not None:
            wire["statusMessage"] = record.status_message
        if record.poll_interval_ms is not None:
            wire["pollIntervalMs"] = record.poll_interval_ms
        return wire

    def created(self, record: TaskRecord) -> dict[str, Any]:
        """The ``CreateTaskResult`` answering the call ``record`` runs."""
        return {"resultType": "task", **self._task(record)}

    def detailed(self, record: TaskRecord) -> dict[str, Any]:
        """The ``DetailedTask`` of ``record``: its result (completed), its
        error (failed), its outstanding input requests (input_required)."""
        wire = self._task(record)
        if record.status == "input_required":
            wire["inputRequests"] = read_state(record)["asked"]
        elif record.status in ("completed", "failed") and record.outcome is not None:
            wire["result" if record.status == "completed" else "error"] = json.loads(record.outcome)
        return wire

    # -- what a request makes of a task ---------------------------------------------------

    def updated(
        self, record: TaskRecord, responses: Mapping[str, Any], package: str
    ) -> TaskRecord | None:
        """``record`` with the answers of a ``tasks/update`` kept: each answer
        under an outstanding key read as a result of the method asked under
        it (in the models ``package``), -32602 naming the key otherwise, and
        nothing changed; keys not outstanding are ignored. The task is
        ``working`` again once nothing is outstanding. None: nothing to store
        (no outstanding key answered, or the task is over)."""
        if record.status in TERMINAL:
            return None
        state = read_state(record)
        asked: dict[str, Any] = state["asked"]
        outstanding = {k: q["method"] for k, q in asked.items() if k in responses}
        if not outstanding:
            return None
        for key in outstanding:
            if not isinstance(responses[key], Mapping):  # no result of any method
                where = f"$.params.inputResponses[{quote(key)}]"
                raise InvalidParamsError(
                    f"Invalid params: {where}: not an object",
                    {"errors": [{"path": where, "reason": "not an object"}]},
                )
        answers, _ = answered_inputs(responses, outstanding, package)
        state["answers"] = {**state["answers"], **{k: to_wire(a) for k, a in answers.items()}}
        state["asked"] = {k: q for k, q in asked.items() if k not in answers}
        status: TaskStatus = "input_required" if state["asked"] else "working"
        return with_state(record, state, status=status)

    def cancelled(self, record: TaskRecord) -> TaskRecord | None:
        """``record`` cancelled, or None when it is over already (the
        acknowledgement is the same: cancellation is the server's to honor)."""
        if record.status in TERMINAL:
            return None
        state = read_state(record)
        state["asked"] = {}
        return with_state(record, state, status="cancelled", lease_owner=None, lease_until=None)

    # -- what the worker makes of it -------------------------------------------------------

    def asking(
        self, record: TaskRecord, asks: Mapping[str, tuple[str, dict[str, Any]]]
    ) -> TaskRecord:
        """``record`` waiting for ``asks`` (key -> (method, params)): a key is
        asked once in a task's life (``ValueError`` for one asked before), and
        only a method the client declared on the call."""
        state = read_state(record)
        used = set(state["keys"])
        again = sorted(k for k in asks if k in used)
        if again:
            raise ValueError(f"a task asks each key once in its life: {again} asked before")
        undeclared = sorted({m for m, _ in asks.values()} - set(state["askable"]))
        if undeclared:
            raise ValueError(f"the client did not declare what {undeclared} need")
        state["keys"] = [*state["keys"], *asks]
        state["asked"] = {
            **state["asked"],
            **{k: {"method": m, "params": p} for k, (m, p) in asks.items()},
        }
        return with_state(record, state, status="input_required")

    def taken(self, record: TaskRecord, keys: Collection[str]) -> TaskRecord:
        """``record`` without the answers under ``keys`` (the worker has them)."""
        state = read_state(record)
        state["answers"] = {k: a for k, a in state["answers"].items() if k not in keys}
        return with_state(record, state)

    def finished(
        self,
        record: TaskRecord,
        *,
        result: Mapping[str, Any] | None = None,
        error: McpError | None = None,
        status_message: str | None = None,
    ) -> TaskRecord:
        """``record`` completed with ``result`` (a wire result of its method;
        the last status message kept) or failed with ``error`` (its message
        the status message)."""
        state = read_state(record)
        state["asked"], state["answers"] = {}, {}
        if error is not None:
            outcome = _json(error.to_error_object())
            status: TaskStatus = "failed"
            message: str | None = error.message if status_message is None else status_message
        else:
            assert result is not None
            outcome, status = _json(dict(result)), "completed"
            message = record.status_message if status_message is None else status_message
        return with_state(
            record,
            state,
            status=status,
            outcome=outcome,
            status_message=message,
            lease_owner=None,
            lease_until=None,
        )


def task_id_of(params: object) -> str:
    """The ``taskId`` of a tasks/* request's params (the codec checked it is a string)."""
    found = getattr(params, "task_id", None)
    if not isinstance(found, str):
        raise InvalidParamsError(NO_SUCH_TASK)
    return found
