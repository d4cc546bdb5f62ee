"""``reply``: the response message to a request, from its result or error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar, Union, overload

from pydantic import BaseModel

from mcp_schema._codec.messages import ErrorResponse, ResultResponse
from mcp_schema.errors import McpError

R = TypeVar("R", bound=BaseModel)


class HasId(Protocol):
    """A request: anything with a request ``id``."""

    @property
    def id(self) -> str | int: ...


Addressee = Union[HasId, str, int, None]
"""What ``reply`` answers: a request, its id, or ``None`` (an unreadable id)."""


@overload
def reply(to: Addressee, answer: McpError) -> ErrorResponse[dict[str, Any]]: ...
@overload
def reply(to: Addressee, answer: R) -> ResultResponse[R]: ...
@overload
def reply(to: Addressee, answer: Mapping[str, Any]) -> ResultResponse[dict[str, Any]]: ...
def reply(
    to: Addressee, answer: BaseModel | McpError | Mapping[str, Any]
) -> ResultResponse[Any] | ErrorResponse[dict[str, Any]]:
    """The response to ``to``: a result response typed by its result, or an
    error response carrying the error object of an `McpError`.

    ``to`` is a request (anything with a string or integer ``id``), its id, or
    ``None`` (an unreadable id, which only an error answers). A result is a
    model or a mapping (a JSON object); ``None`` or any other value is a
    ``TypeError``, as is an id that is neither a string nor an integer.
    """
    rid = _id_of(to)
    if isinstance(answer, McpError):
        return ErrorResponse[dict[str, Any]](id=rid, error=answer.to_error_object())
    if answer is None:
        raise TypeError("reply(id, None): a result is an object (a model or a mapping), not None")
    if not isinstance(answer, (BaseModel, Mapping)):
        raise TypeError(
            f"a result is a model or a mapping (a JSON object), not {type(answer).__name__}"
        )
    if rid is None:
        raise TypeError("a result answers a request, whose id is a string or an integer")
    return ResultResponse(id=rid, result=answer)


def _id_of(to: object) -> str | int | None:
    if to is None or (isinstance(to, (str, int)) and not isinstance(to, bool)):
        return to
    if isinstance(to, (bool, float, bytes, bytearray)) or not hasattr(to, "id"):
        raise TypeError(
            f"reply answers a request, a string or integer id, or None; not {type(to).__name__}"
        )
    rid: object = getattr(to, "id", None)
    if not isinstance(rid, (str, int)) or isinstance(rid, bool):
        raise TypeError(f"{type(to).__name__}.id is {type(rid).__name__}, not a string or integer")
    return rid
