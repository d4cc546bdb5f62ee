"""The dict view's JSON Schema documents (``<package>/validation.json``).

Whether each definition accepts exactly what the upstream schema does is the
conformance engine's job (tests/package/test_conformance.py). Here: every name a
package exports has its entry, the documents are deterministic and
canonical, an extension's references to its base resolve, and each IR
construct means what the models mean, on hand-written cases.
"""

from __future__ import annotations

import importlib
import json
from importlib.resources import files
from typing import Any

import jsonschema_rs
import pytest

from codegen import ir, validation
from codegen.generate import PACKAGE_DIR, build_all, package_path
from codegen.ir import BuildError
from mcp_schema.registry import COMPILED
from tests.engines import conformance as c

KEYS = [compiled.key for compiled in COMPILED]
TASKS = "2026-07-28/tasks"


def document(key: str) -> dict[str, Any]:
    """The document as the installed package ships it."""
    loaded: dict[str, Any] = json.loads(
        files(c.package_of(key)).joinpath("validation.json").read_text()
    )
    return loaded


@pytest.mark.parametrize("key", KEYS)
def test_every_exported_definition_has_an_entry(key: str) -> None:
    doc = document(key)
    models = importlib.import_module(c.package_of(key) + ".models")
    assert set(doc["$defs"]) == set(models.__all__)
    assert set(c.def_names(key)) <= set(doc["$defs"])
    assert doc["$id"] == f"urn:mcp-schema:{key}"
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_documents_are_deterministic_and_canonical() -> None:
    first, second = build_all(), build_all()
    for key, module in first.modules.items():
        base = first.base_of(module)
        text = validation.render_validation(module, base)
        assert text == validation.render_validation(second.modules[key], base)
        on_disk = (PACKAGE_DIR.parent / package_path(module) / "validation.json").read_text()
        assert text == on_disk
        assert text == json.dumps(json.loads(text), sort_keys=True, indent=1) + "\n"


def test_a_derived_definition_is_its_whole_object() -> None:
    defs = document("2025-06-18")["$defs"]
    merged = defs["JSONRPCCallToolRequest"]
    assert merged["required"] == ["method", "params", "id", "jsonrpc"]
    assert merged["properties"]["params"] == {"$ref": "#/$defs/JSONRPCCallToolRequestParams"}
    assert merged["properties"]["jsonrpc"] == {"const": "2.0"}
    assert defs["JSONRPCCallToolRequestParams"]["properties"]["_meta"] == {
        "$ref": "#/$defs/JSONRPCRequestParamsMeta"
    }
    variant = document("2026-07-28")["$defs"]["CallToolResultAssumedComplete"]
    assert variant["required"] == ["content"]
    assert variant["properties"] == document("2026-07-28")["$defs"]["CallToolResult"]["properties"]


def test_the_extension_refers_to_its_base_across_documents() -> None:
    core, tasks = document("2026-07-28"), document(TASKS)
    reused = {
        name for name, entry in tasks["$defs"].items() if entry.get("$ref", "").startswith("urn:")
    }
    assert "Tool" in reused and "GetTaskRequest" not in reused
    assert all(name in core["$defs"] for name in reused)
    text = json.dumps(tasks)
    assert '"#/$defs/Tool"' not in text  # every use of a reused one goes to the base
    with pytest.raises(jsonschema_rs.ValidationError, match="urn:mcp-schema:2026-07-28"):
        jsonschema_rs.validator_map_for(tasks)

    registry = jsonschema_rs.Registry([(core["$id"], core)])
    views = jsonschema_rs.validator_map_for(tasks, registry=registry, validate_formats=False)
    missing = [name for name in tasks["$defs"] if views.get(f"#/$defs/{name}") is None]
    assert missing == []
    tool = views.get("#/$defs/Tool")
    assert tool is not None
    assert tool.is_valid({"name": "t", "inputSchema": {"type": "object"}})
    assert not tool.is_valid({"name": "t"})
    failed = {
        "taskId": "1",
        "status": "failed",
        "createdAt": "x",
        "lastUpdatedAt": "x",
        "ttlMs": None,
        "resultType": "complete",
        "error": {"code": -1, "message": "m"},
    }
    get_task = views.get("#/$defs/GetTaskResult")
    assert get_task is not None and get_task.is_valid(failed)
    assert not get_task.is_valid({**failed, "error": {"code": "x", "message": "m"}})


# -- each construct, on a module written by hand --------------------------------------


def _field(wire: str, t: ir.TypeExpr, *, required: bool = False) -> ir.Field:
    return ir.Field(wire, wire, t, required, nullable=False)


def _class(name: str, *fields: ir.Field, **options: Any) -> ir.ModelClass:
    return ir.ModelClass(name, name, "-", fields, **{"closed": False, **options})


