"""`Operation`: one MCP request or notification as a span and a duration,
by the OpenTelemetry MCP semantic conventions
(https://github.com/open-telemetry/semantic-conventions-genai, ``docs/gen-ai/mcp.md``).

The span is started when the message is read and ended when its answer is
sent (a server span) or received (a client span); the same end records the
``mcp.{server,client}.operation.duration`` histogram with the span's
low-cardinality attributes, so the two always agree.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Status, StatusCode

from mcp_schema.telemetry.vocabulary import code_value

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram
    from opentelemetry.trace import Span

__all__ = ["METRIC_ATTRIBUTES", "Operation"]

METRIC_ATTRIBUTES = frozenset(
    {
        "mcp.method.name",
        "error.type",
        "gen_ai.tool.name",
        "gen_ai.prompt.name",
        "gen_ai.operation.name",
        "rpc.response.status_code",
        "mcp.protocol.version",
        "network.transport",
        "network.protocol.name",
        "network.protocol.version",
        "server.address",
        "server.port",
        "mcp_schema.era",
    }
)
"""What the duration metric keeps of a span's attributes: the conventions'
metric attributes (never an id, an address of a client, or a URI), and the
era. Its count is the number of requests by era, method and negotiated version."""

CANCELLED = "cancelled"
"""``error.type`` of a request this side gave up (`notifications/cancelled`)."""

TOOL_ERROR = "tool_error"
"""``error.type`` of a tool call answered with ``isError`` (the conventions' word)."""


class Operation:
    """A started span and its clock; `end` it once."""

    __slots__ = ("_attributes", "_histogram", "_span", "_started")

    def __init__(self, span: Span, histogram: Histogram, attributes: dict[str, Any]) -> None:
        self._span, self._histogram, self._attributes = span, histogram, attributes
        self._started = time.perf_counter()

    @property
    def span(self) -> Span:
        """The span, to parent what the operation does (a task's work)."""
        return self._span

    def end(
        self,
        *,
        code: int | None = None,
        message: str = "",
        tool_error: bool = False,
        cancelled: bool = False,
    ) -> None:
        """End the operation: answered with JSON-RPC error ``code`` (its
        ``message`` becomes the span status), a tool result with ``isError``
        (``tool_error``), given up by this side (``cancelled``), or a success."""
        attributes = self._attributes
        if code is not None:
            attributes["error.type"] = attributes["rpc.response.status_code"] = code_value(code)
        elif tool_error:
            attributes["error.type"] = TOOL_ERROR
        elif cancelled:
            attributes["error.type"] = CANCELLED
        span = self._span
        if "error.type" in attributes:
            span.set_attribute("error.type", attributes["error.type"])
            if code is not None:
                span.set_attribute("rpc.response.status_code", attributes["error.type"])
            # The conventions ask for the JSON-RPC message as the status; it
            # is the package's own text or a peer's, so it is clipped.
            span.set_status(Status(StatusCode.ERROR, message[:256] or None))
        self._histogram.record(
            time.perf_counter() - self._started,
            {k: v for k, v in attributes.items() if k in METRIC_ATTRIBUTES},
        )
        span.end()
