"""The classes the generator derives beside a schema's own.

Draft-07 messages: ``JSONRPC<Name>`` subclasses ``<Name>`` with the members of
its JSON-RPC envelope (``codegen/envelopes.py``). Results read with
``assume_complete``: ``<Name>AssumedComplete`` has ``resultType`` optional
(``codegen/assumed_complete.py``). Both are generated code: decoding picks
them from the method tables and creates no class.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from mcp_schema import v2024_11_05, v2025_06_18, v2025_11_25, v2026_07_28
from mcp_schema.codec import TASKS_EXTENSION, decode, encode
from mcp_schema.errors import InvalidParamsError
from mcp_schema.tables import RequestMethod
from mcp_schema.v2026_07_28 import tasks
from tests.engines import conformance as c

DRAFT_07 = [v2024_11_05, v2025_06_18]
CALL = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"x": 1}, "_meta": {"progressToken": "p"}},
}


# -- whole draft-07 messages ------------------------------------------------------------


@pytest.mark.parametrize("package", DRAFT_07)
def test_a_draft_07_request_decodes_as_its_whole_message(package: Any) -> None:
    message = decode(json.dumps(CALL), version=package.VERSION)
    assert type(message) is package.JSONRPCCallToolRequest
    assert isinstance(message, package.CallToolRequest)
    assert isinstance(message.params, package.CallToolRequestParams)
    assert message.id == 7 and message.jsonrpc == "2.0"
    assert message.params.meta.progress_token == "p"
    assert json.loads(encode(message)) == CALL


def test_members_keep_the_parents_order_then_the_envelopes() -> None:
    fields = v2025_06_18.JSONRPCCallToolRequest.model_fields
    assert list(fields) == ["method", "params", "id", "jsonrpc"]
    params = v2025_06_18.JSONRPCCallToolRequestParams.model_fields
    assert list(params) == ["arguments", "name", "meta"]
    assert params["meta"].serialization_alias == "_meta"
    built = v2025_06_18.JSONRPCCallToolRequest(
        id=1, params=v2025_06_18.JSONRPCCallToolRequestParams(name="n")
    )
    # encode writes the conventional order, whatever the fields' order.
    assert list(json.loads(encode(built))) == ["jsonrpc", "id", "method", "params"]


@pytest.mark.parametrize(
    ("message", "defect"),
    [
        (
            {**CALL, "params": {"name": "echo", "_meta": {"progressToken": True}}},
            "params._meta.progressToken",
        ),
        ({**CALL, "params": {"name": "echo", "_meta": []}}, "params._meta"),
        ({k: v for k, v in CALL.items() if k != "id"}, "id"),
    ],
)
def test_the_envelope_types_what_the_message_leaves_open(
    message: dict[str, Any], defect: str
) -> None:
    # The envelope's rules hold inside params too, as allOf says.
    assert not c.oracle("2025-06-18", "JSONRPCCallToolRequest").is_valid(message)
    with pytest.raises(ValidationError) as raised:
        v2025_06_18.JSONRPCCallToolRequest.model_validate(message)
    assert {".".join(map(str, e["loc"][:3])) for e in raised.value.errors()} == {defect}
    if defect != "id":  # the schema's own definition alone does not see it
        v2025_06_18.CallToolRequest.model_validate(message)


def test_a_notification_gets_jsonrpc_and_the_envelopes_params_meta() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    decoded = decode(json.dumps(note), version="2025-06-18")
    assert type(decoded) is v2025_06_18.JSONRPCCancelledNotification
    assert "id" not in type(decoded).model_fields
    with pytest.raises(InvalidParamsError):
        decode(json.dumps({**note, "params": {"requestId": 1, "_meta": 5}}), version="2025-06-18")


def test_a_member_class_the_envelope_adds_nothing_to_is_kept() -> None:
    # PingRequest declares the envelope's _meta already: no JSONRPCPingRequestParams.
    fields = v2025_06_18.JSONRPCPingRequest.model_fields
    assert not hasattr(v2025_06_18, "JSONRPCPingRequestParams")
    assert fields["params"].annotation == v2025_06_18.PingRequest.model_fields["params"].annotation


@pytest.mark.parametrize("package", [v2024_11_05, v2025_06_18, v2025_11_25, v2026_07_28])
def test_tables_name_the_whole_message_of_every_method(package: Any) -> None:
    entries = [
        *((e.request_name, e.request) for e in package.REQUESTS.values()),
        *((n.notification_name, n.notification) for n in package.NOTIFICATIONS.values()),
    ]
    for name, cls in entries:
        assert "jsonrpc" in cls.model_fields, name
        if package in DRAFT_07:  # the schema's definition is its parent
            assert name.startswith("JSONRPC") and cls.__mro__[1].__name__ == name[7:]
        else:  # later schemas define whole messages
            assert not name.startswith("JSONRPC"), name


# -- results read with assume_complete ---------------------------------------------------


def test_a_result_without_result_type_is_its_variant_and_stays_so() -> None:
    raw = b'{"jsonrpc": "2.0", "id": 1, "result": {"content": []}}'
    kw: dict[str, Any] = {"version": "2026-07-28", "method": "tools/call"}
    with pytest.raises(InvalidParamsError):
        decode(raw, **kw)
    message = decode(raw, assume_complete=True, **kw)
    assert type(message.result) is v2026_07_28.CallToolResultAssumedComplete  # type: ignore[attr-defined]
    assert isinstance(message.result, v2026_07_28.CallToolResult)  # type: ignore[attr-defined]
    assert json.loads(encode(message)) == json.loads(raw)
    sent = b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [], "resultType": "complete"}}'
    assert json.loads(encode(decode(sent, assume_complete=True, **kw))) == json.loads(sent)


def test_the_variant_member_is_optional_never_null_with_the_same_wire_name() -> None:
    variant = v2026_07_28.CallToolResultAssumedComplete
    field = variant.model_fields["result_type"]
    assert not field.is_required() and field.serialization_alias == "resultType"
    with pytest.raises(ValidationError):
        variant.model_validate({"content": [], "resultType": None})
    # Its attribute name on the wire is an unknown member, not the field.
    twin = {"content": [], "result_type": "x"}
    decoded = variant.model_validate(twin)
    assert decoded.result_type is None
    assert decoded.model_dump(mode="json", by_alias=True, exclude_unset=True) == twin
    # Built in Python it has no preset: absent stays absent.
    assert json.loads(encode(variant(content=[]))) == {"content": []}
    assert json.loads(encode(v2026_07_28.CallToolResult(content=[]))) == {
        "content": [],
        "resultType": "complete",
    }


def test_a_union_result_has_a_union_of_variants() -> None:
    working = {
        "taskId": "t",
        "status": "working",
        "createdAt": "a",
        "lastUpdatedAt": "b",
        "ttlMs": None,
    }
    variant: TypeAdapter[Any] = TypeAdapter(tasks.GetTaskResultAssumedComplete)
    read = variant.validate_python(working)
    assert type(read) is tasks.GetTaskResultWorkingAssumedComplete
    assert isinstance(read, tasks.GetTaskResultWorking)
    with pytest.raises(ValidationError):
        TypeAdapter(tasks.GetTaskResult).validate_python(working)
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": working})
    message = decode(
        raw,
        version="2026-07-28",
        method="tasks/get",
        extensions=[TASKS_EXTENSION],
        assume_complete=True,
    )
    assert type(message.result) is tasks.GetTaskResultWorkingAssumedComplete  # type: ignore[attr-defined]
    assert json.loads(encode(message)) == json.loads(raw)


@pytest.mark.parametrize("package", [v2026_07_28, tasks])
def test_every_complete_result_requiring_result_type_has_its_variant(package: Any) -> None:
    entry: RequestMethod
    for entry in package.REQUESTS.values():
        assert entry.assumed_complete_name == entry.result_name + "AssumedComplete"
        if isinstance(entry.result, type):
            assert entry.assumed_complete.__mro__[1] is entry.result
            assert not entry.assumed_complete.model_fields["result_type"].is_required()


@pytest.mark.parametrize("package", [v2024_11_05, v2025_11_25])
def test_results_without_result_type_have_no_variant(package: Any) -> None:
    assert all(e.assumed_complete_name is None for e in package.REQUESTS.values())
    assert all(e.assumed_complete is None for e in package.REQUESTS.values())
    models = importlib.import_module(package.__name__ + ".models")
    assert not [name for name in models.__all__ if name.endswith("AssumedComplete")]
