"""What a handler needs from a request (hand-written runtime module): the
request context, client-capability checks, and the retry of a request that got
an input-required result (MRTR).

A stateless-era request carries its context in ``params._meta``
(`RequestContext.from_request`); a handshake-era request shares it with its
session's ``initialize`` (`RequestContext.from_session`). Either way one
handler reads the same fields, as models of the request's version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from mcp_schema._args import check
from mcp_schema._codec.wire import wire_value
from mcp_schema.base import McpModel
from mcp_schema.capabilities import CAPABILITIES_KEY as CAPABILITIES_KEY  # projection's
from mcp_schema.capabilities import (
    declared_capabilities,
    invalid_meta,
    meta_of,
    missing_capabilities,
    request_wire,
    require_client_capabilities,
)
from mcp_schema.compiled import VersionTables
from mcp_schema.errors import (
    InvalidParamsError,
    error_list,
    quote,
)
from mcp_schema.versions import (
    PROTOCOL_VERSION_KEY,
    protocol,
    unsupported,
    version_of,
)

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

RequestT = TypeVar("RequestT", bound=BaseModel)

LoggingLevel = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
"""A log level (the same eight in every version)."""

LOGGING_LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
"""The levels, least severe first: a client that asked for one gets it and every later one."""


_VERSION_KEY = PROTOCOL_VERSION_KEY
INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"


class InputRequired(Protocol):
    """An input-required result (``InputRequiredResult`` of any stateless-era version)."""

    @property
    def input_requests(self) -> Mapping[str, Any] | None: ...

    @property
    def request_state(self) -> str | None: ...


def _validation_error(exc: ValidationError, base: str) -> InvalidParamsError:
    errors = [
        {"path": base + "".join(f"[{quote(step)}]" for step in e["loc"]), "reason": e["msg"]}
        for e in exc.errors(include_url=False)
    ]
    return InvalidParamsError(
        f"Invalid params: {errors[0]['path']}: {errors[0]['reason']}", error_list(errors)
    )


def _from_validation(key: str, exc: ValidationError) -> InvalidParamsError:
    return _validation_error(exc, f"$.params._meta[{quote(key)}]")


def _tables(meta: Mapping[str, Any]) -> VersionTables:
    version = meta.get(_VERSION_KEY)
    compiled = protocol(version) if isinstance(version, str) else None
    if compiled is None or compiled.era != "stateless":
        reason = "missing" if version is None else "not a stateless-era protocol version"
        raise invalid_meta(_VERSION_KEY, reason)
    return compiled.load()


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
    log_level: LoggingLevel | None
    progress_token: str | int | None

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
    def of_stateless(cls, request: BaseModel) -> RequestContext:
        """`from_request` of a request the codec decoded: its ``_meta`` is typed
        already (a ``RequestMetaObject``), so nothing is validated again."""
        params = getattr(request, "params", None)
        meta = getattr(params, "meta", None)
        capabilities = getattr(meta, "client_capabilities", None)
        method, request_id = getattr(request, "method", None), getattr(request, "id", None)
        if not isinstance(capabilities, McpModel) or not isinstance(method, str):
            return cls.from_request(request)  # not a typed stateless-era request
        assert isinstance(request_id, (str, int))  # the codec read a request's id
        return cls(
            method=method,
            request_id=request_id,
            protocol_version=meta.protocol_version,  # type: ignore[union-attr]
            client_capabilities=capabilities,
            client_info=meta.client_info,  # type: ignore[union-attr]
            log_level=meta.log_level,  # type: ignore[union-attr]
            progress_token=meta.progress_token,  # type: ignore[union-attr]
        )

    def of(
        self, request: BaseModel, request_id: str | int, log_level: LoggingLevel | None
    ) -> RequestContext:
        """The context of another handshake-era ``request`` of the session this
        context opened (`from_session` of its ``initialize``), read once."""
        meta = getattr(getattr(request, "params", None), "meta", None)
        return RequestContext(
            method=getattr(request, "method", self.method),
            request_id=request_id,
            protocol_version=self.protocol_version,
            client_capabilities=self.client_capabilities,
            client_info=self.client_info,
            log_level=log_level,
            progress_token=getattr(meta, "progress_token", None),
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
            raise _validation_error(exc, "$.params.capabilities") from None
        try:
            client_info = implementation.model_validate(params.get("clientInfo"))
        except ValidationError as exc:
            raise _validation_error(exc, "$.params.clientInfo") from None
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
    if not isinstance(result, BaseModel) or not hasattr(result, "input_requests"):
        raise TypeError(f"result must be an InputRequiredResult, not {type(result).__name__}")
    if not isinstance(responses, Mapping):
        raise TypeError(f"responses must be a mapping, not {type(responses).__name__}")
    check(request_id, (str, int), "request_id", none=True)
    asked = set(result.input_requests or {})
    answered = set(responses)
    if asked != answered:
        raise ValueError(
            f"input responses must answer exactly {sorted(asked)}; "
            f"missing {sorted(asked - answered)}, unknown {sorted(answered - asked)}"
        )
    message = request_wire(request)
    params = dict(message.get("params") or {})
    params["inputResponses"] = {
        key: wire_value(value, f"responses[{key!r}]") for key, value in responses.items()
    }
    if result.request_state is not None:
        params["requestState"] = result.request_state
    else:
        params.pop("requestState", None)
    message["params"] = params
    if request_id is not None:
        message["id"] = request_id
    try:
        return type(request).model_validate(message)
    except ValidationError as exc:
        raise _validation_error(exc, "$") from None


INPUT_REQUIRED = "input_required"
"""The ``resultType`` of an input-required result, its tag among a version's result arms."""


