"""Sealed ``requestState`` for multi-round-trip requests (hand-written runtime module).

A stateless-era server that needs more input answers with an input-required
result whose ``requestState`` carries the continuation: the questions asked and
a small JSON value of the handler's choosing. The client echoes it on the retry,
which any replica may serve, so the state must be self-contained and, as the
specification requires of state that drives authorization or business logic,
integrity-protected (`multi round-trip requests, security
<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#server-requirements-basic-workflow>`__).

`StateSealer.seal` writes such a token and `StateSealer.open` reads it back
from the retry, refusing with `mcp_schema.errors.InvalidParamsError` (-32602,
``data`` naming ``$.params.requestState``) a token that is oversized,
malformed, sealed with a key this server does not hold, forged, expired, or
sealed for another call or principal. What a token is bound to:

- the **keys** (`StateKeys`): HMAC-SHA256 from the standard library under the
  application's secret; the token names its key by a fingerprint, one key
  signs and older ones still open, so keys rotate without failing retries in
  flight. The payload is signed, not encrypted: the client can read it (the
  principal and the call are carried only as keyed digests).
- the **call**: the method and the params other than ``inputResponses``,
  ``requestState`` and ``_meta``, compared as JSON values: object members in
  any order, strings by code points (no Unicode normalization), numbers by
  their mathematical value (``1``, ``1.0`` and ``1e0`` are one number, and so
  are ``0`` and ``-0.0``);
- the **principal** the application names (its authenticated user, or
  ``None``: a token sealed for ``None`` opens for ``None`` only);
- an **expiry** (`DEFAULT_TTL`, read from an injectable clock, which every
  replica's must agree with);
- a **length** (`DEFAULT_MAX_LENGTH`): a longer incoming token is refused
  before any decoding or cryptography, a longer outgoing one is the author's
  ``ValueError``.

Nothing of the payload is parsed before its MAC verifies, and every step is
linear in the token's length. A token stays valid until it expires, however
often it is presented; where one must be used at most once, `OpenedState.claim`
records it in a `SingleUse` store (`InMemorySingleUse` in one process,
`mcp_schema.redis_broker.RedisBroker` across replicas).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import hmac
import itertools
import json
import math
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from mcp_schema._codec.wire import wire_value
from mcp_schema._exact import MAX_NESTING
from mcp_schema.errors import InternalError, InvalidParamsError, error_list

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_TTL",
    "MIN_KEY_BYTES",
    "STATE_PATH",
    "InMemorySingleUse",
    "OpenedState",
    "SingleUse",
    "StateKeys",
    "StateSealer",
]

DEFAULT_TTL = 600.0
"""Seconds a sealed state stays valid (10 minutes): enough for a person to answer."""

DEFAULT_MAX_LENGTH = 65536
"""Longest token, in characters, sealed or opened."""

MIN_KEY_BYTES = 32
"""Shortest secret a `StateKeys` takes (UTF-8 bytes of a string key)."""

STATE_PATH = "$.params.requestState"
"""Where every refusal of `StateSealer.open` points."""

_PREFIX = "v1."
_LABEL = b"mcp-schema/request-state/v1/"
_KID_BYTES = 8
_MAC_BYTES = 32
_TAG_BYTES = 16
_UNBOUND = frozenset({"inputResponses", "requestState", "_meta"})
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")

V = TypeVar("V")


def _secret(key: object, index: int) -> bytes:
    if isinstance(key, str):
        try:
            key = key.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"keys[{index}] is not UTF-8 text (a lone surrogate)") from None
    if not isinstance(key, bytes):
        # Never coerce: bytes(32) is 32 zero bytes, a key anyone knows.
        raise TypeError(f"keys[{index}] must be str or bytes, not {type(key).__name__}")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(
            f"keys[{index}] has {len(key)} bytes; a key needs at least {MIN_KEY_BYTES} "
            "(python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return key


class StateKeys:
    """The key ring: ``signing`` seals, it and every ``older`` key open.

    Each key is a string (its UTF-8 bytes) or bytes of at least `MIN_KEY_BYTES`;
    a shorter one, or one that repeats, is a ``ValueError``. A token names its
    key by a fingerprint (a digest of the key, never the key), so rotation is:
    deploy ``StateKeys(new, old)`` everywhere, and drop ``old`` once every token
    it sealed has expired (one `DEFAULT_TTL` later); a token sealed with a
    dropped key is refused.
    """

    def __init__(self, signing: str | bytes, *older: str | bytes) -> None:
        ring: dict[bytes, bytes] = {}
        for index, key in enumerate((signing, *older)):
            secret = _secret(key, index)
            kid = hashlib.sha256(_LABEL + b"kid\0" + secret).digest()[:_KID_BYTES]
            if kid in ring:
                raise ValueError(f"keys[{index}] repeats an earlier key")
            ring[kid] = secret
        self._ring = ring
        self._signing = next(iter(ring))

    @classmethod
    def from_env(cls, value: str | None, name: str = "MCP_STATE_KEY") -> StateKeys:
        """The ring an environment variable's ``value`` describes: keys separated
        by commas, the signing key first (``MCP_STATE_KEY="new-secret,old-secret"``),
        so a key holds no comma; spaces around each are dropped. Unset or empty is a ``ValueError`` naming
        ``name``: replicas that each made up a key would refuse one another's state.
        """
        keys = [part.strip() for part in (value or "").split(",")]
        if not any(keys):
            raise ValueError(
                f"{name} is not set: give every replica the same key of at least "
                f"{MIN_KEY_BYTES} bytes (python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        if not all(keys):
            raise ValueError(f"{name} has an empty key between its commas")
        return cls(*keys)

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The fingerprints of the keys, signing key first, as hex (for logs)."""
        return tuple(kid.hex() for kid in self._ring)

    def __repr__(self) -> str:  # never the keys themselves
        return f"StateKeys(key_ids={self.key_ids!r})"


