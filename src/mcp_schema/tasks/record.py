"""What a task is, in every store: its `TaskRecord`, its statuses and the
extension's state diagram (`ALLOWED`), the bounds every store keeps, and the
errors of a refused write (hand-written runtime module; the stores are
`mcp_schema.tasks.store`, which re-exports these)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, get_args

from mcp_schema.errors import InternalError

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
    "WORKER_STOPPED_OUTCOME",
    "TaskLimitExceeded",
    "TaskRecord",
    "TaskStatus",
    "TransitionRefused",
    "check_transition",
    "worker_stopped",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
STATUSES: frozenset[TaskStatus] = frozenset(get_args(TaskStatus))
TERMINAL: frozenset[TaskStatus] = frozenset({"completed", "failed", "cancelled"})
ALLOWED: Mapping[TaskStatus, frozenset[TaskStatus]] = MappingProxyType(
    {
        "working": STATUSES,
        "input_required": STATUSES,
        "completed": frozenset(),
        "failed": frozenset(),
        "cancelled": frozenset(),
    }
)
"""The extension's state diagram: working <-> input_required, either to a
terminal status, each non-terminal one also to itself; a terminal one to nothing."""

MAX_ID = 512
"""Longest task id and lease owner, in characters."""

MAX_PRINCIPAL = 1024
"""Longest principal, in characters."""

MAX_TTL_MS = 366 * 86400 * 1000
"""Longest ``ttl_ms`` and ``poll_interval_ms`` (a year)."""

DEFAULT_MAX_LIVE_PER_PRINCIPAL = 100
DEFAULT_MAX_RECORD = 1 << 20
DEFAULT_MAX_TASKS = 100_000

WORKER_STOPPED = "the worker running this task stopped before it finished (its lease expired)"
"""The status message of a task whose lease passed."""

WORKER_STOPPED_OUTCOME = json.dumps(
    {"code": InternalError.code, "message": WORKER_STOPPED}, separators=(",", ":")
).encode("utf-8")
"""Its outcome: the JSON-RPC error object of the failure."""


@dataclass(frozen=True)
class TaskRecord:
    """One task as the store keeps it (see the module)."""

    task_id: str
    principal: str
    status: TaskStatus
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    outcome: bytes | None = None
    state: bytes = b"{}"
    lease_owner: str | None = None
    lease_until: float | None = None
    revision: int = 0

    @property
    def expires_at(self) -> float:
        """When it is gone (epoch seconds; ``inf`` with no ttl)."""
        return math.inf if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def size(self) -> int:
        """The bytes `TaskStore.max_record` bounds."""
        message = 0 if self.status_message is None else len(self.status_message.encode("utf-8"))
        return len(self.state) + len(self.outcome or b"") + message

    def lease_passed(self, now: float) -> bool:
        """Not terminal, and its worker's lease has run out."""
        return (
            self.status not in TERMINAL and self.lease_until is not None and self.lease_until <= now
        )

    def live(self, now: float) -> bool:
        """What the bounds on live tasks count: not terminal, not expired, lease not passed."""
        return self.status not in TERMINAL and now < self.expires_at and not self.lease_passed(now)


class TaskLimitExceeded(InternalError):
    """-32603: a principal has its ``max_live_per_principal`` live tasks, or
    the store keeps ``max_tasks`` live ones; nothing stored."""


class TransitionRefused(ValueError):
    """A status change `ALLOWED` does not have (a terminal task's included); nothing stored."""


def worker_stopped(record: TaskRecord, now: float) -> TaskRecord:
    """``record`` (its lease passed) as it is stored failed: one revision on."""
    return dataclasses.replace(
        record,
        status="failed",
        status_message=WORKER_STOPPED,
        outcome=WORKER_STOPPED_OUTCOME,
        updated_at=now,
        revision=record.revision + 1,
    )


def check_transition(stored: TaskRecord, record: TaskRecord) -> None:
    """`TransitionRefused` unless ``stored`` may become ``record``; a
    ``ValueError`` for a change of what never changes (``created_at``)."""
    if record.status not in ALLOWED[stored.status]:
        raise TransitionRefused(f"a task {stored.status} cannot become {record.status}")
    if record.created_at != stored.created_at:
        raise ValueError("created_at never changes")
