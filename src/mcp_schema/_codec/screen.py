"""What is refused before any model is chosen: the input's type, batches,
numbers that cannot be kept, and repeated envelope members.

Model validation cannot see these: the JSON parser reads NaN, Infinity and
1e400 (as infinity) where a schema allows any JSON, and keeps the last of
repeated members. Scans of the bytes at C speed clear almost every message;
what they cannot rule out is parsed once more, with no model: the top-level
members alone, or the whole message with every number.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic_core import SchemaValidator, core_schema

from mcp_schema.errors import InvalidRequestError, ParseError, quote

MAX_DEPTH = 200
"""Deepest nesting of arrays and objects a message may have (the JSON parser's own
limit); a deeper message is a -32700 parse error."""

ENVELOPE_MEMBERS = ("jsonrpc", "id", "method", "params", "result", "error")


def as_input(raw: object) -> bytes | str:
    """``raw`` as something the JSON parser reads; ``TypeError`` for other types."""
    if isinstance(raw, (bytes, str)):
        return raw
    if isinstance(raw, (bytearray, memoryview)):
        return bytes(raw)
    raise TypeError(f"raw must be bytes, bytearray, memoryview or str, not {type(raw).__name__}")


def screen(raw: bytes | str) -> None:
    """Refuse what no model may see: batches, non-finite numbers, repeated envelope members."""
    opens_object = raw[:1] == (b"{" if isinstance(raw, bytes) else "{")
    if not opens_object and (_BATCH_TEXT.match(raw) if isinstance(raw, str) else _BATCH.match(raw)):
        # Refused from its first byte: an array is never built just to be refused.
        raise InvalidRequestError("Invalid Request: a batch, not one message (decode each element)")
    try:
        data = raw.encode() if isinstance(raw, str) else raw
    except UnicodeEncodeError:
        return  # a lone surrogate: the envelope sniff reports it
    if _finite_at_a_glance(data):
        # A large message is read for its members at once: the glance costs
        # as much there, and may still send it to the read.
        if len(data) > _LARGE or not _unique_at_a_glance(data):
            _refuse_repeated(_top_level_members(raw))
        return
    full_check(raw)


def full_check(raw: bytes | str) -> None:
    """Non-finite numbers and repeated envelope members, from a parse of the whole message."""
    if len(raw) <= _SMALL:
        _check_small(raw)
        return
    members: list[str] = []
    try:
        document = _SCREEN.validate_json(raw, context=members)
    except ValueError:
        # Not JSON, nested too deep, or a str UTF-8 cannot carry (a ValidationError
        # is a ValueError): the envelope sniff reports it.
        return
    _refuse_repeated(members)
    for key, value in document.items() if isinstance(document, dict) else [("", document)]:
        if not _finite(value):
            raise _not_finite(f"$[{quote(key)}]" if key else "$")


# The glances below are scans at C speed that spare almost every message the
# full check (a second parse, and a walk of every number). Each may answer
# False for a clean message ("NaN" inside a string, a nested "id" member),
# and the full check then decides; neither answers True where the full check
# would refuse.


def _finite_at_a_glance(data: bytes) -> bool:
    """No number in ``data`` can be non-finite: NaN and Infinity are spelled
    out, and with every digit and "." read as "0", and "E" and "+" as "e", a
    number beyond the double range has an exponent of three digits ("e000")
    or 200 integral digits; below both it is under 10**299."""
    shapes = data.translate(_NUMBER_SHAPES)
    # "N" and "I" read as one byte that JSON text never holds raw: a single
    # byte is found at memchr's speed, and most messages have neither letter.
    if _N_OR_I in shapes and (b"NaN" in data or b"Infinity" in data):
        return False
    return b"e000" not in shapes and (len(shapes) < len(_LONG_NUMBER) or _LONG_NUMBER not in shapes)


def _unique_at_a_glance(data: bytes) -> bool:
    """No envelope member can be repeated: a member name is written between
    quotes, and an envelope member's can only be hidden by escaping one of its
    letters (a ``\\u006`` or ``\\u007`` escape, itself suspect), so a name found
    once at most is written once at most."""
    if b"\\" in data and _ESCAPED_LETTER.search(data) is not None:
        return False
    found = _ENVELOPE_KEY.findall(data)
    return len(found) == len(set(found))


_LARGE = 64 * 1024
_N_OR_I = b"\x01"
_NUMBER_SHAPES = bytes.maketrans(b"0123456789.E+NI", b"00000000000ee" + _N_OR_I * 2)
_LONG_NUMBER = b"0" * 200
# Both from ENVELOPE_MEMBERS: the escapes that could spell one of its letters
# (\u0061-\u007a for lowercase names), and any of them written as a member.
_ESCAPED_LETTER = re.compile(
    rb"\\u00[%s]"
    % "".join(sorted({f"{ord(c):02x}"[0] for m in ENVELOPE_MEMBERS for c in m})).encode()
)
_ENVELOPE_KEY = re.compile(rb'"(%s)"[ \t\r\n]*:' % "|".join(ENVELOPE_MEMBERS).encode())


def _top_level_members(raw: bytes | str) -> list[str]:
    """The members of the top-level object as written, repeats and escapes included."""
    members: list[str] = []
    try:
        _MEMBERS.validate_json(raw, context=members)
    except ValueError:
        return []  # not JSON, or not an object: the envelope sniff reports it
    return members


def _not_finite(where: str) -> ParseError:
    return ParseError(
        f"Parse error: a number in {where} is NaN, Infinity or beyond the range "
        "of a double, and cannot be kept"
    )


def _refuse_repeated(members: list[str]) -> None:
    seen: set[str] = set()
    for key in members:
        if key in seen and key in ENVELOPE_MEMBERS:
            raise InvalidRequestError(
                f"Invalid Request: the member {quote(key)} appears more than once",
                {"member": key},
            )
        seen.add(key)


# Up to this size the standard-library parser is the cheaper check: it calls
# back for each float and each object (the last one it finishes is the
# top-level object, with its members as written, repeats and escapes included).
_SMALL = 4096


def _refuse_constant(token: str) -> float:
    raise _not_finite("$")


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _not_finite("$")
    return value


def _check_small(raw: bytes | str) -> None:
    last: list[tuple[str, Any]] = []

    def members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal last
        last = pairs
        return dict(pairs)

    try:
        document = json.loads(
            raw,
            object_pairs_hook=members,
            parse_float=_finite_float,
            parse_constant=_refuse_constant,
        )
    except (ValueError, RecursionError):
        return  # not JSON, or nested too deep: the envelope sniff reports it
    if isinstance(document, dict):
        _refuse_repeated([key for key, _ in last])


_BATCH = re.compile(rb"[ \t\r\n]*\[")
_BATCH_TEXT = re.compile(r"[ \t\r\n]*\[")


# One more pass of the JSON parser (in Rust, as fast as the model's own) sees
# what model validation cannot:
# * the JSON parser accepts NaN and Infinity, which JSON does not have, and
#   reads a number beyond the double range (1e400) as infinity, which would be
#   written back as null; where the schema allows any JSON it would be kept;
# * parsers keep the last of repeated members, others the first: a proxy and
#   this package would then route one message differently. A dict validator
#   sees every member of the top-level object, repeated ones included.


def _record_member(key: str, info: core_schema.ValidationInfo) -> str:
    members = info.context
    if isinstance(members, list):
        members.append(key)
    return key


_SCREEN = SchemaValidator(
    core_schema.union_schema(
        [
            core_schema.dict_schema(
                core_schema.with_info_plain_validator_function(_record_member),
                core_schema.any_schema(),
            ),
            core_schema.any_schema(),
        ],
        mode="left_to_right",
    )
)


# The members alone: a nested object is read as an empty one, so the parse
# builds almost no Python object.
_MEMBERS = SchemaValidator(
    core_schema.dict_schema(
        core_schema.with_info_plain_validator_function(_record_member),
        core_schema.union_schema(
            [
                core_schema.typed_dict_schema({}, extra_behavior="ignore"),
                core_schema.any_schema(),
            ],
            mode="left_to_right",
        ),
    )
)


def _finite(value: Any) -> bool:
    """Whether every number in a parsed JSON value is finite (iteratively: no depth limit)."""
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind is float and not math.isfinite(node):
            return False
    return True
