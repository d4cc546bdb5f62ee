"""Hypothesis building blocks for JSON wire values (hand-written runtime module).

The generated ``v*/strategies.py`` modules spell every schema definition in
terms of these functions, the way ``models.py`` spells it in terms of
`mcp_schema.base`. Each draws JSON values (``dict``, ``list``, ``str``,
``int``, ``float``, ``bool``, ``None``) that the definition's schema accepts:

* strings honour length bounds; a ``format`` member draws values of that
  shape as well as arbitrary strings (JSON Schema treats ``format`` as an
  annotation, so both are valid);
* integers are ``int`` and sometimes an integral ``float`` (``5.0`` is a JSON
  Schema integer), numbers are ``int`` or finite ``float``; never ``bool``;
* objects draw their required members, some optional ones, and, unless the
  schema closes them, sometimes unknown members. An unknown member's name is
  never one the version declares anywhere, nor a snake_case attribute name:
  such a key would be read as (or instead of) a declared member, by a union
  arm it was not drawn for, or by the model's attribute.

Needs the ``testing`` extra (Hypothesis); nothing in the base package imports it.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from mcp_schema._args import check

__all__ = [
    "Answers",
    "Json",
    "any_json",
    "arrays",
    "booleans",
    "consts",
    "integers",
    "maps",
    "nulls",
    "numbers",
    "objects",
    "one_of",
    "recursive",
    "result_types",
    "strings",
    "unknown_members",
]

Json = Any
"""A JSON value as ``json.loads`` returns it."""

Strategy = st.SearchStrategy[Json]

# Sizes stay small: a handler test wants many varied messages, not big ones,
# and every nesting level multiplies the size of a draw.
MAX_EXTRA_ITEMS = 2
MAX_MAP_ITEMS = 2
MAX_UNKNOWN_MEMBERS = 2
MAX_JSON_DEPTH = 3
ID_FLOAT_LIMIT = 2**53
"""Integral floats stay below this magnitude: a request id is an integer, and
from here on a double skips integers, so decoding refuses an id written as
such a float (it could be another request). Numbers draw every double."""


def booleans() -> Strategy:
    return st.booleans()


def nulls() -> Strategy:
    return st.none()


def consts(first: Json, *more: Json) -> Strategy:
    return st.sampled_from((first, *more)) if more else st.just(first)


_SHAPED: dict[str, Strategy] = {
    "byte": st.binary(max_size=24).map(lambda b: base64.b64encode(b).decode("ascii")),
    "uri": st.builds(
        "{}://{}/{}".format,
        st.sampled_from(["https", "file", "urn"]),
        st.from_regex(r"[a-z0-9.-]{1,12}", fullmatch=True),
        st.text(max_size=8),
    ),
    "uri-template": st.from_regex(r"[a-z]{1,6}://\{[a-z]{1,6}\}(/[a-z]{0,6})?", fullmatch=True),
}


def strings(
    min_size: int | None = None, max_size: int | None = None, *, format: str | None = None
) -> Strategy:
    check(min_size, int, "min_size", none=True)
    check(max_size, int, "max_size", none=True)
    check(format, str, "format", none=True)
    plain = st.text(min_size=min_size or 0, max_size=max_size)
    shaped = _SHAPED.get(format or "")
    if shaped is None or min_size is not None or max_size is not None:
        return plain
    return shaped | plain


def _int_range(ge: float | None, le: float | None) -> tuple[int | None, int | None]:
    return (
        None if ge is None else math.ceil(ge),
        None if le is None else math.floor(le),
    )


def integers(ge: float | None = None, le: float | None = None) -> Strategy:
    low, high = _int_range(ge, le)
    ints = st.integers(low, high)
    safe_low = max(1 - ID_FLOAT_LIMIT, low) if low is not None else 1 - ID_FLOAT_LIMIT
    safe_high = min(ID_FLOAT_LIMIT - 1, high) if high is not None else ID_FLOAT_LIMIT - 1
    if safe_low > safe_high:
        return ints
    return ints | st.integers(safe_low, safe_high).map(float)


def _floats(ge: float | None = None, le: float | None = None) -> Strategy:
    """Finite floats within the bounds: every double, subnormals to 1.7e308,
    as peers read them (RFC 8259 section 6)."""
    return st.floats(ge, le, allow_nan=False, allow_infinity=False)


def numbers(ge: float | None = None, le: float | None = None) -> Strategy:
    low, high = _int_range(ge, le)
    floats = _floats(ge, le)
    if low is not None and high is not None and low > high:
        return floats
    return st.integers(low, high) | floats


def arrays(item: Strategy, min_size: int | None = None, max_size: int | None = None) -> Strategy:
    check(item, st.SearchStrategy, "item")
    check(min_size, int, "min_size", none=True)
    check(max_size, int, "max_size", none=True)
    low = min_size or 0
    high = low + MAX_EXTRA_ITEMS if max_size is None else min(max_size, low + MAX_EXTRA_ITEMS)
    return st.lists(item, min_size=low, max_size=high)


def maps(value: Strategy) -> Strategy:
    check(value, st.SearchStrategy, "value")
    return st.dictionaries(st.text(max_size=12), value, max_size=MAX_MAP_ITEMS)


def one_of(*arms: Strategy) -> Strategy:
    return st.one_of(arms)


def recursive(leaves: Strategy, extend: Callable[[Strategy], Strategy]) -> Strategy:
    """A definition that contains itself, nested at most `MAX_JSON_DEPTH` times.

    Unrolled rather than ``st.recursive``: a fixed depth is the bound a
    handler test wants, and it draws several times faster.
    """
    check(leaves, st.SearchStrategy, "leaves")
    if not callable(extend):
        raise TypeError(f"extend must be callable, not {type(extend).__name__}")
    nested = leaves
    for _ in range(MAX_JSON_DEPTH):
        nested = extend(nested)
    return nested


def _containers(inner: Strategy) -> Strategy:
    return (
        _SCALARS
        | st.lists(inner, max_size=MAX_MAP_ITEMS)
        | st.dictionaries(st.text(max_size=8), inner, max_size=MAX_MAP_ITEMS)
    )


_SCALARS: Strategy = st.none() | st.booleans() | st.integers() | _floats() | st.text(max_size=12)
_ANY_JSON = recursive(_SCALARS, _containers)
_SHALLOW_JSON = _containers(_SCALARS)


def any_json() -> Strategy:
    """Any JSON value (a schema that says nothing), nested a bounded number of times."""
    return _ANY_JSON


def unknown_members(taken: frozenset[str], values: Strategy | None = None) -> Strategy:
    """Sometimes a few members no schema of the version declares."""
    check(taken, (frozenset, set), "taken")
    check(values, st.SearchStrategy, "values", none=True)
    keys = st.text(max_size=12).filter(lambda key: key not in taken)
    return st.dictionaries(
        keys, _SHALLOW_JSON if values is None else values, max_size=MAX_UNKNOWN_MEMBERS
    )


def _merged(parts: tuple[dict[str, Json], dict[str, Json]]) -> dict[str, Json]:
    known, unknown = parts
    return {**known, **unknown} if unknown else known


def objects(
    required: Mapping[str, Strategy],
    optional: Mapping[str, Strategy],
    unknown: Strategy | None,
) -> Strategy:
    """An object with every required member, some optional ones and, when
    ``unknown`` is given (the object is open), sometimes members from it."""
    check(required, Mapping, "required")
    check(optional, Mapping, "optional")
    check(unknown, st.SearchStrategy, "unknown", none=True)
    known = st.fixed_dictionaries(dict(required), optional=dict(optional))
    if unknown is None:
        return known
    return st.tuples(known, unknown).map(_merged)


def result_types(complete: Strategy, alternatives: Mapping[str, Strategy]) -> Strategy:
    """A method's result or one of the results told apart from it by ``resultType``.

    The complete result's ``resultType`` is an open string: a value that tags
    an alternative would make it that alternative, so it is never drawn.
    """
    check(complete, st.SearchStrategy, "complete")
    check(alternatives, Mapping, "alternatives")
    tags = frozenset(alternatives)
    own = complete.filter(lambda value: value.get("resultType") not in tags)
    return st.one_of(own, *alternatives.values())


@dataclass(frozen=True)
class Answers:
    """The results that may answer one request method."""

    complete: Strategy
    """The method's own result."""
    tagged: Mapping[str, Strategy] = field(default_factory=dict)
    """Alternatives told apart by their ``resultType``, by that value."""
    untagged: tuple[Strategy, ...] = ()
    """Alternatives told apart otherwise (2025-11-25: a created task has ``task``)."""

    def results(self, more_tagged: Mapping[str, Strategy] | None = None) -> Strategy:
        """Any of them; ``more_tagged`` adds alternatives a negotiated extension brings."""
        tagged = {**self.tagged, **(more_tagged or {})}
        own = result_types(self.complete, tagged) if tagged else self.complete
        return st.one_of(own, *self.untagged)
