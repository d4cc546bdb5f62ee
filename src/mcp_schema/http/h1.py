"""HTTP/1.1 for the package's own client side, sans-IO: a request's head
(`request_head`), an upstream's answer read by `ResponseParser` (on
httptools, the C parser uvicorn serves with), what it is sent to
(`Target`) and how an exchange fails (`UpstreamError` and its kinds).
`mcp_schema.http.pool` drives them over sockets.

Every byte of an answer may be hostile: the parser bounds the head (the
status line and the header fields, ``max_head`` bytes, ``max_fields``
fields), the body (``max_body`` bytes, None: a stream the caller bounds
itself) and the framing around it (chunk sizes, extensions and trailers:
twice ``max_head`` bytes besides a few per chunk), and says when the answer
is complete and whether the connection may carry another one. Whatever
is wrong ends in an `UpstreamProtocolError`, never in the parser's own.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httptools

from mcp_schema._memo import kept
from mcp_schema.errors import InternalError

__all__ = [
    "MAX_FIELDS",
    "MAX_HEAD",
    "ResponseParser",
    "ResponseTooLarge",
    "Target",
    "UpstreamError",
    "UpstreamProtocolError",
    "UpstreamTimeout",
    "UpstreamUnreachable",
    "request_head",
]

MAX_HEAD = 65536
"""The bytes of an answer's status line and header fields, by default."""
MAX_FIELDS = 200
"""The header fields of an answer, by default."""

_PER_CHUNK = 32  # framing allowed per chunk: its size line, extension-less, and CRLFs
_FRAMING = frozenset([b"content-length", b"transfer-encoding", b"connection", b"host"])
# ``bytes.find`` where ``in`` would do, on the per-request path: ``sub in data``
# first tries ``sub`` as an int, raising (and clearing) a TypeError each time.


class UpstreamError(InternalError):
    """An exchange with an upstream failed (-32603); ``status``: the HTTP
    status a gateway answers its own client with (502, 504 for a timeout)."""

    status = 502


class UpstreamUnreachable(UpstreamError):
    """No connection: refused, reset, a name that does not resolve, or a
    certificate that does not verify."""


class UpstreamTimeout(UpstreamError):
    """A bound on time passed: connecting, waiting for the answer's bytes,
    or waiting for a free connection of the pool."""

    status = 504


class UpstreamProtocolError(UpstreamError):
    """The answer is no HTTP/1.1 answer, or broke off before its end."""


class ResponseTooLarge(UpstreamProtocolError):
    """The answer's head, fields, body or framing passed its bound."""


@dataclass(frozen=True)
class Target:
    """Where a request goes: ``scheme`` (http or https), ``host``, ``port``,
    and the request target (``path`` with its query); ``origin`` keys a pool."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: str) -> Target:
        """The target of an ``http(s)://host[:port]/path?query`` URL (``ValueError`` else:
        no user info, no fragment)."""
        if not isinstance(url, str):
            raise TypeError(f"url must be a string, not {type(url).__name__}")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"not an http(s) URL: {url!r:.80} ({exc})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r:.80}")
        if parts.username is not None or parts.password is not None or parts.fragment:
            raise ValueError(f"an upstream URL has no user info or fragment: {url!r:.80}")
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if any(c in path for c in "\r\n\0 "):
            raise ValueError(f"not an http(s) URL: {url!r:.80}")
        default = 443 if parts.scheme == "https" else 80
        return cls(parts.scheme, parts.hostname, port or default, path)

    # Each read once per target (a pool's look-up, the ``Host`` written): the IDNA
    # codec costs a microsecond a call.
    @functools.cached_property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @functools.cached_property
    def authority(self) -> bytes:
        """The ``Host`` of a request sent here."""
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (host if self.port == default else f"{host}:{self.port}").encode("idna")

    def with_query(self, query: bytes) -> Target:
        """This target with ``query`` (raw, as ASGI gives it) instead of its own."""
        base = self.path.partition("?")[0]
        if not query:
            return Target(self.scheme, self.host, self.port, base)
        text = query.decode("latin-1")
        if any(c in text for c in "\r\n\0 #"):
            raise ValueError("a query has no spaces, line breaks or fragment")
        return Target(self.scheme, self.host, self.port, f"{base}?{text}")


_SENT, _DROPPED, _HOST = "sent", "dropped", "host"  # a field's name: what becomes of it
_NAME_KINDS: dict[bytes, str] = {}
"""Each field name `request_head` wrote, as given, and what became of it: the
gateway forwards the same names with every request, each told by one look-up
after the first (no colon search, no lower-case copy); `mcp_schema._memo`'s bounds."""


