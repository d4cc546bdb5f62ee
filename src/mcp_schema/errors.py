"""Typed JSON-RPC / MCP protocol errors (hand-written runtime module).

Every failure the codec reports is an `McpError` subclass carrying the
JSON-RPC ``code``, a human ``message`` and optional structured ``data``, so a
server can answer any bad input with ``err.to_response(request_id)``.

These are *exceptions*; a version package's ``ERROR_MODELS[code]`` is the
generated model of the JSON-RPC ``error`` member for the same code, and the
generated model named like the exception is its wire shape. That model is
either the ``error`` object itself (2026-07-28 ``ParseError``) or a whole error
response whose ``error`` member is ``<Name>Object`` (``HeaderMismatchError``
and ``HeaderMismatchErrorObject``); a code the schema gives no model of its own
maps to the generic ``Error``. `McpError.from_error_object` bridges the two.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from mcp_schema._text import MAX_MESSAGE, MAX_QUOTED, clip, quote

__all__ = [
    "ERROR_CLASSES",
    "MAX_ERRORS",
    "MAX_MESSAGE",
    "MAX_QUOTED",
    "MAX_RESPONSE_BYTES",
    "BadGatewayError",
    "GatewayTimeoutError",
    "HeaderMismatchError",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "McpError",
    "MethodNotFoundError",
    "MissingRequiredClientCapabilityError",
    "ParseError",
    "URLElicitationRequiredError",
    "UnavailableError",
    "UnsupportedProtocolVersionError",
    "clip",
    "error_list",
    "quote",
]

MAX_ERRORS = 20
"""Entries kept in an ``{"errors": [...]}`` list; ``"total"`` then counts them all."""

MAX_RESPONSE_BYTES = 65536
"""Upper bound of `McpError.to_response` as UTF-8 JSON; larger ``data`` is replaced."""


def error_list(errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"errors": [...]}`` data with at most `MAX_ERRORS` entries (``"total"`` when cut).

    String members of each entry (a path may hold a peer's member names) are cut
    to `MAX_QUOTED` characters and escaped like `quote`.
    """
    kept = [
        {key: clip(item, MAX_QUOTED) if isinstance(item, str) else item for key, item in e.items()}
        for e in errors[:MAX_ERRORS]
    ]
    if len(errors) > MAX_ERRORS:
        return {"errors": kept, "total": len(errors)}
    return {"errors": kept}


class _Decoded(enum.Enum):
    ID = enum.auto()


