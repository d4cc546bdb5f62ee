"""A task's work, traced: the ``execute_tool`` span of its work is a child
of the ``tools/call`` server span that created the task, and linked to it
(an OpenTelemetry ``Link``), ended with the task's status; each ``tasks/get``
and ``tasks/update`` server span links to that work span, on whichever
replica serves it (the work span's context kept in the task's record)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, StatusCode

from mcp_schema.http import Endpoint
from mcp_schema.tasks import TaskServer, TaskStore
from mcp_schema.tasks.sqlite_store import SqliteTaskStore
from mcp_schema.telemetry.work import WORK_LINK, context_of, link_work
from tests.tasks.serving import VERSION, Jobs, post, request, settled, start
from tests.telemetry.conftest import Recorded


def traced_endpoint(
    jobs: Jobs,
    recorded: Recorded | None,
    store: TaskStore | None = None,
) -> Endpoint:
    return Endpoint(
        jobs.handler,
        info={"name": "tasks-test", "version": "1"},
        capabilities={"tools": {}},
        versions=[VERSION],
        tasks=TaskServer(store, lease_seconds=1.0),
        telemetry=False if recorded is None else recorded.fresh(),
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


def test_tasks_get_and_update_spans_link_to_the_work_on_any_replica(
    recorded: Recorded, tmp_path: Path
) -> None:
    async def test() -> tuple[str, bytes]:
        jobs = Jobs()
        jobs.go.set()
        path = tmp_path / "tasks.db"
        async with SqliteTaskStore(path) as one, SqliteTaskStore(path) as other:
            creating = traced_endpoint(jobs, recorded, one)
            serving = traced_endpoint(jobs, recorded, other)  # another replica
            task_id = await start(creating, ask=True)
            waiting = await settled(serving, task_id, "input_required")
            assert "trace" not in json.dumps(waiting)  # kept in the record, never sent
            answer = {"go": {"action": "accept", "content": {"go": True}}}
            update = request("tasks/update", {"taskId": task_id, "inputResponses": answer})
            assert "result" in await post(serving, update)
            await settled(serving, task_id, "completed")
            stored = await other.get(task_id, "")
            for served in (creating, serving):
                assert served.tasks is not None
                await served.tasks.stop()
        assert stored is not None
        return task_id, stored.state

    _, state = asyncio.run(asyncio.wait_for(test(), 10))
    spans = recorded.spans()
    (work,) = [s for s in spans if s.kind is SpanKind.INTERNAL]
    assert json.loads(state)["trace"] == context_of(work)  # type: ignore[arg-type]
    linking = [s for s in spans if s.name in ("tasks/get", "tasks/update")]
    assert {s.name for s in linking} == {"tasks/get", "tasks/update"}
    for span in linking:
        (link,) = span.links
        assert link.context.trace_id == work.context.trace_id
        assert link.context.span_id == work.context.span_id
        assert dict(link.attributes or {}) == WORK_LINK
        assert span.context.trace_id != work.context.trace_id  # a trace of its own: a link


def test_nothing_is_kept_for_a_task_when_nothing_is_recorded() -> None:
    async def test() -> bytes:
        jobs = Jobs()
        served = traced_endpoint(jobs, None)
        task_id = await start(served)
        assert served.tasks is not None
        stored = await served.tasks.store.get(task_id, "")
        jobs.go.set()
        await served.tasks.stop()
        assert stored is not None
        return stored.state

    assert "trace" not in json.loads(asyncio.run(asyncio.wait_for(test(), 5)))


_TRACER = TracerProvider().get_tracer("tests")  # nothing exported: the span is read as it is
_HEX = "0123456789abcdef"


@settings(max_examples=60, deadline=None)
@given(
    kept=st.one_of(
        st.none(),
        st.integers(),
        st.text(max_size=60),
        st.builds(
            "00-{}-{}-{}".format,
            st.text(_HEX, min_size=31, max_size=33),
            st.text(_HEX + "G", min_size=16, max_size=16),
            st.text(_HEX, min_size=2, max_size=2),
        ),
    )
)
def test_a_kept_context_links_only_a_valid_traceparent(kept: object) -> None:
    span = _TRACER.start_span("tasks/get")
    link_work(span, kept)  # never raises, whatever a shared store's record holds
    well_formed = isinstance(kept, str) and re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-..", kept)
    valid = well_formed and kept[3:35] != "0" * 32 and kept[36:52] != "0" * 16  # type: ignore[index]
    assert len(span.links) == (1 if valid else 0)  # type: ignore[attr-defined]
    span.end()


def test_a_kept_context_links_what_it_names(recorded: Recorded) -> None:
    work = recorded.telemetry._tracer.start_span("work")
    kept = context_of(work)
    assert kept is not None and kept.startswith("00-") and len(kept) == 55
    span = recorded.telemetry._tracer.start_span("tasks/get")
    link_work(span, kept)
    link_work(span, kept.replace(kept[3:35], "0" * 32))  # an invalid trace id: no link
    link_work(span, kept.upper())  # not the lower-case hex written: no link
    work.end()
    span.end()
    (linked,) = [s for s in recorded.spans() if s.name == "tasks/get"]
    (link,) = linked.links
    assert link.context.span_id == work.get_span_context().span_id
    assert link.context.trace_flags == work.get_span_context().trace_flags