def _kind_of(name: bytes) -> str:
    """What `request_head` does with a field of ``name`` (``ValueError`` for a colon)."""
    if name.find(b":") >= 0:
        raise ValueError(f"a header name cannot hold a colon: {name!r:.40}")
    lowered = name.lower()
    kind = _SENT if lowered not in _FRAMING else _HOST if lowered == b"host" else _DROPPED
    # Exact bytes alone are kept: a subclass's hash or equality is never trusted.
    return kept(_NAME_KINDS, name, kind) if type(name) is bytes else kind


def request_head(
    method: str,
    target: Target,
    headers: Iterable[tuple[bytes, bytes]],
    length: int | None,
) -> bytes:
    """The head of a request: ``headers`` as given (their framing fields
    are this function's: ``Host`` only when not given, ``Content-Length``
    of ``length``, or chunked when None); ``ValueError`` for a name with a
    colon, or a name or value with a line break or NUL (they would split
    the request)."""
    lines = [f"{method} {target.path} HTTP/1.1\r\n".encode("ascii")]
    host = None
    ends = 3  # the request line's, Host's and the head's end
    for name, value in headers:
        try:  # a subscript, not ``get``: a method's call costs more
            kind = _NAME_KINDS[name] if type(name) is bytes else _kind_of(name)
        except KeyError:  # a name not seen yet
            kind = _kind_of(name)
        if kind is not _SENT:
            if kind is _HOST:
                host = value
            continue
        lines += (name, b": ", value, b"\r\n")
        ends += 1
    lines += (b"host: ", target.authority if host is None else host, b"\r\n")
    if length is None:
        lines.append(b"transfer-encoding: chunked\r\n\r\n")
        ends += 1
    elif length or method in ("POST", "PUT", "PATCH"):
        lines += (b"content-length: ", str(length).encode(), b"\r\n\r\n")
        ends += 1
    else:
        lines.append(b"\r\n")
    head = b"".join(lines)
    # Every line ends in CRLF and no field holds CR, LF or NUL: counted once
    # over the whole head, not field by field.
    if head.count(b"\n") != ends or head.count(b"\r") != ends or head.find(b"\0") >= 0:
        raise ValueError("a header field cannot hold a line break or NUL")
    return head


