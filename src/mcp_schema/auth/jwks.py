"""An authorization server's signing keys: its JWKS (RFC 7517), found
through its metadata (``jwks_uri``), fetched once and kept, and fetched
again when a token names a key it lacks, at most once per
``refresh_seconds``: a flood of tokens naming unknown keys costs the
authorization server one fetch per interval, whatever their number.

Only public signature keys are taken (``kty`` RSA, EC or OKP, ``use``
``sig`` or none, no private member), each for the algorithms of the
allow-list its type and curve fit (and its own ``alg``, when it names one).
A key is found by its ``kid`` and the token's algorithm together, so a
token cannot have a key used with another algorithm than the key's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

from jwt import PyJWK, PyJWTError

from mcp_schema.auth.discovery import discover, endpoint, json_object
from mcp_schema.auth.fetch import FETCH_SECONDS, Fetcher, FetchError
from mcp_schema.auth.refresh import Refresher
from mcp_schema.auth.verifier import VerifierUnavailable

__all__ = ["ASYMMETRIC", "MAX_KEYS", "KeySet", "KeySource"]

ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
"""The signature algorithms a token may use: public-key ones only (never
``none``, never an HMAC, whose key would have to be shared)."""

MAX_KEYS = 64
"""Keys of a JWKS looked at."""

MAX_KID = 256
"""Longest ``kid``, in characters."""

# What key type (and curve) each algorithm verifies with (RFC 7518, RFC 8037).
_FITS: dict[str, tuple[str, frozenset[str] | None]] = {
    **{alg: ("RSA", None) for alg in ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")},
    "ES256": ("EC", frozenset({"P-256"})),
    "ES384": ("EC", frozenset({"P-384"})),
    "ES512": ("EC", frozenset({"P-521"})),
    "EdDSA": ("OKP", frozenset({"Ed25519", "Ed448"})),
}
_PRIVATE = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


def _fits(jwk: dict[str, Any], alg: str) -> bool:
    kty, curves = _FITS[alg]
    return (
        jwk.get("kty") == kty
        and (curves is None or jwk.get("crv") in curves)
        and jwk.get("alg", alg) == alg
    )


def _usable(jwk: object) -> bool:
    if not isinstance(jwk, dict) or _PRIVATE.intersection(jwk):
        return False
    kid, ops = jwk.get("kid"), jwk.get("key_ops")
    return (
        isinstance(kid, str)
        and 0 < len(kid) <= MAX_KID
        and jwk.get("use", "sig") == "sig"
        and (ops is None or (isinstance(ops, list) and "verify" in ops))
    )


class KeySet:
    """Keys by ``kid`` and algorithm."""

    __slots__ = ("_keys",)

    def __init__(self, keys: dict[str, dict[str, PyJWK]]) -> None:
        self._keys = keys

    @classmethod
    def parse(cls, body: bytes, algorithms: Collection[str]) -> KeySet:
        """The usable keys of a JWKS document (see the module); ``ValueError``
        when it is no JWKS at all."""
        keys = json_object(body).get("keys")
        if not isinstance(keys, list):
            raise ValueError("a JWKS has a list of keys")
        found: dict[str, dict[str, PyJWK]] = {}
        for jwk in keys[:MAX_KEYS]:
            if not _usable(jwk):
                continue
            for alg in algorithms:
                if _fits(jwk, alg):
                    try:
                        key = PyJWK(jwk, alg)
                    except (PyJWTError, ValueError, TypeError):
                        continue  # malformed members: no key
                    found.setdefault(jwk["kid"], {}).setdefault(alg, key)
        return cls(found)

    def __contains__(self, kid: object) -> bool:
        return kid in self._keys

    def get(self, kid: str, alg: str) -> PyJWK | None:
        """The key ``kid`` names, for ``alg``; None when there is none such."""
        return self._keys.get(kid, {}).get(alg)


class KeySource:
    """The keys of ``issuer``, fetched through ``fetcher`` from ``jwks_uri``
    (None: the one its metadata names). Kept ``max_age`` seconds; fetched
    again at most once per ``refresh_seconds`` (when kept longer, or when a
    token names an unknown key), a fetch with discovery taking at most
    ``seconds`` (`Refresher`)."""

    def __init__(
        self,
        issuer: str,
        fetcher: Fetcher,
        *,
        algorithms: Collection[str],
        jwks_uri: str | None = None,
        refresh_seconds: float = 30.0,
        max_age: float = 3600.0,
        seconds: float = 2 * FETCH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer, self.fetcher, self.algorithms = issuer, fetcher, frozenset(algorithms)
        self.jwks_uri, self.max_age, self._clock = jwks_uri, max_age, clock
        self._keys = Refresher(self._fetch, every=refresh_seconds, seconds=seconds, clock=clock)
        self.fetches = 0
        """JWKS fetches started (discovery not counted)."""

    async def key(self, kid: str, alg: str) -> PyJWK | None:
        """The key ``kid`` names for ``alg`` (None: the authorization server
        has none such); `VerifierUnavailable` when no keys could be had."""
        keys = self._keys
        if keys.value is None or self._clock() - keys.loaded_at >= self.max_age:
            await keys.refresh()
        if keys.value is None:
            raise VerifierUnavailable("the authorization server's keys could not be fetched")
        if kid not in keys.value:
            await keys.refresh()
        return keys.value.get(kid, alg)

    async def _fetch(self) -> KeySet:
        if self.jwks_uri is None:
            self.jwks_uri = endpoint(await discover(self.issuer, self.fetcher), "jwks_uri")
        self.fetches += 1
        try:
            return KeySet.parse(await self.fetcher.fetch(self.jwks_uri), self.algorithms)
        except (FetchError, ValueError):
            raise VerifierUnavailable(
                "the authorization server's keys could not be fetched"
            ) from None
