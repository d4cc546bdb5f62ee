"""``encode``: a message back to its JSON bytes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_json


def encode(message: BaseModel | Mapping[str, Any]) -> bytes:
    """The JSON bytes of a message: wire names, absent members left out.

    A mapping is written as JSON as it is: `McpError.to_response`, or a message
    of the dict view (`mcp_schema.codec.decode_dict`).
    """
    if isinstance(message, BaseModel):
        serializer = type(message).__pydantic_serializer__
        return serializer.to_json(message, by_alias=True, exclude_unset=True)
    return to_json(message)
