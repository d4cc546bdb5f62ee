"""`Decoder`, ``decode`` and ``decode_dict``: the three stages (`parse`,
`route`, a view's validation) behind one signature, and the checks that
follow them (headers, ``lenient_newer``).

A `Decoder` checks its options once, when it is made; ``decode`` and
``decode_dict`` take the same options as keyword arguments and read through
a `Decoder` too (`decoder_of`). The two views differ in validation only;
`read_value` is the one path both take, and the `Correlator` takes it too
with what its session knows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from mcp_schema._args import check
from mcp_schema._codec.catalog import STATELESS
from mcp_schema._codec.messages import Message
from mcp_schema._codec.parse import as_bytes, parse
from mcp_schema._codec.route import Known, Route, address, resolved_version, route
from mcp_schema._codec.views import DICTS, MODELS, View
from mcp_schema.errors import InvalidParamsError, McpError, MethodNotFoundError, error_list

# The header checks' own entries, private to them, for headers `received_headers`
# normalized once already: the public ones would normalize them again.
from mcp_schema.http_headers import (
    Headers,
    _check_received,
    _check_received_version,
    received_headers,
)
from mcp_schema.versions import DEFAULT_VERSION, HANDSHAKE_VERSIONS

DictMessage = dict[str, Any]
"""What `decode_dict` returns: the message's parsed JSON, valid as the
TypedDict of its method and version (``<package>.dicts``), or as
`ResultResponseDict` / `ErrorResponseDict`."""


class Decoder:
    """Reads messages with options checked once, at construction (as
    msgspec's ``Decoder``): ``version``, ``extensions``,
    ``allow_unknown_methods``, ``assume_complete`` and ``lenient_newer`` mean
    what they mean for `decode`. What varies from one message to the next is
    given with it: ``method`` (for a response, the method of the request it
    answers) and ``headers``.

    `decode` returns models, `decode_dict` validated plain dicts: the same
    route, the same errors. ``TypeError`` for options of the wrong type.
    """

    __slots__ = ("__weakref__", "_known", "_knowns", "_lenient")

    def __init__(
        self,
        *,
        version: str | None = None,
        extensions: Collection[str] = (),
        allow_unknown_methods: bool = False,
        assume_complete: bool = False,
        lenient_newer: bool = False,
    ) -> None:
        check(version, str, "version", none=True)
        check(allow_unknown_methods, bool, "allow_unknown_methods")
        check(assume_complete, bool, "assume_complete")
        check(lenient_newer, bool, "lenient_newer")
        self._known: Final = Known(
            version=version,
            extensions=extension_set(extensions),
            allow_unknown_methods=allow_unknown_methods,
            assume_complete=assume_complete,
        )
        self._lenient: Final = lenient_newer
        self._knowns: dict[tuple[str | None, str | None, str | None, bool], Known] = {}

    def __repr__(self) -> str:
        known = self._known
        return (
            f"Decoder(version={known.version!r}, extensions={sorted(known.extensions)!r}, "
            f"allow_unknown_methods={known.allow_unknown_methods!r}, "
            f"assume_complete={known.assume_complete!r}, lenient_newer={self._lenient!r})"
        )

    def decode(
        self,
        raw: bytes | bytearray | memoryview | str,
        *,
        method: str | None = None,
        headers: Headers | None = None,
    ) -> Message:
        """One message as the model of its method and version (see `decode`)."""
        outcome = self._outcome(raw, MODELS, method, headers)
        del raw, headers  # an error raised below keeps this frame: not the input
        decoded: Message = returned(outcome)
        return decoded

    def decode_dict(
        self,
        raw: bytes | bytearray | memoryview | str,
        *,
        method: str | None = None,
        headers: Headers | None = None,
    ) -> DictMessage:
        """One message as validated plain dicts (see `decode_dict`)."""
        outcome = self._outcome(raw, DICTS, method, headers)
        del raw, headers  # an error raised below keeps this frame: not the input
        decoded: DictMessage = returned(outcome)
        return decoded

    def _outcome(
        self,
        raw: bytes | bytearray | memoryview | str,
        view: View,
        method: str | None,
        headers: Headers | None,
    ) -> Any:
        """The message read in ``view``, or the `McpError` to raise, detached
        (the caller raises it from a frame that no longer holds the input)."""
        known = self._known if method is None else self._answering(method)
        received = None if headers is None else received_headers(headers)
        data = raw if type(raw) is bytes else as_bytes(raw)
        try:
            value = parse(data)
            return read_value(value, len(data), known, received, view, self._lenient)[1]
        except McpError as err:
            return detached(err)

    def _answering(self, method: str) -> Known:
        known = self._knowns.get((None, None, method, False)) if type(method) is str else None
        if known is None:
            check(method, str, "method")
            # A str subclass is read as its text (the key is a str, hashed as one).
            known = self._told(None, None, str.__str__(method), False)
        return known

    def _told(
        self, version: str | None, negotiated: str | None, method: str | None, session: bool
    ) -> Known:
        """These options, told what a reader knows of one message (see `Known`;
        ``version`` None: this decoder's own)."""
        key = (version, negotiated, method, session)
        known = self._knowns.get(key)
        if known is None:
            if len(self._knowns) >= _KNOWNS:
                self._knowns.clear()  # the method of a response may be any name a peer chose
            known = self._knowns[key] = self._known._replace(
                version=version or self._known.version,
                negotiated=negotiated,
                method=method,
                session=session,
            )
        return known


def read_known(
    decoder: Decoder,
    value: dict[str, Any],
    size: int,
    headers: Mapping[str, str] | None,
    view: View,
    *,
    version: str | None = None,
    negotiated: str | None = None,
    method: str | None = None,
    tool: Any = None,
) -> tuple[Route, Any]:
    """`read_value` with ``decoder``'s options, for a session's reader (the
    `Correlator`): read in ``version`` when given, else as `read_version`
    decides for a session that has ``negotiated`` (None: nothing yet);
    ``method`` is the one a response answers; ``tool`` the one a
    ``tools/call`` calls. Its route and the message."""
    known = decoder._told(version, negotiated, method, True)
    return read_value(value, size, known, headers, view, decoder._lenient, tool)


_KNOWNS = 256
"""How many `Known` a `Decoder` remembers, by version and method (most sessions use a few dozen)."""


def decoder_of(
    version: str | None,
    extensions: Collection[str],
    allow_unknown_methods: bool,
    assume_complete: bool,
    lenient_newer: bool,
) -> Decoder:
    """The `Decoder` of `decode`'s keyword arguments: a shared one for
    arguments of exact types (``1`` is no ``True``, so it never finds the
    decoder of ``True``; ``extensions`` a tuple or a frozenset), else a new
    one, which checks them."""
    # No generator on the common path (no extensions): each costs a few
    # tenths of a microsecond, as much as the lookup.
    if (
        (allow_unknown_methods is True or allow_unknown_methods is False)
        and (assume_complete is True or assume_complete is False)
        and (lenient_newer is True or lenient_newer is False)
        and (version is None or type(version) is str)
        and (type(extensions) is tuple or type(extensions) is frozenset)
        and (not extensions or all(type(e) is str for e in extensions))
    ):
        key = (version, extensions, allow_unknown_methods, assume_complete, lenient_newer)
        found = _DECODERS.get(key)
        if found is None:
            found = Decoder(
                version=version,
                extensions=extensions,
                allow_unknown_methods=allow_unknown_methods,
                assume_complete=assume_complete,
                lenient_newer=lenient_newer,
            )
            if len(_DECODERS) >= _DECODERS_SIZE:
                _DECODERS.clear()  # a version may be any name a caller passes on
            _DECODERS[key] = found
        return found
    return Decoder(
        version=version,
        extensions=extensions,
        allow_unknown_methods=allow_unknown_methods,
        assume_complete=assume_complete,
        lenient_newer=lenient_newer,
    )


_DECODERS: dict[tuple[Any, ...], Decoder] = {}
"""`decoder_of` by its arguments, all of exact types: most calls repeat a few."""
_DECODERS_SIZE = 64


def decode(
    raw: bytes | bytearray | memoryview | str,
    *,
    version: str | None = None,
    method: str | None = None,
    headers: Headers | None = None,
    extensions: Collection[str] = (),
    allow_unknown_methods: bool = False,
    assume_complete: bool = False,
    lenient_newer: bool = False,
) -> Message:
    """Decode one JSON-RPC message into the model of its method and version.

    * ``version``: the protocol version; when absent it is read from
      ``params._meta`` (stateless-era requests), then from the
      ``MCP-Protocol-Version`` header, else `HANDSHAKE_VERSION` (the
      newest handshake-era version).
    * ``method``: for a response, the method of the request it answers;
      without it a result is typed as the version's generic ``Result``.
    * ``headers``: Streamable HTTP request headers (a mapping, or ASGI's byte
      pairs), which must agree with the body: ``MCP-Protocol-Version`` with the
      version the message is read in, ``Mcp-Method`` and ``Mcp-Name`` with the
      body (all required for stateless-era requests and notifications); -32020
      otherwise.
    * ``extensions``: negotiated extension ids; with
      ``"io.modelcontextprotocol/tasks"`` a ``"task"`` result is a
      ``CreateTaskResult`` and the extension's methods are known. Ids this
      release has no models for are ignored.
    * ``allow_unknown_methods``: decode a request of an unknown method as the
      generic ``JSONRPCRequest`` instead of raising ``MethodNotFoundError``.
    * ``assume_complete``: a result without ``resultType`` (from a
      handshake-era server) is read as ``"complete"``.
    * ``lenient_newer``: read a peer that sends newer shapes in an older
      session. A message of an older handshake-era version that the
      version's own models refuse (its method is not in that version,
      -32601, or its params or result are not, -32602) is decoded with the
      newest handshake-era version's models instead (`HANDSHAKE_VERSION`)
      and returned as that version's model when they accept it; otherwise
      the strict error stands. Members an older schema does not name need
      no option: they are unknown members, kept either way.

    One message per call: a JSON array is refused with -32600 in every
    version, including the 2025-03-26 batches (split the array and decode
    each element; ``v2025_03_26.JSONRPCBatchRequest`` and
    ``JSONRPCBatchResponse`` validate a whole batch).

    Raises `mcp_schema.errors.McpError` subclasses only (``TypeError`` for
    arguments of the wrong type). A raised error holds no reference to the
    input: keeping it keeps a few hundred bytes.
    """
    decoder = decoder_of(version, extensions, allow_unknown_methods, assume_complete, lenient_newer)
    outcome = decoder._outcome(raw, MODELS, method, headers)
    del raw, headers  # an error raised below keeps this frame: not the input
    decoded: Message = returned(outcome)
    return decoded


def decode_dict(
    raw: bytes | bytearray | memoryview | str,
    *,
    version: str | None = None,
    method: str | None = None,
    headers: Headers | None = None,
    extensions: Collection[str] = (),
    allow_unknown_methods: bool = False,
    assume_complete: bool = False,
    lenient_newer: bool = False,
) -> DictMessage:
    """Decode one JSON-RPC message into validated plain dicts.

    The options, the validation rules and every error are those of
    `mcp_schema.codec.decode`; the result is the message's parsed JSON, valid
    as the TypedDict of its method in the version's ``dicts`` module (a
    response as `ResultResponseDict` or `ErrorResponseDict`).
    ``Model.model_validate(d)`` turns it into a model.

    Raises `mcp_schema.errors.McpError` subclasses only (``TypeError`` for
    arguments of the wrong type, as `decode`).
    """
    decoder = decoder_of(version, extensions, allow_unknown_methods, assume_complete, lenient_newer)
    outcome = decoder._outcome(raw, DICTS, method, headers)
    del raw, headers  # an error raised below keeps this frame: not the input
    decoded: DictMessage = returned(outcome)
    return decoded


def read_value(
    value: dict[str, Any],
    size: int,
    known: Known,
    headers: Mapping[str, str] | None,
    view: View,
    lenient_newer: bool = False,
    tool: Any = None,
) -> tuple[Route, Any]:
    """A parsed message (of ``size`` bytes) routed and validated in ``view``,
    its headers checked (``Mcp-Param-*`` against ``tool``, the one a
    ``tools/call`` calls, when the caller knows it): its route and the message."""
    try:
        found = route(value, known, headers)
        message = view.message(found, value, size)
        if headers is not None:
            check_headers(headers, found, value, tool)
        return found, message
    except McpError as err:
        failure = err
    if lenient_newer and isinstance(failure, (MethodNotFoundError, InvalidParamsError)):
        newer = _read_as_newer(value, size, known, headers, view)
        if newer is not None:
            return newer
    address(failure, value)
    raise failure


def _read_as_newer(
    value: dict[str, Any],
    size: int,
    known: Known,
    headers: Mapping[str, str] | None,
    view: View,
) -> tuple[Route, Any] | None:
    """``lenient_newer``: an older session's message in the newest handshake-era version."""
    try:
        resolved = resolved_version(value, known, headers)
        if resolved not in HANDSHAKE_VERSIONS or resolved == DEFAULT_VERSION:
            return None
        return read_value(value, size, known._replace(version=DEFAULT_VERSION), headers, view)
    except McpError:
        return None


def check_headers(
    headers: Mapping[str, str], route: Route, value: dict[str, Any], tool: Any = None
) -> None:
    """Headers given with a message agree with it, or -32020: neither silently wins."""
    # The headers are `received_headers`' already (every reader normalizes them
    # once, before the parse), and ``value`` the parsed message.
    if headers.get("mcp-protocol-version") != route.version:
        # A version's own text is plain (it decodes to itself): only another is read.
        _check_received_version(headers, route.version)
    if route.kind == "request" or route.kind == "notification":
        # Only stateless-era requests must mirror their body; any mirrored header
        # that is present must agree.
        try:
            _check_received(headers, value, tool, route.version in STATELESS)
        except ValueError as exc:  # a value the headers mirror is not a string
            raise InvalidParamsError(
                f"Invalid params: cannot be mirrored in headers: {exc}",
                error_list([{"path": "$.params", "reason": str(exc)}]),
            ) from None


def extension_set(extensions: Collection[str]) -> frozenset[str]:
    """The negotiated extension ids; a bare str would be read as a set of characters."""
    if isinstance(extensions, (str, bytes)) or not isinstance(extensions, Collection):
        raise TypeError(f"extensions must be a collection of extension ids, not {extensions!r:.80}")
    ids = frozenset(extensions)
    if not all(isinstance(e, str) for e in ids):
        raise TypeError("extension ids are strings")
    return ids


def returned(outcome: Any) -> Any:
    """The message, or the detached `McpError` raised: call it from a frame
    that no longer holds the input (the error's traceback keeps the frame)."""
    if isinstance(outcome, McpError):
        raise outcome
    return outcome


def detached(err: McpError) -> McpError:
    """``err`` without what would keep the input alive: the frames that read
    it (its traceback) and the exceptions it was raised while handling. Raise
    it from a frame that holds no reference to the input either."""
    err.__traceback__ = None
    err.__context__ = None
    err.__cause__ = None
    return err
