"""The input round-trip: a handler asks the client for input (elicitation,
sampling, roots) and gets the answers back tied to the call it serves.

Handshake era: the session sends one server-to-client request per question
and, when every one is answered, hands the handler an `InputReceived` for
the original call. Stateless era: the session answers the call with an
input-required result carrying a ``requestState`` it made, and when the
client retries the call with that state and the answers, hands the handler an
`InputReceived` for the retry. The handler writes the same code for both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from mcp_schema._codec.catalog import STATELESS
from mcp_schema._codec.messages import ResultResponse
from mcp_schema.base import McpModel
from mcp_schema.capabilities import ASKED_CAPABILITY
from mcp_schema.errors import McpError
from mcp_schema.projection import ProjectionError, project
from mcp_schema.session.events import (
    CapabilityError,
    Event,
    InputReceived,
    InvalidOutgoingError,
    MissingCapabilityError,
    RequestReceived,
)
from mcp_schema.session.state import Outgoing, Round
from mcp_schema.session.wire import wire_or_type_error


def questions(
    request: RequestReceived, asks: Mapping[str, BaseModel | Mapping[str, Any]]
) -> dict[str, tuple[str, dict[str, Any]]]:
    """The asks as (method, params), each one the client can be asked in
    ``request``'s version: `CapabilityError` naming what it did not declare
    otherwise, `InvalidOutgoingError` for what is no input request."""
    if not isinstance(asks, Mapping) or not asks:
        raise InvalidOutgoingError("asks must be a non-empty mapping of keys to input requests")
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, ask in asks.items():
        if not isinstance(name, str):
            raise InvalidOutgoingError(f"an ask's key is a string, not {type(name).__name__}")
        wire = wire_or_type_error(ask, f"asks[{name!r}]")
        method, params = wire.get("method"), wire.get("params", {})
        if (
            not isinstance(method, str)
            or method not in ASKED_CAPABILITY
            or not isinstance(params, dict)
        ):
            raise InvalidOutgoingError(
                f"asks[{name!r}] is no input request (elicitation/create, "
                "sampling/createMessage or roots/list with params)"
            )
        if not request.can_ask(method):
            needed = ASKED_CAPABILITY[method]
            said = (
                f"the client did not declare {needed!r}, which "
                f"{method} needs (check request.can_ask({method!r}) first)"
            )
            if request.version in STATELESS:  # the era has an error for it: -32021
                raise MissingCapabilityError(said, required_capabilities={needed: {}})
            raise CapabilityError(said)
        found[name] = (method, params)
    return found


def in_version(answer: McpModel, version: str | None) -> McpModel:
    """A result model as a model of ``version`` (the handler's), when it is
    not one already; the model as it is when it has no equivalent there."""
    if version is None:
        return answer
    try:
        projected = project(ResultResponse[Any](id=0, result=answer), version).message
    except (ProjectionError, TypeError):
        return answer
    result = getattr(projected, "result", answer)
    return result if isinstance(result, McpModel) else answer


def answer_to(round_: Round, name: str, handler: str | None) -> Any:
    """What a handshake-era round does with the answer to its question ``name``:
    keep it (in the ``handler`` version) and, once every one is in, tell the
    handler with an `InputReceived`."""

    def answered(
        sent: Outgoing, result: McpModel | None, error: McpError | None, events: list[Event]
    ) -> None:
        round_.answers[name] = error if result is None else in_version(result, handler)  # type: ignore[assignment]
        if sent.id in round_.outgoing:
            round_.outgoing.remove(sent.id)
        if not round_.outgoing and len(round_.answers) == len(round_.questions):
            events.append(InputReceived(round_.request, dict(round_.answers), round_.state))

    return answered
