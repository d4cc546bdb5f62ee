"""``Correlator``: pairs the responses of one connection with the requests
they answer, so a caller that streams never names a method."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from mcp_schema._codec.decoding import decode_sniffed
from mcp_schema._codec.dispatch import STATELESS
from mcp_schema._codec.envelope import reject_non_json_numbers, request_id, sniff
from mcp_schema._codec.fast_path import decode_fast, named_in
from mcp_schema._codec.messages import Message, message_kind
from mcp_schema._codec.options import DecodeOptions
from mcp_schema.versions import DEFAULT_VERSION


class Correlator:
    """Pairs responses with the requests they answer, for callers that stream.

    Feed it every message of one connection, in both directions: it remembers
    each request's method and version by id (``"1"`` and ``1`` are different
    ids) and decodes a response with them. The session version that messages
    without a ``_meta`` version are read in is the one ``initialize``
    negotiated (handshake era) or the one the latest request named
    (stateless era); ``version`` sets it up front.
    """

    def __init__(
        self,
        *,
        version: str | None = None,
        extensions: Collection[str] = (),
        allow_unknown_methods: bool = False,
        assume_complete: bool = False,
    ) -> None:
        self.version = version
        self.extensions = frozenset(extensions)
        self.allow_unknown_methods = allow_unknown_methods
        self.assume_complete = assume_complete
        self._pending: dict[tuple[type, str | int], tuple[str, str | None]] = {}

    def _options(
        self, version: str | None, method: str | None, headers: Mapping[str, str] | None
    ) -> DecodeOptions:
        return DecodeOptions(
            version,
            method,
            headers,
            self.extensions,
            self.allow_unknown_methods,
            self.assume_complete,
        )

    def decode(self, raw: bytes | str, *, headers: Mapping[str, str] | None = None) -> Message:
        reject_non_json_numbers(raw)
        if headers is None:
            message = self._decode_request_fast(raw)
            if message is not None:
                return message
        sniffed = sniff(raw)
        named = sniffed.named_version
        method: str | None = None
        version = None if named is not None else self.version
        rid = request_id(sniffed.id)
        if "method" not in sniffed.fields and rid is not None:
            method, request_version = self._pending.pop((type(rid), rid), (None, None))
            version = request_version or version
        if sniffed.method == "initialize":
            version = DEFAULT_VERSION  # the handshake itself predates any session version
        message = decode_sniffed(raw, sniffed, self._options(version, method, headers))
        kind = message_kind(message)
        if kind == "request" and rid is not None:
            self._remember(rid, str(sniffed.method), named if isinstance(named, str) else version)
        if isinstance(named, str):
            self.version = named
        elif kind == "result" and method == "initialize":
            negotiated = getattr(getattr(message, "result", None), "protocol_version", None)
            if isinstance(negotiated, str):
                self.version = negotiated
        return message

    def _decode_request_fast(self, raw: bytes | str) -> Message | None:
        """Requests and notifications need no sniffing when the session
        version is known (or named in the request): only responses must be
        looked up by id before they can be typed."""
        stateless = self.version is None or self.version in STATELESS
        message = decode_fast(
            raw, self._options(None if stateless else self.version, None, None), self.version
        )
        if message is None:
            return None
        rid = message.__dict__.get("id")
        if "id" in type(message).model_fields and isinstance(rid, (str, int)):
            # Without a session version only requests naming theirs pass.
            version = str(named_in(message)) if stateless else self.version
            self._remember(rid, str(message.__dict__["method"]), version)
            if stateless:
                self.version = version
        return message

    def _remember(self, rid: str | int, method: str, version: str | None) -> None:
        self._pending[(type(rid), rid)] = (method, version)

    @property
    def pending(self) -> int:
        """Requests seen that have no response yet."""
        return len(self._pending)
