"""Trace context in ``params._meta`` (SEP-414), and over HTTP headers.

The conventions carry the W3C keys unprefixed in a message's ``_meta``
(``traceparent``, ``tracestate``, ``baggage``), and the receiver takes the
context found there as the server span's parent, over the HTTP request's own
``traceparent`` (one HTTP request may carry several MCP messages, and one
message may be retried over several HTTP requests). Values come from a peer:
only strings of bounded length and of the characters the W3C formats are
written in (printable ASCII, and tabs) are handed to the propagators, which
log a value they cannot read as it is: a line break in it would forge a log
line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.context import Context

__all__ = ["KEYS", "MAX_CARRIED", "carrier_of", "extract", "inject"]

KEYS = ("traceparent", "tracestate", "baggage")
"""The context keys of ``_meta`` and of HTTP headers."""

MAX_CARRIED = 512
"""Longest value taken from a peer, in characters (W3C allows tracestate
512 characters; a longer value is not read at all)."""

_W3C_TEXT = re.compile(r"[\t -~]*")


def carrier_of(source: Mapping[str, Any] | None) -> dict[str, str]:
    """The context keys of ``source`` (a ``_meta`` object, or headers by
    lower-case name) that are strings short enough to read, of printable
    ASCII (and tabs)."""
    if not source:
        return {}
    carrier: dict[str, str] = {}
    for key in KEYS:
        value = source.get(key)
        if isinstance(value, str) and len(value) <= MAX_CARRIED and _W3C_TEXT.fullmatch(value):
            carrier[key] = value
    return carrier


def extract(
    meta: Mapping[str, Any] | None, headers: Mapping[str, str] | None = None
) -> Context | None:
    """The parent context of a received message: its ``_meta``'s when that
    holds a valid ``traceparent``, else its HTTP request's headers', else
    None: the ambient one (what a tracer starts a span in when given none)."""
    for source in (meta, headers):
        if not source or "traceparent" not in source:
            continue  # the common case, checked before anything is imported or built
        carrier = carrier_of(source)
        if "traceparent" in carrier:
            from opentelemetry import propagate, trace

            context = propagate.extract(carrier)
            if trace.get_current_span(context).get_span_context().is_valid:
                return context
    return None


def inject(meta: MutableMapping[str, Any], context: Context) -> None:
    """Write ``context`` into a message's ``_meta`` (replacing what the keys
    held: the gateway's own client span is the upstream's parent)."""
    from opentelemetry import propagate

    for key in KEYS:
        meta.pop(key, None)
    propagate.inject(meta, context)
