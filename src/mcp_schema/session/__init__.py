"""A sans-IO MCP session for both roles, in the spirit of h11: bytes in,
typed events out, bytes out. No threads, no event loop, no transport.

One session object per connection: `ServerSession` or `ClientSession`.

* ``session.receive(frame)`` reads one frame (one JSON-RPC message, as
  bytes or str) and returns the events it makes (`RequestReceived`,
  `NotificationReceived`, `CancelRequested`, `InputReceived`,
  `InputRequested`, `ResponseReceived`, `TaskChanged`, `Negotiated`, `ProtocolError`). It
  never raises for what the peer sent: a refused frame is a `ProtocolError`
  event and, where JSON-RPC answers, an error frame queued to send.
* Everything the author sends (``respond``, ``fail``, ``ask``, ``log``,
  ``progress``, ``notify``, ``request``) is queued; ``session.data_to_send()``
  returns the queued frames, in order, and empties the queue. Write each as
  the transport frames it (a line on stdio, a body or an event on HTTP).
  A transport that routes frames takes them with their envelope instead
  (``session.frames_to_send()``: each a `Frame`, with its id, method, the
  request it belongs to...), and never reads them again.
* A server written by hand answers requests with a function
  (`answered_by`: its result, or the `McpError` it raises) and serves
  stdio with `serve_stdio`.
* The author's mistakes (answering twice, a result its method refuses, asking a
  client for what it did not declare) raise a `SessionError` at once.

Threading: a session holds no lock and starts no thread; call it from one
thread at a time (or behind one lock).
"""

from __future__ import annotations

from mcp_schema.context import LOGGING_LEVELS, LoggingLevel, RequestContext
from mcp_schema.session.client import ClientSession
from mcp_schema.session.events import (
    CancelRequested,
    CapabilityError,
    Event,
    InputReceived,
    InputRequested,
    InvalidOutgoingError,
    MissingCapabilityError,
    Negotiated,
    NotificationReceived,
    ProtocolError,
    RequestReceived,
    ResponseReceived,
    SessionError,
    SessionStateError,
    TaskChanged,
    UnknownRequestError,
)
from mcp_schema.session.frames import Frame
from mcp_schema.session.handlers import Answer, answered_by, serve_stdio
from mcp_schema.session.server import ServerSession
from mcp_schema.session.state import MAX_CANCELLED, MAX_OPEN_ROUNDS, MAX_PENDING

__all__ = [
    "LOGGING_LEVELS",
    "MAX_CANCELLED",
    "MAX_OPEN_ROUNDS",
    "MAX_PENDING",
    "Answer",
    "CancelRequested",
    "CapabilityError",
    "ClientSession",
    "Event",
    "Frame",
    "InputReceived",
    "InputRequested",
    "InvalidOutgoingError",
    "LoggingLevel",
    "MissingCapabilityError",
    "Negotiated",
    "NotificationReceived",
    "ProtocolError",
    "RequestContext",
    "RequestReceived",
    "ResponseReceived",
    "ServerSession",
    "SessionError",
    "SessionStateError",
    "TaskChanged",
    "UnknownRequestError",
    "answered_by",
    "serve_stdio",
]
