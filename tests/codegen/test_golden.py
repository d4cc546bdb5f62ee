"""Generator rules on small schemas: a few lines of schema in, the Python out.

Each ``tests/golden/<case>.json`` is compiled the way ``make regen`` compiles a
pinned schema; its models must equal ``tests/golden/<case>.py`` and its
validation document ``tests/golden/<case>.validation.json`` byte for byte. A
case with ``x-results`` (method -> result, what ``schema/results.json`` says
of a pinned schema) gets method tables and the classes derived for them. A
rule change shows up here as a readable diff. The rules that refuse a schema
(``BuildError``) and the overlay guard are checked inline below.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from codegen import ir, passes, render, spec, validation
from codegen.build import Builder
from codegen.generate import format_sources, with_methods
from codegen.ir import BuildError

GOLDEN = Path(__file__).parents[1] / "golden"
VALIDATION = ".validation.json"
CASES = sorted(p.stem for p in GOLDEN.glob("*.json") if not p.name.endswith(VALIDATION))
OUTPUTS = {"models.py": ".py", "validation.json": VALIDATION}
"""Each output of a case, and the suffix of the file that holds what it must be."""


def compile_schema(case: str, schema: dict[str, Any]) -> dict[str, str]:
    """The case's ``models.py`` and ``validation.json``, by file name."""
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
    builder = Builder(pin, schema, {})
    module = builder.build()
    results = schema.get("x-results")
    if results is None:
        module = passes.prepare(module)
    else:
        module = with_methods(builder, module, {"results": results}, _classes(module))
    where = Path(case, "models.py")
    models = format_sources({where: render.render_models(module, render.environment())})[where]
    return {"models.py": models, "validation.json": validation.render_validation(module, None)}


def _classes(module: ir.Module) -> dict[str, ir.ModelClass]:
    return {c.name: c for c in module.classes}


def test_every_case_has_its_expected_output() -> None:
    assert CASES
    assert sorted(p.stem for p in GOLDEN.glob("*.py")) == CASES
    assert sorted(p.name.removesuffix(VALIDATION) for p in GOLDEN.glob(f"*{VALIDATION}")) == CASES


@pytest.mark.parametrize(("case", "output"), [(c, o) for c in CASES for o in OUTPUTS])
def test_golden(case: str, output: str) -> None:
    produced = compile_schema(case, json.loads((GOLDEN / f"{case}.json").read_text()))[output]
    where = GOLDEN / f"{case}{OUTPUTS[output]}"
    expected = where.read_text()
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            produced.splitlines(keepends=True),
            f"tests/golden/{where.name}",
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


def _messages(**defs: Any) -> dict[str, Any]:
    """A draft-07-like schema with its envelopes and one request ``a``, with ``defs`` over it."""
    request_id = {"type": ["string", "integer"]}
    envelope = _obj(id=request_id, jsonrpc={"const": "2.0"}, method={"type": "string"})
    error = _obj(id=request_id, error=_obj(code={"type": "integer"}))
    base = {
        "JSONRPCRequest": {**envelope, "required": ["id", "jsonrpc", "method"]},
        "JSONRPCError": error,
        "ARequest": {**_obj(method={"const": "a"}), "required": ["method"]},
        "AResult": {**_obj(resultType={"type": "string"}), "required": ["resultType"]},
        "ClientRequest": {"anyOf": [{"$ref": "#/$defs/ARequest"}]},
    }
    return {"$defs": {**base, **defs}, "x-results": {"a": "AResult"}}


DERIVATIONS_REFUSED: list[tuple[str, dict[str, Any], str]] = [
    (
        "a closed message cannot take its envelope's members",
        _messages(ARequest={**_obj(method={"const": "a"}), "additionalProperties": False}),
        "cannot merge JSONRPCRequest into a closed object",
    ),
    (
        "a member the envelope types otherwise",
        _messages(ARequest=_obj(method={"const": "a"}, id={"type": "boolean"})),
        "cannot type a member as both",
    ),
    (
        "the whole message's name is taken",
        _messages(JSONRPCARequest=_obj(x={"type": "string"})),
        "class name 'JSONRPCARequest' is taken already",
    ),
    (
        "the variant's name is taken",
        _messages(AResultAssumedComplete=_obj(x={"type": "string"})),
        "'AResultAssumedComplete' is taken already",
    ),
]


@pytest.mark.parametrize(
    ("schema", "message"),
    [(s, m) for _, s, m in DERIVATIONS_REFUSED],
    ids=[r[0] for r in DERIVATIONS_REFUSED],
)
def test_derivations_refused(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(BuildError) as raised:
        compile_schema("refused", schema)
    assert message in str(raised.value)


def test_a_derived_class_may_not_go_ahead_of_its_base_in_a_cycle() -> None:
    # A cycle through classes puts the one with the fewest names left first,
    # quoting them; a base class cannot be quoted.
    def member(name: str) -> ir.Field:
        return ir.Field(name.lower(), name.lower(), ir.Ref(name), False, False)

    parent = ir.ModelClass("A", "A", "-", (member("B"), member("C")), False)
    child = ir.ModelClass("B", "-", "-", (), False, extends="A")
    other = ir.ModelClass("C", "C", "-", (member("A"),), False)
    module = ir.Module("k", "k", "k", "-", "-", (parent, child, other))
    with pytest.raises(BuildError, match="its base class A is part of a reference cycle"):
        passes.ordered(module)