class ResponseParser:
    """One answer, fed as it comes (`feed`, `eof`). Once `head_done`:
    ``status`` and ``headers`` (names lower-case); the body's bytes gather
    in ``body`` (the reader takes them, `take`); `complete` when it is
    whole, and `reusable` when the connection may carry another request.
    Informational answers (1xx) are skipped. Errors: `UpstreamProtocolError`,
    `ResponseTooLarge`."""

    __slots__ = (
        "_chunks",
        "_failed",
        "_fed",
        "_head_bytes",
        "_keep_alive",
        "_length_given",
        "_parser",
        "_pending",
        "_start",
        "_until_close",
        "body",
        "body_bytes",
        "complete",
        "fields",
        "head_done",
        "headers",
        "max_body",
        "max_fields",
        "max_head",
        "status",
    )

    def __init__(
        self, *, max_head: int = MAX_HEAD, max_fields: int = MAX_FIELDS, max_body: int | None
    ) -> None:
        self.max_head, self.max_fields, self.max_body = max_head, max_fields, max_body
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.head_done = self.complete = False
        self.fields = self.body_bytes = self._fed = self._head_bytes = self._chunks = 0
        self._start = 0
        self._keep_alive = self._length_given = self._until_close = False
        self._failed: UpstreamError | None = None
        self._pending = bytearray()
        self._parser: httptools.HttpResponseParser | None = httptools.HttpResponseParser(self)

    @property
    def reusable(self) -> bool:
        """Whether the connection may carry another request: the answer is
        whole, ended where its framing said, and kept alive."""
        return self.complete and self._keep_alive and self._failed is None

    @property
    def received(self) -> int:
        """The bytes fed so far."""
        return self._fed

    def take(self) -> bytes:
        """The body's bytes received since the last take."""
        body = self.body
        if not body:
            return b""
        self.body = []
        return body[0] if len(body) == 1 else b"".join(body)

    def feed(self, data: bytes) -> None:
        """Bytes of the answer (`UpstreamProtocolError` when they are none)."""
        if not data:
            return
        if self.complete:  # bytes past the answer's end: the connection is spoiled
            self._keep_alive = False
            return
        self._fed += len(data)
        if self.head_done or (not self._pending and data.find(b"\r\n\r\n") >= 0):
            self._start = self._fed - len(data)  # the common case: the whole head at once
            self._parse(data)
        else:
            self._head(data)
        if self.complete:
            # Never fed again: httptools' parser, which holds this one's callbacks
            # (a cycle), is freed now, not by the cycle collector.
            self._parser = None
        if not self.head_done:
            if self._fed > self.max_head:
                raise ResponseTooLarge(f"the answer's head is over {self.max_head} bytes")
        elif self._fed - self._head_bytes - self.body_bytes > 2 * self.max_head + _PER_CHUNK * (
            self._chunks + 1
        ):
            raise ResponseTooLarge("the answer's framing (chunks, trailers) is too long")

    def _head(self, data: bytes) -> None:
        """Bytes of the head, parsed up to their last whole line: httptools
        joins a field it is given in pieces piece by piece, which is quadratic
        in the field's length when a peer sends it a byte at a time."""
        pending = self._pending
        self._start = self._fed - len(data) - len(pending)
        end = data.rfind(b"\n") + 1
        if not end:
            pending += data
            return
        if pending:
            lines = bytes(pending) + data[:end]
            pending.clear()
        else:
            lines = data[:end]
        pending += data[end:]
        self._parse(lines)
        if self.head_done and pending:  # the head ended: what follows it is the body's
            rest = bytes(pending)
            pending.clear()
            self._parse(rest)

    def _parse(self, data: bytes) -> None:
        parser = self._parser
        assert parser is not None  # the answer is not complete
        try:
            parser.feed_data(data)
        except httptools.HttpParserCallbackError:
            raise self._failed or UpstreamProtocolError("the answer could not be read") from None
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
            # HttpParserUpgrade is no HttpParserError: a 101 after a whole answer raises it.
            if self.complete:  # e.g. bytes after a "Connection: close" answer
                self._keep_alive = False
                return
            raise UpstreamProtocolError(
                f"the upstream's answer is no HTTP/1.1: {str(exc)[:120]}"
            ) from None

    def eof(self) -> None:
        """The connection closed: the end of an answer read until then, or
        `UpstreamProtocolError` when the answer was not whole."""
        if self.complete:
            return
        if self._until_close:
            self.complete, self._keep_alive = True, False
            return
        said = "before its head" if not self.head_done else "before its body's end"
        raise UpstreamProtocolError(f"the upstream closed the connection {said}")

    # -- httptools' callbacks ------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self.fields += 1
        if self.fields > self.max_fields:
            self._fail(ResponseTooLarge(f"the answer has over {self.max_fields} header fields"))
        if self.head_done:
            return  # a trailer: bounded as framing, not kept
        lowered = name.lower()
        if lowered == b"content-length" or lowered == b"transfer-encoding":
            self._length_given = True
        self.headers.append((lowered, value))

    def on_headers_complete(self) -> None:
        if self.complete:
            return
        parser = self._parser
        assert parser is not None  # it is parsing
        status = parser.get_status_code()
        if 100 <= status < 200:  # informational: the answer comes after it
            if status == 101:
                self._fail(UpstreamProtocolError("the upstream switched protocols"))
            self.headers = []
            return
        self.status, self.head_done = status, True
        # Where the head ended within this read is not told: from the read's
        # start, the head's rest counts as framing (its bound allows for it).
        self._head_bytes = self._start
        self._keep_alive = parser.should_keep_alive()
        self.fields = 0  # trailers count apart
        self._until_close = not self._length_given and status not in (204, 304)

    def on_body(self, body: bytes) -> None:
        if not self.head_done or self.complete:
            return
        self.body_bytes += len(body)
        if self.max_body is not None and self.body_bytes > self.max_body:
            self._fail(ResponseTooLarge(f"the answer's body is over {self.max_body} bytes"))
        self.body.append(body)

    def on_chunk_header(self) -> None:
        self._chunks += 1

    def on_message_begin(self) -> None:
        if self.complete:  # a second answer to one request: the connection is spoiled
            self._keep_alive = False

    def on_message_complete(self) -> None:
        if self.head_done:
            self.complete = True

    def _fail(self, error: UpstreamError) -> Any:
        self._failed = error
        raise error
