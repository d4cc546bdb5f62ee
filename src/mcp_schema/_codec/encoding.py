"""``encode``: a message back to its JSON bytes, exactly or not at all.

The common case costs one pass of pydantic-core over the message plus a few
scans of the bytes it wrote. What pydantic would otherwise write as a
lookalike is refused with a `ValueError` naming its JSON path:

* untyped members (``Any``, ``dict[str, Any]``, unknown members) are checked
  for JSON as they are written (`mcp_schema.base.McpModel`): a set, bytes, a
  ``datetime`` or NaN there stops the pass;
* a typed member holding a value of another type (assigned after
  construction) makes pydantic-core warn, which stops the pass too;
* NaN or an infinity in a typed number member is written as ``null`` by
  pydantic, and an `Omittable` member set to ``None`` as ``null``, so output
  holding ``null`` is walked once more (few messages hold one); so is output
  holding a run of more than `MAX_DIGITS` digits.

A stopped pass, or a suspicious output, is walked in Python
(`mcp_schema._exact.find_problem`), which either names the problem or, for an
`Omittable` member holding ``None``, writes the message without it.

Members come out in the conventional order: ``jsonrpc``, ``id``, ``method``,
``params``, ``result``, ``error``, then the rest, as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, from_json, to_json

from mcp_schema._exact import (
    MAX_DIGITS,
    NotJson,
    exact,
    find_problem,
    is_json,
    items_of,
    written_members,
)

ENVELOPE_ORDER = ("jsonrpc", "id", "method", "params", "result", "error")
"""The order of a message's top-level members; others follow, in their own order."""

_RANK = {name: rank for rank, name in enumerate(ENVELOPE_ORDER)}
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * (MAX_DIGITS + 1)


def encode(message: BaseModel | Mapping[str, Any]) -> bytes:
    """The JSON bytes of a message: wire names, absent members left out.

    A mapping is written as JSON as it is: `McpError.to_response`, or a message
    of the dict view (`mcp_schema.codec.decode_dict`). Raises `ValueError`
    naming the path (``$.params.arguments.x``) of the first value with no exact
    JSON text: NaN, an infinity, an integer of more than 4,300 digits (which
    ``decode`` refuses), a set, bytes, a non-string key, a lone surrogate, any
    other non-JSON object. An `Omittable` member set to ``None`` after
    construction is left out, as construction leaves it out.
    """
    if type(message) is dict:
        return _mapping(message)
    if isinstance(message, BaseModel):
        return _model(message)
    if isinstance(message, Mapping):
        return _mapping(message)
    raise TypeError(f"encode takes a message model or a mapping, not {type(message).__name__}")


def _model(message: BaseModel) -> bytes:
    cls = type(message)
    if getattr(cls, "__mcp_exact__", False) is not True:
        return _exact(message)  # not ours: its untyped members go unchecked
    try:
        out: bytes = cls.__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)
    except (PydanticSerializationError, RecursionError):
        return _exact(message)
    if b"null" in out or (len(out) > MAX_DIGITS and _LONG_RUN in out.translate(_DIGITS_AS_ZERO)):
        return _exact(message)
    return _ordered(out, message)


def _exact(message: Any) -> bytes:
    """The slow path: name the first problem, or write the message as its
    JSON value, walked member by member (`Omittable` members holding ``None``
    left out)."""
    problem = find_problem(message)
    if problem is not None:
        raise problem
    document = _as_json(message)
    try:
        out: bytes = to_json(_in_order(document) if isinstance(document, dict) else document)
    except (PydanticSerializationError, RecursionError) as exc:  # what the walk missed
        raise NotJson("$", str(exc)) from None
    return out


def _as_json(value: Any) -> Any:
    """``value`` as the plain JSON value `encode` writes for it (checked by
    `find_problem` first), of exact builtin types: models become their
    written members, subclasses the builtin values they hold (keys too, so
    that no override is called, not even ``__hash__``)."""
    kind = type(value)
    if issubclass(kind, BaseModel):
        return {exact(wire): _as_json(item) for wire, item in written_members(value)}
    if issubclass(kind, dict):
        return {exact(key): _as_json(item) for key, item in items_of(value)}
    value = exact(value)
    if type(value) is list:
        return [_as_json(item) for item in value]
    return value


def _mapping(message: Mapping[str, Any]) -> bytes:
    if type(message) is dict:
        plain: Any = message
    else:  # a dict subclass by what it holds, another mapping by its protocol
        plain = dict(items_of(message) if isinstance(message, dict) else message.items())
    if not is_json(plain, 0, False):
        return _exact(plain)  # a problem, or models inside the mapping
    try:
        out: bytes = to_json(_in_order(plain))
    except (PydanticSerializationError, RecursionError):  # a lone surrogate
        return _exact(plain)
    return out


def encode_answer(message: dict[str, Any]) -> bytes:
    """`encode` of a response a session composed: ``jsonrpc``, ``id`` and
    ``result``, in that order, its id one a route read. Only the result is
    walked (at the depth it has in the message): the rest is the session's."""
    if not is_json(message["result"], 1, False):
        return _exact(message)  # a problem, or models inside the mapping
    try:
        out: bytes = to_json(message)
    except (PydanticSerializationError, RecursionError):  # a lone surrogate
        return _exact(message)
    return out


