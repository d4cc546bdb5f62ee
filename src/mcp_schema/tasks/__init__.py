"""The Tasks extension (``io.modelcontextprotocol/tasks``): long-running calls
as tasks, their records in a `TaskStore` every replica can read.

* `TaskProtocol` (sans-IO): the extension's rules, a record on the wire and
  what each request makes of it; `TaskServer`: those rules over a store,
  serving ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` and storing the
  tasks a handler starts (``ServerSession.run_as_task``).
* `TaskContext`: what a task's work gets (`TaskContext.report`,
  `TaskContext.ask`); the work runs under a lease its worker renews.
* The stores: `MemoryTaskStore` (default), and those of the sibling modules.

See ``docs/guide/tasks.md``.
"""

from mcp_schema.tasks.protocol import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_POLL_INTERVAL_MS,
    DEFAULT_TTL_MS,
    TASK_METHODS,
    TASK_SUPPORTED,
    TaskProtocol,
    declares_tasks,
    missing_tasks,
)
from mcp_schema.tasks.server import TaskServer
from mcp_schema.tasks.store import (
    ALLOWED,
    TERMINAL,
    MemoryTaskStore,
    TaskLimitExceeded,
    TaskRecord,
    TaskStatus,
    TaskStore,
    TransitionRefused,
)
from mcp_schema.tasks.worker import TaskContext, TaskOver, Work

__all__ = [
    "ALLOWED",
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_POLL_INTERVAL_MS",
    "DEFAULT_TTL_MS",
    "TASK_METHODS",
    "TASK_SUPPORTED",
    "TERMINAL",
    "MemoryTaskStore",
    "TaskContext",
    "TaskLimitExceeded",
    "TaskOver",
    "TaskProtocol",
    "TaskRecord",
    "TaskServer",
    "TaskStatus",
    "TaskStore",
    "TransitionRefused",
    "Work",
    "declares_tasks",
    "missing_tasks",
]
