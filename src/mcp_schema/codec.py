"""Raw JSON-RPC bytes <-> typed MCP messages (hand-written runtime module).

``decode`` reads the few envelope members it needs to choose a model (``id``,
``method``, the protocol version in ``params._meta``, ``error.code``) with a
small sniffing model, then validates the whole message once, straight from the
bytes, with the model of that method in that protocol version. Every failure is
an `mcp_schema.errors.McpError` with the JSON-RPC code a server should
answer with. ``encode`` writes a message back by alias, leaving absent members
absent, so ``encode(decode(raw))`` is the JSON value of ``raw``.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable, Collection, Mapping
from types import ModuleType
from typing import Annotated, Any, Generic, Literal, TypeVar, Union

from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    StrictStr,
    Tag,
    TypeAdapter,
    ValidationError,
)
from pydantic_core import CoreSchema, SchemaValidator, core_schema

from mcp_schema import SUPPORTED_VERSIONS
from mcp_schema.base import DEFAULT_RESULT_TAG, JsonInt, McpModel, Omittable, ResultTypeUnion
from mcp_schema.errors import (
    InvalidParamsError,
    InvalidRequestError,
    McpError,
    MethodNotFoundError,
    ParseError,
    UnsupportedProtocolVersionError,
)
from mcp_schema.method_table import NotificationMethod, RequestMethod

__all__ = [
    "HANDSHAKE_VERSION",
    "TASKS_EXTENSION",
    "Correlator",
    "ErrorResponse",
    "Message",
    "ResultResponse",
    "decode",
    "encode",
    "message_kind",
]

HANDSHAKE_VERSION = "2025-11-25"
"""Used when a message names no version and the caller gives none: only
handshake-era traffic omits it (its version was negotiated by ``initialize``)."""

STATELESS_VERSION = "2026-07-28"
"""The version whose requests name themselves in ``params._meta``."""

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

_PACKAGES = {"2025-11-25": "mcp_schema.v2025_11_25", "2026-07-28": "mcp_schema.v2026_07_28"}
_EXTENSION_PACKAGES = {(STATELESS_VERSION, TASKS_EXTENSION): "mcp_schema.v2026_07_28.tasks"}

R = TypeVar("R")
E = TypeVar("E")

# A JSON Schema integer may be written 1.0, as in the versions' own RequestId.
RequestId = Union[StrictStr, JsonInt]


class ResultResponse(McpModel, Generic[R]):
    """A JSON-RPC result response whose ``result`` is typed by the method it answers."""

    jsonrpc: Literal["2.0"]
    id: RequestId
    result: R


class ErrorResponse(McpModel, Generic[E]):
    """A JSON-RPC error response whose ``error`` is typed by its code.

    ``id`` is null when the request's id could not be read (JSON-RPC 2.0).
    """

    jsonrpc: Literal["2.0"]
    id: RequestId | None = None
    error: E

    def exception(self) -> McpError:
        """The error as a raisable `McpError` of the matching subclass."""
        error = self.error
        dumped = error.model_dump(mode="json") if isinstance(error, BaseModel) else error
        return McpError.from_error_object(dumped if isinstance(dumped, Mapping) else {})


Message = McpModel
"""Any decoded message: a version's request or notification class, a
``ResultResponse`` or an ``ErrorResponse``."""

Kind = Literal["request", "notification", "result", "error"]


# -- sniffing: the envelope members that select the model ---------------------


def _members(fields: dict[str, CoreSchema]) -> CoreSchema:
    # Only the listed members are read; others are skipped without being
    # turned into Python objects.
    return core_schema.typed_dict_schema(
        {
            name: core_schema.typed_dict_field(schema, required=False)
            for name, schema in fields.items()
        },
        extra_behavior="ignore",
    )


def _loose_object(fields: dict[str, CoreSchema]) -> CoreSchema:
    # Anything that is not an object falls back to "any", so the real
    # validation, not the sniff, says what is wrong.
    return core_schema.union_schema(
        [_members(fields), core_schema.any_schema()], mode="left_to_right"
    )


_ANY = core_schema.any_schema()
_SNIFFER = SchemaValidator(
    _members(
        {
            "jsonrpc": _ANY,
            "id": _ANY,
            "method": _ANY,
            "params": _loose_object({"_meta": _loose_object({PROTOCOL_VERSION_KEY: _ANY})}),
            "error": _loose_object({}),  # only its presence matters
        }
    )
)


class _Envelope:
    """The members of a message that select its model, read in one cheap pass."""

    __slots__ = ("fields", "id", "jsonrpc", "method", "named_version")

    def __init__(self, members: dict[str, Any]) -> None:
        self.fields = members.keys()  # what is present, whatever its value
        self.jsonrpc = members.get("jsonrpc")
        self.id = members.get("id")
        self.method = members.get("method")
        params = members.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        self.named_version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None


def _sniff(raw: bytes | str) -> _Envelope:
    try:
        return _Envelope(_SNIFFER.validate_json(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise ParseError(
                f"Parse error: {first['msg'].removeprefix('Invalid JSON: ')}"
            ) from None
        if str(first.get("input", "")).startswith("["):
            raise InvalidRequestError("Invalid Request: batches are not part of MCP") from None
        raise InvalidRequestError("Invalid Request: a JSON-RPC message is a JSON object") from None


def _reject_non_json_numbers(raw: bytes | str) -> None:
    # The JSON parser accepts NaN and Infinity, which JSON does not have. Only
    # a document that contains those words pays for the exact check; looking
    # for one letter first (memchr) keeps that test cheap on large payloads.
    if isinstance(raw, str):
        if not (("N" in raw and "NaN" in raw) or ("I" in raw and "Infinity" in raw)):
            return
    elif not ((b"N" in raw and b"NaN" in raw) or (b"I" in raw and b"Infinity" in raw)):
        return

    def refuse(token: str) -> None:
        raise ParseError(f"Parse error: {token} is not a JSON number")

    try:
        json.loads(raw, parse_constant=refuse)
    except ValueError:
        pass  # malformed JSON is reported by the sniffing parse


# -- per-version tables ---------------------------------------------------------


def _package(version: str) -> ModuleType:
    return importlib.import_module(_PACKAGES[version])


@functools.cache
def _tables(
    version: str, extensions: frozenset[str]
) -> tuple[Mapping[str, RequestMethod], Mapping[str, NotificationMethod]]:
    package = _package(version)
    requests: dict[str, RequestMethod] = dict(package.REQUESTS)
    notifications: dict[str, NotificationMethod] = dict(package.NOTIFICATIONS)
    for extension in sorted(extensions):
        where = _EXTENSION_PACKAGES.get((version, extension))
        if where is not None:
            ext = importlib.import_module(where)
            requests.update(ext.REQUESTS)
            notifications.update(ext.NOTIFICATIONS)
    return requests, notifications


def _task_tag(complete: type[McpModel]) -> Callable[[Any], str]:
    # 2025-11-25: a task-augmented request is answered by CreateTaskResult,
    # which carries `task`; the method's own result never declares it.
    declares_task = any(
        f.alias == "task" or name == "task" for name, f in complete.model_fields.items()
    )

    def tag_of(value: Any) -> str:
        has_task = (
            ("task" in value)
            if isinstance(value, dict)
            else getattr(value, "task", None) is not None
        )
        return "task" if has_task and not declares_task else DEFAULT_RESULT_TAG

    return tag_of


def _lenient_result_type(cls: type[McpModel]) -> type[McpModel]:
    """``cls`` with ``resultType`` optional: results from handshake-era servers."""
    field = cls.model_fields.get("result_type")
    if field is None:
        return cls
    return type(
        cls.__name__,
        (cls,),
        {
            "__module__": cls.__module__,
            "__annotations__": {"result_type": Omittable[StrictStr]},  # type: ignore[misc]
            "result_type": Field(default=None, alias="resultType"),
            "__doc__": cls.__doc__,
        },
    )


@functools.cache
def _result_response(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> Any:
    requests, _ = _tables(version, extensions)
    entry = requests.get(method)
    if entry is None:
        generic = _package(version).Result
        return ResultResponse[generic]  # type: ignore[valid-type]
    complete = _lenient_result_type(entry.result) if assume_complete else entry.result
    arms: list[Any] = [Annotated[complete, Tag(DEFAULT_RESULT_TAG)]]
    if version == "2025-11-25":
        tasks = [alt for alt in entry.alternatives if alt.__name__ == "CreateTaskResult"]
        arms += [Annotated[alt, Tag("task")] for alt in tasks]
        result_type: Any = (
            Annotated[Union[tuple(arms)], Discriminator(_task_tag(entry.result))]
            if tasks
            else entry.result
        )
    else:
        tags: dict[str, type[McpModel]] = {}
        for alt in entry.alternatives:
            if alt.__name__ == "InputRequiredResult":
                tags["input_required"] = alt
        ext_package = _EXTENSION_PACKAGES.get((version, TASKS_EXTENSION))
        if TASKS_EXTENSION in extensions and ext_package is not None:
            tags["task"] = importlib.import_module(ext_package).CreateTaskResult
        arms += [Annotated[cls, Tag(tag)] for tag, cls in tags.items()]
        result_type = Annotated[Union[tuple(arms)], ResultTypeUnion(*tags)] if tags else complete
    return ResultResponse[result_type]


@functools.cache
def _result_adapter(
    version: str, method: str, extensions: frozenset[str], assume_complete: bool
) -> TypeAdapter[Any]:
    return TypeAdapter(_result_response(version, method, extensions, assume_complete))


def _error_code_tag(known: frozenset[int]) -> Callable[[Any], str]:
    def tag_of(value: Any) -> str:
        code = value.get("code") if isinstance(value, dict) else getattr(value, "code", None)
        # Any JSON may stand where the code should: only a known integer selects.
        known_code = isinstance(code, int) and not isinstance(code, bool) and code in known
        return str(code) if known_code else "other"

    return tag_of


@functools.cache
def _error_response(version: str) -> Any:
    package = _package(version)
    models: Mapping[int, type[McpModel]] = package.ERROR_MODELS
    generic = package.Error
    # A peer may send a known code without the data its model requires: the
    # generic Error then keeps the message rather than refusing it.
    arms = [
        Annotated[Union[model, generic], Field(union_mode="left_to_right"), Tag(str(code))]
        for code, model in models.items()
        if model is not generic
    ]
    arms.append(Annotated[generic, Tag("other")])
    known = frozenset(code for code, model in models.items() if model is not generic)
    error_type: Any = Annotated[Union[tuple(arms)], Discriminator(_error_code_tag(known))]
    return ErrorResponse[error_type]


@functools.cache
def _error_adapter(version: str) -> TypeAdapter[Any]:
    return TypeAdapter(_error_response(version))


# -- errors ------------------------------------------------------------------------


def _member(step: str) -> str:
    return f".{step}" if step.isidentifier() else f"[{json.dumps(step)}]"


def _json_path(loc: tuple[int | str, ...], document: Any, missing: bool = False) -> str:
    """``$.params.content[0].text`` from a pydantic location.

    Union tags and validator names also appear in locations; only the steps
    that exist in the document are part of its path, and for a missing
    member the member itself (the last step).
    """
    path = "$"
    node = document
    if missing and loc and isinstance(loc[-1], str):
        return _json_path(loc[:-1], document) + _member(loc[-1])
    for step in loc:
        if isinstance(node, dict) and isinstance(step, str) and step in node:
            path += _member(step)
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            path += f"[{step}]"
            node = node[step]
    return path


def _invalid(exc: ValidationError, raw: bytes | str, what: str) -> McpError:
    try:
        document = json.loads(raw)
    except ValueError:
        document = None
    errors = [
        {"path": _json_path(tuple(e["loc"]), document, e["type"] == "missing"), "reason": e["msg"]}
        for e in exc.errors(include_url=False)
    ]
    # Both arms of a union may report the same place for the same reason.
    errors = [dict(pair) for pair in dict.fromkeys(tuple(e.items()) for e in errors)]
    in_payload = all(e["path"].startswith(("$.params", "$.result", "$.error")) for e in errors)
    summary = "; ".join(f"{e['path']}: {e['reason']}" for e in errors[:3])
    if not in_payload:
        return InvalidRequestError(f"Invalid Request: {summary}", {"errors": errors})
    return InvalidParamsError(f"Invalid {what}: {summary}", {"errors": errors})


# -- decode / encode -------------------------------------------------------------------


def _check_envelope(s: _Envelope, kind: Kind) -> None:
    if s.jsonrpc != "2.0":
        raise InvalidRequestError('Invalid Request: "jsonrpc" must be "2.0"')
    if kind in ("request", "result") and _request_id(s.id) is None:
        raise InvalidRequestError('Invalid Request: "id" must be a string or an integer')
    if kind in ("request", "notification") and not isinstance(s.method, str):
        raise InvalidRequestError('Invalid Request: "method" must be a string')


def _request_id(value: Any) -> str | int | None:
    """``value`` as a request id (a JSON Schema integer may be written ``1.0``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (str, int)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _kind(s: _Envelope) -> Kind:
    fields = s.fields
    if "method" in fields:
        return "request" if "id" in fields else "notification"
    if "error" in fields:
        return "error"
    if "id" in fields:
        return "result"
    raise InvalidRequestError("Invalid Request: neither a request, a notification nor a response")


def _detect_version(s: _Envelope, version: str | None, headers: Mapping[str, str] | None) -> str:
    requested = version
    if requested is None:
        requested = s.named_version
    if requested is None and headers:
        requested = next(
            (v for k, v in headers.items() if k.lower() == "mcp-protocol-version"), None
        )
    if requested is None:
        return HANDSHAKE_VERSION
    if not isinstance(requested, str) or requested not in _PACKAGES:
        shown = requested if isinstance(requested, str) else json.dumps(requested)
        raise UnsupportedProtocolVersionError(
            f"Unsupported protocol version: {shown}", requested=shown, supported=SUPPORTED_VERSIONS
        )
    return str(requested)


def decode(
    raw: bytes | str,
    *,
    version: str | None = None,
    method: str | None = None,
    headers: Mapping[str, str] | None = None,
    extensions: Collection[str] = (),
    allow_unknown_methods: bool = False,
    assume_complete: bool = False,
) -> Message:
    """Decode one JSON-RPC message into the model of its method and version.

    * ``version``: the protocol version; when absent it is read from
      ``params._meta`` (2026-07-28 requests), then from the
      ``MCP-Protocol-Version`` header, else `HANDSHAKE_VERSION`.
    * ``method``: for a response, the method of the request it answers;
      without it a result is typed as the version's generic ``Result``.
    * ``headers``: Streamable HTTP request headers, checked against the body
      (2026-07-28 requests and notifications).
    * ``extensions``: negotiated extension ids; with
      ``"io.modelcontextprotocol/tasks"`` a ``"task"`` result is a
      ``CreateTaskResult`` and the extension's methods are known.
    * ``allow_unknown_methods``: decode a request of an unknown method as the
      generic ``JSONRPCRequest`` instead of raising ``MethodNotFoundError``.
    * ``assume_complete``: a result without ``resultType`` (from a
      handshake-era server) is read as ``"complete"``.

    Raises `mcp_schema.errors.McpError` subclasses only.
    """
    _reject_non_json_numbers(raw)
    exts = frozenset(extensions) if extensions else _NO_EXTENSIONS
    if headers is None:
        message = _decode_fast(raw, version, method, exts, assume_complete)
        if message is not None:
            return message
    return _decode_sniffed(
        raw, _sniff(raw), version, method, headers, exts, allow_unknown_methods, assume_complete
    )


def _decode_sniffed(
    raw: bytes | str,
    sniffed: _Envelope,
    version: str | None,
    method: str | None,
    headers: Mapping[str, str] | None,
    exts: frozenset[str],
    allow_unknown_methods: bool,
    assume_complete: bool,
) -> Message:
    """The exact path: every error is classified from the sniffed envelope."""
    kind = _kind(sniffed)
    _check_envelope(sniffed, kind)
    resolved = _detect_version(sniffed, version, headers)
    try:
        if kind == "error":
            return _error_adapter(resolved).validate_json(raw)  # type: ignore[no-any-return]
        if kind == "result":
            adapter = _result_adapter(resolved, method or "", exts, assume_complete)
            return adapter.validate_json(raw)  # type: ignore[no-any-return]
        requests, notifications = _tables(resolved, exts)
        package = _package(resolved)
        if kind == "request":
            entry = requests.get(str(sniffed.method))
            if entry is None:
                if not allow_unknown_methods:
                    raise MethodNotFoundError(
                        f"Method not found: {sniffed.method}",
                        {"method": sniffed.method, "version": resolved},
                    )
                cls: type[McpModel] = package.JSONRPCRequest
            else:
                cls = entry.request
        else:
            note = notifications.get(str(sniffed.method))
            cls = note.notification if note is not None else package.JSONRPCNotification
        message = cls.model_validate_json(raw)
    except ValidationError as exc:
        raise _invalid(exc, raw, "result" if kind == "result" else "params") from None
    if headers is not None and resolved != HANDSHAKE_VERSION:
        from mcp_schema.http_headers import check_request_headers

        check_request_headers(headers, message)
    return message


# -- the fast path -----------------------------------------------------------------------
# One validation straight from the bytes, with no sniffing parse, for the
# messages that make up real traffic. It answers only when the exact path
# would give the same message; anything else (invalid input included) returns
# None and is decoded, and its error classified, by the exact path.

_NO_EXTENSIONS: frozenset[str] = frozenset()


@functools.cache
def _messages_validator(version: str, exts: frozenset[str]) -> Callable[[bytes | str], Any]:
    """Every request and notification class of a version, told apart by ``method``."""
    requests, notifications = _tables(version, exts)
    classes = [e.request for e in requests.values()] + [
        n.notification for n in notifications.values()
    ]
    by_method: Any = Annotated[Union[tuple(classes)], Field(discriminator="method")]
    # The core validator itself: TypeAdapter's Python wrapper costs a
    # measurable share of a small message.
    return TypeAdapter(by_method).validator.validate_json


@functools.cache
def _response_validator(
    version: str, method: str, exts: frozenset[str], assume_complete: bool
) -> Callable[[bytes | str], Any]:
    result = _result_response(version, method, exts, assume_complete)
    either: Any = Annotated[
        Union[result, _error_response(version)], Field(union_mode="left_to_right")
    ]
    return TypeAdapter(either).validator.validate_json


def _mentions_method(raw: bytes | str) -> bool:
    # A cheap look at the head of the message, not a parse: either answer may
    # be wrong (a "method" member far down, the word inside a response), and
    # a wrong one only sends the message on to the exact path.
    head = raw[:_HEAD]
    return b'"method"' in head if isinstance(head, bytes) else '"method"' in head


_HEAD = 4096


def _decode_fast(
    raw: bytes | str,
    version: str | None,
    method: str | None,
    exts: frozenset[str],
    assume_complete: bool,
) -> Message | None:
    if version is not None and version not in _PACKAGES:
        return None  # the exact path names the unsupported version
    # A request or notification has a "method" member; a response may still
    # mention the word (an input-required result embeds requests), so a
    # failed request attempt falls through to the response when the caller
    # named the method it answers.
    if _mentions_method(raw):
        message = _request_fast(raw, version, exts)
        if message is not None:
            return message
    if method is None:
        return None  # a response nobody named the method of: the exact path
    try:
        message = _response_validator(version or HANDSHAKE_VERSION, method, exts, assume_complete)(
            raw
        )
    except ValidationError:
        return None
    extra = message.__pydantic_extra__
    if extra and ("method" in extra or "error" in extra or "result" in extra):
        return None  # the exact path classifies such a message differently
    return message  # type: ignore[no-any-return]


def _request_fast(raw: bytes | str, version: str | None, exts: frozenset[str]) -> Message | None:
    try:
        if version is None:
            # Only stateless-era requests name their version; other messages
            # without one are handshake-era traffic: the exact path.
            message = _messages_validator(STATELESS_VERSION, exts)(raw)
            meta = getattr(getattr(message, "params", None), "meta", None)
            if "id" not in message.model_fields_set or (
                getattr(meta, "protocol_version", None) != STATELESS_VERSION
            ):
                return None
            return message  # type: ignore[no-any-return]
        message = _messages_validator(version, exts)(raw)
    except ValidationError:
        return None
    extra = message.__pydantic_extra__
    if "id" not in type(message).model_fields and extra and "id" in extra:
        return None  # a notification's method with an id: the exact path says why
    return message  # type: ignore[no-any-return]


def encode(message: BaseModel) -> bytes:
    """The JSON bytes of a message: wire names, absent members left out."""
    return type(message).__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)


