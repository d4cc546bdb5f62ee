"""``reply``: the response message to a request, from its result or error."""

from __future__ import annotations

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
def reply(to: Addressee, answer: R | McpError) -> ResultResponse[R] | ErrorResponse[dict[str, Any]]:
    """The response to ``to``: a result response typed by its result, or an
    error response carrying the error object of an `McpError`."""
    rid = to if to is None or isinstance(to, (str, int)) else to.id
    if isinstance(answer, McpError):
        return ErrorResponse[dict[str, Any]](id=rid, error=answer.to_error_object())
    if rid is None:
        raise TypeError("a result answers a request, whose id is a string or an integer")
    return ResultResponse(id=rid, result=answer)
