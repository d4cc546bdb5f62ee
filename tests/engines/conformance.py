"""Differential conformance engine: generated models versus the JSON Schema oracle.

For every ``$defs`` entry of every compiled schema, valid instances are drawn
with hypothesis-jsonschema, mutated, and judged twice: by
the validator of the schema's own draft (2020-12, or draft-07 for
2024-11-05 to 2025-06-18) on the (overlaid) schema, the oracle, and
by the generated model through ``pydantic.TypeAdapter``. The model must accept
exactly what the oracle accepts, and every accepted value must survive
``validate_python`` -> ``dump_python(mode="json", by_alias=True,
exclude_unset=True)`` unchanged, JSON types included. This project's plain-dict
view (the package's ``validation.json`` definition, through jsonschema-rs) is
judged the same way; it returns the instance itself, so it cannot lose any.

The definitions the generator derives are judged too, against schemas
composed from the upstream definitions: a draft-07 ``JSONRPC<Name>`` against
``allOf`` of its envelope and ``<Name>``, a ``<Name>AssumedComplete`` against
``<Name>`` with ``resultType`` no longer required.

Used by ``tests/package/test_conformance.py`` (a few examples per definition, CI) and
as ``python -m tests.engines.conformance`` (``make conformance``; random seeds,
``$MCP_CONFORMANCE_EXAMPLES`` examples per definition, default 200).
"""

from __future__ import annotations

import base64
import copy
import importlib
import importlib.resources
import json
import math
import os
import random
import re
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jsonschema
import jsonschema_rs
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException, HypothesisWarning
from hypothesis_jsonschema import from_schema
from jsonschema.protocols import Validator
from pydantic import TypeAdapter, ValidationError

from codegen import spec
from codegen.validation import document_id
from mcp_schema.registry import COMPILED

SCHEMA_KEYS: tuple[str, ...] = tuple(compiled.key for compiled in COMPILED)

# Definitions for which hypothesis-jsonschema may fail to produce instances,
# keyed by (schema key, definition) with the reason. A definition that cannot
# generate and is not listed here fails the CI test. Keep it empty unless a
# generator limitation (not a model bug) is understood and written down.
GENERATION_ALLOWLIST: dict[tuple[str, str], str] = {}

# How often a definition that refers back to itself (2026-07-28 JSONValue ->
# JSONObject -> JSONValue) is expanded on one path before the recursion is cut.
# hypothesis-jsonschema cannot resolve recursive $refs at all.
RECURSION_DEPTH = 2

# Free-form JSON (``{}``, and the JSONValue / JSONObject definitions whose
# semantics is exactly "any JSON value / object" once the json-value-number-null
# overlay is applied) is drawn by Hypothesis' own recursive JSON strategy: a
# marker string with a custom format stands in for it in the schema given to
# hypothesis-jsonschema and is decoded afterwards. That is an order of
# magnitude faster than letting hypothesis-jsonschema canonicalise the unrolled
# recursion on every draw, and it nests deeper. Every drawn instance is still
# checked against the oracle, so a wrong marker shows up as a "bad sample".
JSON_DEFS = frozenset({"JSONValue", "JSONObject"})
_MARKER_FORMAT = "x-mcp-conformance-json-"
_SENTINEL = "\x00mcp-conformance-json:"

# Discrepancies kept per definition; the counts always cover all of them.
KEEP_PER_DEF = 3

FALSE_ACCEPT = "false accept"
FALSE_REJECT = "false reject"
LOSSY = "lossy"
ORACLE_REJECTS_SAMPLE = "oracle rejects generated instance"
MODEL_CRASH = "model crash"
NO_MODEL = "model not importable"

JSON = Any  # a JSON value as produced by json.loads

# One value of each JSON type, used to retype a member or a whole instance.
_PROBES: dict[str, JSON] = {
    "null": None,
    "boolean": True,
    "integer": 7,
    "number": 0.5,
    "string": "probe",
    "array": [],
    "object": {},
}

EXTRA_KEY = "x-extra-probe"

_MAGNITUDES: list[JSON] = [1e16, -6.02214076e23, 1.5e300, -1.7976931348623157e308, 5e-324, -0.0]


# --------------------------------------------------------------------------- JSON helpers


