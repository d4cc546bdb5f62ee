"""`traced`: a task's work under its span (`Telemetry.task_work`), the span
current while the work runs (what the work calls is its child), ended with
the task's status once the work is over (``mcp_schema.task.status``;
``ERROR`` when the task failed or the work raised).

Imported only where a span was recorded: it imports OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from opentelemetry.trace import Status, StatusCode, use_span

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from mcp_schema.telemetry.recorder import Telemetry

__all__ = ["traced"]

_STATUSES = frozenset({"working", "input_required", "completed", "failed", "cancelled"})


async def traced(
    telemetry: Telemetry,
    created_by: Span,
    tool: object,
    work: Awaitable[None],
    status: Callable[[], str],
) -> None:
    """Run ``work`` (a task's, `mcp_schema.tasks.worker.run`) under the span
    of its tool ``tool``, linked to ``created_by``; ``status``: the task's
    status once the work is over."""
    span = telemetry.task_work(created_by, tool)
    failed = False
    try:
        with use_span(
            span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        ):
            await work
    except BaseException:
        failed = True  # a cancellation too: the work did not end by itself
        raise
    finally:
        final = status()
        span.set_attribute("mcp_schema.task.status", final if final in _STATUSES else "_OTHER")
        if failed or final == "failed":
            span.set_status(Status(StatusCode.ERROR))
        span.end()
