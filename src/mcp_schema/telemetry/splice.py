"""`splice`: a forwarded request's ``params._meta`` trace context rewritten
in its raw bytes, everything else byte for byte as the client sent it.

The gateway in monitor mode passes bytes unchanged, with one documented
exception: with telemetry active, the upstream's server span must be a
child of the gateway's client span, not of the client's, so the
``traceparent`` (and ``tracestate``) members of the message's
``params._meta`` are given the gateway's values. Parsing and re-encoding
the message would change its bytes elsewhere (spacing, escapes, number
forms, member order), so the value's bytes are found by a scan and only
they are replaced.

Only members that are there are rewritten: a message whose ``_meta`` holds
no ``traceparent`` (or has no ``_meta``, or no ``params``) is left as it is,
and its context goes upstream in the HTTP ``traceparent`` header, which the
receiver reads when ``_meta`` holds none (`propagation.extract`). A body
that is not one JSON object, or whose members repeat, is left alone too.
Nothing here imports OpenTelemetry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

__all__ = ["splice"]

_WS = b" \t\r\n"
_OPEN = {0x7B: 0x7D, 0x5B: 0x5D}  # { } and [ ]


class _Unreadable(Exception):
    """Not the JSON the scan expects: the body is left as it is."""


def _space(body: bytes, i: int) -> int:
    while i < len(body) and body[i] in _WS:
        i += 1
    return i


def _string_end(body: bytes, i: int) -> int:
    """The index past the string starting at ``body[i]`` (a quote)."""
    i += 1
    while True:
        quote = body.find(b'"', i)
        if quote < 0:
            raise _Unreadable
        backslashes = 0
        j = quote - 1
        while body[j] == 0x5C:  # a quote after an odd run of backslashes is escaped
            backslashes += 1
            j -= 1
        if backslashes % 2 == 0:
            return quote + 1
        i = quote + 1


def _value_end(body: bytes, i: int) -> int:
    """The index past the JSON value starting at ``body[i]``, nested values
    skipped by counting brackets outside strings (no recursion)."""
    if i >= len(body):
        raise _Unreadable
    first = body[i]
    if first == 0x22:
        return _string_end(body, i)
    if first not in _OPEN:
        j = i
        while j < len(body) and body[j] not in b",}] \t\r\n":
            j += 1
        if j == i:
            raise _Unreadable
        return j
    depth, j = 0, i
    while j < len(body):
        byte = body[j]
        if byte == 0x22:
            j = _string_end(body, j)
            continue
        if byte in b"{[":
            depth += 1
        elif byte in b"}]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise _Unreadable


def _members(body: bytes, i: int) -> Iterator[tuple[str, int, int]]:
    """Each member of the object at ``body[i]``: its key (decoded: a key may
    be written with escapes) and its value's span."""
    if i >= len(body) or body[i] != 0x7B:
        raise _Unreadable
    i = _space(body, i + 1)
    if i < len(body) and body[i] == 0x7D:
        return
    while True:
        if i >= len(body) or body[i] != 0x22:
            raise _Unreadable
        end = _string_end(body, i)
        try:
            key = json.loads(body[i:end])
        except ValueError:
            raise _Unreadable from None
        i = _space(body, end)
        if i >= len(body) or body[i] != 0x3A:
            raise _Unreadable
        start = _space(body, i + 1)
        stop = _value_end(body, start)
        yield key, start, stop
        i = _space(body, stop)
        if i < len(body) and body[i] == 0x2C:
            i = _space(body, i + 1)
            continue
        if i < len(body) and body[i] == 0x7D:
            return
        raise _Unreadable


def _member(body: bytes, i: int, name: str) -> tuple[int, int] | None:
    """The span of member ``name``'s value in the object at ``body[i]``;
    `_Unreadable` when a key repeats (which one a reader takes is its own)."""
    found = None
    seen: set[str] = set()
    for key, start, stop in _members(body, i):
        if key in seen:
            raise _Unreadable
        seen.add(key)
        if key == name:
            found = (start, stop)
    return found


def splice(body: bytes, values: Mapping[str, str]) -> bytes:
    """``body`` with each member of ``params._meta`` that ``values`` names,
    and that holds a string, set to its value (see the module); ``body``
    itself when there is nothing to rewrite or it cannot be read."""
    try:
        params = _member(body, _space(body, 0), "params")
        if params is None or body[params[0]] != 0x7B:
            return body
        meta = _member(body, params[0], "_meta")
        if meta is None or body[meta[0]] != 0x7B:
            return body
        spans = []
        for key, value in values.items():
            span = _member(body, meta[0], key)
            if span is not None and body[span[0]] == 0x22:
                spans.append((span, json.dumps(value).encode("ascii")))
    except _Unreadable:
        return body
    for (start, stop), encoded in sorted(spans, reverse=True):  # from the end: spans stay put
        body = body[:start] + encoded + body[stop:]
    return body
