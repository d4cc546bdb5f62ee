"""``private_key_jwt`` (RFC 7523 section 2.2, OpenID Connect Core section 9):
the client assertion a confidential client signs for the token endpoint,
with PyJWT (the ``auth`` extra; only this module needs it).
"""

from __future__ import annotations

import secrets
import time

import jwt

from mcp_schema.oauth.grants import Signer

__all__ = ["ASSERTION_SECONDS", "signer"]

ASSERTION_SECONDS = 300
"""How long an assertion is valid."""


def signer(private_key: str, algorithm: str = "ES256") -> Signer:
    """The `Signer` of assertions with ``private_key`` (PEM), by ``algorithm``:
    ``iss`` and ``sub`` the client id, ``aud`` the authorization server's
    issuer, a fresh ``jti``, and ``exp`` `ASSERTION_SECONDS` later."""
    key = jwt.api_jws.get_algorithm_by_name(algorithm).prepare_key(private_key)

    def sign(client_id: str, audience: str) -> str:
        now = int(time.time())
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_SECONDS,
            "jti": secrets.token_urlsafe(16),
        }
        return jwt.encode(claims, key, algorithm=algorithm)

    return sign