def json_type(value: JSON) -> str:
    """The JSON type name of a Python value; ``bool`` is checked before ``int``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__  # not JSON at all: never equal to a JSON type


def same_json(a: JSON, b: JSON) -> bool:
    """Equal JSON values of equal JSON types, recursively.

    ``True`` and ``1`` differ (``==`` would say equal). ``5`` and ``5.0`` are
    the same JSON number: the models read an integral float as an ``integer``
    and may write it back as an int. A number never equals a string.
    """
    ta, tb = json_type(a), json_type(b)
    numeric = {"integer", "number"}
    if ta in numeric and tb in numeric:
        return bool(a == b)
    if ta != tb:
        return False
    if ta == "array":
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if ta == "object":
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if ta in {"null", "boolean", "string"}:
        return bool(a == b)
    return False  # non-JSON Python objects leaked out of dump_python


def short(value: JSON, limit: int = 400) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


# --------------------------------------------------------------------------- schema side


@cache
def schema_of(key: str) -> dict[str, Any]:
    return spec.load(key)


def def_names(key: str) -> list[str]:
    return sorted(schema_of(key)["$defs"])


def dialect(key: str) -> type[Validator]:
    """The validator of the draft the schema names (draft-07 before 2025-11-25)."""
    validator: type[Validator] = jsonschema.validators.validator_for(schema_of(key))
    return validator


@cache
def oracle(key: str, name: str) -> Validator:
    # Format stays annotation-only (the default of both drafts): no format_checker.
    # spec.load gives draft-07 schemas the $defs layout; a $ref is a JSON
    # Pointer in either draft, so the definitions resolve where they are.
    schema = schema_of(key)
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], **upstream_schema(key, name)}
    _check_schema(key)
    return dialect(key)(root)


def upstream_schema(key: str, name: str) -> dict[str, Any]:
    """What ``name`` must accept, from the upstream definitions alone: a
    reference to the definition, or for a derived one, its composed schema."""
    derived = derived_defs(key)
    return derived[name] if name in derived else {"$ref": f"#/$defs/{name}"}


ENVELOPES = {"request_name": "JSONRPCRequest", "notification_name": "JSONRPCNotification"}
"""The draft-07 envelope of a whole message, by the table field that names the message."""
MERGED_PREFIX = "JSONRPC"
ASSUMED_COMPLETE = "AssumedComplete"


@cache
def derived_defs(key: str) -> dict[str, dict[str, Any]]:
    """The definitions the generator adds to schema ``key``'s own that the
    method tables name, each with the schema, composed of the upstream
    definitions, that it must accept exactly (what ``oracle`` judges by).

    ``JSONRPC<Name>``: ``allOf`` of the draft-07 envelope and ``<Name>``.
    ``<Name>AssumedComplete``: ``<Name>`` with ``resultType`` optional.
    """
    defs = schema_of(key)["$defs"]
    methods = importlib.import_module(package_of(key) + ".methods")
    package = package_of(key)
    out: dict[str, dict[str, Any]] = {}
    tables = (("request_name", methods.REQUESTS), ("notification_name", methods.NOTIFICATIONS))
    for field_name, table in tables:
        for entry in table.values():
            name = getattr(entry, field_name)
            if name in defs or entry.package != package:
                continue
            own = name.removeprefix(MERGED_PREFIX)
            if name != MERGED_PREFIX + own or own not in defs:
                raise ValueError(f"{key}: {name} is neither a definition nor JSONRPC<definition>")
            envelope = ENVELOPES[field_name]
            out[name] = {"allOf": [{"$ref": f"#/$defs/{envelope}"}, {"$ref": f"#/$defs/{own}"}]}
    for entry in methods.REQUESTS.values():
        name = entry.assumed_complete_name
        if name is None or entry.package != package:
            continue
        if name != entry.result_name + ASSUMED_COMPLETE:
            raise ValueError(f"{key}: {name} is not named for the result {entry.result_name}")
        out[name] = _member_optional({"$ref": f"#/$defs/{entry.result_name}"}, key, "resultType")
    return out


def derived_names(key: str) -> list[str]:
    return sorted(derived_defs(key))


def _member_optional(schema: Any, key: str, member: str) -> Any:
    """``schema`` with ``member`` no longer required of the instance itself:
    through ``$ref`` (inlined), ``allOf``, ``anyOf`` and ``oneOf``, never into
    members or items."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if "required" in out:
        out["required"] = [r for r in out["required"] if r != member]
    for applicator in ("allOf", "anyOf", "oneOf"):
        if applicator in out:
            out[applicator] = [_member_optional(sub, key, member) for sub in out[applicator]]
    if "$ref" not in out:
        return out
    target = _member_optional(schema_of(key)["$defs"][_ref_name(out.pop("$ref"))], key, member)
    return {"allOf": [target, out]} if out else target


@cache
def _check_schema(key: str) -> None:
    # Against the metaschema once per schema, not per definition: it costs ~0.5 s.
    # Draft-07's metaschema knows its definitions under `definitions` only.
    schema = schema_of(key)
    where = "definitions" if schema["$schema"] == spec.DRAFT_07 else "$defs"
    dialect(key).check_schema({"$schema": schema["$schema"], where: schema["$defs"]})


