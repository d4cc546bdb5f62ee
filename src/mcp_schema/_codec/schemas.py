"""The generated validation documents (``<package>/validation.json``) and
their compiled validators: what the dict view validates with and what
`explain` reads to say where a message fails.

A definition is named by a `Target`: the package whose method tables name it
and its name there. An extension's document refers to the definitions it
reuses from its base version by the base document's ``$id``; such a name is
looked up in the base document.
"""

from __future__ import annotations

import importlib.resources
import json
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote

if TYPE_CHECKING:  # imported where first used: the model view's valid path needs none
    import jsonschema_rs

from mcp_schema._codec.builds import built_once
from mcp_schema.registry import COMPILED


class Target(NamedTuple):
    """A definition of a version package (or an extension's), by name."""

    package: str
    name: str


_BASE: dict[str, str] = {}
"""An extension's package -> its base version's package."""
for _entry in COMPILED:
    if _entry.extension is not None:
        _BASE[_entry.package] = next(
            c.package for c in COMPILED if c.version == _entry.version and c.extension is None
        )


@built_once
def document(package: str) -> dict[str, Any]:
    """The package's validation document, as generated."""
    text = importlib.resources.files(package).joinpath("validation.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def home(target: Target) -> Target:
    """The target in the document that defines it (an extension's reused
    definitions live in its base version's document)."""
    if target.name in document(target.package)["$defs"]:
        return target
    base = _BASE.get(target.package)
    if base is None or target.name not in document(base)["$defs"]:
        raise KeyError(f"{target.package} defines no {target.name!r}")
    return Target(base, target.name)


def definition(target: Target) -> dict[str, Any]:
    """The JSON Schema of a definition (its ``$ref`` s point into `home`'s document)."""
    found = home(target)
    schema: dict[str, Any] = document(found.package)["$defs"][found.name]
    return schema


@built_once
def _registry(package: str) -> jsonschema_rs.Registry:
    """The package's document, and its base version's for an extension, as
    the resources its validators' references resolve in."""
    import jsonschema_rs

    packages = [package] if package not in _BASE else [package, _BASE[package]]
    return jsonschema_rs.Registry([(document(p)["$id"], document(p)) for p in packages])


_COMPILED: dict[tuple[Target, str], jsonschema_rs.Validator] = {}
"""Each definition's validator (and each subschema `explain` asked for), one
dict lookup away; keyed by generated definitions only."""


def validator(target: Target, pointer: str = "") -> jsonschema_rs.Validator:
    """The compiled validator of a definition, or of a subschema of it
    (``pointer`` is a JSON pointer below the definition, such as ``/properties/params``)."""
    key = (target, pointer)
    found = _COMPILED.get(key)
    if found is None:
        found = _compiled(home(target), pointer)
        _COMPILED[key] = found
    return found


@built_once
def _compiled(where: Target, pointer: str) -> jsonschema_rs.Validator:
    """One subschema compiled with what it refers to, and no more: compiling
    a version's whole document would cost 40 ms on a first message (formats
    are annotations in MCP, as for the upstream oracle)."""
    import jsonschema_rs

    doc = document(where.package)
    subschema(doc["$defs"][where.name], pointer)  # KeyError for a pointer to nothing
    reference = doc["$id"] + "#" + quote(f"/$defs/{where.name}{pointer}", safe="/~$")
    return jsonschema_rs.validator_for(
        {"$schema": doc["$schema"], "$ref": reference},
        validate_formats=False,
        registry=_registry(where.package),
    )


def subschema(schema: dict[str, Any], pointer: str) -> Any:
    """The subschema at a JSON pointer below ``schema``."""
    node: Any = schema
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        try:
            node = node[int(key)] if type(node) is list else node[key]
        except (KeyError, IndexError, ValueError, TypeError):
            raise KeyError(f"no subschema at {pointer!r}") from None
    return node
