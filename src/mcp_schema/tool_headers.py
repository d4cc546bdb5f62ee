"""A tool's ``x-mcp-header`` annotations, MCP 2026-07-28 (hand-written runtime
module; `mcp_schema.http_headers` mirrors them in ``Mcp-Param-*`` headers).

A tool's annotations are read once into a `ToolHeaders`. The walk is linear in the
schema's size and refuses schemas nested deeper than `MAX_SCHEMA_DEPTH` (or cyclic
ones) with `InvalidToolHeaderError`.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel

from mcp_schema.errors import clip

__all__ = ["MAX_SCHEMA_DEPTH", "InvalidToolHeaderError", "ToolHeaders", "validate_tool_headers"]

_PARAM_PREFIX = "Mcp-Param-"
_PARAM_TYPES = ("integer", "string", "boolean")
# Their values are instance data, not subschemas: an "x-mcp-header" member inside a default
# or an enum member is just data and annotates nothing.
_DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})

_TCHARS = frozenset("!#$%&'*+-.^_`|~" + string.digits + string.ascii_letters)

MAX_SCHEMA_DEPTH = 64
"""Nesting levels of a tool's ``inputSchema`` (objects and arrays) that are walked."""


class InvalidToolHeaderError(ValueError):
    """A tool's ``inputSchema`` has an ``x-mcp-header`` annotation a client must refuse.

    ``path`` is the JSON Pointer (inside ``inputSchema``) of the annotated schema and
    ``reason`` says what is wrong with it.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"invalid x-mcp-header at inputSchema{clip(path)}: {clip(reason)}")


class _HeaderParam(NamedTuple):
    header: str  # canonical "Mcp-Param-<Name>"
    path: tuple[str, ...]  # property names from the inputSchema root down to the argument
    type: str


def as_mapping(obj: Mapping[str, Any] | BaseModel, what: str) -> Mapping[str, Any]:
    """A mapping as it is, a model as its wire JSON; anything else is a ``TypeError``."""
    if isinstance(obj, Mapping):
        return obj
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", by_alias=True, exclude_unset=True)
        if isinstance(data, Mapping):
            return data
    raise TypeError(f"{what} must be a mapping or a pydantic model, not {type(obj).__name__}")


def _pointer_token(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _check_annotation(
    schema: Mapping[str, Any],
    pointer: str,
    path: tuple[str, ...] | None,
    found: dict[str, _HeaderParam],
) -> _HeaderParam:
    def fail(reason: str) -> InvalidToolHeaderError:
        return InvalidToolHeaderError(pointer, reason)

    name = schema["x-mcp-header"]
    if path is None:
        raise fail(
            "only properties reached from the root through 'properties' alone "
            "may be mirrored in headers"
        )
    if not path:
        raise fail("the root schema is not a property")
    if not isinstance(name, str):
        raise fail(f"the header name must be a string, not {name!r}")
    if not name:
        raise fail("the header name is empty")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise fail(f"the header name {name!r} contains control characters")
    if not set(name) <= _TCHARS:
        raise fail(f"the header name {name!r} is not an RFC 9110 token")
    type_ = schema.get("type")
    if not isinstance(type_, str) or type_ not in _PARAM_TYPES:
        got = "no type" if type_ is None else f"type {type_!r}"
        raise fail(f"the parameter must have type integer, string or boolean; it has {got}")
    header = _PARAM_PREFIX + name
    other = found.get(header.lower())
    if other is not None:
        raise fail(
            f"the header name {name!r} duplicates (case-insensitively) the one "
            f"of property {'.'.join(other.path)!r}"
        )
    return _HeaderParam(header, path, type_)


def _walk(
    node: Any,
    pointer: str,
    path: tuple[str, ...] | None,
    found: dict[str, _HeaderParam],
    ancestors: set[int],
) -> None:
    # The whole schema is walked, not just `properties`, so that an annotation hidden under
    # items/anyOf/$defs/... is refused rather than silently never sent. `path` becomes None
    # once the route from the root leaves `properties`. Recursion is bounded by
    # MAX_SCHEMA_DEPTH, far below Python's own limit.
    if not isinstance(node, (list, Mapping)):
        return
    if len(ancestors) >= MAX_SCHEMA_DEPTH:
        raise InvalidToolHeaderError(
            pointer, f"the schema is nested deeper than {MAX_SCHEMA_DEPTH} levels"
        )
    if id(node) in ancestors:
        raise InvalidToolHeaderError(pointer, "the schema contains itself")
    ancestors.add(id(node))
    if isinstance(node, list):
        for index, item in enumerate(node):
            _walk(item, f"{pointer}/{index}", None, found, ancestors)
    else:
        if "x-mcp-header" in node:
            param = _check_annotation(node, pointer, path, found)
            found[param.header.lower()] = param
        for key, value in node.items():
            if key == "x-mcp-header" or key in _DATA_KEYWORDS:
                continue
            child = f"{pointer}/{_pointer_token(key)}"
            if key == "properties" and isinstance(value, Mapping):
                if id(value) in ancestors:
                    raise InvalidToolHeaderError(child, "the schema contains itself")
                for name, sub in value.items():
                    sub_path = None if path is None else (*path, str(name))
                    _walk(sub, f"{child}/{_pointer_token(name)}", sub_path, found, ancestors)
            else:
                _walk(value, child, None, found, ancestors)
    ancestors.discard(id(node))


class ToolHeaders:
    """A tool's validated ``x-mcp-header`` annotations, read once.

    Build one per tool (``ToolHeaders(tool)``, raising `InvalidToolHeaderError`) and pass
    it wherever a ``tool`` is taken: the ``inputSchema`` is then not walked again.
    """

    __slots__ = ("_params", "name")

    def __init__(self, tool: Mapping[str, Any] | BaseModel) -> None:
        tool_map = as_mapping(tool, "tool")
        found: dict[str, _HeaderParam] = {}
        _walk(tool_map.get("inputSchema"), "", (), found, set())
        self.name: Any = tool_map.get("name")
        self._params = tuple(found.values())

    @property
    def headers(self) -> dict[str, tuple[str, ...]]:
        """Each ``Mcp-Param-*`` header and the property path it mirrors."""
        return {p.header: p.path for p in self._params}


def tool_headers(tool: Mapping[str, Any] | BaseModel | ToolHeaders) -> ToolHeaders:
    return tool if isinstance(tool, ToolHeaders) else ToolHeaders(tool)


def validate_tool_headers(
    tool: Mapping[str, Any] | BaseModel | ToolHeaders,
) -> dict[str, tuple[str, ...]]:
    """Check a tool's ``x-mcp-header`` annotations; map each header to its property path.

    ``{"Mcp-Param-Region": ("region",), "Mcp-Param-Zone": ("location", "zone")}``.
    Raises `InvalidToolHeaderError` on the first invalid annotation.
    """
    return tool_headers(tool).headers
