"""Stage 1 of decoding: bytes to one JSON value, parsed once, strictly.

Every reader (``decode``, ``decode_dict``, the ``Correlator``, the CLI) starts
here, and nothing after this stage sees the bytes again. The parse refuses
what a JSON value cannot keep, so that the value handed on re-encodes to what
the peer sent:

* a member repeated at any depth, escaped spellings included: parsers differ
  on which of the two wins, so a proxy and its backend would read two
  different messages (-32600, as for a repeated envelope member);
* NaN and Infinity, which JSON does not have; a nesting deeper than
  `MAX_DEPTH`; a ``\\u`` escape that is a lone surrogate; an integer of more
  than 4,300 digits (-32700);
* a number written as a float that would change kind as a double: beyond
  the range of a double (read as infinity) or below it (a nonzero number
  read as zero), -32700. Every other float is the IEEE double it reads as,
  the interoperable JSON number of RFC 8259 section 6 (``1e16``,
  ``6.02214076e23`` and ``1.5e300`` are ordinary numbers);
* an ``id`` written as a float that rounding makes another id: of a
  magnitude of 2**53 or more, where a double skips integers, or an integral
  double read from a token that is not exactly that integer (-32700).

A batch (a JSON array) is refused from its first byte, before any parse.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import jiter

from mcp_schema.base import MAX_EXACT_INTEGRAL_FLOAT
from mcp_schema.errors import InvalidRequestError, ParseError, clip

MAX_DEPTH = 200
"""Deepest nesting of arrays and objects a message may have (the JSON parser's own
limit); a deeper message is a -32700 parse error."""


def as_bytes(raw: object) -> bytes:
    """``raw`` as the UTF-8 bytes the parser reads; ``TypeError`` for other types.

    A str holding a lone surrogate is not Unicode text and has no UTF-8 form:
    -32700, as the same character written as a ``\\u`` escape is.
    """
    if type(raw) is bytes:
        return raw
    if isinstance(raw, str):
        try:
            return raw.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ParseError(
                f"Parse error: the text holds a lone surrogate (U+{ord(exc.object[exc.start]):04X}) "
                f"at index {exc.start}, which has no UTF-8 form"
            ) from None
    if isinstance(raw, (bytes, bytearray, memoryview)):
        return bytes(raw)
    raise TypeError(f"raw must be bytes, bytearray, memoryview or str, not {type(raw).__name__}")


def parse(data: bytes) -> dict[str, Any]:
    """The message's JSON value: an object, as parsed; `McpError` when it is none."""
    if data[:1] != b"{" and _BATCH.match(data):
        raise InvalidRequestError("Invalid Request: a batch, not one message (decode each element)")
    value, refusal = _parsed(data)
    if refusal is not None:
        if isinstance(refusal, InvalidRequestError):
            _address_repeated(refusal, data)
        raise refusal
    if (len(data) > _WALK_FROM or not _numbers_at_a_glance(data)) and not _plain_floats(value):
        _check_numbers(data)
    if type(value) is not dict:
        raise InvalidRequestError("Invalid Request: a JSON-RPC message is a JSON object")
    if type(value.get("id")) is float:
        _check_float_id(data, value["id"])
    return value


def _parsed(data: bytes) -> tuple[Any, InvalidRequestError | ParseError | None]:
    """The parsed value, or the refusal to raise (raised by the caller, so that
    it does not carry the parser's exception along)."""
    try:
        return jiter.from_json(data, catch_duplicate_keys=True, allow_inf_nan=False), None
    except ValueError as exc:
        return None, _refusal(str(exc))


def _address_repeated(err: InvalidRequestError, data: bytes) -> None:
    """A message refused for a repeated member is still a request, a
    notification or a response: read as most parsers would (the last member
    wins), it says whether to answer and with which id. A repeated ``id``
    names none."""
    from mcp_schema._codec.route import address  # the route reads envelopes

    try:
        lenient = jiter.from_json(data, allow_inf_nan=False)
    except ValueError:
        return
    if type(lenient) is dict:
        address(err, lenient)
        if err.data == {"member": "id"}:
            err.request_id = None


