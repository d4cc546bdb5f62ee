"""The front door's own refusals, counted (`mcp_schema.telemetry`): what the
precheck, the body reader, the era and session lookup and the gate refuse
before any session reads the message (a session counts its own refusals).

Only while telemetry is active: off, a refusal pays one check.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mcp_schema.errors import InvalidRequestError
from mcp_schema.shares import Share
from mcp_schema.telemetry import telemetry_for

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from mcp_schema.http.stream import Response
    from mcp_schema.telemetry import Telemetry

__all__ = ["count_refusal", "endpoint_telemetry", "observe_shares"]

_MAX_READ = 4096  # a refusal's body is the package's own, and short


def count_refusal(telemetry: Telemetry | None, response: Response, message: object = None) -> None:
    """Count ``response`` when it is a refusal (a status from 400 on): by the
    JSON-RPC code its body carries (Invalid Request's when it carries
    none, as a 404 for another path), its HTTP status and the method of
    ``message`` (the parsed request, where it was parsed)."""
    if telemetry is None or response.status < 400 or not telemetry.active:
        return
    method = message.get("method") if isinstance(message, dict) else None
    telemetry.count_refused(_code(response.body), "received", method, status=response.status)


def _code(body: bytes) -> int:
    code = InvalidRequestError.code
    if body and len(body) <= _MAX_READ:
        try:
            found = json.loads(body).get("error", {}).get("code")
        except (ValueError, AttributeError):
            return code
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return code


def endpoint_telemetry(
    telemetry: Telemetry | bool | None, session_options: Mapping[str, Any] | None
) -> Telemetry | None:
    """An endpoint's telemetry: ``telemetry``, else what ``session_options``
    named (as it was given before `Endpoint` took it), resolved (`telemetry_for`)."""
    if telemetry is None and session_options:
        telemetry = session_options.get("telemetry")
    return telemetry_for(telemetry)


def observe_shares(telemetry: Telemetry | None, *owners: object) -> None:
    """The `Share` each of ``owners`` keeps as its ``share`` (one that keeps
    none, a store of another kind, or None: nothing) counts its grants and
    refusals to ``telemetry`` (`mcp_schema.shares.Share.observe`)."""
    if telemetry is None:
        return
    for owner in owners:
        share = getattr(owner, "share", None)
        if isinstance(share, Share):
            share.observe(telemetry)
