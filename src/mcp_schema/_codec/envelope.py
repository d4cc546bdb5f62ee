"""Envelope sniffing: the few members of a message that select its model,
read in one cheap pass, and the checks JSON-RPC makes on them."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import CoreSchema, SchemaValidator, core_schema

from mcp_schema._codec.messages import Kind
from mcp_schema.errors import InvalidRequestError, ParseError
from mcp_schema.versions import PROTOCOL_VERSION_KEY


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


def sniff(raw: bytes | str) -> Envelope:
    try:
        return Envelope(_SNIFFER.validate_json(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise ParseError(
                f"Parse error: {first['msg'].removeprefix('Invalid JSON: ')}"
            ) from None
        if str(first.get("input", "")).startswith("["):
            raise InvalidRequestError("Invalid Request: batches are not part of MCP") from None
        raise InvalidRequestError("Invalid Request: a JSON-RPC message is a JSON object") from None


def reject_non_json_numbers(raw: bytes | str) -> None:
    # The JSON parser accepts NaN and Infinity, which JSON does not have. Only
    # a document that contains those words pays for the exact check; looking
    # for one letter first (memchr) keeps that test cheap on large payloads.
    if isinstance(raw, str):
        if not (("N" in raw and "NaN" in raw) or ("I" in raw and "Infinity" in raw)):
            return
    elif not ((b"N" in raw and b"NaN" in raw) or (b"I" in raw and b"Infinity" in raw)):
        return

    def refuse(token: str) -> None:
        raise ParseError(f"Parse error: {token} is not a JSON number")

    try:
        json.loads(raw, parse_constant=refuse)
    except ValueError:
        pass  # malformed JSON is reported by the sniffing parse


def request_id(value: Any) -> str | int | None:
    """``value`` as a request id (a JSON Schema integer may be written ``1.0``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (str, int)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def kind_of(s: Envelope) -> Kind:
    fields = s.fields
    if "method" in fields:
        return "request" if "id" in fields else "notification"
    if "error" in fields:
        return "error"
    if "id" in fields:
        return "result"
    raise InvalidRequestError("Invalid Request: neither a request, a notification nor a response")


def check_envelope(s: Envelope, kind: Kind) -> None:
    if s.jsonrpc != "2.0":
        raise InvalidRequestError('Invalid Request: "jsonrpc" must be "2.0"')
    if kind in ("request", "result") and request_id(s.id) is None:
        raise InvalidRequestError('Invalid Request: "id" must be a string or an integer')
    if kind in ("request", "notification") and not isinstance(s.method, str):
        raise InvalidRequestError('Invalid Request: "method" must be a string')