class SingleUse(Protocol):
    """A store of used tokens: ``claim`` is true the first time a ``token_id``
    is claimed, false after, until ``expires_at`` (seconds since the epoch),
    after which the token itself is refused and its entry may go."""

    async def claim(self, token_id: str, expires_at: float) -> bool: ...


class _Expiring(Generic[V]):
    """A bounded map whose entries expire: a heap orders the expiries, so every
    operation costs O(log n) amortized; a stale heap entry (a key written
    again or deleted) is skipped, and the heap is rebuilt when stale ones
    outnumber the live."""

    def __init__(self, max_entries: int, clock: Callable[[], float], what: str) -> None:
        if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 1:
            raise ValueError(f"max_entries must be a positive integer, not {max_entries!r}")
        self._entries: dict[str, tuple[V, float, int]] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._max = max_entries
        self._clock = clock
        self._what = what

    def __len__(self) -> int:
        self._purge()
        return len(self._entries)

    def _purge(self) -> None:
        now = self._clock()
        heap, entries = self._heap, self._entries
        while heap and heap[0][0] <= now:
            _, seq, key = heapq.heappop(heap)
            entry = entries.get(key)
            if entry is not None and entry[2] == seq:
                del entries[key]
        if len(heap) > 2 * len(entries) + 64:
            self._heap = [(at, seq, key) for key, (_, at, seq) in entries.items()]
            heapq.heapify(self._heap)

    def get(self, key: str) -> V | None:
        self._purge()
        entry = self._entries.get(key)
        return None if entry is None else entry[0]

    def set(self, key: str, value: V, expires_at: float) -> None:
        """Write ``key``; an `InternalError` (nothing changed) when the table is full."""
        self._purge()
        if key not in self._entries and len(self._entries) >= self._max:
            raise InternalError(f"the {self._what} is full ({self._max} unexpired entries)")
        seq = next(self._seq)
        self._entries[key] = (value, expires_at, seq)
        heapq.heappush(self._heap, (expires_at, seq, key))

    def delete(self, key: str) -> bool:
        self._purge()
        return self._entries.pop(key, None) is not None


class InMemorySingleUse:
    """`SingleUse` in one process: at most ``max_entries`` unexpired claims
    (past that a claim is an `mcp_schema.errors.InternalError`, refusing the
    retry rather than forgetting a use); entries go when their token expires,
    and a token already expired is never claimed."""

    def __init__(self, max_entries: int = 100_000, clock: Callable[[], float] = time.time) -> None:
        self._claims: _Expiring[bool] = _Expiring(max_entries, clock, "single-use store")
        self._clock = clock

    async def claim(self, token_id: str, expires_at: float) -> bool:
        if not expires_at > self._clock() or self._claims.get(token_id) is not None:
            return False
        self._claims.set(token_id, True, expires_at)
        return True