def _refs(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.add(v.rsplit("/", 1)[-1])
            else:
                _refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _refs(v, out)
    return out


@cache
def cyclic_defs(key: str) -> frozenset[str]:
    """Definitions that can reach themselves through ``$ref``."""
    defs = schema_of(key)["$defs"]
    graph = {n: _refs(s, set()) for n, s in defs.items()}
    cyclic = set()
    for start in graph:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(graph.get(n, ()))
        if start in seen:
            cyclic.add(start)
    return frozenset(cyclic)


def _ref_name(ref: str) -> str:
    if not ref.startswith("#/$defs/") or "/" in ref[len("#/$defs/") :]:
        raise ValueError(f"unsupported $ref {ref!r}")
    return ref[len("#/$defs/") :]


# Keywords without effect on validation (and $ref, resolved separately).
_ANNOTATIONS = frozenset(
    {"$ref", "$schema", "$id", "$comment", "description", "title", "default", "examples"}
)


def _inline(node: Any, key: str, path: tuple[str, ...], cut: bool) -> Any:
    """``node`` with every ``$ref`` replaced by the definition it names.

    ``path`` holds the definitions being expanded. A cyclic definition is
    expanded at most RECURSION_DEPTH times per path; one level deeper it is
    expanded with ``cut`` set, which turns further cyclic refs into ``false``.
    For JSONValue that leaves scalars and ``[]``, for JSONObject ``{}``:
    subsets of the real definitions, so every instance stays valid.
    """
    if isinstance(node, list):
        return [_inline(v, key, path, cut) for v in node]
    if not isinstance(node, dict):
        return node
    defs = schema_of(key)["$defs"]
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k in _ANNOTATIONS:
            continue  # dead weight that hypothesis-jsonschema re-encodes on every draw
        if k in {"properties", "$defs", "patternProperties"} and isinstance(v, dict):
            # ``{}`` stays as is (no marker): allOf branches (Error and its
            # refinements, Result + Task) merge such schemas, a marker would not merge.
            out[k] = {pk: _inline(pv, key, path, cut) for pk, pv in v.items()}
        elif k in {"const", "enum"}:
            out[k] = v
        else:
            out[k] = _inline(v, key, path, cut)
    if "format" in out and isinstance(out["format"], str):
        # The oracle ignores format, so the models must accept any string
        # there: draw format-like and arbitrary strings alike.
        free = {k: v for k, v in out.items() if k != "format"}
        out = {"anyOf": [out, free]}
    if "$ref" not in node:
        return out
    target = _ref_name(node["$ref"])
    if target in JSON_DEFS and not out:
        resolved: Any = _marker(target)
    elif target in cyclic_defs(key):
        if cut:
            resolved = False
        elif path.count(target) >= RECURSION_DEPTH:
            resolved = _inline(defs[target], key, (*path, target), True)
        else:
            resolved = _inline(defs[target], key, (*path, target), False)
    else:
        resolved = _inline(defs[target], key, (*path, target), cut)
    if not out:
        return resolved
    return {"allOf": [out, resolved]}  # siblings of $ref apply as well (2020-12)


def _marker(kind: str) -> dict[str, Any]:
    return {"type": "string", "format": f"{_MARKER_FORMAT}{kind}"}


def _unmark(value: JSON) -> JSON:
    """Replace the marker strings drawn for free-form JSON by the JSON they carry."""
    if isinstance(value, str) and value.startswith(_SENTINEL):
        return json.loads(value[len(_SENTINEL) :])
    if isinstance(value, list):
        return [_unmark(v) for v in value]
    if isinstance(value, dict):
        return {k: _unmark(v) for k, v in value.items()}
    return value


@cache
def generation_schema(key: str, name: str) -> dict[str, Any] | bool:
    """A self-contained, non-recursive schema for drawing valid ``name`` instances."""
    defs = schema_of(key)["$defs"]
    composed = derived_defs(key).get(name)
    source = defs[name] if composed is None else composed
    schema: dict[str, Any] | bool = _inline(source, key, (name,), False)
    if isinstance(schema, dict):
        schema = {"$schema": "http://json-schema.org/draft-07/schema#", **schema}
    return schema


_BASE64 = st.binary(max_size=24).map(lambda b: base64.b64encode(b).decode())

_SCALARS: st.SearchStrategy[JSON] = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
# Any JSON value, with integral floats and deep nesting (real recursion, which
# hypothesis-jsonschema cannot produce for the recursive JSONValue).
_ANY_JSON: st.SearchStrategy[JSON] = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
_ANY_OBJECT = st.dictionaries(st.text(max_size=8), _ANY_JSON, max_size=4)


def _carried(strategy: st.SearchStrategy[JSON]) -> st.SearchStrategy[str]:
    return strategy.map(lambda v: _SENTINEL + json.dumps(v))


def generated_strategy(key: str, name: str) -> st.SearchStrategy[JSON]:
    """The strategy ``make regen`` generates for ``name`` (mcp_schema.testing).

    Fast, but drawn from the same IR as the models: the CI slice uses it and
    every draw is still judged by the oracle; the deep run keeps
    hypothesis-jsonschema as the independent generator.
    """
    module = importlib.import_module(package_of(key) + ".strategies")
    # DEFINITIONS holds the schema's own; the module has every definition by name.
    strategy: st.SearchStrategy[JSON] = getattr(module, name)
    return strategy


Source = Callable[[str, str], st.SearchStrategy[JSON]]


def strategy_for(key: str, name: str) -> st.SearchStrategy[JSON]:
    formats = {
        "byte": _BASE64,
        f"{_MARKER_FORMAT}any": _carried(_ANY_JSON),
        f"{_MARKER_FORMAT}JSONValue": _carried(_ANY_JSON),
        f"{_MARKER_FORMAT}JSONObject": _carried(_ANY_OBJECT),
    }
    return from_schema(generation_schema(key, name), custom_formats=formats).map(_unmark)


@dataclass(frozen=True)
class Hints:
    """What the schema says about member names, used to aim mutations."""

    required: frozenset[str]  # names some definition requires
    consts: dict[str, tuple[JSON, ...]]  # member name -> const / enum values seen for it
    camel: frozenset[str]  # camelCase member names


@cache
def hints(key: str) -> Hints:
    required: set[str] = set()
    consts: dict[str, list[JSON]] = {}
    camel: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for v in node:
                walk(v)
            return
        if not isinstance(node, dict):
            return
        if isinstance(node.get("required"), list):
            required.update(node["required"])
        props = node.get("properties")
        if isinstance(props, dict):
            for pname, pschema in props.items():
                if snake(pname) != pname:
                    camel.add(pname)
                if isinstance(pschema, dict):
                    values = [pschema["const"]] if "const" in pschema else pschema.get("enum", [])
                    for v in values:
                        if v not in consts.setdefault(pname, []):
                            consts[pname].append(v)
        for k, v in node.items():
            if k == "properties" and isinstance(v, dict):
                for pv in v.values():
                    walk(pv)
            elif k not in {"const", "enum", "default", "examples"}:
                walk(v)

    walk(schema_of(key)["$defs"])
    return Hints(frozenset(required), {k: tuple(v) for k, v in consts.items()}, frozenset(camel))


# --------------------------------------------------------------------------- model side


PROJECT_MODELS = "mcp_schema"


def package_of(key: str, root: str = PROJECT_MODELS) -> str:
    """Where the models of schema ``key`` live: ``<root>.<package of its pin>``.

    ``root`` is this project's package unless another generator's output (laid
    out the same way) is being judged.
    """
    return f"{root}.{spec.pins()[key].package}"


MODELS_VIEW = ""
DICT_VIEW = "validation.json"
"""The plain-dict view: the package's validation document, through jsonschema-rs."""


@cache
def model_of(key: str, name: str, root: str = PROJECT_MODELS) -> Any:
    """The class or type alias exported as ``name`` (raises if it is missing)."""
    return getattr(importlib.import_module(package_of(key, root)), name)


@cache
def adapter(key: str, name: str, root: str = PROJECT_MODELS) -> TypeAdapter[Any]:
    return TypeAdapter(model_of(key, name, root))


@cache
def validation_document(key: str) -> dict[str, Any]:
    """The ``validation.json`` the version package of ``key`` ships."""
    document: dict[str, Any] = json.loads(
        importlib.resources.files(package_of(key)).joinpath(DICT_VIEW).read_text()
    )
    return document


@cache
def validator_map(key: str) -> jsonschema_rs.ValidatorMap:
    # An extension's document refers to its base's; the oracle asserts no
    # format, and neither may the dict view (draft-07 would, by default).
    base = spec.pins()[key].base
    registry = (
        jsonschema_rs.Registry([(document_id(base), validation_document(base))])
        if base is not None
        else None
    )
    return jsonschema_rs.validator_map_for(
        validation_document(key), registry=registry, validate_formats=False
    )


def dict_validator(key: str, name: str) -> jsonschema_rs.Validator:
    """The dict view of ``name`` (raises if the document lacks it)."""
    found = validator_map(key).get(f"#/$defs/{name}")
    if found is None:
        raise LookupError(f"{package_of(key)}/{DICT_VIEW} has no definition {name!r}")
    return found


def prepare_view(key: str, name: str, root: str, view: str) -> None:
    """Build what judges ``name`` in ``view`` (raises what a missing one raises)."""
    if view == MODELS_VIEW:
        adapter(key, name, root)
    else:
        dict_validator(key, name)


def round_trip(ta: TypeAdapter[Any], value: Any) -> JSON:
    return ta.dump_python(value, mode="json", by_alias=True, exclude_unset=True)


# --------------------------------------------------------------------------- mutations


def _nodes(
    value: JSON, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], JSON]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, (*path, i))