def _in_order(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with its members in the conventional order (itself when they are)."""
    keys = tuple(message)
    order = _ORDERS.get(keys)
    if order is None:
        order = tuple(sorted(keys, key=_rank_of))
        if order == keys:
            order = ()
        if len(_ORDERS) < 1024:  # peers' unknown members vary: a bounded memo
            _ORDERS[keys] = order
    if not order:
        return message
    return {key: message[key] for key in order}


_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}
"""Each top-level member list seen, and its conventional order (empty: already in it)."""


def _ordered(out: bytes, message: BaseModel) -> bytes:
    """``out`` with its top-level members in the conventional order.

    pydantic writes a model's fields in their declared order, then its unknown
    members. When that is not the conventional order (a request declares
    ``id`` first; older versions declare ``method`` and ``params`` before
    ``jsonrpc``), ``jsonrpc`` and ``id`` are moved to the front as bytes: a
    string holds no unescaped quote, so ``,"jsonrpc":"2.0"`` after a leading
    ``id`` ends the id, and the last ``,"id":`` before a trailing ``jsonrpc``
    starts it.
    """
    plan = _plan(type(message))
    extra = message.__pydantic_extra__
    if extra:
        return _reread(out) if not _RANK.keys().isdisjoint(extra) or plan else out
    if plan is None:
        return out
    edge = plan.edge
    if edge is not None and message.__dict__.get("jsonrpc") == "2.0":
        if edge == "id first" and out.startswith(b'{"id":'):
            end = out.find(b',"jsonrpc":"2.0"', 6)
            if end > 0:
                return b'{"jsonrpc":"2.0","id":' + out[6:end] + out[end + 16 :]
        elif out.endswith(b',"jsonrpc":"2.0"}'):
            stop = len(out) - 17
            if edge == "id last" and "id" in message.__pydantic_fields_set__:
                start = out.rfind(b',"id":', 0, stop)
                if start > 0:
                    return (
                        b'{"jsonrpc":"2.0","id":'
                        + out[start + 6 : stop]
                        + b","
                        + out[1:start]
                        + b"}"
                    )
            else:
                return b'{"jsonrpc":"2.0",' + out[1:stop] + b"}"
    return _moved(out, message, plan)


def _moved(out: bytes, message: BaseModel, plan: _Plan) -> bytes:
    """The general case of `_ordered`: every member but the one payload
    (``params``, ``result`` or ``error``) is a short scalar whose text is known,
    so the payload's text is what lies between them."""
    if message.__pydantic_extra__ or plan.other:
        return _reread(out)  # members beyond the envelope: rare, read again
    fields_set = message.__pydantic_fields_set__
    values = message.__dict__
    before: list[bytes] = []
    after: list[bytes] = []
    pieces: list[tuple[int, bytes]] = []
    payload: tuple[str, bytes] | None = None
    for wire, key in plan.fields:
        if wire not in fields_set:
            continue
        if wire in _SCALARS:
            text = _scalar_text(values.get(wire))
            if text is None:
                return _reread(out)
            piece = key + text
            (after if payload is not None else before).append(piece)
            pieces.append((_RANK[wire], piece))
        elif payload is None:
            payload = (wire, key)
        else:
            return _reread(out)
    head = b"{" + b",".join(before)
    if payload is None:
        if out != head + b"}":
            return _reread(out)
    else:
        wire, key = payload
        opening = head + (b"," if before else b"") + key
        closing = b"".join(b"," + piece for piece in after) + b"}"
        if not (out.startswith(opening) and out.endswith(closing)):
            return _reread(out)
        pieces.append((_RANK[wire], out[len(opening) - len(key) : len(out) - len(closing)]))
    pieces.sort()
    return b"{" + b",".join(piece for _, piece in pieces) + b"}"


_SCALARS = frozenset({"jsonrpc", "id", "method"})


def _scalar_text(value: object) -> bytes | None:
    """The JSON text of an envelope scalar (``jsonrpc``, ``id``, ``method``), when
    it needs no escaping: what pydantic writes for it, too."""
    if type(value) is str:
        if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
            return b'"' + value.encode() + b'"'
        return None
    if type(value) is int:
        return str(value).encode()
    return None


class _Plan(NamedTuple):
    fields: tuple[tuple[str, bytes], ...]
    """(wire name, its ``"name":`` bytes) of each field, in the declared order."""
    other: bool
    """Whether a field is no envelope member, or renamed (then read again)."""
    edge: str | None
    """Where ``jsonrpc`` and ``id`` are declared when the other fields are in the
    conventional order: "id first" (``id``, ``jsonrpc``, ...), "id last" (...,
    ``id``, ``jsonrpc``) or "last" (..., ``jsonrpc``; no ``id`` field)."""


_PLANS: dict[type[BaseModel], _Plan | None] = {}


def _plan(cls: type[BaseModel]) -> _Plan | None:
    """How the fields of ``cls`` are moved into the conventional order; None
    when they are declared in it."""
    try:
        return _PLANS[cls]
    except KeyError:
        pass
    wires = [info.serialization_alias or name for name, info in cls.model_fields.items()]
    plan = None
    if wires != sorted(wires, key=_rank_of):
        rest = [wire for wire in wires if wire not in ("jsonrpc", "id")]
        edge = None
        if rest == sorted(rest, key=_rank_of):
            if wires[:2] == ["id", "jsonrpc"]:
                edge = "id first"
            elif wires[-2:] == ["id", "jsonrpc"]:
                edge = "id last"
            elif wires[-1:] == ["jsonrpc"] and "id" not in wires:
                edge = "last"
        plan = _Plan(
            tuple((wire, b'"%s":' % wire.encode()) for wire in wires),
            any(wire not in _RANK for wire in wires) or list(cls.model_fields) != wires,
            edge,
        )
    _PLANS[cls] = plan
    return plan


def _rank_of(wire: str) -> int:
    return _RANK.get(wire, len(_RANK))


def _reread(out: bytes) -> bytes:
    """``out`` read and written again in the conventional order (exact: every
    number and string reads back as what was written)."""
    document = from_json(out)
    if not isinstance(document, dict):
        return out
    ordered = _in_order(document)
    if ordered is document:
        return out
    written: bytes = to_json(ordered)
    return written
