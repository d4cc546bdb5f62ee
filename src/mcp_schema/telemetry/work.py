"""A task's work, traced: `traced` runs it under its span (`Telemetry.task_work`),
the span current while the work runs (what the work calls is its child),
ended with the task's status once the work is over (``mcp_schema.task.status``;
``ERROR`` when the task failed or the work raised).

The work outlives the call that created the task, and the ``tasks/get`` and
``tasks/update`` that follow may reach any replica. So the work span's
context is kept with the task as data (`context_of`: a W3C ``traceparent``
string, never a live span), and the server span of each of those requests is
linked to it (`link_work`), whichever process serves it.

Imported only where a span was recorded: it imports OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from opentelemetry.trace import Status, StatusCode, get_current_span, use_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["WORK_LINK", "context_of", "link_work", "not_started", "traced"]

WORK_LINK = {"mcp_schema.link": "task_work"}
"""The attributes of the link from a ``tasks/get`` or ``tasks/update`` span to the work's."""

_STATUSES = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
_W3C = TraceContextTextMapPropagator()
"""What reads a kept context back: the W3C format `context_of` writes, whatever
propagator the application set globally (B3, Jaeger... would not read it)."""


_WRITTEN = f"00-{'0' * 32}-{'0' * 16}-00"
"""The shape of what `context_of` writes: its length bounds what is parsed back."""


def context_of(span: Span) -> str | None:
    """``span``'s context as a version-00 W3C ``traceparent``, to keep with
    the task (None: a span that records nothing has no context to link to)."""
    context = span.get_span_context()
    if not context.is_valid:
        return None
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


def link_work(span: Span, kept: object) -> None:
    """Link ``span`` (a ``tasks/get`` or ``tasks/update`` server span) to
    the work span whose context the task keeps (``kept``, what `context_of`
    wrote; anything else, a record of a store shared with other writers
    included, links nothing)."""
    if not isinstance(kept, str) or len(kept) > len(_WRITTEN):
        return  # not what `context_of` wrote: nothing to parse
    work = get_current_span(_W3C.extract({"traceparent": kept})).get_span_context()
    if work.is_valid:
        span.add_link(work, WORK_LINK)


def not_started(span: Span) -> None:
    """End the work span of a task that could not be stored (its work never runs)."""
    span.set_status(Status(StatusCode.ERROR, "the task could not be stored"))
    span.end()


async def traced(span: Span, work: Awaitable[None], status: Callable[[], str]) -> None:
    """Run ``work`` (a task's, `mcp_schema.tasks.worker.run`) under ``span``
    (started by `Telemetry.task_work`); ``status``: the task's status once
    the work is over."""
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