def _at(value: JSON, path: Sequence[str | int]) -> JSON:
    for step in path:
        value = value[step]
    return value


def _show(path: Sequence[str | int]) -> str:
    return "/" + "/".join(str(p) for p in path)


Mutant = tuple[str, JSON]  # (description, mutated instance)


def _edit(value: JSON, path: tuple[str | int, ...], change: Callable[[JSON], JSON]) -> JSON:
    """A deep copy of ``value`` whose node at ``path`` is replaced by ``change(node)``."""
    if not path:
        return change(copy.deepcopy(value))
    out = copy.deepcopy(value)
    parent = _at(out, path[:-1])
    parent[path[-1]] = change(parent[path[-1]])
    return out


def _setting(key: str, new: JSON) -> Callable[[JSON], JSON]:
    """The change that sets member ``key`` of an object to ``new``."""
    return lambda node: {**node, key: new}


def _dropping(key: str) -> Callable[[JSON], JSON]:
    return lambda node: {m: v for m, v in node.items() if m != key}


def _renaming(key: str, new_key: str) -> Callable[[JSON], JSON]:
    return lambda node: {(new_key if m == key else m): v for m, v in node.items()}


def mutants(value: JSON, rng: random.Random, h: Hints) -> list[Mutant]:
    """Mutations of ``value``, each at the root or at a random nested object."""
    out: list[Mutant] = []
    objects = [(p, n) for p, n in _nodes(value) if isinstance(n, dict)]

    def pick(candidates: list[Any]) -> Any:
        return candidates[rng.randrange(len(candidates))]

    # Retype the whole instance, or a random nested node, to another JSON type.
    path, node = pick(list(_nodes(value)))
    kind = pick([t for t in _PROBES if t != json_type(node)])
    out.append((f"retype {_show(path)} to {kind}", _edit(value, path, lambda _n: _PROBES[kind])))

    # A number of another magnitude: every double is a JSON number as peers
    # read it, and an integral one is an integer.
    numbers = [(p, n) for p, n in _nodes(value) if json_type(n) in ("integer", "number")]
    if numbers:
        path, _node = pick(numbers)
        scaled = pick(_MAGNITUDES)
        out.append((f"scale {_show(path)} to {scaled!r}", _edit(value, path, lambda _n: scaled)))
    if not objects:
        return out

    # Drop a member that some definition requires (any member if none is).
    with_members = [(p, n) for p, n in objects if n]
    if with_members:
        path, node = pick(with_members)
        keys = [k for k in node if k in h.required] or list(node)
        k = pick(keys)
        out.append(
            (
                f"drop {_show((*path, k))}",
                _edit(value, path, _dropping(k)),
            )
        )

        # Replace a member's value with one of another JSON type.
        path, node = pick(with_members)
        k = pick(list(node))
        kind = pick([t for t in _PROBES if t != json_type(node[k])])
        out.append(
            (
                f"retype {_show((*path, k))} to {kind}",
                _edit(value, path, _setting(k, _PROBES[kind])),
            )
        )

    # Break a const / enum member: another known value, then an unknown one.
    const_sites = [
        (p, n, k)
        for p, n in objects
        for k in n
        if k in h.consts and any(same_json(n[k], c) for c in h.consts[k])
    ]
    if const_sites:
        path, node, k = pick(const_sites)
        others = [c for c in h.consts[k] if not same_json(c, node[k])]
        if others:
            other = pick(others)
            out.append(
                (
                    f"swap const {_show((*path, k))} to {short(other, 60)}",
                    _edit(value, path, _setting(k, other)),
                )
            )
        broken: JSON = node[k] + "-x" if isinstance(node[k], str) else "broken-const"
        out.append(
            (
                f"break const {_show((*path, k))}",
                _edit(value, path, _setting(k, broken)),
            )
        )

    # An unknown member: kept by open models, rejected by closed ones.
    path, _node = pick(objects)
    out.append(
        (
            f"add {_show((*path, EXTRA_KEY))}",
            _edit(value, path, _setting(EXTRA_KEY, 1)),
        )
    )

    # A snake_case twin of a camelCase member is an unknown member, never the
    # field itself: add it next to the real one, and rename the real one to it.
    camel_sites = [(p, n, k) for p, n in objects for k in n if k in h.camel]
    if camel_sites:
        path, node, k = pick(camel_sites)
        twin = snake(k)
        out.append(
            (
                f"add twin {_show((*path, twin))} next to {k}",
                _edit(value, path, _setting(twin, "twin-probe")),
            )
        )
        out.append(
            (
                f"rename {_show((*path, k))} to {twin}",
                _edit(
                    value,
                    path,
                    _renaming(k, twin),
                ),
            )
        )
    elif objects:
        # No camelCase member present: add the twin of one the schema knows, alone.
        path, node = pick(objects)
        name = pick(sorted(h.camel))
        twin = snake(name)
        out.append(
            (
                f"add twin {_show((*path, twin))} of absent {name}",
                _edit(value, path, _setting(twin, "twin-probe")),
            )
        )
    return out