STR = ir.Scalar("str", min_length=1, max_length=3)
INT = ir.Scalar("int", minimum=0, maximum=10)
NUMBER = ir.Scalar("number", minimum=0.5)
HAND_WRITTEN = ir.Module(
    key="hand",
    version="hand",
    package="hand",
    sha256="-",
    source="-",
    definitions=(
        ir.Alias("Str", "-", STR),
        ir.Alias("Int", "-", INT),
        ir.Alias("Number", "-", NUMBER),
        ir.Alias("Bool", "-", ir.Scalar("bool")),
        ir.Alias("Null", "-", ir.Scalar("null")),
        ir.Alias("Anything", "-", ir.Scalar("any")),
        ir.Alias("One", "-", ir.Const(("a",))),
        ir.Alias("Several", "-", ir.Const(("a", 1, None))),
        ir.Alias("Items", "-", ir.Array(ir.Ref("Int"), min_items=1, max_items=2)),
        ir.Alias("Table", "-", ir.Map(ir.Scalar("bool"))),
        ir.Alias("Object", "-", ir.Map(ir.Scalar("any"))),
        ir.Alias("Either", "-", ir.Union_((ir.Ref("Int"), ir.Scalar("null")), discriminator=None)),
        _class(
            "Open",
            _field("name", ir.Scalar("str"), required=True),
            _field("count", INT),
            _field("note", ir.Union_((ir.Scalar("str"), ir.Scalar("null")))),
        ),
        _class("Closed", _field("name", ir.Scalar("str")), closed=True),
        _class("Typed", _field("name", ir.Scalar("str")), extra_type=ir.Scalar("int")),
    ),
)
CASES: list[tuple[str, Any, bool]] = [
    ("Str", "ab", True),
    ("Str", "", False),
    ("Str", "abcd", False),
    ("Str", 1, False),
    ("Int", 10, True),
    ("Int", 5.0, True),  # JSON Schema: an integral number is an integer
    ("Int", 11, False),
    ("Int", 1.5, False),
    ("Int", True, False),
    ("Number", 0.5, True),
    ("Number", 7, True),
    ("Number", 0.25, False),
    ("Number", "1", False),
    ("Bool", False, True),
    ("Bool", 0, False),
    ("Null", None, True),
    ("Null", {}, False),
    ("Anything", [None, {"x": 1}], True),
    ("One", "a", True),
    ("One", "b", False),
    ("Several", None, True),
    ("Several", 1, True),
    ("Several", True, False),
    ("Items", [1, 2], True),
    ("Items", [], False),
    ("Items", [1, 2, 3], False),
    ("Items", [11], False),
    ("Table", {"x": True}, True),
    ("Table", {"x": 1}, False),
    ("Table", [], False),
    ("Object", {"x": None}, True),
    ("Object", "x", False),
    ("Either", None, True),
    ("Either", 3, True),
    ("Either", "3", False),
    ("Open", {"name": "n", "unknown": [1]}, True),
    ("Open", {"count": 1}, False),  # a required member is missing
    ("Open", {"name": "n", "count": None}, False),  # optional is never null
    ("Open", {"name": "n", "note": None}, True),  # unless its type says so
    ("Open", {"name": "n", "count": 11}, False),
    ("Closed", {"name": "n"}, True),
    ("Closed", {"name": "n", "other": 1}, False),
    ("Typed", {"name": "n", "other": 1}, True),
    ("Typed", {"name": "n", "other": "1"}, False),
]


@pytest.mark.parametrize(("name", "value", "accepted"), CASES)
def test_each_construct_means_what_the_models_mean(name: str, value: Any, accepted: bool) -> None:
    views = jsonschema_rs.validator_map_for(validation.validation_document(HAND_WRITTEN, None))
    validator = views.get(f"#/$defs/{name}")
    assert validator is not None
    assert validator.is_valid(value) is accepted


def test_constructs_are_rendered_without_annotations() -> None:
    defs = validation.validation_document(HAND_WRITTEN, None)["$defs"]
    assert defs["Str"] == {"type": "string", "minLength": 1, "maxLength": 3}
    assert defs["Several"] == {"enum": ["a", 1, None]}
    assert defs["Anything"] == {}
    assert defs["Items"]["items"] == {"$ref": "#/$defs/Int"}
    assert defs["Open"]["required"] == ["name"] and "additionalProperties" not in defs["Open"]


def test_reused_definitions_need_a_base_document() -> None:
    orphan = ir.Module("x/y", "x", "x.y", "-", "-", (), imported={"Tool": "x.models"})
    with pytest.raises(BuildError, match="no base document"):
        validation.validation_document(orphan, None)
