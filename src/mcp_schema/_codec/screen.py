"""What is refused before any model is chosen: the input's type, batches,
numbers that cannot be kept, and repeated envelope members.

A small message is searched (C-speed) for what needs a closer look; a
suspicious or large one is parsed once more by the standard library parser,
keeping objects as lists of members so repeated ones are seen.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

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
    text = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _BATCH.match(text):
        # Refused from its first byte: an array is never built just to be refused.
        raise InvalidRequestError("Invalid Request: batches are not part of MCP")
    if len(text) > _SEARCH_LIMIT or _suspicious(text):
        _exact_check(text)


_BATCH = re.compile(rb"[ \t\r\n]*\[")

# Up to this size a few searches tell whether a message needs the exact check; a
# larger one always gets it (one standard-library parse costs less than the
# searches there).
_SEARCH_LIMIT = 1024


# The JSON parser accepts NaN and Infinity, which JSON does not have, and reads a
# number beyond the double range (1e400) as infinity, which would be written back
# as null. Such a number has an exponent of three digits or more, or 309 digits.
_LARGE_EXPONENT = (re.compile(rb"e[+]?[0-9]{3}"), re.compile(rb"E[+]?[0-9]{3}"))
_DIGITS = b"0123456789"

# Parsers keep the last of repeated members, others the first: a proxy and this
# package would then route one message differently. A member name may also be
# spelled with escapes ("m\u0065thod").
_QUOTED_MEMBERS = tuple(b'"' + name.encode() + b'"' for name in ENVELOPE_MEMBERS)


def _suspicious(text: bytes) -> bool:
    return (
        (b"N" in text and b"NaN" in text)
        or (b"I" in text and b"Infinity" in text)
        or any(pattern.search(text) for pattern in _LARGE_EXPONENT)
        or len(text) - len(text.translate(None, _DIGITS)) >= 309
        or b"\\u" in text
        or any(text.count(name) > 1 for name in _QUOTED_MEMBERS)
    )


def _exact_check(text: bytes) -> None:
    try:
        # Objects stay lists of pairs, so repeated members are all still there.
        members = json.loads(
            text, object_pairs_hook=list, parse_constant=_refuse_constant, parse_float=_finite
        )
    except (ValueError, RecursionError):
        # Malformed, or nested far deeper than MAX_DEPTH: the envelope sniff,
        # which has a depth limit of its own, reports it.
        return
    if isinstance(members, list) and not _BATCH.match(text):
        seen: set[str] = set()
        for key, _ in members:
            if key in seen and key in ENVELOPE_MEMBERS:
                raise InvalidRequestError(
                    f"Invalid Request: the member {quote(key)} appears more than once",
                    {"member": key},
                )
            seen.add(key)


def _refuse_constant(token: str) -> Any:
    raise ParseError(f"Parse error: {token} is not a JSON number")


def _finite(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ParseError(
            f"Parse error: the number {quote(token)} is beyond the range of a double "
            "and cannot be kept"
        )
    return value
