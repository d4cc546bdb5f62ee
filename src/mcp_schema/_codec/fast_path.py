"""The fast path: one validation straight from the bytes, with no sniffing
parse, for the messages that make up real traffic.

It answers only when the exact path would give the same message; anything
else (invalid input included) returns None and is decoded, and its error
classified, by the exact path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter, ValidationError

from mcp_schema._codec.builds import built_once
from mcp_schema._codec.dispatch import (
    STATELESS,
    SUPPORTED,
    error_response,
    known_method,
    result_response,
    tables,
)
from mcp_schema._codec.messages import Message
from mcp_schema._codec.options import DecodeOptions
from mcp_schema.versions import DEFAULT_VERSION, STATELESS_VERSIONS

Validate = Callable[[Union[bytes, str]], Any]
Compile = Callable[[Any], Validate]
"""How a view turns the type it validates with into a validator: the model
path as it is, the dict view through its TypedDict twins."""


def compile_models(tp: Any) -> Validate:
    # The core validator itself: TypeAdapter's Python wrapper costs a
    # measurable share of a small message.
    return TypeAdapter(tp).validator.validate_json


def method_validator(
    version: str, exts: frozenset[str], method: str, compile: Compile
) -> Validate | None:
    """The validator of the request or notification class of ``method``, built
    on first use; None for a method the version does not know."""
    known = _KNOWN.get((version, exts, method, compile))
    if known is not None:
        return known
    requests, notifications = tables(version, exts)
    if method not in requests and method not in notifications:
        return None  # never cache what a peer names at will
    known = _KNOWN[version, exts, method, compile] = _class_validator(
        version, exts, method, compile
    )
    return known


_KNOWN: dict[tuple[str, frozenset[str], str, Compile], Validate] = {}
"""The validators of the methods seen so far: one dict lookup per message."""


@built_once
def _class_validator(version: str, exts: frozenset[str], method: str, compile: Compile) -> Validate:
    requests, notifications = tables(version, exts)
    entry = requests.get(method)
    return compile(entry.request if entry is not None else notifications[method].notification)


def or_error(result: Any, version: str) -> Any:
    """A response: the given result's, else the version's error response."""
    return Annotated[Union[result, error_response(version)], Field(union_mode="left_to_right")]


@built_once
def response_validator(
    version: str, method: str, exts: frozenset[str], assume_complete: bool, compile: Compile
) -> Validate:
    """The validator of a response to ``method`` (a method the version knows, or "")."""
    return compile(or_error(result_response(version, method, exts, assume_complete), version))


def guessed_method(raw: bytes | str) -> str | None:
    """The value of the ``"method"`` member, when it is the first of
    ``"method"``, ``"result"`` and ``"error"`` in the head of the message and
    written as a plain string; None when a response member comes first.

    A cheap look, not a parse: the member found may be a nested one, or the
    word may sit inside a string. Only one class is then validated, and a
    class accepts only its own method at the top level, so a wrong guess is
    refused by validation and the message goes on to the exact path. Stopping
    at the first of the three spares a response the scan of its whole head.
    """
    head = raw[:_HEAD]
    if isinstance(head, bytes):
        first = _FIRST_MEMBER.search(head)
        if first is None or first.group(1) != b"method":
            return None
        value = _STRING.match(head, first.end())
        return None if value is None else value.group(1).decode("utf-8", "replace")
    first_text = _FIRST_MEMBER_TEXT.search(head)
    if first_text is None or first_text.group(1) != "method":
        return None
    value_text = _STRING_TEXT.match(head, first_text.end())
    return None if value_text is None else value_text.group(1)


_HEAD = 4096
_FIRST_MEMBER_PATTERN = r'"(method|result|error)"[ \t\r\n]*:[ \t\r\n]*'
_FIRST_MEMBER = re.compile(_FIRST_MEMBER_PATTERN.encode())
_FIRST_MEMBER_TEXT = re.compile(_FIRST_MEMBER_PATTERN)
_STRING_PATTERN = r'"([^"\\]*)"'
_STRING = re.compile(_STRING_PATTERN.encode())
_STRING_TEXT = re.compile(_STRING_PATTERN)


def named_in(message: Message) -> object:
    """The version a request names in ``params._meta``, if any."""
    meta = getattr(getattr(message, "params", None), "meta", None)
    return getattr(meta, "protocol_version", None)


def decode_fast(
    raw: bytes | str, options: DecodeOptions, guess: str | None = None
) -> Message | None:
    """The message, or None when the exact path must decide.

    ``guess``: the stateless-era version a request naming its own is most
    likely in (a session's).
    """
    version, method = options.version, options.method
    if version is not None and version not in SUPPORTED:
        return None  # the exact path names the unsupported version
    # A request or notification has a "method" member; a response may still
    # mention the word (an input-required result embeds requests), so a
    # failed request attempt falls through to the response when the caller
    # named the method it answers.
    named_method = guessed_method(raw)
    if named_method is not None:
        message = request_fast(raw, named_method, version, options.extensions, guess)
        if message is not None:
            return message
    if method is None:
        return None  # a response nobody named the method of: the exact path
    return response_fast(
        raw, version or DEFAULT_VERSION, method, options.extensions, options.assume_complete
    )


def response_fast(
    raw: bytes | str, version: str, method: str, exts: frozenset[str], assume_complete: bool
) -> Message | None:
    """A response to ``method`` in ``version``, or None when the exact path must decide."""
    validate = response_validator(
        version, known_method(version, exts, method), exts, assume_complete, compile_models
    )
    try:
        message = validate(raw)
    except ValidationError:
        return None
    extra = message.__pydantic_extra__
    if extra and ("method" in extra or "error" in extra or "result" in extra):
        return None  # the exact path classifies such a message differently
    return message  # type: ignore[no-any-return]


def guessed_id(raw: bytes | str) -> str | int | None:
    """The value of the first ``"id"`` member, when it is written as a plain
    string or integer: a cheap look, as `guessed_method` (the caller checks
    the id of what validation gives)."""
    if isinstance(raw, bytes):
        found = _ID.search(raw)
        if found is None:
            return None
        value = found.group(1)
        return int(value) if value[0] != 34 else value[1:-1].decode("utf-8", "replace")
    found_text = _ID_TEXT.search(raw)
    if found_text is None:
        return None
    text = found_text.group(1)
    return int(text) if text[0] != '"' else text[1:-1]


_ID_PATTERN = r'"id"[ \t\r\n]*:[ \t\r\n]*(-?[0-9]{1,30}(?![0-9.eE])|"[^"\\]*")'
_ID = re.compile(_ID_PATTERN.encode())
_ID_TEXT = re.compile(_ID_PATTERN)


def request_fast(
    raw: bytes | str, method: str, version: str | None, exts: frozenset[str], guess: str | None
) -> Message | None:
    try:
        if version is None:
            return _self_naming_request(raw, method, exts, guess)
        validate = method_validator(version, exts, method, compile_models)
        if validate is None:
            return None
        message = validate(raw)
    except ValidationError:
        return None
    extra = message.__pydantic_extra__
    if extra and (
        ("id" in extra and "id" not in type(message).__pydantic_fields__)
        or "result" in extra
        or "error" in extra
    ):
        return None  # a notification's method with an id, or a mix of kinds: the exact path
    return message  # type: ignore[no-any-return]


_last_named: str | None = STATELESS_VERSIONS[-1] if STATELESS_VERSIONS else None
"""The version the latest self-naming request named, first the newest: the
next one most likely names the same. It orders the attempts, nothing more."""


def _self_naming_request(
    raw: bytes | str, method: str, exts: frozenset[str], guess: str | None
) -> Message | None:
    """A stateless-era request that names its version in ``params._meta``.

    Validated in the guessed version (else the one the latest such request
    named) first and, when it names another stateless-era version, again in
    that one: no parse is spent on finding the version, and steady traffic
    in one version validates once. Messages
    naming no stateless-era version are handshake-era traffic: the exact path.
    """
    global _last_named
    first = guess if guess in STATELESS else _last_named
    if first is None:
        return None  # no stateless-era version is compiled
    validate = method_validator(first, exts, method, compile_models)
    if validate is None:
        return None
    message = validate(raw)
    named = named_in(message)
    if named != first:
        if not isinstance(named, str) or named not in STATELESS:
            return None
        validate = method_validator(named, exts, method, compile_models)
        if validate is None:
            return None
        message = validate(raw)
        if named_in(message) != named:
            return None
        _last_named = named
    # The dunder attribute behind model_fields_set: the public accessor costs
    # a measurable share of a small message.
    if "id" not in message.__pydantic_fields_set__:
        return None
    return message  # type: ignore[no-any-return]
