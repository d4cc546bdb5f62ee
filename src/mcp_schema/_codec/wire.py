"""``to_wire``: a model (of any version) or a wire mapping as the JSON value it is sent as."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel


def to_wire(model: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object of ``model``: wire names, absent members left out, as
    `mcp_schema.codec.encode` writes it (``json.loads(encode(m)) == to_wire(m)``).

    A mapping is taken as already wire-shaped and copied (one level); anything
    else is a ``TypeError``.
    """
    return wire_value(model, "model")


def wire_value(value: object, what: str) -> dict[str, Any]:
    """`to_wire` of the argument called ``what``, which the ``TypeError`` for
    anything but a model or a mapping names."""
    if isinstance(value, BaseModel):
        serializer = type(value).__pydantic_serializer__
        dumped = serializer.to_python(value, mode="json", by_alias=True, exclude_unset=True)
        if not isinstance(dumped, dict):
            raise TypeError(f"{type(value).__name__} is not written as a JSON object")
        return dumped
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{what} must be a pydantic model or a mapping, not {type(value).__name__}")
