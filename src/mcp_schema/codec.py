"""Raw JSON-RPC bytes <-> typed MCP messages (hand-written runtime module).

``decode`` reads the few envelope members it needs to choose a model (``id``,
``method``, the protocol version in ``params._meta``, ``error.code``) with a
small sniffing model, then validates the whole message once, straight from the
bytes, with the model of that method in that protocol version. Every failure is
an `mcp_schema.errors.McpError` with the JSON-RPC code a server should
answer with. ``encode`` writes a message back by alias, leaving absent members
absent, so ``encode(decode(raw))`` is the JSON value of ``raw``.

This module is the public face of the codec; its parts live in
``mcp_schema._codec``, one idea per module: envelope sniffing, the version
tables and result unions, error paths, decode/encode, the fast path, the
``Correlator`` and ``reply``.

``decode_dict`` is the plain-dict view of ``decode``: the same options, rules
and errors, but the message comes back as its validated, parsed JSON, typed
by the TypedDicts of the version's ``dicts`` module.
"""

from __future__ import annotations

from mcp_schema._codec.correlator import MAX_PENDING, Correlator, Sender
from mcp_schema._codec.decoding import decode
from mcp_schema._codec.dict_view import (
    DictMessage,
    ErrorResponseDict,
    ResultResponseDict,
    decode_dict,
)
from mcp_schema._codec.encoding import encode
from mcp_schema._codec.messages import ErrorResponse, Message, ResultResponse, message_kind
from mcp_schema._codec.replies import reply
from mcp_schema._codec.screen import MAX_DEPTH
from mcp_schema.versions import DEFAULT_VERSION as HANDSHAKE_VERSION
from mcp_schema.versions import TASKS_EXTENSION

__all__ = [
    "HANDSHAKE_VERSION",
    "MAX_DEPTH",
    "MAX_PENDING",
    "TASKS_EXTENSION",
    "Correlator",
    "DictMessage",
    "ErrorResponse",
    "ErrorResponseDict",
    "Message",
    "ResultResponse",
    "ResultResponseDict",
    "Sender",
    "decode",
    "decode_dict",
    "encode",
    "message_kind",
    "reply",
]
