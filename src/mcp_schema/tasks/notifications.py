"""Task status notifications (``notifications/tasks``) on
``subscriptions/listen``: who may ask for them, and what sends them
(hand-written runtime module).

The rules are the extension's "Task Status Notifications" section (in the
specification repository, ``docs/ext-tasks/specification/2026-07-28/tasks.md``):

* A listen's filter names tasks in ``taskIds``; a client that did not
  declare the extension on the listen request is answered -32021, nothing
  opened (`open_listen`), by a server that sends task status (a server
  without the extension ignores the member, as any it does not know).
* The acknowledgement repeats the ids asked, whether or not they name a
  task: an unknown id and another principal's are never told apart. A
  listen hears only of its own principal's tasks (the principal of the
  session that opened it).
* Each notification carries the ``DetailedTask``, as ``tasks/get`` would
  answer at that moment (`TaskServer.detailed`): `notifier` is the
  `TaskServer.on_change` hook that publishes every record stored, here;
  `mcp_schema.subscription_relay.Relay.carry` publishes them to every replica.
"""

from __future__ import annotations

from collections.abc import Callable

# The opening of a listen, task ids gated, is the session's (every transport's):
# re-exported here, where the task status rules are told.
from mcp_schema.session.listens import open_listen
from mcp_schema.subscriptions import TASKS, Subscriptions
from mcp_schema.tasks.protocol import TaskProtocol
from mcp_schema.tasks.store import TaskRecord

__all__ = ["TASKS", "notifier", "open_listen"]


def notifier(tasks: TaskProtocol, subscriptions: Subscriptions) -> Callable[[TaskRecord], None]:
    """The `TaskServer.on_change` hook sending each record's ``DetailedTask``
    to the listens of ``subscriptions`` that name it (of its principal)."""

    def changed(record: TaskRecord) -> None:
        subscriptions.task_changed(record.principal, tasks.detailed(record))

    return changed
