"""Raw JSON-RPC bytes <-> typed MCP messages (hand-written runtime module).

Every reader takes one path, one module per stage in ``mcp_schema._codec``:

1. ``parse``: the bytes become one JSON value, parsed once and strictly
   (members repeated at any depth, non-finite or inexact numbers, lone
   surrogates and excessive nesting are refused);
2. ``route``: one resolver decides the message's kind, protocol version,
   method and id, and the definition it must be valid against;
3. ``views``: that definition validates it, as a generated pydantic model
   (``decode``) or as the generated JSON Schema, returning the parsed value
   itself (``decode_dict``).

A `Decoder` holds the options of many reads, checked once when it is made
(``decode`` and ``decode_dict`` take them as keyword arguments and read
through a shared one). Every failure is an `mcp_schema.errors.McpError` with the JSON-RPC code a
server should answer with. ``encode`` writes a message back by alias, leaving
absent members absent, so ``encode(decode(raw))`` is the JSON value of
``raw``; ``to_wire`` gives that JSON value of a model. ``is_request``,
``is_notification`` and ``is_response`` narrow a decoded message for a type
checker. The ``Correlator`` feeds what a connection knows (its version, the
requests in flight) into the same path; ``reply`` builds answers.
"""

from __future__ import annotations

from mcp_schema._codec.correlator import MAX_PENDING, Correlator, Sender
from mcp_schema._codec.decoding import Decoder, DictMessage, decode, decode_dict
from mcp_schema._codec.encoding import encode
from mcp_schema._codec.messages import (
    ErrorResponse,
    ErrorResponseDict,
    Message,
    NotificationMessage,
    RequestMessage,
    ResultResponse,
    ResultResponseDict,
    is_notification,
    is_request,
    is_response,
    message_kind,
)
from mcp_schema._codec.parse import MAX_DEPTH
from mcp_schema._codec.replies import reply
from mcp_schema._codec.wire import to_wire
from mcp_schema.versions import DEFAULT_VERSION as HANDSHAKE_VERSION
from mcp_schema.versions import TASKS_EXTENSION

__all__ = [
    "HANDSHAKE_VERSION",
    "MAX_DEPTH",
    "MAX_PENDING",
    "TASKS_EXTENSION",
    "Correlator",
    "Decoder",
    "DictMessage",
    "ErrorResponse",
    "ErrorResponseDict",
    "Message",
    "NotificationMessage",
    "RequestMessage",
    "ResultResponse",
    "ResultResponseDict",
    "Sender",
    "decode",
    "decode_dict",
    "encode",
    "is_notification",
    "is_request",
    "is_response",
    "message_kind",
    "reply",
    "to_wire",
]