# --------------------------------------------------------------------------- checking


@dataclass
class Discrepancy:
    key: str
    name: str
    kind: str
    instance: JSON
    mutation: str | None
    oracle_accepts: bool | None
    model_accepts: bool | None
    detail: str

    def render(self) -> str:
        lines = [
            f"[{self.kind}] {self.key} {self.name}",
            f"  instance: {short(self.instance, 600)}",
        ]
        if self.mutation:
            lines.append(f"  mutation: {self.mutation}")
        lines.append(
            f"  oracle accepts: {self.oracle_accepts}   model accepts: {self.model_accepts}"
        )
        if self.detail:
            lines.append("  " + self.detail.replace("\n", "\n  "))
        return "\n".join(lines)


@dataclass
class Counts:
    instances: int = 0
    mutants: int = 0
    false_accepts: int = 0
    false_rejects: int = 0
    lossy: int = 0
    crashes: int = 0  # the model raised something other than ValidationError
    oracle_rejects_sample: int = 0  # generator bug: a drawn instance is not valid
    no_generate: int = 0  # definitions that produced no instance at all
    no_model: int = 0  # definitions without an importable model

    def add(self, other: Counts) -> None:
        for f in self.__dataclass_fields__:
            setattr(self, f, getattr(self, f) + getattr(other, f))

    @property
    def discrepancies(self) -> int:
        return self.false_accepts + self.false_rejects + self.lossy + self.crashes + self.no_model


