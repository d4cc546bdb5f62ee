"""``decode_dict``: the codec's plain-dict view.

The same routing as ``decode`` (method tables, result unions, error codes,
options), but every model is replaced by its twin in the version's ``dicts``
module (a TypedDict of the same name), so validation hands back the parsed
JSON itself: plain ``dict``/``list`` values, unknown members included.

Real traffic takes one validation straight from the bytes, as on the model
path. Everything else (a response nobody named the method of, headers to
check, any input that fails) goes through the models' exact path, which
raises exactly the error ``decode`` raises, and a message it accepts comes
back as its parsed JSON.
"""

from __future__ import annotations

import functools
import importlib
import re
import types
import typing
from collections.abc import Collection, Mapping
from typing import Annotated, Any, Generic, Literal, TypeAlias, TypeVar, Union

from pydantic import BaseModel, Field, TypeAdapter, ValidationError, with_config
from pydantic.fields import FieldInfo
from pydantic_core import from_json
from typing_extensions import NotRequired, TypedDict

from mcp_schema._codec.builds import built_once
from mcp_schema._codec.decoding import decode_sniffed, options_of
from mcp_schema._codec.dispatch import (
    STATELESS,
    SUPPORTED,
    known_method,
    plain_response,
    tables,
)
from mcp_schema._codec.envelope import Envelope, sniff
from mcp_schema._codec.fast_path import (
    Validate,
    guessed_method,
    method_validator,
    or_error,
    response_validator,
)
from mcp_schema._codec.messages import ErrorResponse, Kind, RequestId, ResultResponse
from mcp_schema._codec.options import DecodeOptions
from mcp_schema._codec.screen import as_input, screen
from mcp_schema.base import OPEN_DICT
from mcp_schema.http_headers import Headers
from mcp_schema.versions import DEFAULT_VERSION, PROTOCOL_VERSION_KEY, STATELESS_VERSIONS

R = TypeVar("R")
E = TypeVar("E")


@with_config(OPEN_DICT)
class ResultResponseDict(TypedDict, Generic[R]):
    """A JSON-RPC result response as a dict; ``result`` is the method's result."""

    jsonrpc: Literal["2.0"]
    id: RequestId
    result: R


@with_config(OPEN_DICT)
class ErrorResponseDict(TypedDict, Generic[E]):
    """A JSON-RPC error response as a dict; ``error`` is the model of its code."""

    jsonrpc: Literal["2.0"]
    id: NotRequired[RequestId | None]
    error: E


DictMessage: TypeAlias = dict[str, Any]
"""What `mcp_schema.codec.decode_dict` returns: the message's parsed JSON,
valid as the TypedDict of its method and version (``<package>.dicts``), or
as `ResultResponseDict` / `ErrorResponseDict`."""


def _member(field: FieldInfo) -> Any:
    """A model field's type in the dict view, with the field's own constraints."""
    tp = dict_type(field.annotation)
    if not field.metadata:
        return tp
    arguments = (tp, *field.metadata)
    return Annotated[arguments]


@built_once
def twin(cls: type[BaseModel]) -> Any:
    """The TypedDict of a generated model: its namesake in ``<package>.dicts``.

    A class the codec derived from a generated one (the envelope members a
    draft-07 request lacks, ``resultType`` made optional by ``assume_complete``)
    gets a twin with its members, each as required as the class has it.
    """
    package = cls.__module__.rpartition(".")[0]
    view = getattr(importlib.import_module(f"{package}.dicts"), cls.__name__)
    generated = getattr(importlib.import_module(cls.__module__), cls.__name__)
    if cls is generated:
        return view
    members = dict(view.__annotations__)
    for name in vars(cls).get("__annotations__", {}):
        field = cls.model_fields[name]
        members[field.serialization_alias or name] = (
            _member(field) if field.is_required() else NotRequired[_member(field)]
        )
    derived = typing.cast(Any, TypedDict)(cls.__name__, members)
    derived.__module__ = view.__module__  # where its forward references resolve
    return with_config(view.__pydantic_config__)(derived)


