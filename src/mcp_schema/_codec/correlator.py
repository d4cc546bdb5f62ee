"""``Correlator``: pairs the responses of one connection with the requests
they answer, so a caller that streams never names a method.

It reads every message through one `Decoder` (its options checked once,
when the Correlator is made), telling the resolver what the connection
knows: the session's version, and for a response the method and version of
the request it answers. Which version that is, and which one an
``initialize`` result fixes, `versioning` decides, as for the sessions.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from mcp_schema._args import check
from mcp_schema._codec.catalog import SUPPORTED, catalog
from mcp_schema._codec.decoding import (
    DictMessage,
    decoder_of,
    detached,
    read_known,
    returned,
)
from mcp_schema._codec.encoding import encode
from mcp_schema._codec.messages import Message, RequestIdValue
from mcp_schema._codec.parse import as_bytes, parse
from mcp_schema._codec.pending import Pending, already_in_flight
from mcp_schema._codec.route import IdKey, address, id_key, kind_of, named_version, request_id
from mcp_schema._codec.versioning import accepted_version, read_version
from mcp_schema._codec.views import DICTS, MODELS, View
from mcp_schema.errors import InvalidRequestError, McpError, quote
from mcp_schema.http_headers import Headers, received_headers
from mcp_schema.versions import DEFAULT_VERSION, unsupported

Sender = Literal["client", "server"]

MAX_PENDING = 10_000
"""Requests each peer may have in flight by default; a request beyond it is refused."""

_EITHER = "either"  # a request whose sender was neither given nor told by its method
_SPACES = ("client", "server", _EITHER)
_OTHER: dict[str, str] = {"client": "server", "server": "client"}
_CANCELLED = "notifications/cancelled"
_ASKING = ("server/discover", "initialize")
"""Requests that fix no version by naming one: ``server/discover`` only asks,
and ``initialize`` is answered with the version it fixes."""


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
    whose id is already in flight for its sender is refused (-32600, answered
    with that id) and the pending one kept. At most ``max_pending`` requests
    per peer are kept; a request beyond that is refused (-32600) rather than
    evicting one.

    Versions: a message read in the session version is one that names none.
    The version is fixed by ``version`` given up front, by `fix` (a server
    that answered ``initialize`` itself), by a validated ``initialize``
    result, or in the stateless era by the first valid request naming a
    version (``server/discover`` excepted: it only asks; and ``initialize``,
    whose result fixes it). From then on a
    message naming another version is refused (-32022) and the session is
    unchanged, and so is a second ``initialize`` result naming another.
    Headers, when given, must agree with the version a message is read in
    (-32020).

    One Correlator serves one connection. Its frames are fed in order; it
    may be shared by threads (each call holds its lock), but the order of
    frames fed from several threads at once is theirs to keep.
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
        check(version, str, "version", none=True)
        if version is not None and version not in SUPPORTED:
            raise unsupported(version)
        if not isinstance(max_pending, int) or isinstance(max_pending, bool) or max_pending < 0:
            raise TypeError(f"max_pending must be a non-negative int, not {max_pending!r:.40}")
        self._options: dict[str, Any] = {}
        self._reader(
            extensions=extensions,
            allow_unknown_methods=allow_unknown_methods,
            assume_complete=assume_complete,
            lenient_newer=lenient_newer,
        )
        self.version = version
        """The session version; None until it is fixed (see the class)."""
        self.max_pending = max_pending
        self._begin()

    def _begin(self) -> None:
        """A new connection's state: nothing pending, no id of this side's given."""
        self._lock = threading.Lock()
        self._pending: dict[str, Pending[tuple[str, str]]] = {
            space: Pending(self.max_pending) for space in _SPACES
        }
        self._next_id = {"client": 1, "server": 1}

    def _twin(self) -> Correlator:
        """A Correlator of this one's options (checked once, when this one was
        made), with no version fixed and nothing pending: what a gateway makes
        per exchange, without the checks and the options' merge."""
        twin = Correlator.__new__(Correlator)
        twin._options, twin._decoder = self._options, self._decoder
        twin.version, twin.max_pending = None, self.max_pending
        twin._begin()
        return twin

    def _reader(self, **changed: Any) -> None:
        """Read every message from now on through the `Decoder` of the options
        with ``changed`` (which it checks, once); a refused change changes nothing.
        A shared one (`decoder_of`): a Correlator made per exchange (a gateway's,
        per stateless request) makes no Decoder, and finds its reads known."""
        options = {**self._options, **changed}
        decoder = decoder_of(version=None, **options)
        if "extensions" in changed:
            options["extensions"] = frozenset(changed["extensions"])  # a Collection, checked
        self._decoder, self._options = decoder, options

    # The options may be changed between messages: each change makes the decoder anew.
    @property
    def extensions(self) -> frozenset[str]:
        found: frozenset[str] = self._options["extensions"]
        return found

    @extensions.setter
    def extensions(self, value: Collection[str]) -> None:
        self._reader(extensions=value)

    @property
    def allow_unknown_methods(self) -> bool:
        return bool(self._options["allow_unknown_methods"])

    @allow_unknown_methods.setter
    def allow_unknown_methods(self, value: bool) -> None:
        self._reader(allow_unknown_methods=value)

    @property
    def assume_complete(self) -> bool:
        return bool(self._options["assume_complete"])

    @assume_complete.setter
    def assume_complete(self, value: bool) -> None:
        self._reader(assume_complete=value)

    @property
    def lenient_newer(self) -> bool:
        return bool(self._options["lenient_newer"])

    @lenient_newer.setter
    def lenient_newer(self, value: bool) -> None:
        self._reader(lenient_newer=value)

    def decode(
        self,
        raw: bytes | bytearray | memoryview | str,
        *,
        sender: Sender | None = None,
        headers: Headers | None = None,
        tools: Mapping[str, Any] | None = None,
    ) -> Message:
        """Decode one message of the connection and account for it (see the class).

        ``tools``: the server's tools by name (definitions or
        `mcp_schema.tool_headers.ToolHeaders`): a ``tools/call``'s
        ``Mcp-Param-*`` headers are checked against the one it calls, in the
        same pass as its other ``headers`` (-32020)."""
        outcome = self._read(raw, sender, headers, MODELS, tools)
        del raw, headers  # an error raised below keeps this frame: not the input
        decoded: Message = returned(outcome)
        return decoded

    def decode_dict(
        self,
        raw: bytes | bytearray | memoryview | str,
        *,
        sender: Sender | None = None,
        headers: Headers | None = None,
        tools: Mapping[str, Any] | None = None,
    ) -> DictMessage:
        """`decode` in the plain-dict view (see `mcp_schema.codec.decode_dict`)."""
        outcome = self._read(raw, sender, headers, DICTS, tools)
        del raw, headers  # an error raised below keeps this frame: not the input
        decoded: DictMessage = returned(outcome)
        return decoded

    def _read(
        self,
        raw: bytes | bytearray | memoryview | str,
        sender: Sender | None,
        headers: Headers | None,
        view: View,
        tools: Mapping[str, Any] | None = None,
    ) -> Any:
        if sender is not None and sender not in _OTHER:
            _check_sender(sender)
        # A dict (a gateway's is an OrderedDict): told apart without the Mapping ABC.
        if tools is not None and not isinstance(tools, dict):
            check(tools, Mapping, "tools")
        data = raw if type(raw) is bytes else as_bytes(raw)
        received = None if headers is None else received_headers(headers)
        try:
            value = parse(data)
            try:
                with self._lock:
                    return self._account(value, len(data), sender, received, view, tools)
            except McpError as err:
                address(err, value)
                raise
        except McpError as err:
            return detached(err)  # the caller raises it

    def fix(self, version: str) -> None:
        """Fix the session version: what a server does once it has answered
        ``initialize`` (the client's answer never passes through its reader).
        Fixing another version than the fixed one is -32022."""
        if not isinstance(version, str):
            raise TypeError(f"version must be a str, not {type(version).__name__}")
        with self._lock:
            self.version = read_version(version, None, self.version)

    def _account(
        self,
        value: dict[str, Any],
        size: int,
        sender: Sender | None,
        headers: Mapping[str, str] | None,
        view: View,
        tools: Mapping[str, Any] | None,
    ) -> Any:
        kind = kind_of(value)
        if kind == "result" or kind == "error":
            return self._response(value, size, sender, headers, view)
        method = value.get("method")
        tool = None
        if tools is not None and headers is not None and method == "tools/call":
            params = value.get("params")
            name = params.get("name") if type(params) is dict else None
            tool = tools.get(name) if type(name) is str else None
        found, message = read_known(
            self._decoder, value, size, headers, view, negotiated=self.version, tool=tool
        )
        if kind == "request":
            self._remember(found.id, str(method), sender, found.version)
            if self.version is None and method not in _ASKING and named_version(value) is not None:
                self.version = found.version  # the version it named
        elif method == _CANCELLED:
            params = value.get("params")
            if type(params) is dict:
                self._cancel(request_id(params.get("requestId")), sender)
        return message

    def _response(
        self,
        value: dict[str, Any],
        size: int,
        sender: Sender | None,
        headers: Mapping[str, str] | None,
        view: View,
    ) -> Any:
        rid = request_id(value.get("id"))
        space = None if rid is None else self._requester_of(id_key(rid), sender)
        method = request_version = None
        if space is not None and rid is not None:
            held = self._pending[space].get(rid)
            assert held is not None  # _requester_of found it there
            method, request_version = held
        found, message = read_known(
            self._decoder,
            value,
            size,
            headers,
            view,
            version=request_version or self.version,
            method=method,
        )
        if space is not None and rid is not None:
            self._pending[space].pop(rid)  # answered by a valid response
        if method == "initialize" and found.kind == "result":
            # The version a client takes from it; a second answer naming another is refused.
            answered_with = accepted_version(value["result"].get("protocolVersion"), None)
            self.version = read_version(answered_with, None, self.version)
        return message

    # -- the pending table --------------------------------------------------------------

    def _requester_of(self, key: IdKey, responder: Sender | None) -> str | None:
        """The id space of the request a response with this id answers, if any."""
        found = self._holding(key, None if responder is None else _OTHER[responder])
        if len(found) > 1:
            raise InvalidRequestError(
                f"Invalid Request: id {quote(key[1])} is pending for both peers; "
                "say which peer sent the response (sender=...)",
                {"id": quote(key[1])},
            )
        return found[0] if found else None

    def _holding(self, key: IdKey, requester: str | None) -> list[str]:
        """The id spaces where a request with this id sent by ``requester`` (a
        peer, or None for either) is pending: its own, and the space of
        requests whose sender was never told."""
        pending = self._pending
        if requester is None or requester == _EITHER:
            return [space for space in _SPACES if key in pending[space]]
        if key in pending[_EITHER]:
            return [requester, _EITHER] if key in pending[requester] else [_EITHER]
        return [requester] if key in pending[requester] else []

    def _sender_of(self, method: str, version: str) -> str:
        """The peer that sends ``method`` (`_EITHER` when the catalog does not say)."""
        entry = catalog(version, self.extensions).requests.get(method)
        return entry.sender if entry is not None and entry.sender in _OTHER else _EITHER

    def _remember(
        self, rid: RequestIdValue | None, method: str, sender: Sender | None, version: str
    ) -> None:
        assert rid is not None  # the route read a request's id
        space = sender if sender is not None else self._sender_of(method, version)
        key = id_key(rid)
        if self._holding(key, space):
            raise already_in_flight(rid)
        self._pending[space].admit(rid, (method, version))

    def _cancel(self, rid: RequestIdValue | None, sender: Sender | None) -> None:
        if rid is None:
            return
        key = id_key(rid)
        found = self._holding(key, sender)  # the requester cancels its own request
        if len(found) == 1:  # an ambiguous cancellation forgets nothing
            self._pending[found[0]].pop(rid)

    def forget(self, id: str | int, *, sender: Sender | None = None) -> bool:
        """Stop waiting for the response to request ``id`` (sent by ``sender``, or by
        whichever peer has it pending); whether one was pending."""
        if not isinstance(id, (str, int)) or isinstance(id, bool):
            raise TypeError(f"a request id is a str or an int, not {type(id).__name__}")
        _check_sender(sender)
        key = id_key(id)
        with self._lock:
            found = self._holding(key, sender)
            for space in found:
                self._pending[space].pop(id)
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
        if not isinstance(method, str):
            raise TypeError(f"method must be a str, not {type(method).__name__}")
        if sender is None:
            raise TypeError("request() needs the sender: 'client' or 'server'")
        _check_sender(sender)
        if params is not None and not isinstance(params, (BaseModel, Mapping)):
            raise TypeError(f"params must be a model or a mapping, not {type(params).__name__}")
        with self._lock:
            return self._request(method, params, sender)

    def _request(
        self, method: str, params: BaseModel | Mapping[str, Any] | None, sender: Sender
    ) -> tuple[int, bytes]:
        version = self.version or DEFAULT_VERSION
        entry = catalog(version, self.extensions).requests.get(method)
        if entry is None:
            raise ValueError(f"{version} has no request {quote(method)}")
        rid = self._next_id[sender]
        while self._holding(id_key(rid), sender):
            rid += 1  # an id the peer's own traffic already used for this sender
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = (
                params.model_dump(mode="json", by_alias=True, exclude_unset=True)
                if isinstance(params, BaseModel)
                else dict(params)
            )
        try:
            wire = encode(entry.request.model_validate(message))
        except ValueError as exc:  # pydantic's ValidationError, or encode's refusal
            raise ValueError(f"{version} {quote(method)}: {exc}") from None
        self._remember(rid, method, sender, version)
        self._next_id[sender] = rid + 1
        return rid, wire

    @property
    def pending(self) -> int:
        """Requests seen that have no response yet."""
        return sum(map(len, self._pending.values()))


def _check_sender(sender: object) -> None:
    if sender is not None and sender not in _OTHER:
        # A Sender is one of two literals: any other value is of the wrong type.
        raise TypeError(f"sender must be 'client', 'server' or None, not {sender!r:.40}")
