"""``Correlator``: pairs the responses of one connection with the requests
they answer, so a caller that streams never names a method."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ValidationError

from mcp_schema._codec.decoding import decode_sniffed, extension_set
from mcp_schema._codec.dict_view import (
    DictMessage,
    decode_dict_sniffed,
    dict_request_fast,
    dict_response_fast,
    kind_of_dict,
    named_in_dict,
)
from mcp_schema._codec.dispatch import STATELESS, SUPPORTED, tables
from mcp_schema._codec.encoding import encode
from mcp_schema._codec.envelope import (
    Envelope,
    address,
    check_envelope,
    kind_of,
    request_id,
    sniff,
)
from mcp_schema._codec.fast_path import (
    guessed_id,
    guessed_method,
    named_in,
    request_fast,
    response_fast,
)
from mcp_schema._codec.messages import Kind, Message, message_kind
from mcp_schema._codec.options import DecodeOptions
from mcp_schema._codec.screen import as_input, screen
from mcp_schema.errors import (
    InvalidRequestError,
    McpError,
    quote,
)
from mcp_schema.http_headers import Headers, received_headers
from mcp_schema.versions import (
    DEFAULT_VERSION,
    PROTOCOL_VERSION_KEY,
    unsupported,
)

Sender = Literal["client", "server"]

MAX_PENDING = 10_000
"""Requests each peer may have in flight by default; a request beyond it is refused."""

_EITHER = "either"  # a request whose sender was neither given nor told by its method
_ALL_SPACES = ("client", "server", _EITHER)
_OTHER: dict[str, str] = {"client": "server", "server": "client"}
_VERSION_KEY_BYTES = PROTOCOL_VERSION_KEY.encode()
_CANCELLED = "notifications/cancelled"

_Key = tuple[type, Any]

_TOLD: dict[tuple[str, frozenset[str], str], str] = {}
"""The id space of each known method's requests, by version and extensions."""


class View(NamedTuple):
    """How the Correlator decodes in one view and reads what it decoded."""

    request: Callable[[bytes | str, str, str | None, frozenset[str], str | None], Any]
    """The fast path for a request or notification of a guessed method."""
    response: Callable[[bytes | str, str, str, frozenset[str], bool], Any]
    """The fast path for a response to a known method in a known version."""
    exact: Callable[[bytes | str, Envelope, DecodeOptions], Any]
    kind: Callable[[Any], Kind]
    method_and_id: Callable[[Any], tuple[str, Any]]
    named: Callable[[Any], object]
    """The version a request names in ``params._meta``."""
    cancelled_id: Callable[[Any], Any]
    """The request id a ``notifications/cancelled`` names; None for other messages."""
    negotiated: Callable[[Any], Any]
    """The protocolVersion of an ``initialize`` result."""
    id_of: Callable[[Any], Any]


def _model_cancelled(message: Message) -> Any:
    if message.__dict__.get("method") != _CANCELLED:
        return None
    return getattr(getattr(message, "params", None), "request_id", None)


MODELS = View(
    request_fast,
    response_fast,
    decode_sniffed,
    message_kind,
    lambda m: (str(m.__dict__["method"]), m.__dict__["id"]),
    named_in,
    _model_cancelled,
    lambda m: getattr(getattr(m, "result", None), "protocol_version", None),
    lambda m: m.__dict__.get("id"),
)


def _inner(message: Mapping[str, Any], outer: str, inner: str) -> Any:
    value = message.get(outer)
    return value.get(inner) if isinstance(value, dict) else None


DICTS = View(
    dict_request_fast,
    dict_response_fast,
    decode_dict_sniffed,
    kind_of_dict,
    lambda m: (m["method"], m["id"]),
    named_in_dict,
    lambda m: _inner(m, "params", "requestId") if m.get("method") == _CANCELLED else None,
    lambda m: _inner(m, "result", "protocolVersion"),
    lambda m: m.get("id"),
)


