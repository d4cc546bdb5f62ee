"""``decode`` and ``encode``: the exact path, which classifies every failure
from the sniffed envelope, behind the fast path that serves real traffic."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from mcp_schema._codec.envelope import (
    Envelope,
    check_envelope,
    kind_of,
    reject_non_json_numbers,
    request_id,
    sniff,
)
from mcp_schema._codec.fast_path import decode_fast
from mcp_schema._codec.messages import Message
from mcp_schema._codec.options import NO_EXTENSIONS, DecodeOptions
from mcp_schema._codec.problems import invalid
from mcp_schema._codec.versions import (
    HANDSHAKE_VERSION,
    detect_version,
    error_adapter,
    generic_notification,
    generic_request,
    result_adapter,
    tables,
)
from mcp_schema.base import McpModel
from mcp_schema.errors import McpError, MethodNotFoundError


def decode(
    raw: bytes | str,
    *,
    version: str | None = None,
    method: str | None = None,
    headers: Mapping[str, str] | None = None,
    extensions: Collection[str] = (),
    allow_unknown_methods: bool = False,
    assume_complete: bool = False,
) -> Message:
    """Decode one JSON-RPC message into the model of its method and version.

    * ``version``: the protocol version; when absent it is read from
      ``params._meta`` (2026-07-28 requests), then from the
      ``MCP-Protocol-Version`` header, else `HANDSHAKE_VERSION`.
    * ``method``: for a response, the method of the request it answers;
      without it a result is typed as the version's generic ``Result``.
    * ``headers``: Streamable HTTP request headers, checked against the body
      (2026-07-28 requests and notifications).
    * ``extensions``: negotiated extension ids; with
      ``"io.modelcontextprotocol/tasks"`` a ``"task"`` result is a
      ``CreateTaskResult`` and the extension's methods are known.
    * ``allow_unknown_methods``: decode a request of an unknown method as the
      generic ``JSONRPCRequest`` instead of raising ``MethodNotFoundError``.
    * ``assume_complete``: a result without ``resultType`` (from a
      handshake-era server) is read as ``"complete"``.

    Raises `mcp_schema.errors.McpError` subclasses only.
    """
    reject_non_json_numbers(raw)
    options = DecodeOptions(
        version,
        method,
        headers,
        frozenset(extensions) if extensions else NO_EXTENSIONS,
        allow_unknown_methods,
        assume_complete,
    )
    if headers is None:
        message = decode_fast(raw, options)
        if message is not None:
            return message
    return decode_sniffed(raw, sniff(raw), options)


def decode_sniffed(raw: bytes | str, sniffed: Envelope, options: DecodeOptions) -> Message:
    """The exact path: every error is classified from the sniffed envelope,
    and says which request it answers (`McpError.request_id`), if any."""
    try:
        return _decode_sniffed(raw, sniffed, options)
    except McpError as err:
        fields = sniffed.fields
        # JSON-RPC answers a request (id null when unreadable) and what is no
        # message at all; never a notification or a response.
        is_request = "method" in fields and "id" in fields
        is_message = "method" in fields or not fields.isdisjoint(("id", "result", "error"))
        err.answerable = is_request or not is_message
        err.request_id = request_id(sniffed.id) if is_request else None
        raise


def _decode_sniffed(raw: bytes | str, sniffed: Envelope, options: DecodeOptions) -> Message:
    kind = kind_of(sniffed)
    check_envelope(sniffed, kind)
    headers = options.headers
    resolved = detect_version(sniffed.named_version, options.version, headers)
    try:
        if kind == "error":
            return error_adapter(resolved).validate_json(raw)  # type: ignore[no-any-return]
        if kind == "result":
            adapter = result_adapter(
                resolved, options.method or "", options.extensions, options.assume_complete
            )
            return adapter.validate_json(raw)  # type: ignore[no-any-return]
        requests, notifications = tables(resolved, options.extensions)
        if kind == "request":
            entry = requests.get(str(sniffed.method))
            if entry is None:
                if not options.allow_unknown_methods:
                    raise MethodNotFoundError(
                        f"Method not found: {sniffed.method}",
                        {"method": sniffed.method, "version": resolved},
                    )
                cls: type[McpModel] = generic_request(resolved)
            else:
                cls = entry.request
        else:
            note = notifications.get(str(sniffed.method))
            cls = note.notification if note is not None else generic_notification(resolved)
        message = cls.model_validate_json(raw)
    except ValidationError as exc:
        raise invalid(exc, raw, "result" if kind == "result" else "params") from None
    if headers is not None and resolved != HANDSHAKE_VERSION:
        from mcp_schema.http_headers import check_request_headers

        check_request_headers(headers, message)
    return message


def encode(message: BaseModel | Mapping[str, Any]) -> bytes:
    """The JSON bytes of a message: wire names, absent members left out.

    A mapping (`McpError.to_response`) is written as JSON as it is.
    """
    if isinstance(message, BaseModel):
        serializer = type(message).__pydantic_serializer__
        return serializer.to_json(message, by_alias=True, exclude_unset=True)
    return to_json(message)
