"""Which Python values `mcp_schema.codec.encode` writes: JSON values, exactly.

A JSON value here is ``None``, a ``bool``, a ``str`` UTF-8 can carry, an
``int`` of at most `MAX_DIGITS` digits (what `decode` reads back), a finite
``float``, a ``list`` (or ``tuple``) of JSON values, a ``dict`` with ``str``
keys and JSON values, or a model of this package (which checks its own
members when written). Anything else (NaN, ``set``, ``bytes``, a
``datetime``, an ``int`` key...) has no JSON text that reads back as the same
value, so ``encode`` refuses it instead of writing ``null`` or a lookalike.

Two walks: `is_json`, a yes/no without bookkeeping for the common case, and
`find_problem`, which names the path of the first problem once there is one.

A subclass of a JSON type is judged by what it holds, read as pydantic-core
writes it: through the builtin type's own methods (`exact`), never through
its overrides, so a float subclass whose comparisons lie or a dict subclass
hiding its items cannot pass a NaN, and a key whose ``__hash__`` raises is
never hashed. The type is read with ``type()``: ``isinstance`` believes an
object's ``__class__``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel

from mcp_schema._text import clip

MAX_DIGITS = getattr(sys.int_info, "default_max_str_digits", 4300) or 4300
"""Longest integer, in decimal digits, that is written (and that ``decode`` reads)."""

MAX_NESTING = 201
"""Deepest nesting of arrays and objects written, counting the outermost
value: the deepest the parser reads (201 arrays; objects stop at 200), so
whatever ``decode`` reads ``encode`` writes."""

_INT_LIMIT = 10**MAX_DIGITS
_FINITE_LIMIT = sys.float_info.max


class NotJson(ValueError):
    """A value with no exact JSON text, and where it is (a JSON path)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _self_checking(value: BaseModel) -> bool:
    # Models of this package check their untyped members when written
    # (base.McpModel), so a walk of plain data stops at them.
    return getattr(type(value), "__mcp_exact__", False) is True


def is_json(value: Any, depth: int = 0, models: bool = True) -> bool:
    """Whether ``value`` is a JSON value (see the module), without naming where
    it is not: the walk of the common case. ``models=False``: a model is not
    taken either (inside a plain mapping pydantic would write all its members).

    Agrees with `find_problem` on every value: ``find_problem(v) is None``
    exactly when ``is_json(v)``.
    """
    kind = type(value)
    if kind is str:
        return True
    if kind is dict:
        if depth >= MAX_NESTING:
            return False
        for key, item in value.items():
            if type(key) is not str:
                return False
            kind = type(item)
            if kind is str or kind is bool or item is None:
                continue
            if kind is int and -_INT_LIMIT < item < _INT_LIMIT:
                continue  # an id, a count: no call for the common scalars
            if not is_json(item, depth + 1, models):
                return False
        return True
    if kind is list or kind is tuple:
        if depth >= MAX_NESTING:
            return False
        for item in value:
            kind = type(item)
            if kind is str or kind is bool or item is None:
                continue
            if kind is int and -_INT_LIMIT < item < _INT_LIMIT:
                continue
            if not is_json(item, depth + 1, models):
                return False
        return True
    if kind is int:
        return bool(-_INT_LIMIT < value < _INT_LIMIT)
    if kind is float:
        return bool(-_FINITE_LIMIT <= value <= _FINITE_LIMIT)
    if value is None or kind is bool:
        return True
    if isinstance(value, BaseModel):
        if not models:
            return False
        return _self_checking(value) or find_problem(value, "$", depth) is None
    # Subclasses (an IntEnum, a str Enum, an OrderedDict) are written as their base.
    if issubclass(kind, (str, int, float, dict, list, tuple)):
        return find_problem(value, "$", depth, models) is None
    return False


