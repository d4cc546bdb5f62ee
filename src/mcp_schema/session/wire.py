"""What a session writes, from what its author gives: the wire mapping of a
model or a mapping, the frame of a message, and the schema's quick word on a
result (the model view reads only what it refuses)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from mcp_schema._codec.encoding import encode, encode_answer
from mcp_schema._codec.schemas import Target, validator
from mcp_schema._codec.wire import to_wire
from mcp_schema.session.events import InvalidOutgoingError

__all__ = ["encoded", "encoded_answer", "schema_accepts", "wire_or_type_error"]


def wire_or_type_error(value: object, what: str) -> dict[str, Any]:
    """``value`` (a model or a mapping) as wire JSON; `InvalidOutgoingError` otherwise."""
    if not isinstance(value, (BaseModel, Mapping)):
        raise InvalidOutgoingError(
            f"{what} must be a model or a mapping, not {type(value).__name__}"
        )
    return to_wire(value)


def encoded(value: dict[str, Any]) -> bytes:
    """The frame of ``value``; `InvalidOutgoingError` for what has no JSON text."""
    try:
        return encode(value)
    except ValueError as exc:  # pydantic-core's: a value JSON cannot carry
        raise InvalidOutgoingError(f"not JSON: {exc}") from None


def encoded_answer(value: dict[str, Any]) -> bytes:
    """`encoded` of a response this session composed (``jsonrpc``, ``id``,
    ``result``, in that order; the id one it read): only the result is walked."""
    try:
        return encode_answer(value)
    except ValueError as exc:
        raise InvalidOutgoingError(f"not JSON: {exc}") from None


def schema_accepts(target: Target, instance: Any) -> bool:
    """Whether the JSON Schema of ``target`` accepts ``instance``."""
    try:
        return validator(target).is_valid(instance)
    except ValueError:  # a model inside a mapping: not JSON the schema can read
        return False