def message_kind(message: BaseModel) -> Kind:
    if isinstance(message, ErrorResponse):
        return "error"
    if isinstance(message, ResultResponse):
        return "result"
    return "request" if "id" in message.model_fields_set else "notification"


class Correlator:
    """Pairs responses with the requests they answer, for callers that stream.

    Feed it every message of one connection, in both directions: it remembers
    each request's method and version by id (``"1"`` and ``1`` are different
    ids) and decodes a response with them. The session version that messages
    without a ``_meta`` version are read in is the one ``initialize``
    negotiated (handshake era) or the one the latest request named
    (2026-07-28); ``version`` sets it up front.
    """

    def __init__(
        self,
        *,
        version: str | None = None,
        extensions: Collection[str] = (),
        allow_unknown_methods: bool = False,
        assume_complete: bool = False,
    ) -> None:
        self.version = version
        self.extensions = frozenset(extensions)
        self.allow_unknown_methods = allow_unknown_methods
        self.assume_complete = assume_complete
        self._pending: dict[tuple[type, str | int], tuple[str, str | None]] = {}

    def decode(self, raw: bytes | str, *, headers: Mapping[str, str] | None = None) -> Message:
        _reject_non_json_numbers(raw)
        if headers is None:
            message = self._decode_request_fast(raw)
            if message is not None:
                return message
        sniffed = _sniff(raw)
        named = sniffed.named_version
        method: str | None = None
        version = None if named is not None else self.version
        request_id = _request_id(sniffed.id)
        if "method" not in sniffed.fields and request_id is not None:
            method, request_version = self._pending.pop(
                (type(request_id), request_id), (None, None)
            )
            version = request_version or version
        if sniffed.method == "initialize":
            version = HANDSHAKE_VERSION  # the handshake itself predates any session version
        message = _decode_sniffed(
            raw,
            sniffed,
            version,
            method,
            headers,
            self.extensions,
            self.allow_unknown_methods,
            self.assume_complete,
        )
        kind = message_kind(message)
        if kind == "request" and request_id is not None:
            self._remember(
                request_id, str(sniffed.method), named if isinstance(named, str) else version
            )
        if isinstance(named, str):
            self.version = named
        elif kind == "result" and method == "initialize":
            negotiated = getattr(getattr(message, "result", None), "protocol_version", None)
            if isinstance(negotiated, str):
                self.version = negotiated
        return message

    def _decode_request_fast(self, raw: bytes | str) -> Message | None:
        """Requests and notifications need no sniffing when the session
        version is known (or named in the request): only responses must be
        looked up by id before they can be typed."""
        stateless = self.version in (None, STATELESS_VERSION)
        message = _decode_fast(
            raw, None if stateless else self.version, None, self.extensions, self.assume_complete
        )
        if message is None:
            return None
        request_id = message.__dict__.get("id")
        if "id" in type(message).model_fields and isinstance(request_id, (str, int)):
            version = STATELESS_VERSION if stateless else self.version
            self._remember(request_id, str(message.__dict__["method"]), version)
            if stateless:
                self.version = STATELESS_VERSION
        return message

    def _remember(self, request_id: str | int, method: str, version: str | None) -> None:
        self._pending[(type(request_id), request_id)] = (method, version)

    @property
    def pending(self) -> int:
        """Requests seen that have no response yet."""
        return len(self._pending)