def exact(value: Any) -> Any:
    """A str, int, float, list or tuple subclass as the builtin value it
    holds (read by the builtin's own method, whatever the subclass
    overrides); anything else as it is. A dict's items are read with
    `items_of`."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool:
        return value
    if issubclass(kind, str):
        return str.__str__(value)
    if issubclass(kind, int):
        return int.__int__(value)
    if issubclass(kind, float):
        return float.__float__(value)
    if issubclass(kind, list):
        return list(list.__iter__(value))
    if issubclass(kind, tuple):
        return list(tuple.__iter__(value))
    return value


def items_of(value: dict[Any, Any]) -> Any:
    """The items a dict (or a dict subclass) holds, as pydantic-core reads them."""
    return dict.items(value)


def member(path: str, key: str) -> str:
    """``path`` extended by the member ``key``: ``$.params.name``, ``$.params["a b"]``."""
    if key.isidentifier() and key.isascii():
        return f"{path}.{key}"
    return f"{path}[{clip(json.dumps(key, ensure_ascii=False))}]"


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def find_problem(
    value: Any, path: str = "$", depth: int = 0, models: bool = True
) -> NotJson | None:
    """The first place in ``value`` that is not a JSON value, or None.

    Models are walked as ``encode`` writes them: the members that were set,
    under their wire names, and their unknown members; an `Omittable` member
    holding ``None`` is left out by ``encode``, so it is no problem here.
    """
    kind = type(value)
    if kind is bool or value is None:
        return None
    if issubclass(kind, BaseModel):
        if depth >= MAX_NESTING:
            return NotJson(path, f"nested deeper than {MAX_NESTING} levels")
        if not models:
            return NotJson(path, f"a {_type_name(value)} model inside a plain mapping")
        for wire, item in written_members(value):
            found = find_problem(item, member(path, exact(wire)), depth + 1)
            if found is not None:
                return found
        return None
    if issubclass(kind, dict):
        if depth >= MAX_NESTING:
            return NotJson(path, f"nested deeper than {MAX_NESTING} levels")
        for key, item in items_of(value):
            if not issubclass(type(key), str):
                return NotJson(path, f"a key is a {_type_name(key)}, not a string")
            found = find_problem(item, member(path, exact(key)), depth + 1, models)
            if found is not None:
                return found
        return None
    if not issubclass(kind, (str, int, float, list, tuple)):
        return NotJson(path, f"a {_type_name(value)} is not a JSON value")
    value = exact(value)
    if type(value) is str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return NotJson(path, f"a string UTF-8 cannot carry (at character {exc.start})")
        return None
    if type(value) is int:
        if -_INT_LIMIT < value < _INT_LIMIT:
            return None
        return NotJson(path, f"an integer of more than {MAX_DIGITS:,} digits")
    if type(value) is float:
        if -_FINITE_LIMIT <= value <= _FINITE_LIMIT:
            return None
        return NotJson(path, f"{value!r} is not a JSON number")
    if depth >= MAX_NESTING:
        return NotJson(path, f"nested deeper than {MAX_NESTING} levels")
    for index, item in enumerate(value):
        found = find_problem(item, f"{path}[{index}]", depth + 1, models)
        if found is not None:
            return found
    return None


def written_members(model: BaseModel) -> list[tuple[str, Any]]:
    """(wire name, value) of each member ``encode`` writes for ``model``, in the
    order pydantic writes them: the fields that were set, as declared (an
    `Omittable` one holding ``None`` left out), then the unknown members."""
    fields_set = model.__pydantic_fields_set__
    values = model.__dict__
    omitted = omitted_members(model)
    written = [
        (info.serialization_alias or name, values.get(name))
        for name, info in type(model).model_fields.items()
        if name in fields_set and name not in omitted
    ]
    extra = model.__pydantic_extra__
    if extra:
        written.extend(extra.items())
    return written


def omitted_members(model: BaseModel) -> frozenset[str]:
    """The `Omittable` members of ``model`` that were set to ``None``: ``encode``
    leaves them out, as construction does."""
    omittable = getattr(type(model), "__mcp_omittable__", None)
    if not omittable:
        return frozenset()
    values = model.__dict__
    return frozenset(
        name
        for name in omittable
        if name in model.__pydantic_fields_set__ and values.get(name) is None
    )