class McpError(Exception):
    """Base of every protocol error: a JSON-RPC error object as an exception.

    ``decode`` sets ``request_id`` (the id of the message it could not decode,
    ``None`` when that is unreadable) and ``answerable`` (``False`` for a
    notification or a response, which must not be answered), so
    ``err.to_response()`` is the answer, when ``err.answerable``.
    """

    code: int = -32603
    default_message: ClassVar[str] = "Internal error"
    http_status: ClassVar[int | None] = None
    """The HTTP status an answer of this error alone calls for in either era
    (`mcp_schema.http.rules.code_status`); None: the code's own rule."""
    request_id: str | int | None = None
    answerable: bool = True

    def __init__(
        self, message: str | None = None, data: Any = None, *, code: int | None = None
    ) -> None:
        if message is not None and not isinstance(message, str):
            raise TypeError(f"message must be a string or None, not {type(message).__name__}")
        if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
            raise TypeError(f"code must be an integer or None, not {type(code).__name__}")
        # The message is often built from peer text: one line, bounded, always.
        self.message = clip(message if message is not None else self.default_message, MAX_MESSAGE)
        self.data = data
        if code is not None:
            # An instance may carry a code that has no subclass of its own
            # (server-defined errors); the class attribute stays the default.
            self.code = code
        super().__init__(self.message)

    def to_error_object(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member; ``data`` only when there is some.

        The whole response stays under `MAX_RESPONSE_BYTES`: ``data`` too large
        for that (or not JSON at all) is replaced by ``{"truncated": true}``.
        """
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data if _fits(self.data) else {"truncated": True}
        return error

    def to_response(
        self, id: str | int | Literal[_Decoded.ID] | None = _Decoded.ID
    ) -> dict[str, Any]:
        """A complete JSON-RPC error response (``id`` is null when unknown).

        Without ``id``, the ``request_id`` that ``decode`` found. The response
        is a dict, which `mcp_schema.codec.encode` also takes.
        """
        if id is not _Decoded.ID and id is not None:
            if not isinstance(id, (str, int)) or isinstance(id, bool):
                raise TypeError(f"id must be a string, an integer or None, not {type(id).__name__}")
        answered = self.request_id if id is _Decoded.ID else id
        return {"jsonrpc": "2.0", "id": answered, "error": self.to_error_object()}

    @staticmethod
    def from_error_object(error: Mapping[str, Any]) -> McpError:
        """The typed exception for a received ``error`` member (any code)."""
        if not isinstance(error, Mapping):
            raise TypeError(f"error must be a mapping, not {type(error).__name__}")
        code = error.get("code")
        message = error.get("message")
        cls = ERROR_CLASSES.get(code) if isinstance(code, int) else None
        if cls is None:
            return McpError(
                message if isinstance(message, str) else None,
                error.get("data"),
                code=code if isinstance(code, int) else McpError.code,
            )
        return cls(message if isinstance(message, str) else None, error.get("data"))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code}, message={self.message!r}, data={self.data!r})"
        )


def _fits(data: Any) -> bool:
    # The envelope, code and a MAX_MESSAGE-character message (4 bytes per
    # character at worst, escapes included) take well under 8 KB.
    # Exact JSON only, as `mcp_schema.codec.encode` writes it (no int keys, no
    # sets, no lone surrogates): the response must always be writable.
    from mcp_schema._exact import is_json  # pydantic: not loaded by `import mcp_schema`

    try:
        if not is_json(data, 0, False):
            return False
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        return len(text.encode("utf-8")) <= MAX_RESPONSE_BYTES - 8192
    except (TypeError, ValueError, RecursionError):  # a lone surrogate is a ValueError
        return False


class ParseError(McpError):
    """-32700: the bytes are not JSON (or not UTF-8)."""

    code = -32700
    default_message = "Parse error"


class InvalidRequestError(McpError):
    """-32600: JSON, but not a valid JSON-RPC 2.0 message."""

    code = -32600
    default_message = "Invalid Request"


class MethodNotFoundError(McpError):
    """-32601: the method does not exist in the negotiated protocol version."""

    code = -32601
    default_message = "Method not found"


class InvalidParamsError(McpError):
    """-32602: ``params`` (or a ``result``) fails the schema.

    ``data`` is ``{"errors": [{"path": "$.params.name", "reason": ...}, ...]}``.
    """

    code = -32602
    default_message = "Invalid params"

    @property
    def errors(self) -> list[dict[str, Any]]:
        data = self.data
        if isinstance(data, Mapping) and isinstance(data.get("errors"), list):
            return list(data["errors"])
        return []


class InternalError(McpError):
    """-32603: the peer failed internally."""

    code = -32603
    default_message = "Internal error"


class UnavailableError(InternalError):
    """-32603: a shared piece the server needs (its broker, its task store)
    failed or did not answer in time, so the request was not served and may
    be sent again later. Over HTTP it is answered 503, in either era
    (`mcp_schema.http.rules.code_status`); on the wire it is an internal
    error, whose ``from_error_object`` is an `InternalError`."""

    http_status = 503


class BadGatewayError(InternalError):
    """-32603: the server a gateway or bridge carries a request to failed it
    (its process exited, it never initialized, its answer cannot be carried).
    Over HTTP it is answered 502, in either era, as a forwarded request's
    failure is; on the wire it is an internal error."""

    http_status = 502


class GatewayTimeoutError(InternalError):
    """-32603: what a gateway, a bridge or a replica forwarding a request
    waited for (the server it carries the request to, the replica holding
    the session) did not answer within its bound. Over HTTP it is answered
    504, in either era; on the wire it is an internal error."""

    default_message = "Gateway timeout"
    http_status = 504


class HeaderMismatchError(McpError):
    """-32020: Streamable HTTP headers are missing, invalid or disagree with the body."""

    code = -32020
    default_message = "Header mismatch"


class MissingRequiredClientCapabilityError(McpError):
    """-32021: the request needs client capabilities it did not declare."""

    code = -32021
    default_message = "Missing required client capability"

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        required_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        if required_capabilities is not None:
            data = {"requiredCapabilities": dict(required_capabilities)}
        super().__init__(message, data)


class UnsupportedProtocolVersionError(McpError):
    """-32022: the requested protocol version is not supported here."""

    code = -32022
    default_message = "Unsupported protocol version"

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        requested: str | None = None,
        supported: Sequence[str] | None = None,
    ) -> None:
        if requested is not None or supported is not None:
            data = {
                "requested": requested if requested is not None else "",
                "supported": list(supported or ()),
            }
        super().__init__(message, data)


class URLElicitationRequiredError(McpError):
    """-32042 (2025-11-25): the server needs URL-mode elicitations first."""

    code = -32042
    default_message = "URL elicitation required"


ERROR_CLASSES: dict[int, type[McpError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequestError,
        MethodNotFoundError,
        InvalidParamsError,
        InternalError,
        HeaderMismatchError,
        MissingRequiredClientCapabilityError,
        UnsupportedProtocolVersionError,
        URLElicitationRequiredError,
    )
}
