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

from mcp_schema.session.events import RequestReceived
from mcp_schema.subscriptions import TASKS, Listen, Subscriptions, listened
from mcp_schema.tasks.protocol import TaskProtocol, declares_tasks, missing_tasks
from mcp_schema.tasks.store import TaskRecord

__all__ = ["TASKS", "notifier", "open_listen"]


def open_listen(
    subscriptions: Subscriptions, request: RequestReceived, principal: str | None
) -> Listen:
    """The listen ``request`` (a ``subscriptions/listen``) opens in
    ``subscriptions``, hearing of ``principal``'s tasks; its `McpError` when
    refused (-32602, -32603, and -32021 for ``taskIds`` from a client that did
    not declare the extension, when ``subscriptions`` send task status),
    nothing opened."""
    asked = subscriptions.filter_of(listened(request.message))
    sends = TASKS in subscriptions.supported
    if asked.task_ids and sends and not declares_tasks(request.context.client_capabilities):
        raise missing_tasks(TASKS)
    return subscriptions.open(request.id, asked, principal=principal or "")


def notifier(tasks: TaskProtocol, subscriptions: Subscriptions) -> Callable[[TaskRecord], None]:
    """The `TaskServer.on_change` hook sending each record's ``DetailedTask``
    to the listens of ``subscriptions`` that name it (of its principal)."""

    def changed(record: TaskRecord) -> None:
        subscriptions.task_changed(record.principal, tasks.detailed(record))

    return changed