@dataclass
class DefReport:
    key: str
    name: str
    root: str = PROJECT_MODELS  # the package tree whose models are judged
    counts: Counts = field(default_factory=Counts)
    by_view: dict[str, Counts] = field(default_factory=dict)
    """The discrepancies of each view (``counts`` adds them up)."""
    found: list[Discrepancy] = field(default_factory=list)
    generation_error: str | None = None
    seconds: float = 0.0

    def record(self, d: Discrepancy) -> None:
        if len(self.found) < KEEP_PER_DEF:
            self.found.append(d)

    def tally(self, view: str, kind: str) -> None:
        """Count one discrepancy (a `Counts` field) of ``view``."""
        for counts in (self.counts, self.by_view.setdefault(view, Counts())):
            setattr(counts, kind, getattr(counts, kind) + 1)

    @property
    def allowlisted(self) -> bool:
        return (self.key, self.name) in GENERATION_ALLOWLIST

    @property
    def views(self) -> tuple[str, ...]:
        """The models, and for this project's own package also the dict view."""
        return (MODELS_VIEW, DICT_VIEW) if self.root == PROJECT_MODELS else (MODELS_VIEW,)


def _model_verdict(ta: TypeAdapter[Any], value: JSON) -> tuple[bool | None, Any, str]:
    """(accepts, validated value, error text); ``None`` when the model crashed."""
    try:
        return True, ta.validate_python(value), ""
    except ValidationError as err:
        return False, None, str(err)
    except Exception as err:  # a crash is a bug in its own right: report, don't abort
        return None, None, f"{type(err).__name__}: {err}"


# Errors are rendered with the instance in them: only for a small one.
_EXPLAINED_SIZE = 2000


def _dict_verdict(validator: jsonschema_rs.Validator, value: JSON) -> tuple[bool | None, Any, str]:
    """As `_model_verdict`; the dict view hands back the instance itself."""
    try:
        if validator.is_valid(value):
            return True, value, ""
    except Exception as err:
        return None, None, f"{type(err).__name__}: {err}"
    if len(short(value, _EXPLAINED_SIZE + 1)) > _EXPLAINED_SIZE:
        return False, None, "(instance too large to explain)"
    return False, None, "; ".join(e.message for e in validator.iter_errors(value))


def verdict(report: DefReport, view: str, value: JSON) -> tuple[bool | None, Any, str]:
    if view == MODELS_VIEW:
        return _model_verdict(adapter(report.key, report.name, report.root), value)
    return _dict_verdict(dict_validator(report.key, report.name), value)


def check(report: DefReport, value: JSON, mutation: str | None, original: JSON) -> bool:
    """Judge ``value`` by oracle and model, check the round trip, update ``report``.

    Returns whether the oracle accepts ``value``.
    """
    key, name = report.key, report.name
    c = report.counts
    oracle_ok: bool = oracle(key, name).is_valid(value)
    if mutation is None:
        c.instances += 1
        if not oracle_ok:
            c.oracle_rejects_sample += 1
            errors = "; ".join(e.message for e in oracle(key, name).iter_errors(value))[:400]
            report.record(
                Discrepancy(
                    key, name, ORACLE_REJECTS_SAMPLE, value, None, False, None, f"oracle: {errors}"
                )
            )
            return False
    else:
        c.mutants += 1
    for view in report.views:
        _judge(report, view, value, mutation, original, oracle_ok)
    return oracle_ok


