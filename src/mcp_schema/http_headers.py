"""MCP Streamable HTTP request headers, MCP 2026-07-28 (hand-written runtime module).

Every POST repeats parts of its JSON-RPC body in headers so that proxies and load
balancers can route without parsing the body:

* ``MCP-Protocol-Version``: ``params._meta["io.modelcontextprotocol/protocolVersion"]``
  (omitted when the body has none);
* ``Mcp-Method``: the body's ``method``;
* ``Mcp-Name``: ``params.name`` for ``tools/call`` and ``prompts/get``, ``params.uri``
  for ``resources/read``, ``params.taskId`` for the Tasks extension's ``tasks/get``,
  ``tasks/update`` and ``tasks/cancel``;
* ``Mcp-Param-<Name>``: each ``tools/call`` argument whose property in the tool's
  ``inputSchema`` is annotated ``"x-mcp-header": "<Name>"`` (omitted when the argument is
  absent or null).

Values that are not plain header-safe ASCII are sent as ``=?base64?<base64 of UTF-8>?=``;
the same rule is applied to every header above so one decoder serves all of them.

A client builds the headers with `request_headers`; a server checks them with
`check_request_headers`, which raises `mcp_schema.errors.HeaderMismatchError`
(-32020) whose ``data`` is always (header text escaped onto one line and cut to
`mcp_schema.errors.MAX_QUOTED` characters, as `mcp_schema.errors.clip` does)::

    {"header": "Mcp-Name",      # canonical name of the offending header
     "reason": "mismatch",      # "missing" | "unexpected" | "invalid" | "mismatch"
     "expected": "get_weather", # the body's value as header text; null if the body has none
     "received": "get_time"}    # decoded header value; the raw value for "invalid";
                                # null for "missing"

``unexpected`` means a ``Mcp-Param-*`` header was sent for an argument that the body leaves
absent or null. Requests and tools are plain mappings (the wire JSON) or pydantic models.
A body that is not a request at all (no ``method``, no ``params.name`` for ``tools/call``)
raises ``ValueError`` on both sides: validate the body before checking its headers.

Received headers are a ``str`` mapping or the raw ``(name, value)`` byte pairs an ASGI
server holds (``scope["headers"]``); anything else is a ``TypeError``. A tool's
annotations are read once into a `ToolHeaders`, which every function taking a ``tool``
also accepts: a server keeps one per tool instead of walking its ``inputSchema`` on each
request. The walk is linear in the schema's size and refuses schemas nested deeper than
`MAX_SCHEMA_DEPTH` (or cyclic ones) with `InvalidToolHeaderError`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple, Union

from pydantic import BaseModel

from mcp_schema._args import check
from mcp_schema._memo import kept
from mcp_schema.errors import HeaderMismatchError, clip
from mcp_schema.tool_headers import (
    MAX_SCHEMA_DEPTH,
    InvalidToolHeaderError,
    ToolHeaders,
    as_mapping,
    tool_headers,
    validate_tool_headers,
)
from mcp_schema.versions import PROTOCOL_VERSION_KEY

__all__ = [
    "MAX_SCHEMA_DEPTH",
    "Headers",
    "InvalidToolHeaderError",
    "ToolHeaders",
    "check_request_headers",
    "check_version_header",
    "decode_header_value",
    "encode_header_value",
    "received_headers",
    "request_headers",
    "validate_tool_headers",
]

_VERSION_HEADER = "MCP-Protocol-Version"
_METHOD_HEADER = "Mcp-Method"
_NAME_HEADER = "Mcp-Name"
# The names as received headers hold them (`received_headers`: lower-case).
_VERSION_KEY = _VERSION_HEADER.lower()
_METHOD_KEY = _METHOD_HEADER.lower()
_NAME_KEY = _NAME_HEADER.lower()
_NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# The Tasks extension routes its requests by task ("Streamable HTTP: Routing Headers").
_NAME_FIELDS.update(dict.fromkeys(("tasks/get", "tasks/update", "tasks/cancel"), "taskId"))

_PREFIX, _SUFFIX = "=?base64?", "?="
_SAFE_CHARS = frozenset("\t" + "".join(map(chr, range(0x20, 0x7F))))
# JSON number grammar; Decimal() alone would also take "NaN", " 42" and "4_2".
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")

Headers = Union[Mapping[str, str], Iterable[tuple[Union[str, bytes], Union[str, bytes]]]]
"""Received headers: a mapping of names to values, or (name, value) pairs as
str or as the raw bytes an ASGI server holds."""


# -- value encoding --------------------------------------------------------------------------


def _is_plain(value: str) -> bool:
    # Printable ASCII (0x20-0x7E) is told in C; only a value with another
    # character (a tab, or one that must be encoded) is walked.
    safe = (str.isascii(value) and str.isprintable(value)) or all(c in _SAFE_CHARS for c in value)
    # HTTP strips leading/trailing whitespace from field values, so it would not survive.
    return safe and value == value.strip(" \t")


def _looks_encoded(value: str) -> bool:
    return value.startswith(_PREFIX) and value.endswith(_SUFFIX)


def encode_header_value(value: str) -> str:
    """``value`` as sent in a header: unchanged if plain, else ``=?base64?...?=``.

    A plain value that merely looks encoded is encoded too, or the receiver would decode it.
    Raises ``UnicodeEncodeError`` (a ``ValueError``) for lone surrogates, which UTF-8 cannot
    carry.
    """
    if _is_plain(value) and not _looks_encoded(value):
        return value
    payload = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{_PREFIX}{payload}{_SUFFIX}"


def decode_header_value(value: str) -> str:
    """The original text of a received header value (inverse of `encode_header_value`).

    Raises `HeaderMismatchError` with ``data={"reason": "invalid", "received": value}``
    for characters that must have been encoded, or a malformed ``=?base64?...?=`` payload;
    ``TypeError`` when ``value`` is not a ``str``.
    """
    if not isinstance(value, str):
        raise TypeError(f"a header value must be a str, not {type(value).__name__}")
    if _looks_encoded(value):
        payload = value[len(_PREFIX) : -len(_SUFFIX)]
        try:
            # "=?base64?=" matches both markers but has no room for a payload.
            if len(value) < len(_PREFIX) + len(_SUFFIX):
                raise ValueError("markers overlap")
            return base64.b64decode(payload, validate=True).decode("utf-8")
        except ValueError as exc:  # binascii.Error and UnicodeDecodeError are ValueErrors
            raise HeaderMismatchError(
                f"malformed base64 header value: {exc}",
                {"reason": "invalid", "received": clip(value)},
            ) from None
    if not _is_plain(value):
        raise HeaderMismatchError(
            "header value has characters that must be base64-encoded",
            {"reason": "invalid", "received": clip(value)},
        )
    return value


# -- requests --------------------------------------------------------------------------------


class _Expected(NamedTuple):
    header: str
    value: Any  # the body value the header mirrors; None: the header must be absent
    integer: bool  # compare numerically
    key: str  # the header's name as received headers hold it (lower-case)


def _require_str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, not {value!r}")
    return value


def _argument(arguments: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        if not isinstance(arguments, Mapping):
            return None
        arguments = arguments.get(name)
    return arguments


def _expected_headers(
    request: Mapping[str, Any] | BaseModel,
    tool: Mapping[str, Any] | BaseModel | ToolHeaders | None,
) -> list[_Expected]:
    message = request if type(request) is dict else as_mapping(request, "request")
    method = _require_str(message.get("method"), "the request's 'method'")
    params = message.get("params")
    params = {} if params is None else params
    if not isinstance(params, Mapping):
        raise ValueError(f"the request's 'params' must be an object, not {params!r}")

    expected: list[_Expected] = []
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, Mapping) else None
    if version is not None:
        version = _require_str(version, f"params._meta[{PROTOCOL_VERSION_KEY!r}]")
        expected.append(_Expected(_VERSION_HEADER, version, False, _VERSION_KEY))
    expected.append(_Expected(_METHOD_HEADER, method, False, _METHOD_KEY))
    field = _NAME_FIELDS.get(method)
    if field is not None:
        name = _require_str(params.get(field), f"params.{field}")
        expected.append(_Expected(_NAME_HEADER, name, False, _NAME_KEY))

    if tool is not None:
        compiled = tool_headers(tool)  # validates even if unused below
        if method == "tools/call":
            # Mirroring another tool's annotations would send the wrong headers.
            if compiled.name != params.get("name"):
                raise ValueError(
                    f"tool {clip(repr(compiled.name))} is not the one called "
                    f"({clip(repr(params.get('name')))})"
                )
            arguments = params.get("arguments")
            for p in compiled._params:
                expected.append(
                    _Expected(
                        p.header,
                        _argument(arguments, p.path),
                        p.type == "integer",
                        p.header.lower(),
                    )
                )
    return expected


def _header_text(value: Any) -> str | None:
    if type(value) is str:  # most values a header mirrors: a method, a name
        return value
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # JSON does not distinguish 42 from 42.0; an integer parameter may arrive as either.
        return str(int(value)) if value.is_integer() else repr(value)
    return None


def request_headers(
    request: Mapping[str, Any] | BaseModel,
    tool: Mapping[str, Any] | BaseModel | ToolHeaders | None = None,
) -> dict[str, str]:
    """The MCP headers a client sends with ``request`` (a request or notification).

    Pass the called ``tool`` (its definition) to add ``Mcp-Param-*`` headers; it is checked
    with `validate_tool_headers` first. Raises ``ValueError`` for a malformed body or
    an argument that cannot be a header (an object or array).
    """
    headers: dict[str, str] = {}
    for exp in _expected_headers(request, tool):
        if exp.value is None:
            continue
        text = _header_text(exp.value)
        if text is None:
            raise ValueError(f"{clip(repr(exp.value))} cannot be sent as the {exp.header} header")
        headers[exp.header] = encode_header_value(text)
    return headers


def _matches(exp: _Expected, text: str) -> bool:
    value = exp.value
    if exp.integer and isinstance(value, (int, float)) and not isinstance(value, bool):
        if _JSON_NUMBER.fullmatch(text) is None:
            return False
        try:
            return Decimal(text) == Decimal(value)
        except (ArithmeticError, ValueError):
            # An exponent beyond what Decimal can hold (1e9999999999999999999):
            # no argument of a JSON body is that number.
            return False
    return text == _header_text(value)


_MESSAGES = {
    "missing": "is required but missing",
    "unexpected": "is present but the request body has no value for it",
    "invalid": "has an invalid value",
    "mismatch": "does not match the request body",
}


def _error(
    header: str, reason: str, expected: str | None, received: str | None, detail: str = ""
) -> HeaderMismatchError:
    message = f"{header} header {_MESSAGES[reason]}{detail}"
    # Both values may be a peer's text: escaped onto one line and cut, like any
    # quoted text, so the error can always be written back (and read).
    data = {
        "header": header,
        "reason": reason,
        "expected": None if expected is None else clip(expected),
        "received": None if received is None else clip(received),
    }
    return HeaderMismatchError(message, data)


def _header_str(text: object, what: str) -> str:
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray)):
        return bytes(text).decode("latin-1")  # HTTP field bytes; non-ASCII is then "invalid"
    raise TypeError(f"a header {what} must be str or bytes, not {type(text).__name__}")


class Received(dict[str, str]):
    """Headers as `received_headers` gives them (lower-case names, str values), which it
    takes back as they are: read once at the edge, passed on to every reader unchecked."""

    __slots__ = ()


def received_headers(headers: Headers) -> dict[str, str]:
    """``headers`` as one ``{lower-case name: value}`` dict.

    Repeated field lines (or names differing only in case) mean the same as one line
    joined with ", " (RFC 9110 5.3); joining keeps us from trusting a different line than
    a proxy did.
    """
    if type(headers) is Received:
        return headers
    if type(headers) is dict and all(
        type(name) is str and type(value) is str and name == name.lower()
        for name, value in headers.items()
    ):
        return headers  # as this function returns them: a reader passes them on
    if type(headers) is list:  # an ASGI server's (bytes, bytes) pairs: the per-request path
        named = Received()  # written in place: no comprehension's call, no copy of it
        try:
            # Pairs of exact bytes (a subclass's decode, or hash, is never
            # called); at any other pair the walk below reads them all.
            for n, v in headers:
                if type(n) is not bytes or type(v) is not bytes:
                    break
                name = _NAMES.get(n) or kept(_NAMES, n, n.decode("latin-1").lower())
                named[name] = v.decode("latin-1")
            else:
                if len(named) == len(headers):  # no name repeated: nothing to join
                    return named
        except (TypeError, ValueError):
            pass  # not all pairs: the walk below says what is wrong
    if isinstance(headers, Mapping):
        items: Iterable[Any] = headers.items()
    elif isinstance(headers, (str, bytes, bytearray)) or not isinstance(headers, Iterable):
        raise TypeError(
            "headers must be a mapping or (name, value) pairs, not " + type(headers).__name__
        )
    else:
        items = headers
    joined = Received()
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"a header must be a (name, value) pair, not {type(item).__name__}")
        name, value = item
        # An ASGI server's (bytes, bytes) pairs decoded inline: the per-request path.
        key = name.decode("latin-1") if type(name) is bytes else _header_str(name, "name")
        text = value.decode("latin-1") if type(value) is bytes else _header_str(value, "value")
        key = key.lower()
        joined[key] = text if key not in joined else f"{joined[key]}, {text}"
    return joined


_NAMES: dict[bytes, str] = {}
"""Each header name `received_headers` read, as sent, and its lower-case text:
every request brings the same names, each told by one look-up after the first
(no decode, no lower); `mcp_schema._memo`'s bounds, as `_AS_ITSELF`'s."""


def check_request_headers(
    headers: Headers,
    request: Mapping[str, Any] | BaseModel,
    tool: Mapping[str, Any] | BaseModel | ToolHeaders | None = None,
    *,
    required: bool = True,
) -> None:
    """Server side: raise `HeaderMismatchError` unless ``headers`` agree with the body.

    Header names match case-insensitively, values case-sensitively (after decoding);
    integer parameters match numerically. Headers this module does not define are ignored.
    With ``required=False`` (handshake-era traffic, which need not mirror the body) a
    missing header is accepted, but one that is present must still agree.
    """
    check(required, bool, "required")
    _check_received(received_headers(headers), as_mapping(request, "request"), tool, required)


def _check_received(
    received: Mapping[str, str],
    message: Mapping[str, Any],
    tool: Mapping[str, Any] | BaseModel | ToolHeaders | None,
    required: bool,
) -> None:
    """`check_request_headers` of headers `received_headers` gave and a wire
    ``message``: the codec's entry, whose reader normalized both once already."""
    if type(message) is dict and _adds_none(tool, message) and _mirrored(received, message):
        return
    try:
        _check_expected(received, _expected_headers(message, tool), required)
    except HeaderMismatchError as err:
        rid = message.get("id")  # the error answers the request it refuses
        err.request_id = rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
        raise


