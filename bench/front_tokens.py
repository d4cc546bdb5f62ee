"""The tokens of ``bench.front``'s ``authorized app`` row: an RS256 key of
2,048 bits made for the run (never kept past it), its public JWKS written
where the app reads it (``BENCH_AUTH_JWKS``), and ``COUNT`` distinct JWT
access tokens for the app's resource, which wrk sends in rotation (one per
request, so the cache of verified tokens holds each, as it would a
thousand clients')."""

from __future__ import annotations

import json
import time
from pathlib import Path

__all__ = ["COUNT", "ISSUER", "RESOURCE", "make"]

COUNT = 1000
ISSUER = "https://auth.bench.invalid"
RESOURCE = "http://127.0.0.1/mcp"
KID = "bench-key"


def make(work: Path, count: int = COUNT) -> tuple[Path, list[str]]:
    """The JWKS file under ``work`` and ``count`` tokens, valid for an hour."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    path = work / "jwks.json"
    path.write_text(json.dumps({"keys": [{**public, "kid": KID, "alg": "RS256", "use": "sig"}]}))
    now = int(time.time())
    tokens = [
        jwt.encode(
            {
                "iss": ISSUER,
                "aud": RESOURCE,
                "sub": f"user-{i}",
                "client_id": "bench",
                "scope": "mcp",
                "iat": now,
                "exp": now + 3600,
                "jti": f"bench-{i}",
            },
            key,
            algorithm="RS256",
            headers={"kid": KID, "typ": "at+jwt"},
        )
        for i in range(count)
    ]
    return path, tokens