def _judge(
    report: DefReport,
    view: str,
    value: JSON,
    mutation: str | None,
    original: JSON,
    oracle_ok: bool,
) -> None:
    """Compare one view's verdict on ``value`` with the oracle's."""
    key, name = report.key, report.name
    model_ok, parsed, error = verdict(report, view, value)
    shown = original if mutation else value
    where = f"mutated: {short(value, 600)}\n" if mutation else ""
    where = f"view: {view}\n{where}" if view else where
    if model_ok is None:
        report.tally(view, "crashes")
        report.record(
            Discrepancy(key, name, MODEL_CRASH, shown, mutation, oracle_ok, None, where + error)
        )
        return
    if model_ok and not oracle_ok:
        report.tally(view, "false_accepts")
        errors = "; ".join(e.message for e in oracle(key, name).iter_errors(value))[:400]
        report.record(
            Discrepancy(
                key, name, FALSE_ACCEPT, shown, mutation, False, True, where + f"oracle: {errors}"
            )
        )
        return
    if oracle_ok and not model_ok:
        report.tally(view, "false_rejects")
        report.record(
            Discrepancy(
                key,
                name,
                FALSE_REJECT,
                shown,
                mutation,
                True,
                False,
                where + f"model: {error[:600]}",
            )
        )
        return
    if model_ok:
        try:
            # The dict view holds plain JSON values: they are their own dump.
            dumped = (
                round_trip(adapter(key, name, report.root), parsed)
                if view == MODELS_VIEW
                else parsed
            )
        except Exception as err:  # serialization failure loses the value entirely
            dumped = f"<dump raised {type(err).__name__}: {err}>"
        if not same_json(dumped, value):
            report.tally(view, "lossy")
            report.record(
                Discrepancy(
                    key,
                    name,
                    LOSSY,
                    shown,
                    mutation,
                    True,
                    True,
                    where + f"dumped: {short(dumped, 600)}",
                )
            )


def check_instance(report: DefReport, value: JSON, rng: random.Random) -> None:
    if not check(report, value, None, value):
        return  # mutants of an invalid sample tell nothing
    for description, mutant in mutants(value, rng, hints(report.key)):
        check(report, mutant, description, value)


class _Enough(Exception):
    """Raised from inside the Hypothesis test to end a definition's time budget."""


# With a budget, a definition is cut off hard after this many budgets.
HARD_STOP_FACTOR = 25


_fired: list[bool] = [False]


def _stop(signum: int, frame: object) -> None:
    _fired[0] = True
    raise _Enough


def run_def(
    key: str,
    name: str,
    examples: int,
    *,
    derandomize: bool,
    budget: float | None = None,
    source: Source = strategy_for,
    root: str = PROJECT_MODELS,
) -> DefReport:
    """Draw up to ``examples`` instances of ``name`` and check them and their mutants.

    ``source`` gives the strategy of valid instances: hypothesis-jsonschema
    on the schema by default, `generated_strategy` for the CI slice.

    With ``budget`` (seconds), stop after the first instance that ends past it:
    hypothesis-jsonschema needs seconds per draw for the big unions, which the
    CI slice cannot afford for every definition; the deep run sets no budget.
    """
    report = DefReport(key, name, root)
    started = time.perf_counter()
    try:
        for view in report.views:
            prepare_view(key, name, root, view)
    except Exception as err:  # missing export, broken package, unbuildable schema
        report.counts.no_model = 1
        report.record(
            Discrepancy(
                key,
                name,
                NO_MODEL,
                None,
                None,
                None,
                None,
                f"{package_of(key, root)}.{name}: {type(err).__name__}: {err}",
            )
        )
        report.seconds = time.perf_counter() - started
        return report

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=derandomize,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(value=source(key, name), rng=st.randoms(use_true_random=False))
    def explore(value: JSON, rng: random.Random) -> None:
        check_instance(report, value, rng)
        if budget is not None and time.perf_counter() - started > budget:
            raise _Enough

    _fired[0] = False
    hard_stop = budget * HARD_STOP_FACTOR if budget is not None else math.inf
    if budget is not None:
        # A single hypothesis-jsonschema draw can take minutes on the task
        # unions; a hard stop turns that into a reported generation failure.
        signal.signal(signal.SIGALRM, _stop)
        signal.setitimer(signal.ITIMER_REAL, hard_stop)
    try:
        with warnings.catch_warnings():
            # hypothesis-jsonschema warns about draft-07 vs 2020-12 details we handle
            warnings.simplefilter("ignore", HypothesisWarning)
            explore()
    except _Enough:
        if report.counts.instances == 0:
            report.generation_error = f"no instance within {hard_stop:.0f}s"
    except (
        HypothesisException,
        jsonschema.exceptions.SchemaError,
        RecursionError,
        ValueError,
        TypeError,
    ) as err:
        if report.counts.instances == 0 and _fired[0]:
            # Hypothesis reports the interrupted draw as flaky; the cause is the stop.
            report.generation_error = f"no instance within {hard_stop:.0f}s"
        elif report.counts.instances == 0:
            report.generation_error = f"{type(err).__name__}: {str(err)[:300]}"
        else:  # some instances were checked; note why generation stopped early
            report.generation_error = None
    except Exception:
        if not _fired[0]:
            raise
        # The stop landed inside Hypothesis' own bookkeeping, which then fails
        # in a way of its own (seen: IndexError on a loaded machine).
        if report.counts.instances == 0:
            report.generation_error = f"no instance within {hard_stop:.0f}s"
    finally:
        if budget is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
    if report.counts.instances == 0 and report.generation_error is None:
        report.generation_error = "no instance generated"
    if report.generation_error is not None:
        report.counts.no_generate = 1
    report.seconds = time.perf_counter() - started
    return report


