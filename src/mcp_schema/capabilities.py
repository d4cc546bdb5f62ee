"""Capability checks (hand-written runtime module): what a request needs the
server to declare (`SERVED_BY`), what asking the client needs it to declare
(`ASKED_CAPABILITY`, `askable`), and what a stateless-era request declares
in ``params._meta`` (`missing_capabilities`, `require_client_capabilities`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from mcp_schema._args import check
from mcp_schema._codec.catalog import catalog
from mcp_schema._codec.wire import wire_value
from mcp_schema.errors import (
    InvalidParamsError,
    MissingRequiredClientCapabilityError,
    error_list,
    quote,
)
from mcp_schema.versions import STATELESS, protocol

__all__ = [
    "ASKED_CAPABILITY",
    "CAPABILITIES_KEY",
    "SERVED_BY",
    "askable",
    "capability_of",
    "missing_capabilities",
    "require_client_capabilities",
]

CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
"""The ``params._meta`` member a stateless-era request declares the client's capabilities in."""

SERVED_BY: dict[str, tuple[str, ...]] = {
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "resources/list": ("resources",),
    "resources/read": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "completion/complete": ("completions",),
    "logging/setLevel": ("logging",),
}
"""The server capability (a path into ``ServerCapabilities``) each client request needs."""

ASKED_CAPABILITY: Mapping[str, str] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
"""The client capability each input request needs."""


def capability_of(method: str) -> tuple[str, ...] | None:
    """The server capability ``method`` needs, if any."""
    check(method, str, "method")
    return SERVED_BY.get(method)


def declares(capabilities: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    """Whether ``capabilities`` (wire JSON) declare the capability at ``path``."""
    found: Any = capabilities
    for step in path:
        # A dict told by its type: the ABC's isinstance is dear, and every request asks.
        if not (type(found) is dict or isinstance(found, Mapping)) or found.get(step) in (
            None,
            False,
        ):
            return False
        found = found[step]
    return True


def askable(version: str, method: str) -> bool:
    """Whether ``version`` has the input request ``method``."""
    check(version, str, "version")
    check(method, str, "method")
    if version in STATELESS:
        compiled = protocol(version)
        assert compiled is not None
        table: Mapping[str, Any] = importlib.import_module(compiled.package).INPUT_REQUESTS
        return method in table
    return method in catalog(version, ()).requests


def request_wire(request: BaseModel) -> dict[str, Any]:
    """A decoded request as wire JSON; anything else is the caller's ``TypeError``."""
    if not isinstance(request, BaseModel):
        raise TypeError(f"request must be a decoded request model, not {type(request).__name__}")
    return wire_value(request, "request")


def meta_of(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """A request's ``params._meta``; -32602 when there is no such object."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    if not isinstance(meta, Mapping):
        reason = "missing" if meta is None else "must be an object"
        raise InvalidParamsError(
            f"Invalid params: the request carries no params._meta object ({reason})",
            error_list([{"path": "$.params._meta", "reason": reason}]),
        )
    return meta


def invalid_meta(key: str, reason: str) -> InvalidParamsError:
    """-32602 for the ``params._meta`` member ``key``."""
    path = f"$.params._meta[{quote(key)}]"
    return InvalidParamsError(
        f"Invalid params: {path}: {reason}", error_list([{"path": path, "reason": reason}])
    )


def params_error(exc: ValidationError, base: str) -> InvalidParamsError:
    """-32602 for what pydantic refused, at paths under ``base``."""
    errors = [
        {"path": base + "".join(f"[{quote(step)}]" for step in e["loc"]), "reason": e["msg"]}
        for e in exc.errors(include_url=False)
    ]
    return InvalidParamsError(
        f"Invalid params: {errors[0]['path']}: {errors[0]['reason']}", error_list(errors)
    )


def declared_capabilities(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The client capabilities ``_meta`` declares (none: empty)."""
    declared = meta.get(CAPABILITIES_KEY, {})
    if not isinstance(declared, Mapping):
        raise invalid_meta(CAPABILITIES_KEY, "must be an object")
    return dict(declared)


def missing_capabilities(
    declared: Mapping[str, Any], required: Mapping[str, Any]
) -> dict[str, Any]:
    """The part of ``required`` that ``declared`` lacks (nested objects compared member by member)."""
    check(declared, Mapping, "declared")
    check(required, Mapping, "required")
    return _missing(declared, required)


def _missing(declared: Mapping[str, Any], required: Mapping[str, Any]) -> dict[str, Any]:
    missing: dict[str, Any] = {}
    for key, need in required.items():
        have = declared.get(key)
        if have is None:
            missing[key] = need
        elif isinstance(need, Mapping) and need:
            if not isinstance(have, Mapping):
                missing[key] = need
            elif sub := _missing(have, need):
                missing[key] = sub
    return missing


def require_client_capabilities(
    request: BaseModel, required: Mapping[str, Any] | BaseModel
) -> None:
    """Raise ``MissingRequiredClientCapabilityError`` (-32021) naming what is missing.

    A request whose declared capabilities are not an object is `InvalidParamsError`.
    """
    declared = declared_capabilities(meta_of(request_wire(request)))
    missing = missing_capabilities(declared, wire_value(required, "required"))
    if missing:
        raise MissingRequiredClientCapabilityError(
            f"Missing required client capabilities: {', '.join(map(quote, sorted(missing)))}",
            required_capabilities=missing,
        )
