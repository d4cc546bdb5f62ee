"""Stage 2 of decoding: the one resolver. From a parsed message and what
its reader knows (`Known`), it decides, once, what the message is: its
kind, protocol version, method and id, and the definition it must be valid
against (`Route.target`). Both views validate that same definition.

It checks the JSON-RPC envelope on the way (-32600), and refuses a version
it has no models for (-32022) and, unless asked not to, a method the version
does not have (-32601). Every error it raises says which request it answers
(`address`, which its callers apply).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from mcp_schema._codec.catalog import BY_VERSION, SUPPORTED, Catalog, catalog
from mcp_schema._codec.messages import Kind, RequestIdValue
from mcp_schema._codec.schemas import Target
from mcp_schema._codec.versioning import NULL_VERSION, read_version
from mcp_schema.base import MAX_EXACT_INTEGRAL_FLOAT
from mcp_schema.errors import InvalidRequestError, McpError, MethodNotFoundError, quote
from mcp_schema.versions import PROTOCOL_VERSION_KEY, unsupported

MAX_ID_LENGTH = 1024
"""Longest string id read as one: every error answer echoes the id, and stays
small; a request with a longer id is refused and answered with a null id."""


class Known(NamedTuple):
    """What a reader knows about a message before it is read."""

    version: str | None = None
    """The caller's version: the message is read in it, whatever it names.
    Without it `read_version` decides, from what the rest of this says."""
    negotiated: str | None = None
    """The session's version: a message naming another is refused (-32022),
    and nothing about the session changes."""
    method: str | None = None
    """For a response: the method of the request it answers."""
    extensions: frozenset[str] = frozenset()
    allow_unknown_methods: bool = False
    assume_complete: bool = False
    session: bool = False
    """Read as a session reads: before negotiation, ``initialize`` in the
    newest handshake-era version, whatever it names."""


_new = tuple.__new__
"""A `Route` built by position, without NamedTuple's own ``__new__`` (a
Python frame): one is built for every message read."""


class Route(NamedTuple):
    kind: Kind
    version: str
    method: str | None
    """A request's or notification's method; for a response, the method of
    the request it answers, when known."""
    id: RequestIdValue | None
    target: Target
    """What is validated: the whole message for a request or notification,
    the ``result`` or ``error`` member for a response."""
    fallback: Target | None = None
    """An error response whose code has a model of its own: the generic
    error object, which keeps what the code's model refuses."""


def route(value: dict[str, Any], known: Known, headers: Mapping[str, str] | None) -> Route:
    if "method" not in value or "result" in value or "error" in value:
        return _response_route(value, kind_of(value), known, headers)
    method = value["method"]
    kind: Kind = "request" if "id" in value else "notification"
    if value.get("jsonrpc") != "2.0":
        raise InvalidRequestError('Invalid Request: "jsonrpc" must be "2.0"')
    if type(method) is not str:
        raise InvalidRequestError('Invalid Request: "method" must be a string')
    rid = None
    if kind == "request":
        rid = value["id"]
        if type(rid) is not int and (type(rid) is not str or len(rid) > MAX_ID_LENGTH):
            rid = _checked_id(value, kind)
    version = known.version
    if version is None or version not in SUPPORTED:
        version = _version(known, named_version(value), method, headers)
    found = BY_VERSION.get(version) if not known.extensions else None
    if found is None:
        found = catalog(version, known.extensions)
    if kind == "notification":
        target = found.notification_targets.get(method, found.notification)
        return _new(Route, (kind, version, method, None, target, None))
    target = found.request_targets.get(method) or _unknown_request(found, method, known)
    return _new(Route, (kind, version, method, rid, target, None))


def _response_route(
    value: dict[str, Any], kind: Kind, known: Known, headers: Mapping[str, str] | None
) -> Route:
    if value.get("jsonrpc") != "2.0":
        raise InvalidRequestError('Invalid Request: "jsonrpc" must be "2.0"')
    rid = value.get("id")
    if type(rid) is not int and (type(rid) is not str or len(rid) > MAX_ID_LENGTH):
        rid = _checked_id(value, kind)
    version = known.version or known.negotiated
    if version is None or version not in SUPPORTED:
        version = _version(known, None, None, headers)
    found = BY_VERSION.get(version) if not known.extensions else None
    if found is None:
        found = catalog(version, known.extensions)
    if kind == "error":
        error = value["error"]
        code = error.get("code") if type(error) is dict else None
        own = found.error_models.get(code) if type(code) is int else None
        if own is None:
            return _new(Route, (kind, version, known.method, rid, found.error, None))
        return _new(Route, (kind, version, known.method, rid, own, found.error))
    target = _result_target(found, value["result"], known)
    return _new(Route, (kind, version, known.method, rid, target, None))


def own_answer_route(known: Known, rid: RequestIdValue, result: Any) -> Route:
    """The route of a result this side composed itself, answering a request
    it read (``known``: its version and method; ``rid``: the id the route
    read): what `route` finds for it, without checking again the envelope
    this side wrote."""
    assert known.version is not None and known.method is not None
    target = own_answer_target(known, result)
    return _new(Route, ("result", known.version, known.method, rid, target, None))


