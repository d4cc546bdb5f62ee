"""Where an invalid message fails, found with bounded work: the error both
views raise.

The walk follows the definition's JSON Schema (the generated validation
document) alongside the value and asks the compiled validator of each
subschema whether the part below it is valid, descending only into what is
not. No error object of a validator is ever built (they render whole
instances), and at most `mcp_schema.errors.MAX_ERRORS` problems are
described: a failing part left undescribed is only counted. The cost is the
validation of each level once along the failing paths, linear in the size of
the message for the schema's bounded depth.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from mcp_schema._codec.schemas import Target, definition, document, subschema, validator
from mcp_schema._exact import member
from mcp_schema.errors import (
    MAX_ERRORS,
    InvalidParamsError,
    InvalidRequestError,
    McpError,
    error_list,
)

_TYPES = {
    "string": "a valid string",
    "integer": "a JSON integer",
    "number": "a finite JSON number",
    "boolean": "a valid boolean",
    "object": "an object",
    "array": "a valid array",
    "null": "null",
}


def invalid(target: Target, instance: Any, path: str, what: str) -> McpError:
    """The error for ``instance`` (found at ``path`` of the message), which
    fails ``target``: invalid params (or result) when every problem lies in
    the payload, else an invalid request."""
    walk = _Walk()
    walk.check(target, "", instance, path)
    errors = walk.errors or [{"path": path, "reason": "Input is not valid"}]
    data = error_list(errors)
    if walk.total > len(errors):
        data["total"] = walk.total
    summary = "; ".join(f"{e['path']}: {e['reason']}" for e in data["errors"][:3])
    if walk.total > 3:
        summary += f" (and {walk.total - 3} more)"
    if not all(e["path"].startswith(("$.params", "$.result", "$.error")) for e in errors):
        return InvalidRequestError(f"Invalid Request: {summary}", data)
    return InvalidParamsError(f"Invalid {what}: {summary}", data)


def _token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _json_type(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return "string"
    if kind is bool:
        return "boolean"
    if kind is int:
        return "integer"
    if kind is float:
        return "integer" if value.is_integer() else "number"
    if kind is dict:
        return "object"
    if kind is list:
        return "array"
    return "null"


def _typed(value: Any, types: list[str]) -> bool:
    found = _json_type(value)
    return found in types or (found == "integer" and "number" in types)


class _Walk:
    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []
        self.total = 0

    def fail(self, path: str, reason: str) -> None:
        self.total += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append({"path": path, "reason": reason})

    def check(self, target: Target, pointer: str, value: Any, path: str) -> None:
        """Describe why ``value`` fails the subschema at ``pointer`` of ``target``
        (the caller knows it does), or count it once the list is full."""
        if len(self.errors) >= MAX_ERRORS:
            self.total += 1
            return
        schema: dict[str, Any] = subschema(definition(target), pointer)
        ref = schema.get("$ref")
        if ref is not None:
            self.check(_referenced(target, ref), "", value, path)
            return
        types = schema.get("type")
        if types is not None:
            allowed = [types] if isinstance(types, str) else types
            if not _typed(value, allowed):
                self.fail(path, "Input should be " + " or ".join(_TYPES[t] for t in allowed))
                return
        if "const" in schema and not _equal(value, schema["const"]):
            self.fail(path, f"Input should be {_shown(schema['const'])}")
            return
        if "enum" in schema and not any(_equal(value, v) for v in schema["enum"]):
            self.fail(path, "Input should be " + " or ".join(map(_shown, schema["enum"])))
            return
        before = self.total
        if "anyOf" in schema:
            self._union(target, pointer, schema["anyOf"], value, path)
        elif type(value) is dict:
            self._object(target, pointer, schema, value, path)
        elif type(value) is list:
            self._array(target, pointer, schema, value, path)
        else:
            self._scalar(schema, value, path)
        if self.total == before:  # a keyword this walk does not read: say where, at least
            self.fail(path, "Input is not valid")

    def _valid(self, target: Target, pointer: str, value: Any) -> bool:
        return validator(target, pointer).is_valid(value)

    def _union(self, target: Target, pointer: str, arms: list[Any], value: Any, path: str) -> None:
        candidates = [
            f"{pointer}/anyOf/{i}" for i, arm in enumerate(arms) if _may_be(target, arm, value)
        ]
        if len(candidates) == 1:
            self.check(target, candidates[0], value, path)
            return
        tag = _tag_of(target, arms)
        if tag is not None and type(value) is dict and tag in value:
            expected = ", ".join(_shown(_const_of(target, arm, tag)) for arm in arms)
            self.fail(
                member(path, tag), f"Input tag does not match any of the expected tags: {expected}"
            )
            return
        self.fail(path, f"Input matches none of the {len(arms)} allowed shapes")

    def _object(
        self, target: Target, pointer: str, schema: dict[str, Any], value: dict[str, Any], path: str
    ) -> None:
        properties: dict[str, Any] = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                self.fail(member(path, name), "Field required")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in properties:
                sub = f"{pointer}/properties/{_token(key)}"
            elif extra is False:
                self.fail(member(path, key), "Extra inputs are not permitted")
                continue
            elif isinstance(extra, dict) and extra:
                sub = f"{pointer}/additionalProperties"
            else:
                continue
            if not self._valid(target, sub, item):
                self.check(target, sub, item, member(path, key))

    def _array(
        self, target: Target, pointer: str, schema: dict[str, Any], value: list[Any], path: str
    ) -> None:
        low, high = schema.get("minItems"), schema.get("maxItems")
        if low is not None and len(value) < low:
            self.fail(path, f"List should have at least {low} items, not {len(value)}")
        if high is not None and len(value) > high:
            self.fail(path, f"List should have at most {high} items, not {len(value)}")
        if "items" not in schema:
            return
        items = validator(target, f"{pointer}/items")
        for index, item in enumerate(value):
            if not items.is_valid(item):
                self.check(target, f"{pointer}/items", item, f"{path}[{index}]")

    def _scalar(self, schema: dict[str, Any], value: Any, path: str) -> None:
        if type(value) is str:
            low, high = schema.get("minLength"), schema.get("maxLength")
            if low is not None and len(value) < low:
                self.fail(path, f"String should have at least {low} characters")
            elif high is not None and len(value) > high:
                self.fail(path, f"String should have at most {high} characters")
        elif type(value) in (int, float):
            low, high = schema.get("minimum"), schema.get("maximum")
            if low is not None and value < low:
                self.fail(path, f"Input should be greater than or equal to {low}")
            elif high is not None and value > high:
                self.fail(path, f"Input should be less than or equal to {high}")


def _referenced(target: Target, ref: str) -> Target:
    """The definition a ``$ref`` names: ``#/$defs/X`` in the same document, or
    ``<$id>#/$defs/X`` in another (an extension's reused definitions)."""
    where, _, name = ref.partition("#/$defs/")
    if not where:
        return Target(target.package, name)
    for package in _packages():
        if document(package)["$id"] == where:
            return Target(package, name)
    raise KeyError(ref)