def _refusal(reason: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Invalid params: {STATE_PATH}: {reason}",
        error_list([{"path": STATE_PATH, "reason": reason}]),
    )


@dataclass(frozen=True)
class OpenedState:
    """What `StateSealer.open` verified: the state's ``asked`` input requests
    (wire JSON, keyed as sealed), the handler's ``data``, and the token's
    ``token_id`` and ``expires_at`` (seconds since the epoch)."""

    token_id: str
    expires_at: float
    asked: dict[str, Any]
    data: Any

    async def claim(self, claims: SingleUse) -> None:
        """Record this state as used in ``claims``: an `InvalidParamsError`
        (-32602) when it was used before, so a retry is served once."""
        if not await claims.claim(self.token_id, self.expires_at):
            raise _refusal("already used")


def _plain(value: Any, depth: int) -> Any:
    # The canonical value: integral floats become ints (1.0 is the number 1),
    # tuples lists; anything that is not JSON is refused.
    kind = type(value)
    if value is None or kind is bool or kind is str or kind is int:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise ValueError("a number that is not finite")
        return int(value) if value.is_integer() else value
    if depth >= MAX_NESTING:
        raise ValueError(f"nested deeper than {MAX_NESTING}")
    if isinstance(value, Mapping):
        plain: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"an object key that is not a string ({type(key).__name__})")
            plain[key] = _plain(item, depth + 1)
        return plain
    if isinstance(value, (list, tuple)):
        return [_plain(item, depth + 1) for item in value]
    raise TypeError(f"{kind.__name__} is not a JSON value")


