"""Generator rules on small schemas: a few lines of schema in, the Python out.

Each ``tests/golden/<case>.json`` is compiled the way ``make regen`` compiles a
pinned schema; the result must equal ``tests/golden/<case>.py`` byte for byte.
A rule change shows up here as a readable diff. The rules that refuse a schema
(``BuildError``) and the overlay guard are checked inline below.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from codegen import passes, render, spec
from codegen.build import Builder, BuildError
from codegen.generate import format_sources

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in GOLDEN.glob("*.json"))


def compile_schema(case: str, schema: dict[str, Any]) -> str:
    pin = spec.Pin(
        key=case,
        package=case,
        base=None,
        repository="tests/golden",
        commit="-",
        path=f"{case}.json",
        local=f"{case}.json",
        sha256="-",
        docs=f"https://example.invalid/{case}",
    )
    module = passes.prepare(Builder(pin, schema, {}).build())
    where = Path(case, "models.py")
    return format_sources({where: render.render_models(module, render.environment())})[where]


def test_every_case_has_its_expected_output() -> None:
    assert CASES
    assert sorted(p.stem for p in GOLDEN.glob("*.py")) == CASES


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str) -> None:
    produced = compile_schema(case, json.loads((GOLDEN / f"{case}.json").read_text()))
    expected = (GOLDEN / f"{case}.py").read_text()
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            produced.splitlines(keepends=True),
            f"tests/golden/{case}.py",
            "produced",
        )
    )
    assert produced == expected, diff


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    (
        "two inline objects would share a name",
        {"A": _obj(bC=_obj(x={"type": "string"})), "AB": _obj(c=_obj(y={"type": "string"}))},
        "class name 'ABC' is taken already",
    ),
    (
        "an inline union arm without a const to name it",
        {"A": {"anyOf": [_obj(x={"type": "string"}), _obj(y={"type": "string"})]}},
        "cannot name an inline union arm",
    ),
    (
        "a keyword the generator does not handle",
        {"A": {"type": "string", "pattern": "^a"}},
        "unsupported keywords ['pattern']",
    ),
    (
        "a required member that is not a property",
        {"A": {**_obj(x={"type": "string"}), "required": ["y"]}},
        "required ['y'] not among its properties",
    ),
    (
        "two members with one attribute name",
        {"A": _obj(fooBar={"type": "string"}, foo_bar={"type": "string"})},
        "attribute names collide: ['foo_bar']",
    ),
    (
        "allOf parts that disagree",
        {"A": {"allOf": [{"type": "string"}, {"type": "integer"}]}},
        "allOf: conflicting 'type'",
    ),
    (
        "a reference outside $defs",
        {"A": _obj(x={"$ref": "other.json#/B"})},
        "unsupported $ref 'other.json#/B'",
    ),
]


@pytest.mark.parametrize(
    ("defs", "message"), [(d, m) for _, d, m in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_refused(defs: dict[str, Any], message: str) -> None:
    with pytest.raises(BuildError) as raised:
        compile_schema("refused", {"$defs": defs})
    assert message in str(raised.value)


def test_overlay_applies_only_over_the_value_it_expects() -> None:
    schema = {"$defs": {"A": {"type": "number", "description": "upstream prose"}}}
    overlay = {
        "id": "a-integer",
        "pointer": "/$defs/A/type",
        "expect": "number",
        "value": "integer",
    }
    spec.apply_overlay(schema, overlay, "golden")
    assert schema == {"$defs": {"A": {"type": "integer", "description": "upstream prose"}}}
    with pytest.raises(spec.SpecError, match="'a-integer' is fixed upstream in 'golden'"):
        spec.apply_overlay(schema, overlay, "golden")  # upstream "fixed" it: drop the overlay
    schema["$defs"]["A"]["type"] = "string"
    with pytest.raises(spec.SpecError, match="'a-integer' no longer applies to 'golden'"):
        spec.apply_overlay(schema, overlay, "golden")  # upstream moved on: review it


def test_overlay_expectation_ignores_descriptions_only() -> None:
    schema: dict[str, Any] = {"$defs": {"A": {"type": "number", "description": "reworded"}}}
    overlay = {
        "id": "a-nullable",
        "pointer": "/$defs/A",
        "expect": {"type": "number"},
        "value": {"type": ["number", "null"]},
    }
    spec.apply_overlay(schema, overlay, "golden")
    assert schema["$defs"]["A"] == {"type": ["number", "null"]}
    changed = {"$defs": {"A": {"type": "number", "minimum": 0}}}
    with pytest.raises(spec.SpecError, match="'a-nullable' no longer applies to 'golden'"):
        spec.apply_overlay(changed, overlay, "golden")  # upstream changed otherwise
