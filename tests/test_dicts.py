"""The plain-dict view: one TypedDict per definition, validated by the models' rules."""

from __future__ import annotations

import importlib
import json
from typing import Any, get_type_hints

import pytest
from pydantic import TypeAdapter, ValidationError
from typing_extensions import is_typeddict

from codegen.spec import pins

PACKAGES = [f"mcp_schema.{pin.package}" for pin in pins().values()]


@pytest.mark.parametrize("package", PACKAGES)
def test_one_typeddict_per_model_under_the_same_name(package: str) -> None:
    models = importlib.import_module(f"{package}.models")
    dicts = importlib.import_module(f"{package}.dicts")
    assert dicts.__all__ == models.__all__
    for name in models.__all__:
        model, view = getattr(models, name), getattr(dicts, name)
        if isinstance(model, type):
            assert is_typeddict(view), name
            wire = {f.alias or n for n, f in model.model_fields.items()}
            assert set(get_type_hints(view)) == wire, name


def check(name: str, value: Any, version: str = "v2026_07_28") -> Any:
    dicts = importlib.import_module(f"mcp_schema.{version}.dicts")
    return TypeAdapter(getattr(dicts, name)).validate_json(json.dumps(value))


TOOL = {"name": "t", "inputSchema": {"type": "object", "$schema": "x", "extra": [1, 2.5]}}


def test_valid_json_comes_back_as_the_same_plain_values() -> None:
    result = {
        "resultType": "complete",
        "tools": [TOOL],
        "nextCursor": "c",
        "cacheScope": "private",
        "ttlMs": 0,
        "_meta": {"io.x/y": {"z": None}},
        "unknown": {"deep": [True, None, 1e300]},
    }
    parsed = check("ListToolsResult", result)
    assert parsed == result
    assert type(parsed["tools"][0]["inputSchema"]) is dict
    assert parsed["unknown"]["deep"][2] == 1e300


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Tool", {**TOOL, "title": None}),  # optional means absent, not null
        ("Tool", {**TOOL, "name": 5}),  # strict strings
        ("ProgressNotificationParams", {"progressToken": 1, "progress": "1"}),  # strict numbers
        ("ProgressNotificationParams", {"progressToken": 1, "progress": True}),
        ("TextContent", {"type": "image", "text": "x"}),  # discriminated by type
        ("ContentBlock", {"type": "nope"}),
        ("Tool", {"name": "t"}),  # required member missing
    ],
)
def test_the_models_rules_refuse(name: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        check(name, value)


def test_integral_float_is_an_integer_and_result_type_selects_the_arm() -> None:
    assert check("ProgressNotificationParams", {"progressToken": 1, "progress": 5.0}) == {
        "progressToken": 1,
        "progress": 5,
    }
    # resultType "input_required" selects InputRequiredResult: CallToolResult's
    # required content is then not asked for.
    dicts = importlib.import_module("mcp_schema.v2026_07_28.dicts")
    response = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "input_required", "inputRequests": {}},
    }
    assert TypeAdapter(dicts.CallToolResultResponse).validate_python(response) == response
    with pytest.raises(ValidationError):
        TypeAdapter(dicts.CallToolResultResponse).validate_python(
            {**response, "result": {"resultType": "complete"}}
        )
