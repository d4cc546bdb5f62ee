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
    if isinstance(model, BaseModel):
        serializer = type(model).__pydantic_serializer__
        dumped = serializer.to_python(model, mode="json", by_alias=True, exclude_unset=True)
        if not isinstance(dumped, dict):
            raise TypeError(f"{type(model).__name__} is not written as a JSON object")
        return dumped
    if isinstance(model, Mapping):
        return dict(model)
    raise TypeError(f"expected a pydantic model or a mapping, not {type(model).__name__}")