def dict_type(tp: Any) -> Any:
    """The dict view of a type the model path validates with: every model
    replaced by its twin, the same unions, tags and discriminators."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        generic = tp.__pydantic_generic_metadata__
        if generic["origin"] is ResultResponse:
            return ResultResponseDict[dict_type(generic["args"][0])]  # type: ignore[misc]
        if generic["origin"] is ErrorResponse:
            return ErrorResponseDict[dict_type(generic["args"][0])]  # type: ignore[misc]
        return twin(tp)
    origin = typing.get_origin(tp)
    if origin is Annotated:
        inner, *metadata = typing.get_args(tp)
        arguments = (
            dict_type(inner),
            *map(functools.partial(_wire_discriminator, inner), metadata),
        )
        return Annotated[arguments]
    if origin in (Union, types.UnionType):
        return Union[tuple(dict_type(arm) for arm in typing.get_args(tp))]
    return tp


def _wire_discriminator(union: Any, metadata: Any) -> Any:
    """A model union's discriminator names an attribute; a dict has wire keys."""
    if not isinstance(metadata, FieldInfo) or not isinstance(metadata.discriminator, str):
        return metadata
    arm = typing.get_args(union)[0]
    field = arm.model_fields[metadata.discriminator]
    return Field(discriminator=field.serialization_alias or metadata.discriminator)


def compile_dicts(tp: Any) -> Validate:
    """`fast_path.compile_models` in the dict view: every model replaced by its twin."""
    return TypeAdapter(dict_type(tp)).validator.validate_json


@built_once
def _plain_validator(
    version: str, method: str, exts: frozenset[str], assume_complete: bool
) -> tuple[Validate, tuple[bytes, ...]] | None:
    """For a response to a method whose alternative results are told by a
    member (`dispatch.plain_response`): the validator of the method's own
    result alone, and those members' names as written."""
    plain = plain_response(version, method, exts, assume_complete)
    if plain is None:
        return None
    result, telling = plain
    return compile_dicts(or_error(result, version)), tuple(f'"{m}"'.encode() for m in telling)


def _names_none(raw: bytes | str, names: tuple[bytes, ...]) -> bool:
    """Whether ``raw`` surely has no member of these (ASCII) names anywhere: none
    is written plainly, and no printable ASCII character is written as a
    ``\\u00XX`` escape, the only other way to spell such a name."""
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    if any(name in data for name in names):
        return False
    return b"\\" not in data or _ESCAPED_ASCII.search(data) is None


_ESCAPED_ASCII = re.compile(rb"\\u00[2-7]")


def named_in_dict(message: Mapping[str, Any]) -> object:
    """`fast_path.named_in` of a decoded dict."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None


_last_named: str | None = STATELESS_VERSIONS[-1] if STATELESS_VERSIONS else None
"""As the model path's: the version the latest self-naming request named."""


def _self_naming_request(
    raw: bytes | str, method: str, exts: frozenset[str], guess: str | None
) -> dict[str, Any] | None:
    """Mirrors ``fast_path._self_naming_request``."""
    global _last_named
    first = guess if guess in STATELESS else _last_named
    if first is None:
        return None
    validate = method_validator(first, exts, method, compile_dicts)
    if validate is None:
        return None
    message: dict[str, Any] = validate(raw)
    named = named_in_dict(message)
    version = first
    if named != first:
        if not isinstance(named, str) or named not in STATELESS:
            return None
        validate = method_validator(named, exts, method, compile_dicts)
        if validate is None:
            return None
        message = validate(raw)
        if named_in_dict(message) != named:
            return None
        _last_named = version = named
    # A request: the model path reads a notification's "id" as an unknown member.
    requests = tables(version, exts)[0]
    return message if "id" in message and message["method"] in requests else None