def _adds_none(tool: object, message: dict[str, Any]) -> bool:
    """Whether ``tool`` adds no header to those ``message`` mirrors: none given,
    or one read already (a `ToolHeaders`) without ``Mcp-Param-*`` headers, that
    of the tool called (another's is the full check's error to tell)."""
    if tool is None:
        return True
    if type(tool) is not ToolHeaders or tool._params:
        return False
    params = message.get("params")
    called = params.get("name") if type(params) is dict else None
    return message.get("method") != "tools/call" or called == tool.name


def _mirrored(received: Mapping[str, str], message: dict[str, Any]) -> bool:
    """Whether ``received`` holds each header a plain ``message`` mirrors
    (`_expected_headers` without a tool) as the body's own plain text: the
    common case, told without building the list. False leaves the verdict,
    and what an error says, to the full check."""
    method, params = message.get("method"), message.get("params")
    if type(method) is not str or type(params) is not dict:
        return False
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
    if version is not None and not _sent_as(received.get(_VERSION_KEY), version):
        return False
    if not _sent_as(received.get(_METHOD_KEY), method):
        return False
    field = _NAME_FIELDS.get(method)
    return field is None or _sent_as(received.get(_NAME_KEY), params.get(field))


def _sent_as(raw: str | None, value: object) -> bool:
    """Whether a header holds ``value``, a string, as it is (it decodes to itself)."""
    if type(raw) is not str or type(value) is not str or raw != value:
        return False
    if raw in _AS_ITSELF:
        return True
    if not _is_plain(raw) or _looks_encoded(raw):
        return False
    return kept(_AS_ITSELF, raw, True)


