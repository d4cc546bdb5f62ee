"""A task's work, traced: the ``execute_tool`` span of its work is a child
of the ``tools/call`` server span that created the task, and linked to it
(an OpenTelemetry ``Link``), ended with the task's status."""

from __future__ import annotations

import asyncio

from opentelemetry.trace import SpanKind, StatusCode

from mcp_schema.http import Endpoint
from mcp_schema.tasks import TaskServer
from tests.tasks.serving import VERSION, Jobs, settled, start
from tests.telemetry.conftest import Recorded


def traced_endpoint(jobs: Jobs, recorded: Recorded) -> Endpoint:
    return Endpoint(
        jobs.handler,
        info={"name": "tasks-test", "version": "1"},
        capabilities={"tools": {}},
        versions=[VERSION],
        tasks=TaskServer(lease_seconds=1.0),
        telemetry=recorded.fresh(),
    )


def test_the_work_span_is_linked_to_the_call_that_created_the_task(recorded: Recorded) -> None:
    async def test() -> None:
        jobs = Jobs()
        served = traced_endpoint(jobs, recorded)
        done = await start(served)
        failing = await start(served, fail=True)
        jobs.go.set()
        await settled(served, done, "completed")
        await settled(served, failing, "failed")
        assert served.tasks is not None
        await served.tasks.stop()

    asyncio.run(test())
    spans = recorded.spans()
    calls = [s for s in spans if s.name == "tools/call _OTHER" and s.kind is SpanKind.SERVER]
    works = [s for s in spans if s.kind is SpanKind.INTERNAL]
    assert len(calls) == 2 and len(works) == 2, [s.name for s in spans]
    for call, work in zip(calls, works, strict=True):
        assert work.name == "execute_tool _OTHER"  # "job" is no tool the server declared
        (link,) = work.links
        assert link.context.trace_id == call.context.trace_id
        assert link.context.span_id == call.context.span_id
        assert dict(link.attributes or {}) == {"mcp_schema.link": "created_by"}
        assert work.parent is not None and work.parent.span_id == call.context.span_id
        assert work.end_time is not None and call.end_time is not None
        assert call.end_time <= work.end_time  # the call is answered as the work starts
    attributes = [dict(w.attributes or {}) for w in works]
    assert [a["mcp_schema.task.status"] for a in attributes] == ["completed", "failed"]
    assert all(a["gen_ai.operation.name"] == "execute_tool" for a in attributes)
    assert [w.status.status_code for w in works] == [StatusCode.UNSET, StatusCode.ERROR]
