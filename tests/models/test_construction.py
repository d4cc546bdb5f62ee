"""Models built in Python: attribute names, presets, ``None`` as absent, and
response envelopes that write their whole result."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

import mcp_schema.v2025_11_25 as old
import mcp_schema.v2026_07_28 as v
from mcp_schema.base import McpModel, _construction
from mcp_schema.codec import ResultResponse, decode, encode
from mcp_schema.errors import InvalidParamsError


def wire(model: McpModel) -> Any:
    return json.loads(encode(model))


def test_single_value_members_are_preset_and_written() -> None:
    assert wire(v.TextContent(text="x")) == {"type": "text", "text": "x"}
    note = v.ToolListChangedNotification()
    assert wire(note) == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def test_a_given_preset_value_wins_and_is_still_checked() -> None:
    assert wire(v.TextContent(type="text", text="x"))["type"] == "text"
    with pytest.raises(ValidationError):
        v.TextContent(type="image", text="x")


def test_complete_results_preset_result_type_only_at_construction() -> None:
    assert wire(v.CallToolResult(content=[])) == {"content": [], "resultType": "complete"}
    assert wire(v.InputRequiredResult(request_state="s")) == {
        "requestState": "s",
        "resultType": "input_required",
    }
    # Decoding never invents it: lenient decoding keeps it absent.
    raw = b'{"jsonrpc": "2.0", "id": 1, "result": {"content": []}}'
    with pytest.raises(InvalidParamsError):
        decode(raw, version="2026-07-28", method="tools/call")
    lenient = decode(raw, version="2026-07-28", method="tools/call", assume_complete=True)
    assert json.loads(encode(lenient)) == json.loads(raw)


def test_decoding_still_requires_preset_members() -> None:
    with pytest.raises(ValidationError):
        v.TextContent.model_validate({"text": "x"})
    with pytest.raises(InvalidParamsError):
        decode(
            b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"text": "x"}]}}',
            version="2025-11-25",
            method="tools/call",
        )


def test_none_for_an_omittable_member_is_absent() -> None:
    cursor: str | None = None
    assert wire(
        v.ListToolsResult(tools=[], next_cursor=cursor, cache_scope="public", ttl_ms=0)
    ) == {
        "tools": [],
        "resultType": "complete",
        "cacheScope": "public",
        "ttlMs": 0,
    }
    assert wire(old.ListToolsResult(tools=[], next_cursor="c")) == {
        "tools": [],
        "nextCursor": "c",
    }
    # ...while an explicit null on the wire is still refused.
    with pytest.raises(InvalidParamsError):
        decode(
            b'{"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "nextCursor": null}}',
            version="2025-11-25",
            method="tools/list",
        )


def test_nullable_members_keep_null() -> None:
    result = v.CallToolResult(content=[], structured_content=None)
    assert wire(result) == {"content": [], "resultType": "complete", "structuredContent": None}


def test_attribute_names_build_and_wire_names_decode() -> None:
    built = v.ReadResourceResult(contents=[], ttl_ms=5)
    assert wire(built) == {"contents": [], "resultType": "complete", "ttlMs": 5}
    decoded = v.ReadResourceResult.model_validate_json(
        b'{"contents": [], "resultType": "complete", "ttl_ms": 5}'
    )
    assert decoded.ttl_ms is None
    assert decoded.model_extra == {"ttl_ms": 5}


def test_result_response_writes_the_whole_result_or_refuses_it() -> None:
    result = v.CallToolResult(content=[v.TextContent(text="hi")], is_error=True)
    with pytest.raises(ValidationError):
        ResultResponse[v.ListToolsResult](id=1, result=result)
    response = ResultResponse[BaseModel](id=1, result=result)
    assert wire(response) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [{"type": "text", "text": "hi"}],
            "isError": True,
            "resultType": "complete",
        },
    }


def _preset_only_classes() -> list[type[McpModel]]:
    found = []
    for package in (old, v):
        for name in package.__all__:
            cls = getattr(package, name)
            if not (isinstance(cls, type) and issubclass(cls, McpModel)):
                continue
            presets = {p[0] for p in _construction(cls).presets}
            required = {n for n, f in cls.model_fields.items() if f.is_required()}
            if presets and required <= presets:
                found.append(cls)
    return found


PRESET_ONLY = _preset_only_classes()


def test_preset_only_classes_exist() -> None:
    assert len(PRESET_ONLY) >= 10


@pytest.mark.parametrize("cls", PRESET_ONLY, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_a_model_of_presets_only_builds_with_no_arguments_and_decodes_back(
    cls: type[McpModel],
) -> None:
    built = cls()
    raw = encode(built)
    again = cls.model_validate_json(raw)
    assert encode(again) == raw
    assert set(json.loads(raw)) == {wire for _, wire, _ in _construction(cls).presets}


@given(st.text(), st.one_of(st.none(), st.text()))
def test_text_content_round_trips(text: str, cursor: str | None) -> None:
    result = old.ListResourcesResult(resources=[], next_cursor=cursor)
    decoded = decode(encode(ResultResponse(id=1, result=result)), method="resources/list")
    assert json.loads(encode(decoded))["result"] == (
        {} if cursor is None else {"nextCursor": cursor}
    ) | {"resources": []}
    content = v.TextContent(text=text)
    assert v.TextContent.model_validate_json(encode(content)) == content