def dict_request_fast(
    raw: bytes | str, method: str, version: str | None, exts: frozenset[str], guess: str | None
) -> dict[str, Any] | None:
    """Mirrors the model path's request attempt (``fast_path.request_fast``)."""
    try:
        if version is None:
            return _self_naming_request(raw, method, exts, guess)
        validate = method_validator(version, exts, method, compile_dicts)
        if validate is None:
            return None
        message: dict[str, Any] = validate(raw)
    except ValidationError:
        return None
    if (
        ("id" in message and message["method"] in tables(version, exts)[1])
        or "result" in message
        or "error" in message
    ):
        return None  # a notification's method with an id, or a mix of kinds: the exact path
    return message


_ENVELOPE_MEMBERS = frozenset(("method", "result", "error"))


def kind_of_dict(message: Mapping[str, Any]) -> Kind:
    """`mcp_schema.codec.message_kind` of a decoded dict."""
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "error" if "error" in message else "result"


def decode_dict_fast(
    raw: bytes | str, options: DecodeOptions, guess: str | None = None
) -> dict[str, Any] | None:
    """The validated dict, or None when the exact path must decide
    (``fast_path.decode_fast`` in the dict view)."""
    version, method = options.version, options.method
    if version is not None and version not in SUPPORTED:
        return None
    named_method = guessed_method(raw)
    if named_method is not None:
        message = dict_request_fast(raw, named_method, version, options.extensions, guess)
        if message is not None:
            return message
    if method is None:
        return None
    return dict_response_fast(
        raw, version or DEFAULT_VERSION, method, options.extensions, options.assume_complete
    )


def dict_response_fast(
    raw: bytes | str, version: str, method: str, exts: frozenset[str], assume_complete: bool
) -> dict[str, Any] | None:
    """`fast_path.response_fast` in the dict view."""
    method = known_method(version, exts, method)
    plain = _plain_validator(version, method, exts, assume_complete)
    if plain is not None and _names_none(raw, plain[1]):
        validate = plain[0]
    else:
        validate = response_validator(version, method, exts, assume_complete, compile_dicts)
    try:
        response: dict[str, Any] = validate(raw)
    except ValidationError:
        return None
    if len(_ENVELOPE_MEMBERS.intersection(response)) != 1:
        return None  # the exact path classifies such a message differently
    return response


def _exact(raw: bytes | str, sniffed: Envelope, options: DecodeOptions) -> Any:
    """The exact path: the models apply the same rules and raise the errors
    ``decode`` raises; what they accept is returned as parsed."""
    decode_sniffed(raw, sniffed, options)
    return from_json(raw)


def decode_dict_sniffed(raw: bytes | str, sniffed: Envelope, options: DecodeOptions) -> Any:
    """A message whose envelope was sniffed (a response the Correlator paired
    with its request): the one dict validation when it answers, else the exact path."""
    if options.headers is None:
        message = decode_dict_fast(raw, options)
        if message is not None:
            return message
    return _exact(raw, sniffed, options)


def decode_dict(
    raw: bytes | bytearray | memoryview | str,
    *,
    version: str | None = None,
    method: str | None = None,
    headers: Headers | None = None,
    extensions: Collection[str] = (),
    allow_unknown_methods: bool = False,
    assume_complete: bool = False,
    lenient_newer: bool = False,
) -> DictMessage:
    """Decode one JSON-RPC message into validated plain dicts.

    The options, the validation rules and every error are those of
    `mcp_schema.codec.decode`; the result is the message's parsed JSON, valid
    as the TypedDict of its method in the version's ``dicts`` module (a
    response as `ResultResponseDict` or `ErrorResponseDict`).
    ``Model.model_validate(d)`` turns it into a model.

    Raises `mcp_schema.errors.McpError` subclasses only (``TypeError`` for
    arguments of the wrong type, as `decode`).
    """
    text = as_input(raw)
    options = options_of(
        version, method, headers, extensions, allow_unknown_methods, assume_complete, lenient_newer
    )
    screen(text)
    if headers is None:
        message = decode_dict_fast(text, options)
        if message is not None:
            return message
    parsed: DictMessage = _exact(text, sniff(text), options)
    return parsed