def _canonical(value: Any) -> bytes:
    """One text per JSON value: sorted keys, no whitespace, ASCII (a lone
    surrogate is escaped like any other code point), numbers by value."""
    text = json.dumps(
        _plain(value, 0), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    return text.encode("ascii")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes | None:
    # Canonical unpadded base64url only: another spelling of the same bytes
    # would be a changed token that still opens.
    if len(text) % 4 == 1 or not _BASE64URL.fullmatch(text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if _b64(raw) == text else None


def _call(request: object) -> tuple[str, dict[str, Any], object]:
    """``request``'s method, its bound params and its ``requestState``."""
    message = wire_value(request, "request")
    method, params = message.get("method"), message.get("params")
    if not isinstance(method, str):
        raise TypeError("request must be a request: it has no method")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise TypeError(f"request params must be an object, not {type(params).__name__}")
    bound = {key: value for key, value in params.items() if key not in _UNBOUND}
    return method, bound, params.get("requestState")


class StateSealer:
    """Seals and opens ``requestState`` under ``keys`` (see the module).

    ``ttl`` is the seconds a state stays valid, ``max_length`` the longest token
    in characters, ``clock`` the seconds since the epoch (`time.time`).
    ``claims``: where a round a handler claims is recorded as used (a
    `SingleUse`: `mcp_schema.broker.Broker.claim` across replicas), so that
    ``await event.claim()`` holds on every replica; None: rounds cannot be
    claimed (a claim is refused).
    """

    def __init__(
        self,
        keys: StateKeys,
        *,
        ttl: float = DEFAULT_TTL,
        max_length: int = DEFAULT_MAX_LENGTH,
        clock: Callable[[], float] = time.time,
        claims: SingleUse | None = None,
    ) -> None:
        if not isinstance(keys, StateKeys):
            raise TypeError(f"keys must be a StateKeys, not {type(keys).__name__}")
        if claims is not None and not callable(getattr(claims, "claim", None)):
            raise TypeError(f"claims must be a SingleUse, not {type(claims).__name__}")
        self.claims = claims
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl < math.inf:
            raise ValueError(f"ttl must be a positive finite number of seconds, not {ttl!r}")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 64:
            raise ValueError(f"max_length must be an integer of at least 64, not {max_length!r}")
        self._keys = keys
        self._ttl = float(ttl)
        self._max_length = max_length
        self._clock = clock

    @staticmethod
    def _tag(secret: bytes, what: bytes, token_id: str, value: bytes) -> str:
        message = _LABEL + what + b"\0" + token_id.encode("ascii") + b"\0" + value
        return _b64(hmac.new(secret, message, hashlib.sha256).digest()[:_TAG_BYTES])

    @staticmethod
    def _mac(secret: bytes, kid: bytes, payload: bytes) -> bytes:
        return hmac.new(secret, _LABEL + b"token\0" + kid + payload, hashlib.sha256).digest()

    def seal(
        self,
        request: object,
        *,
        principal: str | None,
        asked: Mapping[str, object] | None = None,
        data: Any = None,
    ) -> str:
        """The ``requestState`` for an input-required answer to ``request`` (a
        decoded request model or its wire mapping), for ``principal``, carrying
        the ``asked`` input requests (models or wire mappings, keyed as the
        result asks them) and ``data`` (any JSON value).

        ``data`` that is not JSON is a ``TypeError``/``ValueError``; a token
        longer than ``max_length`` a ``ValueError``.
        """
        if principal is not None and not isinstance(principal, str):
            raise TypeError(f"principal must be a string or None, not {type(principal).__name__}")
        method, bound, _ = _call(request)
        if asked is not None and not isinstance(asked, Mapping):
            raise TypeError(f"asked must be a mapping or None, not {type(asked).__name__}")
        questions: dict[str, Any] = {}
        for key, value in (asked or {}).items():
            if not isinstance(key, str):
                raise TypeError(f"asked keys must be strings, not {type(key).__name__}")
            questions[key] = wire_value(value, f"asked[{key!r}]")
        secret = self._keys._ring[self._keys._signing]
        token_id = _b64(secrets.token_bytes(16))
        body = {
            "id": token_id,
            "exp": math.ceil((self._clock() + self._ttl) * 1000),
            "m": method,
            "c": self._tag(secret, b"call", token_id, _canonical([method, bound])),
            "p": self._tag(secret, b"principal", token_id, _canonical(principal)),
            "q": _plain(questions, 0),
            "d": _plain(data, 0),
        }
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=True).encode("ascii")
        kid = self._keys._signing
        token = _PREFIX + _b64(kid + self._mac(secret, kid, payload) + payload)
        if len(token) > self._max_length:
            raise ValueError(
                f"the sealed state is {len(token)} characters, over max_length "
                f"{self._max_length}: carry less in asked and data"
            )
        return token

    def open(self, request: object, *, principal: str | None) -> OpenedState | None:
        """The state sealed into ``request``'s ``requestState`` (``None`` when it
        carries none), once it verifies for this call and ``principal``; an
        `InvalidParamsError` (-32602) when it does not."""
        if principal is not None and not isinstance(principal, str):
            raise TypeError(f"principal must be a string or None, not {type(principal).__name__}")
        method, bound, token = _call(request)
        if token is None:
            return None
        if not isinstance(token, str):
            raise _refusal("must be a string")
        if len(token) > self._max_length:  # before anything reads it
            raise _refusal(f"longer than {self._max_length} characters")
        raw = _unb64(token[len(_PREFIX) :]) if token.startswith(_PREFIX) else None
        if raw is None or len(raw) <= _KID_BYTES + _MAC_BYTES:
            raise _refusal("not a request state this server sealed")
        kid, mac, payload = (
            raw[:_KID_BYTES],
            raw[_KID_BYTES : _KID_BYTES + _MAC_BYTES],
            raw[_KID_BYTES + _MAC_BYTES :],
        )
        secret = self._keys._ring.get(kid)
        if secret is None:
            raise _refusal("sealed with a key this server does not hold")
        if not hmac.compare_digest(mac, self._mac(secret, kid, payload)):
            raise _refusal("does not verify (altered or forged)")
        try:  # our own bytes from here on: a failure is a defect, not the peer's
            body = json.loads(payload)
            token_id, expires, sealed_method = body["id"], body["exp"], body["m"]
            call_tag, principal_tag, questions = body["c"], body["p"], body["q"]
            data = body["d"]
            if not isinstance(questions, dict):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise _refusal("not a request state this server sealed") from None
        if not isinstance(expires, int) or self._clock() * 1000 >= expires:
            raise _refusal("expired")
        if sealed_method != method:
            raise _refusal("sealed for another method")
        if not hmac.compare_digest(
            str(call_tag), self._tag(secret, b"call", str(token_id), _canonical([method, bound]))
        ):
            raise _refusal("sealed for a call with other params")
        if not hmac.compare_digest(
            str(principal_tag),
            self._tag(secret, b"principal", str(token_id), _canonical(principal)),
        ):
            raise _refusal("sealed for another principal")
        return OpenedState(str(token_id), expires / 1000, questions, data)