# --------------------------------------------------------------------------- CLI

SOURCES: dict[str, Source] = {
    "hypothesis-jsonschema": strategy_for,
    "strategies": generated_strategy,
}


VIEW_LABELS = {MODELS_VIEW: "models", DICT_VIEW: "dict"}


def _table(results: dict[str, list[DefReport]]) -> tuple[str, bool]:
    """One row per schema and view: what was drawn, then that view's discrepancies."""
    header = (
        "schema",
        "view",
        "defs",
        "instances",
        "mutants",
        "false acc",
        "false rej",
        "lossy",
        "crashes",
        "no model",
        "no generate",
        "bad sample",
    )
    rows = [header]
    failed = False
    for key, reports in results.items():
        total = Counts()
        for r in reports:
            total.add(r.counts)
        unexcused = sum(1 for r in reports if r.generation_error and not r.allowlisted)
        failed |= total.discrepancies > 0 or unexcused > 0
        views = sorted({v for r in reports for v in r.views}, key=list(VIEW_LABELS).index)
        for view in views:
            seen = Counts()
            for r in reports:
                seen.add(r.by_view.get(view, Counts()))
            rows.append(
                (
                    key,
                    VIEW_LABELS[view],
                    str(len(reports)),
                    str(total.instances),
                    str(total.mutants),
                    str(seen.false_accepts),
                    str(seen.false_rejects),
                    str(seen.lossy),
                    str(seen.crashes),
                    str(total.no_model),
                    f"{total.no_generate} ({unexcused} unexcused)",
                    str(total.oracle_rejects_sample),
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines), failed


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tests.engines.conformance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=int(os.environ.get("MCP_CONFORMANCE_EXAMPLES", "200")),
        help="examples per definition (default $MCP_CONFORMANCE_EXAMPLES or 200)",
    )
    parser.add_argument(
        "--schema", action="append", choices=SCHEMA_KEYS, help="only this schema key (repeatable)"
    )
    parser.add_argument("--def", dest="defs", action="append", help="only this definition")
    parser.add_argument(
        "--derandomize",
        action="store_true",
        help="fixed seeds (the CI setting); default is random seeds",
    )
    parser.add_argument(
        "--source",
        choices=sorted(SOURCES),
        default="hypothesis-jsonschema",
        help="where valid instances come from (default: the independent hypothesis-jsonschema)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        help="seconds per definition after which no further instance is drawn (the CI setting)",
    )
    parser.add_argument(
        "--models",
        default=PROJECT_MODELS,
        metavar="ROOT",
        help="judge the models of ROOT.<package> (another generator's output, laid out like "
        f"this project's) instead of {PROJECT_MODELS}.<package>",
    )
    parser.add_argument("--show", type=int, default=20, help="discrepancies to print")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per definition")
    args = parser.parse_args(argv)

    keys = args.schema or list(SCHEMA_KEYS)
    started = time.perf_counter()
    results: dict[str, list[DefReport]] = {}
    for key in keys:
        # The derived definitions are this project's: another tree has none.
        derived = derived_names(key) if args.models == PROJECT_MODELS else []
        names = [n for n in def_names(key) + derived if not args.defs or n in args.defs]
        results[key] = []
        for name in names:
            r = run_def(
                key,
                name,
                args.examples,
                derandomize=args.derandomize,
                source=SOURCES[args.source],
                budget=args.budget,
                root=args.models,
            )
            results[key].append(r)
            if args.verbose:
                flag = "FAIL" if r.counts.discrepancies or r.generation_error else "ok"
                print(
                    f"{flag:4} {key:18} {name:45} {r.counts.instances:5} inst "
                    f"{r.counts.mutants:6} mut {r.seconds:6.2f}s",
                    file=sys.stderr,
                    flush=True,
                )

    table, failed = _table(results)
    print(
        f"conformance of {args.models}: {args.examples} examples per definition "
        f"from {args.source}, "
        f"{'fixed' if args.derandomize else 'random'} seeds, "
        f"{time.perf_counter() - started:.1f}s"
    )
    print(table)
    no_gen = [r for rs in results.values() for r in rs if r.generation_error]
    if no_gen:
        print("\ndefinitions that could not generate:")
        for r in no_gen:
            why = GENERATION_ALLOWLIST.get((r.key, r.name))
            note = f" (allowlisted: {why})" if why else ""
            print(f"  {r.key} {r.name}: {r.generation_error}{note}")
    found = [d for rs in results.values() for r in rs for d in r.found]
    if found:
        print(
            f"\nfirst {min(args.show, len(found))} of {len(found)} kept discrepancies "
            f"(at most {KEEP_PER_DEF} per definition):"
        )
        for d in found[: args.show]:
            print(d.render())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