_BATCH = re.compile(rb"[ \t\r\n]*\[")
_DUPLICATE = re.compile(r'Detected duplicate key "(.*)" at (line \d+ column \d+)$', re.DOTALL)


def _refusal(message: str) -> InvalidRequestError | ParseError:
    """The error for a parser message (``... at line L column C``)."""
    duplicate = _DUPLICATE.match(message)
    if duplicate is not None:
        member = clip(duplicate.group(1))
        return InvalidRequestError(
            f'Invalid Request: the member "{member}" appears more than once in one object '
            f"(at {duplicate.group(2)})",
            {"member": member},
        )
    if message.startswith("recursion limit exceeded"):
        where = message.removeprefix("recursion limit exceeded")
        return ParseError(f"Parse error: nested deeper than {MAX_DEPTH} levels{where}")
    if message.startswith(("unexpected end of hex escape", "lone leading surrogate")):
        where = message.partition(" at ")[2]
        return ParseError(
            f"Parse error: a \\u escape is a lone surrogate, which cannot be kept, at {where}"
        )
    if message.startswith("number out of range"):
        where = message.partition(" at ")[2]
        return ParseError(f"Parse error: an integer of more than 4,300 digits at {where}")
    return ParseError(f"Parse error: {message}")


# Which float tokens could change kind, decided from the bytes at C speed:
# with every digit read as "0", "E" as "e" and a sign as "e", a token that
# overflows or underflows has an exponent of three digits or more ("e000",
# "ee000") or, with a shorter exponent, a run of 200 digits or more (its
# 300-odd digits written out). Both may also match elsewhere (a negative
# number of three digits, a long integer, hex in a string): the walk of the
# parsed value then clears them. Past `_WALK_FROM` bytes the walk alone is
# cheaper: it visits the values, not every byte.
_NUMBER_SHAPES = bytes.maketrans(b"123456789E+-", b"000000000eee")
_LONG_DIGITS = b"0" * 200
_WALK_FROM = 16 * 1024


def _numbers_at_a_glance(data: bytes) -> bool:
    shapes = data.translate(_NUMBER_SHAPES)
    # find() rather than "in": the operator costs a buffer lookup more per call.
    return shapes.find(b"e000") < 0 and shapes.find(_LONG_DIGITS) < 0


def _plain_floats(value: Any) -> bool:
    """Whether no float of ``value`` is an infinity or zero: the only doubles
    an overflow or an underflow reads as. A zero may be an honest ``0.0``:
    the exact check reads its token."""
    kind = type(value)
    if kind is dict:
        value = value.values()
    elif kind is not list:
        return kind is not float or (value != 0.0 and value - value == 0.0)
    for item in value:
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if not _plain_floats(item):
            return False
    return True


def _check_numbers(data: bytes) -> None:
    """The exact check of what the walk could not clear: every float token
    is read by the standard library's scanner, which calls back with its
    text."""
    try:
        json.loads(data, parse_float=_kept_float)
    except ParseError:
        raise
    except (ValueError, RecursionError):  # the parser accepted it: nothing to add
        return


def _kept_float(token: str) -> float:
    value = float(token)
    if math.isinf(value):
        raise _unkept(token, "is beyond the range of a double")
    if value == 0.0 and any(
        digit in "123456789" for digit in token.partition("e")[0].partition("E")[0]
    ):
        raise _unkept(token, "is below the range of a double (it would read as zero)")
    return value


def _check_float_id(data: bytes, rid: float) -> None:
    """An id written as a float is read as the integer it is, or refused when
    rounding made it one: another id than the peer's. A float that is no
    integer is left to the route (-32600, no id)."""
    if not rid.is_integer():
        return
    token = bytes(jiter.from_json(data, float_mode="lossless-float")["id"]).decode()
    if abs(rid) >= MAX_EXACT_INTEGRAL_FLOAT:
        raise _unkept(token, "is an id of 2**53 or more, where a double skips integers,")
    if Decimal(token) != int(rid):
        raise _unkept(token, f"is an id that a double reads as {int(rid)}, another integer,")


def _unkept(token: str, why: str) -> ParseError:
    return ParseError(f"Parse error: the number {clip(token, 40)} {why} and cannot be kept")