_AS_ITSELF: dict[str, bool] = {}
"""Texts `_sent_as` found sent as they are: the same versions, methods and
names come with every request, each told by one look-up after the first."""


def _check_expected(received: Mapping[str, str], expected: list[_Expected], required: bool) -> None:
    for exp in expected:
        raw = received.get(exp.key)
        if type(raw) is str and raw == exp.value and _is_plain(raw) and not _looks_encoded(raw):
            continue  # the body's text, sent as it is (it decodes to itself): the common case
        if raw is None:
            if exp.value is not None and required:
                raise _error(exp.header, "missing", _expected_text(exp), None)
            continue
        try:
            text = decode_header_value(raw)
        except HeaderMismatchError as exc:
            raise _error(
                exp.header, "invalid", _expected_text(exp), raw, f": {exc.message}"
            ) from None
        if exp.value is None:
            raise _error(exp.header, "unexpected", None, text)
        if not _matches(exp, text):
            raise _error(exp.header, "mismatch", _expected_text(exp), text)


def _expected_text(exp: _Expected) -> str | None:
    """What an error says was expected: the body's value as header text."""
    return None if exp.value is None else _header_text(exp.value)


def check_version_header(headers: Headers, version: str) -> None:
    """Raise `HeaderMismatchError` when an ``MCP-Protocol-Version`` header names another
    version than ``version`` (the one the message is read in); no header is fine."""
    _check_received_version(received_headers(headers), version)


def _check_received_version(received: Mapping[str, str], version: str) -> None:
    """`check_version_header` of headers `received_headers` gave."""
    raw = received.get(_VERSION_KEY)
    if raw is None:
        return
    try:
        text = decode_header_value(raw)
    except HeaderMismatchError as exc:
        raise _error(_VERSION_HEADER, "invalid", version, raw, f": {exc.message}") from None
    if text != version:
        raise _error(_VERSION_HEADER, "mismatch", version, text)
