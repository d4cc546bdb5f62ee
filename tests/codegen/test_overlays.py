"""Each overlay: the raw upstream schema shows the defect, the overlaid one and
the models accept the legal message."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from jsonschema.protocols import Validator
from pydantic import TypeAdapter, ValidationError

from codegen import spec
from mcp_schema import v2024_11_05, v2025_03_26, v2025_06_18, v2025_11_25, v2026_07_28


def oracle(key: str, name: str, *, patched: bool) -> Validator:
    # The validator of the schema's own draft (draft-07 before 2025-11-25).
    schema = spec.load(key, patched=patched)
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    validator: type[Validator] = jsonschema.validators.validator_for(schema)
    return validator(root)


PARSE_ERROR_NULL_ID: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32700, "message": "Parse error"},
}

CASES: list[tuple[str, str, str, Any, Any]] = [
    # overlay id, schema, def, legal instance, models package
    *(
        (
            "error-response-null-id-draft-07",
            package.VERSION,
            "JSONRPCError",
            PARSE_ERROR_NULL_ID,
            package,
        )
        for package in (v2024_11_05, v2025_03_26, v2025_06_18)
    ),
    (
        "elicit-result-number-2025-06-18",
        "2025-06-18",
        "ElicitResult",
        {"action": "accept", "content": {"confidence": 0.75}},
        v2025_06_18,
    ),
    (
        "json-value-number-null",
        "2026-07-28",
        "JSONValue",
        {"ratio": 0.5, "none": None},
        v2026_07_28,
    ),
    (
        "elicit-result-number",
        "2026-07-28",
        "ElicitResult",
        {"action": "accept", "content": {"confidence": 0.75}},
        v2026_07_28,
    ),
    (
        "elicit-result-number",
        "2025-11-25",
        "ElicitResult",
        {"action": "accept", "content": {"confidence": 0.75}},
        v2025_11_25,
    ),
    (
        "error-response-null-id-2025",
        "2025-11-25",
        "JSONRPCErrorResponse",
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        v2025_11_25,
    ),
    (
        "error-response-null-id-2026",
        "2026-07-28",
        "JSONRPCErrorResponse",
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        v2026_07_28,
    ),
    (
        "read-resource-result-cache-hints",
        "2026-07-28",
        "ReadResourceResult",
        {"resultType": "complete", "contents": [{"uri": "a.txt", "text": "x"}]},
        v2026_07_28,
    ),
]


@pytest.mark.parametrize(
    ("overlay", "key", "name", "instance", "package"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES]
)
def test_overlay_fixes_the_defect(
    overlay: str, key: str, name: str, instance: Any, package: Any
) -> None:
    assert overlay in {o["id"] for o in spec.overlays_for(key)}
    assert not oracle(key, name, patched=False).is_valid(instance), "the upstream defect is gone"
    assert oracle(key, name, patched=True).is_valid(instance)
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(package, name))
    model = adapter.validate_python(instance)
    assert adapter.dump_python(model, mode="json", by_alias=True, exclude_unset=True) == instance


def test_input_required_result_type_decides_the_arm() -> None:
    complete: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}
    # Raw schema: a complete result with no content passes as input-required.
    assert oracle("2026-07-28", "CallToolResultResponse", patched=False).is_valid(complete)
    assert not oracle("2026-07-28", "CallToolResultResponse", patched=True).is_valid(complete)
    with pytest.raises(ValidationError):
        v2026_07_28.CallToolResultResponse.model_validate(complete)
    asking = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "input_required", "requestState": "s"},
    }
    message = v2026_07_28.CallToolResultResponse.model_validate(asking)
    assert isinstance(message.result, v2026_07_28.InputRequiredResult)


def test_every_overlay_is_tested() -> None:
    tested = {c[0] for c in CASES} | {"input-required-result-type"}
    declared = {
        o["id"] for o in json.loads((spec.SCHEMA_DIR / "overlays.json").read_text())["overlays"]
    }
    assert declared == tested


def test_an_overlay_that_no_longer_applies_fails_loudly() -> None:
    schema = spec.load("2026-07-28", patched=False)
    overlay = dict(spec.overlays_for("2026-07-28")[0], expect={"type": "string"})
    with pytest.raises(spec.SpecError, match="no longer applies"):
        spec.apply_overlay(schema, overlay, "2026-07-28")


def test_an_overlay_fixed_upstream_says_to_drop_it() -> None:
    overlay = spec.overlays_for("2026-07-28")[0]
    schema = spec.load("2026-07-28", patched=False)
    spec.apply_overlay(schema, overlay, "2026-07-28")  # the schema as if fixed upstream
    with pytest.raises(spec.SpecError, match=r"fixed upstream.*Drop the overlay"):
        spec.apply_overlay(schema, overlay, "2026-07-28")
