"""Where the Tasks extension meets the telemetry (`mcp_schema.telemetry.work`;
hand-written runtime module): nothing is imported nor paid unless the
session records spans.

* `work_span` starts a new task's work span before the task is stored, and
  keeps its context in the record's ``state`` (``trace``: a W3C
  ``traceparent`` string), which every store keeps as it is: a replica
  serving a later request of the task finds it there;
* `traced` runs the work under that span;
* `link_work` links a ``tasks/get`` or ``tasks/update`` server span to it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from mcp_schema.tasks.protocol import read_state, with_state

if TYPE_CHECKING:
    from mcp_schema.session.events import RequestReceived
    from mcp_schema.session.extensions import PendingTask
    from mcp_schema.session.server import ServerSession
    from mcp_schema.tasks.store import TaskRecord
    from mcp_schema.tasks.worker import TaskContext

__all__ = ["TRACE_KEY", "link_work", "not_started", "traced", "work_span"]

TRACE_KEY = "trace"
"""The key of ``state`` holding the work span's context."""


def work_span(session: ServerSession, pending: PendingTask) -> tuple[TaskRecord, Any]:
    """``pending``'s record to store (with its work span's context, when
    one is recorded) and that span (None: nothing recorded, nothing paid).
    Asked before the call is answered: the answer ends the call's span."""
    record: TaskRecord = pending.record
    created_by = session.request_span(pending.request)
    if created_by is None or session.telemetry is None:
        return record, None
    from mcp_schema.telemetry.work import context_of

    tool = getattr(getattr(pending.request.message, "params", None), "name", None)
    span = session.telemetry.task_work(created_by, tool)
    kept = context_of(span)
    if kept is None:
        return record, span
    return with_state(record, {**read_state(record), TRACE_KEY: kept}), span


def not_started(span: Any) -> None:
    """The task of ``span`` (`work_span`'s) was not stored: its span ends."""
    if span is not None:
        from mcp_schema.telemetry.work import not_started as ended

        ended(span)


def traced(span: Any, running: Awaitable[None], context: TaskContext) -> Awaitable[None]:
    """``running`` (`mcp_schema.tasks.worker.run` of ``context``) under
    ``span`` (`work_span`'s; None: as it is), ended with the task's status."""
    if span is None:
        return running
    from mcp_schema.telemetry.work import traced as under

    return under(span, running, lambda: context.record.status)


def link_work(session: ServerSession, event: RequestReceived, record: TaskRecord) -> None:
    """Link the server span of ``event`` (a ``tasks/get`` or ``tasks/update``
    of ``record``'s task) to the task's work span, when both are recorded."""
    span = session.request_span(event)
    if span is None:
        return
    from mcp_schema.telemetry.work import link_work as link

    link(span, read_state(record).get(TRACE_KEY))