def input_required(
    version: str,
    requests: Mapping[str, BaseModel | Mapping[str, Any]],
    *,
    state: str | None = None,
) -> McpModel:
    """The ``InputRequiredResult`` of ``version`` asking the client ``requests``
    (keyed as its retry must answer them) and carrying ``state`` back to the
    server, which the retry echoes (the server side of `retry_with_input`).

    A version without input-required results, or a request it refuses, is a ``ValueError``.
    """
    check(version, str, "version")
    check(requests, Mapping, "requests")
    check(state, str, "state", none=True)
    compiled = protocol(version)
    if compiled is None:
        raise unsupported(version)
    model = compiled.load().result_arms.get(INPUT_REQUIRED)
    if model is None:
        raise ValueError(f"{version} has no input-required results")
    asked = {key: wire_value(value, f"requests[{key!r}]") for key, value in requests.items()}
    try:
        # Construction, not validation, so resultType takes its preset.
        return model(input_requests=asked, request_state=state)
    except ValidationError as exc:
        raise ValueError(f"{version} input-required result: {exc}") from None


def _mismatch(path: str, reason: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Invalid params: {path}: {reason}", error_list([{"path": path, "reason": reason}])
    )


def check_input_responses(request: BaseModel, result: InputRequired) -> dict[str, Any]:
    """The input responses of ``request``, a retry answering ``result``; an
    `InvalidParamsError` (-32602) when its ``requestState`` is not ``result``'s
    or its ``inputResponses`` do not answer exactly ``result``'s input requests.

    The mirror of `retry_with_input`: what one builds, the other accepts.
    """
    if not isinstance(result, BaseModel) or not hasattr(result, "input_requests"):
        raise TypeError(f"result must be an InputRequiredResult, not {type(result).__name__}")
    if not isinstance(request, BaseModel):
        raise TypeError(f"request must be a decoded request model, not {type(request).__name__}")
    params = getattr(request, "params", None)
    state = getattr(params, "request_state", None)
    if state != result.request_state:
        reason = (
            "missing" if state is None else "does not match the state of the input-required result"
        )
        raise _mismatch("$.params.requestState", reason)
    responses: Mapping[str, Any] = getattr(params, "input_responses", None) or {}
    asked, answered = set(result.input_requests or {}), set(responses)
    if missing := sorted(asked - answered):
        raise _mismatch("$.params.inputResponses", f"no answer to {', '.join(map(quote, missing))}")
    if unknown := sorted(answered - asked):
        raise _mismatch(
            "$.params.inputResponses",
            f"answers {', '.join(map(quote, unknown))}, which were not asked",
        )
    return dict(responses)
