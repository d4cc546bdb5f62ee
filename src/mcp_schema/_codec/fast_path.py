"""The fast path: one validation straight from the bytes, with no sniffing
parse, for the messages that make up real traffic.

It answers only when the exact path would give the same message; anything
else (invalid input included) returns None and is decoded, and its error
classified, by the exact path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter, ValidationError

from mcp_schema._codec.dispatch import (
    STATELESS,
    SUPPORTED,
    error_response,
    result_response,
    tables,
)
from mcp_schema._codec.messages import Message
from mcp_schema._codec.options import DecodeOptions
from mcp_schema.versions import DEFAULT_VERSION, STATELESS_VERSIONS


@functools.cache
def _messages_validator(version: str, exts: frozenset[str]) -> Callable[[bytes | str], Any]:
    """Every request and notification class of a version, told apart by ``method``."""
    requests, notifications = tables(version, exts)
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
    result = result_response(version, method, exts, assume_complete)
    either: Any = Annotated[
        Union[result, error_response(version)], Field(union_mode="left_to_right")
    ]
    return TypeAdapter(either).validator.validate_json


def mentions_method(raw: bytes | str) -> bool:
    # A cheap look at the head of the message, not a parse: either answer may
    # be wrong (a "method" member far down, the word inside a response), and
    # a wrong one only sends the message on to the exact path.
    head = raw[:_HEAD]
    return b'"method"' in head if isinstance(head, bytes) else '"method"' in head


_HEAD = 4096


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
    if mentions_method(raw):
        message = _request_fast(raw, version, options.extensions, guess)
        if message is not None:
            return message
    if method is None:
        return None  # a response nobody named the method of: the exact path
    validate = _response_validator(
        version or DEFAULT_VERSION, method, options.extensions, options.assume_complete
    )
    try:
        message = validate(raw)
    except ValidationError:
        return None
    extra = message.__pydantic_extra__
    if extra and ("method" in extra or "error" in extra or "result" in extra):
        return None  # the exact path classifies such a message differently
    return message  # type: ignore[no-any-return]


def _request_fast(
    raw: bytes | str, version: str | None, exts: frozenset[str], guess: str | None
) -> Message | None:
    try:
        if version is None:
            return _self_naming_request(raw, exts, guess)
        message = _messages_validator(version, exts)(raw)
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
    raw: bytes | str, exts: frozenset[str], guess: str | None
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
    message = _messages_validator(first, exts)(raw)
    named = named_in(message)
    if named != first:
        if not isinstance(named, str) or named not in STATELESS:
            return None
        message = _messages_validator(named, exts)(raw)
        if named_in(message) != named:
            return None
        _last_named = named
    # The dunder attribute behind model_fields_set: the public accessor costs
    # a measurable share of a small message.
    if "id" not in message.__pydantic_fields_set__:
        return None
    return message  # type: ignore[no-any-return]
