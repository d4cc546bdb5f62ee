"""Stage 3 of decoding: validation, in one of two views of the same route.

* `MODELS` validates the route's target with its generated pydantic class
  and returns models (a response is wrapped in `ResultResponse` or
  `ErrorResponse`);
* `DICTS` validates it with the generated JSON Schema (jsonschema-rs) and
  returns the parsed value itself, so it is lossless by construction.

Both validate the same definition, and a message either refuses is
explained by the same bounded walk (`explain.invalid`), so they raise the
same errors. Pydantic records every failed union arm of an invalid input,
which for a large message costs hundreds of times its size: past `GATE`
bytes the model view asks the JSON Schema first and never hands pydantic an
invalid message.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

from pydantic import BaseModel, TypeAdapter, ValidationError

from mcp_schema._codec.builds import built_once
from mcp_schema._codec.explain import invalid
from mcp_schema._codec.messages import ErrorResponse, ResultResponse
from mcp_schema._codec.route import Route
from mcp_schema._codec.schemas import Target, validator

GATE = 16 * 1024
"""Above this many bytes the model view checks the JSON Schema before pydantic."""

_ENVELOPE = {
    "result": frozenset(("jsonrpc", "id", "result")),
    "error": frozenset(("jsonrpc", "id", "error")),
}


class View(NamedTuple):
    """How a routed message is validated and what is returned for it."""

    name: str
    message: Callable[[Route, dict[str, Any], int], Any]
    """(route, parsed message, its size in bytes) -> the decoded message."""


def _payload(route: Route, value: dict[str, Any]) -> tuple[Any, str, str]:
    """What the route's target validates, where it sits, and what it is called."""
    if route.kind == "result":
        return value["result"], "$.result", "result"
    if route.kind == "error":
        return value["error"], "$.error", "params"
    return value, "$", "params"


def _refused(route: Route, value: dict[str, Any]) -> Exception:
    # An error response is told against the generic error object: what the
    # code's own model wants beyond it is not required of a peer.
    instance, path, what = _payload(route, value)
    return invalid(route.fallback or route.target, instance, path, what)


def _schema_accepts(route: Route, instance: Any) -> bool:
    if validator(route.target).is_valid(instance):
        return True
    return route.fallback is not None and validator(route.fallback).is_valid(instance)


# -- the dict view -----------------------------------------------------------------


def _dict_message(route: Route, value: dict[str, Any], size: int) -> dict[str, Any]:
    kind = route.kind
    instance = value if kind == "request" or kind == "notification" else value[kind]
    if validator(route.target).is_valid(instance):
        return value
    if route.fallback is not None and validator(route.fallback).is_valid(instance):
        return value
    raise _refused(route, value)


DICTS = View("dicts", _dict_message)


# -- the model view ----------------------------------------------------------------


@built_once
def model_of(target: Target) -> Any:
    """The generated class (or alias) a target names."""
    return getattr(importlib.import_module(f"{target.package}.models"), target.name)


_MODEL_VALIDATORS: dict[Target, Callable[[Any], Any]] = {}


def _model_validator(target: Target) -> Callable[[Any], Any]:
    found = _MODEL_VALIDATORS.get(target)
    if found is None:
        found = _MODEL_VALIDATORS[target] = _build_model_validator(target)
    return found


@built_once
def _build_model_validator(target: Target) -> Callable[[Any], Any]:
    found = model_of(target)
    if isinstance(found, type) and issubclass(found, BaseModel):
        return found.__pydantic_validator__.validate_python
    return TypeAdapter(found).validator.validate_python  # a union alias: no class is made


def _validated(target: Target, instance: Any) -> Any:
    """The model, or None when pydantic refuses (its error is dropped here: it
    may hold the whole input, and `explain` says what is wrong)."""
    try:
        return _model_validator(target)(instance)
    except ValidationError:
        return None


def _model_message(route: Route, value: dict[str, Any], size: int) -> Any:
    kind = route.kind
    whole = kind == "request" or kind == "notification"
    instance = value if whole else value[kind]
    if size > GATE and not _schema_accepts(route, instance):
        raise _refused(route, value)
    validate = _MODEL_VALIDATORS.get(route.target) or _model_validator(route.target)
    try:
        checked = validate(instance)
    except ValidationError:  # dropped here: it may hold the whole input
        checked = None
    if checked is None and route.fallback is not None:
        checked = _validated(route.fallback, instance)
    if checked is None:
        raise _refused(route, value)
    if whole:
        return checked
    envelope = _ENVELOPE[kind]
    if kind == "result" and len(value) == 3:
        # The route found all three members of a result's envelope: nothing else.
        extra: dict[str, Any] = {}
        given = envelope
    else:
        extra = {key: item for key, item in value.items() if key not in envelope}
        # An error response may leave its id out (the default null): it stays out.
        given = envelope.intersection(value)
    cls = ResultResponse if kind == "result" else ErrorResponse
    return _built(cls, {"jsonrpc": "2.0", "id": route.id, kind: checked}, given, extra)


# pydantic's per-instance slots, set directly (what its own validation does in Rust).
_SLOTS = BaseModel.__dict__
_SET_EXTRA = _SLOTS["__pydantic_extra__"].__set__
_SET_FIELDS_SET = _SLOTS["__pydantic_fields_set__"].__set__
_SET_PRIVATE = _SLOTS["__pydantic_private__"].__set__


def _built(
    cls: type[BaseModel], fields: dict[str, Any], given: frozenset[str], extra: dict[str, Any]
) -> Any:
    """An envelope whose members the route checked: what pydantic's own
    validation would build, without a second look at the payload."""
    message = object.__new__(cls)
    object.__setattr__(message, "__dict__", fields)
    _SET_EXTRA(message, extra)
    _SET_FIELDS_SET(message, {*given, *extra} if extra else set(given))
    _SET_PRIVATE(message, None)
    return message


MODELS = View("models", _model_message)
