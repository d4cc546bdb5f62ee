"""`ByTag`: a union sorted by a shared required member accepts, and picks,
exactly what the plain union (pydantic's smart mode) does, only faster."""

from __future__ import annotations

import importlib
import typing
from typing import Annotated, Any, Literal, Union

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from codegen.build import find_tag
from mcp_schema.base import ByTag, McpModel
from mcp_schema.registry import COMPILED
from mcp_schema.testing import definitions


def _tagged_unions() -> list[tuple[str, str | None, str, str, Any]]:
    """(version, extension, view, definition name, alias) of every generated
    union marked `ByTag`."""
    found = []
    for compiled in COMPILED:
        for view in ("models", "dicts"):
            module = importlib.import_module(f"{compiled.package}.{view}")
            for name in module.__all__:
                alias = getattr(module, name)
                if typing.get_origin(alias) is Annotated and any(
                    isinstance(m, ByTag) for m in typing.get_args(alias)[1:]
                ):
                    found.append((compiled.version, compiled.extension, view, name, alias))
    return found


TAGGED = _tagged_unions()


def test_the_element_schemas_of_elicitation_are_sorted_by_type() -> None:
    names = {(version, name) for version, _, view, name, _ in TAGGED if view == "models"}
    assert ("2025-06-18", "PrimitiveSchemaDefinition") in names
    assert ("2025-11-25", "PrimitiveSchemaDefinition") in names
    assert ("2026-07-28", "EnumSchema") in names


def _outcome(adapter: TypeAdapter[Any], value: Any) -> tuple[str, Any] | None:
    try:
        validated = adapter.validate_python(value)
    except ValidationError:
        return None
    if isinstance(validated, BaseModel):
        return type(validated).__name__, validated.model_dump(mode="json", exclude_unset=True)
    return type(validated).__name__, validated


def _variants(value: Any, tags: list[str]) -> list[Any]:
    """The drawn value, and the same with its tag member changed or removed."""
    out = [value]
    if isinstance(value, dict) and "type" in value:
        out += [{**value, "type": tag} for tag in tags]
        out.append({k: v for k, v in value.items() if k != "type"})
    return out


@pytest.mark.parametrize(
    ("version", "extension", "view", "name", "alias"),
    TAGGED,
    ids=[
        f"{version}-{extension or ''}-{view}-{name}" for version, extension, view, name, _ in TAGGED
    ],
)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_sorting_by_tag_changes_nothing_but_the_cost(
    data: st.DataObject, version: str, extension: str | None, view: str, name: str, alias: Any
) -> None:
    union, marker = typing.get_args(alias)[0], typing.get_args(alias)[1]
    tagged, plain = TypeAdapter(alias), TypeAdapter(union)
    assert tagged.core_schema["type"] != plain.core_schema["type"]  # the marker took effect
    value = data.draw(definitions(version, extension)[name])
    tags = ["string", "number", "integer", "boolean", "array", "object"]
    for variant in _variants(value, tags):
        assert _outcome(tagged, variant) == _outcome(plain, variant), (marker, variant)


def test_a_union_it_cannot_read_is_left_as_it_is() -> None:
    class Named(McpModel):
        kind: Literal["a"]

    class Open(McpModel):
        kind: str  # no allowed values to sort by

    marked = TypeAdapter(Annotated[Union[Named, Open], ByTag("kind")])
    assert marked.core_schema == TypeAdapter(Union[Named, Open]).core_schema
    assert type(marked.validate_python({"kind": "b"})) is Open


def _arm(**consts: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: value for key, value in consts.items()},
        "required": sorted(consts),
    }


def test_the_generator_sorts_by_a_member_only_when_every_arm_allows_strings() -> None:
    text, enum, number = (
        _arm(type={"const": "string"}),
        _arm(type={"const": "string"}, enum={"type": "array"}),
        _arm(type={"enum": ["integer", "number"]}),
    )
    assert find_tag([text, enum, number]) == "type"
    assert find_tag([text, enum]) is None  # one value: nothing to sort by
    assert find_tag([text, _arm(type={"type": "string"})]) is None  # an arm allows any string
    optional = {**number, "required": []}
    assert find_tag([text, enum, optional]) is None  # an arm may leave it out
    assert find_tag([text, _arm(type={"const": 1})]) is None  # not strings
    merged = _arm(type={"allOf": [{"type": "string"}, {"const": "boolean"}]})
    assert find_tag([text, enum, merged]) == "type"  # a merged property's parts count
