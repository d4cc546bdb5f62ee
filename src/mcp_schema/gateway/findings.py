"""`Findings`: the reports of what the gateway finds itself (a line that
is no message, a message that belongs nowhere, what a session of the bridge
refused), numbered per direction, to a `mcp_schema.proxy.ReportLog`."""

from __future__ import annotations

from mcp_schema.codec import Sender
from mcp_schema.errors import BadGatewayError, InvalidRequestError, McpError
from mcp_schema.http.posts import TransportError
from mcp_schema.http.rules import failure
from mcp_schema.http.stream import Response
from mcp_schema.proxy.reports import Report, ReportLog, make_report

__all__ = ["UNREACHED", "UPSTREAM_FAILED", "Findings", "bad_gateway", "told_client"]


class Findings:
    """Where the findings go (``reports``; none kept when None)."""

    def __init__(self, reports: ReportLog | None) -> None:
        self.reports = reports
        self._numbers: dict[Sender, int] = {"client": 0, "server": 0}

    def report(self, report: Report) -> None:
        if self.reports is not None:
            self.reports.add(report)

    def traffic(self, size: int) -> None:
        if self.reports is not None:
            self.reports.traffic(size)

    def found(self, message: str, line: bytes, code: int = InvalidRequestError.code) -> None:
        """What the gateway itself found in the server's ``line``."""
        self._numbers["server"] += 1
        self.report(make_report("server", self._numbers["server"], code, message, None, None, line))

    def refused(self, sender: Sender, error: McpError, frame: bytes) -> None:
        """``error``: what a session of the bridge refused of ``sender``'s ``frame``."""
        self._numbers[sender] += 1
        data = error.to_error_object().get("data")
        number = self._numbers[sender]
        self.report(
            make_report(sender, number, error.code, error.message, data, error.request_id, frame)
        )


def bad_gateway(report: Report, request_id: str | int | None) -> Response:
    """What enforce mode answers instead of an upstream's invalid answer: 502,
    a JSON-RPC error (-32603) to ``request_id``, its data naming the finding."""
    finding = {k: report[k] for k in ("code", "message", "data")}
    error = BadGatewayError(
        f"Bad gateway: the upstream's answer is invalid: {report['message']}", {"finding": finding}
    )
    return failure(error, request_id)


UNREACHED = "the exchange with the upstream failed"
"""What a bridge's finding of an exchange that got no answer says, before why."""

UPSTREAM_FAILED = f"Bad gateway: {UNREACHED}"
"""What the bridge's client is told of it instead (`told_client`)."""


def told_client(error: McpError) -> McpError:
    """What a bridge's client is told of its call's ``error`` upstream: the
    server's own JSON-RPC error as it is; a failed exchange with the server
    (a `TransportError`: unreachable, no JSON-RPC answer, not authorized) as
    a 502 that names neither the upstream's address nor the transport's
    words (which the bridge's finding keeps). Forwarding's 502 differs: it
    carries the HTTP client's words (`mcp_schema.gateway.monitor.exchange`)."""
    if isinstance(error, TransportError):
        return BadGatewayError(UPSTREAM_FAILED)
    return error
