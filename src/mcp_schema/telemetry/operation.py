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
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, NamedTuple

from opentelemetry.trace import Status, StatusCode

from mcp_schema.telemetry.vocabulary import code_value

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram
    from opentelemetry.trace import Span

__all__ = ["METRIC_ATTRIBUTES", "Late", "Operation"]

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


class Late(NamedTuple):
    """A tool or prompt recorded `OTHER` at the start because its name was not
    known yet (a gateway learns its upstream's names from the first list it
    carries, which may answer while the call is in flight): named at the end
    if by then it is."""

    known: Callable[[], Collection[str]]
    """The names known now (the recorder's closed set)."""
    attribute: str
    """``gen_ai.tool.name`` or ``gen_ai.prompt.name``."""
    method: str
    given: str


class Operation:
    """A started span and its clock; `end` it once. ``metric``: the
    duration's attributes (`METRIC_ATTRIBUTES` of the span's), shared by the
    operations of one shape: never changed here."""

    __slots__ = ("_histogram", "_late", "_metric", "_span", "_started")

    def __init__(
        self, span: Span, histogram: Histogram, metric: dict[str, Any], late: Late | None = None
    ) -> None:
        self._span, self._histogram, self._metric = span, histogram, metric
        self._late = late
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
        elapsed = time.perf_counter() - self._started
        error = None
        if code is not None:
            error = code_value(code)
        elif tool_error:
            error = TOOL_ERROR
        elif cancelled:
            error = CANCELLED
        span, metric, late = self._span, self._metric, self._late
        if late is not None and late.given in late.known():
            span.update_name(f"{late.method} {late.given}")
            span.set_attribute(late.attribute, late.given)
            metric = {**metric, late.attribute: late.given}
        if error is not None:
            failed = {"error.type": error}
            if code is not None:
                failed["rpc.response.status_code"] = error
            span.set_attributes(failed)
            # The conventions ask for the JSON-RPC message as the status; it
            # is the package's own text or a peer's, so it is clipped.
            span.set_status(Status(StatusCode.ERROR, message[:256] or None))
            metric = {**metric, **failed}
        self._histogram.record(elapsed, metric)
        span.end()
