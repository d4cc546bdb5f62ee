"""JSON Schema (the subset MCP uses) -> IR.

Rules that shape the output:

* one class or alias per ``$defs`` entry, named exactly like it;
* inline object schemas become classes named ``<Parent><Field>`` (array items
  ``...Item``, map values ``...Value``, union arms ``...<ConstValue>``); a name
  that is taken already fails the build rather than being numbered;
* a member whose name the parent's name already ends with is ``<Parent>Object``
  instead of stuttering: the inline ``error`` object of ``HeaderMismatchError``
  (an error response) is ``HeaderMismatchErrorObject``, its ``data``
  ``HeaderMismatchErrorObjectData``;
* in an extension, an inline schema that is a verbatim copy of a ``$def`` (the
  Tasks extension inlines several) is a reference to that def, not a twin; a
  core schema's inline objects keep their own names (the draft-07 schemas
  spell every notification's params as an object shaped like ``Result``,
  which is not what they are);
* ``allOf`` is merged into one object (an ``anyOf`` inside it is distributed
  over its arms), so every class is flat;
* a union whose members all require one field with distinct ``const`` values is
  discriminated on it; a union of results whose members differ in
  ``resultType`` is discriminated on that value.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any, cast

from . import ir
from .ir import BuildError
from .names import member_name, pascal, snake
from .spec import Pin

# Keywords that describe but never constrain: dropped before anything else.
ANNOTATIONS = frozenset({"description", "title", "$schema", "default", "examples", "$comment"})
HANDLED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "const",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "format",
        "propertyNames",
        "$ref",
        "not",
    }
)
DISCRIMINATOR_PREFERENCE = ("method", "type", "status", "mode", "role")
NEVER: dict[str, Any] = {"not": {}}


def strip_annotations(schema: Any) -> Any:
    """A copy without annotation keywords, recursing only into subschemas."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ANNOTATIONS:
            continue
        if key == "properties":
            out[key] = {name: strip_annotations(sub) for name, sub in value.items()}
        elif key in ("anyOf", "oneOf", "allOf"):
            out[key] = [strip_annotations(sub) for sub in value]
        elif key == "additionalProperties" and value in ({}, True):
            continue  # the default: saying it changes nothing
        elif key in ("items", "additionalProperties", "not", "propertyNames"):
            out[key] = strip_annotations(value)
        else:
            out[key] = value
    return out


def canonical(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)


