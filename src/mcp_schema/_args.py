"""Argument checks of the public functions: a caller's argument of the wrong
type is a ``TypeError`` naming the argument, before anything else can fail on
it with a foreign exception (an ``AttributeError``, a pydantic
``ValidationError``...)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a bool",
    Mapping: "a mapping",
    dict: "a dict",
    type: "a class",
    frozenset: "a frozenset",
}


def _described(kinds: tuple[type, ...], none: bool) -> str:
    names = [_NAMES.get(kind, kind.__name__) for kind in kinds]
    if none:
        names.append("None")
    return " or ".join(names)


def _fits(value: object, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in kinds  # True is no id, count or number here
    if float in kinds and isinstance(value, int):
        return True  # a JSON number may be written as an int
    return isinstance(value, kinds)


def check(value: object, kinds: type | tuple[type, ...], name: str, *, none: bool = False) -> None:
    """``TypeError`` unless ``value`` is one of ``kinds`` (or ``None``, when ``none``).

    A bool is never taken for an int, and an int is taken for a float.
    """
    if type(value) is kinds or (none and value is None):
        return  # the usual call, without the tuple and the isinstance chain below
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if (none and value is None) or _fits(value, kinds):
        return
    raise TypeError(f"{name} must be {_described(kinds, none)}, not {type(value).__name__}")


def strings(value: object, name: str, *, none: bool = False) -> tuple[str, ...] | None:
    """``value``, a collection of strings (not a string itself), as a tuple."""
    if none and value is None:
        return None
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be a collection of strings{' or None' if none else ''}, "
            f"not {type(value).__name__}"
        )
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold strings, not {type(item).__name__}")
    return items


def writable(value: object, name: str, *, none: bool = False) -> None:
    """``TypeError`` unless ``value`` is a text stream (it has ``write``)."""
    if none and value is None:
        return
    if not callable(getattr(value, "write", None)):
        raise TypeError(
            f"{name} must be a writable stream{' or None' if none else ''}, "
            f"not {type(value).__name__}"
        )


def mapping(value: object, name: str, *, none: bool = False) -> Mapping[str, Any] | None:
    """``value``, a mapping (or ``None``, when ``none``)."""
    check(value, Mapping, name, none=none)
    return value  # type: ignore[return-value]