def _packages() -> Iterator[str]:
    from mcp_schema.registry import COMPILED

    return (compiled.package for compiled in COMPILED)


def _resolved(target: Target, schema: dict[str, Any]) -> tuple[Target, dict[str, Any]]:
    while "$ref" in schema:
        target = _referenced(target, schema["$ref"])
        schema = definition(target)
    return target, schema


def _may_be(target: Target, arm: dict[str, Any], value: Any) -> bool:
    """Whether ``value`` is of the arm's JSON type and carries its tags (its
    required consts): the arm it was most likely meant to be."""
    target, schema = _resolved(target, arm)
    types = schema.get("type")
    if types is not None and not _typed(value, [types] if isinstance(types, str) else types):
        return False
    if "const" in schema or "enum" in schema:
        return False  # a literal arm: the value is not it, or the union would hold
    if type(value) is dict:
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            sub = properties.get(name, {})
            if "const" in sub and (name not in value or not _equal(value[name], sub["const"])):
                return False
    return True


def _tag_of(target: Target, arms: list[Any]) -> str | None:
    """The member whose required const tells the arms apart, if any."""
    shapes = [_resolved(target, arm)[1] for arm in arms]
    common = set.intersection(*(set(s.get("required", ())) for s in shapes)) if shapes else set()
    for name in sorted(common):
        if all("const" in s.get("properties", {}).get(name, {}) for s in shapes):
            return str(name)
    return None


def _const_of(target: Target, arm: dict[str, Any], name: str) -> Any:
    return _resolved(target, arm)[1]["properties"][name]["const"]


def _equal(value: Any, expected: Any) -> bool:
    # JSON equality: 1 == 1.0, but true is not 1.
    return value == expected and (type(value) is bool) == (type(expected) is bool)


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:50]