class Builder:
    def __init__(self, pin: Pin, schema: dict[str, Any], reused: dict[str, str]) -> None:
        self.pin = pin
        self.defs: dict[str, Any] = {k: strip_annotations(v) for k, v in schema["$defs"].items()}
        self.reused = reused
        self.classes: list[ir.ModelClass] = []
        self.taken: set[str] = set(self.defs)
        self._normal_defs: dict[str, dict[str, Any]] = {}
        self._def_index: dict[str, str] = {}

    # -- entry point -------------------------------------------------------

    def build(self) -> ir.Module:
        """The module of every definition, by name; its method tables come later."""
        for name in sorted(self.defs):
            shape = self.normalize(self.defs[name])
            if shape.get("properties") or "anyOf" in shape:
                self._def_index.setdefault(canonical(shape), name)
        aliases: list[ir.Alias] = []
        for name in sorted(set(self.defs) - set(self.reused)):
            result = self.type_of(self.defs[name], hint=name, origin=name, def_name=name)
            if result != ir.Ref(name):
                aliases.append(ir.Alias(name, self.docs_url(name), result))
        pin = self.pin
        return ir.Module(
            key=pin.key,
            version=pin.version,
            package=pin.package,
            sha256=pin.sha256,
            source=f"{pin.repository} @ {pin.commit} : {pin.path}",
            definitions=tuple(sorted([*self.classes, *aliases], key=lambda d: d.name)),
            imported=MappingProxyType({name: self.reused[name] for name in sorted(self.reused)}),
            base=pin.base,
            extension=pin.extension,
            era=pin.era,
        )

    def docs_url(self, def_name: str) -> str:
        if self.pin.base is None:
            return f"{self.pin.docs}#{def_name.lower()}"
        return self.pin.docs

    # -- allOf / $ref resolution --------------------------------------------

    def def_shape(self, name: str) -> dict[str, Any]:
        if name not in self._normal_defs:
            self._normal_defs[name] = self.normalize(self.defs[name])
        return self._normal_defs[name]

    def normalize(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Merge ``allOf`` (with its ``$ref`` members inlined) into one schema."""
        schema = {k: v for k, v in schema.items() if k not in ANNOTATIONS}
        if "allOf" not in schema:
            return schema
        parts = [self._resolved(p) for p in schema.pop("allOf")]
        if schema:
            parts.append(schema)
        return merge(parts)

    def _resolved(self, schema: dict[str, Any]) -> dict[str, Any]:
        schema = self.normalize(schema)
        if "$ref" not in schema:
            return schema
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        target = self.def_shape(ref_name(schema["$ref"]))
        return merge([target, rest]) if rest else target

    # -- schema -> type expression -------------------------------------------

    def type_of(
        self, schema: dict[str, Any], *, hint: str, origin: str, def_name: str | None = None
    ) -> ir.TypeExpr:
        s = self.normalize(schema)
        unknown = set(s) - HANDLED
        if unknown:
            raise BuildError(f"{origin}: unsupported keywords {sorted(unknown)}")
        if "$ref" in s:
            if len(s) > 1:
                return self.type_of({"allOf": [s]}, hint=hint, origin=origin, def_name=def_name)
            return ir.Ref(ref_name(s["$ref"]))
        in_extension = self.pin.base is not None
        if in_extension and def_name is None and (s.get("properties") or "anyOf" in s):
            copy_of = self._def_index.get(canonical(s))
            if copy_of is not None:
                return ir.Ref(copy_of)
        if "anyOf" in s or "oneOf" in s:
            return self.union(
                s.get("anyOf", s.get("oneOf", [])), hint=hint, origin=origin, def_name=def_name
            )
        if "const" in s:
            return ir.Const((s["const"],))
        if "enum" in s:
            return ir.Const(tuple(s["enum"]))
        kind = s.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if not (k == "integer" and "number" in kind)]
            return ir.Union_(
                tuple(self.type_of({**s, "type": k}, hint=hint, origin=origin) for k in kinds)
            )
        if kind == "object" or "properties" in s:
            return self.object_type(s, hint=hint, origin=origin, def_name=def_name)
        if kind == "array":
            item = self.type_of(s.get("items", {}), hint=hint + "Item", origin=origin + "[]")
            return ir.Array(item, s.get("minItems"), s.get("maxItems"))
        if kind == "string":
            return ir.Scalar("str", min_length=s.get("minLength"), max_length=s.get("maxLength"))
        if kind in ("integer", "number"):
            return ir.Scalar(
                "int" if kind == "integer" else "number",
                minimum=s.get("minimum"),
                maximum=s.get("maximum"),
            )
        if kind == "boolean":
            return ir.Scalar("bool")
        if kind == "null":
            return ir.Scalar("null")
        if kind is None and set(s) <= {"format"}:
            return ir.Scalar("any")
        raise BuildError(f"{origin}: cannot type schema {canonical(s)[:200]}")

    def object_type(
        self, s: dict[str, Any], *, hint: str, origin: str, def_name: str | None
    ) -> ir.TypeExpr:
        if s.get("propertyNames", {"type": "string"}) != {"type": "string"}:
            raise BuildError(f"{origin}: propertyNames other than strings is not supported")
        props: dict[str, Any] = s.get("properties", {})
        extra: Any = s.get("additionalProperties")
        closed = extra is False or extra == NEVER
        open_any = extra is None or extra is True or extra == {}
        if not props and not closed:
            value = (
                ir.Scalar("any")
                if open_any
                else self.type_of(
                    cast("dict[str, Any]", extra), hint=hint + "Value", origin=origin + ".*"
                )
            )
            return ir.Map(value)
        name = def_name or self.claim(hint, origin)
        fields = self.fields(props, s.get("required", []), name=name, origin=origin)
        extra_type = (
            None
            if open_any or closed
            else self.type_of(
                cast("dict[str, Any]", extra), hint=name + "Value", origin=origin + ".*"
            )
        )
        self.classes.append(
            ir.ModelClass(
                name=name,
                origin=origin,
                docs_url=self.docs_url(origin.split(".")[0]),
                fields=fields,
                closed=closed,
                extra_type=extra_type,
            )
        )
        return ir.Ref(name)

    def fields(
        self, props: dict[str, Any], required: list[str], *, name: str, origin: str
    ) -> tuple[ir.Field, ...]:
        missing = [r for r in required if r not in props]
        if missing:
            raise BuildError(f"{origin}: required {missing} not among its properties")
        fields: list[ir.Field] = []
        for wire, sub in props.items():
            field_type = self.type_of(sub, hint=member_name(name, wire), origin=f"{origin}.{wire}")
            is_required = wire in required
            fields.append(
                ir.Field(
                    py_name=snake(wire),
                    wire_name=wire,
                    type=field_type,
                    required=is_required,
                    nullable=self.allows_null(field_type),
                    format=self.normalize(sub).get("format"),
                    preset=preset(wire, field_type) if is_required else None,
                )
            )
        py_names = [f.py_name for f in fields]
        clashes = {n for n in py_names if py_names.count(n) > 1}
        if clashes:
            raise BuildError(f"{origin}: attribute names collide: {sorted(clashes)}")
        return tuple(fields)

    def union(
        self, arms: list[dict[str, Any]], *, hint: str, origin: str, def_name: str | None
    ) -> ir.TypeExpr:
        shapes = [self._resolved(arm) for arm in arms]
        if all("const" in s or "enum" in s for s in shapes):
            values: list[Any] = []
            for s in shapes:
                values.extend([s["const"]] if "const" in s else s["enum"])
            return ir.Const(tuple(values))
        discriminator = find_discriminator(shapes)
        members: list[ir.TypeExpr] = []
        for arm, shape in zip(arms, shapes, strict=True):
            tag = const_of(shape, discriminator) if discriminator else None
            arm_hint = hint + (pascal(str(tag)) if tag is not None else "")
            if "$ref" not in self.normalize(arm) and shape.get("properties") and tag is None:
                raise BuildError(
                    f"{origin}: cannot name an inline union arm (no discriminating const)"
                )
            members.append(self.type_of(arm, hint=arm_hint, origin=f"{origin}|{tag}"))
        if discriminator:
            return ir.Union_(tuple(members), discriminator=discriminator)
        tags = self.result_type_tags(shapes)
        if tags is not None:
            return ir.Union_(tuple(members), discriminator="resultType", result_type_tags=tags)
        if distinct_required_keys(shapes):
            return ir.Union_(tuple(members), by_required_key=True)
        return ir.Union_(tuple(members), by_tag=find_tag(shapes))

    def result_type_tags(self, shapes: list[dict[str, Any]]) -> tuple[str | None, ...] | None:
        """Tags for a union of results told apart by ``resultType`` alone."""
        if len(shapes) < 2 or not all("resultType" in s.get("required", ()) for s in shapes):
            return None
        tags = tuple(const_of(s, "resultType") for s in shapes)
        defaults = [t for t in tags if t is None]
        if len(defaults) > 1 or len(defaults) == len(tags):
            return None
        return tags

    def claim(self, name: str, origin: str) -> str:
        if name in self.taken:
            raise BuildError(f"{origin}: class name {name!r} is taken already")
        self.taken.add(name)
        return name

    def allows_null(self, t: ir.TypeExpr) -> bool:
        if isinstance(t, ir.Scalar):
            return t.kind in ("null", "any")
        if isinstance(t, ir.Const):
            return None in t.values
        if isinstance(t, ir.Union_):
            return any(self.allows_null(m) for m in t.members)
        if isinstance(t, ir.Ref) and t.name in self.defs and t.name not in self.reused:
            shape = self.def_shape(t.name)
            return (
                "properties" not in shape
                and shape.get("type") in (None, "null")
                and ("anyOf" not in shape or any(a.get("type") == "null" for a in shape["anyOf"]))
            )
        return False


def ref_name(ref: str) -> str:
    if not ref.startswith("#/$defs/"):
        raise BuildError(f"unsupported $ref {ref!r}")
    return ref[len("#/$defs/") :]


def const_of(shape: dict[str, Any], prop: str) -> Any:
    return _const(shape.get("properties", {}).get(prop, {}))


def _const(schema: dict[str, Any]) -> Any:
    # A merged property is an unresolved allOf; its const may be in any part.
    if "const" in schema:
        return schema["const"]
    consts = [c for c in (_const(part) for part in schema.get("allOf", [])) if c is not None]
    return consts[0] if consts else None


def _required_by_all(shapes: list[dict[str, Any]]) -> list[str]:
    """The members every object arm requires, the likeliest tags first (none
    when an arm is no object)."""
    if len(shapes) < 2 or not all(s.get("properties") for s in shapes):
        return []
    common = set.intersection(*(set(s.get("required", ())) for s in shapes))
    return sorted(
        common,
        key=lambda p: (
            DISCRIMINATOR_PREFERENCE.index(p) if p in DISCRIMINATOR_PREFERENCE else 99,
            p,
        ),
    )


def find_discriminator(shapes: list[dict[str, Any]]) -> str | None:
    """A field every arm requires with a distinct ``const``, if there is one."""
    for prop in _required_by_all(shapes):
        values = [const_of(s, prop) for s in shapes]
        if None not in values and len({canonical(v) for v in values}) == len(values):
            return str(prop)
    return None


def find_tag(shapes: list[dict[str, Any]]) -> str | None:
    """A field every arm requires with allowed strings (a ``const`` or an
    ``enum``) taking at least two values in all: the arms can be sorted by
    it, though not told apart (`find_discriminator` failed)."""
    for prop in _required_by_all(shapes):
        allowed = [_allowed(s.get("properties", {}).get(prop, {})) for s in shapes]
        values = {v for arm in allowed if arm is not None for v in arm}
        if None not in allowed and len(values) > 1 and all(type(v) is str for v in values):
            return str(prop)
    return None


def _allowed(schema: dict[str, Any]) -> list[Any] | None:
    """The values a property allows when it lists them (as `_const`, a merged
    property's parts are looked into)."""
    if "const" in schema:
        return [schema["const"]]
    if "enum" in schema:
        return list(schema["enum"])
    for part in schema.get("allOf", []):
        found = _allowed(part)
        if found is not None:
            return found
    return None


def preset(wire: str, t: ir.TypeExpr) -> ir.JsonScalar | None:
    """What construction fills in for a required member left out: its only
    allowed value, or (2026-07-28 results) the ``resultType`` of a complete
    result, the value the codec also reads an unknown ``resultType`` as."""
    if isinstance(t, ir.Const) and len(t.values) == 1:
        return t.values[0]
    if wire == "resultType" and t == ir.Scalar("str"):
        return "complete"
    return None


def distinct_required_keys(shapes: list[dict[str, Any]]) -> bool:
    """Whether every object arm requires a member that no other arm declares.

    Then an instance normally matches one arm only, so trying the arms in
    order accepts exactly what trying all of them does, at a fraction of the
    cost (a 1 MB text resource is otherwise validated once per arm).
    """
    if len(shapes) < 2 or not all(s.get("properties") for s in shapes):
        return False
    for index, shape in enumerate(shapes):
        others: set[str] = set()
        for j, other in enumerate(shapes):
            if j != index:
                others |= set(other.get("properties", {}))
        if not set(shape.get("required", ())) - others:
            return False
    return True


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """``allOf`` of already-normalized schemas as one schema."""
    out: dict[str, Any] = {}
    choices: list[list[dict[str, Any]]] = []
    for part in parts:
        for key, value in part.items():
            if key == "anyOf":
                choices.append(value)
            elif key == "properties":
                props = out.setdefault("properties", {})
                for name, sub in value.items():
                    props[name] = {"allOf": [props[name], sub]} if name in props else sub
            elif key == "required":
                out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
            elif key == "additionalProperties":
                out[key] = _merge_additional(out.get(key), value)
            elif key in out and out[key] != value:
                raise BuildError(f"allOf: conflicting {key!r}: {out[key]!r} vs {value!r}")
            else:
                out[key] = value
    if not choices:
        return out
    if len(choices) > 1:
        raise BuildError("allOf with more than one anyOf is not supported")
    return {"anyOf": [merge([out, arm]) for arm in choices[0]]}


def _merge_additional(a: Any, b: Any) -> Any:
    # The stricter wins: false over a schema over "anything".
    for strict in (False, NEVER):
        if strict in (a, b):
            return False
    loose: Any
    for loose in (None, True, {}):
        if a == loose:
            return b
        if b == loose:
            return a
    if a != b:
        raise BuildError(f"allOf: conflicting additionalProperties {a!r} vs {b!r}")
    return a