class Correlator:
    """Pairs responses with the requests they answer, for callers that stream.

    Feed it every message of one connection, in both directions. It remembers
    each request's method and version by id, in one id space per requesting
    peer (``"1"`` and ``1`` are different ids, and so are the client's id 1
    and the server's id 1), and decodes a response with them.

    ``sender`` says which peer sent a message. When it is omitted, a request's
    sender is read from its method (``tools/call`` comes from the client,
    ``roots/list`` from the server; ``ping`` could be either) and a response
    answers the one pending request with its id; when that is ambiguous (the
    same id pending for both peers) the response is refused with -32600 and
    nothing is forgotten: pass ``sender``.

    A pending request leaves only through a valid response, a
    ``notifications/cancelled`` from its sender, or `forget`. A request
    whose id is already in flight for its sender is refused (-32600) and the
    pending one kept. At most ``max_pending`` requests per peer are kept; a
    request beyond that is refused (-32600) rather than evicting one.

    The session version that messages without a ``_meta`` version are read in
    changes only through a validated request that names one (stateless era) or
    the validated ``initialize`` result (handshake era); ``version`` sets it
    up front. Headers, when given, must agree with that version (-32020), so
    the same bytes give the same message with or without them.

    A session that negotiated an older version (2024-11-05 on) is read in
    that version; ``lenient_newer`` reads its peers' newer shapes as `decode`
    does.
    """

    def __init__(
        self,
        *,
        version: str | None = None,
        extensions: Collection[str] = (),
        allow_unknown_methods: bool = False,
        assume_complete: bool = False,
        max_pending: int = MAX_PENDING,
        lenient_newer: bool = False,
    ) -> None:
        if version is not None and version not in SUPPORTED:
            raise unsupported(version)
        self.version = version
        self.extensions = extension_set(extensions)
        self.allow_unknown_methods = allow_unknown_methods
        self.assume_complete = assume_complete
        self.max_pending = max_pending
        self._pending: dict[str, dict[_Key, tuple[str, str | None]]] = {
            space: {} for space in _ALL_SPACES
        }
        self.lenient_newer = lenient_newer
        self._next_id = {"client": 1, "server": 1}

    def _options(self, version: str | None, method: str | None, headers: Any) -> DecodeOptions:
        return DecodeOptions(
            version,
            method,
            headers,
            self.extensions,
            self.allow_unknown_methods,
            self.assume_complete,
            self.lenient_newer,
        )

    def decode(
        self,
        raw: bytes | bytearray | memoryview | str,
        *,
        sender: Sender | None = None,
        headers: Headers | None = None,
    ) -> Message:
        """Decode one message of the connection and account for it (see the class)."""
        message: Message = self._decode(raw, sender, headers, MODELS)
        return message

    def decode_dict(
        self,
        raw: bytes | bytearray | memoryview | str,
        *,
        sender: Sender | None = None,
        headers: Headers | None = None,
    ) -> DictMessage:
        """`decode` in the plain-dict view (see `mcp_schema.codec.decode_dict`)."""
        message: DictMessage = self._decode(raw, sender, headers, DICTS)
        return message

    def _decode(
        self,
        raw: bytes | bytearray | memoryview | str,
        sender: Sender | None,
        headers: Headers | None,
        view: View,
    ) -> Any:
        text = raw if type(raw) is bytes else as_input(raw)
        if sender is not None and sender not in _OTHER:
            raise ValueError(f"sender must be 'client' or 'server', not {sender!r}")
        screen(text)
        received = None if headers is None else received_headers(headers)
        if received is None:
            method = guessed_method(text)
            message = (
                None if method is None else self._decode_request_fast(text, method, sender, view)
            )
            if message is None:
                message = self._decode_response_fast(text, sender, view)
            if message is not None:
                return message
        sniffed = sniff(text)
        try:
            kind = kind_of(sniffed)
            check_envelope(sniffed, kind)
        except McpError as err:
            address(err, sniffed)
            raise
        named = sniffed.named_version
        rid = request_id(sniffed.id)
        version: str | None = None if named is not None else self.version or DEFAULT_VERSION
        if sniffed.method == "initialize":
            version = DEFAULT_VERSION  # the handshake itself predates any session version
        method = None
        answered: tuple[str, _Key] | None = None
        if kind in ("result", "error") and rid is not None:
            space = self._requester_of(_key(rid), sender)
            if space is not None:
                answered = (space, _key(rid))
                method, request_version = self._pending[space][_key(rid)]
                version = request_version or version
        message = view.exact(text, sniffed, self._options(version, method, received))
        if answered is not None:
            del self._pending[answered[0]][answered[1]]  # answered by a valid response
        if kind == "request" and rid is not None:
            resolved = named if isinstance(named, str) else version or DEFAULT_VERSION
            self._remember(rid, str(sniffed.method), sender, resolved)
        elif kind == "notification":
            self._cancel(view.cancelled_id(message), sender)
        if kind == "request" and isinstance(named, str):
            self.version = named
        elif kind == "result" and method == "initialize":
            self._negotiated(view.negotiated(message))
        return message

    def _decode_request_fast(
        self, text: bytes | str, method: str, sender: Sender | None, view: View
    ) -> Any:
        """Requests and notifications need no sniffing when the session
        version is known (or named in the request): only responses must be
        looked up by id before they can be typed."""
        stateless = self.version is None or self.version in STATELESS
        if not stateless:
            # A message naming a version is read in that version: the exact path.
            found = (
                _VERSION_KEY_BYTES in text
                if isinstance(text, bytes)
                else PROTOCOL_VERSION_KEY in text
            )
            if found:
                return None
        version = None if stateless else self.version
        if version is not None and version not in SUPPORTED:
            return None  # the exact path names the unsupported version
        message = view.request(text, method, version, self.extensions, self.version)
        if message is None:
            return None
        kind: Kind = view.kind(message)
        if kind == "request":
            # Without a session version only requests naming theirs pass.
            version = str(view.named(message)) if stateless else self.version or DEFAULT_VERSION
            method, rid = view.method_and_id(message)
            self._remember(rid, method, sender, version)
            if stateless:
                self.version = version
        else:
            self._cancel(view.cancelled_id(message), sender)
        return message

    def _decode_response_fast(self, text: bytes | str, sender: Sender | None, view: View) -> Any:
        """A response whose id is pending needs no sniffing either: its id is
        guessed, and the guess is checked against the id validation reads."""
        rid = guessed_id(text)
        if rid is None:
            return None
        key = _key(rid)
        found = self._holding(key, None if sender is None else _OTHER[sender])
        if len(found) != 1:
            return None  # not pending, or pending for both peers: the exact path says so
        method, request_version = self._pending[found[0]][key]
        version = request_version or self.version or DEFAULT_VERSION
        message = view.response(text, version, method, self.extensions, self.assume_complete)
        if message is None:
            return None
        read = view.id_of(message)
        if type(read) is not type(rid) or read != rid:
            return None  # the guess found another member's "id"
        del self._pending[found[0]][key]
        if method == "initialize" and view.kind(message) == "result":
            self._negotiated(view.negotiated(message))
        return message

    # -- the pending table --------------------------------------------------------------

    def _requester_of(self, key: _Key, responder: Sender | None) -> str | None:
        """The id space of the request a response with this id answers, if any."""
        found = self._holding(key, None if responder is None else _OTHER[responder])
        if len(found) > 1:
            raise InvalidRequestError(
                f"Invalid Request: id {quote(key[1])} is pending for both peers; "
                "say which peer sent the response (sender=...)",
                {"id": key[1]},
            )
        return found[0] if found else None

    def _holding(self, key: _Key, requester: str | None) -> list[str]:
        """The id spaces where a request with this id sent by ``requester`` (a
        peer, or None for either) is pending: its own, and the space of
        requests whose sender was never told."""
        pending = self._pending
        spaces = _ALL_SPACES if requester is None or requester == _EITHER else (requester, _EITHER)
        return [space for space in spaces if key in pending[space]]

    def _sender_of(self, method: str, version: str, sender: Sender | None) -> str:
        if sender is not None:
            return sender
        told = _TOLD.get((version, self.extensions, method))
        if told is None:
            entry = tables(version, self.extensions)[0].get(method)
            if entry is None:
                return _EITHER  # an unknown method: never cached, a peer names it at will
            told = _TOLD[version, self.extensions, method] = (
                entry.sender if entry.sender in _OTHER else _EITHER
            )
        return told

    def _remember(self, rid: str | int, method: str, sender: Sender | None, version: str) -> None:
        space = self._sender_of(method, version, sender)
        key = _key(rid)
        if self._holding(key, space):
            raise InvalidRequestError(
                f"Invalid Request: id {quote(rid)} is already in flight; the pending "
                "request is kept",
                {"id": rid},
            )
        table = self._pending[space]
        if len(table) >= self.max_pending:
            raise InvalidRequestError(
                f"Invalid Request: {len(table):,} requests already in flight "
                f"(the limit is {self.max_pending:,})",
                {"id": rid},
            )
        table[key] = (method, version)

    def _cancel(self, cancelled: Any, sender: Sender | None) -> None:
        """``cancelled``: the request id a cancellation names (None for other notifications)."""
        rid = request_id(cancelled)
        if rid is None:
            return
        key = _key(rid)
        found = self._holding(key, sender)  # the requester cancels its own request
        if len(found) == 1:  # an ambiguous cancellation forgets nothing
            del self._pending[found[0]][key]

    def _negotiated(self, negotiated: Any) -> None:
        if not isinstance(negotiated, str):
            return
        if negotiated not in SUPPORTED:
            raise unsupported(negotiated, " (negotiated by initialize)")
        self.version = negotiated

    def forget(self, id: str | int, *, sender: Sender | None = None) -> bool:
        """Stop waiting for the response to request ``id`` (sent by ``sender``, or by
        whichever peer has it pending); whether one was pending."""
        key = _key(id)
        found = self._holding(key, sender)
        for space in found:
            del self._pending[space][key]
        return bool(found)

    def request(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None = None,
        *,
        sender: Sender,
    ) -> tuple[int, bytes]:
        """A request ``sender`` sends, with an id no request of its in flight has,
        recorded as pending so its response decodes typed; its id and bytes.

        The request is read in the session version (`decode`'s default without
        one); a method that version lacks, or params it refuses, is a ``ValueError``.
        A full pending table is refused (-32600) as a decoded request is.
        """
        if sender not in _OTHER:
            raise ValueError(f"sender must be 'client' or 'server', not {sender!r}")
        version = self.version or DEFAULT_VERSION
        entry = tables(version, self.extensions)[0].get(method)
        if entry is None:
            raise ValueError(f"{version} has no request {quote(method)}")
        rid = self._next_id[sender]
        while self._holding(_key(rid), sender):
            rid += 1  # an id the peer's own traffic already used for this sender
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = (
                params.model_dump(mode="json", by_alias=True, exclude_unset=True)
                if isinstance(params, BaseModel)
                else dict(params)
            )
        try:
            model = entry.request.model_validate(message)
        except ValidationError as exc:
            raise ValueError(f"{version} {quote(method)}: {exc}") from None
        self._remember(rid, method, sender, version)
        self._next_id[sender] = rid + 1
        return rid, encode(model)

    @property
    def pending(self) -> int:
        """Requests seen that have no response yet."""
        return sum(map(len, self._pending.values()))


def _key(rid: str | int) -> _Key:
    return (type(rid), rid)
