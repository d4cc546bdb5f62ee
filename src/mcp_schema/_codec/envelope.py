"""Envelope sniffing: the few members of a message that select its model,
read in one cheap pass, and the checks JSON-RPC makes on them."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import CoreSchema, SchemaValidator, core_schema

from mcp_schema._codec.messages import Kind
from mcp_schema._codec.screen import MAX_DEPTH
from mcp_schema.base import MAX_EXACT_INTEGRAL_FLOAT
from mcp_schema.errors import (
    InvalidRequestError,
    McpError,
    ParseError,
)
from mcp_schema.versions import PROTOCOL_VERSION_KEY, unsupported


def _members(fields: dict[str, CoreSchema]) -> CoreSchema:
    # Only the listed members are read; others are skipped without being
    # turned into Python objects.
    return core_schema.typed_dict_schema(
        {
            name: core_schema.typed_dict_field(schema, required=False)
            for name, schema in fields.items()
        },
        extra_behavior="ignore",
    )


def _loose_object(fields: dict[str, CoreSchema]) -> CoreSchema:
    # Anything that is not an object falls back to "any", so the real
    # validation, not the sniff, says what is wrong.
    return core_schema.union_schema(
        [_members(fields), core_schema.any_schema()], mode="left_to_right"
    )


_ANY = core_schema.any_schema()
_SNIFFER = SchemaValidator(
    _members(
        {
            "jsonrpc": _ANY,
            "id": _ANY,
            "method": _ANY,
            "params": _loose_object({"_meta": _loose_object({PROTOCOL_VERSION_KEY: _ANY})}),
            "error": _loose_object({}),  # only its presence matters
            "result": _loose_object({}),  # likewise
        }
    )
)


class Envelope:
    """The members of a message that select its model, read in one cheap pass."""

    __slots__ = ("fields", "id", "jsonrpc", "method", "named_version")

    def __init__(self, members: dict[str, Any]) -> None:
        self.fields = members.keys()  # what is present, whatever its value
        self.jsonrpc = members.get("jsonrpc")
        self.id = members.get("id")
        self.method = members.get("method")
        params = members.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        self.named_version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
        if self.named_version is None and isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta:
            # null is not "no version": the message names one, and it is not a string.
            err = unsupported(None)
            address(err, self)
            raise err


def sniff(raw: bytes | str) -> Envelope:
    try:
        return Envelope(_SNIFFER.validate_json(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise ParseError(f"Parse error: {_explained(first['msg'])}") from None
        raise InvalidRequestError("Invalid Request: a JSON-RPC message is a JSON object") from None


def _explained(message: str) -> str:
    message = message.removeprefix("Invalid JSON: ")
    if message.startswith("recursion limit exceeded"):
        where = message.removeprefix("recursion limit exceeded")
        return f"nested deeper than {MAX_DEPTH} levels{where}"
    if message.startswith(("unexpected end of hex escape", "lone leading surrogate")):
        # A \ud800 without its pair is not a Unicode character: it cannot be kept.
        where = message.partition(" at ")[2]
        return f"a \\u escape is a lone surrogate, which cannot be kept, at {where}"
    return message


def request_id(value: Any) -> str | int | None:
    """``value`` as a request id: a string, or an integer (the one id rule).

    A JSON Schema integer may be written ``1.0``; such an id is read as the int
    while it is at most `MAX_EXACT_INTEGRAL_FLOAT`, so re-encoding cannot grow it.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (str, int)):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_EXACT_INTEGRAL_FLOAT:
        return int(value)
    return None


def address(err: McpError, s: Envelope) -> None:
    """Tell ``err`` which request it answers (`McpError.request_id`) and whether
    it is to be answered at all (`McpError.answerable`)."""
    fields = s.fields
    # JSON-RPC answers a request (id null when unreadable) and what is no
    # message at all; never a notification or a response.
    is_request = "method" in fields and "id" in fields
    is_message = "method" in fields or not fields.isdisjoint(("id", "result", "error"))
    err.answerable = is_request or not is_message
    err.request_id = request_id(s.id) if is_request else None


def kind_of(s: Envelope) -> Kind:
    """What the message is, from the members present; a mix of two kinds is -32600."""
    fields = s.fields
    answers = [name for name in ("result", "error") if name in fields]
    if "method" in fields:
        if answers:
            raise InvalidRequestError(
                f'Invalid Request: a request or notification has no "{answers[0]}" member'
            )
        return "request" if "id" in fields else "notification"
    if len(answers) == 2:
        raise InvalidRequestError('Invalid Request: a response has "result" or "error", not both')
    if answers == ["error"]:
        return "error"
    if answers == ["result"]:
        return "result"
    raise InvalidRequestError(
        "Invalid Request: neither a request, a notification nor a response "
        '(no "method", "result" or "error")'
    )


def check_envelope(s: Envelope, kind: Kind) -> None:
    if s.jsonrpc != "2.0":
        raise InvalidRequestError('Invalid Request: "jsonrpc" must be "2.0"')
    if kind in ("request", "result") and request_id(s.id) is None:
        raise InvalidRequestError('Invalid Request: "id" must be a string or an integer')
    if kind == "error" and s.id is not None and request_id(s.id) is None:
        raise InvalidRequestError('Invalid Request: "id" must be a string, an integer or null')
    if kind in ("request", "notification") and not isinstance(s.method, str):
        raise InvalidRequestError('Invalid Request: "method" must be a string')