def own_answer_target(known: Known, result: Any) -> Target:
    """The target of `own_answer_route`, without the route: what a schema
    check of the result alone needs."""
    assert known.version is not None
    found = BY_VERSION.get(known.version) if not known.extensions else None
    if found is None:
        found = catalog(known.version, known.extensions)
    return _result_target(found, result, known)


def resolved_version(value: dict[str, Any], known: Known, headers: Mapping[str, str] | None) -> str:
    """The version `route` reads the message in (-32022 for one it has no models for)."""
    kind = kind_of(value)
    if kind == "request" or kind == "notification":
        return _version(known, named_version(value), value["method"], headers)
    return _version(known, None, None, headers)


def kind_of(value: Mapping[str, Any]) -> Kind:
    """What the message is, from the members present; a mix of two kinds is -32600."""
    if "method" in value:
        for answer in ("result", "error"):
            if answer in value:
                raise InvalidRequestError(
                    f'Invalid Request: a request or notification has no "{answer}" member'
                )
        return "request" if "id" in value else "notification"
    if "result" in value:
        if "error" in value:
            raise InvalidRequestError(
                'Invalid Request: a response has "result" or "error", not both'
            )
        return "result"
    if "error" in value:
        return "error"
    raise InvalidRequestError(
        "Invalid Request: neither a request, a notification nor a response "
        '(no "method", "result" or "error")'
    )


def request_id(value: Any) -> RequestIdValue | None:
    """``value`` as a request id (the one id rule), else None: a string of at
    most `MAX_ID_LENGTH` characters, or an integer. A JSON Schema integer may
    be written ``1.0``; it is read as the int below `MAX_EXACT_INTEGRAL_FLOAT`
    (the parse refuses a float id that a double rounded to an integer)."""
    kind = type(value)
    if kind is int:
        return int(value)
    if kind is str:
        return str(value) if len(value) <= MAX_ID_LENGTH else None
    if kind is float and value.is_integer() and abs(value) < MAX_EXACT_INTEGRAL_FLOAT:
        return int(value)
    return None


IdKey = tuple[type, RequestIdValue]
"""A request id as a table key: ``"1"`` and ``1`` are different ids."""


def id_key(rid: RequestIdValue) -> IdKey:
    return (type(rid), rid)


def _checked_id(value: Mapping[str, Any], kind: Kind) -> RequestIdValue | None:
    raw = value.get("id")
    rid = request_id(raw)
    if rid is not None or (kind == "error" and raw is None):
        return rid
    if type(raw) is str:
        raise InvalidRequestError(
            f'Invalid Request: "id" is longer than {MAX_ID_LENGTH:,} characters'
        )
    allowed = "a string, an integer or null" if kind == "error" else "a string or an integer"
    raise InvalidRequestError(f'Invalid Request: "id" must be {allowed}')


def named_version(value: Mapping[str, Any]) -> object:
    """The version a message names in ``params._meta``; None when it names none.

    A member that is there but null names a version too (an unsupported one).
    """
    params = value.get("params")
    if type(params) is not dict:
        return None
    meta = params.get("_meta")
    if type(meta) is not dict or PROTOCOL_VERSION_KEY not in meta:
        return None
    named = meta[PROTOCOL_VERSION_KEY]
    return NULL_VERSION if named is None else named


def _version(known: Known, named: object, method: object, headers: Mapping[str, str] | None) -> str:
    """The caller's version, else the one `read_version` decides from what
    the message names (``named``), what its reader knows and the
    ``MCP-Protocol-Version`` header; -32022 when that is not a version with models."""
    if known.version is not None:
        if known.version not in SUPPORTED:
            raise unsupported(known.version)
        return known.version
    header = headers.get("mcp-protocol-version") if headers else None
    return read_version(named, method if known.session else None, known.negotiated, None, header)


def _unknown_request(found: Catalog, method: str, known: Known) -> Target:
    if known.allow_unknown_methods:
        return found.request
    raise MethodNotFoundError(
        f"Method not found: {quote(method)}",
        {"method": quote(method)[1:-1], "version": found.version},
    )


def _result_target(found: Catalog, result: Any, known: Known) -> Target:
    """The result of the method answered (its own, or the alternative the
    result itself selects); the version's generic result when the method is
    not known."""
    results = None if known.method is None else found.results(known.method)
    if results is None:
        return found.result
    if type(result) is not dict:
        return results.complete  # validation says what is wrong with it
    if found.stateless:
        tag = result.get("resultType")
        if type(tag) is str:
            selected = results.by_result_type.get(tag)
            if selected is not None:
                return selected
        elif tag is None and "resultType" not in result and known.assume_complete:
            return results.assumed_complete or results.complete
        return results.complete
    for member, target in results.by_member:
        if member in result:
            return target
    return results.complete


def address(err: McpError, value: Mapping[str, Any]) -> None:
    """Tell ``err`` which request it answers (`McpError.request_id`) and whether
    it is to be answered at all (`McpError.answerable`).

    JSON-RPC answers a request (with a null id when its id is unreadable) and
    what is no message at all; never a notification or a response.
    """
    is_request = "method" in value and "id" in value
    is_message = is_request or not {"method", "id", "result", "error"}.isdisjoint(value)
    err.answerable = is_request or not is_message
    err.request_id = request_id(value.get("id")) if is_request else None
