"""The typed JSON-RPC response envelopes and the four kinds of message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Literal, Protocol, TypeVar, Union

from pydantic import BaseModel, SerializeAsAny, StrictStr, with_config
from typing_extensions import NotRequired, TypedDict, TypeIs

from mcp_schema.base import OPEN_DICT, JsonInt, McpModel, Preset
from mcp_schema.errors import McpError

R = TypeVar("R")
E = TypeVar("E")

RequestId = Union[StrictStr, JsonInt]
"""Requests and responses follow one id rule: a string or an integer (see `JsonInt`)."""

RequestIdValue = Union[str, int]
"""A request id once read."""

Kind = Literal["request", "notification", "result", "error"]


class ResultResponse(McpModel, Generic[R]):
    """A JSON-RPC result response whose ``result`` is typed by the method it answers.

    ``result`` is written whole, whatever ``R`` says: a
    ``ResultResponse[Result]`` holding a ``CallToolResult`` writes the
    ``CallToolResult``.
    """

    jsonrpc: Literal["2.0"] = Preset("2.0")
    id: RequestId
    result: SerializeAsAny[R]


class ErrorResponse(McpModel, Generic[E]):
    """A JSON-RPC error response whose ``error`` is typed by its code.

    ``id`` is null when the request's id could not be read (JSON-RPC 2.0).
    """

    jsonrpc: Literal["2.0"] = Preset("2.0")
    id: RequestId | None = None
    error: SerializeAsAny[E]

    def exception(self) -> McpError:
        """The error as a raisable `McpError` of the matching subclass."""
        error = self.error
        dumped = error.model_dump(mode="json") if isinstance(error, BaseModel) else error
        return McpError.from_error_object(dumped if isinstance(dumped, Mapping) else {})


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


Message = McpModel
"""Any decoded message: a version's request or notification class, a
``ResultResponse`` or an ``ErrorResponse``."""


def message_kind(message: BaseModel) -> Kind:
    if not isinstance(message, BaseModel):
        raise TypeError(f"message must be a decoded message model, not {type(message).__name__}")
    if isinstance(message, ErrorResponse):
        return "error"
    if isinstance(message, ResultResponse):
        return "result"
    # The dunder behind model_fields_set: the public accessor costs more.
    return "request" if "id" in message.__pydantic_fields_set__ else "notification"


class RequestMessage(Protocol):
    """What every decoded request has, whatever its method and version."""

    @property
    def id(self) -> str | int: ...

    @property
    def method(self) -> str: ...


class NotificationMessage(Protocol):
    """What every decoded notification has."""

    @property
    def method(self) -> str: ...


def is_request(message: object) -> TypeIs[RequestMessage]:
    """Whether a decoded message is a request: narrows it to one with an ``id``
    and a ``method``, so ``reply(message, ...)`` type-checks as it is."""
    return isinstance(message, BaseModel) and message_kind(message) == "request"


def is_notification(message: object) -> TypeIs[NotificationMessage]:
    """Whether a decoded message is a notification (a ``method``, no ``id``)."""
    return isinstance(message, BaseModel) and message_kind(message) == "notification"


def is_response(message: object) -> TypeIs[ResultResponse[Any] | ErrorResponse[Any]]:
    """Whether a decoded message is a response (a result or an error)."""
    return isinstance(message, (ResultResponse, ErrorResponse))
