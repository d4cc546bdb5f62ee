"""The closed sets every recorded value is drawn from.

A hostile peer names any method, tool or error code it likes; if those names
became span names or metric attributes as sent, one peer could grow the
number of series without bound. So each value is drawn from a set fixed
before the first request: the methods of the compiled schemas, the tools,
prompts and codes the server itself declares or sends, and the few words
this package uses. Anything else is recorded as ``_OTHER``, the
conventions' fallback, and no value is longer than `MAX_VALUE`.
"""

from __future__ import annotations

import functools
from collections.abc import Collection

from mcp_schema.registry import COMPILED
from mcp_schema.request_state import STATE_PATH

__all__ = [
    "MAX_VALUE",
    "OTHER",
    "code_value",
    "known_methods",
    "method_value",
    "named",
    "state_reason",
]

OTHER = "_OTHER"
"""The semantic conventions' value for what is outside a closed set."""

MAX_VALUE = 128
"""Longest recorded value, in characters (longer names are `OTHER`)."""

# JSON-RPC's own codes, the MCP codes this package sends (errors.py) and a
# full share's (shares.py, a 429): a code outside them is a peer's own and
# is recorded as OTHER.
_CODES = frozenset(
    {-32700, -32600, -32601, -32602, -32603, -32002, -32020, -32021, -32022, -32042, -31429}
)


@functools.cache
def known_methods() -> frozenset[str]:
    """Every request and notification method of every compiled version and
    extension (reading the method tables imports no model)."""
    methods: set[str] = set()
    for compiled in COMPILED:
        tables = compiled.load()
        methods.update(tables.requests, tables.notifications)
    return frozenset(methods)


def method_value(method: object) -> str:
    """``method`` as recorded: a known method's name, else `OTHER`."""
    return method if isinstance(method, str) and method in known_methods() else OTHER


def named(name: object, declared: Collection[str]) -> str:
    """A tool's or prompt's ``name`` as recorded: itself when the server
    declares it (``declared``), else `OTHER`."""
    if isinstance(name, str) and len(name) <= MAX_VALUE and name in declared:
        return name
    return OTHER


def code_value(code: int) -> str:
    """A JSON-RPC error code as recorded (``error.type`` and
    ``rpc.response.status_code``): its decimal form when it is one of the
    known codes or in JSON-RPC's server range, else `OTHER`."""
    if code in _CODES or -32099 <= code <= -32000:
        return str(code)
    return OTHER


# Why a sealed request state was refused (`mcp_schema.request_state`, and the
# input rounds' `mcp_schema.session.state`), by the start of its reason: a
# word each (the reasons hold no peer's text, but one holds a number).
_STATE_REASONS = (
    ("must be a string", "not_a_string"),
    ("longer than", "too_long"),
    ("not a request state this server sealed", "not_sealed_here"),
    ("sealed with a key this server does not hold", "unknown_key"),
    ("does not verify", "forged"),
    ("expired", "expired"),
    ("sealed for another method", "other_method"),
    ("sealed for a call with other params", "other_params"),
    ("sealed for another principal", "other_principal"),
    ("already used", "replayed"),
    ("not a request state of this server's input rounds", "not_a_round"),
    ("too large to carry", "too_large"),
)


def state_reason(data: object) -> str | None:
    """The word for a refused request state, from a refusal's ``data``
    (`mcp_schema.errors.error_list`), or None when it refuses no state."""
    errors = data.get("errors") if isinstance(data, dict) else None
    first = errors[0] if isinstance(errors, list) and errors else None
    if not isinstance(first, dict) or first.get("path") not in (
        STATE_PATH,
        "$.params.inputResponses",
    ):
        return None
    reason = first.get("reason")
    if not isinstance(reason, str):
        return OTHER
    return next((word for start, word in _STATE_REASONS if reason.startswith(start)), OTHER)
