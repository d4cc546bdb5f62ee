"""Spans and metrics as the OpenTelemetry MCP conventions name them, drawn
from closed sets whatever a peer sends."""

from __future__ import annotations

import itertools
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.trace import SpanKind, StatusCode

from mcp_schema.telemetry.recorder import DURATION_BUCKETS, MAX_LEARNED
from mcp_schema.telemetry.vocabulary import MAX_VALUE, OTHER, known_methods
from tests.telemetry.conftest import Recorded

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_tool_call_span_names_the_tool_and_its_attributes(recorded: Recorded) -> None:
    params = {"name": "echo", "arguments": {"text": "secret"}}
    recorded.telemetry.server_operation(
        "tools/call",
        request_id=7,
        version="2026-07-28",
        era="stateless",
        params=params,
        client=("127.0.0.1", 5555),
    ).end()
    (span,) = recorded.spans()
    assert span.name == "tools/call echo"
    assert span.kind is SpanKind.SERVER
    attributes = dict(span.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "echo"
    assert attributes["jsonrpc.request.id"] == "7"
    assert attributes["mcp.protocol.version"] == "2026-07-28"
    assert attributes["network.transport"] == "tcp"
    assert attributes["client.address"] == "127.0.0.1"
    assert "error.type" not in attributes
    # Arguments are recorded only when the user opts in.
    assert "gen_ai.tool.call.arguments" not in attributes
    assert span.status.status_code is StatusCode.UNSET


def test_error_code_and_tool_error_set_error_type(recorded: Recorded) -> None:
    telemetry = recorded.telemetry
    telemetry.server_operation("tools/call", request_id=1, params={"name": "echo"}).end(
        code=-32602, message="Invalid params"
    )
    telemetry.server_operation("tools/call", request_id=2, params={"name": "echo"}).end(
        tool_error=True
    )
    failed, tool_failed = recorded.spans()
    assert failed.attributes is not None and tool_failed.attributes is not None
    assert failed.attributes["error.type"] == "-32602"
    assert failed.attributes["rpc.response.status_code"] == "-32602"
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "Invalid params"
    assert tool_failed.attributes["error.type"] == "tool_error"
    assert "rpc.response.status_code" not in tool_failed.attributes


def test_duration_histogram_uses_the_conventions_buckets(recorded: Recorded) -> None:
    recorded.telemetry.server_operation("tools/list", request_id=1, version="2025-11-25").end()
    (point,) = recorded.points("mcp.server.operation.duration")
    assert tuple(point.explicit_bounds) == DURATION_BUCKETS
    assert point.count == 1
    assert dict(point.attributes) == {
        "mcp.method.name": "tools/list",
        "mcp.protocol.version": "2025-11-25",
        "network.transport": "tcp",
        "network.protocol.name": "http",
    }


def test_meta_context_parents_the_server_span_over_the_header(recorded: Recorded) -> None:
    header = "00-11111111111111111111111111111111-2222222222222222-01"
    params = {"name": "echo", "_meta": {"traceparent": TRACEPARENT}}
    recorded.telemetry.server_operation(
        "tools/call", request_id=1, params=params, headers={"traceparent": header}
    ).end()
    (span,) = recorded.spans()
    assert span.parent is not None
    assert f"{span.context.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert f"{span.parent.span_id:016x}" == "00f067aa0ba902b7"


def test_header_context_is_the_parent_when_meta_has_none(recorded: Recorded) -> None:
    header = "00-11111111111111111111111111111111-2222222222222222-01"
    recorded.telemetry.server_operation("ping", request_id=1, headers={"traceparent": header}).end()
    (span,) = recorded.spans()
    assert f"{span.context.trace_id:032x}" == "1" * 32


def test_session_id_is_hashed_unless_bound_to_a_principal(recorded: Recorded) -> None:
    telemetry = recorded.telemetry
    telemetry.server_operation("ping", request_id=1, session="abc123").end()
    telemetry.server_operation("ping", request_id=2, session="abc123", session_bound=True).end()
    anonymous, bound = recorded.spans()
    assert anonymous.attributes is not None and bound.attributes is not None
    assert anonymous.attributes["mcp.session.id"] != "abc123"
    assert len(str(anonymous.attributes["mcp.session.id"])) == 32
    assert bound.attributes["mcp.session.id"] == "abc123"


names = st.text(string.printable, max_size=300)


# The exporter is cleared for each example: the fixture's state is not carried over.
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(method=names, tool=names, code=st.integers(-(2**40), 2**40), version=names)
def test_every_recorded_value_comes_from_a_closed_set(
    recorded: Recorded, method: str, tool: str, code: int, version: str
) -> None:
    recorded.exporter.clear()
    recorded.telemetry.server_operation(
        method, request_id=1, version=version, params={"name": tool}
    ).end(code=code)
    (span,) = recorded.spans()
    attributes = dict(span.attributes or {})
    assert attributes["mcp.method.name"] in known_methods() | {OTHER}
    assert attributes.get("gen_ai.tool.name", "echo") in {"echo", OTHER}
    assert attributes.get("mcp.protocol.version", OTHER) in {
        OTHER,
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    }
    error = str(attributes["error.type"])
    assert error == OTHER or -32700 <= int(error) <= -32000
    assert span.name.split(" ")[0] in known_methods() | {OTHER}
    assert len(span.name) <= 300


def test_counters_keep_closed_attributes(recorded: Recorded) -> None:
    telemetry = recorded.telemetry
    telemetry.count_refused(-32600, "received", "no/such/method")
    telemetry.count_share("sessions", granted=False)
    (refused,) = recorded.points("mcp_schema.refused")
    assert dict(refused.attributes) == {
        "rpc.response.status_code": "-32600",
        "mcp_schema.direction": "received",
        "mcp.method.name": OTHER,
    }
    (share,) = recorded.points("mcp_schema.shares")
    assert share.value == 1 and dict(share.attributes)["mcp_schema.outcome"] == "refused"


def test_declared_names_are_recorded_from_then_on(recorded: Recorded) -> None:
    telemetry = recorded.telemetry
    telemetry.server_operation("tools/call", request_id=1, params={"name": "later"}).end()
    telemetry.declare(tools=["later"])
    telemetry.server_operation("tools/call", request_id=2, params={"name": "later"}).end()
    before, after = recorded.spans()
    assert (before.name, after.name) == ("tools/call _OTHER", "tools/call later")


def test_a_name_learned_while_its_call_is_in_flight_names_the_call(recorded: Recorded) -> None:
    telemetry = recorded.telemetry
    for kind, method in (("tools", "tools/call"), ("prompts", "prompts/get")):
        learned = telemetry.server_operation(method, request_id=1, params={"name": f"new-{kind}"})
        unknown = telemetry.client_operation(method, request_id=2, params={"name": "never"})
        telemetry.learn(**{kind: [f"new-{kind}"]})  # the upstream's list, answered meanwhile
        learned.end()
        unknown.end()
    spans = recorded.spans()
    assert [s.name for s in spans] == [
        "tools/call new-tools",
        "tools/call _OTHER",
        "prompts/get new-prompts",
        "prompts/get _OTHER",
    ]
    assert dict(spans[0].attributes or {})["gen_ai.tool.name"] == "new-tools"
    assert dict(spans[2].attributes or {})["gen_ai.prompt.name"] == "new-prompts"
    durations = recorded.points("mcp.server.operation.duration")
    assert {p.attributes.get("gen_ai.tool.name") for p in durations} == {"new-tools", None}


def test_operations_of_one_shape_record_alike_whether_its_shape_is_known_yet(
    recorded: Recorded,
) -> None:
    # The second of each pair finds the shape the first made: known facts in
    # one look-up; facts spelled like recorded ones, or a name not known yet
    # (still named at the end once learned), recorded as the first was.
    telemetry = recorded.fresh()
    for _ in range(2):
        telemetry.server_operation(
            "_OTHER", request_id=1, version="_OTHER", era="x", params={"name": "_OTHER"}
        ).end()
    pending = [
        telemetry.server_operation("tools/call", request_id=n, params={"name": "soon"})
        for n in (2, 3)
    ]
    telemetry.learn(tools=["soon"])
    for operation in pending:
        operation.end()
    for _ in range(2):
        telemetry.server_operation("tools/call", request_id=4, params={"name": "soon"}).end()
    spans = recorded.spans()
    assert [s.name for s in spans] == ["_OTHER", "_OTHER", *["tools/call soon"] * 4]
    first, second = (dict(s.attributes or {}) for s in spans[:2])
    assert first == second and first["mcp.protocol.version"] == OTHER
    assert {dict(s.attributes or {})["gen_ai.tool.name"] for s in spans[2:]} == {"soon"}


def test_broker_round_trips_are_counted_by_operation_and_outcome(recorded: Recorded) -> None:
    import asyncio

    from mcp_schema.broker import BrokerError, InProcessBroker

    class Failing(InProcessBroker):
        async def _get(self, key: str) -> bytes | None:
            raise BrokerError("the broker is down")

    async def trips() -> None:
        broker = Failing()
        broker.telemetry = recorded.telemetry
        await broker.put("k", b"v", 10)
        await broker.publish("c", b"m")
        try:
            await broker.get("k")
        except BrokerError:
            pass
        else:
            raise AssertionError("the failing get raised nothing")
        await broker.aclose()

    asyncio.run(trips())
    counted = {
        (p.attributes["mcp_schema.operation"], p.attributes["mcp_schema.outcome"]): p.value
        for p in recorded.points("mcp_schema.broker.calls")
    }
    assert counted == {("put", "ok"): 1, ("publish", "ok"): 1, ("get", "error"): 1}


def test_names_learned_from_a_peer_are_bounded_in_count_and_length(recorded: Recorded) -> None:
    telemetry = recorded.fresh()
    telemetry.learn(tools=["echo", 7, "x" * (MAX_VALUE + 1), "echo"], prompts=["greet"])
    assert telemetry.tools == {"echo"} and telemetry.prompts == {"greet"}
    telemetry.learn(tools=(f"tool-{n}" for n in itertools.count()))  # a list without end
    assert len(telemetry.tools) + len(telemetry.prompts) == MAX_LEARNED
    assert "tool-0" in telemetry.tools and f"tool-{MAX_LEARNED}" not in telemetry.tools
    telemetry.learn(tools=["late"])  # no room is ever made again
    assert "late" not in telemetry.tools
    telemetry.declare(tools=["own"])  # what the server itself declares is not bounded
    assert "own" in telemetry.tools
    telemetry.server_operation("tools/call", request_id=1, params={"name": "late"}).end()
    telemetry.server_operation("tools/call", request_id=2, params={"name": "tool-3"}).end()
    assert [s.name for s in recorded.spans()] == [f"tools/call {OTHER}", "tools/call tool-3"]
