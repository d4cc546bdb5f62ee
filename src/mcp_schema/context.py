"""What a handler needs from a request (hand-written runtime module): the
request context; and, importable from here as the guides show, the
client-capability checks (`mcp_schema.capabilities`) and the input rounds
(`mcp_schema.rounds`).

A stateless-era request carries its context in ``params._meta``
(`RequestContext.from_request`); a handshake-era request shares it with its
session's ``initialize`` (`RequestContext.from_session`). Either way one
handler reads the same fields, as models of the request's version.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ValidationError

from mcp_schema._args import check
from mcp_schema.base import McpModel
from mcp_schema.capabilities import CAPABILITIES_KEY as CAPABILITIES_KEY  # projection's
from mcp_schema.capabilities import (
    declared_capabilities,
    invalid_meta,
    meta_of,
    missing_capabilities,
    params_error,
    request_wire,
    require_client_capabilities,
)
from mcp_schema.errors import (
    InvalidParamsError,
    quote,
)
from mcp_schema.rounds import (
    check_input_responses,
    input_required,
    retry_with_input,
)
from mcp_schema.tables import VersionTables
from mcp_schema.versions import (
    PROTOCOL_VERSION_KEY,
    protocol,
    version_of,
)

if TYPE_CHECKING:
    from mcp_schema.http.caller import Caller

__all__ = [
    "LOGGING_LEVELS",
    "LoggingLevel",
    "RequestContext",
    "check_input_responses",
    "input_required",
    "missing_capabilities",
    "require_client_capabilities",
    "retry_with_input",
]

LoggingLevel = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
"""A log level (the same eight in every version)."""

LOGGING_LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
"""The levels, least severe first: a client that asked for one gets it and every later one."""


_VERSION_KEY = PROTOCOL_VERSION_KEY
INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"


def _from_validation(key: str, exc: ValidationError) -> InvalidParamsError:
    return params_error(exc, f"$.params._meta[{quote(key)}]")


def _tables(meta: Mapping[str, Any]) -> VersionTables:
    version = meta.get(_VERSION_KEY)
    compiled = protocol(version) if isinstance(version, str) else None
    if compiled is None or compiled.era != "stateless":
        reason = "missing" if version is None else "not a stateless-era protocol version"
        raise invalid_meta(_VERSION_KEY, reason)
    return compiled.load()


@dataclass(frozen=True, init=False)
class RequestContext:
    """The per-request facts of the stateless era, read from ``params._meta``.

    ``client_capabilities`` and ``client_info`` are the ``ClientCapabilities``
    and ``Implementation`` models of the request's protocol version.
    ``caller``: who sent the request, as the HTTP front door established it
    (`mcp_schema.http.Caller`: the principal, the verified token's
    `mcp_schema.auth.Principal` and the client's address); None where no
    front door says (stdio, a context read from a bare request).
    """

    method: str
    request_id: str | int
    protocol_version: str
    client_capabilities: McpModel
    client_info: McpModel | None
    log_level: LoggingLevel | None
    progress_token: str | int | None
    caller: Caller | None = None

    def __init__(
        self,
        method: str,
        request_id: str | int,
        protocol_version: str,
        client_capabilities: McpModel,
        client_info: McpModel | None,
        log_level: LoggingLevel | None,
        progress_token: str | int | None,
        caller: Caller | None = None,
    ) -> None:
        # Every request builds one: its fields written into its __dict__ at
        # once, where a frozen dataclass's own __init__ makes a call of
        # object.__setattr__ per field (frozen all the same: __setattr__ refuses).
        fields = self.__dict__
        fields["method"] = method
        fields["request_id"] = request_id
        fields["protocol_version"] = protocol_version
        fields["client_capabilities"] = client_capabilities
        fields["client_info"] = client_info
        fields["log_level"] = log_level
        fields["progress_token"] = progress_token
        fields["caller"] = caller

    @classmethod
    def from_request(cls, request: BaseModel) -> RequestContext:
        """Read ``request``'s context; `InvalidParamsError` (-32602) when ``_meta`` is malformed.

        A ``request`` that is not a decoded request (no ``method`` and ``id``) is a
        ``TypeError``: it is the calling program's mistake, not the peer's.
        """
        message = request_wire(request)
        method, request_id = message.get("method"), message.get("id")
        if not isinstance(method, str) or not isinstance(request_id, (str, int)):
            raise TypeError(f"{type(request).__name__} is not a request (a method and an id)")
        meta = meta_of(message)
        tables = _tables(meta)
        capabilities_model, implementation = tables.client_capabilities, tables.implementation
        assert capabilities_model is not None and implementation is not None  # every core version
        try:
            capabilities = capabilities_model.model_validate(declared_capabilities(meta))
        except ValidationError as exc:
            raise _from_validation(CAPABILITIES_KEY, exc) from None
        info = meta.get(INFO_KEY)
        try:
            client_info = implementation.model_validate(info) if info is not None else None
        except ValidationError as exc:
            raise _from_validation(INFO_KEY, exc) from None
        log_level = meta.get(LOG_LEVEL_KEY)
        if log_level is not None and log_level not in LOGGING_LEVELS:
            raise invalid_meta(LOG_LEVEL_KEY, "must be a logging level")
        if isinstance(request_id, bool):
            raise TypeError(f"{type(request).__name__} is not a request (its id is a bool)")
        progress_token = meta.get("progressToken")
        if progress_token is not None and not _is_id(progress_token):
            raise invalid_meta("progressToken", "must be a string or an integer")
        return cls(
            method=method,
            request_id=request_id,
            protocol_version=meta[_VERSION_KEY],
            client_capabilities=capabilities,
            client_info=client_info,
            log_level=log_level,
            progress_token=progress_token,
        )

    @classmethod
    def of_stateless(cls, request: BaseModel, caller: Caller | None = None) -> RequestContext:
        """`from_request` of a request the codec decoded: its ``_meta`` is typed
        already (a ``RequestMetaObject``), so nothing is validated again;
        ``caller``: who sent it."""
        try:  # what a typed request has (read as attributes: getattr's default costs a call)
            meta = request.params.meta  # type: ignore[attr-defined]
            capabilities, method = meta.client_capabilities, request.method  # type: ignore[attr-defined]
            request_id = request.id  # type: ignore[attr-defined]
        except AttributeError:
            return cls._read(request, caller)
        if not isinstance(capabilities, McpModel) or not isinstance(method, str):
            return cls._read(request, caller)
        assert isinstance(request_id, (str, int))  # the codec read a request's id
        return cls(  # by position, in the order of the fields: one per request
            method,
            request_id,
            meta.protocol_version,
            capabilities,
            meta.client_info,
            meta.log_level,
            meta.progress_token,
            caller,
        )

    @classmethod
    def _read(cls, request: BaseModel, caller: Caller | None) -> RequestContext:
        """`from_request` of what is not a typed stateless-era request, for ``caller``."""
        read = cls.from_request(request)
        return read if caller is None else dataclasses.replace(read, caller=caller)

    def of(
        self,
        request: BaseModel,
        request_id: str | int,
        log_level: LoggingLevel | None,
        caller: Caller | None = None,
    ) -> RequestContext:
        """The context of another handshake-era ``request`` of the session this
        context opened (`from_session` of its ``initialize``), read once;
        ``caller``: who sent this one."""
        meta = getattr(getattr(request, "params", None), "meta", None)
        return RequestContext(
            method=getattr(request, "method", self.method),
            request_id=request_id,
            protocol_version=self.protocol_version,
            client_capabilities=self.client_capabilities,
            client_info=self.client_info,
            log_level=log_level,
            progress_token=getattr(meta, "progress_token", None),
            caller=caller,
        )

    @classmethod
    def from_session(
        cls, request: BaseModel, initialize: BaseModel, *, log_level: LoggingLevel | None = None
    ) -> RequestContext:
        """Read a handshake-era ``request``'s context from its session's ``initialize`` request.

        The protocol version is the one ``request`` was decoded by (the session's
        negotiated version); client capabilities and info come from ``initialize``;
        ``log_level`` is the level the client last set with ``logging/setLevel``
        (None: never set). Either argument not a decoded request of a
        handshake-era version is a ``TypeError``.
        """
        check(log_level, str, "log_level", none=True)
        message, opened = request_wire(request), request_wire(initialize)
        method, request_id = message.get("method"), message.get("id")
        if not isinstance(method, str) or not isinstance(request_id, (str, int)):
            raise TypeError(f"{type(request).__name__} is not a request (a method and an id)")
        if opened.get("method") != "initialize":
            raise TypeError(f"{type(initialize).__name__} is not an initialize request")
        compiled = version_of(type(request))
        if compiled is None or compiled.era != "handshake" or compiled.extension is not None:
            raise TypeError(f"{type(request).__name__} is not a handshake-era request model")
        tables = compiled.load()
        capabilities_model, implementation = tables.client_capabilities, tables.implementation
        assert capabilities_model is not None and implementation is not None  # every core version
        params = opened.get("params") or {}
        params_of_request = message.get("params")
        meta = params_of_request.get("_meta") if isinstance(params_of_request, Mapping) else None
        progress_token = meta.get("progressToken") if isinstance(meta, Mapping) else None
        # The initialize was read by the version the client offered; its facts
        # are read again by the version the session settled on.
        try:
            capabilities = capabilities_model.model_validate(params.get("capabilities", {}))
        except ValidationError as exc:
            raise params_error(exc, "$.params.capabilities") from None
        try:
            client_info = implementation.model_validate(params.get("clientInfo"))
        except ValidationError as exc:
            raise params_error(exc, "$.params.clientInfo") from None
        return cls(
            method=method,
            request_id=request_id,
            protocol_version=compiled.version,
            client_capabilities=capabilities,
            client_info=client_info,
            log_level=log_level,
            progress_token=progress_token,
        )


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)
