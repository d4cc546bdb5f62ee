"""The codec: dispatch by method and version, typed errors, real peer traffic,
robustness on hostile input, and the stateless-era helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_schema import SUPPORTED_VERSIONS, codec, context, errors
from mcp_schema import v2025_11_25 as old
from mcp_schema import v2026_07_28 as new
from mcp_schema.base import McpModel
from mcp_schema.v2026_07_28 import tasks

CAPTURES = sorted((Path(__file__).parents[1] / "data" / "captures").glob("*.jsonl"))
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    "io.modelcontextprotocol/logLevel": "info",
    "progressToken": 7,
}


def call(**params: Any) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"_meta": META, "name": "t", **params},
        }
    ).encode()


def round_trip(raw: bytes, **kw: Any) -> Any:
    message = codec.decode(raw, **kw)
    assert json.loads(codec.encode(message)) == json.loads(raw)
    return message


# -- error table ------------------------------------------------------------------

ERROR_CASES = [
    (b"{not json", -32700),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}', -32700),
    (b'\xff\xfe{"jsonrpc"', -32700),
    (b"[1, 2]", -32600),
    (b'"hello"', -32600),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
    (b'{"jsonrpc": "2.0"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "no/such"}', -32601),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}', -32602),
    (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "_meta": {**META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"},
                    "name": "t",
                },
            }
        ).encode(),
        -32022,
    ),
]


@pytest.mark.parametrize(("raw", "code"), ERROR_CASES)
def test_error_table(raw: bytes, code: int) -> None:
    with pytest.raises(errors.McpError) as info:
        codec.decode(raw)
    assert info.value.code == code
    assert type(info.value) is errors.ERROR_CLASSES[code]
    response = info.value.to_response(None)
    assert response["error"]["code"] == code and response["id"] is None


def test_invalid_params_name_each_path() -> None:
    with pytest.raises(errors.InvalidParamsError) as info:
        codec.decode(call(name=5, arguments=[1]))
    paths = {e["path"] for e in info.value.errors}
    assert paths == {"$.params.name", "$.params.arguments"}


def test_a_missing_member_is_named() -> None:
    with pytest.raises(errors.InvalidParamsError) as info:
        codec.decode(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}')
    assert info.value.errors == [{"path": "$.params.name", "reason": "Field required"}]


def test_unsupported_version_lists_supported() -> None:
    with pytest.raises(errors.UnsupportedProtocolVersionError) as info:
        codec.decode(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', version="2024-01-01")
    assert info.value.data == {"requested": "2024-01-01", "supported": list(SUPPORTED_VERSIONS)}
    assert {"2025-11-25", "2026-07-28"} <= set(SUPPORTED_VERSIONS)


def test_decoded_error_responses_are_typed_by_code() -> None:
    raw = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32022,
                "message": "no",
                "data": {"requested": "x", "supported": ["y"]},
            },
        }
    )
    message = round_trip(raw.encode(), version="2026-07-28")
    assert isinstance(message, codec.ErrorResponse) and message.id is None
    assert isinstance(message.error, new.UnsupportedProtocolVersionErrorObject)
    exc = message.exception()
    assert isinstance(exc, errors.UnsupportedProtocolVersionError) and exc.data["requested"] == "x"
    # A known code without the data its model wants still decodes, generically.
    bare = round_trip(
        b'{"jsonrpc": "2.0", "id": 3, "error": {"code": -32022, "message": "no"}}',
        version="2026-07-28",
    )
    assert type(bare.error) is new.Error
    url = round_trip(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "error": {"code": -32042, "message": "m", "data": {"elicitations": []}},
            }
        ).encode()
    )
    assert isinstance(url.error, old.URLElicitationRequiredErrorObject)


# -- dispatch ----------------------------------------------------------------------


def test_request_is_the_version_class_and_round_trips() -> None:
    message = round_trip(call(arguments={"x": 0.5, "n": None, "deep": [[{"a": 1}]]}, extra=1))
    assert isinstance(message, new.CallToolRequest)
    assert message.params.meta.protocol_version == "2026-07-28"
    assert message.params.model_extra == {"extra": 1}


def test_result_type_selects_the_arm() -> None:
    complete = b'{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}}'
    asking = b'{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}'
    task = (
        b'{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "task", "taskId": "t",'
        b' "status": "working", "createdAt": "a", "lastUpdatedAt": "b", "ttlMs": null}}'
    )
    kw: dict[str, Any] = {"version": "2026-07-28", "method": "tools/call"}
    assert type(round_trip(complete, **kw).result) is new.CallToolResult
    assert type(round_trip(asking, **kw).result) is new.InputRequiredResult
    with pytest.raises(errors.InvalidParamsError):
        codec.decode(task, **kw)  # without the extension, "task" is not a result kind
    assert type(round_trip(task, extensions=[codec.TASKS_EXTENSION], **kw).result) is (
        tasks.CreateTaskResult
    )


def test_absent_result_type_as_complete_is_an_explicit_option() -> None:
    raw = b'{"jsonrpc": "2.0", "id": 1, "result": {"content": []}}'
    kw: dict[str, Any] = {"version": "2026-07-28", "method": "tools/call"}
    with pytest.raises(errors.InvalidParamsError):
        codec.decode(raw, **kw)
    message = round_trip(raw, assume_complete=True, **kw)
    assert isinstance(message.result, new.CallToolResult)


def test_handshake_era_tasks() -> None:
    task_result = (
        b'{"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "t", "status":'
        b' "working", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null}}}'
    )
    message = round_trip(task_result, version="2025-11-25", method="tools/call")
    assert isinstance(message.result, old.CreateTaskResult)
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
        assert method in old.REQUESTS
    note = round_trip(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "notifications/tasks/status",
                "params": {
                    "taskId": "t",
                    "status": "working",
                    "createdAt": "a",
                    "lastUpdatedAt": "b",
                    "ttl": None,
                },
            }
        ).encode()
    )
    assert isinstance(note, old.TaskStatusNotification)


def test_correlator_pairs_integral_float_ids() -> None:
    correlator = codec.Correlator(version="2025-11-25")
    correlator.decode(b'{"jsonrpc": "2.0", "id": 4.0, "method": "tools/list"}')
    answer = correlator.decode(b'{"jsonrpc": "2.0", "id": 4, "result": {"tools": []}}')
    assert isinstance(answer, codec.ResultResponse)
    assert isinstance(answer.result, old.ListToolsResult) and correlator.pending == 0


def test_responses_accept_integral_float_ids() -> None:
    # RequestId is a JSON Schema integer or a string: 4.0 is an integer (found
    # by the strategies of mcp_schema.testing, whose ids may be integral floats).
    result = codec.decode(
        b'{"jsonrpc": "2.0", "id": 4.0, "result": {"tools": []}}',
        version="2025-11-25",
        method="tools/list",
    )
    error = codec.decode(
        b'{"jsonrpc": "2.0", "id": 4.0, "error": {"code": 1, "message": "m"}}', version="2025-11-25"
    )
    assert isinstance(result, codec.ResultResponse) and isinstance(error, codec.ErrorResponse)
    assert result.id == 4 and error.id == 4


def test_unknown_methods() -> None:
    raw = b'{"jsonrpc": "2.0", "id": "a", "method": "x/y", "params": {"k": 1}}'
    assert isinstance(round_trip(raw, allow_unknown_methods=True), old.JSONRPCRequest)
    note = round_trip(b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"k": 1}}')
    assert isinstance(note, old.JSONRPCNotification)


def test_wire_decoding_reads_aliases_only_python_construction_reads_both() -> None:
    raw = b'{"jsonrpc": "2.0", "id": 1, "result": {"completion": {"values": [], "has_more": true}}}'
    message = round_trip(raw, method="completion/complete")
    assert message.result.completion.has_more is None
    assert message.result.completion.model_extra == {"has_more": True}
    built = old.CompleteResultCompletion(values=["a"], has_more=True)
    assert json.loads(codec.encode(built)) == {"values": ["a"], "hasMore": True}


def test_snake_case_twin_of_a_nullable_member_stays_unknown() -> None:
    # Found by `make conformance`: structuredContent may be null, its twin is unknown.
    twin = {"content": [], "structured_content": [1], "toolUseId": "u", "type": "tool_result"}
    model = new.ToolResultContent.model_validate(twin)
    assert json.loads(codec.encode(model)) == twin
    explicit: dict[str, object] = {
        "content": [],
        "structuredContent": None,
        "toolUseId": "u",
        "type": "tool_result",
    }
    assert json.loads(codec.encode(new.ToolResultContent.model_validate(explicit))) == explicit


def test_strict_json_types() -> None:
    def progress(total: str) -> bytes:
        return (
            b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": '
            b'{"progressToken": 1, "progress": 50, "total": ' + total.encode() + b"}}"
        )

    for bad in ('"5"', "true", "null"):
        with pytest.raises(errors.InvalidParamsError):
            codec.decode(progress(bad))
    assert b'"progress":50,' in codec.encode(round_trip(progress("7.5")))
    with pytest.raises(errors.InvalidParamsError):  # integer ids of tokens: no "1" -> 1
        codec.decode(
            b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": '
            b'{"progressToken": true, "progress": 1}}'
        )


def test_headers_are_checked_for_stateless_requests() -> None:
    from mcp_schema.http_headers import request_headers

    raw = call()
    headers = request_headers(json.loads(raw))
    codec.decode(raw, headers=headers)
    with pytest.raises(errors.HeaderMismatchError):
        codec.decode(raw, headers={**headers, "Mcp-Name": "other"})


# -- real peers ------------------------------------------------------------------------


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_captured_sdk_traffic(path: Path) -> None:
    correlator = codec.Correlator()
    decoded = 0
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if "message" not in record:
            continue  # deliberately unparsable probe bytes
        message = record["message"]
        raw = json.dumps(message).encode()
        # The raw-* sessions send deliberately broken requests: each must end
        # in a typed error; everything the SDKs sent on their own must decode.
        probe = path.stem.startswith("raw-") and record["dir"] == "c2s"
        if probe or (isinstance(message, dict) and message.get("method") == "tools/frobnicate"):
            try:
                correlator.decode(raw)
            except errors.McpError as err:
                assert err.code in (-32600, -32601, -32602)
            continue
        out = correlator.decode(raw)
        assert json.loads(codec.encode(out)) == message
        if "result" in message and "id" in message and message["id"] is not None:
            assert isinstance(out, codec.ResultResponse), message
            assert isinstance(out.result, McpModel), message
        decoded += 1
    assert decoded > 5


# -- robustness --------------------------------------------------------------------------


def must_be_typed(raw: bytes | str) -> None:
    try:
        message = codec.decode(raw)
    except errors.McpError:
        return
    codec.encode(message)


def test_unhashable_json_where_a_tag_is_read() -> None:
    # Found by `make fuzz`: a dict where a code or a resultType belongs.
    cases: tuple[tuple[bytes, dict[str, Any]], ...] = (
        (b'{"jsonrpc": "2.0", "id": 1, "error": {"code": {}, "message": "m"}}', {}),
        (
            b'{"jsonrpc": "2.0", "id": 1, "result": {"resultType": {}, "content": []}}',
            {"version": "2026-07-28", "method": "tools/call"},
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": '
            b'{"io.modelcontextprotocol/protocolVersion": {}}}}',
            {},
        ),
    )
    for raw, kw in cases:
        with pytest.raises(errors.McpError):
            codec.decode(raw, **kw)
    with pytest.raises(ValueError):
        new.CallToolResultResponse.model_validate(
            {"jsonrpc": "2.0", "id": 1, "result": {"resultType": [], "content": []}}
        )


def test_hostile_inputs() -> None:
    for raw in (
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 100_000,
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "'
        + b"x" * 10_000_000
        + b'"}}',
        b'{"jsonrpc": "2.0", "id": 1' + b"0" * 5000 + b', "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "id": "b", "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": Infinity}}',
        b"\x00\x01\x02",
        b"",
        b"   ",
        "\ud800".encode("utf-8", "surrogatepass"),
    ):
        must_be_typed(raw)


JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "jsonrpc",
                    "id",
                    "method",
                    "params",
                    "result",
                    "error",
                    "_meta",
                    "name",
                    "code",
                    "resultType",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)
METHODS = st.sampled_from(sorted(set(old.REQUESTS) | set(new.REQUESTS) | set(old.NOTIFICATIONS)))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(
        st.binary(max_size=64),
        JSON.map(lambda v: json.dumps(v).encode()),
        st.builds(
            lambda m, i, p: json.dumps(
                {"jsonrpc": "2.0", "id": i, "method": m, "params": p}
            ).encode(),
            METHODS,
            JSON_LEAF,
            JSON,
        ),
    )
)
def test_fuzz_never_raises_anything_but_mcp_errors(raw: bytes) -> None:
    must_be_typed(raw)


def test_mutation_fuzz_has_no_crashes() -> None:
    from tests.engines import fuzz

    lines: list[str] = []
    outcomes = fuzz.run(5_000, seed=20261129, report=lines.append)
    assert outcomes["CRASH"] == 0, "\n".join(lines)
    assert outcomes["decoded"] > 0 and len(outcomes) > 3  # the mix reaches every path


def test_a_nested_id_does_not_pair_a_response_with_another_request() -> None:
    # The first "id" these bytes hold is the nested one, of the pending ping.
    raw = b'{"jsonrpc":"2.0","result":{"tools":[],"id":2},"id":1}'
    for view in ("decode", "decode_dict"):
        correlator = codec.Correlator(version="2025-11-25")
        correlator.decode(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', sender="client")
        correlator.decode(b'{"jsonrpc":"2.0","id":2,"method":"ping"}', sender="client")
        decoded = getattr(correlator, view)(raw, sender="server")
        if isinstance(decoded, dict):
            assert decoded["id"] == 1
        else:
            assert type(decoded.result).__name__ == "ListToolsResult"
        assert correlator.forget(2, sender="client")
        assert not correlator.forget(1, sender="client")


# -- stateless-era helpers ------------------------------------------------------------------


def test_request_context() -> None:
    ctx = context.RequestContext.from_request(codec.decode(call()))
    assert (ctx.protocol_version, ctx.log_level, ctx.progress_token) == ("2026-07-28", "info", 7)
    assert isinstance(ctx.client_info, new.Implementation) and ctx.client_info.name == "c"
    assert isinstance(ctx.client_capabilities, new.ClientCapabilities)
    assert ctx.client_capabilities.sampling is not None and ctx.request_id == 1


def test_require_client_capabilities() -> None:
    request = codec.decode(call())
    context.require_client_capabilities(request, {"sampling": {}})
    with pytest.raises(errors.MissingRequiredClientCapabilityError) as info:
        context.require_client_capabilities(request, {"sampling": {}, "elicitation": {"form": {}}})
    assert info.value.code == -32021
    assert info.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_retry_with_input() -> None:
    request = codec.decode(call(arguments={"a": 1}))
    answer = codec.decode(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "resultType": "input_required",
                    "requestState": "opaque",
                    "inputRequests": {
                        "q": {
                            "method": "elicitation/create",
                            "params": {
                                "message": "?",
                                "requestedSchema": {"type": "object", "properties": {}},
                            },
                        }
                    },
                },
            }
        ),
        version="2026-07-28",
        method="tools/call",
    )
    assert isinstance(answer, codec.ResultResponse)
    asked = answer.result
    retry = context.retry_with_input(
        request, asked, {"q": {"action": "accept", "content": {"n": 0.75}}}, request_id=2
    )
    body = json.loads(codec.encode(retry))
    assert body["id"] == 2 and body["params"]["requestState"] == "opaque"
    assert body["params"]["inputResponses"] == {"q": {"action": "accept", "content": {"n": 0.75}}}
    assert body["params"]["arguments"] == {"a": 1}
    with pytest.raises(ValueError, match="missing"):
        context.retry_with_input(request, asked, {})
