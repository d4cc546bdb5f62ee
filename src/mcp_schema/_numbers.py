"""JSON Schema's numbers as pydantic types (hand-written runtime module;
`mcp_schema.base` exports them to the generated models).

`Int` and `Number` are strict JSON numbers: no ``"1"`` -> 1 or ``true`` -> 1
coercion, ``5.0`` is a valid JSON Schema integer, and a JSON ``number`` keeps
``50`` an int (so it is re-encoded as ``50``, not ``50.0``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

__all__ = ["MAX_EXACT_INTEGRAL_FLOAT", "Int", "JsonInt", "JsonNumber", "Number"]


class _Bounded:
    """A JSON number type with optional inclusive bounds."""

    __slots__ = ("ge", "le")

    def __init__(self, *, ge: float | None = None, le: float | None = None) -> None:
        self.ge = ge
        self.le = le

    def _int_arm(self) -> CoreSchema:
        # An int is within [ge, le] exactly when it is within [ceil(ge), floor(le)].
        return core_schema.int_schema(
            strict=True, ge=_int_bound(self.ge, math.ceil), le=_int_bound(self.le, math.floor)
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ge={self.ge!r}, le={self.le!r})"


MAX_EXACT_INTEGRAL_FLOAT = 2**53
"""Largest magnitude of a request id written as a float (``5.0``) that is read as the
int: from here on a double skips integers, so the id ``9007199254740993.0`` would become
another request (``mcp_schema.codec.decode`` refuses it, -32700)."""


class Int(_Bounded):
    """A JSON Schema ``integer``: strict, bounds kept, integral floats accepted.

    ``5.0`` and ``1e16`` are integers in JSON Schema; they are read as the ints
    ``5`` and ``10**16``, the same JSON values (the double's exact value, as
    every peer reads it).
    Use as ``Annotated[int, Int(ge=0)]``.
    """

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.union_schema(
            [
                self._int_arm(),
                core_schema.no_info_after_validator_function(
                    _integral,
                    core_schema.float_schema(
                        strict=True, allow_inf_nan=False, ge=self.ge, le=self.le
                    ),
                ),
            ],
            custom_error_type="json_integer",
            custom_error_message="Input should be a JSON integer" + _bounds_text(self.ge, self.le),
            serialization=core_schema.simple_ser_schema("int"),
        )


def _integral(value: float) -> int:
    # Not pydantic's multiple_of=1: it allows for rounding, so 5e-324 would pass
    # (and be read as 0).
    if not value.is_integer():
        raise ValueError("not an integer")
    return int(value)


class Number(_Bounded):
    """A JSON Schema ``number``: strict, finite, an int stays an int.

    Use as ``Annotated[float, Number(ge=0, le=1)]``.
    """

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.union_schema(
            [
                self._int_arm(),
                core_schema.float_schema(strict=True, allow_inf_nan=False, ge=self.ge, le=self.le),
            ],
            custom_error_type="json_number",
            custom_error_message="Input should be a finite JSON number"
            + _bounds_text(self.ge, self.le),
        )


def _int_bound(bound: float | None, rounding: Callable[[float], int]) -> int | None:
    return None if bound is None else rounding(bound)


def _bounds_text(ge: float | None, le: float | None) -> str:
    parts = ([f">= {ge}"] if ge is not None else []) + ([f"<= {le}"] if le is not None else [])
    return (" " + " and ".join(parts)) if parts else ""


JsonInt = Annotated[int, Int()]
"""A JSON Schema ``integer`` without bounds."""

JsonNumber = Annotated[float, Number()]
"""A JSON Schema ``number`` without bounds."""
