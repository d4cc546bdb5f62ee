"""IR -> the dict view's JSON Schema document: ``<package>/validation.json``.

One ``$defs`` entry per definition of the version package, under the name it
has in ``models`` (inline classes, the draft-07 ``JSONRPC<Name>`` messages and
the ``<Name>AssumedComplete`` results included), so that a decoded message
can be checked against ``#/$defs/<Name>`` without any model. The document is
written from the IR, not copied from the upstream schema: it says exactly what
the models accept, overlays included, with none of the prose. A derived class
is its whole object (every member, not a reference to its parent); ``format``
is left out, as the models treat it as the annotation it is.

An extension's document refers to the definitions it reuses from its base in
the base's document (``urn:mcp-schema:<base key>#/$defs/<Name>``), and lists
each of them under its own ``$defs`` as such a reference, so every name its
package exports resolves in it. A validator for it needs the base's document
in its registry.
"""

from __future__ import annotations

import json
from typing import Any

from . import ir
from .ir import BuildError

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def document_id(key: str) -> str:
    """The ``$id`` of a pin's document: ``urn:mcp-schema:2026-07-28/tasks``."""
    return f"urn:mcp-schema:{key}"


class Schemas:
    """Type expressions as JSON Schema; ``reused`` names live in ``base_id``."""

    def __init__(self, reused: frozenset[str] = frozenset(), base_id: str = "") -> None:
        self.reused = reused
        self.base_id = base_id

    def ref(self, name: str) -> dict[str, Any]:
        where = self.base_id if name in self.reused else ""
        return {"$ref": f"{where}#/$defs/{name}"}

    def __call__(self, t: ir.TypeExpr) -> dict[str, Any]:
        if isinstance(t, ir.Scalar):
            return scalar(t)
        if isinstance(t, ir.Const):
            return {"const": t.values[0]} if len(t.values) == 1 else {"enum": list(t.values)}
        if isinstance(t, ir.Ref):
            return self.ref(t.name)
        if isinstance(t, ir.Array):
            return _bounded(
                {"type": "array", "items": self(t.item)}, minItems=t.min_items, maxItems=t.max_items
            )
        if isinstance(t, ir.Map):
            if t.value == ir.Scalar("any"):
                return {"type": "object"}
            return {"type": "object", "additionalProperties": self(t.value)}
        # Discriminators and tags only make the models faster: the union is anyOf.
        return {"anyOf": [self(m) for m in t.members]}

    def object_schema(self, c: ir.ModelClass) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object"}
        if c.fields:
            schema["properties"] = {f.wire_name: self(f.type) for f in c.fields}
        # A member's type says whether null is allowed (``nullable`` is read
        # off it); optional means it may be absent, never that it may be null.
        required = [f.wire_name for f in c.fields if f.required]
        if required:
            schema["required"] = required
        if c.closed:
            schema["additionalProperties"] = False
        elif c.extra_type is not None:
            schema["additionalProperties"] = self(c.extra_type)
        return schema


def scalar(t: ir.Scalar) -> dict[str, Any]:
    if t.kind == "any":
        return {}
    if t.kind == "str":
        return _bounded({"type": "string"}, minLength=t.min_length, maxLength=t.max_length)
    if t.kind in ("int", "number"):
        kind = "integer" if t.kind == "int" else "number"
        return _bounded({"type": kind}, minimum=t.minimum, maximum=t.maximum)
    return {"type": {"bool": "boolean", "null": "null"}[t.kind]}


def _bounded(schema: dict[str, Any], **bounds: float | None) -> dict[str, Any]:
    return {**schema, **{k: v for k, v in bounds.items() if v is not None}}


def validation_document(module: ir.Module, base: ir.Module | None) -> dict[str, Any]:
    """The document of ``module``; ``base`` is the module an extension builds on."""
    if module.imported and base is None:
        raise BuildError(f"{module.key}: reuses definitions but has no base document")
    schemas = Schemas(frozenset(module.imported), document_id(base.key) if base else "")
    defs: dict[str, Any] = {name: schemas.ref(name) for name in module.imported}
    for d in module.definitions:
        defs[d.name] = schemas.object_schema(d) if isinstance(d, ir.ModelClass) else schemas(d.type)
    return {"$schema": DIALECT, "$id": document_id(module.key), "$defs": defs}


def render_validation(module: ir.Module, base: ir.Module | None) -> str:
    document = validation_document(module, base)
    return json.dumps(document, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
