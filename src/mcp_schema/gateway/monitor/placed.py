"""Whether a valid message belongs on the answer of its `Exchange`: a
response to its request, once, or a notification its listen's filter asks
for (`mcp_schema.gateway.monitor.exchange` has the rules)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

# The codec's one id rule (private to it, as the endpoint reads ids): a
# response answers its request by the id as the codec reads both.
from mcp_schema._codec.route import request_id
from mcp_schema.errors import quote
from mcp_schema.subscriptions import NOTIFICATIONS, RESOURCE_UPDATED, SUBSCRIPTION_ID_KEY

if TYPE_CHECKING:
    from mcp_schema.gateway.monitor.exchange import Exchange

__all__ = ["out_of_place"]


def out_of_place(exchange: Exchange, value: dict[str, Any]) -> str | None:
    """Why a valid message of ``exchange``'s answer does not belong on it, or None
    (a response it awaits is marked `Exchange.answered`)."""
    if "method" not in value:  # a response
        if exchange.method == "GET":
            return None  # a stream resumed (Last-Event-ID) replays its responses
        if value.get("id") is None and "error" in value and not exchange.answered:
            # The upstream refused the POST before it could tell its id: the
            # refusal answers it (and a notification's answer may carry one).
            exchange.answered = True
            if exchange.request_id is not None:
                exchange.correlator.forget(exchange.request_id, sender="client")
            return None
        if exchange.request_id is None:
            if exchange.unread:  # monitor mode forwarded a body it could not read: this answers it
                return None
            return "Invalid Request: a response on an answer to no request"
        if exchange.answered:
            return f"Invalid Request: a second response to request {quote(exchange.request_id)}"
        if not _same_id(value.get("id"), exchange.request_id):
            return (
                f"Invalid Request: a response to id {quote(value.get('id'))} "
                f"on the answer to request {quote(exchange.request_id)}"
            )
        exchange.answered = True
        return None
    if exchange.listen is not None and value["method"] in NOTIFICATIONS:
        params: Mapping[str, Any] = value.get("params") or {}
        uri = params.get("uri") if value["method"] == RESOURCE_UPDATED else None
        if not exchange.listen.wants((value["method"], uri)):
            return f"Invalid Request: the listen's filter does not ask for {value['method']}" + (
                f" of {quote(uri)}" if uri is not None else ""
            )
        meta = params.get("_meta") or {}
        if not _same_id(meta.get(SUBSCRIPTION_ID_KEY), exchange.request_id):
            return (
                f"Invalid Request: {SUBSCRIPTION_ID_KEY} must name the listen "
                f"{quote(exchange.request_id)}, not {quote(meta.get(SUBSCRIPTION_ID_KEY))}"
            )
    return None


def _same_id(found: object, expected: object) -> bool:
    """Whether two ids are the same, by the codec's id rule (``"1"`` and ``1``
    are not; ``1.0`` is ``1``)."""
    read = request_id(found)
    return read is not None and type(read) is type(expected) and read == expected
