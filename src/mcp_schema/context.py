"""What a stateless-era handler needs from a request, without a session
(hand-written runtime module): the request context, client-capability checks,
and the retry of a request that got an input-required result (MRTR).

Models are those of the version the request names in ``params._meta``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from mcp_schema.base import McpModel
from mcp_schema.compiled import VersionTables
from mcp_schema.errors import InvalidParamsError, MissingRequiredClientCapabilityError
from mcp_schema.versions import PROTOCOL_VERSION_KEY, protocol

__all__ = [
    "RequestContext",
    "missing_capabilities",
    "require_client_capabilities",
    "retry_with_input",
]

RequestT = TypeVar("RequestT", bound=BaseModel)


class InputRequired(Protocol):
    """An input-required result (``InputRequiredResult`` of any stateless-era version)."""

    @property
    def input_requests(self) -> Mapping[str, Any] | None: ...

    @property
    def request_state(self) -> str | None: ...


def _tables(meta: Mapping[str, Any]) -> VersionTables:
    version = meta.get(PROTOCOL_VERSION_KEY)
    compiled = protocol(version) if isinstance(version, str) else None
    if compiled is None or compiled.era != "stateless":
        path = f"$.params._meta[{PROTOCOL_VERSION_KEY!r}]"
        raise InvalidParamsError(
            f"Invalid params: {version!r} is not a stateless-era protocol version",
            {"errors": [{"path": path, "reason": "not a stateless-era version"}]},
        )
    return compiled.load()


def _dump(model: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(model, BaseModel):
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return dict(model)


def _meta(request: BaseModel) -> dict[str, Any]:
    params = _dump(request).get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise InvalidParamsError(
            "Invalid params: the request carries no params._meta",
            {"errors": [{"path": "$.params._meta", "reason": "missing"}]},
        )
    return meta


@dataclass(frozen=True)
class RequestContext:
    """The per-request facts of the stateless era, read from ``params._meta``.

    ``client_capabilities`` and ``client_info`` are the ``ClientCapabilities``
    and ``Implementation`` models of the request's protocol version.
    """

    method: str
    request_id: str | int
    protocol_version: str
    client_capabilities: McpModel
    client_info: McpModel | None
    log_level: str | None
    progress_token: str | int | None

    @classmethod
    def from_request(cls, request: BaseModel) -> RequestContext:
        meta = _meta(request)
        tables = _tables(meta)
        capabilities, implementation = tables.client_capabilities, tables.implementation
        assert capabilities is not None and implementation is not None  # in every core version
        info = meta.get("io.modelcontextprotocol/clientInfo")
        return cls(
            method=str(getattr(request, "method", "")),
            request_id=getattr(request, "id"),  # noqa: B009 - requests always have one
            protocol_version=str(meta.get(PROTOCOL_VERSION_KEY)),
            client_capabilities=capabilities.model_validate(
                meta.get("io.modelcontextprotocol/clientCapabilities", {})
            ),
            client_info=implementation.model_validate(info) if info is not None else None,
            log_level=meta.get("io.modelcontextprotocol/logLevel"),
            progress_token=meta.get("progressToken"),
        )


def missing_capabilities(
    declared: Mapping[str, Any], required: Mapping[str, Any]
) -> dict[str, Any]:
    """The part of ``required`` that ``declared`` lacks (nested objects compared member by member)."""
    missing: dict[str, Any] = {}
    for key, need in required.items():
        have = declared.get(key)
        if have is None:
            missing[key] = need
        elif isinstance(need, Mapping) and need:
            if not isinstance(have, Mapping):
                missing[key] = need
            elif sub := missing_capabilities(have, need):
                missing[key] = sub
    return missing


def require_client_capabilities(
    request: BaseModel, required: Mapping[str, Any] | BaseModel
) -> None:
    """Raise ``MissingRequiredClientCapabilityError`` (-32021) naming what is missing."""
    declared = _meta(request).get("io.modelcontextprotocol/clientCapabilities") or {}
    missing = missing_capabilities(declared, _dump(required))
    if missing:
        raise MissingRequiredClientCapabilityError(
            f"Missing required client capabilities: {', '.join(sorted(missing))}",
            required_capabilities=missing,
        )


def retry_with_input(
    request: RequestT,
    result: InputRequired,
    responses: Mapping[str, BaseModel | Mapping[str, Any]],
    *,
    request_id: str | int | None = None,
) -> RequestT:
    """The retry of ``request`` answering ``result``'s input requests.

    ``responses`` is keyed like ``result.input_requests``: every request must be
    answered and nothing else. ``requestState`` is echoed unchanged; the retry
    gets ``request_id`` (a retry is a new JSON-RPC request) or keeps the id.
    """
    asked = set(result.input_requests or {})
    answered = set(responses)
    if asked != answered:
        raise ValueError(
            f"input responses must answer exactly {sorted(asked)}; "
            f"missing {sorted(asked - answered)}, unknown {sorted(answered - asked)}"
        )
    message = _dump(request)
    params = dict(message.get("params") or {})
    params["inputResponses"] = {key: _dump(value) for key, value in responses.items()}
    if result.request_state is not None:
        params["requestState"] = result.request_state
    else:
        params.pop("requestState", None)
    message["params"] = params
    if request_id is not None:
        message["id"] = request_id
    return type(request).model_validate(message)
