"""``decode``: the exact path, which classifies every failure
from the sniffed envelope, behind the fast path that serves real traffic."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from pydantic import ValidationError

from mcp_schema._codec.dispatch import (
    STATELESS,
    detect_version,
    error_adapter,
    result_adapter,
    tables,
    version_tables,
)
from mcp_schema._codec.envelope import Envelope, address, check_envelope, kind_of, sniff
from mcp_schema._codec.fast_path import decode_fast
from mcp_schema._codec.messages import Kind, Message
from mcp_schema._codec.options import NO_EXTENSIONS, DecodeOptions
from mcp_schema._codec.problems import invalid
from mcp_schema._codec.screen import as_input, screen
from mcp_schema.base import McpModel
from mcp_schema.errors import InvalidParamsError, McpError, MethodNotFoundError, error_list, quote
from mcp_schema.http_headers import (
    Headers,
    check_request_headers,
    check_version_header,
    received_headers,
)
from mcp_schema.versions import DEFAULT_VERSION, HANDSHAKE_VERSIONS


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
      ``CreateTaskResult`` and the extension's methods are known.
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
    arguments of the wrong type: ``raw`` not bytes-like or str, ``extensions``
    a str, ``headers`` neither a mapping nor pairs).
    """
    text = as_input(raw)
    options = options_of(
        version, method, headers, extensions, allow_unknown_methods, assume_complete, lenient_newer
    )
    screen(text)
    if headers is None:
        message = decode_fast(text, options)
        if message is not None:
            return message
    return decode_sniffed(text, sniff(text), options)


def options_of(
    version: str | None,
    method: str | None,
    headers: Headers | None,
    extensions: Collection[str],
    allow_unknown_methods: bool,
    assume_complete: bool,
    lenient_newer: bool,
) -> DecodeOptions:
    """The one value `decode`'s (and `decode_dict`'s) keyword arguments become."""
    return DecodeOptions(
        version,
        method,
        None if headers is None else received_headers(headers),
        extension_set(extensions),
        allow_unknown_methods,
        assume_complete,
        lenient_newer,
    )


def extension_set(extensions: Collection[str]) -> frozenset[str]:
    """The negotiated extension ids; a bare str would be read as a set of characters."""
    if isinstance(extensions, (str, bytes)):
        raise TypeError(f"extensions must be a collection of extension ids, not {extensions!r}")
    return frozenset(extensions) if extensions else NO_EXTENSIONS


def decode_sniffed(raw: bytes | str, sniffed: Envelope, options: DecodeOptions) -> Message:
    """The exact path: every error is classified from the sniffed envelope,
    and says which request it answers (`McpError.request_id`), if any."""
    try:
        return _decode_or_newer(raw, sniffed, options)
    except McpError as err:
        address(err, sniffed)
        raise


def _decode_or_newer(raw: bytes | str, sniffed: Envelope, options: DecodeOptions) -> Message:
    try:
        return _decode_exact(raw, sniffed, options)
    except (MethodNotFoundError, InvalidParamsError):
        newer = _read_as_newer(raw, sniffed, options) if options.lenient_newer else None
        if newer is None:
            raise
        return newer


def _read_as_newer(raw: bytes | str, sniffed: Envelope, options: DecodeOptions) -> Message | None:
    """``lenient_newer``: an older session's message in the newest handshake-era version."""
    resolved = detect_version(sniffed.named_version, options.version, options.headers)
    if resolved not in HANDSHAKE_VERSIONS or resolved == DEFAULT_VERSION:
        return None
    try:
        return _decode_exact(raw, sniffed, options._replace(version=DEFAULT_VERSION))
    except McpError:
        return None


def _decode_exact(raw: bytes | str, sniffed: Envelope, options: DecodeOptions) -> Message:
    kind = kind_of(sniffed)
    check_envelope(sniffed, kind)
    headers = options.headers
    resolved = detect_version(sniffed.named_version, options.version, headers)
    try:
        if kind == "error":
            return error_adapter(resolved).validate_json(raw)  # type: ignore[no-any-return]
        if kind == "result":
            adapter = result_adapter(
                resolved, options.method or "", options.extensions, options.assume_complete
            )
            return adapter.validate_json(raw)  # type: ignore[no-any-return]
        requests, notifications = tables(resolved, options.extensions)
        if kind == "request":
            entry = requests.get(str(sniffed.method))
            if entry is None:
                if not options.allow_unknown_methods:
                    raise MethodNotFoundError(
                        f"Method not found: {quote(sniffed.method)}",
                        {"method": sniffed.method, "version": resolved},
                    )
                cls: type[McpModel] = version_tables(resolved).request
            else:
                cls = entry.request
        else:
            note = notifications.get(str(sniffed.method))
            cls = note.notification if note is not None else version_tables(resolved).notification
        message = cls.model_validate_json(raw)
    except ValidationError as exc:
        raise invalid(exc, raw, "result" if kind == "result" else "params") from None
    if headers is not None:
        check_headers(headers, resolved, kind, message)
    return message


def check_headers(headers: Mapping[str, str], version: str, kind: Kind, message: Message) -> None:
    """Headers given with a message agree with it, or -32020: neither silently wins."""
    check_version_header(headers, version)
    if kind in ("request", "notification"):
        # Only stateless-era requests must mirror their body; any mirrored header
        # that is present must agree.
        try:
            check_request_headers(headers, message, required=version in STATELESS)
        except ValueError as exc:  # a value the headers mirror is not a string
            raise InvalidParamsError(
                f"Invalid params: cannot be mirrored in headers: {exc}",
                error_list([{"path": "$.params", "reason": str(exc)}]),
            ) from None
